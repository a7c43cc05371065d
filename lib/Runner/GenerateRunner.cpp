//===- GenerateRunner.cpp - loom-run --generate: greedy decoding ----------===//
//
// Greedy token generation with a decoder engine compiled from a Hugging
// Face style export with a key/value cache: inputs `input_ids`, optionally
// `attention_mask` and `position_ids`, and one `past_key_values.<suffix>`
// per cached tensor; outputs `logits` and the matching `present.<suffix>`.
// The first call (prefill) takes the prompt with an empty cache; each
// later call (decode step) takes the token chosen last and the previous
// call's present tensors as its past.
//
// Two kinds of engines:
// - compiled as exported, the cache travels through the engine's inputs and
//   outputs: each step's present tensors are the past ones with the new
//   token's keys and values appended (the export's Concat), so a step
//   copies the whole cache;
// - compiled with loomc --kv-cache=N, each past input is a state input of
//   N positions (loom_engine_input_state_axis) that the runtime keeps in a
//   session (loom_session_create: allocated once, zeroed) and the code
//   appends to in place, and `cache_length` says how many positions are
//   filled; there are no present outputs.
//
//===----------------------------------------------------------------------===//

#include "loom/Runner/Runner.h"

#include "RunnerSupport.h"

#include "loom/comm.h"
#include "loom/runtime.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

namespace loom {
namespace {

using Clock = std::chrono::steady_clock;

constexpr llvm::StringLiteral kPastPrefix = "past_key_values.";
constexpr llvm::StringLiteral kPresentPrefix = "present.";

void printError(const std::string &message) {
  llvm::errs() << "error: --generate: " << message << "\n";
}

std::string runtimeError(loom_status status) {
  return std::string(loom_last_error()) + " (" + loom_status_name(status) + ")";
}

/// One cached tensor: the engine input it is read from and the output the
/// extended cache comes back in, and the axis it grows along.
struct CacheSlot {
  int32_t input = -1;
  /// The present output; -1 for a cache kept in place.
  int32_t output = -1;
  int32_t lengthAxis = -1;
};

/// Where the decoder's inputs and outputs are.
struct DecoderInterface {
  int32_t inputIds = -1;
  int32_t attentionMask = -1;
  int32_t positionIds = -1;
  int32_t logits = -1;
  /// The filled length of caches kept in place (loomc --kv-cache); -1 when
  /// the cache goes through inputs and outputs.
  int32_t cacheLength = -1;
  std::vector<CacheSlot> cache;

  bool inPlace() const { return cacheLength >= 0; }
};

/// Finds the decoder's inputs and outputs by name; an error names what is
/// missing or not understood.
std::optional<DecoderInterface> findInterface(loom_engine *engine,
                                              std::string &error) {
  DecoderInterface io;
  int32_t numInputs = loom_engine_num_inputs(engine, 0);
  int32_t numOutputs = loom_engine_num_outputs(engine, 0);
  auto outputNamed = [&](llvm::StringRef name) {
    for (int32_t i = 0; i < numOutputs; ++i)
      if (name == loom_engine_output(engine, 0, i)->name)
        return i;
    return -1;
  };
  for (int32_t i = 0; i < numInputs; ++i) {
    const loom_tensor_desc &d = *loom_engine_input(engine, 0, i);
    llvm::StringRef name = d.name;
    bool isIndexMatrix = d.dtype == LOOM_DTYPE_I64 && d.rank == 2;
    if (name == "input_ids" || name == "attention_mask" ||
        name == "position_ids") {
      if (!isIndexMatrix) {
        error = "input '" + name.str() + "' must be int64 [batch, length]";
        return std::nullopt;
      }
      (name == "input_ids"        ? io.inputIds
       : name == "attention_mask" ? io.attentionMask
                                  : io.positionIds) = i;
      continue;
    }
    if (name == "cache_length") {
      if (d.dtype != LOOM_DTYPE_I64 || d.rank != 0) {
        error = "input 'cache_length' must be an int64 scalar";
        return std::nullopt;
      }
      io.cacheLength = i;
      continue;
    }
    if (!name.starts_with(kPastPrefix)) {
      error = "input '" + name.str() +
              "' is not one of input_ids, attention_mask, position_ids, "
              "past_key_values.*, cache_length";
      return std::nullopt;
    }
    CacheSlot slot;
    slot.input = i;
    if (int32_t axis = loom_engine_input_state_axis(engine, 0, i); axis >= 0) {
      // Kept in place: its positions axis has the capacity.
      slot.lengthAxis = axis;
      for (int32_t k = 1; k < d.rank; ++k)
        if (d.dims[k] == LOOM_DYNAMIC_DIM) {
          error = "the cache input '" + name.str() +
                  "' has a symbolic dimension other than the batch";
          return std::nullopt;
        }
      io.cache.push_back(slot);
      continue;
    }
    std::string present =
        (kPresentPrefix + name.drop_front(kPastPrefix.size())).str();
    slot.output = outputNamed(present);
    if (slot.output < 0) {
      error = "input '" + name.str() + "' has no output '" + present + "'";
      return std::nullopt;
    }
    // The cache grows along its one symbolic dimension other than the
    // batch (dimension 0).
    for (int32_t k = 1; k < d.rank; ++k)
      if (d.dims[k] == LOOM_DYNAMIC_DIM) {
        if (slot.lengthAxis >= 0) {
          slot.lengthAxis = -2;
          break;
        }
        slot.lengthAxis = k;
      }
    if (slot.lengthAxis < 0) {
      error = "input '" + name.str() +
              "' needs exactly one symbolic dimension after the batch (the "
              "cached length); compile the model without binding it";
      return std::nullopt;
    }
    if (!loom_tensor_desc_is_dynamic(
            loom_engine_output(engine, 0, slot.output))) {
      error = "output '" + present + "' must have a symbolic length";
      return std::nullopt;
    }
    io.cache.push_back(slot);
  }
  if (io.inputIds < 0) {
    error = "the engine has no input 'input_ids'";
    return std::nullopt;
  }
  size_t kept = llvm::count_if(
      io.cache, [](const CacheSlot &slot) { return slot.output < 0; });
  if ((kept > 0) != io.inPlace() || (kept > 0 && kept != io.cache.size())) {
    error = "the cache inputs are neither all kept in place with a "
            "cache_length input (loomc --kv-cache) nor all paired with "
            "present outputs";
    return std::nullopt;
  }
  io.logits = outputNamed("logits");
  if (io.logits < 0) {
    error = "the engine has no output 'logits'";
    return std::nullopt;
  }
  const loom_tensor_desc &logits = *loom_engine_output(engine, 0, io.logits);
  if (logits.dtype != LOOM_DTYPE_F32 || logits.rank != 3) {
    error = "output 'logits' must be f32 [batch, length, vocabulary]";
    return std::nullopt;
  }
  for (int32_t i : {io.inputIds, io.attentionMask, io.positionIds}) {
    if (i < 0)
      continue;
    const loom_tensor_desc &d = *loom_engine_input(engine, 0, i);
    if (d.dims[1] != LOOM_DYNAMIC_DIM) {
      error = std::string("input '") + d.name +
              "' needs a symbolic length; compile the model without "
              "binding it";
      return std::nullopt;
    }
  }
  return io;
}

double percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  size_t i = static_cast<size_t>(p / 100.0 * (values.size() - 1) + 0.5);
  return values[std::min(i, values.size() - 1)];
}

/// The engine's buffers of one call: inputs with their shapes (the same
/// for every rank), outputs either in caller memory (static) or returned
/// by the runtime (symbolic), one set per rank. A partitioned engine's
/// ranks all return the whole outputs; rank 0's drive the generation.
class DecoderCall {
public:
  /// With `comm` (under mpirun), this process runs the communicator's
  /// rank alone, and only that rank's outputs are filled.
  DecoderCall(loom_engine *engine, loom_comm *comm)
      : engine(engine), comm(comm), numRanks(loom_engine_num_ranks(engine)),
        ownRank(comm ? loom_comm_rank(comm) : 0) {
    int32_t numInputs = loom_engine_num_inputs(engine, 0);
    int32_t numOutputs = loom_engine_num_outputs(engine, 0);
    shaped.resize(numInputs);
    inputPointers.resize(numInputs);
    dynamicOutputs.assign(numRanks, std::vector<loom_dynamic_output>(
                                        numOutputs, loom_dynamic_output{}));
    staticOutputs.assign(numRanks, std::vector<std::vector<char>>(numOutputs));
    outputPointers.assign(numRanks, std::vector<void *>(numOutputs));
    for (int32_t r = 0; r < numRanks; ++r)
      for (int32_t i = 0; i < numOutputs; ++i) {
        const loom_tensor_desc *d = loom_engine_output(engine, r, i);
        if (loom_tensor_desc_is_dynamic(d)) {
          outputPointers[r][i] = &dynamicOutputs[r][i];
        } else {
          staticOutputs[r][i].resize(d->byte_size);
          outputPointers[r][i] = staticOutputs[r][i].data();
        }
      }
  }
  DecoderCall(const DecoderCall &) = delete;
  DecoderCall &operator=(const DecoderCall &) = delete;
  ~DecoderCall() { releaseOutputs(); }

  /// Sets input `i` to `data` with `shape`.
  void setInput(int32_t i, const void *data, llvm::ArrayRef<int64_t> shape) {
    loom_shaped_input &s = shaped[i];
    s.data = data;
    s.rank = static_cast<int32_t>(shape.size());
    llvm::copy(shape, s.dims);
    inputPointers[i] =
        loom_tensor_desc_is_dynamic(loom_engine_input(engine, 0, i))
            ? static_cast<const void *>(&s)
            : data;
  }

  /// Runs the call; with `session`, on its state (whose inputs are not
  /// set here).
  loom_status execute(loom_session *session = nullptr) {
    if (comm)
      return session
                 ? loom_session_execute_on(session, comm, inputPointers.data(),
                                           outputPointers[ownRank].data())
                 : loom_engine_execute_on(engine, comm, inputPointers.data(),
                                          outputPointers[ownRank].data());
    if (numRanks == 1)
      return session ? loom_session_execute(session, inputPointers.data(),
                                            outputPointers[0].data())
                     : loom_engine_execute(engine, 0, inputPointers.data(),
                                           outputPointers[0].data());
    std::vector<const void *const *> rankInputs(numRanks, inputPointers.data());
    std::vector<void *const *> rankOutputs;
    for (std::vector<void *> &pointers : outputPointers)
      rankOutputs.push_back(pointers.data());
    return session ? loom_session_execute_ranks(session, rankInputs.data(),
                                                rankOutputs.data(), nullptr)
                   : loom_engine_execute_ranks(engine, rankInputs.data(),
                                               rankOutputs.data(), nullptr);
  }

  int32_t ranks() const { return numRanks; }
  /// The ranks whose outputs a call fills: every rank in-process, this
  /// process's rank under mpirun.
  bool fills(int32_t rank) const { return !comm || rank == ownRank; }

  /// Output `i`'s data, shape and size in bytes, of `rank` (by default the
  /// first rank this process runs).
  const void *outputData(int32_t i, int32_t rank = kOwn) const {
    rank = resolve(rank);
    return loom_tensor_desc_is_dynamic(loom_engine_output(engine, rank, i))
               ? dynamicOutputs[rank][i].data
               : staticOutputs[rank][i].data();
  }
  llvm::ArrayRef<int64_t> outputShape(int32_t i, int32_t rank = kOwn) const {
    rank = resolve(rank);
    const loom_tensor_desc *d = loom_engine_output(engine, rank, i);
    if (loom_tensor_desc_is_dynamic(d))
      return llvm::ArrayRef<int64_t>(dynamicOutputs[rank][i].dims,
                                     dynamicOutputs[rank][i].rank);
    return llvm::ArrayRef<int64_t>(d->dims, d->rank);
  }
  size_t outputBytes(int32_t i, int32_t rank = kOwn) const {
    rank = resolve(rank);
    const loom_tensor_desc *d = loom_engine_output(engine, rank, i);
    return loom_tensor_desc_is_dynamic(d) ? dynamicOutputs[rank][i].byte_size
                                          : d->byte_size;
  }

  /// Frees the outputs the runtime allocated in the last call.
  void releaseOutputs() {
    for (std::vector<loom_dynamic_output> &outputs : dynamicOutputs)
      for (loom_dynamic_output &output : outputs) {
        loom_buffer_free(output.data);
        output = loom_dynamic_output{};
      }
  }

private:
  /// The default rank of the output accessors: this process's own.
  static constexpr int32_t kOwn = -1;
  int32_t resolve(int32_t rank) const { return rank == kOwn ? ownRank : rank; }

  loom_engine *engine;
  loom_comm *comm;
  int32_t numRanks, ownRank;
  std::vector<loom_shaped_input> shaped;
  std::vector<const void *> inputPointers;
  std::vector<std::vector<loom_dynamic_output>> dynamicOutputs;
  std::vector<std::vector<std::vector<char>>> staticOutputs;
  std::vector<std::vector<void *>> outputPointers;
};

} // namespace

int runGenerate(const RunOptions &options) {
  if (options.promptIds.empty()) {
    printError("give the prompt with --prompt-ids (comma-separated ids)");
    return 1;
  }
  runner::EnginePtr engine = runner::loadEngine(options);
  if (!engine)
    return 1;
  loom_engine *raw = engine.get();
  int32_t numRanks = loom_engine_num_ranks(raw);
  // Under mpirun (--mpi): this process runs one rank, with its share of a
  // cache kept in place, and its collectives on MPI.
  runner::CommPtr comm(nullptr, loom_comm_free);
  if (!runner::openMpiCommunicator(options, numRanks, comm))
    return 1;
  if (options.ranks == 0 && numRanks != 1 && !comm) {
    printError("the engine has " + std::to_string(numRanks) +
               " ranks: run it with --ranks " + std::to_string(numRanks) +
               " (or one process per rank under mpirun with --mpi)");
    return 1;
  }
  if (options.ranks > 0 && options.ranks != numRanks) {
    printError("--ranks " + std::to_string(options.ranks) +
               " given, but the engine was compiled for " +
               std::to_string(numRanks) + " ranks");
    return 1;
  }
  std::string error;
  std::optional<DecoderInterface> io = findInterface(raw, error);
  if (!io) {
    printError(error + " (" + options.model + ")");
    return 1;
  }
  // Two sets of buffers, alternating: one step's present tensors are the
  // next step's past, so they must outlive the next call. The ranks of a
  // partitioned engine run in-process, each on the whole inputs.
  DecoderCall calls[2] = {DecoderCall(raw, comm.get()),
                          DecoderCall(raw, comm.get())};

  // The empty cache of the prefill: its length 0, the batch 1, other
  // dimensions as the engine states them. Zero elements, but a valid
  // pointer. A cache kept in place lives in a session of the runtime, at
  // its capacity, allocated once (a partitioned engine's ranks each keep
  // their share: with tensor parallelism, their heads).
  static const char emptyCache[1] = {0};
  std::vector<std::vector<int64_t>> cacheShapes;
  loom_session *rawSession = nullptr;
  if (io->inPlace()) {
    // Under mpirun each process holds its own rank's share alone.
    loom_status status =
        comm ? loom_session_create_on(raw, comm.get(), /*batch=*/1, &rawSession)
             : loom_session_create(raw, /*batch=*/1, &rawSession);
    if (status) {
      printError(runtimeError(status));
      return 1;
    }
  }
  std::unique_ptr<loom_session, void (*)(loom_session *)> session(
      rawSession, loom_session_free);
  int64_t capacity = 0;
  for (const CacheSlot &slot : io->cache) {
    const loom_tensor_desc &d = *loom_engine_input(raw, 0, slot.input);
    std::vector<int64_t> shape(d.dims, d.dims + d.rank);
    if (shape[0] == LOOM_DYNAMIC_DIM)
      shape[0] = 1;
    // A cache kept in place: the session has its shape; the prefill's
    // empty cache is for the others.
    if (io->inPlace()) {
      capacity = shape[slot.lengthAxis];
      continue;
    }
    shape[slot.lengthAxis] = 0;
    for (int64_t size : shape)
      if (size == LOOM_DYNAMIC_DIM) {
        printError(std::string("input '") + d.name +
                   "' has a symbolic dimension that is neither the batch "
                   "nor the cached length");
        return 1;
      }
    cacheShapes.push_back(std::move(shape));
  }
  // Where the session keeps each rank's caches: the code must write there,
  // and nowhere else, on every step.
  std::vector<std::vector<const void *>> cacheAddresses(numRanks);
  for (int32_t r = 0; r < numRanks; ++r)
    for (const CacheSlot &slot : io->inPlace()
                                     ? llvm::ArrayRef<CacheSlot>(io->cache)
                                     : llvm::ArrayRef<CacheSlot>())
      cacheAddresses[r].push_back(
          loom_session_rank_state(session.get(), r, slot.input, nullptr));

  int64_t needed = static_cast<int64_t>(options.promptIds.size()) +
                   options.generateTokens - 1;
  if (io->inPlace() && needed > capacity) {
    printError("the engine's cache holds " + std::to_string(capacity) +
               " positions; a " + std::to_string(options.promptIds.size()) +
               "-token prompt and " + std::to_string(options.generateTokens) +
               " generated tokens need " + std::to_string(needed) +
               " (compile with a larger loomc --kv-cache)");
    return 1;
  }

  auto generateOnce = [&](std::vector<int64_t> &generated,
                          std::vector<double> &stepMs) -> bool {
    generated.clear();
    stepMs.clear();
    if (session)
      loom_session_reset(session.get());
    std::vector<int64_t> ids(options.promptIds);
    std::vector<int64_t> mask, positions;
    int64_t past = 0;
    for (int64_t step = 0; step < options.generateTokens; ++step) {
      DecoderCall &call = calls[step % 2];
      DecoderCall &previous = calls[(step + 1) % 2];
      int64_t length = static_cast<int64_t>(ids.size());
      call.setInput(io->inputIds, ids.data(), {1, length});
      if (io->attentionMask >= 0) {
        mask.assign(past + length, 1);
        call.setInput(io->attentionMask, mask.data(), {1, past + length});
      }
      if (io->positionIds >= 0) {
        positions.resize(length);
        std::iota(positions.begin(), positions.end(), past);
        call.setInput(io->positionIds, positions.data(), {1, length});
      }
      if (io->inPlace())
        call.setInput(io->cacheLength, &past, {});
      for (auto [k, slot] : llvm::enumerate(io->cache)) {
        if (io->inPlace())
          continue; // the session's

        if (step == 0) {
          call.setInput(slot.input, emptyCache, cacheShapes[k]);
          continue;
        }
        call.setInput(slot.input, previous.outputData(slot.output),
                      previous.outputShape(slot.output));
      }
      call.releaseOutputs();
      Clock::time_point start = Clock::now();
      if (loom_status status = call.execute(session.get())) {
        printError("step " + std::to_string(step) + ": " +
                   runtimeError(status));
        return false;
      }
      stepMs.push_back(
          std::chrono::duration<double, std::milli>(Clock::now() - start)
              .count());
      // The vocabulary may be symbolic too: the call's shape says it.
      llvm::ArrayRef<int64_t> logitsShape = call.outputShape(io->logits);
      int64_t vocabulary = logitsShape.size() == 3 ? logitsShape[2] : 0;
      if (logitsShape.size() != 3 || logitsShape[0] != 1 ||
          logitsShape[1] != length || vocabulary <= 0) {
        printError("step " + std::to_string(step) +
                   ": the logits do not have the shape [1, " +
                   std::to_string(length) + ", vocabulary]");
        return false;
      }
      // Greedy: the most likely next token after the last position.
      const float *last =
          static_cast<const float *>(call.outputData(io->logits)) +
          (length - 1) * vocabulary;
      int64_t next = std::max_element(last, last + vocabulary) - last;
      // Every rank must have chosen the same token (under mpirun, each
      // process checks its own rank against --expected-ids).
      for (int32_t r = 1; r < call.ranks() && !comm; ++r) {
        const float *rankLast =
            static_cast<const float *>(call.outputData(io->logits, r)) +
            (length - 1) * vocabulary;
        int64_t rankNext =
            std::max_element(rankLast, rankLast + vocabulary) - rankLast;
        if (call.outputShape(io->logits, r) != logitsShape ||
            rankNext != next) {
          printError("step " + std::to_string(step) + ": rank " +
                     std::to_string(r) + " chose token " +
                     std::to_string(rankNext) + ", rank 0 " +
                     std::to_string(next));
          return false;
        }
      }
      generated.push_back(next);
      past += length;
      for (const CacheSlot &slot : io->inPlace()
                                       ? llvm::ArrayRef<CacheSlot>()
                                       : llvm::ArrayRef<CacheSlot>(io->cache))
        if (call.outputShape(slot.output)[slot.lengthAxis] != past) {
          printError("step " + std::to_string(step) + ": output '" +
                     loom_engine_output(raw, 0, slot.output)->name +
                     "' does not hold " + std::to_string(past) +
                     " cached positions");
          return false;
        }
      ids.assign(1, next);
    }
    return true;
  };

  std::vector<int64_t> generated;
  std::vector<double> stepMs;
  // With --benchmark, one untimed generation first (page faults, thread
  // start-up), then the timed one.
  if (options.benchmarkIterations > 0 && !generateOnce(generated, stepMs))
    return 1;
  if (!generateOnce(generated, stepMs))
    return 1;

  llvm::outs() << "generate: " << options.promptIds.size() << " prompt tokens, "
               << generated.size() << " generated (greedy), "
               << io->cache.size() << " cached tensors";
  int32_t ownRank = comm ? loom_comm_rank(comm.get()) : 0;
  if (comm)
    llvm::outs() << ", rank " << ownRank << " of " << numRanks << " (MPI)";
  else if (numRanks > 1)
    llvm::outs() << ", " << numRanks << " ranks (the same tokens on each)";
  llvm::outs() << "\n";
  llvm::outs() << "tokens:";
  for (int64_t id : generated)
    llvm::outs() << " " << id;
  llvm::outs() << "\n";
  // A cache kept in place: every rank's share (rankCacheBytes is this
  // process's first rank's).
  size_t cacheBytes = 0, rankCacheBytes = 0;
  const DecoderCall &last = calls[(options.generateTokens - 1) % 2];
  for (const CacheSlot &slot : io->cache) {
    if (!io->inPlace()) {
      cacheBytes += last.outputBytes(slot.output);
      continue;
    }
    for (int32_t r = 0; r < numRanks; ++r) {
      loom_tensor_desc state{};
      if (!loom_session_rank_state(session.get(), r, slot.input, &state))
        continue;
      cacheBytes += state.byte_size;
      if (r == ownRank)
        rankCacheBytes += state.byte_size;
    }
  }
  llvm::outs() << llvm::format("prefill: %.3f ms (%zu tokens)\n", stepMs[0],
                               options.promptIds.size());
  if (stepMs.size() > 1) {
    std::vector<double> decode(stepMs.begin() + 1, stepMs.end());
    double total = std::accumulate(decode.begin(), decode.end(), 0.0);
    llvm::outs() << llvm::format(
        "decode: %zu steps, per token p50 %.3f ms, p99 %.3f ms; %.1f "
        "tokens/s\n",
        decode.size(), percentile(decode, 50), percentile(decode, 99),
        1000.0 * decode.size() / total);
  }
  if (!io->inPlace()) {
    llvm::outs() << "cache: " << cacheBytes
                 << " bytes after the last step (engine inputs and outputs: "
                    "each step copies it)\n";
  } else {
    // The code must have written only the filled positions, in the
    // session's buffers: every byte at or beyond them is still the zero it
    // was allocated with, and the buffers have not moved.
    bool untouched = true;
    for (int32_t r = 0; r < numRanks; ++r)
      for (auto [k, slot] : llvm::enumerate(io->cache)) {
        loom_tensor_desc state{};
        const char *cache = static_cast<const char *>(
            loom_session_rank_state(session.get(), r, slot.input, &state));
        if (cache != cacheAddresses[r][k]) {
          printError("the session's cache moved");
          return 1;
        }
        if (!cache)
          continue; // another process's rank (under mpirun)
        int64_t outer = 1, inner = loom_dtype_size(state.dtype);
        for (int64_t d = 0; d < slot.lengthAxis; ++d)
          outer *= state.dims[d];
        for (int32_t d = slot.lengthAxis + 1; d < state.rank; ++d)
          inner *= state.dims[d];
        for (int64_t o = 0; o < outer; ++o) {
          const char *row = cache + (o * capacity + needed) * inner;
          untouched &= std::all_of(row, row + (capacity - needed) * inner,
                                   [](char c) { return c == 0; });
        }
      }
    llvm::outs() << "cache: " << cacheBytes << " bytes for " << capacity
                 << " positions";
    if (numRanks > 1)
      llvm::outs() << " (" << rankCacheBytes << " on rank " << ownRank << ")";
    llvm::outs() << ", allocated once by the runtime's session and "
                    "appended to in place; "
                 << needed << " filled, the rest "
                 << (untouched ? "untouched" : "WRITTEN") << "\n";
    if (!untouched) {
      printError("the code wrote cache positions beyond the filled ones");
      return 1;
    }
  }

  if (!options.expectedIds.empty()) {
    for (size_t i = 0; i < options.expectedIds.size(); ++i) {
      if (i >= generated.size()) {
        llvm::outs() << "generated " << generated.size()
                     << " tokens, fewer than the " << options.expectedIds.size()
                     << " expected\n";
        return 1;
      }
      if (generated[i] != options.expectedIds[i]) {
        llvm::outs() << "token " << i << " differs: got " << generated[i]
                     << ", expected " << options.expectedIds[i] << "\n";
        return 1;
      }
    }
    llvm::outs() << "all " << options.expectedIds.size()
                 << " expected tokens match\n";
  }
  return 0;
}

} // namespace loom
