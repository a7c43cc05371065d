//===- EngineGrid.h - The device grid a program runs on ---------*- C++ -*-===//
//
// What every target and the engine builder read from a partitioned
// program: the one device grid it runs on and how many ranks that is.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_SHARDING_ENGINEGRID_H
#define LOOM_DIALECT_LOOM_SHARDING_ENGINEGRID_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>

namespace loom {

/// The shape of `module`'s device grid (the one `shard.grid`), nullopt for
/// a program that is not partitioned; failure, with a diagnostic, for
/// several grids or one of dynamic size.
mlir::FailureOr<std::optional<llvm::SmallVector<int64_t>>>
engineGridShape(mlir::ModuleOp module);

/// The number of devices of `module`'s grid (see engineGridShape).
mlir::FailureOr<std::optional<int64_t>> engineGridSize(mlir::ModuleOp module);

} // namespace loom

#endif // LOOM_DIALECT_LOOM_SHARDING_ENGINEGRID_H
