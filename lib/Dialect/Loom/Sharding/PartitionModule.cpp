//===- PartitionModule.cpp - Partitioning as a library call ---------------===//
//
// The whole of partitioning behind one typed call, which the pass, the
// planner (for each trial plan), pipeline micro-batching and loomc use
// alike: annotate the plan (Partition.cpp), propagate shardings forward,
// partition with upstream `shard-partition`, clean up, and cut pipeline
// stages. Options travel typed from the caller to here; the grid string is
// parsed once, where the user wrote it.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/Sharding/Partition.h"

#include "loom/Dialect/Loom/Sharding/Pipeline.h"
#include "loom/Dialect/Loom/Sharding/Planner.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;

namespace loom {

LogicalResult runPipelineInNewPassManager(OpPassManager &pipeline,
                                          Operation *op) {
  PassManager pm(op->getContext(), pipeline.getOpAnchorName());
  static_cast<OpPassManager &>(pm) = pipeline;
  return pm.run(op);
}

LogicalResult partitionModule(ModuleOp module, const PartitionOptions &options,
                              PipelineRunner runPipeline) {
  // Pipeline parallelism cuts the program that the other axes produce;
  // micro-batching comes first so that they partition one micro-batch.
  std::optional<int64_t> pipelineAxis;
  int64_t stages = 1;
  for (auto [i, axis] : llvm::enumerate(options.axes))
    if (axis.name == "pp")
      pipelineAxis = i, stages = axis.size;
  int64_t microBatches = options.microBatches;
  if (microBatches < 1 || (microBatches > 1 && !pipelineAxis))
    return emitError(module.getLoc())
           << "micro-batches=" << microBatches
           << " needs a pipeline (pp) grid axis and a positive count";
  llvm::StringMap<MicroBatchPlan> batches;
  if (pipelineAxis) {
    auto splitBatch = [&](ModuleOp copy) {
      PartitionOptions dataParallel;
      dataParallel.axes.push_back({"dp", microBatches});
      return partitionModule(copy, dataParallel);
    };
    FailureOr<llvm::StringMap<MicroBatchPlan>> split =
        splitIntoMicroBatches(module, microBatches, splitBatch);
    if (failed(split))
      return failure();
    batches = std::move(*split);
  }

  if (failed(annotateForGrid(module, options)))
    return failure();

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
      return failure();
  completeShardings(module);
  if (options.shardWeights && failed(shardWeightStorage(module, options)))
    return failure();
  splitReshardings(module);
  for (func::FuncOp func : funcs)
    if (failed(runPipeline(partition, func)))
      return failure();
  cleanUpPartitioned(module);
  if (pipelineAxis && failed(buildPipeline(module, *pipelineAxis, stages,
                                           microBatches, batches)))
    return failure();
  return success();
}

FailureOr<PartitionOptions> choosePlan(ModuleOp module,
                                       const AutoPlanRequest &request,
                                       std::string &report) {
  const CostModel &model = request.model;
  if (request.devices < 1)
    return emitError(module.getLoc())
           << "plan=auto needs devices=N (N >= 1); got " << request.devices;
  if (model.devicesPerNode < 1 || model.deviceMemory <= 0 ||
      model.linkGBps <= 0 || model.interNodeGBps <= 0 ||
      model.deviceGflops <= 0)
    return emitError(module.getLoc())
           << "plan=auto needs positive devices-per-node, device-memory, "
              "device-gflops, link-gbps and inter-node-gbps";
  std::string notDecoder;
  if (request.search == AutoPlanRequest::Search::Analytic) {
    std::optional<FailureOr<PartitionOptions>> decoder =
        chooseDecoderPlan(module, request, report, notDecoder);
    if (decoder)
      return *decoder;
  }
  auto partitionCopy = [&](ModuleOp copy, const PartitionOptions &trial) {
    PartitionOptions stated = trial;
    stated.shardWeights = request.shardWeights;
    stated.capacityFactor = request.capacityFactor;
    return partitionModule(copy, stated);
  };
  std::optional<size_t> chosen;
  SmallVector<PlanCandidate> candidates =
      evaluatePlans(module, request.devices, model, partitionCopy, chosen);
  report = formatPlanReport(candidates, chosen, model, request.devices);
  if (!notDecoder.empty())
    report += "\nevery grid was partitioned and measured: " + notDecoder;
  if (!chosen)
    return emitError(module.getLoc()) << "no partition plan applies to "
                                      << request.devices << " devices:\n"
                                      << report;
  PartitionOptions options = candidates[*chosen].options;
  options.shardWeights = request.shardWeights;
  options.capacityFactor = request.capacityFactor;
  return options;
}

} // namespace loom
