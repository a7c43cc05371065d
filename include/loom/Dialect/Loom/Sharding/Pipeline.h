//===- Pipeline.h - Pipeline parallelism ------------------------*- C++ -*-===//
//
// A "pp" grid axis cuts each function into stages run by different ranks,
// with activations sent from stage to stage (shard.send / shard.recv) and the
// batch split into micro-batches that flow through the stages one after
// another (the forward half of a GPipe schedule).
// docs/partitioning/pipeline-parallel.md has the whole story.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_SHARDING_PIPELINE_H
#define LOOM_DIALECT_LOOM_SHARDING_PIPELINE_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <optional>

namespace loom {

/// How one function is cut into micro-batches: its interface at the whole
/// batch, and for each argument and result the dimension that micro-batches
/// split (unset: the value does not depend on the batch and every
/// micro-batch sees all of it).
struct MicroBatchPlan {
  mlir::FunctionType wholeBatchType;
  llvm::SmallVector<std::optional<int64_t>> argumentAxes, resultAxes;
};

/// Rewrites every function of `module` to compute one of `microBatches`
/// equal micro-batches, and returns each function's plan by name.
/// `splitBatch` partitions a copy of the module with the grid
/// "dp=<microBatches>"; one rank's body of that program (its slices of the
/// arguments made arguments, its pieces of the results made results) is
/// the micro-batch program. Fails, naming the op, when a value needs the
/// whole batch.
mlir::FailureOr<llvm::StringMap<MicroBatchPlan>> splitIntoMicroBatches(
    mlir::ModuleOp module, int64_t microBatches,
    llvm::function_ref<mlir::LogicalResult(mlir::ModuleOp)> splitBatch);

/// Cuts every function of the partitioned `module` into `stages`
/// `loom.pipeline_stage` regions per micro-batch, run by the ranks of the
/// corresponding coordinate of grid axis `axis`, balancing estimated FLOPs
/// and preferring cuts where few bytes cross; inserts one shard.send /
/// shard.recv per value crossing a stage boundary per micro-batch,
/// reassembles the micro-batches' results with `plans` (whole-batch
/// interface again) and broadcasts them from the last stage along `axis`.
/// Reports the stages as a remark.
mlir::LogicalResult buildPipeline(mlir::ModuleOp module, int64_t axis,
                                  int64_t stages, int64_t microBatches,
                                  const llvm::StringMap<MicroBatchPlan> &plans);

/// The bytes of a statically shaped tensor type (whole bytes per element),
/// 0 for anything else.
int64_t staticTensorBytes(mlir::Type type);

/// Estimated floating-point operations of `op`: 2*M*N*K for contractions,
/// the attention's two products, otherwise one per result element (zero
/// for ops that only move data).
double estimateFlops(mlir::Operation *op);

} // namespace loom

#endif // LOOM_DIALECT_LOOM_SHARDING_PIPELINE_H
