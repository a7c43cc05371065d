//===- collectives.cpp - Collectives called by compiled code --------------===//
//
// The functions of loom/abi/collectives.h act on the communicator installed
// for the calling thread (CollectiveScope). Compiled code has no error
// path, so the first failure is kept in the thread's state, later
// collectives of the same call return at once, and the runtime reports the
// failure when the code returns.
//
//===----------------------------------------------------------------------===//

#include "collectives_internal.h"

#include "loom/abi/collectives.h"


using loom::runtime::setError;

namespace {

struct ThreadState {
  loom_comm *comm = nullptr;
  bool failed = false;
  std::string message;
};

thread_local ThreadState state;

void record(loom_status status) {
  if (status == LOOM_OK || state.failed)
    return;
  state.failed = true;
  state.message = loom_last_error();
}

} // namespace

namespace loom::runtime {

CollectiveScope::CollectiveScope(loom_comm *comm) {
  state = ThreadState();
  state.comm = comm;
}

CollectiveScope::~CollectiveScope() { state = ThreadState(); }

loom_status CollectiveScope::status() const {
  if (!state.failed)
    return LOOM_OK;
  return setError(LOOM_ERROR_RANK_FAILED, state.message);
}

} // namespace loom::runtime

extern "C" {

void loom_rt_all_reduce(int64_t in, int64_t out, int64_t count, int32_t dtype,
                        int32_t op) {
  if (state.failed)
    return;
  if (!state.comm)
    return record(setError(LOOM_ERROR_INVALID_ARGUMENT,
                           "the code called all_reduce without a "
                           "communicator"));
  record(loom_comm_all_reduce(state.comm, reinterpret_cast<const void *>(in),
                              reinterpret_cast<void *>(out), size_t(count),
                              loom_dtype(dtype), loom_reduce_op(op)));
}

void loom_rt_all_to_all(int64_t in, int64_t out, int64_t bytes) {
  if (state.failed)
    return;
  if (!state.comm)
    return record(setError(LOOM_ERROR_INVALID_ARGUMENT,
                           "the code called all_to_all without a "
                           "communicator"));
  record(loom_comm_all_to_all(state.comm, reinterpret_cast<const void *>(in),
                              reinterpret_cast<void *>(out), size_t(bytes)));
}

void loom_rt_all_gather(int64_t in, int64_t out, int64_t bytes) {
  if (state.failed)
    return;
  if (!state.comm)
    return record(setError(LOOM_ERROR_INVALID_ARGUMENT,
                           "the code called all_gather without a "
                           "communicator"));
  record(loom_comm_all_gather(state.comm, reinterpret_cast<const void *>(in),
                              reinterpret_cast<void *>(out), size_t(bytes)));
}

} // extern "C"
