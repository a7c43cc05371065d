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
  FailureOr<PartitionOptions> choosePolicy(ModuleOp module) {
    PartitionOptions options;
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
      return options;
    }
    if ((plan != "auto" && plan != "trials") || !grid.empty() || devices < 1)
      return emitError(module.getLoc())
             << "plan=auto (or plan=trials) needs devices=N (N >= 1) and no "
                "grid; got plan='"
             << plan << "', devices=" << static_cast<int64_t>(devices)
             << ", grid='" << grid << "'";
    AutoPlanRequest request;
    request.devices = devices;
    request.search = plan == "trials" ? AutoPlanRequest::Search::Trials
                                      : AutoPlanRequest::Search::Analytic;
    request.model.deviceGflops = deviceGflops;
    request.model.memoryGBps = memoryGBps;
    request.model.linkGBps = linkGBps;
    request.model.interNodeGBps = interNodeGBps;
    request.model.devicesPerNode = devicesPerNode;
    request.model.deviceMemory = deviceMemory;
    request.shardWeights = zero;
    request.capacityFactor = capacityFactor;
    std::string report;
    FailureOr<PartitionOptions> chosen = choosePlan(module, request, report);
    if (succeeded(chosen))
      emitRemark(module.getLoc()) << report;
    return chosen;
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<PartitionOptions> options = choosePolicy(module);
    if (failed(options) ||
        failed(partitionModule(module, *options,
                               [&](OpPassManager &pipeline, Operation *op) {
                                 return runPipeline(pipeline, op);
                               })))
      return signalPassFailure();
  }
};

} // namespace
