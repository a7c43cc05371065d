//===- runtime_cpp_test.cpp - The C++ wrapper on a real engine ------------===//
//
// Run by test/Runtime/unit-tests.test with LOOM_TEST_ENGINE set to the MLP
// fixture compiled by loomc (one rank, input x f32[2, 16], output y
// f32[2, 8], a softmax) and LOOM_TEST_PP_ENGINE to the same model compiled
// for two pipeline stages.
//
//===----------------------------------------------------------------------===//

#include "loom/comm.h"
#include "loom/runtime.hpp"

#include <gtest/gtest.h>

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

// Under AddressSanitizer freed memory waits in a quarantine, and under
// ThreadSanitizer in shadow state, so resident memory grows without a leak;
// there LeakSanitizer (at exit) is the leak check, not resident memory.
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define LOOM_SANITIZED_HEAP 1
#endif
#endif
#ifndef LOOM_SANITIZED_HEAP
#define LOOM_SANITIZED_HEAP 0
#endif

namespace {

std::string enginePath(const char *variable) {
  const char *path = std::getenv(variable);
  return path ? path : "";
}

TEST(CppWrapper, LoadFailureIsAValue) {
  loom::Error error;
  loom::Engine engine = loom::Engine::load("/nonexistent/x.engine", error);
  EXPECT_TRUE(error);
  EXPECT_FALSE(engine);
  EXPECT_EQ(error.status(), LOOM_ERROR_IO);
  EXPECT_STREQ(error.statusName(), "LOOM_ERROR_IO");
  EXPECT_NE(error.message().find("/nonexistent/x.engine"), std::string::npos)
      << error.message();
}

TEST(CppWrapper, InspectAndExecute) {
  std::string path = enginePath("LOOM_TEST_ENGINE");
  ASSERT_FALSE(path.empty()) << "set LOOM_TEST_ENGINE to an MLP engine";
  loom::Error error;
  loom::Engine engine = loom::Engine::load(path, error);
  ASSERT_FALSE(error) << error.message();
  ASSERT_TRUE(engine);
  EXPECT_EQ(engine.numRanks(), 1);
  EXPECT_EQ(engine.grid(), std::vector<int64_t>{1});
  EXPECT_NE(engine.compilerVersion().find("loom"), std::string::npos);
  ASSERT_EQ(engine.inputs().size(), 1u);
  ASSERT_EQ(engine.outputs().size(), 1u);
  loom_tensor_desc x = engine.inputs()[0], y = engine.outputs()[0];
  EXPECT_STREQ(x.name, "x");
  EXPECT_EQ(x.dtype, LOOM_DTYPE_F32);
  ASSERT_EQ(x.rank, 2);
  EXPECT_EQ(x.dims[0], 2);
  EXPECT_EQ(x.dims[1], 16);
  EXPECT_EQ(y.byte_size, 2u * 8u * sizeof(float));

  // Moving keeps the engine usable.
  loom::Engine moved = std::move(engine);
  // A moved-from engine is empty, by the wrapper's contract.
  EXPECT_FALSE(engine); // NOLINT(bugprone-use-after-move)
  std::vector<float> in(32), out(16, -1.0f);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = 0.1f * float(i) - 1.0f;
  error = moved.execute({in.data()}, {out.data()});
  ASSERT_FALSE(error) << error.message();
  // The model ends in a softmax: each row is a distribution.
  for (int row = 0; row < 2; ++row) {
    float sum = 0;
    for (int j = 0; j < 8; ++j) {
      EXPECT_GT(out[row * 8 + j], 0.0f);
      sum += out[row * 8 + j];
    }
    EXPECT_NEAR(sum, 1.0f, 1e-5f);
  }

  // Wrong buffer counts are refused before the C API runs.
  error = moved.execute({}, {out.data()});
  EXPECT_TRUE(error);
  EXPECT_EQ(error.status(), LOOM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(error.message().find("takes 1 inputs and 1 outputs, got 0 and 1"),
            std::string::npos)
      << error.message();
}

TEST(CppWrapper, PipelineRanksMatchOneRank) {
  std::string single = enginePath("LOOM_TEST_ENGINE");
  std::string pipeline = enginePath("LOOM_TEST_PP_ENGINE");
  ASSERT_FALSE(single.empty() || pipeline.empty())
      << "set LOOM_TEST_ENGINE and LOOM_TEST_PP_ENGINE";
  loom::Error error;
  loom::Engine one = loom::Engine::load(single, error);
  ASSERT_FALSE(error) << error.message();
  loom::Engine two = loom::Engine::load(pipeline, error);
  ASSERT_FALSE(error) << error.message();
  EXPECT_EQ(two.numRanks(), 2);
  EXPECT_EQ(two.grid(), std::vector<int64_t>{2});

  std::vector<float> in(32), expected(16), out0(16), out1(16);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = std::sin(float(i));
  ASSERT_FALSE(one.execute({in.data()}, {expected.data()}));
  // Running a multi-rank engine as one rank is refused.
  EXPECT_TRUE(two.execute({in.data()}, {out0.data()}));
  // The rank threads are kept between calls: every call computes afresh.
  for (int call = 0; call < 3; ++call) {
    std::fill(out0.begin(), out0.end(), -1.0f);
    std::fill(out1.begin(), out1.end(), -1.0f);
    error = two.executeRanks({{in.data()}, {in.data()}},
                             {{out0.data()}, {out1.data()}});
    ASSERT_FALSE(error) << error.message();
    for (size_t i = 0; i < expected.size(); ++i) {
      EXPECT_NEAR(out0[i], expected[i], 1e-6f) << call << " " << i;
      EXPECT_NEAR(out1[i], expected[i], 1e-6f) << call << " " << i;
    }
  }
  error = two.executeRanks({{in.data()}}, {{out0.data()}});
  EXPECT_TRUE(error);
  EXPECT_NE(error.message().find("one list of buffers per rank"),
            std::string::npos);
}

} // namespace

// Library convolutions (oneDNN, runtime/src/kernels_onednn.cpp) under
// concurrency, run by test/Runtime/library-convolutions.test:
// LOOM_TEST_CONV_ENGINE is the ResNet-style fixture compiled with its
// convolutions in oneDNN, LOOM_TEST_CONV_GENERATED_ENGINE the same model
// with every convolution generated (input x f32[1, 3, 32, 32], output
// f32[1, 10]).
TEST(LibraryConv, ConcurrentCallsAndReloads) {
  std::string library = enginePath("LOOM_TEST_CONV_ENGINE");
  std::string generated = enginePath("LOOM_TEST_CONV_GENERATED_ENGINE");
  ASSERT_FALSE(library.empty() || generated.empty())
      << "set LOOM_TEST_CONV_ENGINE and LOOM_TEST_CONV_GENERATED_ENGINE";
  std::vector<float> in(3 * 32 * 32), expected(10);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = std::sin(0.37f * float(i));
  loom::Error error;
  {
    loom::Engine reference = loom::Engine::load(generated, error);
    ASSERT_FALSE(error) << error.message();
    ASSERT_FALSE(reference.execute({in.data()}, {expected.data()}));
  }
  // Loaded and freed again: what the first engine's call sites prepared is
  // released with it, and the next engine prepares its own.
  for (int load = 0; load < 3; ++load) {
    loom::Engine engine = loom::Engine::load(library, error);
    ASSERT_FALSE(error) << error.message();
    // Four threads race for the first call of every call site, then keep
    // calling: each must get the same outputs.
    constexpr int kThreads = 4, kCalls = 5;
    std::vector<std::vector<float>> outputs(kThreads * kCalls,
                                            std::vector<float>(10, -1.0f));
    std::vector<loom::Error> errors(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        for (int c = 0; c < kCalls && !errors[t]; ++c)
          errors[t] =
              engine.execute({in.data()}, {outputs[t * kCalls + c].data()});
      });
    for (std::thread &thread : threads)
      thread.join();
    for (int t = 0; t < kThreads; ++t)
      ASSERT_FALSE(errors[t]) << errors[t].message();
    for (const std::vector<float> &out : outputs) {
      EXPECT_EQ(out, outputs[0]);
      for (size_t i = 0; i < expected.size(); ++i)
        EXPECT_NEAR(out[i], expected[i],
                    1e-4f * (1.0f + std::fabs(expected[i])))
            << "load " << load << " output " << i;
    }
  }
}

// Inputs with symbolic dimensions (loom_shaped_input), run by
// test/Runtime/symbolic-inputs.test: LOOM_TEST_SYMBOLIC_ENGINE is
// Z = Relu(X + Y) with X, Y, Z f32[N, 4] compiled once.
namespace {

loom_shaped_input shaped(const std::vector<float> &data,
                         std::vector<int64_t> dims) {
  loom_shaped_input in{};
  in.data = data.data();
  in.rank = static_cast<int32_t>(dims.size());
  std::copy(dims.begin(), dims.end(), in.dims);
  return in;
}

TEST(SymbolicInputs, OneEngineManyShapes) {
  std::string path = enginePath("LOOM_TEST_SYMBOLIC_ENGINE");
  ASSERT_FALSE(path.empty()) << "set LOOM_TEST_SYMBOLIC_ENGINE";
  loom::Error error;
  loom::Engine engine = loom::Engine::load(path, error);
  ASSERT_FALSE(error) << error.message();
  std::vector<loom_tensor_desc> inputs = engine.inputs();
  std::vector<loom_tensor_desc> outputs = engine.outputs();
  ASSERT_EQ(inputs.size(), 2u);
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(inputs[0].dims[0], LOOM_DYNAMIC_DIM);
  EXPECT_EQ(inputs[0].dims[1], 4);
  EXPECT_TRUE(loom_tensor_desc_is_dynamic(&inputs[0]));
  EXPECT_TRUE(loom_tensor_desc_is_dynamic(&outputs[0]));

  // The same engine at 1, 3, 1000 and 0 rows; 1 row although the model
  // was never traced at 1.
  for (int64_t rows : {1, 3, 1000, 0}) {
    std::vector<float> a(rows * 4), b(rows * 4);
    for (size_t i = 0; i < a.size(); ++i) {
      a[i] = std::sin(float(i));
      b[i] = std::cos(float(3 * i));
    }
    loom_shaped_input xa = shaped(a, {rows, 4}), yb = shaped(b, {rows, 4});
    loom_dynamic_output z{};
    error = engine.execute({&xa, &yb}, {&z});
    ASSERT_FALSE(error) << rows << ": " << error.message();
    ASSERT_EQ(z.rank, 2);
    EXPECT_EQ(z.dims[0], rows);
    EXPECT_EQ(z.dims[1], 4);
    ASSERT_EQ(z.byte_size, a.size() * sizeof(float));
    const float *out = static_cast<const float *>(z.data);
    for (size_t i = 0; i < a.size(); ++i)
      ASSERT_EQ(out[i], std::max(a[i] + b[i], 0.0f)) << rows << " " << i;
    loom_buffer_free(z.data);
  }
}

TEST(SymbolicInputs, WrongShapesAreErrors) {
  std::string path = enginePath("LOOM_TEST_SYMBOLIC_ENGINE");
  ASSERT_FALSE(path.empty()) << "set LOOM_TEST_SYMBOLIC_ENGINE";
  loom::Error error;
  loom::Engine engine = loom::Engine::load(path, error);
  ASSERT_FALSE(error) << error.message();
  std::vector<float> a(12, 1.0f), b(12, 2.0f);
  auto expectError = [&](loom_shaped_input xa, loom_shaped_input yb,
                         const char *message) {
    loom_dynamic_output z{};
    loom::Error e = engine.execute({&xa, &yb}, {&z});
    EXPECT_TRUE(e) << message;
    EXPECT_EQ(z.data, nullptr);
    EXPECT_NE(e.message().find(message), std::string::npos) << e.message();
  };
  // The rank, a static dimension, a negative size, null data.
  expectError(shaped(a, {12}), shaped(b, {3, 4}),
              "input 0 ('X'): the engine takes rank 2 [?,4], given rank 1");
  expectError(shaped(a, {3, 4}), shaped(b, {2, 6}),
              "input 1 ('Y'): dimension 1 is 6 but the engine takes [?,4]");
  expectError(shaped(a, {-3, 4}), shaped(b, {3, 4}),
              "input 0 ('X'): dimension 0 has size -3");
  loom_shaped_input null = shaped(a, {3, 4});
  null.data = nullptr;
  expectError(null, shaped(b, {3, 4}), "input 0 ('X'): its data is null");
  // Sizes that disagree inside the model: the code reports them.
  expectError(
      shaped(a, {3, 4}), shaped(b, {2, 4}),
      "operands have sizes known only at run time that do not broadcast");
}

// LOOM_TEST_TILE_SUM_ENGINE is test/Target/CPU/Inputs/tile_then_sum.onnxtxt:
// Y = sum(Tile(X [N], R)), the tiled tensor allocated at run time.
TEST(OutOfMemory, FailsTheCallAndTheEngineRunsOn) {
  std::string path = enginePath("LOOM_TEST_TILE_SUM_ENGINE");
  ASSERT_FALSE(path.empty()) << "set LOOM_TEST_TILE_SUM_ENGINE";
  loom::Error error;
  loom::Engine engine = loom::Engine::load(path, error);
  ASSERT_FALSE(error) << error.message();
  std::vector<float> x(1000, 1.0f);
  loom_shaped_input xs = shaped(x, {1000});
  auto run = [&](int64_t repeats, float &y) {
    return engine.execute({&xs, &repeats}, {&y});
  };
  // 1000 x 10^6 floats (4 GB) under a data limit of 1.5 GB.
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_DATA, &saved), 0);
  rlimit limited = saved;
  limited.rlim_cur = 1536ull << 20;
  ASSERT_EQ(setrlimit(RLIMIT_DATA, &limited), 0);
  float y = -1;
  loom::Error oom = run(1000000, y);
  ASSERT_EQ(setrlimit(RLIMIT_DATA, &saved), 0);
  ASSERT_TRUE(oom);
  EXPECT_EQ(oom.status(), LOOM_ERROR_INTERNAL);
  EXPECT_NE(oom.message().find("out of memory: could not allocate"),
            std::string::npos)
      << oom.message();
  // The same engine, the next call.
  error = run(3, y);
  ASSERT_FALSE(error) << error.message();
  EXPECT_EQ(y, 3000.0f);
}

} // namespace

// Concurrency and soak, run by test/Runtime/concurrency.test:
// LOOM_TEST_THREADED_ENGINE is a Llama-style block (input and output
// f32[1, 8, 32]) compiled with every contraction and elementwise op as an
// OpenMP loop, LOOM_TEST_ENGINE the MLP fixture.
namespace {

/// The f32 buffers of an engine's inputs, filled with fixed values, and of
/// its outputs.
struct Buffers {
  std::vector<std::vector<float>> in, out;
  std::vector<const void *> inPointers;
  std::vector<void *> outPointers;
  explicit Buffers(const loom::Engine &engine) {
    for (const loom_tensor_desc &d : engine.inputs()) {
      in.emplace_back(d.byte_size / sizeof(float));
      for (size_t i = 0; i < in.back().size(); ++i)
        in.back()[i] = std::sin(0.37f * float(i) + float(in.size()));
      inPointers.push_back(in.back().data());
    }
    for (const loom_tensor_desc &d : engine.outputs())
      out.emplace_back(d.byte_size / sizeof(float), -1.0f);
    for (std::vector<float> &o : out)
      outPointers.push_back(o.data());
  }
  loom::Error run(const loom::Engine &engine) {
    return engine.execute(inPointers, outPointers);
  }
};

/// The lines of `file` (/proc/self/maps: one per mapping).
long procLines(const char *file) {
  FILE *f = std::fopen(file, "r");
  if (!f)
    return -1;
  long lines = 0;
  for (int c; (c = std::fgetc(f)) != EOF;)
    lines += c == '\n';
  std::fclose(f);
  return lines;
}

/// A field of /proc/self/status, in KiB.
long statusKiB(const char *field) {
  FILE *f = std::fopen("/proc/self/status", "r");
  if (!f)
    return -1;
  char line[256];
  long value = -1;
  size_t length = std::strlen(field);
  while (std::fgets(line, sizeof line, f))
    if (!std::strncmp(line, field, length) && line[length] == ':')
      value = std::atol(line + length + 1);
  std::fclose(f);
  return value;
}

TEST(Concurrency, EightThreadsMatchSerialRuns) {
  std::string path = enginePath("LOOM_TEST_THREADED_ENGINE");
  ASSERT_FALSE(path.empty()) << "set LOOM_TEST_THREADED_ENGINE";
  loom_load_options options;
  loom_load_options_init(&options);
  options.threads = 2; // each caller's parallel loops fork their own team
  loom::Error error;
  loom::Engine engine = loom::Engine::load(path, error, &options);
  ASSERT_FALSE(error) << error.message();
  Buffers serial(engine);
  ASSERT_FALSE(serial.run(engine));

  constexpr int kThreads = 8, kCalls = 20;
  std::vector<Buffers> buffers;
  for (int t = 0; t < kThreads; ++t)
    buffers.emplace_back(engine);
  std::vector<loom::Error> errors(kThreads);
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int c = 0; c < kCalls && !errors[t]; ++c) {
        for (std::vector<float> &o : buffers[t].out)
          std::fill(o.begin(), o.end(), -1.0f);
        errors[t] = buffers[t].run(engine);
        // Bitwise: a run's arithmetic does not depend on what other
        // threads run at the same time.
        mismatches[t] += buffers[t].out != serial.out;
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_FALSE(errors[t]) << "thread " << t << ": " << errors[t].message();
    EXPECT_EQ(mismatches[t], 0) << "thread " << t;
  }
}

/// Median and 99th percentile of `samples` (microseconds), which it sorts.
std::pair<double, double> percentiles(std::vector<double> &samples) {
  std::sort(samples.begin(), samples.end());
  auto at = [&](double q) {
    return samples[std::min(samples.size() - 1,
                            static_cast<size_t>(q * samples.size()))];
  };
  return {at(0.5), at(0.99)};
}

// LOOM_SOAK_ITERATIONS=N runs N cycles (10,000 by default, in CI);
// LOOM_SOAK_SECONDS=S runs for S seconds instead and prints one line per
// LOOM_SOAK_REPORT_SECONDS (60 by default): cycles, the cycle's median and
// 99th-percentile time, resident memory and mappings, so that a long soak
// shows whether latency stays flat (docs/reliability.md). Timings are
// printed, never asserted; memory growth is asserted.
TEST(Soak, LoadExecuteFreeKeepsMemoryFlat) {
  using Clock = std::chrono::steady_clock;
  std::string path = enginePath("LOOM_TEST_ENGINE");
  ASSERT_FALSE(path.empty()) << "set LOOM_TEST_ENGINE";
  const char *iterationsVariable = std::getenv("LOOM_SOAK_ITERATIONS");
  const char *secondsVariable = std::getenv("LOOM_SOAK_SECONDS");
  const char *reportVariable = std::getenv("LOOM_SOAK_REPORT_SECONDS");
  long iterations = iterationsVariable ? std::atol(iterationsVariable) : 10000;
  double seconds = secondsVariable ? std::atof(secondsVariable) : 0;
  double reportSeconds = reportVariable ? std::atof(reportVariable) : 60;
  ASSERT_TRUE(seconds > 0 || iterations >= 200);
  ASSERT_GT(reportSeconds, 0);
  Clock::time_point begin = Clock::now(), windowStart = begin;
  // Per window: each cycle's time and, within it, the execute call's.
  std::vector<double> window, executes;
  std::vector<float> first;
  long baseRss = 0, baseMaps = 0, cycles = 0;
  auto elapsed = [&](Clock::time_point since) {
    return std::chrono::duration<double>(Clock::now() - since).count();
  };
  for (long i = 0;; ++i) {
    if (seconds > 0 ? (i > 100 && elapsed(begin) >= seconds) : i >= iterations)
      break;
    Clock::time_point cycleStart = Clock::now();
    loom::Error error;
    loom::Engine engine = loom::Engine::load(path, error);
    ASSERT_FALSE(error) << "iteration " << i << ": " << error.message();
    Buffers buffers(engine);
    Clock::time_point executeStart = Clock::now();
    ASSERT_FALSE(buffers.run(engine)) << "iteration " << i;
    double executeSeconds = elapsed(executeStart);
    if (i == 0)
      first = buffers.out[0];
    else
      ASSERT_EQ(buffers.out[0], first) << "iteration " << i;
    // The first hundred iterations fill the allocator's caches; from
    // there, nothing may grow with the number of loads.
    if (i == 100) {
      baseRss = statusKiB("VmRSS");
      baseMaps = procLines("/proc/self/maps");
    }
    cycles = i + 1;
    if (seconds <= 0)
      continue;
    window.push_back(elapsed(cycleStart) * 1e6);
    executes.push_back(executeSeconds * 1e6);
    if (elapsed(windowStart) >= reportSeconds) {
      auto [p50, p99] = percentiles(window);
      auto [executeP50, executeP99] = percentiles(executes);
      std::printf("soak: %6.0f s: %ld cycles; this window %zu cycles, "
                  "cycle p50 %.0f us p99 %.0f us, execute p50 %.0f us "
                  "p99 %.0f us; resident %ld KiB, mappings %ld\n",
                  elapsed(begin), cycles, window.size(), p50, p99, executeP50,
                  executeP99, statusKiB("VmRSS"), procLines("/proc/self/maps"));
      std::fflush(stdout);
      window.clear();
      executes.clear();
      windowStart = Clock::now();
    }
  }
  long rss = statusKiB("VmRSS"), maps = procLines("/proc/self/maps");
  std::printf("soak: %ld load/execute/free cycles in %.0f s; resident %ld -> "
              "%ld KiB, mappings %ld -> %ld\n",
              cycles, elapsed(begin), baseRss, rss, baseMaps, maps);
  // A leaked engine (its code, weights or arena) would add at least its
  // mapped code and weights, tens of KiB, per iteration.
  if (!LOOM_SANITIZED_HEAP)
    EXPECT_LE(rss - baseRss, 4 * 1024) << "resident memory grew";
  EXPECT_LE(maps - baseMaps, 8) << "mappings grew (unreleased code?)";
}

} // namespace

// Sessions (loom_session_*), run by test/Runtime/session.test:
// LOOM_TEST_KV_ENGINE is the corpus' llama_kv decoder compiled with
// loomc --kv-cache=16 (inputs input_ids and attention_mask i64 [1, ?],
// cache_length, four state inputs f32 [1, 2, 16, 16]; output logits
// f32 [1, ?, vocabulary] among others).
namespace {

/// One call's inputs for the decoder: `tokens` new ids after `past`
/// cached positions; state inputs from `state` (null: left to a session).
struct DecoderInputs {
  std::vector<int64_t> ids, mask;
  int64_t cacheLength = 0;
  std::vector<loom_shaped_input> shaped;
  std::vector<const void *> pointers;
  DecoderInputs(const loom::Engine &engine, std::vector<int64_t> tokens,
                int64_t past,
                const std::vector<std::vector<float>> *state = nullptr)
      : ids(std::move(tokens)), mask(past + ids.size(), 1), cacheLength(past) {
    std::vector<loom_tensor_desc> inputs = engine.inputs();
    shaped.resize(inputs.size());
    size_t k = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
      std::string name = inputs[i].name;
      loom_shaped_input &s = shaped[i];
      if (name == "input_ids" || name == "attention_mask") {
        std::vector<int64_t> &v = name == "input_ids" ? ids : mask;
        s.data = v.data();
        s.rank = 2;
        s.dims[0] = 1;
        s.dims[1] = static_cast<int64_t>(v.size());
        pointers.push_back(&s);
      } else if (name == "cache_length") {
        pointers.push_back(&cacheLength);
      } else if (!state) {
        pointers.push_back(nullptr);
      } else {
        // The cache's batch is symbolic: a shaped input of batch 1.
        s.data = (*state)[k++].data();
        s.rank = inputs[i].rank;
        std::copy(inputs[i].dims, inputs[i].dims + s.rank, s.dims);
        s.dims[0] = 1;
        pointers.push_back(loom_tensor_desc_is_dynamic(&inputs[i])
                               ? static_cast<const void *>(&s)
                               : s.data);
      }
    }
  }
};

/// The outputs of one call, the logits (output 0) allocated by the
/// runtime.
struct DecoderOutputs {
  std::vector<loom_dynamic_output> dynamic;
  std::vector<std::vector<char>> fixed;
  std::vector<void *> pointers;
  explicit DecoderOutputs(const loom::Engine &engine) {
    std::vector<loom_tensor_desc> outputs = engine.outputs();
    dynamic.resize(outputs.size(), loom_dynamic_output{});
    fixed.resize(outputs.size());
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (loom_tensor_desc_is_dynamic(&outputs[i])) {
        pointers.push_back(&dynamic[i]);
      } else {
        fixed[i].resize(outputs[i].byte_size);
        pointers.push_back(fixed[i].data());
      }
    }
  }
  ~DecoderOutputs() {
    for (loom_dynamic_output &o : dynamic)
      loom_buffer_free(o.data);
  }
  std::vector<float> logits() const {
    const float *data = static_cast<const float *>(dynamic[0].data);
    return std::vector<float>(data,
                              data + dynamic[0].byte_size / sizeof(float));
  }
};

TEST(Session, KeepsTheCacheInTheRuntime) {
  std::string path = enginePath("LOOM_TEST_KV_ENGINE");
  ASSERT_FALSE(path.empty()) << "set LOOM_TEST_KV_ENGINE";
  loom::Error error;
  loom::Engine engine = loom::Engine::load(path, error);
  ASSERT_FALSE(error) << error.message();
  ASSERT_STREQ(engine.outputs()[0].name, "logits");

  loom::Session bad = loom::Session::create(engine, 0, error);
  EXPECT_FALSE(bad);
  EXPECT_NE(error.message().find("the batch must be at least 1"),
            std::string::npos)
      << error.message();

  loom::Session session = loom::Session::create(engine, 1, error);
  ASSERT_FALSE(error) << error.message();
  // The state inputs, at their capacity, zeroed; the others are not state.
  std::vector<loom_tensor_desc> inputs = engine.inputs();
  std::vector<int32_t> stateInputs;
  std::vector<const void *> addresses;
  std::vector<std::vector<float>> ownState;
  for (int32_t i = 0; i < static_cast<int32_t>(inputs.size()); ++i) {
    loom_tensor_desc shape{};
    const void *state = session.state(i, &shape);
    bool isState = loom_engine_input_state_axis(engine.get(), 0, i) >= 0;
    ASSERT_EQ(state != nullptr, isState) << inputs[i].name;
    if (!state)
      continue;
    EXPECT_FALSE(loom_tensor_desc_is_dynamic(&shape));
    EXPECT_EQ(shape.byte_size, 1u * 2 * 16 * 16 * sizeof(float));
    const char *bytes = static_cast<const char *>(state);
    EXPECT_TRUE(std::all_of(bytes, bytes + shape.byte_size,
                            [](char c) { return c == 0; }));
    stateInputs.push_back(i);
    addresses.push_back(state);
    ownState.emplace_back(shape.byte_size / sizeof(float), 0.0f);
  }
  ASSERT_EQ(stateInputs.size(), 4u);
  EXPECT_EQ(session.state(-1), nullptr);

  // A prefill of three tokens and two decode steps through the session,
  // and the same calls with caller-owned cache buffers: the same logits
  // bitwise, the same cache contents, and the session's buffers never move.
  std::vector<std::vector<int64_t>> steps = {{7, 31, 149}, {157}, {86}};
  int64_t past = 0;
  for (const std::vector<int64_t> &tokens : steps) {
    DecoderInputs viaSession(engine, tokens, past);
    DecoderOutputs sessionOut(engine);
    error = session.execute(viaSession.pointers, sessionOut.pointers);
    ASSERT_FALSE(error) << error.message();
    DecoderInputs viaCaller(engine, tokens, past, &ownState);
    DecoderOutputs callerOut(engine);
    error = engine.execute(viaCaller.pointers, callerOut.pointers);
    ASSERT_FALSE(error) << error.message();
    EXPECT_EQ(sessionOut.logits(), callerOut.logits()) << "after " << past;
    past += static_cast<int64_t>(tokens.size());
  }
  for (size_t k = 0; k < stateInputs.size(); ++k) {
    const void *state = session.state(stateInputs[k]);
    EXPECT_EQ(state, addresses[k]);
    EXPECT_EQ(std::memcmp(state, ownState[k].data(),
                          ownState[k].size() * sizeof(float)),
              0);
  }

  // A new sequence: reset zeroes the cache in place.
  session.reset();
  for (size_t k = 0; k < stateInputs.size(); ++k) {
    loom_tensor_desc shape{};
    const char *bytes =
        static_cast<const char *>(session.state(stateInputs[k], &shape));
    EXPECT_EQ(bytes, addresses[k]);
    EXPECT_TRUE(std::all_of(bytes, bytes + shape.byte_size,
                            [](char c) { return c == 0; }));
  }
}

// LOOM_TEST_SCATTER_ENGINE: test/Runtime/Inputs/tensor_scatter_cache.onnxtxt
// compiled with --kv-cache=8 (a cache of 8 positions that the model writes
// with TensorScatter: state input past_key f32 [1, 2, 8, 4], inputs new_key
// f32 [1, 2, 1, 4] and write_indices i64 [1]; output summed f32 [1, 2, 4],
// the cache summed over its positions). Step t writes the value t + 1 at
// position t: after it, the session's cache holds 1 .. t + 1 in positions
// 0 .. t and zeros after them, and the sum is the triangular number.
TEST(Session, WritesTheScatteredCacheInPlace) {
  std::string path = enginePath("LOOM_TEST_SCATTER_ENGINE");
  ASSERT_FALSE(path.empty()) << "set LOOM_TEST_SCATTER_ENGINE";
  loom::Error error;
  loom::Engine engine = loom::Engine::load(path, error);
  ASSERT_FALSE(error) << error.message();
  std::vector<loom_tensor_desc> inputs = engine.inputs();
  ASSERT_EQ(inputs.size(), 3u);
  ASSERT_STREQ(inputs[0].name, "past_key");
  ASSERT_EQ(loom_engine_input_state_axis(engine.get(), 0, 0), 2);
  ASSERT_EQ(engine.outputs().size(), 1u); // present_key is the state
  loom::Session session = loom::Session::create(engine, 1, error);
  ASSERT_FALSE(error) << error.message();
  loom_tensor_desc shape{};
  const float *cache = static_cast<const float *>(session.state(0, &shape));
  ASSERT_NE(cache, nullptr);
  ASSERT_EQ(shape.byte_size, 2u * 8 * 4 * sizeof(float));
  for (int64_t step = 0; step < 3; ++step) {
    std::vector<float> newKey(2 * 4, static_cast<float>(step + 1));
    int64_t writeIndex = step;
    std::vector<float> summed(2 * 4);
    error =
        session.execute({nullptr, newKey.data(), &writeIndex}, {summed.data()});
    ASSERT_FALSE(error) << error.message();
    EXPECT_EQ(session.state(0), cache) << "the cache moved";
    float triangle = static_cast<float>((step + 1) * (step + 2) / 2);
    for (float value : summed)
      EXPECT_EQ(value, triangle) << "after step " << step;
    for (int64_t head = 0; head < 2; ++head)
      for (int64_t position = 0; position < 8; ++position)
        for (int64_t k = 0; k < 4; ++k)
          EXPECT_EQ(cache[(head * 8 + position) * 4 + k],
                    position <= step ? static_cast<float>(position + 1) : 0.0f)
              << "head " << head << " position " << position;
  }
}

// LOOM_TEST_KV_TP2_ENGINE: the same decoder compiled with --kv-cache=16
// --grid=tp=2. Each rank's session state holds its own key/value head (1 of
// the 2): the ranks' caches together are the single-rank session's cache,
// split by heads, and each rank's logits are the single-rank engine's.
TEST(Session, KeepsEachRanksHeads) {
  std::string singlePath = enginePath("LOOM_TEST_KV_ENGINE");
  std::string tpPath = enginePath("LOOM_TEST_KV_TP2_ENGINE");
  ASSERT_FALSE(singlePath.empty() || tpPath.empty())
      << "set LOOM_TEST_KV_ENGINE and LOOM_TEST_KV_TP2_ENGINE";
  loom::Error error;
  loom::Engine single = loom::Engine::load(singlePath, error);
  ASSERT_FALSE(error) << error.message();
  loom::Engine tp = loom::Engine::load(tpPath, error);
  ASSERT_FALSE(error) << error.message();
  ASSERT_EQ(tp.numRanks(), 2);
  loom::Session singleSession = loom::Session::create(single, 1, error);
  ASSERT_FALSE(error) << error.message();
  loom::Session tpSession = loom::Session::create(tp, 1, error);
  ASSERT_FALSE(error) << error.message();

  // Each rank's state: the single-rank cache's shape with one head.
  std::vector<loom_tensor_desc> inputs = tp.inputs();
  for (int32_t r = 0; r < 2; ++r)
    for (int32_t i = 0; i < static_cast<int32_t>(inputs.size()); ++i) {
      loom_tensor_desc shape{};
      if (!tpSession.state(i, &shape, r))
        continue;
      ASSERT_EQ(shape.rank, 4);
      EXPECT_EQ(shape.dims[1], 1) << inputs[i].name;
      EXPECT_EQ(shape.byte_size, 1u * 1 * 16 * 16 * sizeof(float));
    }
  EXPECT_EQ(tpSession.state(0, nullptr, 2), nullptr);

  // One call for one rank is not how a partitioned engine runs.
  {
    DecoderInputs in(tp, {7}, 0);
    DecoderOutputs out(tp);
    error = tpSession.execute(in.pointers, out.pointers);
    EXPECT_TRUE(error);
    EXPECT_NE(error.message().find("loom_session_execute_ranks"),
              std::string::npos)
        << error.message();
  }

  std::vector<std::vector<int64_t>> steps = {{7, 31, 149}, {157}, {86}};
  int64_t past = 0;
  for (const std::vector<int64_t> &tokens : steps) {
    DecoderInputs singleIn(single, tokens, past);
    DecoderOutputs singleOut(single);
    error = singleSession.execute(singleIn.pointers, singleOut.pointers);
    ASSERT_FALSE(error) << error.message();
    DecoderInputs rank0In(tp, tokens, past), rank1In(tp, tokens, past);
    DecoderOutputs rank0Out(tp), rank1Out(tp);
    error = tpSession.executeRanks({rank0In.pointers, rank1In.pointers},
                                   {rank0Out.pointers, rank1Out.pointers});
    ASSERT_FALSE(error) << error.message();
    std::vector<float> expected = singleOut.logits();
    for (const DecoderOutputs *out : {&rank0Out, &rank1Out}) {
      std::vector<float> logits = out->logits();
      ASSERT_EQ(logits.size(), expected.size());
      for (size_t k = 0; k < logits.size(); ++k)
        ASSERT_NEAR(logits[k], expected[k], 1e-4) << "after " << past;
    }
    past += static_cast<int64_t>(tokens.size());
  }

  // One process per rank (loom_session_create_on): a session of rank 1's
  // state alone, which runs on its communicator only; a communicator of
  // another size is refused. (test/Runtime/mpi.test runs such sessions.)
  {
    loom_comm *comms[3] = {};
    ASSERT_EQ(loom_comm_create_local(2, nullptr, comms), LOOM_OK);
    loom_session *own = nullptr;
    ASSERT_EQ(loom_session_create_on(tp.get(), comms[1], 1, &own), LOOM_OK);
    EXPECT_EQ(loom_session_rank_state(own, 0, 2, nullptr), nullptr);
    for (int32_t i = 0; i < static_cast<int32_t>(inputs.size()); ++i)
      if (loom_engine_input_state_axis(tp.get(), 1, i) >= 0)
        EXPECT_NE(loom_session_rank_state(own, 1, i, nullptr), nullptr);
    const void *const *noInputs[2] = {nullptr, nullptr};
    void *const *noOutputs[2] = {nullptr, nullptr};
    EXPECT_EQ(loom_session_execute_ranks(own, noInputs, noOutputs, nullptr),
              LOOM_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(loom_last_error()).find("loom_session_execute_on"),
              std::string::npos)
        << loom_last_error();
    loom_session_free(own);
    loom_comm_free(comms[0]);
    loom_comm_free(comms[1]);
    ASSERT_EQ(loom_comm_create_local(3, nullptr, comms), LOOM_OK);
    loom_session *wrong = nullptr;
    EXPECT_EQ(loom_session_create_on(tp.get(), comms[0], 1, &wrong),
              LOOM_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(wrong, nullptr);
    for (loom_comm *c : comms)
      loom_comm_free(c);
  }

  // Rank r's cache is head r of the single-rank cache (the same name).
  std::vector<loom_tensor_desc> singleInputs = single.inputs();
  int checked = 0;
  for (int32_t i = 0; i < static_cast<int32_t>(singleInputs.size()); ++i) {
    loom_tensor_desc whole{};
    const float *wholeData =
        static_cast<const float *>(singleSession.state(i, &whole));
    if (!wholeData)
      continue;
    int32_t tpIndex = -1;
    for (int32_t j = 0; j < static_cast<int32_t>(inputs.size()); ++j)
      if (std::string(inputs[j].name) == singleInputs[i].name)
        tpIndex = j;
    ASSERT_GE(tpIndex, 0) << singleInputs[i].name;
    size_t headFloats = 16 * 16;
    for (int32_t r = 0; r < 2; ++r) {
      const float *share =
          static_cast<const float *>(tpSession.state(tpIndex, nullptr, r));
      ASSERT_NE(share, nullptr);
      for (size_t k = 0; k < headFloats; ++k)
        ASSERT_NEAR(share[k], wholeData[r * headFloats + k], 1e-5)
            << singleInputs[i].name << " rank " << r << " element " << k;
    }
    ++checked;
  }
  EXPECT_EQ(checked, 4);
}

} // namespace
