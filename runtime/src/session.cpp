//===- session.cpp - State inputs kept by the runtime between calls -------===//
//
// Built on the public API only: a session is the state buffers of one
// engine and the loom_shaped_input records that describe them to
// loom_engine_execute.
//
//===----------------------------------------------------------------------===//

#include "loom/comm.h"
#include "loom/runtime.h"

#include "comm_internal.h"

#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

struct loom_session {
  loom_engine *engine = nullptr;
  struct State {
    int32_t rank = 0;
    int32_t input = -1;
    loom_tensor_desc shape{};
    void *data = nullptr;
    /// What loom_engine_execute reads for an input with symbolic
    /// dimensions.
    loom_shaped_input shaped{};
    bool dynamic = false;
  };
  /// Every rank's states: a partitioned engine's rank holds its share (a
  /// cache split by heads, the rank's heads).
  std::vector<State> states;
  /// The one rank whose states the session holds (loom_session_create_on),
  /// or -1 for every rank.
  int32_t onlyRank = -1;
  /// Per rank, the input pointers handed to the engine.
  std::vector<std::vector<const void *>> inputs;

  ~loom_session() {
    for (State &state : states)
      std::free(state.data);
  }

  /// Rank `rank`'s inputs: the caller's, with the states' entries set.
  const void *const *rankInputs(int32_t rank, const void *const *given) {
    std::vector<const void *> &mine = inputs[rank];
    for (size_t i = 0; i < mine.size(); ++i)
      mine[i] = given[i];
    for (const State &state : states)
      if (state.rank == rank)
        mine[state.input] = state.dynamic
                                ? static_cast<const void *>(&state.shaped)
                                : state.data;
    return mine.data();
  }
};

using loom::runtime::setError;

namespace {

/// A session whose states are those of rank `onlyRank`, or of every rank
/// when it is -1.
loom_status createSession(loom_engine *engine, int64_t batch, int32_t onlyRank,
                          loom_session **session) {
  *session = nullptr;
  if (batch < 1)
    return setError(LOOM_ERROR_INVALID_ARGUMENT,
                    "loom_session_create: the batch must be at least 1, got " +
                        std::to_string(batch));
  auto *created = new (std::nothrow) loom_session;
  if (!created)
    return setError(LOOM_ERROR_INTERNAL, "loom_session_create: no memory");
  created->engine = engine;
  created->onlyRank = onlyRank;
  int32_t numRanks = loom_engine_num_ranks(engine);
  created->inputs.resize(numRanks);
  for (int32_t rank = 0; rank < numRanks; ++rank) {
    if (onlyRank >= 0 && rank != onlyRank)
      continue;
    int32_t numInputs = loom_engine_num_inputs(engine, rank);
    created->inputs[rank].assign(numInputs, nullptr);
    for (int32_t i = 0; i < numInputs; ++i) {
      if (loom_engine_input_state_axis(engine, rank, i) < 0)
        continue;
      loom_session::State state;
      state.rank = rank;
      state.input = i;
      state.shape = *loom_engine_input(engine, rank, i);
      state.dynamic = loom_tensor_desc_is_dynamic(&state.shape);
      size_t bytes = loom_dtype_size(state.shape.dtype);
      for (int32_t d = 0; d < state.shape.rank; ++d) {
        if (state.shape.dims[d] == LOOM_DYNAMIC_DIM)
          state.shape.dims[d] = batch;
        bytes *= static_cast<size_t>(state.shape.dims[d]);
      }
      state.shape.byte_size = bytes;
      // At least one byte: a valid pointer even for an empty state.
      state.data = std::calloc(bytes ? bytes : 1, 1);
      if (!state.data) {
        delete created;
        return setError(LOOM_ERROR_INTERNAL,
                        "loom_session_create: cannot allocate " +
                            std::to_string(bytes) + " bytes for state input '" +
                            state.shape.name + "' of rank " +
                            std::to_string(rank));
      }
      state.shaped.data = state.data;
      state.shaped.rank = state.shape.rank;
      std::memcpy(state.shaped.dims, state.shape.dims,
                  sizeof state.shaped.dims);
      created->states.push_back(state);
    }
  }
  *session = created;
  return LOOM_OK;
}

} // namespace

extern "C" {

loom_status loom_session_create(loom_engine *engine, int64_t batch,
                                loom_session **session) {
  if (!engine || !session)
    return setError(LOOM_ERROR_INVALID_ARGUMENT,
                    "loom_session_create: null engine or session");
  return createSession(engine, batch, -1, session);
}

loom_status loom_session_create_on(loom_engine *engine, loom_comm *comm,
                                   int64_t batch, loom_session **session) {
  if (!engine || !comm || !session)
    return setError(LOOM_ERROR_INVALID_ARGUMENT,
                    "loom_session_create_on: null engine, communicator or "
                    "session");
  if (loom_comm_size(comm) != loom_engine_num_ranks(engine))
    return setError(LOOM_ERROR_INVALID_ARGUMENT,
                    "loom_session_create_on: the communicator has " +
                        std::to_string(loom_comm_size(comm)) +
                        " ranks, the engine " +
                        std::to_string(loom_engine_num_ranks(engine)));
  return createSession(engine, batch, loom_comm_rank(comm), session);
}

void loom_session_free(loom_session *session) { delete session; }

loom_status loom_session_execute(loom_session *session,
                                 const void *const *inputs,
                                 void *const *outputs) {
  if (!session || (!inputs && !session->inputs[0].empty()))
    return setError(LOOM_ERROR_INVALID_ARGUMENT,
                    "loom_session_execute: null session or inputs");
  if (session->inputs.size() != 1)
    return setError(LOOM_ERROR_INVALID_ARGUMENT,
                    "loom_session_execute: the engine has " +
                        std::to_string(session->inputs.size()) +
                        " ranks: run them with loom_session_execute_ranks "
                        "or loom_session_execute_on");
  return loom_engine_execute(session->engine, 0, session->rankInputs(0, inputs),
                             outputs);
}

loom_status loom_session_execute_ranks(loom_session *session,
                                       const void *const *const *inputs,
                                       void *const *const *outputs,
                                       const loom_execute_options *options) {
  if (!session || !inputs || !outputs)
    return setError(LOOM_ERROR_INVALID_ARGUMENT,
                    "loom_session_execute_ranks: null session or buffer "
                    "arrays");
  if (session->onlyRank >= 0)
    return setError(LOOM_ERROR_INVALID_ARGUMENT,
                    "loom_session_execute_ranks: the session holds rank " +
                        std::to_string(session->onlyRank) +
                        "'s state only (loom_session_create_on): run it "
                        "with loom_session_execute_on");
  std::vector<const void *const *> rankInputs;
  for (size_t rank = 0; rank < session->inputs.size(); ++rank) {
    if (!inputs[rank] && !session->inputs[rank].empty())
      return setError(LOOM_ERROR_INVALID_ARGUMENT,
                      "loom_session_execute_ranks: null inputs for rank " +
                          std::to_string(rank));
    rankInputs.push_back(
        session->rankInputs(static_cast<int32_t>(rank), inputs[rank]));
  }
  return loom_engine_execute_ranks(session->engine, rankInputs.data(), outputs,
                                   options);
}

loom_status loom_session_execute_on(loom_session *session, loom_comm *comm,
                                    const void *const *inputs,
                                    void *const *outputs) {
  if (!session || !comm)
    return setError(LOOM_ERROR_INVALID_ARGUMENT,
                    "loom_session_execute_on: null session or communicator");
  int32_t rank = loom_comm_rank(comm);
  if (rank < 0 || static_cast<size_t>(rank) >= session->inputs.size() ||
      loom_comm_size(comm) != static_cast<int32_t>(session->inputs.size()))
    return setError(LOOM_ERROR_INVALID_ARGUMENT,
                    "loom_session_execute_on: the communicator has " +
                        std::to_string(loom_comm_size(comm)) +
                        " ranks, the engine " +
                        std::to_string(session->inputs.size()));
  if (session->onlyRank >= 0 && rank != session->onlyRank)
    return setError(LOOM_ERROR_INVALID_ARGUMENT,
                    "loom_session_execute_on: the session holds rank " +
                        std::to_string(session->onlyRank) +
                        "'s state, the communicator is rank " +
                        std::to_string(rank));
  if (!inputs && !session->inputs[rank].empty())
    return setError(LOOM_ERROR_INVALID_ARGUMENT,
                    "loom_session_execute_on: null inputs");
  return loom_engine_execute_on(session->engine, comm,
                                session->rankInputs(rank, inputs), outputs);
}

void loom_session_reset(loom_session *session) {
  if (!session)
    return;
  for (loom_session::State &state : session->states)
    std::memset(state.data, 0, state.shape.byte_size);
}

const void *loom_session_rank_state(const loom_session *session, int32_t rank,
                                    int32_t index, loom_tensor_desc *shape) {
  if (!session)
    return nullptr;
  for (const loom_session::State &state : session->states)
    if (state.rank == rank && state.input == index) {
      if (shape)
        *shape = state.shape;
      return state.data;
    }
  return nullptr;
}

const void *loom_session_state(const loom_session *session, int32_t index,
                               loom_tensor_desc *shape) {
  return loom_session_rank_state(session, 0, index, shape);
}

} // extern "C"
