//===- Partition.cpp - Partition a program over a device grid -------------===//
//
// Annotates the plan (loom/Dialect/Loom/Sharding/Partition.h), then runs
// upstream sharding propagation and SPMD partitioning on every function.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/Transforms/Passes.h"

#include "loom/Dialect/Loom/Sharding/Partition.h"

#include "mlir/Dialect/Shard/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"

namespace loom {
#define GEN_PASS_DEF_LOOMPARTITIONPASS
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"
} // namespace loom

using namespace mlir;
using namespace loom;

namespace {

struct LoomPartitionPass
    : public loom::impl::LoomPartitionPassBase<LoomPartitionPass> {
  using LoomPartitionPassBase::LoomPartitionPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<SmallVector<GridAxisSpec>> axes =
        parseGridSpec(grid, [&] { return module.emitError(); });
    if (failed(axes))
      return signalPassFailure();
    PartitionOptions options;
    options.axes = std::move(*axes);
    options.sequenceParallel = sequenceParallel;
    options.shardWeights = zero;
    if (failed(annotateForGrid(module, options)))
      return signalPassFailure();

    // Forward only: the plan's annotations flow from inputs and weights to
    // results; a backward sweep first would pin activations replicated.
    OpPassManager propagate(func::FuncOp::getOperationName());
    propagate.addPass(shard::createShardingPropagation(
        shard::ShardingPropagationOptions{shard::TraversalOrder::Forward}));
    OpPassManager partition(func::FuncOp::getOperationName());
    partition.addPass(shard::createPartition());
    SmallVector<func::FuncOp> funcs;
    for (func::FuncOp func : module.getOps<func::FuncOp>())
      if (!func.isExternal())
        funcs.push_back(func);
    for (func::FuncOp func : funcs)
      if (failed(runPipeline(propagate, func)))
        return signalPassFailure();
    completeShardings(module);
    if (options.shardWeights && failed(shardWeightStorage(module, options)))
      return signalPassFailure();
    splitReshardings(module);
    for (func::FuncOp func : funcs)
      if (failed(runPipeline(partition, func)))
        return signalPassFailure();
    cleanUpPartitioned(module);
  }
};

} // namespace
