//===- InitAllDialects.h - Dialects Loom's tools load -----------*- C++ -*-===//

#ifndef LOOM_INITALLDIALECTS_H
#define LOOM_INITALLDIALECTS_H

#include "mlir/IR/DialectRegistry.h"

namespace loom {

/// Registers the loom dialect and the upstream dialects Loom programs use
/// (func, arith, math, tensor, linalg, bufferization, scf, shard, ...) and
/// the ShardingInterface models of the loom ops.
void registerAllDialects(mlir::DialectRegistry &registry);

} // namespace loom

#endif // LOOM_INITALLDIALECTS_H
