//===- engine.cpp - Running engines ---------------------------------------===//
//
// The C API's queries on a loaded engine, and execution: the inputs'
// shapes checked against each rank's signature and profiles, the program
// chosen (a variant for its exact shapes, or the general code), outputs
// whose sizes the data decides allocated, the code called with its
// collectives' communicator, and the ranks of one process run together on
// a pool of threads.
//
//===----------------------------------------------------------------------===//

#include "engine_state.h"
#include "memory_internal.h"

#include "loom/abi/memory.h"

#include "drivers/cuda/cuda_driver.h"
#include "loom/comm.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <condition_variable>
#include <csetjmp>
#include <cstdlib>
#include <cstring>
#include <thread>

using namespace loom::runtime;

extern "C" {

void loom_engine_free(loom_engine *engine) {
  delete engine;
  // The blocks this thread kept for the engine's next call.
  loom_memory_release();
}

const char *loom_engine_compiler_version(const loom_engine *engine) {
  return engine->compilerVersion.c_str();
}

const char *loom_engine_target(const loom_engine *engine) {
  return engine->target.c_str();
}

int32_t loom_engine_num_ranks(const loom_engine *engine) {
  return static_cast<int32_t>(engine->ranks.size());
}

void loom_engine_grid(const loom_engine *engine, int32_t *rank,
                      int64_t dims[LOOM_MAX_RANK]) {
  *rank = static_cast<int32_t>(engine->grid.size());
  for (size_t i = 0; i < engine->grid.size() && i < LOOM_MAX_RANK; ++i)
    dims[i] = engine->grid[i];
}

static const Rank *rankOf(const loom_engine *engine, int32_t rank) {
  if (!engine || rank < 0 || rank >= (int32_t)engine->ranks.size())
    return nullptr;
  return &engine->ranks[rank];
}

void loom_engine_collect_kernel_times(loom_engine *engine, int32_t enable) {
  if (!engine)
    return;
  if (enable)
    for (Rank &r : engine->ranks) {
      r.kernelTimes->clear();
      for (Variant &variant : r.variants)
        variant.program.kernelTimes->clear();
    }
  engine->collectKernelTimes = enable != 0;
}

loom_status loom_engine_kernel_times(const loom_engine *engine, int32_t rank,
                                     loom_kernel_time *times, size_t capacity,
                                     size_t *count) {
  const Rank *r = rankOf(engine, rank);
  if (!r || !count || (capacity && !times))
    return fail(LOOM_ERROR_INVALID_ARGUMENT,
                "null engine, times or count, or a bad rank");
  loom::runtime::KernelTable &table = r->reportedKernelTimes();
  std::lock_guard<std::mutex> lock(table.mutex);
  const std::vector<loom_kernel_time> &kernels = table.kernels;
  *count = kernels.size();
  std::copy_n(kernels.begin(), std::min(capacity, kernels.size()), times);
  return LOOM_OK;
}

loom_status loom_engine_kernel_events(const loom_engine *engine, int32_t rank,
                                      loom_kernel_event *events,
                                      size_t capacity, size_t *count) {
  const Rank *r = rankOf(engine, rank);
  if (!r || !count || (capacity && !events))
    return fail(LOOM_ERROR_INVALID_ARGUMENT,
                "null engine, events or count, or a bad rank");
  loom::runtime::KernelTable &table = r->reportedKernelTimes();
  std::lock_guard<std::mutex> lock(table.mutex);
  const std::vector<loom_kernel_event> &recent = table.events;
  *count = recent.size();
  std::copy_n(recent.begin(), std::min(capacity, recent.size()), events);
  return LOOM_OK;
}

const char *loom_collective_kind_name(loom_collective_kind kind) {
  switch (kind) {
  case LOOM_COLLECTIVE_ALL_REDUCE:
    return "all_reduce";
  case LOOM_COLLECTIVE_ALL_GATHER:
    return "all_gather";
  case LOOM_COLLECTIVE_ALL_TO_ALL:
    return "all_to_all";
  case LOOM_COLLECTIVE_BROADCAST:
    return "broadcast";
  case LOOM_COLLECTIVE_SEND:
    return "send";
  case LOOM_COLLECTIVE_RECV:
    return "recv";
  default:
    return "unknown";
  }
}

loom_status loom_engine_collective_stats(const loom_engine *engine,
                                         int32_t rank,
                                         loom_collective_stats *stats) {
  const Rank *r = rankOf(engine, rank);
  if (!r || !stats)
    return fail(LOOM_ERROR_INVALID_ARGUMENT,
                "null engine or stats, or a bad rank");
  std::lock_guard<std::mutex> lock(r->collectives->mutex);
  std::copy_n(r->collectives->last.kinds, LOOM_COLLECTIVE_KINDS, stats);
  return LOOM_OK;
}

int32_t loom_engine_num_inputs(const loom_engine *engine, int32_t rank) {
  const Rank *r = rankOf(engine, rank);
  return r ? static_cast<int32_t>(r->inputs.size()) : -1;
}

int32_t loom_engine_num_outputs(const loom_engine *engine, int32_t rank) {
  const Rank *r = rankOf(engine, rank);
  return r ? static_cast<int32_t>(r->outputs.size()) : -1;
}

const loom_tensor_desc *loom_engine_input(const loom_engine *engine,
                                          int32_t rank, int32_t index) {
  const Rank *r = rankOf(engine, rank);
  if (!r || index < 0 || index >= (int32_t)r->inputs.size())
    return nullptr;
  return &r->inputs[index];
}

int32_t loom_engine_input_state_axis(const loom_engine *engine, int32_t rank,
                                     int32_t index) {
  const Rank *r = rankOf(engine, rank);
  if (!r || index < 0 || index >= (int32_t)r->inputs.size() ||
      index >= (int32_t)r->inputStateAxis.size())
    return -1;
  return r->inputStateAxis[index];
}

int32_t loom_engine_num_variants(const loom_engine *engine, int32_t rank) {
  const Rank *r = rankOf(engine, rank);
  return r ? static_cast<int32_t>(r->variants.size()) : -1;
}

const loom_tensor_desc *loom_engine_variant_input(const loom_engine *engine,
                                                  int32_t rank, int32_t variant,
                                                  int32_t index) {
  const Rank *r = rankOf(engine, rank);
  if (!r || variant < 0 || variant >= (int32_t)r->variants.size() ||
      index < 0 || index >= (int32_t)r->inputs.size())
    return nullptr;
  return &r->variants[variant].inputDescs[index];
}

int32_t loom_engine_last_variant(const loom_engine *engine, int32_t rank) {
  const Rank *r = rankOf(engine, rank);
  return r ? r->last->variant.load() : -1;
}

const loom_tensor_desc *loom_engine_output(const loom_engine *engine,
                                           int32_t rank, int32_t index) {
  const Rank *r = rankOf(engine, rank);
  if (!r || index < 0 || index >= (int32_t)r->outputs.size())
    return nullptr;
  return &r->outputs[index];
}

} // extern "C"

/// Why `shaped` cannot be the input `desc` describes ("" when it can):
/// its rank and static dimensions must be the descriptor's, its symbolic
/// ones in [0, 2^31).
static std::string checkInputShape(const loom_tensor_desc &desc,
                                   const loom_shaped_input &shaped) {
  auto shapeString = [](const int64_t *dims, int32_t rank) {
    std::string s = "[";
    for (int32_t d = 0; d < rank; ++d)
      s += (d ? "," : "") + (dims[d] == LOOM_DYNAMIC_DIM
                                 ? std::string("?")
                                 : std::to_string(dims[d]));
    return s + "]";
  };
  if (shaped.rank != desc.rank || shaped.rank < 0 ||
      shaped.rank > LOOM_MAX_RANK)
    return "the engine takes rank " + std::to_string(desc.rank) + " " +
           shapeString(desc.dims, desc.rank) + ", given rank " +
           std::to_string(shaped.rank);
  constexpr int64_t kMaxSize = (int64_t(1) << 31) - 1;
  for (int32_t d = 0; d < desc.rank; ++d) {
    int64_t size = shaped.dims[d];
    if (desc.dims[d] != LOOM_DYNAMIC_DIM && size != desc.dims[d])
      return "dimension " + std::to_string(d) + " is " + std::to_string(size) +
             " but the engine takes " + shapeString(desc.dims, desc.rank);
    if (size < 0 || size > kMaxSize)
      return "dimension " + std::to_string(d) + " has size " +
             std::to_string(size) + " (0 to 2^31 - 1 allowed)";
  }
  if (!shaped.data) {
    for (int32_t d = 0; d < desc.rank; ++d)
      if (shaped.dims[d] == 0)
        return "";
    return "its data is null";
  }
  return "";
}

/// Runs rank `rank`'s code with `comm` (null: no collectives) installed
/// for its collectives.
/// The variant of `r` compiled for exactly `shapes` (one per input), or
/// null: then the general code runs.
static const Variant *
findVariant(const Rank &r, const std::vector<std::vector<int64_t>> &shapes) {
  for (const Variant &variant : r.variants)
    if (variant.inputShapes == shapes)
      return &variant;
  return nullptr;
}

/// Runs rank `rank`'s code with `comm` (null: no collectives) installed
/// for its collectives: the variant compiled for the inputs' shapes when
/// there is one, else the general code.
static loom_status runRank(loom_engine *engine, int32_t rank,
                           const void *const *inputs, void *const *outputs,
                           loom_comm *comm) {
  const Rank *r = rankOf(engine, rank);
  if (!r)
    return fail(LOOM_ERROR_INVALID_ARGUMENT,
                "rank " + std::to_string(rank) + " is out of range");
  if ((!inputs && !r->inputs.empty()) || (!outputs && !r->outputs.empty()))
    return fail(LOOM_ERROR_INVALID_ARGUMENT, "null buffer array");
  std::vector<void *> buffers;
  // The symbolic dimensions of the inputs that have them, in input order:
  // the general code's trailing argument
  // (loom-cpu-run-time-sized-arguments).
  std::vector<int64_t> inputSizes;
  // Every input's shape, to choose a variant by.
  std::vector<std::vector<int64_t>> inputShapes;
  for (size_t i = 0; i < r->inputs.size(); ++i) {
    const loom_tensor_desc &desc = r->inputs[i];
    if (!inputs[i] && (desc.byte_size || loom_tensor_desc_is_dynamic(&desc)))
      return fail(LOOM_ERROR_INVALID_ARGUMENT,
                  "input " + std::to_string(i) + " is null");
    if (!loom_tensor_desc_is_dynamic(&desc)) {
      buffers.push_back(const_cast<void *>(inputs[i]));
      inputShapes.emplace_back(desc.dims, desc.dims + desc.rank);
      continue;
    }
    const auto *shaped = static_cast<const loom_shaped_input *>(inputs[i]);
    std::string error = checkInputShape(desc, *shaped);
    if (error.empty() && i < r->inputProfiles.size())
      for (const auto &[dim, min, opt, max] : r->inputProfiles[i])
        if (shaped->dims[dim] < min || shaped->dims[dim] > max) {
          error = "dimension " + std::to_string(dim) + " is " +
                  std::to_string(shaped->dims[dim]) +
                  ", outside the engine's profile: " + std::to_string(min) +
                  " to " + std::to_string(max);
          break;
        }
    if (!error.empty())
      return fail(LOOM_ERROR_INVALID_ARGUMENT, "input " + std::to_string(i) +
                                                   " ('" + desc.name +
                                                   "'): " + error);
    for (int32_t d = 0; d < desc.rank; ++d)
      if (desc.dims[d] == LOOM_DYNAMIC_DIM)
        inputSizes.push_back(shaped->dims[d]);
    inputShapes.emplace_back(shaped->dims, shaped->dims + desc.rank);
    // An empty input's data may be null; the code reads nothing.
    static const int64_t kNoData = 0;
    buffers.push_back(
        const_cast<void *>(shaped->data ? shaped->data : &kNoData));
  }
  const Variant *variant =
      r->variants.empty() ? nullptr : findVariant(*r, inputShapes);
  const Program &program = variant ? variant->program : *r;
  r->last->variant =
      variant ? static_cast<int32_t>(variant - r->variants.data()) : -1;
  // The code only reads its weights; the mapping is read-only.
  buffers.insert(buffers.end(), program.weights.begin(), program.weights.end());
  // Outputs whose sizes the data decides: the code fills a record (the
  // address of its copy, then the sizes; loom/abi/outputs.h). A variant
  // whose output is static where the general code's is not writes into a
  // buffer allocated here, described by the same record.
  std::vector<std::vector<int64_t>> records(r->outputs.size());
  for (size_t i = 0; i < r->outputs.size(); ++i) {
    const loom_tensor_desc &desc = r->outputs[i];
    if (!outputs[i] && (desc.byte_size || loom_tensor_desc_is_dynamic(&desc)))
      return fail(LOOM_ERROR_INVALID_ARGUMENT,
                  "output " + std::to_string(i) + " is null");
    if (!loom_tensor_desc_is_dynamic(&desc)) {
      buffers.push_back(outputs[i]);
      continue;
    }
    auto *dynamic = static_cast<loom_dynamic_output *>(outputs[i]);
    dynamic->data = nullptr;
    records[i].assign(1 + desc.rank, 0);
    const std::vector<int64_t> *fixed =
        variant ? &variant->outputShapes[i] : nullptr;
    if (fixed && std::find(fixed->begin(), fixed->end(), LOOM_DYNAMIC_DIM) ==
                     fixed->end()) {
      size_t bytes = loom_dtype_size(desc.dtype);
      for (int64_t size : *fixed)
        bytes *= static_cast<size_t>(size);
      void *data = loom::runtime::allocateUncachedOutputBuffer(bytes);
      if (!data) {
        for (size_t j = 0; j < i; ++j)
          if (!records[j].empty())
            loom::runtime::freeOutputBuffer(
                reinterpret_cast<void *>(records[j][0]));
        return fail(LOOM_ERROR_INTERNAL, "out of memory: could not allocate " +
                                             std::to_string(bytes) +
                                             " bytes for output " +
                                             std::to_string(i));
      }
      records[i][0] = reinterpret_cast<int64_t>(data);
      std::copy(fixed->begin(), fixed->end(), records[i].begin() + 1);
      buffers.push_back(data);
      continue;
    }
    buffers.push_back(records[i].data());
  }
  if (!inputSizes.empty() && !variant)
    buffers.push_back(inputSizes.data());
  loom_status status;
  loom::runtime::CollectiveCounters collectives;
  {
    loom::runtime::CollectiveScope scope(comm, engine->threads, &collectives);
    loom::runtime::KernelTimerScope timers(*program.kernelTimes,
                                           engine->collectKernelTimes);
    if (engine->collectKernelTimes)
      r->last->kernelTimes = program.kernelTimes.get();
    // Per calling thread in OpenMP: set on every run, since runs (and the
    // ranks' threads) may come from any thread.
    if (program.setNumThreads)
      program.setNumThreads(engine->threads);
    // Code that cannot allocate what it needs comes back here
    // (abandonCall), with the failure recorded; what it had allocated
    // before is not freed.
    std::jmp_buf escape;
    if (setjmp(escape) == 0) {
      loom::runtime::setCallEscape(&escape, program.inParallel);
      program.entry(buffers.data());
    }
    loom::runtime::setCallEscape(nullptr, nullptr);
    status = scope.status();
  }
  {
    std::lock_guard<std::mutex> lock(r->collectives->mutex);
    r->collectives->last = collectives;
  }
  for (size_t i = 0; i < r->outputs.size(); ++i) {
    if (records[i].empty())
      continue;
    const loom_tensor_desc &desc = r->outputs[i];
    void *data = reinterpret_cast<void *>(records[i][0]);
    if (status != LOOM_OK) {
      loom::runtime::freeOutputBuffer(data);
      continue;
    }
    auto *dynamic = static_cast<loom_dynamic_output *>(outputs[i]);
    size_t bytes = loom_dtype_size(desc.dtype);
    dynamic->rank = desc.rank;
    for (int32_t d = 0; d < desc.rank; ++d) {
      dynamic->dims[d] = records[i][1 + d];
      bytes *= static_cast<size_t>(records[i][1 + d]);
    }
    dynamic->byte_size = bytes;
    dynamic->data = data;
  }
  return status;
}

extern "C" {

void loom_buffer_free(void *data) { loom::runtime::freeOutputBuffer(data); }

int loom_tensor_desc_is_dynamic(const loom_tensor_desc *desc) {
  if (!desc)
    return 0;
  for (int32_t d = 0; d < desc->rank; ++d)
    if (desc->dims[d] == LOOM_DYNAMIC_DIM)
      return 1;
  return 0;
}

loom_status loom_engine_execute(loom_engine *engine, int32_t rank,
                                const void *const *inputs,
                                void *const *outputs) {
  if (engine && engine->ranks.size() > 1)
    return fail(LOOM_ERROR_INVALID_ARGUMENT,
                "the engine has " + std::to_string(engine->ranks.size()) +
                    " ranks, which communicate: run them with "
                    "loom_engine_execute_ranks or loom_engine_execute_on");
  return runRank(engine, rank, inputs, outputs, nullptr);
}

loom_status loom_engine_execute_on(loom_engine *engine, loom_comm *comm,
                                   const void *const *inputs,
                                   void *const *outputs) {
  if (!engine || !comm)
    return fail(LOOM_ERROR_INVALID_ARGUMENT, "null engine or communicator");
  if (loom_comm_size(comm) != (int32_t)engine->ranks.size())
    return fail(LOOM_ERROR_INVALID_ARGUMENT,
                "the communicator has " + std::to_string(loom_comm_size(comm)) +
                    " ranks, the engine " +
                    std::to_string(engine->ranks.size()));
  int32_t rank = loom_comm_rank(comm);
  loom_status status = runRank(engine, rank, inputs, outputs, comm);
  if (status != LOOM_OK)
    loom_comm_abort(comm, loom_last_error());
  return status;
}

void loom_execute_options_init(loom_execute_options *options) {
  options->timeout_ms = 30000;
}

} // extern "C"

namespace loom::runtime {

/// One thread and one in-process communicator per rank, kept between
/// loom_engine_execute_ranks calls: creating them on every call cost more
/// than running the fixtures' models. Each call hands the ranks their
/// buffers, wakes them and waits until all have run. A failed call leaves
/// the communicators aborted, so the engine drops the pool after one.
class RankPool {
public:
  static std::unique_ptr<RankPool>
  create(loom_engine *engine, int64_t timeoutMs, loom_status &status) {
    int32_t n = static_cast<int32_t>(engine->ranks.size());
    std::unique_ptr<RankPool> pool(new RankPool(engine, timeoutMs, n));
    loom_comm_options commOptions;
    loom_comm_options_init(&commOptions);
    commOptions.timeout_ms = timeoutMs;
    status = loom_comm_create_local(n, &commOptions, pool->comms.data());
    if (status != LOOM_OK)
      return nullptr;
    for (int32_t r = 0; r < n; ++r)
      pool->threads.emplace_back([p = pool.get(), r] { p->serve(r); });
    return pool;
  }

  ~RankPool() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    wake.notify_all();
    for (std::thread &t : threads)
      t.join();
    for (loom_comm *c : comms)
      if (c)
        loom_comm_free(c);
  }

  int64_t timeoutMs() const { return timeout; }

  /// Runs every rank once; a failing rank fails the call, naming it.
  loom_status run(const void *const *const *inputs,
                  void *const *const *outputs) {
    std::unique_lock<std::mutex> lock(mutex);
    this->inputs = inputs;
    this->outputs = outputs;
    running = static_cast<int32_t>(threads.size());
    ++generation;
    wake.notify_all();
    done.wait(lock, [&] { return running == 0; });
    for (size_t r = 0; r < status.size(); ++r)
      if (status[r] != LOOM_OK)
        return fail(LOOM_ERROR_RANK_FAILED,
                    "rank " + std::to_string(r) + ": " + messages[r]);
    return LOOM_OK;
  }

private:
  RankPool(loom_engine *engine, int64_t timeoutMs, int32_t n)
      : engine(engine), timeout(timeoutMs), comms(n, nullptr), status(n),
        messages(n) {}

  void serve(int32_t rank) {
    uint64_t seen = 0;
    while (true) {
      const void *const *in;
      void *const *out;
      {
        std::unique_lock<std::mutex> lock(mutex);
        wake.wait(lock, [&] { return stopping || generation != seen; });
        if (stopping)
          return;
        seen = generation;
        in = inputs[rank];
        out = outputs[rank];
      }
      loom_status s = loom_engine_execute_on(engine, comms[rank], in, out);
      std::string message = s == LOOM_OK ? "" : loom_last_error();
      {
        std::lock_guard<std::mutex> lock(mutex);
        status[rank] = s;
        messages[rank] = std::move(message);
        if (--running == 0)
          done.notify_all();
      }
    }
  }

  loom_engine *engine;
  int64_t timeout;
  std::vector<loom_comm *> comms;
  std::vector<std::thread> threads;
  std::mutex mutex;
  std::condition_variable wake, done;
  bool stopping = false;
  uint64_t generation = 0;
  int32_t running = 0;
  const void *const *const *inputs = nullptr;
  void *const *const *outputs = nullptr;
  std::vector<loom_status> status;
  std::vector<std::string> messages;
};

} // namespace loom::runtime

// Here, where RankPool is complete.
loom_engine::loom_engine() = default;

loom_engine::~loom_engine() {
  pool.reset();
  auto release = [](Program &program) {
    for (void *device : program.deviceWeights)
      loom::runtime::cuda::freeDeviceBuffer(device);
    if (program.library) {
      loom::runtime::releaseLibraryKernels(program.library);
      dlclose(program.library);
    }
    if (program.codeFd >= 0)
      close(program.codeFd);
  };
  for (Rank &r : ranks) {
    release(r);
    for (Variant &variant : r.variants)
      release(variant.program);
  }
  if (mapping)
    munmap(mapping, mappedSize);
}

extern "C" {

loom_status loom_engine_execute_ranks(loom_engine *engine,
                                      const void *const *const *inputs,
                                      void *const *const *outputs,
                                      const loom_execute_options *options) {
  if (!engine || !inputs || !outputs)
    return fail(LOOM_ERROR_INVALID_ARGUMENT, "null engine or buffer arrays");
  loom_execute_options defaults;
  loom_execute_options_init(&defaults);
  if (!options)
    options = &defaults;
  // One call at a time uses the engine's rank threads; a concurrent call
  // gets threads of its own for the duration.
  std::unique_lock<std::mutex> owner(engine->poolMutex, std::try_to_lock);
  std::unique_ptr<RankPool> own;
  RankPool *pool = nullptr;
  loom_status status = LOOM_OK;
  if (owner.owns_lock()) {
    if (engine->pool && engine->pool->timeoutMs() != options->timeout_ms)
      engine->pool.reset();
    if (!engine->pool)
      engine->pool = RankPool::create(engine, options->timeout_ms, status);
    pool = engine->pool.get();
  } else {
    own = RankPool::create(engine, options->timeout_ms, status);
    pool = own.get();
  }
  if (!pool)
    return status;
  status = pool->run(inputs, outputs);
  // The communicators of a failed call are aborted: start afresh next time.
  if (status != LOOM_OK && owner.owns_lock())
    engine->pool.reset();
  return status;
}

} // extern "C"
