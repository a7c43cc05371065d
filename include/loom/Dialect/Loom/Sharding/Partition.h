//===- Partition.h - Plans for partitioning loom programs -------*- C++ -*-===//
//
// The library behind `-loom-partition`: parse a device grid, create it, and
// annotate a program with the shardings of a parallelization plan so that
// upstream `sharding-propagation` and `shard-partition` produce one SPMD
// program for all ranks.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_SHARDING_PARTITION_H
#define LOOM_DIALECT_LOOM_SHARDING_PARTITION_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace loom {

/// One axis of a device grid: the strategy it carries and its degree.
struct GridAxisSpec {
  /// "dp" (data parallel: the batch), "cp" (context parallel: the
  /// sequence), "tp" (tensor parallel, Megatron), "pp" (pipeline stages)
  /// or "ep" (expert parallel: the tokens and the experts of
  /// mixture-of-experts layers).
  std::string name;
  int64_t size = 1;
};

/// The strategies known to `parseGridSpec`.
llvm::ArrayRef<llvm::StringRef> knownGridAxisNames();

/// Parses `name=degree` pairs separated by commas ("dp=2,tp=4"), in grid
/// axis order. Unknown or repeated names, degrees that are not positive
/// integers and an empty spec are reported with `emitError`.
mlir::FailureOr<llvm::SmallVector<GridAxisSpec>>
parseGridSpec(llvm::StringRef spec,
              llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

/// What to partition for.
struct PartitionOptions {
  /// The grid axes in order.
  llvm::SmallVector<GridAxisSpec> axes;
  /// With "tp": sequence parallelism between the tensor-parallel blocks.
  bool sequenceParallel = false;
  /// With "pp": micro-batches of the batch that flow through the stages
  /// one after another (GPipe).
  int64_t microBatches = 1;
  /// With "dp": ZeRO-style weights, stored split over the dp axis and
  /// all-gathered just before use.
  bool shardWeights = false;
  /// With "ep": the capacity factor given to every loom.moe that has none
  /// (0: none).
  double capacityFactor = 0.0;
};

/// Runs a pipeline of function passes on one op: inside a pass, the pass's
/// dynamic pipeline (`Pass::runPipeline`), elsewhere a new PassManager.
using PipelineRunner = llvm::function_ref<mlir::LogicalResult(
    mlir::OpPassManager &, mlir::Operation *)>;

/// Runs `pipeline` on `op` in a PassManager of its own.
mlir::LogicalResult runPipelineInNewPassManager(mlir::OpPassManager &pipeline,
                                                mlir::Operation *op);

/// Partitions `module` for `options` into one SPMD program for every rank
/// of the grid (what `-loom-partition` does with a stated grid): micro-batch
/// splitting with a pp axis, the plan's annotations (annotateForGrid),
/// forward sharding propagation, ZeRO weight storage, upstream
/// partitioning, clean-up and the pipeline stages. Fails with a diagnostic
/// when the plan does not apply.
mlir::LogicalResult
partitionModule(mlir::ModuleOp module, const PartitionOptions &options,
                PipelineRunner runPipeline = runPipelineInNewPassManager);

/// The symbol of the grid that `annotateForGrid` creates.
inline constexpr llvm::StringLiteral kGridName = "grid";

/// Creates `shard.grid @grid` for the axes in `module` and annotates every
/// function for the plan:
///  - arguments and constants are replicated (every rank receives the whole
///    input, so the program keeps the unpartitioned interface);
///  - "dp" splits dimension 0 of every argument (the batch), "cp"
///    dimension 1 of those of rank >= 2 (the sequence);
///  - "tp" splits attention blocks by heads (query, key and value
///    projections column-parallel, the output projection row-parallel) and
///    MLP blocks (projections feeding the hidden activation column-parallel,
///    the one after it row-parallel), so that each block ends in one
///    all-reduce;
///  - with `sequenceParallel`, what runs between those blocks (biases,
///    residual adds, norms) runs on sequence shards of the tp axis;
///  - results are returned replicated.
/// Fails with a diagnostic when a degree does not divide what it splits.
mlir::LogicalResult annotateForGrid(mlir::ModuleOp module,
                                    const PartitionOptions &options);

/// Gives every op of `module`'s functions that propagation left without
/// shardings replicated ones, so that partitioning sees a fully annotated
/// program.
void completeShardings(mlir::ModuleOp module);

/// ZeRO-style weight storage, on a propagated program: each floating-point
/// constant is held as the piece its use needs further split over the "dp"
/// axis (the stored shard, sliced locally), and gathered over "dp" just
/// before the use. Fails without a "dp" axis.
mlir::LogicalResult shardWeightStorage(mlir::ModuleOp module,
                                       const PartitionOptions &options);

/// Upstream partitioning reshards a value in one step: one grid axis split,
/// unsplit or moved to another dimension. Inserts intermediate annotations
/// where a resharding needs more (unsplitting down to the common axes, then
/// splitting up), so that every resharding is one step.
void splitReshardings(mlir::ModuleOp module);

/// Removes what partitioning leaves behind: casts to the same type, repeated
/// collectives of one value (common subexpressions), values nothing uses
/// any more (shape constants it replaced); an
/// all-reduce whose only use is a slice over the same axes becomes one
/// reduce-scatter.
void cleanUpPartitioned(mlir::ModuleOp module);

} // namespace loom

#endif // LOOM_DIALECT_LOOM_SHARDING_PARTITION_H
