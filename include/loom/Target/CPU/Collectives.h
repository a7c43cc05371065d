//===- Collectives.h - Per-rank programs for engines ------------*- C++ -*-===//
//
// A partitioned program (shard ops on a device grid) is one SPMD program for
// every rank; an engine holds one compiled program per rank. Specializing it
// for a rank makes the rank's position a constant (slices become static)
// and turns the collectives into calls of the runtime's communicator
// (runtime/include/loom/abi/collectives.h).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TARGET_CPU_COLLECTIVES_H
#define LOOM_TARGET_CPU_COLLECTIVES_H

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>

namespace loom::cpu {

/// Rewrites `module` into rank `rank`'s program (ranks are numbered
/// row-major over the grid): its own pipeline stages inlined and the others
/// dropped, shard.all_slice a static slice, process indices constants,
/// all_reduce / reduce_scatter / all_gather / broadcast / send / recv
/// calls of the runtime (over the whole communicator, or over the rank's
/// group of a sub-grid with the loom_rt_group_* calls), and the grid
/// disappears. Other shard ops fail with a diagnostic naming them.
mlir::LogicalResult specializeForRank(mlir::ModuleOp module, int64_t rank);

} // namespace loom::cpu

#endif // LOOM_TARGET_CPU_COLLECTIVES_H
