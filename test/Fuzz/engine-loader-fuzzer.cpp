//===- engine-loader-fuzzer.cpp - Fuzzing the engine loader ---------------===//
//
// Input: an engine file. It is loaded from memory as loom_engine_load loads
// a mapped file (runtime/src/engine_internal.h), but with its code sections
// stubbed: every check on the header, signature trailer, manifest and
// section table runs, and no byte of the input is ever executed. The digest
// check is off, so that mutations reach the parsers behind it (a file with a
// wrong digest stops at the digest, which test/Runtime/corrupt-engines.test
// covers). An engine that loads is then inspected through the C API and run
// once with zero-filled buffers, so that what the manifest declares is what
// the runtime can use.
//
//===----------------------------------------------------------------------===//

#include "engine_internal.h"

#include "loom/runtime.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace {

/// The largest buffer the harness passes; larger tensors are not run.
constexpr size_t kMaxBufferBytes = size_t(16) << 20;

/// Zero-filled buffers for one rank's inputs and outputs, in the forms
/// execute takes (loom_shaped_input / loom_dynamic_output for tensors with
/// symbolic sizes, bound to 1). False when a tensor is too large to run.
struct RankBuffers {
  std::vector<std::vector<char>> storage;
  std::vector<loom_shaped_input> shaped;
  std::vector<loom_dynamic_output> dynamic;
  std::vector<const void *> inputs;
  std::vector<void *> outputs;

  bool make(const loom_engine *engine, int32_t rank) {
    int32_t numInputs = loom_engine_num_inputs(engine, rank);
    int32_t numOutputs = loom_engine_num_outputs(engine, rank);
    // Reserved so that pointers into them stay valid.
    shaped.reserve(numInputs);
    dynamic.reserve(numOutputs);
    storage.reserve(numInputs + numOutputs);
    for (int32_t i = 0; i < numInputs; ++i) {
      const loom_tensor_desc *desc = loom_engine_input(engine, rank, i);
      if (!desc)
        return false;
      if (!loom_tensor_desc_is_dynamic(desc)) {
        if (desc->byte_size > kMaxBufferBytes)
          return false;
        storage.emplace_back(desc->byte_size + 1);
        inputs.push_back(storage.back().data());
        continue;
      }
      loom_shaped_input in{};
      in.rank = desc->rank;
      for (int32_t d = 0; d < desc->rank; ++d)
        in.dims[d] = desc->dims[d] == LOOM_DYNAMIC_DIM ? 1 : desc->dims[d];
      size_t bytes = loom_dtype_size(desc->dtype);
      for (int32_t d = 0; d < desc->rank; ++d) {
        if (in.dims[d] < 0 ||
            (in.dims[d] && bytes > kMaxBufferBytes / size_t(in.dims[d])))
          return false;
        bytes *= size_t(in.dims[d]);
      }
      storage.emplace_back(bytes + 1);
      in.data = storage.back().data();
      shaped.push_back(in);
      inputs.push_back(&shaped.back());
    }
    for (int32_t i = 0; i < numOutputs; ++i) {
      const loom_tensor_desc *desc = loom_engine_output(engine, rank, i);
      if (!desc)
        return false;
      if (loom_tensor_desc_is_dynamic(desc)) {
        dynamic.push_back({});
        outputs.push_back(&dynamic.back());
        continue;
      }
      if (desc->byte_size > kMaxBufferBytes)
        return false;
      storage.emplace_back(desc->byte_size + 1);
      outputs.push_back(storage.back().data());
    }
    return true;
  }

  void release() {
    for (loom_dynamic_output &out : dynamic)
      loom_buffer_free(out.data);
  }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  loom_load_options options;
  loom_load_options_init(&options);
  options.verify_digest = 0;
  loom_engine *engine = nullptr;
  if (loom::runtime::loadEngineImage(data, size, "fuzz.engine", &options,
                                     loom::runtime::CodeSections::Stub,
                                     &engine) != LOOM_OK)
    return 0;
  (void)loom_engine_compiler_version(engine);
  (void)loom_engine_target(engine);
  int32_t gridRank = 0;
  int64_t gridDims[LOOM_MAX_RANK];
  loom_engine_grid(engine, &gridRank, gridDims);
  int32_t numRanks = loom_engine_num_ranks(engine);
  std::vector<RankBuffers> buffers(numRanks);
  bool runnable = numRanks <= 8;
  for (int32_t r = 0; r < numRanks; ++r) {
    for (int32_t i = 0; i < loom_engine_num_inputs(engine, r); ++i)
      (void)loom_engine_input_state_axis(engine, r, i);
    runnable = runnable && buffers[r].make(engine, r);
  }
  if (runnable && numRanks == 1) {
    (void)loom_engine_execute(engine, 0, buffers[0].inputs.data(),
                              buffers[0].outputs.data());
  } else if (runnable) {
    std::vector<const void *const *> inputs;
    std::vector<void *const *> outputs;
    for (RankBuffers &b : buffers) {
      inputs.push_back(b.inputs.data());
      outputs.push_back(b.outputs.data());
    }
    loom_execute_options execute;
    loom_execute_options_init(&execute);
    (void)loom_engine_execute_ranks(engine, inputs.data(), outputs.data(),
                                    &execute);
  }
  for (RankBuffers &b : buffers)
    b.release();
  loom_engine_free(engine);
  return 0;
}
