//===- runtime-api-fuzzer.cpp - Fuzzing the runtime C API's checks --------===//
//
// The engines are fixed (LOOM_FUZZ_ENGINES: a colon-separated list of engine
// files, compiled by scripts/fuzz.py from corpus models, with symbolic
// inputs and a KV cache among them); the input decides the calls. Each input
// is a short program: which engine, then calls to loom_engine_execute,
// loom_engine_execute_ranks and the session API (one rank's sessions and
// every rank's, their per-rank state, the communicator entry points given
// none) with a rank, buffers that may be null, and symbolic inputs given any
// rank and sizes (negative, zero, huge, outside the profile). The engines are
// loaded with their code stubbed (runtime/src/engine_internal.h), so what is
// fuzzed is the runtime's own checking of its arguments: every call must return
// a status, never read or write out of bounds, and never leak.
//
//===----------------------------------------------------------------------===//

#include "engine_internal.h"

#include "loom/runtime.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

namespace {

struct LoadedEngine {
  std::vector<uint8_t> image;
  loom_engine *engine = nullptr;
  // Freed at exit, so that LeakSanitizer's exit check sees only leaks.
  ~LoadedEngine() { loom_engine_free(engine); }
};

std::vector<std::unique_ptr<LoadedEngine>> engines;

/// A size as a caller might get it wrong.
int64_t fuzzedSize(FuzzedDataProvider &fdp) {
  static const int64_t kSizes[] = {-2,
                                   -1,
                                   0,
                                   1,
                                   2,
                                   3,
                                   4,
                                   7,
                                   8,
                                   16,
                                   64,
                                   4096,
                                   (int64_t(1) << 31) - 1,
                                   int64_t(1) << 31,
                                   int64_t(1) << 40,
                                   INT64_MAX};
  return fdp.PickValueInArray(kSizes);
}

/// One rank's buffers: fixed-size inputs and outputs get a buffer of their
/// byte size (or null); symbolic inputs get a fuzzed shape and a buffer as
/// large as that shape, within a bound (or null).
struct Arguments {
  std::vector<std::vector<char>> storage;
  std::vector<loom_shaped_input> shaped;
  std::vector<loom_dynamic_output> dynamic;
  std::vector<const void *> inputs;
  std::vector<void *> outputs;

  void make(FuzzedDataProvider &fdp, const loom_engine *engine, int32_t rank) {
    constexpr size_t kMaxBytes = size_t(4) << 20;
    int32_t numInputs = loom_engine_num_inputs(engine, rank);
    int32_t numOutputs = loom_engine_num_outputs(engine, rank);
    shaped.reserve(numInputs);
    dynamic.reserve(numOutputs);
    storage.reserve(numInputs + numOutputs);
    for (int32_t i = 0; i < numInputs; ++i) {
      const loom_tensor_desc *desc = loom_engine_input(engine, rank, i);
      bool null = fdp.ConsumeIntegralInRange<int>(0, 15) == 0;
      if (!desc || null) {
        inputs.push_back(nullptr);
        continue;
      }
      if (!loom_tensor_desc_is_dynamic(desc)) {
        storage.emplace_back(std::min(desc->byte_size, kMaxBytes) + 1);
        inputs.push_back(storage.back().data());
        continue;
      }
      loom_shaped_input in{};
      bool wrongRank = fdp.ConsumeIntegralInRange<int>(0, 7) == 0;
      in.rank = wrongRank
                    ? fdp.ConsumeIntegralInRange<int32_t>(-1, LOOM_MAX_RANK + 1)
                    : desc->rank;
      for (int32_t d = 0; d < LOOM_MAX_RANK; ++d)
        in.dims[d] = d < desc->rank && desc->dims[d] != LOOM_DYNAMIC_DIM &&
                             fdp.ConsumeBool()
                         ? desc->dims[d]
                         : fuzzedSize(fdp);
      // A buffer as large as the shape says, when that is small; the
      // runtime itself never reads it (the code does, and is stubbed), so
      // a short buffer is the caller's bug the runtime cannot see.
      storage.emplace_back(kMaxBytes / 64);
      in.data = fdp.ConsumeIntegralInRange<int>(0, 7) == 0
                    ? nullptr
                    : storage.back().data();
      shaped.push_back(in);
      inputs.push_back(&shaped.back());
    }
    for (int32_t i = 0; i < numOutputs; ++i) {
      const loom_tensor_desc *desc = loom_engine_output(engine, rank, i);
      if (!desc || fdp.ConsumeIntegralInRange<int>(0, 15) == 0) {
        outputs.push_back(nullptr);
        continue;
      }
      if (loom_tensor_desc_is_dynamic(desc)) {
        dynamic.push_back({});
        outputs.push_back(&dynamic.back());
        continue;
      }
      storage.emplace_back(std::min(desc->byte_size, kMaxBytes) + 1);
      outputs.push_back(storage.back().data());
    }
  }

  ~Arguments() {
    for (loom_dynamic_output &out : dynamic)
      loom_buffer_free(out.data);
  }
};

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  const char *list = std::getenv("LOOM_FUZZ_ENGINES");
  if (!list || !*list) {
    std::fprintf(stderr, "runtime-api-fuzzer: set LOOM_FUZZ_ENGINES to a "
                         "colon-separated list of engine files\n");
    std::exit(2);
  }
  std::string paths = list;
  size_t start = 0;
  while (start <= paths.size()) {
    size_t end = paths.find(':', start);
    if (end == std::string::npos)
      end = paths.size();
    std::string path = paths.substr(start, end - start);
    start = end + 1;
    if (path.empty())
      continue;
    std::ifstream file(path, std::ios::binary);
    auto loaded = std::make_unique<LoadedEngine>();
    loaded->image.assign(std::istreambuf_iterator<char>(file), {});
    if (loom::runtime::loadEngineImage(
            loaded->image.data(), loaded->image.size(), path, nullptr,
            loom::runtime::CodeSections::Stub, &loaded->engine) != LOOM_OK) {
      std::fprintf(stderr, "runtime-api-fuzzer: %s\n", loom_last_error());
      std::exit(2);
    }
    engines.push_back(std::move(loaded));
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  loom_engine *engine =
      engines[fdp.ConsumeIntegralInRange<size_t>(0, engines.size() - 1)]
          ->engine;
  int32_t numRanks = loom_engine_num_ranks(engine);
  for (int call = 0; call < 4 && fdp.remaining_bytes(); ++call) {
    switch (fdp.ConsumeIntegralInRange<int>(0, 4)) {
    case 0: {
      int32_t rank = fdp.ConsumeIntegralInRange<int32_t>(-1, numRanks);
      Arguments args;
      if (rank >= 0 && rank < numRanks)
        args.make(fdp, engine, rank);
      bool nullArrays = fdp.ConsumeIntegralInRange<int>(0, 15) == 0;
      (void)loom_engine_execute(engine, rank,
                                nullArrays ? nullptr : args.inputs.data(),
                                nullArrays ? nullptr : args.outputs.data());
      break;
    }
    case 1: {
      std::vector<Arguments> args(numRanks);
      std::vector<const void *const *> inputs;
      std::vector<void *const *> outputs;
      for (int32_t r = 0; r < numRanks; ++r) {
        args[r].make(fdp, engine, r);
        inputs.push_back(args[r].inputs.data());
        outputs.push_back(args[r].outputs.data());
      }
      loom_execute_options options;
      loom_execute_options_init(&options);
      options.timeout_ms = 2000;
      (void)loom_engine_execute_ranks(engine, inputs.data(), outputs.data(),
                                      &options);
      break;
    }
    case 2: {
      loom_session *session = nullptr;
      if (loom_session_create(engine, fuzzedSize(fdp), &session) != LOOM_OK)
        break;
      for (int step = 0; step < 2; ++step) {
        Arguments args;
        args.make(fdp, engine, 0);
        (void)loom_session_execute(session, args.inputs.data(),
                                   args.outputs.data());
      }
      loom_tensor_desc shape;
      int32_t index = fdp.ConsumeIntegralInRange<int32_t>(-1, 64);
      (void)loom_session_state(session, index, &shape);
      loom_session_reset(session);
      loom_session_free(session);
      break;
    }
    case 4: {
      // A session of every rank (a partitioned engine's, or one rank's),
      // its per-rank state, and the communicator entry points without a
      // communicator.
      loom_session *session = nullptr;
      if (loom_session_create(engine, fuzzedSize(fdp), &session) != LOOM_OK)
        break;
      std::vector<Arguments> args(numRanks);
      std::vector<const void *const *> inputs;
      std::vector<void *const *> outputs;
      for (int32_t r = 0; r < numRanks; ++r) {
        args[r].make(fdp, engine, r);
        inputs.push_back(args[r].inputs.data());
        outputs.push_back(args[r].outputs.data());
      }
      bool nullArrays = fdp.ConsumeIntegralInRange<int>(0, 15) == 0;
      loom_execute_options options;
      loom_execute_options_init(&options);
      options.timeout_ms = 2000;
      (void)loom_session_execute_ranks(
          session, nullArrays ? nullptr : inputs.data(),
          nullArrays ? nullptr : outputs.data(), &options);
      loom_tensor_desc shape;
      (void)loom_session_rank_state(
          session, fdp.ConsumeIntegralInRange<int32_t>(-2, numRanks + 1),
          fdp.ConsumeIntegralInRange<int32_t>(-1, 64),
          fdp.ConsumeBool() ? &shape : nullptr);
      (void)loom_session_execute_on(session, nullptr, inputs[0], outputs[0]);
      loom_session *onNoComm = nullptr;
      if (loom_session_create_on(engine, nullptr, fuzzedSize(fdp), &onNoComm) ==
          LOOM_OK)
        loom_session_free(onNoComm);
      loom_session_reset(session);
      loom_session_free(session);
      break;
    }
    case 3: {
      int32_t rank = fdp.ConsumeIntegralInRange<int32_t>(-2, numRanks + 1);
      int32_t index = fdp.ConsumeIntegralInRange<int32_t>(-2, 64);
      (void)loom_engine_input(engine, rank, index);
      (void)loom_engine_output(engine, rank, index);
      (void)loom_engine_input_state_axis(engine, rank, index);
      (void)loom_engine_num_inputs(engine, rank);
      (void)loom_engine_num_outputs(engine, rank);
      break;
    }
    }
  }
  return 0;
}
