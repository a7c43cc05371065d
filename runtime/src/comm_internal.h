//===- comm_internal.h - The communicator interface inside ------*- C++ -*-===//

#ifndef LOOM_RUNTIME_SRC_COMM_INTERNAL_H
#define LOOM_RUNTIME_SRC_COMM_INTERNAL_H

#include "loom/comm.h"

#include <chrono>
#include <string>

/// Each implementation (local, MPI) derives from this; the C API
/// dispatches to it.
struct loom_comm {
  virtual ~loom_comm() = default;
  virtual int32_t rank() const = 0;
  virtual int32_t size() const = 0;
  virtual loom_status allReduce(const void *send, void *recv, size_t count,
                                loom_dtype dtype, loom_reduce_op op) = 0;
  virtual loom_status allGather(const void *send, void *recv, size_t bytes) = 0;
  virtual loom_status allToAll(const void *send, void *recv, size_t bytes) = 0;
  virtual loom_status broadcast(void *buffer, size_t bytes, int32_t root) = 0;
  virtual loom_status send(const void *data, size_t bytes, int32_t dest) = 0;
  virtual loom_status recv(void *data, size_t bytes, int32_t source) = 0;
  virtual loom_status barrier() = 0;
  virtual void abort(const char *reason) = 0;
};

namespace loom::runtime {

/// Records `message` as this thread's last error and returns `status`.
loom_status setError(loom_status status, const std::string &message);

/// The timeout of `options` (null: the defaults) as a duration; an
/// invalid-argument status when it is not positive.
loom_status resolveTimeout(const loom_comm_options *options,
                           std::chrono::milliseconds &timeout);

/// Wraps the handle of the rank LOOM_COMM_FAULT names (comm_fault.cpp)
/// among `comms[0..count)` so that it fails at the chosen call; does nothing
/// when the variable is unset. A malformed value frees the handles and
/// returns an invalid-argument status naming it.
loom_status injectFaults(std::chrono::milliseconds timeout, loom_comm **comms,
                         int32_t count);

/// Element size of the dtypes reductions support, 0 for the others.
size_t reducibleSize(loom_dtype dtype);

/// acc[i] = acc[i] (op) x[i] for `count` elements of `dtype`.
void reduceInto(void *acc, const void *x, size_t count, loom_dtype dtype,
                loom_reduce_op op);

const char *reduceOpName(loom_reduce_op op);

} // namespace loom::runtime

#endif // LOOM_RUNTIME_SRC_COMM_INTERNAL_H
