//===- comm_fault.cpp - Injected rank failures for tests ------------------===//
//
// A rank that dies or hangs mid-collective is the failure a multi-rank
// runtime must survive, and it cannot be provoked from outside at a chosen
// point of a real engine's run. LOOM_COMM_FAULT does it from inside: the
// communicator of the named rank, at its chosen call, fails, exits, is
// killed or stops answering; the tests (test/Runtime/rank-failures.test)
// check that every other rank then ends with an error naming it, within
// the timeout, in threads and under mpirun.
//
//   LOOM_COMM_FAULT="rank=R,op=OP,after=N,action=ACTION"
//     OP      all_reduce | all_gather | all_to_all | broadcast | send | recv
//             | barrier | any (default any)
//     N       how many matching calls succeed first (default 0)
//     ACTION  fail  the rank aborts the group, as a failing kernel does
//             exit  the process exits with status 3 (under mpirun)
//             kill  the process is killed by SIGKILL (under mpirun)
//             hang  the rank stops answering: its peers time out; after
//                   the timeout and 2 s more it returns an error itself,
//                   so that in-process ranks can still be joined
//
// Unset, communicators are returned unwrapped; a malformed value makes
// communicator creation fail with a message naming it.
//
//===----------------------------------------------------------------------===//

#include "comm_internal.h"

#include <csignal>
#include <cstdlib>
#include <memory>
#include <thread>
#include <unistd.h>
#include <vector>

namespace loom::runtime {
namespace {

enum class FaultAction { Fail, Exit, Kill, Hang };

struct FaultSpec {
  int32_t rank = -1;
  std::string op = "any";
  int64_t after = 0;
  FaultAction action = FaultAction::Fail;
};

const char *const kOps[] = {"all_reduce", "all_gather", "all_to_all",
                            "broadcast",  "send",       "recv",
                            "barrier",    "any"};

/// Parses LOOM_COMM_FAULT's value; an error message when it is malformed.
std::string parseFaultSpec(const std::string &text, FaultSpec &spec) {
  bool haveRank = false;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos)
      end = text.size();
    std::string item = text.substr(start, end - start);
    start = end + 1;
    size_t eq = item.find('=');
    if (eq == std::string::npos)
      return "'" + item + "' is not key=value";
    std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    char *rest = nullptr;
    if (key == "rank" || key == "after") {
      long long number = std::strtoll(value.c_str(), &rest, 10);
      if (value.empty() || *rest || number < 0 || number > INT32_MAX)
        return key + " must be a non-negative integer, not '" + value + "'";
      if (key == "rank") {
        spec.rank = static_cast<int32_t>(number);
        haveRank = true;
      } else {
        spec.after = number;
      }
    } else if (key == "op") {
      bool known = false;
      for (const char *op : kOps)
        known |= value == op;
      if (!known)
        return "unknown op '" + value + "'";
      spec.op = value;
    } else if (key == "action") {
      if (value == "fail")
        spec.action = FaultAction::Fail;
      else if (value == "exit")
        spec.action = FaultAction::Exit;
      else if (value == "kill")
        spec.action = FaultAction::Kill;
      else if (value == "hang")
        spec.action = FaultAction::Hang;
      else
        return "unknown action '" + value + "' (fail, exit, kill or hang)";
    } else {
      return "unknown key '" + key + "' (rank, op, after, action)";
    }
  }
  return haveRank ? "" : "rank=R is required";
}

/// Forwards every call to `inner` until the chosen one.
class FaultInjectingComm final : public loom_comm {
public:
  FaultInjectingComm(loom_comm *inner, FaultSpec spec,
                     std::chrono::milliseconds timeout)
      : inner(inner), spec(std::move(spec)), timeout(timeout) {}

  int32_t rank() const override { return inner->rank(); }
  int32_t size() const override { return inner->size(); }

  loom_status allReduce(const void *send, void *recv, size_t count,
                        loom_dtype dtype, loom_reduce_op op) override {
    if (loom_status s = maybeFail("all_reduce"))
      return s;
    return inner->allReduce(send, recv, count, dtype, op);
  }
  loom_status allGather(const void *send, void *recv, size_t bytes) override {
    if (loom_status s = maybeFail("all_gather"))
      return s;
    return inner->allGather(send, recv, bytes);
  }
  loom_status allToAll(const void *send, void *recv, size_t bytes) override {
    if (loom_status s = maybeFail("all_to_all"))
      return s;
    return inner->allToAll(send, recv, bytes);
  }
  loom_status broadcast(void *buffer, size_t bytes, int32_t root) override {
    if (loom_status s = maybeFail("broadcast"))
      return s;
    return inner->broadcast(buffer, bytes, root);
  }
  loom_status send(const void *data, size_t bytes, int32_t dest) override {
    if (loom_status s = maybeFail("send"))
      return s;
    return inner->send(data, bytes, dest);
  }
  loom_status recv(void *data, size_t bytes, int32_t source) override {
    if (loom_status s = maybeFail("recv"))
      return s;
    return inner->recv(data, bytes, source);
  }
  loom_status barrier() override {
    if (loom_status s = maybeFail("barrier"))
      return s;
    return inner->barrier();
  }
  void abort(const char *reason) override { inner->abort(reason); }

private:
  /// LOOM_OK, unless this call is the chosen one.
  loom_status maybeFail(const char *op) {
    if (spec.op != "any" && spec.op != op)
      return LOOM_OK;
    if (calls++ != spec.after)
      return LOOM_OK;
    std::string why = std::string("injected fault (LOOM_COMM_FAULT) in ") + op;
    switch (spec.action) {
    case FaultAction::Fail:
      inner->abort(why.c_str());
      break;
    case FaultAction::Exit:
      _exit(3);
    case FaultAction::Kill:
      std::raise(SIGKILL);
      break;
    case FaultAction::Hang:
      // Under mpirun a peer's timeout ends the job long before this.
      std::this_thread::sleep_for(timeout + std::chrono::seconds(2));
      why = "injected hang (LOOM_COMM_FAULT) in " + std::string(op);
      inner->abort(why.c_str());
      break;
    }
    return setError(LOOM_ERROR_RANK_FAILED,
                    "rank " + std::to_string(rank()) + " failed: " + why);
  }

  std::unique_ptr<loom_comm> inner;
  FaultSpec spec;
  std::chrono::milliseconds timeout;
  int64_t calls = 0;
};

} // namespace

loom_status injectFaults(std::chrono::milliseconds timeout, loom_comm **comms,
                         int32_t count) {
  const char *text = std::getenv("LOOM_COMM_FAULT");
  if (!text || !*text)
    return LOOM_OK;
  FaultSpec spec;
  std::string error = parseFaultSpec(text, spec);
  if (!error.empty()) {
    for (int32_t i = 0; i < count; ++i) {
      delete comms[i];
      comms[i] = nullptr;
    }
    return setError(LOOM_ERROR_INVALID_ARGUMENT,
                    "LOOM_COMM_FAULT='" + std::string(text) + "': " + error);
  }
  for (int32_t i = 0; i < count; ++i)
    if (comms[i]->rank() == spec.rank)
      comms[i] = new FaultInjectingComm(comms[i], spec, timeout);
  return LOOM_OK;
}

} // namespace loom::runtime
