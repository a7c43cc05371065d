//===- session.cpp - State inputs kept by the runtime between calls -------===//
//
// Built on the public API only: a session is the state buffers of one
// engine and the loom_shaped_input records that describe them to
// loom_engine_execute.
//
//===----------------------------------------------------------------------===//

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
    int32_t input = -1;
    loom_tensor_desc shape{};
    void *data = nullptr;
    /// What loom_engine_execute reads for an input with symbolic
    /// dimensions.
    loom_shaped_input shaped{};
    bool dynamic = false;
  };
  std::vector<State> states;
  std::vector<const void *> inputs;

  ~loom_session() {
    for (State &state : states)
      std::free(state.data);
  }
};

using loom::runtime::setError;

extern "C" {

loom_status loom_session_create(loom_engine *engine, int64_t batch,
                                loom_session **session) {
  if (!engine || !session)
    return setError(LOOM_ERROR_INVALID_ARGUMENT,
                    "loom_session_create: null engine or session");
  *session = nullptr;
  if (loom_engine_num_ranks(engine) != 1)
    return setError(LOOM_ERROR_INVALID_ARGUMENT,
                    "loom_session_create: sessions are for single-rank "
                    "engines; this one has " +
                        std::to_string(loom_engine_num_ranks(engine)) +
                        " ranks");
  if (batch < 1)
    return setError(LOOM_ERROR_INVALID_ARGUMENT,
                    "loom_session_create: the batch must be at least 1, got " +
                        std::to_string(batch));
  auto *created = new (std::nothrow) loom_session;
  if (!created)
    return setError(LOOM_ERROR_INTERNAL, "loom_session_create: no memory");
  created->engine = engine;
  int32_t numInputs = loom_engine_num_inputs(engine, 0);
  created->inputs.assign(numInputs, nullptr);
  for (int32_t i = 0; i < numInputs; ++i) {
    if (loom_engine_input_state_axis(engine, 0, i) < 0)
      continue;
    loom_session::State state;
    state.input = i;
    state.shape = *loom_engine_input(engine, 0, i);
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
                          state.shape.name + "'");
    }
    state.shaped.data = state.data;
    state.shaped.rank = state.shape.rank;
    std::memcpy(state.shaped.dims, state.shape.dims, sizeof state.shaped.dims);
    created->states.push_back(state);
  }
  *session = created;
  return LOOM_OK;
}

void loom_session_free(loom_session *session) { delete session; }

loom_status loom_session_execute(loom_session *session,
                                 const void *const *inputs,
                                 void *const *outputs) {
  if (!session || (!inputs && !session->inputs.empty()))
    return setError(LOOM_ERROR_INVALID_ARGUMENT,
                    "loom_session_execute: null session or inputs");
  for (size_t i = 0; i < session->inputs.size(); ++i)
    session->inputs[i] = inputs[i];
  for (const loom_session::State &state : session->states)
    session->inputs[state.input] =
        state.dynamic ? static_cast<const void *>(&state.shaped) : state.data;
  return loom_engine_execute(session->engine, 0, session->inputs.data(),
                             outputs);
}

void loom_session_reset(loom_session *session) {
  if (!session)
    return;
  for (loom_session::State &state : session->states)
    std::memset(state.data, 0, state.shape.byte_size);
}

const void *loom_session_state(const loom_session *session, int32_t index,
                               loom_tensor_desc *shape) {
  if (!session)
    return nullptr;
  for (const loom_session::State &state : session->states)
    if (state.input == index) {
      if (shape)
        *shape = state.shape;
      return state.data;
    }
  return nullptr;
}

} // extern "C"
