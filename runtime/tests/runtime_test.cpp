//===- runtime_test.cpp - Unit tests of the runtime's C API ---------------===//

#include "loom/abi/engine_format.h"
#include "loom/abi/sha256.h"
#include "loom/runtime.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <unistd.h>

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
  const char *two =
      "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
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
  loom_execute_options exec;
  loom_execute_options_init(&exec);
  EXPECT_EQ(exec.timeout_ms, 30000);
}

TEST(Runtime, Names) {
  EXPECT_STREQ(loom_status_name(LOOM_ERROR_CORRUPT), "LOOM_ERROR_CORRUPT");
  EXPECT_STREQ(loom_dtype_name(LOOM_DTYPE_F32), "f32");
  EXPECT_EQ(loom_dtype_size(LOOM_DTYPE_BF16), 2u);
  EXPECT_EQ(loom_dtype_size(LOOM_DTYPE_BOOL), 1u);
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

} // namespace
