//===- Collectives.h - In-process communicator for ranks --------*- C++ -*-===//
//
// The reference executor runs a program partitioned over a device grid (the
// upstream `shard` dialect) by running one copy of the function per rank, each
// on its own thread of one process. The ranks meet in a Communicator: every
// collective is a rendezvous of the ranks of its group, and shard.send /
// shard.recv pass tensors through per-pair mailboxes.
//
// A broken program must never hang the executor: every wait has a timeout,
// and when one rank fails (or times out) the communicator is poisoned so that
// every other waiting rank returns an error too.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_REFERENCE_COLLECTIVES_H
#define LOOM_REFERENCE_COLLECTIVES_H

#include "loom/Reference/Tensor.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace loom::reference {

/// The ranks of one process and the state they share. Thread-safe: every
/// rank thread calls into it with its own rank number.
class Communicator {
public:
  /// `timeout` bounds every single wait of a rank.
  Communicator(int64_t numRanks, std::chrono::milliseconds timeout);

  int64_t size() const { return numRanks; }
  std::chrono::milliseconds getTimeout() const { return timeout; }

  /// Rendezvous of the ranks of `group` (in in-group order; it contains
  /// `rank`) at collective `opId` (named `opName` in errors). Each rank
  /// contributes one tensor and gets every member's contribution, in group
  /// order, once all have arrived. Successive collectives of one group
  /// match in program order; ranks reaching different ops is an error.
  llvm::Expected<std::shared_ptr<const std::vector<Tensor>>>
  exchange(int64_t rank, llvm::ArrayRef<int64_t> group, const void *opId,
           llvm::StringRef opName, Tensor contribution);

  /// Queues `value` for `dest` and returns at once (buffered send, so that
  /// a ring of sends followed by receives does not deadlock).
  llvm::Error send(int64_t rank, int64_t dest, llvm::StringRef opName,
                   Tensor value);

  /// Waits for the oldest message to `rank` from any of `sources` and
  /// returns its sender and value.
  llvm::Expected<std::pair<int64_t, Tensor>>
  recv(int64_t rank, llvm::ArrayRef<int64_t> sources, llvm::StringRef opName);

  /// Marks the communicator failed because of `rank`; every waiting and later
  /// call returns an error quoting `reason`. The first reason is kept.
  void poison(int64_t rank, const std::string &reason);
  /// The rank whose failure poisoned the communicator first, if any.
  std::optional<int64_t> getFirstFailedRank() const;

  /// Records that `rank` returned from the function, so that peers waiting
  /// for it fail at once instead of at the timeout.
  void finish(int64_t rank);

  /// Descriptions of messages that were sent but never received.
  std::vector<std::string> getUndeliveredMessages() const;

private:
  struct Slot {
    const void *opId = nullptr;
    std::string opName;
    std::vector<int64_t> group;
    std::vector<std::optional<Tensor>> inputs;
    int64_t arrived = 0;
    /// Set once every member arrived; shared with the members.
    std::shared_ptr<std::vector<Tensor>> result;
  };
  struct Message {
    std::string opName;
    uint64_t sequence;
    Tensor value;
  };

  /// Waits on `cv` until `ready()` or failure. `waitingFor()` names the
  /// ranks still missing (for errors and early failure when they finished).
  llvm::Error waitUntil(std::unique_lock<std::mutex> &lock, int64_t rank,
                        llvm::StringRef opName,
                        llvm::function_ref<bool()> ready,
                        llvm::function_ref<std::vector<int64_t>()> waitingFor);
  llvm::Error poisonedError(llvm::StringRef opName) const;
  /// With the lock held: poisons the communicator because `rank` found
  /// `what` ("timed out ...") and returns that error to the rank.
  llvm::Error fail(int64_t rank, const std::string &what);

  const int64_t numRanks;
  const std::chrono::milliseconds timeout;

  mutable std::mutex mutex;
  std::condition_variable cv;
  std::optional<int64_t> failedRank;
  std::string failure;
  std::vector<bool> finished;
  /// Per rank: how many collectives it joined per group key.
  std::vector<std::map<std::string, uint64_t>> collectiveCounts;
  /// Open rendezvous by group key and sequence number.
  std::map<std::string, std::shared_ptr<Slot>> slots;
  /// Mailboxes by (source, destination).
  std::map<std::pair<int64_t, int64_t>, std::deque<Message>> mailboxes;
  uint64_t nextMessage = 0;
};

/// What a shard kernel running on a rank thread can reach.
struct RankContext {
  Communicator *communicator = nullptr;
  int64_t rank = 0;
};

/// The context of the calling thread, or null outside a rank.
RankContext *getCurrentRankContext();

/// Installs a rank context on the calling thread for its lifetime.
class RankContextScope {
public:
  explicit RankContextScope(RankContext &context);
  ~RankContextScope();
  RankContextScope(const RankContextScope &) = delete;
  RankContextScope &operator=(const RankContextScope &) = delete;

private:
  RankContext *previous;
};

} // namespace loom::reference

#endif // LOOM_REFERENCE_COLLECTIVES_H
