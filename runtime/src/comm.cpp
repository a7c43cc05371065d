//===- comm.cpp - The communicator C API and the in-process ranks ---------===//
//
// In-process ranks meet at numbered rendezvous: the n-th collective call of
// every rank is collective n. Each rank publishes a pointer to its
// contribution, waits until all have, computes its own result from the
// peers' buffers, and waits again until all have read them (so no buffer is
// reused while a peer still reads it). Messages are copied into per-pair
// mailboxes. Every wait is bounded; a timeout or an abort poisons the
// group, and every rank then fails.
//
//===----------------------------------------------------------------------===//

#include "comm_internal.h"

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

using loom::runtime::setError;

namespace loom::runtime {

size_t reducibleSize(loom_dtype dtype) {
  switch (dtype) {
  case LOOM_DTYPE_F32:
  case LOOM_DTYPE_I32:
    return 4;
  case LOOM_DTYPE_F64:
  case LOOM_DTYPE_I64:
    return 8;
  default:
    return 0;
  }
}

template <typename T>
static void reduceTyped(T *acc, const T *x, size_t count, loom_reduce_op op) {
  for (size_t i = 0; i < count; ++i) {
    switch (op) {
    case LOOM_REDUCE_SUM:
      acc[i] += x[i];
      break;
    case LOOM_REDUCE_PROD:
      acc[i] *= x[i];
      break;
    case LOOM_REDUCE_MAX:
      acc[i] = acc[i] < x[i] ? x[i] : acc[i];
      break;
    case LOOM_REDUCE_MIN:
      acc[i] = x[i] < acc[i] ? x[i] : acc[i];
      break;
    case LOOM_REDUCE_OP_MAX_ENUM: // refused by loom_comm_all_reduce
      break;
    }
  }
}

void reduceInto(void *acc, const void *x, size_t count, loom_dtype dtype,
                loom_reduce_op op) {
  switch (dtype) {
  case LOOM_DTYPE_F32:
    return reduceTyped(static_cast<float *>(acc), static_cast<const float *>(x),
                       count, op);
  case LOOM_DTYPE_F64:
    return reduceTyped(static_cast<double *>(acc),
                       static_cast<const double *>(x), count, op);
  case LOOM_DTYPE_I32:
    return reduceTyped(static_cast<int32_t *>(acc),
                       static_cast<const int32_t *>(x), count, op);
  case LOOM_DTYPE_I64:
    return reduceTyped(static_cast<int64_t *>(acc),
                       static_cast<const int64_t *>(x), count, op);
  default:
    return;
  }
}

loom_status resolveTimeout(const loom_comm_options *options,
                           std::chrono::milliseconds &timeout) {
  loom_comm_options defaults;
  loom_comm_options_init(&defaults);
  if (!options)
    options = &defaults;
  if (options->timeout_ms <= 0)
    return setError(LOOM_ERROR_INVALID_ARGUMENT, "timeout_ms must be positive");
  timeout = std::chrono::milliseconds(options->timeout_ms);
  return LOOM_OK;
}

const char *reduceOpName(loom_reduce_op op) {
  switch (op) {
  case LOOM_REDUCE_SUM:
    return "sum";
  case LOOM_REDUCE_PROD:
    return "prod";
  case LOOM_REDUCE_MAX:
    return "max";
  case LOOM_REDUCE_MIN:
    return "min";
  case LOOM_REDUCE_OP_MAX_ENUM:
    break;
  }
  return "?";
}

} // namespace loom::runtime

namespace {

using Clock = std::chrono::steady_clock;

/// What the ranks of one in-process group share.
struct LocalGroup {
  explicit LocalGroup(int32_t size, std::chrono::milliseconds timeout)
      : size(size), timeout(timeout), posted(size, nullptr),
        present(size, false) {}

  const int32_t size;
  const std::chrono::milliseconds timeout;
  std::mutex mutex;
  std::condition_variable cv;
  // The rendezvous: collective `generation` collects `arrived` posts, then
  // `departed` ranks that have read them.
  uint64_t generation = 0;
  int32_t arrived = 0, departed = 0;
  std::string opName;
  std::vector<const void *> posted;
  // Which ranks have arrived at the current rendezvous: a timeout names
  // the ones that have not.
  std::vector<bool> present;
  // Poisoned: the first failure, quoted by every later error.
  std::string failure;
  std::map<std::pair<int32_t, int32_t>, std::deque<std::vector<char>>> mail;
};

class LocalComm final : public loom_comm {
public:
  LocalComm(std::shared_ptr<LocalGroup> group, int32_t rank)
      : group(std::move(group)), myRank(rank) {}

  int32_t rank() const override { return myRank; }
  int32_t size() const override { return group->size; }

  loom_status allReduce(const void *send, void *recv, size_t count,
                        loom_dtype dtype, loom_reduce_op op) override {
    size_t element = loom::runtime::reducibleSize(dtype);
    if (!element)
      return setError(LOOM_ERROR_INVALID_ARGUMENT,
                      std::string("all_reduce does not support dtype ") +
                          loom_dtype_name(dtype));
    size_t bytes = count * element;
    // The result is computed into a copy, so that `recv` may be `send`.
    std::vector<char> result(bytes);
    return collective(
        "all_reduce", send,
        [&](const std::vector<const void *> &posts) {
          std::memcpy(result.data(), posts[0], bytes);
          for (int32_t r = 1; r < group->size; ++r)
            loom::runtime::reduceInto(result.data(), posts[r], count, dtype,
                                      op);
        },
        [&] { std::memcpy(recv, result.data(), bytes); });
  }

  loom_status allGather(const void *send, void *recv, size_t bytes) override {
    return collective(
        "all_gather", send, [&](const std::vector<const void *> &posts) {
          for (int32_t r = 0; r < group->size; ++r)
            std::memcpy(static_cast<char *>(recv) + r * bytes, posts[r], bytes);
        });
  }

  loom_status allToAll(const void *send, void *recv, size_t bytes) override {
    // Block r of every rank's contribution, in rank order: the blocks are
    // read while the senders wait, so `recv` must not overlap `send`.
    return collective(
        "all_to_all", send, [&](const std::vector<const void *> &posts) {
          for (int32_t r = 0; r < group->size; ++r)
            std::memcpy(static_cast<char *>(recv) + r * bytes,
                        static_cast<const char *>(posts[r]) + myRank * bytes,
                        bytes);
        });
  }

  loom_status broadcast(void *buffer, size_t bytes, int32_t root) override {
    if (root < 0 || root >= group->size)
      return setError(LOOM_ERROR_INVALID_ARGUMENT, "broadcast root " +
                                                       std::to_string(root) +
                                                       " is out of range");
    std::vector<char> copy(bytes);
    return collective(
        "broadcast", buffer,
        [&](const std::vector<const void *> &posts) {
          std::memcpy(copy.data(), posts[root], bytes);
        },
        [&] { std::memcpy(buffer, copy.data(), bytes); });
  }

  loom_status barrier() override {
    return collective("barrier", nullptr,
                      [](const std::vector<const void *> &) {});
  }

  loom_status send(const void *data, size_t bytes, int32_t dest) override {
    if (dest < 0 || dest >= group->size)
      return setError(LOOM_ERROR_INVALID_ARGUMENT, "send to rank " +
                                                       std::to_string(dest) +
                                                       " is out of range");
    std::lock_guard<std::mutex> lock(group->mutex);
    if (!group->failure.empty())
      return poisoned("send");
    const char *p = static_cast<const char *>(data);
    group->mail[{myRank, dest}].emplace_back(p, p + bytes);
    group->cv.notify_all();
    return LOOM_OK;
  }

  loom_status recv(void *data, size_t bytes, int32_t source) override {
    if (source < 0 || source >= group->size)
      return setError(LOOM_ERROR_INVALID_ARGUMENT, "recv from rank " +
                                                       std::to_string(source) +
                                                       " is out of range");
    std::unique_lock<std::mutex> lock(group->mutex);
    auto &box = group->mail[{source, myRank}];
    if (loom_status s = wait(lock, "recv from rank " + std::to_string(source),
                             [&] { return !box.empty(); }))
      return s;
    std::vector<char> message = std::move(box.front());
    box.pop_front();
    if (message.size() != bytes)
      return setError(LOOM_ERROR_INVALID_ARGUMENT,
                      "rank " + std::to_string(myRank) + " expected " +
                          std::to_string(bytes) + " bytes from rank " +
                          std::to_string(source) + ", got " +
                          std::to_string(message.size()));
    std::memcpy(data, message.data(), bytes);
    return LOOM_OK;
  }

  void abort(const char *reason) override {
    std::lock_guard<std::mutex> lock(group->mutex);
    poison("rank " + std::to_string(myRank) +
           " failed: " + (reason ? reason : "aborted"));
  }

private:
  /// With the lock held: the first failure wins.
  void poison(const std::string &why) {
    if (group->failure.empty())
      group->failure = why;
    group->cv.notify_all();
  }

  loom_status poisoned(const std::string &op) {
    return setError(LOOM_ERROR_RANK_FAILED, "rank " + std::to_string(myRank) +
                                                " stopped in " + op + ": " +
                                                group->failure);
  }

  /// Waits until `ready()`, the group is poisoned, or the timeout; a
  /// timeout's message ends with `waitingFor()`.
  template <typename Ready, typename WaitingFor>
  loom_status wait(std::unique_lock<std::mutex> &lock, const std::string &op,
                   Ready ready, WaitingFor waitingFor) {
    Clock::time_point deadline = Clock::now() + group->timeout;
    while (!ready()) {
      if (!group->failure.empty())
        return poisoned(op);
      if (group->cv.wait_until(lock, deadline) == std::cv_status::timeout &&
          !ready()) {
        poison("rank " + std::to_string(myRank) + " timed out after " +
               std::to_string(group->timeout.count()) + " ms in " + op +
               waitingFor());
        return poisoned(op);
      }
    }
    return LOOM_OK;
  }

  template <typename Ready>
  loom_status wait(std::unique_lock<std::mutex> &lock, const std::string &op,
                   Ready ready) {
    return wait(lock, op, ready, [] { return std::string(); });
  }

  /// " (waiting for rank 1, 3)": the ranks that have not arrived at the
  /// current rendezvous.
  std::string absentRanks() const {
    std::string list;
    for (int32_t r = 0; r < group->size; ++r)
      if (!group->present[r])
        list += (list.empty() ? "" : ", ") + std::to_string(r);
    return list.empty() ? "" : " (waiting for rank " + list + ")";
  }

  /// One rendezvous: post `mine`, run `compute` on everyone's posts, wait
  /// until all have computed, then run `finish` (which may overwrite the
  /// posted buffer).
  template <typename Compute, typename Finish>
  loom_status collective(const char *name, const void *mine, Compute compute,
                         Finish finish) {
    std::unique_lock<std::mutex> lock(group->mutex);
    if (!group->failure.empty())
      return poisoned(name);
    // Wait for the previous collective's readers to leave.
    if (loom_status s = wait(lock, name, [&] { return group->departed == 0; }))
      return s;
    if (group->arrived == 0)
      group->opName = name;
    else if (group->opName != name) {
      poison("rank " + std::to_string(myRank) + " called " + name +
             " while its peers are in " + group->opName);
      return poisoned(name);
    }
    uint64_t generation = group->generation;
    group->posted[myRank] = mine;
    group->present[myRank] = true;
    if (++group->arrived == group->size)
      group->cv.notify_all();
    if (loom_status s = wait(
            lock, name,
            [&] {
              return group->arrived == group->size ||
                     group->generation != generation;
            },
            [&] { return absentRanks(); }))
      return s;
    compute(group->posted);
    if (++group->departed == group->size) {
      group->arrived = 0;
      group->departed = 0;
      group->present.assign(group->size, false);
      ++group->generation;
      group->cv.notify_all();
    } else if (loom_status s = wait(lock, name, [&] {
                 return group->generation != generation;
               })) {
      return s;
    }
    lock.unlock();
    finish();
    return LOOM_OK;
  }

  template <typename Compute>
  loom_status collective(const char *name, const void *mine, Compute compute) {
    return collective(name, mine, compute, [] {});
  }

  std::shared_ptr<LocalGroup> group;
  int32_t myRank;
};

} // namespace

extern "C" {

void loom_comm_options_init(loom_comm_options *options) {
  options->timeout_ms = 30000;
}

loom_status loom_comm_create_local(int32_t size,
                                   const loom_comm_options *options,
                                   loom_comm **comms) {
  if (size < 1 || !comms)
    return setError(LOOM_ERROR_INVALID_ARGUMENT,
                    "a local communicator needs at least one rank and an "
                    "array for the handles");
  std::chrono::milliseconds timeout;
  if (loom_status s = loom::runtime::resolveTimeout(options, timeout))
    return s;
  auto group = std::make_shared<LocalGroup>(size, timeout);
  for (int32_t r = 0; r < size; ++r)
    comms[r] = new LocalComm(group, r);
  return loom::runtime::injectFaults(timeout, comms, size);
}

int32_t loom_comm_rank(const loom_comm *comm) { return comm->rank(); }
int32_t loom_comm_size(const loom_comm *comm) { return comm->size(); }

#define LOOM_CHECK_COMM(comm)                                                  \
  if (!(comm))                                                                 \
    return setError(LOOM_ERROR_INVALID_ARGUMENT, "null communicator");

loom_status loom_comm_all_reduce(loom_comm *comm, const void *send, void *recv,
                                 size_t count, loom_dtype dtype,
                                 loom_reduce_op op) {
  LOOM_CHECK_COMM(comm)
  if (op < LOOM_REDUCE_SUM || op > LOOM_REDUCE_MIN)
    return setError(LOOM_ERROR_INVALID_ARGUMENT,
                    "unknown reduction " + std::to_string(int(op)));
  return comm->allReduce(send, recv, count, dtype, op);
}

loom_status loom_comm_all_gather(loom_comm *comm, const void *send, void *recv,
                                 size_t bytes) {
  LOOM_CHECK_COMM(comm)
  return comm->allGather(send, recv, bytes);
}

loom_status loom_comm_all_to_all(loom_comm *comm, const void *send, void *recv,
                                 size_t bytes) {
  LOOM_CHECK_COMM(comm)
  if (send == recv && bytes > 0)
    return setError(LOOM_ERROR_INVALID_ARGUMENT,
                    "all_to_all needs separate send and receive buffers");
  return comm->allToAll(send, recv, bytes);
}

loom_status loom_comm_broadcast(loom_comm *comm, void *buffer, size_t bytes,
                                int32_t root) {
  LOOM_CHECK_COMM(comm)
  return comm->broadcast(buffer, bytes, root);
}

loom_status loom_comm_send(loom_comm *comm, const void *data, size_t bytes,
                           int32_t dest) {
  LOOM_CHECK_COMM(comm)
  return comm->send(data, bytes, dest);
}

loom_status loom_comm_recv(loom_comm *comm, void *data, size_t bytes,
                           int32_t source) {
  LOOM_CHECK_COMM(comm)
  return comm->recv(data, bytes, source);
}

loom_status loom_comm_barrier(loom_comm *comm) {
  LOOM_CHECK_COMM(comm)
  return comm->barrier();
}

void loom_comm_abort(loom_comm *comm, const char *reason) {
  if (comm)
    comm->abort(reason);
}

void loom_comm_free(loom_comm *comm) { delete comm; }

} // extern "C"
