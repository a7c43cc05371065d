//===- collectives_internal.h - The communicator of compiled code -*- C++ -*-===//

#ifndef LOOM_RUNTIME_SRC_COLLECTIVES_INTERNAL_H
#define LOOM_RUNTIME_SRC_COLLECTIVES_INTERNAL_H

#include "comm_internal.h"

namespace loom::runtime {

/// Installs `comm` as the calling thread's communicator for the compiled
/// code it runs next; status() reports a collective that failed meanwhile.
class CollectiveScope {
public:
  explicit CollectiveScope(loom_comm *comm);
  ~CollectiveScope();
  CollectiveScope(const CollectiveScope &) = delete;
  CollectiveScope &operator=(const CollectiveScope &) = delete;
  loom_status status() const;
};

} // namespace loom::runtime

#endif // LOOM_RUNTIME_SRC_COLLECTIVES_INTERNAL_H
