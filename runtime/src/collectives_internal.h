//===- collectives_internal.h - The communicator of compiled code -*- C++
//-*-===//

#ifndef LOOM_RUNTIME_SRC_COLLECTIVES_INTERNAL_H
#define LOOM_RUNTIME_SRC_COLLECTIVES_INTERNAL_H

#include "comm_internal.h"

namespace loom::runtime {

/// Installs `comm` as the calling thread's communicator for the compiled
/// code it runs next, and `threads` as the threads its library kernels may
/// use; status() reports a collective or kernel that failed meanwhile.
class CollectiveScope {
public:
  explicit CollectiveScope(loom_comm *comm, int32_t threads = 1);
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

/// Frees what kernel libraries keep for the call sites of the code loaded
/// as `library` (a dlopen handle), which is about to be unloaded.
void releaseLibraryKernels(void *library);

} // namespace loom::runtime

#endif // LOOM_RUNTIME_SRC_COLLECTIVES_INTERNAL_H
