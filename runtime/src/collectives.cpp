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

#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using loom::runtime::setError;

namespace {

struct ThreadState {
  loom_comm *comm = nullptr;
  /// Whether the runtime entered the code (a CollectiveScope is alive).
  bool inScope = false;
  /// Threads the code's kernels may use (loom_load_options::threads).
  int32_t threads = 1;
  bool failed = false;
  /// What the runtime reports: a rank's failure for collectives, the
  /// kernel's own status for a library kernel.
  loom_status failure = LOOM_ERROR_RANK_FAILED;
  std::string message;
  /// Where abandonCall leaves the code, and the code's omp_in_parallel
  /// (setCallEscape).
  std::jmp_buf *escape = nullptr;
  int (*inParallel)() = nullptr;
  /// The call's collectives, when the runtime counts them.
  loom::runtime::CollectiveCounters *counters = nullptr;
};

thread_local ThreadState state;

/// Counts one collective of `kind` (see loom_collective_stats).
void count(loom_collective_kind kind, double bufferBytes, double ringBytes) {
  if (!state.counters)
    return;
  loom_collective_stats &stats = state.counters->kinds[kind];
  ++stats.calls;
  stats.buffer_bytes += uint64_t(bufferBytes);
  stats.ring_bytes_sent += uint64_t(ringBytes);
}

/// A ring's share of a buffer over `n` ranks: (n-1)/n.
double ringShare(int64_t n) { return n > 1 ? double(n - 1) / double(n) : 0.0; }

void record(loom_status status) {
  if (status == LOOM_OK || state.failed)
    return;
  state.failed = true;
  state.message = loom_last_error();
}

} // namespace

namespace loom::runtime {

CollectiveScope::CollectiveScope(loom_comm *comm, int32_t threads,
                                 CollectiveCounters *counters) {
  state = ThreadState();
  state.comm = comm;
  state.inScope = true;
  state.threads = threads;
  if (counters)
    *counters = CollectiveCounters();
  state.counters = counters;
}

CollectiveScope::~CollectiveScope() { state = ThreadState(); }

loom_status CollectiveScope::status() const {
  if (!state.failed)
    return LOOM_OK;
  return setError(state.failure, state.message);
}

bool inCallScope() { return state.inScope; }

int32_t callThreads() { return state.threads; }

bool callFailed() { return state.failed; }

void recordKernelFailure(loom_status status, const std::string &message) {
  if (state.failed)
    return;
  state.failed = true;
  state.failure = status;
  state.message = message;
}

void setCallEscape(std::jmp_buf *escape, int (*inParallel)()) {
  state.escape = escape;
  state.inParallel = inParallel;
}

void abandonCall(const std::string &message) {
  // Leaving a parallel loop would leave its other threads waiting.
  bool parallel = state.inParallel && state.inParallel();
  if (state.escape && state.inScope && !parallel) {
    recordKernelFailure(LOOM_ERROR_INTERNAL, message);
    std::jmp_buf *escape = state.escape;
    state.escape = nullptr;
    std::longjmp(*escape, 1);
  }
  std::fprintf(stderr, "loom runtime: error: %s\n", message.c_str());
  std::fflush(stderr);
  std::_Exit(70);
}

} // namespace loom::runtime

namespace {

/// Whether a collective may run: no earlier failure and a communicator.
bool ready(const char *what) {
  if (state.failed)
    return false;
  if (!state.comm) {
    record(setError(LOOM_ERROR_INVALID_ARGUMENT,
                    std::string("the code called ") + what +
                        " without a communicator"));
    return false;
  }
  return true;
}

} // namespace

extern "C" {

void loom_rt_all_reduce(int64_t in, int64_t out, int64_t count, int32_t dtype,
                        int32_t op) {
  if (!ready("all_reduce"))
    return;
  double bytes =
      double(count) * double(loom::runtime::reducibleSize(loom_dtype(dtype)));
  ::count(LOOM_COLLECTIVE_ALL_REDUCE, bytes,
          2 * ringShare(loom_comm_size(state.comm)) * bytes);
  record(loom_comm_all_reduce(state.comm, reinterpret_cast<const void *>(in),
                              reinterpret_cast<void *>(out), size_t(count),
                              loom_dtype(dtype), loom_reduce_op(op)));
}

void loom_rt_all_to_all(int64_t in, int64_t out, int64_t bytes) {
  if (!ready("all_to_all"))
    return;
  int64_t n = loom_comm_size(state.comm);
  count(LOOM_COLLECTIVE_ALL_TO_ALL, double(bytes) * n,
        ringShare(n) * double(bytes) * n);
  record(loom_comm_all_to_all(state.comm, reinterpret_cast<const void *>(in),
                              reinterpret_cast<void *>(out), size_t(bytes)));
}

void loom_rt_all_gather(int64_t in, int64_t out, int64_t bytes) {
  if (!ready("all_gather"))
    return;
  int64_t n = loom_comm_size(state.comm);
  count(LOOM_COLLECTIVE_ALL_GATHER, double(bytes) * n,
        ringShare(n) * double(bytes) * n);
  record(loom_comm_all_gather(state.comm, reinterpret_cast<const void *>(in),
                              reinterpret_cast<void *>(out), size_t(bytes)));
}

void loom_rt_broadcast(int64_t in, int64_t out, int64_t bytes, int64_t root) {
  if (!ready("broadcast"))
    return;
  count(LOOM_COLLECTIVE_BROADCAST, double(bytes),
        ringShare(loom_comm_size(state.comm)) * double(bytes));
  if (loom_comm_rank(state.comm) == root && in != out)
    std::memcpy(reinterpret_cast<void *>(out),
                reinterpret_cast<const void *>(in), size_t(bytes));
  record(loom_comm_broadcast(state.comm, reinterpret_cast<void *>(out),
                             size_t(bytes), int32_t(root)));
}

void loom_rt_send(int64_t in, int64_t bytes, int64_t destination) {
  if (!ready("send"))
    return;
  count(LOOM_COLLECTIVE_SEND, double(bytes), double(bytes));
  record(loom_comm_send(state.comm, reinterpret_cast<const void *>(in),
                        size_t(bytes), int32_t(destination)));
}

void loom_rt_recv(int64_t out, int64_t bytes, int64_t source) {
  if (!ready("recv"))
    return;
  count(LOOM_COLLECTIVE_RECV, double(bytes), 0.0);
  record(loom_comm_recv(state.comm, reinterpret_cast<void *>(out),
                        size_t(bytes), int32_t(source)));
}

} // extern "C"

namespace {

/// Whether a group collective may run (see ready()), the group it names
/// and this rank's place in it; false (with the error recorded) when this
/// rank is not a member.
bool enterGroup(const char *what, int64_t ranks, int64_t n,
                const int64_t *&members, int64_t &position) {
  if (!ready(what))
    return false;
  members = reinterpret_cast<const int64_t *>(ranks);
  int32_t me = loom_comm_rank(state.comm);
  for (position = 0; position < n; ++position)
    if (members[position] == me)
      return true;
  record(setError(LOOM_ERROR_INTERNAL, std::string("rank ") +
                                           std::to_string(me) + " called " +
                                           what + " for a group it is not in"));
  return false;
}

bool sendTo(const void *data, size_t bytes, int64_t rank) {
  loom_status s = loom_comm_send(state.comm, data, bytes, int32_t(rank));
  record(s);
  return s == LOOM_OK;
}

bool recvFrom(void *data, size_t bytes, int64_t rank) {
  loom_status s = loom_comm_recv(state.comm, data, bytes, int32_t(rank));
  record(s);
  return s == LOOM_OK;
}

} // namespace

extern "C" {

void loom_rt_group_all_reduce(int64_t in, int64_t out, int64_t count,
                              int32_t dtype, int32_t op, int64_t ranks,
                              int64_t n) {
  const int64_t *members;
  int64_t position;
  if (!enterGroup("all_reduce", ranks, n, members, position))
    return;
  size_t element = loom::runtime::reducibleSize(loom_dtype(dtype));
  if (!element)
    return record(setError(LOOM_ERROR_INVALID_ARGUMENT,
                           "all_reduce of an unsupported dtype"));
  size_t bytes = size_t(count) * element;
  ::count(LOOM_COLLECTIVE_ALL_REDUCE, double(bytes),
          2 * ringShare(n) * double(bytes));
  auto *result = reinterpret_cast<char *>(out);
  if (position != 0) {
    // Members send their part to the first one and get the sum back.
    if (sendTo(reinterpret_cast<const void *>(in), bytes, members[0]))
      recvFrom(result, bytes, members[0]);
    return;
  }
  // The first member reduces in group order, then hands out the result.
  std::memcpy(result, reinterpret_cast<const void *>(in), bytes);
  std::vector<char> part(bytes);
  for (int64_t i = 1; i < n; ++i) {
    if (!recvFrom(part.data(), bytes, members[i]))
      return;
    loom::runtime::reduceInto(result, part.data(), size_t(count),
                              loom_dtype(dtype), loom_reduce_op(op));
  }
  for (int64_t i = 1; i < n; ++i)
    if (!sendTo(result, bytes, members[i]))
      return;
}

void loom_rt_group_all_gather(int64_t in, int64_t out, int64_t bytes,
                              int64_t ranks, int64_t n) {
  const int64_t *members;
  int64_t position;
  if (!enterGroup("all_gather", ranks, n, members, position))
    return;
  count(LOOM_COLLECTIVE_ALL_GATHER, double(bytes) * n,
        ringShare(n) * double(bytes) * n);
  auto *result = reinterpret_cast<char *>(out);
  size_t size = size_t(bytes);
  if (position != 0) {
    if (sendTo(reinterpret_cast<const void *>(in), size, members[0]))
      recvFrom(result, size * size_t(n), members[0]);
    return;
  }
  std::memcpy(result, reinterpret_cast<const void *>(in), size);
  for (int64_t i = 1; i < n; ++i)
    if (!recvFrom(result + size * size_t(i), size, members[i]))
      return;
  for (int64_t i = 1; i < n; ++i)
    if (!sendTo(result, size * size_t(n), members[i]))
      return;
}

void loom_rt_group_all_to_all(int64_t in, int64_t out, int64_t bytes,
                              int64_t ranks, int64_t n) {
  const int64_t *members;
  int64_t position;
  if (!enterGroup("all_to_all", ranks, n, members, position))
    return;
  count(LOOM_COLLECTIVE_ALL_TO_ALL, double(bytes) * n,
        ringShare(n) * double(bytes) * n);
  const auto *blocks = reinterpret_cast<const char *>(in);
  auto *result = reinterpret_cast<char *>(out);
  size_t size = size_t(bytes);
  std::memcpy(result + size * size_t(position),
              blocks + size * size_t(position), size);
  // Sends are buffered (loom/comm.h), so all of them go first.
  for (int64_t i = 0; i < n; ++i)
    if (i != position && !sendTo(blocks + size * size_t(i), size, members[i]))
      return;
  for (int64_t i = 0; i < n; ++i)
    if (i != position && !recvFrom(result + size * size_t(i), size, members[i]))
      return;
}

void loom_rt_group_broadcast(int64_t in, int64_t out, int64_t bytes,
                             int64_t root, int64_t ranks, int64_t n) {
  const int64_t *members;
  int64_t position;
  if (!enterGroup("broadcast", ranks, n, members, position))
    return;
  count(LOOM_COLLECTIVE_BROADCAST, double(bytes), ringShare(n) * double(bytes));
  auto *result = reinterpret_cast<char *>(out);
  if (members[position] != root) {
    recvFrom(result, size_t(bytes), root);
    return;
  }
  if (in != out)
    std::memcpy(result, reinterpret_cast<const void *>(in), size_t(bytes));
  for (int64_t i = 0; i < n; ++i)
    if (members[i] != root && !sendTo(result, size_t(bytes), members[i]))
      return;
}

} // extern "C"
