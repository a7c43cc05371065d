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
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>

namespace loom::cpu {

/// The shape of `module`'s device grid: nullopt for a program without a
/// grid, an error (failure) for grids engines do not support (more than
/// one, dynamic sizes).
mlir::FailureOr<std::optional<llvm::SmallVector<int64_t>>>
engineGridShape(mlir::ModuleOp module);

/// The number of ranks of `module`'s device grid (the product of its
/// shape), as engineGridShape.
mlir::FailureOr<std::optional<int64_t>> engineGridSize(mlir::ModuleOp module);

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
