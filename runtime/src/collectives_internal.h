//===- collectives_internal.h - The communicator of compiled code -*- C++
//-*-===//

#ifndef LOOM_RUNTIME_SRC_COLLECTIVES_INTERNAL_H
#define LOOM_RUNTIME_SRC_COLLECTIVES_INTERNAL_H

#include "comm_internal.h"

#include <csetjmp>
#include <string>

namespace loom::runtime {

/// Installs `comm` as the calling thread's communicator for the compiled
/// code it runs next, and `threads` as the threads its library kernels may
/// use; status() reports a collective or kernel that failed meanwhile.
/// A rank's collectives in one call (loom_engine_collective_stats).
struct CollectiveCounters {
  loom_collective_stats kinds[LOOM_COLLECTIVE_KINDS] = {};
};

class CollectiveScope {
public:
  /// `counters` (may be null) is cleared and counts the call's
  /// collectives.
  explicit CollectiveScope(loom_comm *comm, int32_t threads = 1,
                           CollectiveCounters *counters = nullptr);
  ~CollectiveScope();
  CollectiveScope(const CollectiveScope &) = delete;
  CollectiveScope &operator=(const CollectiveScope &) = delete;
  loom_status status() const;
};

/// Whether the calling thread runs code the runtime entered (inside a
/// CollectiveScope), and the threads that scope allows (1 outside one).
bool inCallScope();
int32_t callThreads();

/// Whether a collective or kernel failed in the current scope.
bool callFailed();

/// Records a library kernel's failure: the code goes on (it has no error
/// path), and the scope's status() reports `status` with `message`.
void recordKernelFailure(loom_status status, const std::string &message);

/// Where the code's call returns to when the code cannot go on (memory it
/// needs could not be allocated): the runtime sets it on the thread that
/// enters the code, around the entry, and clears it after. `inParallel`
/// (the code's omp_in_parallel, null without parallel loops) tells whether
/// the code is inside a parallel loop, which it cannot be left from.
void setCallEscape(std::jmp_buf *escape, int (*inParallel)());

/// Records `message` as the call's failure (LOOM_ERROR_INTERNAL) and
/// leaves the code through the call's escape. Where there is none (a
/// worker of the code's parallel loops, a parallel loop on the entering
/// thread, code run outside the runtime) it prints the message and exits:
/// the code has no error path, and going on would write through a null
/// pointer.
[[noreturn]] void abandonCall(const std::string &message);

/// Frees what kernel libraries keep for the call sites of the code loaded
/// as `library` (a dlopen handle), which is about to be unloaded.
void releaseLibraryKernels(void *library);

} // namespace loom::runtime

#endif // LOOM_RUNTIME_SRC_COLLECTIVES_INTERNAL_H
