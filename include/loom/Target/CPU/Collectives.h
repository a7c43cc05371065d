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
#include <optional>

namespace loom::cpu {

/// The number of ranks of `module`'s device grid: nullopt for a program
/// without shard ops, an error (failure) for grids engines do not support
/// yet (more than one, more than one axis, dynamic sizes).
mlir::FailureOr<std::optional<int64_t>> engineGridSize(mlir::ModuleOp module);

/// Rewrites `module` into rank `rank`'s program: shard.all_slice becomes a
/// static slice, shard.process_linear_index a constant, shard.all_reduce and
/// shard.all_gather calls of the runtime, and the grid disappears. Other
/// shard ops fail with a diagnostic naming them.
mlir::LogicalResult specializeForRank(mlir::ModuleOp module, int64_t rank);

} // namespace loom::cpu

#endif // LOOM_TARGET_CPU_COLLECTIVES_H
