//===- Collectives.cpp - In-process communicator for ranks ----------------===//

#include "loom/Reference/Collectives.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace llvm;

namespace loom::reference {

static thread_local RankContext *currentRankContext = nullptr;

RankContext *getCurrentRankContext() { return currentRankContext; }

RankContextScope::RankContextScope(RankContext &context)
    : previous(currentRankContext) {
  currentRankContext = &context;
}

RankContextScope::~RankContextScope() { currentRankContext = previous; }

/// "0, 2, 3".
static std::string joinRanks(ArrayRef<int64_t> ranks) {
  return join(map_range(ranks, [](int64_t r) { return std::to_string(r); }),
              ", ");
}

static Error makeError(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message);
}

Communicator::Communicator(int64_t numRanks, std::chrono::milliseconds timeout)
    : numRanks(numRanks), timeout(timeout), finished(numRanks, false),
      collectiveCounts(numRanks) {}

Error Communicator::poisonedError(StringRef opName) const {
  return makeError("'" + opName + "' aborted: " + failure);
}

void Communicator::poison(int64_t rank, const std::string &reason) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (failedRank)
      return;
    failedRank = rank;
    failure = reason;
  }
  cv.notify_all();
}

std::optional<int64_t> Communicator::getFirstFailedRank() const {
  std::lock_guard<std::mutex> lock(mutex);
  return failedRank;
}

void Communicator::finish(int64_t rank) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    finished[rank] = true;
  }
  cv.notify_all();
}

Error Communicator::fail(int64_t rank, const std::string &what) {
  failedRank = rank;
  failure = "rank " + std::to_string(rank) + " " + what;
  cv.notify_all();
  return makeError(what);
}

Error Communicator::waitUntil(std::unique_lock<std::mutex> &lock, int64_t rank,
                              StringRef opName, function_ref<bool()> ready,
                              function_ref<std::vector<int64_t>()> waitingFor) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    // A rendezvous that completed counts even if a peer failed since.
    if (ready())
      return Error::success();
    if (failedRank)
      return poisonedError(opName);
    // A peer that returned from the function will never arrive: fail now
    // rather than at the timeout.
    std::vector<int64_t> missing = waitingFor();
    std::vector<int64_t> gone;
    for (int64_t r : missing)
      if (finished[r])
        gone.push_back(r);
    if (!gone.empty())
      return fail(rank, "waits in '" + opName.str() + "' for rank(s) " +
                            joinRanks(gone) +
                            ", which returned without taking part");
    if (cv.wait_until(lock, deadline) == std::cv_status::timeout) {
      if (ready())
        return Error::success();
      if (failedRank)
        return poisonedError(opName);
      return fail(rank, "timed out after " + std::to_string(timeout.count()) +
                            " ms in '" + opName.str() +
                            "' waiting for rank(s) " + joinRanks(waitingFor()) +
                            " (deadlock?)");
    }
  }
}

Expected<std::shared_ptr<const std::vector<Tensor>>>
Communicator::exchange(int64_t rank, ArrayRef<int64_t> group, const void *opId,
                       StringRef opName, Tensor contribution) {
  auto position = find(group, rank);
  if (position == group.end())
    return makeError("rank " + std::to_string(rank) + " is not in the group {" +
                     joinRanks(group) + "} of '" + opName + "'");
  size_t index = position - group.begin();

  std::unique_lock<std::mutex> lock(mutex);
  if (failedRank)
    return poisonedError(opName);
  // The n-th collective of a rank on a group meets the n-th collective of
  // every other member on that group.
  std::string groupKey = joinRanks(group);
  uint64_t sequence = collectiveCounts[rank][groupKey]++;
  std::string key = groupKey + "#" + std::to_string(sequence);
  std::shared_ptr<Slot> &entry = slots[key];
  if (!entry) {
    entry = std::make_shared<Slot>();
    entry->opId = opId;
    entry->opName = opName.str();
    entry->group.assign(group.begin(), group.end());
    entry->inputs.resize(group.size());
  }
  std::shared_ptr<Slot> slot = entry;
  if (slot->opId != opId)
    return fail(rank, "reached '" + opName.str() + "' as collective #" +
                          std::to_string(sequence) + " of ranks {" + groupKey +
                          "}, where another rank reached '" + slot->opName +
                          "'");
  slot->inputs[index] = std::move(contribution);
  if (++slot->arrived == static_cast<int64_t>(group.size())) {
    auto result = std::make_shared<std::vector<Tensor>>();
    for (std::optional<Tensor> &t : slot->inputs)
      result->push_back(std::move(*t));
    slot->result = std::move(result);
    slots.erase(key);
    cv.notify_all();
  }
  if (Error error = waitUntil(
          lock, rank, opName, [&] { return slot->result != nullptr; },
          [&] {
            std::vector<int64_t> missing;
            for (auto [i, r] : enumerate(slot->group))
              if (!slot->inputs[i])
                missing.push_back(r);
            return missing;
          }))
    return std::move(error);
  return std::shared_ptr<const std::vector<Tensor>>(slot->result);
}

Error Communicator::send(int64_t rank, int64_t dest, StringRef opName,
                         Tensor value) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (failedRank)
      return poisonedError(opName);
    mailboxes[{rank, dest}].push_back(
        Message{opName.str(), nextMessage++, std::move(value)});
  }
  cv.notify_all();
  return Error::success();
}

Expected<std::pair<int64_t, Tensor>>
Communicator::recv(int64_t rank, ArrayRef<int64_t> sources, StringRef opName) {
  std::unique_lock<std::mutex> lock(mutex);
  // The oldest pending message from any of the sources.
  auto oldest = [&]() -> std::deque<Message> * {
    std::deque<Message> *best = nullptr;
    for (int64_t source : sources) {
      auto it = mailboxes.find({source, rank});
      if (it == mailboxes.end() || it->second.empty())
        continue;
      if (!best || it->second.front().sequence < best->front().sequence)
        best = &it->second;
    }
    return best;
  };
  if (Error error = waitUntil(
          lock, rank, opName, [&] { return oldest() != nullptr; },
          [&] { return std::vector<int64_t>(sources.begin(), sources.end()); }))
    return std::move(error);
  std::deque<Message> *box = oldest();
  int64_t source = -1;
  for (auto &[pair, queue] : mailboxes)
    if (&queue == box)
      source = pair.first;
  Tensor value = std::move(box->front().value);
  box->pop_front();
  return std::make_pair(source, std::move(value));
}

std::vector<std::string> Communicator::getUndeliveredMessages() const {
  std::lock_guard<std::mutex> lock(mutex);
  std::vector<std::string> result;
  for (const auto &[pair, queue] : mailboxes)
    for (const Message &message : queue)
      result.push_back("'" + message.opName + "' from rank " +
                       std::to_string(pair.first) + " to rank " +
                       std::to_string(pair.second) + " (" +
                       message.value.typeString() + ") was never received");
  return result;
}

} // namespace loom::reference
