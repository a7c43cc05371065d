//===- runtime_test.cpp - Unit tests of the runtime's C API ---------------===//

#include "loom/abi/engine_format.h"
#include "loom/abi/memory.h"
#include "loom/abi/sha256.h"
#include "loom/comm.h"
#include "loom/device.h"
#include "loom/runtime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

std::string hex(const uint8_t digest[32]) {
  std::string s;
  char buf[3];
  for (int i = 0; i < 32; ++i) {
    std::snprintf(buf, sizeof(buf), "%02x", digest[i]);
    s += buf;
  }
  return s;
}

// FIPS 180-4 example vectors.
TEST(Sha256, KnownVectors) {
  uint8_t d[32];
  loom_sha256("", 0, d);
  EXPECT_EQ(hex(d),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  loom_sha256("abc", 3, d);
  EXPECT_EQ(hex(d),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  loom_sha256(two, std::strlen(two), d);
  EXPECT_EQ(hex(d),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

// Feeding the data in pieces gives the digest of the whole: a million 'a's
// in chunks that straddle block boundaries.
TEST(Sha256, Incremental) {
  loom_sha256_context ctx;
  loom_sha256_init(&ctx);
  std::string chunk(997, 'a');
  size_t left = 1000000;
  while (left) {
    size_t n = left < chunk.size() ? left : chunk.size();
    loom_sha256_update(&ctx, chunk.data(), n);
    left -= n;
  }
  uint8_t d[32];
  loom_sha256_final(&ctx, d);
  EXPECT_EQ(hex(d),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Runtime, OptionDefaults) {
  loom_load_options load;
  std::memset(&load, 0x7f, sizeof(load));
  loom_load_options_init(&load);
  EXPECT_EQ(load.verify_digest, 1);
  EXPECT_EQ(load.check_target, 1);
  EXPECT_EQ(load.threads, 1);
  loom_execute_options exec;
  loom_execute_options_init(&exec);
  EXPECT_EQ(exec.timeout_ms, 30000);
}

TEST(Runtime, ThreadsMustBePositive) {
  loom_load_options load;
  loom_load_options_init(&load);
  load.threads = 0;
  loom_engine *engine = nullptr;
  EXPECT_EQ(loom_engine_load("/nonexistent.engine", &load, &engine),
            LOOM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(engine, nullptr);
  EXPECT_NE(std::string(loom_last_error()).find("threads must be at least 1"),
            std::string::npos);
}

TEST(Runtime, Names) {
  EXPECT_STREQ(loom_status_name(LOOM_ERROR_CORRUPT), "LOOM_ERROR_CORRUPT");
  EXPECT_STREQ(loom_dtype_name(LOOM_DTYPE_F32), "f32");
  EXPECT_EQ(loom_dtype_size(LOOM_DTYPE_BF16), 2u);
  EXPECT_EQ(loom_dtype_size(LOOM_DTYPE_BOOL), 1u);
}

TEST(Device, CpuIsAlwaysThere) {
  int32_t count = -1;
  ASSERT_EQ(loom_device_count(LOOM_DEVICE_CPU, &count), LOOM_OK);
  EXPECT_EQ(count, 1);
  EXPECT_STREQ(loom_device_kind_name(LOOM_DEVICE_CUDA), "cuda");
  EXPECT_EQ(loom_device_count(LOOM_DEVICE_CPU, nullptr),
            LOOM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(loom_device_count(static_cast<loom_device_kind>(7), &count),
            LOOM_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(loom_last_error(), "unknown device kind 7");
}

// Either the machine has CUDA devices or the reason it has none is given.
TEST(Device, CudaCountOrReason) {
  int32_t count = -1;
  loom_status status = loom_device_count(LOOM_DEVICE_CUDA, &count);
  if (status == LOOM_OK) {
    EXPECT_GT(count, 0);
  } else {
    EXPECT_EQ(status, LOOM_ERROR_NO_DEVICE);
    EXPECT_EQ(count, 0);
    EXPECT_GT(std::strlen(loom_last_error()), 0u);
  }
}

// "onednn" and "cuda" are the kernel libraries; each loads, with its
// version, or the reason is given.
TEST(Device, KernelLibraries) {
  const char *version = nullptr;
  EXPECT_EQ(loom_kernel_library("cublas", &version), LOOM_ERROR_TARGET);
  EXPECT_STREQ(loom_last_error(),
               "unknown kernel library 'cublas' (known: onednn, cuda)");
  // The CUDA device layer: the driver and a device, or why not (on a
  // machine without a GPU, the driver library is missing).
  loom_status cuda = loom_kernel_library("cuda", &version);
  if (cuda == LOOM_OK) {
    ASSERT_NE(version, nullptr);
    EXPECT_EQ(std::strncmp(version, "CUDA driver ", 12), 0) << version;
  } else {
    EXPECT_EQ(cuda, LOOM_ERROR_NO_DEVICE);
    EXPECT_GT(std::strlen(loom_last_error()), 0u);
  }
  EXPECT_EQ(loom_kernel_library(nullptr, &version), LOOM_ERROR_TARGET);
  loom_status status = loom_kernel_library("onednn", &version);
  if (status == LOOM_OK) {
    ASSERT_NE(version, nullptr);
    EXPECT_EQ(std::strncmp(version, "oneDNN ", 7), 0) << version;
  } else {
    EXPECT_EQ(status, LOOM_ERROR_TARGET);
    EXPECT_NE(std::strstr(loom_last_error(), "oneDNN"), nullptr);
  }
}

TEST(Runtime, BadArguments) {
  loom_engine *engine = reinterpret_cast<loom_engine *>(0x1);
  EXPECT_EQ(loom_engine_load(nullptr, nullptr, &engine),
            LOOM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(loom_engine_load("x", nullptr, nullptr),
            LOOM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(loom_engine_execute(nullptr, 0, nullptr, nullptr),
            LOOM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(loom_last_error()), "");
}

TEST(Runtime, MissingFile) {
  loom_engine *engine = nullptr;
  EXPECT_EQ(loom_engine_load("/nonexistent/model.engine", nullptr, &engine),
            LOOM_ERROR_IO);
  EXPECT_EQ(engine, nullptr);
  EXPECT_NE(std::string(loom_last_error()).find("cannot open"),
            std::string::npos);
}

/// Writes `bytes` to a temporary file and returns its path.
std::string temporaryFile(const std::string &bytes) {
  char path[] = "/tmp/loom-runtime-test-XXXXXX";
  int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(write(fd, bytes.data(), bytes.size()), (ssize_t)bytes.size());
  close(fd);
  return path;
}

TEST(Runtime, NotAnEngine) {
  std::string path = temporaryFile(std::string(200, 'x'));
  loom_engine *engine = nullptr;
  EXPECT_EQ(loom_engine_load(path.c_str(), nullptr, &engine),
            LOOM_ERROR_CORRUPT);
  EXPECT_NE(std::string(loom_last_error()).find("bad magic"),
            std::string::npos);
  unlink(path.c_str());

  path = temporaryFile("LOOMENGN");
  EXPECT_EQ(loom_engine_load(path.c_str(), nullptr, &engine),
            LOOM_ERROR_CORRUPT);
  EXPECT_NE(std::string(loom_last_error()).find("shorter than the header"),
            std::string::npos);
  unlink(path.c_str());
}

/// Runs `body(rank, comm)` on one thread per rank of a local communicator
/// and returns each rank's status.
template <typename Body>
std::vector<loom_status>
runRanks(int32_t size, int64_t timeoutMs, Body body,
         std::vector<std::string> *messages = nullptr) {
  loom_comm_options options;
  loom_comm_options_init(&options);
  options.timeout_ms = timeoutMs;
  std::vector<loom_comm *> comms(size);
  EXPECT_EQ(loom_comm_create_local(size, &options, comms.data()), LOOM_OK);
  std::vector<loom_status> status(size, LOOM_OK);
  if (messages)
    messages->assign(size, "");
  std::vector<std::thread> threads;
  for (int32_t r = 0; r < size; ++r)
    threads.emplace_back([&, r] {
      status[r] = body(r, comms[r]);
      if (messages)
        (*messages)[r] = loom_last_error();
    });
  for (std::thread &t : threads)
    t.join();
  for (loom_comm *c : comms)
    loom_comm_free(c);
  return status;
}

TEST(LocalComm, Collectives) {
  std::vector<loom_status> status =
      runRanks(4, 5000, [](int32_t r, loom_comm *c) {
        EXPECT_EQ(loom_comm_rank(c), r);
        EXPECT_EQ(loom_comm_size(c), 4);
        // Sum and max of [r, 10 r]; the sum in place.
        float x[2] = {float(r), float(10 * r)};
        if (loom_status s = loom_comm_all_reduce(c, x, x, 2, LOOM_DTYPE_F32,
                                                 LOOM_REDUCE_SUM))
          return s;
        EXPECT_EQ(x[0], 6.0f);
        EXPECT_EQ(x[1], 60.0f);
        int64_t v = 7 - r, m = 0;
        if (loom_status s = loom_comm_all_reduce(c, &v, &m, 1, LOOM_DTYPE_I64,
                                                 LOOM_REDUCE_MAX))
          return s;
        EXPECT_EQ(m, 7);
        // all_gather of one int per rank, in rank order.
        int32_t mine = 100 + r, all[4] = {0};
        if (loom_status s = loom_comm_all_gather(c, &mine, all, sizeof(mine)))
          return s;
        for (int i = 0; i < 4; ++i)
          EXPECT_EQ(all[i], 100 + i);
        // all_to_all: block j of rank r (10 * r + j) goes to rank j, which
        // receives the blocks in rank order.
        int32_t blocks[4], received[4] = {0};
        for (int j = 0; j < 4; ++j)
          blocks[j] = 10 * r + j;
        if (loom_status s =
                loom_comm_all_to_all(c, blocks, received, sizeof(int32_t)))
          return s;
        for (int i = 0; i < 4; ++i)
          EXPECT_EQ(received[i], 10 * i + r);
        // broadcast from rank 2.
        double b = r == 2 ? 3.5 : 0.0;
        if (loom_status s = loom_comm_broadcast(c, &b, sizeof(b), 2))
          return s;
        EXPECT_EQ(b, 3.5);
        // A ring: every rank sends to the next, then receives from the
        // previous (buffered sends: no deadlock).
        int32_t token = r * r, got = -1;
        if (loom_status s =
                loom_comm_send(c, &token, sizeof(token), (r + 1) % 4))
          return s;
        if (loom_status s = loom_comm_recv(c, &got, sizeof(got), (r + 3) % 4))
          return s;
        EXPECT_EQ(got, ((r + 3) % 4) * ((r + 3) % 4));
        return loom_comm_barrier(c);
      });
  for (loom_status s : status)
    EXPECT_EQ(s, LOOM_OK) << loom_status_name(s);
}

// A rank that never joins: the others fail at the timeout, not hang.
TEST(LocalComm, Timeout) {
  std::vector<std::string> messages;
  auto start = std::chrono::steady_clock::now();
  std::vector<loom_status> status = runRanks(
      2, 200,
      [](int32_t r, loom_comm *c) {
        if (r == 1)
          return LOOM_OK;
        float x = 1;
        return loom_comm_all_reduce(c, &x, &x, 1, LOOM_DTYPE_F32,
                                    LOOM_REDUCE_SUM);
      },
      &messages);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  EXPECT_EQ(status[0], LOOM_ERROR_RANK_FAILED);
  EXPECT_NE(messages[0].find("timed out after 200 ms in all_reduce"),
            std::string::npos)
      << messages[0];
  EXPECT_LT(seconds, 5.0);
}

// A failing rank: its peers stop with its reason.
TEST(LocalComm, Abort) {
  std::vector<std::string> messages;
  std::vector<loom_status> status = runRanks(
      3, 10000,
      [](int32_t r, loom_comm *c) {
        if (r == 1) {
          loom_comm_abort(c, "kernel failed");
          return LOOM_ERROR_INTERNAL;
        }
        return loom_comm_barrier(c);
      },
      &messages);
  for (int r : {0, 2}) {
    EXPECT_EQ(status[r], LOOM_ERROR_RANK_FAILED);
    EXPECT_NE(messages[r].find("rank 1 failed: kernel failed"),
              std::string::npos)
        << messages[r];
  }
}

// Ranks in different collectives: an error, not a wrong result.
TEST(LocalComm, MismatchedCollectives) {
  std::vector<std::string> messages;
  std::vector<loom_status> status = runRanks(
      2, 5000,
      [](int32_t r, loom_comm *c) {
        if (r == 0)
          return loom_comm_barrier(c);
        int32_t x = 1, all[2];
        return loom_comm_all_gather(c, &x, all, sizeof(x));
      },
      &messages);
  EXPECT_EQ(status[0], LOOM_ERROR_RANK_FAILED);
  EXPECT_EQ(status[1], LOOM_ERROR_RANK_FAILED);
  EXPECT_NE((messages[0] + messages[1]).find("while its peers are in"),
            std::string::npos);
}

TEST(LocalComm, BadArguments) {
  loom_comm *comms[1];
  EXPECT_EQ(loom_comm_create_local(0, nullptr, comms),
            LOOM_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(loom_comm_create_local(1, nullptr, comms), LOOM_OK);
  uint16_t h = 0;
  EXPECT_EQ(loom_comm_all_reduce(comms[0], &h, &h, 1, LOOM_DTYPE_F16,
                                 LOOM_REDUCE_SUM),
            LOOM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(loom_comm_send(comms[0], &h, 2, 5), LOOM_ERROR_INVALID_ARGUMENT);
  // A reduction outside the enum (a C caller's bad value) is refused.
  float f = 1;
  EXPECT_EQ(loom_comm_all_reduce(comms[0], &f, &f, 1, LOOM_DTYPE_F32,
                                 static_cast<loom_reduce_op>(9)),
            LOOM_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(loom_last_error(), "unknown reduction 9");
  EXPECT_STREQ(loom_status_name(static_cast<loom_status>(99)),
               "LOOM_ERROR_UNKNOWN");
  EXPECT_STREQ(loom_dtype_name(static_cast<loom_dtype>(99)), "?");
  loom_comm_free(comms[0]);
}

// The allocator compiled code calls (loom/abi/memory.h).
TEST(Memory, LargeBlocksAreReusedOnTheSameThread) {
  loom_memory_release();
  size_t size = 3 << 20;
  void *first = _mlir_memref_to_llvm_alloc(size);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % 64, 0u);
  std::memset(first, 1, size);
  _mlir_memref_to_llvm_free(first);
  EXPECT_GE(loom_memory_cached_bytes(), size);
  // A slightly smaller request fits the kept block; it is handed back.
  void *second = _mlir_memref_to_llvm_alloc(size - 1000);
  EXPECT_EQ(second, first);
  EXPECT_EQ(loom_memory_cached_bytes(), 0u);
  // A request less than half the kept block's size is not given it.
  _mlir_memref_to_llvm_free(second);
  void *small = _mlir_memref_to_llvm_alloc(size / 4);
  EXPECT_NE(small, first);
  _mlir_memref_to_llvm_free(small);
  loom_memory_release();
  EXPECT_EQ(loom_memory_cached_bytes(), 0u);
}

TEST(Memory, SmallBlocksAreReusedByTheirSizeClass) {
  loom_memory_release();
  void *small = _mlir_memref_to_llvm_alloc(100);
  ASSERT_NE(small, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small) % 64, 0u);
  std::memset(small, 3, 100);
  _mlir_memref_to_llvm_free(small);
  // Kept in the smallest class (256 bytes), which a 200-byte request takes.
  EXPECT_EQ(loom_memory_cached_bytes(), 256u);
  void *again = _mlir_memref_to_llvm_alloc(200);
  EXPECT_EQ(again, small);
  EXPECT_EQ(loom_memory_cached_bytes(), 0u);
  // A request of another class does not take it.
  _mlir_memref_to_llvm_free(again);
  void *larger = _mlir_memref_to_llvm_alloc(20000);
  EXPECT_NE(larger, small);
  std::memset(larger, 4, 20000);
  _mlir_memref_to_llvm_free(larger);
  EXPECT_EQ(loom_memory_cached_bytes(), 256u + 32768u);
  // Requests just under a large block's 64 KiB take the largest class, as
  // does a freed large block of exactly 64 KiB; neither is taken by a
  // larger request.
  void *justUnder = _mlir_memref_to_llvm_alloc(40000);
  std::memset(justUnder, 5, 40000);
  _mlir_memref_to_llvm_free(justUnder);
  EXPECT_EQ(loom_memory_cached_bytes(), 256u + 32768u + 65536u);
  void *large = _mlir_memref_to_llvm_alloc(100000);
  EXPECT_NE(large, justUnder);
  EXPECT_EQ(_mlir_memref_to_llvm_alloc(65000), justUnder);
  _mlir_memref_to_llvm_free(justUnder);
  _mlir_memref_to_llvm_free(large);
  loom_memory_release();
  void *exactly = _mlir_memref_to_llvm_alloc(65536);
  _mlir_memref_to_llvm_free(exactly);
  EXPECT_EQ(loom_memory_cached_bytes(), 65536u);
  void *reused = _mlir_memref_to_llvm_alloc(50000);
  EXPECT_EQ(reused, exactly);
  _mlir_memref_to_llvm_free(reused);
  loom_memory_release();
  EXPECT_EQ(loom_memory_cached_bytes(), 0u);
}

TEST(Memory, SmallBlocksAreBoundedToo) {
  // 64 MiB of small blocks at most: 2048 of 32 KiB fit, the 2100 freed
  // here do not all stay.
  loom_memory_release();
  std::vector<void *> blocks;
  for (int i = 0; i < 2100; ++i)
    blocks.push_back(_mlir_memref_to_llvm_alloc(32768));
  for (void *block : blocks)
    _mlir_memref_to_llvm_free(block);
  EXPECT_EQ(loom_memory_cached_bytes(), size_t(64) << 20);
  loom_memory_release();
  EXPECT_EQ(loom_memory_cached_bytes(), 0u);
}

TEST(Memory, OverAlignedBlocksAreNotKept) {
  loom_memory_release();
  void *aligned = _mlir_memref_to_llvm_aligned_alloc(4096, 1 << 20);
  ASSERT_NE(aligned, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(aligned) % 4096, 0u);
  std::memset(aligned, 2, 1 << 20);
  _mlir_memref_to_llvm_free(aligned);
  EXPECT_EQ(loom_memory_cached_bytes(), 0u);
  _mlir_memref_to_llvm_free(nullptr);
}

TEST(Memory, TheCacheIsBounded) {
  loom_memory_release();
  // More large blocks than the cache keeps (256), all live at once.
  constexpr size_t kBlock = (64 + 4) * 1024;
  std::vector<void *> blocks;
  for (int i = 0; i < 300; ++i)
    blocks.push_back(_mlir_memref_to_llvm_alloc(kBlock));
  for (void *block : blocks)
    _mlir_memref_to_llvm_free(block);
  // The 256 freed last are kept.
  EXPECT_EQ(loom_memory_cached_bytes(), 256 * kBlock);
  loom_memory_release();
}

TEST(Memory, AGraphsWorthOfLargeBlocksIsKept) {
  loom_memory_release();
  // A call of a symbolic engine frees dozens of large blocks at its end;
  // all of them are kept, so the next call faults no page in again (a
  // cache of 16 blocks left GPT-2 at [4, 128] 123 page faults a call).
  std::vector<void *> blocks;
  for (int i = 0; i < 100; ++i)
    blocks.push_back(_mlir_memref_to_llvm_alloc((68 + 4 * i) * 1024));
  for (void *block : blocks)
    _mlir_memref_to_llvm_free(block);
  std::vector<void *> again;
  for (int i = 0; i < 100; ++i)
    again.push_back(_mlir_memref_to_llvm_alloc((68 + 4 * i) * 1024));
  for (void *block : again) {
    EXPECT_NE(std::find(blocks.begin(), blocks.end(), block), blocks.end());
    _mlir_memref_to_llvm_free(block);
  }
  loom_memory_release();
}

TEST(Memory, EachThreadKeepsItsOwnBlocks) {
  loom_memory_release();
  void *block = _mlir_memref_to_llvm_alloc(1 << 20);
  _mlir_memref_to_llvm_free(block);
  void *other = nullptr;
  std::thread([&] {
    other = _mlir_memref_to_llvm_alloc(1 << 20);
    _mlir_memref_to_llvm_free(other);
  }).join();
  EXPECT_NE(other, block);
  EXPECT_EQ(_mlir_memref_to_llvm_alloc(1 << 20), block);
  _mlir_memref_to_llvm_free(block);
  loom_memory_release();
}

} // namespace
