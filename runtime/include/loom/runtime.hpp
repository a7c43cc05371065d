//===- runtime.hpp - A thin C++ wrapper of the Loom runtime -----*- C++ -*-===//
//
// The C API (runtime.h) with ownership in types and errors as values:
// `loom::Engine` owns a loaded engine and frees it; every call that can
// fail returns a `loom::Error` (false when all went well), which carries
// the status and the message of loom_last_error(). No exceptions, header
// only, nothing beyond the C API and the standard library.
//
//   loom::Error error;
//   loom::Engine engine = loom::Engine::load("model.engine", error);
//   if (error) { std::cerr << error.message() << "\n"; return 1; }
//   for (const loom_tensor_desc &in : engine.inputs()) ...
//   error = engine.execute({x.data()}, {y.data()});
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_HPP
#define LOOM_RUNTIME_HPP

#include "loom/runtime.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace loom {

/// The outcome of a runtime call: false (no error) or a status and its
/// message.
class Error {
public:
  Error() = default;
  /// The status of a C API call; on failure, the calling thread's
  /// loom_last_error() becomes the message.
  static Error from(loom_status status) {
    Error e;
    e.code = status;
    if (status != LOOM_OK)
      e.text = loom_last_error();
    return e;
  }

  /// An error the wrapper itself finds (before calling the C API).
  static Error make(loom_status status, std::string message) {
    Error e;
    e.code = status;
    e.text = std::move(message);
    return e;
  }

  explicit operator bool() const { return code != LOOM_OK; }
  loom_status status() const { return code; }
  /// "LOOM_ERROR_IO" and the like.
  const char *statusName() const { return loom_status_name(code); }
  const std::string &message() const { return text; }

private:
  loom_status code = LOOM_OK;
  std::string text;
};

namespace detail {

/// Per-rank buffer lists (`in[r]`, `out[r]`) as the C API's arrays of
/// arrays; an error unless there is one list of each for every one of
/// `ranks` ranks.
struct RankBuffers {
  std::vector<const void *const *> inputs;
  std::vector<void *const *> outputs;

  Error collect(const std::vector<std::vector<const void *>> &in,
                const std::vector<std::vector<void *>> &out, int32_t ranks) {
    if (static_cast<int32_t>(in.size()) != ranks ||
        static_cast<int32_t>(out.size()) != ranks)
      return Error::make(LOOM_ERROR_INVALID_ARGUMENT,
                         "one list of buffers per rank is needed (" +
                             std::to_string(ranks) + " ranks)");
    for (int32_t r = 0; r < ranks; ++r) {
      inputs.push_back(in[r].data());
      outputs.push_back(out[r].data());
    }
    return Error();
  }
};

} // namespace detail

/// A loaded engine. Movable, not copyable; frees the engine when destroyed.
class Engine {
public:
  Engine() = default;
  Engine(Engine &&other) noexcept : engine(std::exchange(other.engine, nullptr)) {}
  Engine &operator=(Engine &&other) noexcept {
    if (this != &other) {
      loom_engine_free(engine);
      engine = std::exchange(other.engine, nullptr);
    }
    return *this;
  }
  Engine(const Engine &) = delete;
  Engine &operator=(const Engine &) = delete;
  ~Engine() { loom_engine_free(engine); }

  /// Loads `path` (checked as loom_engine_load documents), with the default
  /// load options unless `options` is given. On failure the engine is empty
  /// and `error` says why.
  static Engine load(const std::string &path, Error &error,
                     const loom_load_options *options = nullptr) {
    Engine result;
    error = Error::from(loom_engine_load(path.c_str(), options, &result.engine));
    if (error)
      result.engine = nullptr;
    return result;
  }

  /// Whether an engine is loaded.
  explicit operator bool() const { return engine != nullptr; }
  /// The C handle, for calls the wrapper does not cover; still owned here.
  loom_engine *get() const { return engine; }

  std::string compilerVersion() const {
    return loom_engine_compiler_version(engine);
  }
  std::string target() const { return loom_engine_target(engine); }
  int32_t numRanks() const { return loom_engine_num_ranks(engine); }
  /// The device grid's sizes (one entry, 1, for a single-device engine).
  std::vector<int64_t> grid() const {
    int32_t rank = 0;
    int64_t dims[LOOM_MAX_RANK] = {};
    loom_engine_grid(engine, &rank, dims);
    return std::vector<int64_t>(dims, dims + rank);
  }
  /// Rank `rank`'s inputs and outputs; the descriptors belong to the
  /// engine.
  std::vector<loom_tensor_desc> inputs(int32_t rank = 0) const {
    std::vector<loom_tensor_desc> result;
    for (int32_t i = 0, n = loom_engine_num_inputs(engine, rank); i < n; ++i)
      result.push_back(*loom_engine_input(engine, rank, i));
    return result;
  }
  std::vector<loom_tensor_desc> outputs(int32_t rank = 0) const {
    std::vector<loom_tensor_desc> result;
    for (int32_t i = 0, n = loom_engine_num_outputs(engine, rank); i < n; ++i)
      result.push_back(*loom_engine_output(engine, rank, i));
    return result;
  }

  /// Runs a single-rank engine (or rank `rank` of one without
  /// collectives). Buffers are the caller's, one per input and output in
  /// order, each of the descriptor's byte size.
  Error execute(const std::vector<const void *> &in,
                const std::vector<void *> &out, int32_t rank = 0) const {
    if (Error e = checkCounts(rank, in.size(), out.size()))
      return e;
    return Error::from(loom_engine_execute(engine, rank, in.data(), out.data()));
  }

  /// Runs every rank on threads of this process with an in-process
  /// communicator: `in[r]` and `out[r]` are rank r's buffers.
  Error executeRanks(const std::vector<std::vector<const void *>> &in,
                     const std::vector<std::vector<void *>> &out,
                     const loom_execute_options *options = nullptr) const {
    detail::RankBuffers buffers;
    if (Error e = buffers.collect(in, out, numRanks()))
      return e;
    for (int32_t r = 0; r < numRanks(); ++r)
      if (Error e = checkCounts(r, in[r].size(), out[r].size()))
        return e;
    return Error::from(loom_engine_execute_ranks(
        engine, buffers.inputs.data(), buffers.outputs.data(), options));
  }

  /// Runs this process's rank with `comm` (e.g. an MPI communicator).
  Error executeOn(loom_comm *comm, const std::vector<const void *> &in,
                  const std::vector<void *> &out) const {
    return Error::from(
        loom_engine_execute_on(engine, comm, in.data(), out.data()));
  }

private:
  static Error invalid(const std::string &message) {
    return Error::make(LOOM_ERROR_INVALID_ARGUMENT, message);
  }
  Error checkCounts(int32_t rank, size_t numIn, size_t numOut) const {
    if (!engine)
      return invalid("no engine is loaded");
    if (static_cast<int32_t>(numIn) != loom_engine_num_inputs(engine, rank) ||
        static_cast<int32_t>(numOut) != loom_engine_num_outputs(engine, rank))
      return invalid("rank " + std::to_string(rank) + " takes " +
                     std::to_string(loom_engine_num_inputs(engine, rank)) +
                     " inputs and " +
                     std::to_string(loom_engine_num_outputs(engine, rank)) +
                     " outputs, got " + std::to_string(numIn) + " and " +
                     std::to_string(numOut));
    return Error();
  }

  loom_engine *engine = nullptr;
};

/// An engine's state inputs (a decoder's key/value cache) kept by the
/// runtime between calls (loom_session_create). Movable, not copyable; the
/// engine must outlive it.
class Session {
public:
  Session() = default;
  Session(Session &&other) noexcept
      : session(std::exchange(other.session, nullptr)), ranks(other.ranks) {}
  Session &operator=(Session &&other) noexcept {
    if (this != &other) {
      loom_session_free(session);
      session = std::exchange(other.session, nullptr);
      ranks = other.ranks;
    }
    return *this;
  }
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;
  ~Session() { loom_session_free(session); }

  /// A session for `engine` with its state's symbolic dimensions (the
  /// batch) set to `batch`; empty, with `error` set, on failure.
  static Session create(const Engine &engine, int64_t batch, Error &error) {
    Session result;
    error =
        Error::from(loom_session_create(engine.get(), batch, &result.session));
    if (error)
      result.session = nullptr;
    result.ranks = engine.numRanks();
    return result;
  }

  explicit operator bool() const { return session != nullptr; }

  /// Runs the engine; entries of state inputs in `in` are ignored.
  Error execute(const std::vector<const void *> &in,
                const std::vector<void *> &out) const {
    return Error::from(loom_session_execute(session, in.data(), out.data()));
  }
  /// A partitioned engine's session: every rank on threads of this
  /// process, `in[r]` and `out[r]` rank r's buffers, each with its state.
  Error executeRanks(const std::vector<std::vector<const void *>> &in,
                     const std::vector<std::vector<void *>> &out,
                     const loom_execute_options *options = nullptr) const {
    detail::RankBuffers buffers;
    if (Error e = buffers.collect(in, out, ranks))
      return e;
    return Error::from(loom_session_execute_ranks(
        session, buffers.inputs.data(), buffers.outputs.data(), options));
  }
  /// A partitioned engine's session: this process's rank with `comm`.
  Error executeOn(loom_comm *comm, const std::vector<const void *> &in,
                  const std::vector<void *> &out) const {
    return Error::from(
        loom_session_execute_on(session, comm, in.data(), out.data()));
  }
  void reset() const { loom_session_reset(session); }
  /// State input `index`'s buffer and shape (of `rank`, for a partitioned
  /// engine); null when it is not state.
  const void *state(int32_t index, loom_tensor_desc *shape = nullptr,
                    int32_t rank = 0) const {
    return loom_session_rank_state(session, rank, index, shape);
  }

private:
  loom_session *session = nullptr;
  int32_t ranks = 1;
};

} // namespace loom

#endif // LOOM_RUNTIME_HPP
