//===- engine_state.h - An engine in memory ---------------------*- C++ -*-===//
//
// What a loaded engine is, shared by the three parts of the runtime that
// handle one: engine_manifest.cpp (the manifest's records into ranks,
// programs and variants), engine_load.cpp (the file's checks, its
// sections, the code handed to the dynamic loader) and engine.cpp (the
// queries of the C API and execution).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_ENGINE_STATE_H
#define LOOM_RUNTIME_ENGINE_STATE_H

#include "loom/abi/engine_format.h"
#include "loom/runtime.h"

#include "collectives_internal.h"
#include "engine_internal.h"
#include "profile_internal.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace loom::runtime {

inline loom_status fail(loom_status status, const std::string &message) {
  return setError(status, message);
}

using EntryFn = void (*)(void **);

/// A weight's place in its rank's weights section (from the manifest).
struct WeightPlace {
  uint64_t offset = 0, size = 0;
};

/// One compiled program: a shared object's entry and the weights it reads.
struct Program {
  std::vector<WeightPlace> weightPlaces;
  /// Pointers into the mapped weights section, in parameter order (CUDA
  /// engines: their copies in device memory, made at load).
  std::vector<void *> weights;
  /// The device copies of `weights`, freed with the engine.
  std::vector<void *> deviceWeights;
  std::string entryName;
  EntryFn entry = nullptr;
  /// The OpenMP runtime's omp_set_num_threads, when the code has parallel
  /// loops (its library then depends on libomp).
  void (*setNumThreads)(int) = nullptr;
  /// Its omp_in_parallel: whether a failed allocation is inside a parallel
  /// loop, which the code cannot be left from (abandonCall).
  int (*inParallel)() = nullptr;
  void *library = nullptr;
  /// The memfd holding the code, open while the library is loaded: the
  /// dynamic loader knows a library by its path, and a closed descriptor's
  /// number (hence "/proc/self/fd/N") would be reused for the next rank,
  /// which would then get this rank's library back.
  int codeFd = -1;
  /// What code compiled with kernel timers reported (profile.cpp); each
  /// program numbers its own kernels.
  std::unique_ptr<KernelTable> kernelTimes = std::make_unique<KernelTable>();
};

/// A rank's program compiled for one static shape of every input (manifest
/// `variant`, loomc --profile's OPT): a call with exactly these input shapes
/// runs it instead of the general code.
struct Variant {
  Program program;
  /// Per input, its shape; per output, its shape (LOOM_DYNAMIC_DIM where
  /// the data decides it).
  std::vector<std::vector<int64_t>> inputShapes, outputShapes;
  /// The inputs' descriptors with these shapes (loom_engine_variant_input).
  std::vector<loom_tensor_desc> inputDescs;
};

/// A rank: its general program (any shape in its profiles) and signature.
struct Rank : Program {
  std::vector<loom_tensor_desc> inputs, outputs;
  /// Per input: the axis of a state input (written in place and kept by the
  /// caller, manifest `state`), -1 for the others.
  std::vector<int32_t> inputStateAxis;
  /// Per input: the optimization profile's range of each symbolic
  /// dimension (manifest `profile`), {dim, min, opt, max}.
  std::vector<std::vector<std::array<int64_t, 4>>> inputProfiles;
  bool hasWeightsSection = false;
  std::vector<Variant> variants;
  /// Which program the most recent call ran; atomics, behind a pointer so
  /// that ranks stay movable.
  struct LastCall {
    /// Its kernel times (what loom_engine_kernel_times reports): the
    /// general code's or a variant's.
    std::atomic<KernelTable *> kernelTimes{nullptr};
    /// The variant, -1 for the general code.
    std::atomic<int32_t> variant{-1};
  };
  std::unique_ptr<LastCall> last = std::make_unique<LastCall>();
  /// The collectives of the rank's most recent call. Each call counts its
  /// own and publishes them here as it ends, under the lock, so that calls
  /// from several threads at once do not race (the last one to end wins).
  struct CollectiveRecord {
    std::mutex mutex;
    CollectiveCounters last;
  };
  std::unique_ptr<CollectiveRecord> collectives =
      std::make_unique<CollectiveRecord>();

  KernelTable &reportedKernelTimes() const {
    KernelTable *times = last->kernelTimes.load();
    return times ? *times : *kernelTimes;
  }
};

/// One thread and one in-process communicator per rank, kept between
/// loom_engine_execute_ranks calls (engine.cpp).
class RankPool;

} // namespace loom::runtime

struct loom_engine {
  void *mapping = nullptr;
  size_t mappedSize = 0;
  std::string compilerVersion, target;
  std::vector<int64_t> grid;
  /// Kernel libraries the code calls (manifest `library` records).
  std::vector<std::string> libraries;
  std::vector<loom::runtime::Rank> ranks;
  /// Variant v (manifest numbering) is ranks[first].variants[second].
  std::vector<std::pair<size_t, size_t>> variantPlaces;
  /// loom_load_options::threads.
  int32_t threads = 1;
  // Names are kept here so that the descriptors' pointers stay valid.
  std::vector<std::unique_ptr<std::string>> names;
  /// The rank threads of loom_engine_execute_ranks, kept between calls
  /// (created on the first); `poolMutex` lets one call use them at a time.
  std::unique_ptr<loom::runtime::RankPool> pool;
  std::mutex poolMutex;
  /// loom_engine_collect_kernel_times.
  std::atomic<bool> collectKernelTimes{false};
  /// How code sections become entries (loom::runtime::CodeSections).
  loom::runtime::CodeSections codeSections = loom::runtime::CodeSections::Load;

  loom_engine();
  ~loom_engine();

  loom_status parseManifest(const std::string &text, bool checkTarget);
  /// Loads `section`'s shared object as `program`'s code; `what` names the
  /// program in messages ("rank 0", "variant 1 (rank 0)").
  loom_status loadCode(const uint8_t *image, const loom_engine_section &section,
                       loom::runtime::Program &program,
                       const std::string &what);
  loom::runtime::Variant *variantAt(const std::string &number);
  /// The code runs on a CUDA device (manifest `library cuda`): its weights
  /// live in device memory.
  bool usesCuda() const {
    return std::find(libraries.begin(), libraries.end(), "cuda") !=
           libraries.end();
  }
};

#endif // LOOM_RUNTIME_ENGINE_STATE_H
