//===- profile_internal.h - Kernel timers of a rank's code ------*- C++ -*-===//

#ifndef LOOM_RUNTIME_PROFILE_INTERNAL_H
#define LOOM_RUNTIME_PROFILE_INTERNAL_H

#include "loom/runtime.h"

#include <atomic>
#include <mutex>
#include <vector>

namespace loom::runtime {

/// What code compiled with kernel timers reported for one rank.
struct KernelTable {
  std::mutex mutex;
  std::vector<loom_kernel_time> kernels;
  /// The kernels' runs in the most recent call.
  std::vector<loom_kernel_event> events;

  void clear();
};

/// While it lives, the calling thread's kernel timer calls report to
/// `table` (when `enabled`; otherwise they return at once). One per call of
/// a rank's entry.
class KernelTimerScope {
public:
  KernelTimerScope(KernelTable &table, bool enabled);
  ~KernelTimerScope();
  KernelTimerScope(const KernelTimerScope &) = delete;
  KernelTimerScope &operator=(const KernelTimerScope &) = delete;

private:
  KernelTable *previous;
};

} // namespace loom::runtime

#endif // LOOM_RUNTIME_PROFILE_INTERNAL_H
