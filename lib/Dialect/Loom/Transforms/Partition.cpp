//===- Partition.cpp - Partition a program over a device grid -------------===//
//
// Annotates the plan (loom/Dialect/Loom/Sharding/Partition.h), then runs
// upstream sharding propagation and SPMD partitioning on every function.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/Transforms/Passes.h"

#include "loom/Dialect/Loom/Sharding/Partition.h"
#include "loom/Dialect/Loom/Sharding/Pipeline.h"
#include "loom/Dialect/Loom/Sharding/Planner.h"

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

  /// The plan: the stated grid, or with plan=auto the cheapest one.
  LogicalResult choosePolicy(ModuleOp module, PartitionOptions &options) {
    options.sequenceParallel = sequenceParallel;
    options.shardWeights = zero;
    options.microBatches = microBatches;
    options.capacityFactor = capacityFactor;
    if (plan.empty()) {
      FailureOr<SmallVector<GridAxisSpec>> axes =
          parseGridSpec(grid, [&] { return emitError(module.getLoc()); });
      if (failed(axes))
        return failure();
      options.axes = std::move(*axes);
      return success();
    }
    if (plan != "auto" || !grid.empty() || devices < 1)
      return emitError(module.getLoc())
             << "plan=auto needs devices=N (N >= 1) and no grid; got plan='"
             << plan << "', devices=" << static_cast<int64_t>(devices)
             << ", grid='" << grid << "'";
    CostModel model;
    model.deviceGflops = deviceGflops;
    model.linkGBps = linkGBps;
    model.interNodeGBps = interNodeGBps;
    model.devicesPerNode = devicesPerNode;
    model.deviceMemory = deviceMemory;
    if (devicesPerNode < 1 || deviceMemory <= 0 || linkGBps <= 0 ||
        interNodeGBps <= 0 || deviceGflops <= 0)
      return emitError(module.getLoc())
             << "plan=auto needs positive devices-per-node, device-memory, "
                "device-gflops, link-gbps and inter-node-gbps";
    auto partitionCopy = [&](ModuleOp copy, const PartitionOptions &trial) {
      LoomPartitionPassOptions stated;
      stated.grid = gridString(trial);
      stated.sequenceParallel = trial.sequenceParallel;
      stated.microBatches = trial.microBatches;
      stated.zero = zero;
      PassManager pm(copy.getContext());
      pm.addPass(createLoomPartitionPass(stated));
      return pm.run(copy);
    };
    std::optional<size_t> chosen;
    SmallVector<PlanCandidate> candidates =
        evaluatePlans(module, devices, model, partitionCopy, chosen);
    std::string report = formatPlanReport(candidates, chosen, model, devices);
    if (!chosen)
      return emitError(module.getLoc())
             << "no partition plan applies to " << static_cast<int64_t>(devices)
             << " devices:\n"
             << report;
    emitRemark(module.getLoc()) << report;
    options.axes = candidates[*chosen].options.axes;
    options.sequenceParallel = candidates[*chosen].options.sequenceParallel;
    options.microBatches = candidates[*chosen].options.microBatches;
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    PartitionOptions options;
    if (failed(choosePolicy(module, options)))
      return signalPassFailure();

    // Pipeline parallelism cuts the program that the other axes produce;
    // micro-batching comes first so that they partition one micro-batch.
    std::optional<int64_t> pipelineAxis;
    int64_t stages = 1;
    for (auto [i, axis] : llvm::enumerate(options.axes))
      if (axis.name == "pp")
        pipelineAxis = i, stages = axis.size;
    int64_t microBatches = options.microBatches;
    if (microBatches < 1 || (microBatches > 1 && !pipelineAxis)) {
      emitError(module.getLoc())
          << "micro-batches=" << microBatches
          << " needs a pipeline (pp) grid axis and a positive count";
      return signalPassFailure();
    }
    llvm::StringMap<MicroBatchPlan> batches;
    if (pipelineAxis) {
      auto splitBatch = [&](ModuleOp copy) {
        LoomPartitionPassOptions dataParallel;
        dataParallel.grid = "dp=" + std::to_string(microBatches);
        PassManager pm(copy.getContext());
        pm.addPass(createLoomPartitionPass(dataParallel));
        return pm.run(copy);
      };
      FailureOr<llvm::StringMap<MicroBatchPlan>> split =
          splitIntoMicroBatches(module, microBatches, splitBatch);
      if (failed(split))
        return signalPassFailure();
      batches = std::move(*split);
    }

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
    if (pipelineAxis && failed(buildPipeline(module, *pipelineAxis, stages,
                                             microBatches, batches)))
      return signalPassFailure();
  }
};

} // namespace
