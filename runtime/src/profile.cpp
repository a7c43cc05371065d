//===- profile.cpp - Kernel timers that compiled code calls ---------------===//
//
// loom_rt_kernel_begin/end (loom/abi/profile.h) time each kernel of code
// compiled with `loomc --kernel-timers` on the thread that runs the
// rank's entry; the kernels' own parallel loops run inside the pair. The
// thread's current call (its table, the call's and the kernel's start,
// the call's events) is thread-local; only adding to the rank's table
// takes its lock, so concurrent calls of one rank add up correctly.
//
//===----------------------------------------------------------------------===//

#include "profile_internal.h"

#include "loom/abi/profile.h"

#include <chrono>

namespace loom::runtime {
namespace {

using Clock = std::chrono::steady_clock;

struct CurrentCall {
  KernelTable *table = nullptr;
  Clock::time_point callStart;
  Clock::time_point kernelStart;
  std::vector<loom_kernel_event> events;
};

CurrentCall &currentCall() {
  thread_local CurrentCall call;
  return call;
}

uint64_t nanosecondsBetween(Clock::time_point from, Clock::time_point to) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(to - from).count());
}

} // namespace

void KernelTable::clear() {
  std::lock_guard<std::mutex> lock(mutex);
  kernels.clear();
  events.clear();
}

KernelTimerScope::KernelTimerScope(KernelTable &table, bool enabled) {
  CurrentCall &call = currentCall();
  previous = call.table;
  call.table = enabled ? &table : nullptr;
  if (enabled) {
    call.events.clear();
    call.callStart = Clock::now();
  }
}

KernelTimerScope::~KernelTimerScope() {
  CurrentCall &call = currentCall();
  if (call.table) {
    std::lock_guard<std::mutex> lock(call.table->mutex);
    call.table->events.swap(call.events);
  }
  call.table = previous;
}

} // namespace loom::runtime

using namespace loom::runtime;

extern "C" {

void loom_rt_kernel_begin(int64_t) {
  CurrentCall &call = currentCall();
  if (call.table)
    call.kernelStart = Clock::now();
}

void loom_rt_kernel_end(int64_t index, int64_t label, int64_t flops,
                        int64_t bytes) {
  CurrentCall &call = currentCall();
  if (!call.table || index < 0)
    return;
  Clock::time_point end = Clock::now();
  uint64_t duration = nanosecondsBetween(call.kernelStart, end);
  call.events.push_back({static_cast<int32_t>(index),
                         nanosecondsBetween(call.callStart, call.kernelStart),
                         duration});
  KernelTable &table = *call.table;
  std::lock_guard<std::mutex> lock(table.mutex);
  if (table.kernels.size() <= static_cast<size_t>(index))
    table.kernels.resize(index + 1, loom_kernel_time{"", 0, 0, 0, 0});
  loom_kernel_time &kernel = table.kernels[index];
  kernel.label = reinterpret_cast<const char *>(label);
  kernel.calls += 1;
  kernel.nanoseconds += duration;
  kernel.flops = flops;
  kernel.bytes = bytes;
}

} // extern "C"
