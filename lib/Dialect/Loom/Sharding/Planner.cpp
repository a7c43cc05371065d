//===- Planner.cpp - Choosing a partitioning plan -------------------------===//
//
// The planner does not model the partitioner: it runs it. Every candidate
// grid partitions a copy of the program, and the cost model reads the
// result (local shapes, the collectives actually inserted, the weight
// pieces kept), so an estimate is never about a plan the partitioner would
// not produce.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/Sharding/Planner.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/Sharding/Pipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace loom;

std::string loom::gridString(const PartitionOptions &options) {
  std::string text;
  for (const GridAxisSpec &axis : options.axes) {
    if (!text.empty())
      text += ",";
    text += axis.name + "=" + std::to_string(axis.size);
  }
  return text;
}

SmallVector<PartitionOptions> loom::candidatePlans(int64_t devices,
                                                   bool experts) {
  SmallVector<PartitionOptions> plans;
  auto divisors = [](int64_t n) {
    SmallVector<int64_t> d;
    for (int64_t i = 1; i <= n; ++i)
      if (n % i == 0)
        d.push_back(i);
    return d;
  };
  for (int64_t ep : experts ? divisors(devices) : SmallVector<int64_t>{1})
    for (int64_t pp : divisors(devices / ep))
      for (int64_t dp : divisors(devices / ep / pp))
        for (int64_t cp : divisors(devices / ep / pp / dp)) {
          int64_t tp = devices / ep / pp / dp / cp;
          PartitionOptions options;
          for (auto [name, degree] :
               {std::make_pair("dp", dp), std::make_pair("cp", cp),
                std::make_pair("tp", tp), std::make_pair("pp", pp),
                std::make_pair("ep", ep)})
            if (degree > 1)
              options.axes.push_back({name, degree});
          if (options.axes.empty())
            options.axes.push_back({"dp", 1});
          // A pipeline with one micro-batch, and with one per stage (GPipe's
          // bubble shrinks with more).
          SmallVector<int64_t> microBatches{1};
          if (pp > 1)
            microBatches.push_back(pp);
          for (int64_t m : microBatches) {
            options.microBatches = m;
            options.sequenceParallel = false;
            plans.push_back(options);
            if (tp > 1) {
              options.sequenceParallel = true;
              plans.push_back(options);
            }
          }
        }
  return plans;
}

namespace {

double bytesOf(Type type) { return double(staticTensorBytes(type)); }

/// The devices taking part in a collective over `axes` of `grid`.
int64_t groupSize(Operation *op, FlatSymbolRefAttr grid,
                  ArrayRef<shard::GridAxis> axes) {
  auto gridOp = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(op, grid);
  if (!gridOp)
    return 1;
  int64_t size = 1;
  for (shard::GridAxis axis : axes)
    size *= std::max<int64_t>(1, gridOp.getShape()[axis]);
  return size;
}

/// The bytes a device keeps of `value`: the smallest piece that successive
/// local slices take from it, or all of it.
double keptBytes(Value value) {
  double kept = bytesOf(value.getType());
  for (Operation *user : value.getUsers()) {
    auto slice = dyn_cast<shard::AllSliceOp>(user);
    if (!slice)
      return bytesOf(value.getType());
    kept = std::min(kept, keptBytes(slice.getResult()));
  }
  return kept;
}

} // namespace

namespace {

/// The most bytes of intermediate values alive at once in `body`, in
/// program order: a value lives from its definition to its last use.
/// Arguments do not count, nor do values computed from weights alone (the
/// constants, `weights`, and e.g. the slices a rank takes of them): those
/// are the weights a device keeps, counted as such (an engine stores a
/// rank's slices, not the whole constants).
double peakLiveBytes(Block &body, llvm::DenseSet<Value> weights = {}) {
  llvm::DenseMap<Operation *, size_t> position;
  for (auto [i, op] : llvm::enumerate(body))
    position[&op] = i;
  std::vector<double> freedAfter(body.getOperations().size() + 1, 0);
  double live = 0, peak = 0;
  for (auto [i, op] : llvm::enumerate(body)) {
    bool fromWeights =
        isa<ConstantOp>(op) || op.hasTrait<OpTrait::ConstantLike>() ||
        (op.getNumOperands() > 0 && op.getNumRegions() == 0 &&
         llvm::all_of(op.getOperands(),
                      [&](Value v) { return weights.contains(v); }));
    if (fromWeights) {
      weights.insert(op.result_begin(), op.result_end());
    } else {
      for (Value result : op.getResults()) {
        size_t last = i;
        for (Operation *user : result.getUsers())
          if (Operation *top = body.findAncestorOpInBlock(*user))
            last = std::max(last, position[top]);
        live += bytesOf(result.getType());
        freedAfter[last] += bytesOf(result.getType());
      }
    }
    peak = std::max(peak, live);
    live -= freedAfter[i];
  }
  return peak;
}

/// Adds what the ops under `root` cost a device: FLOPs, collective bytes
/// and time, KV cache. Weights and activations are counted by the caller.
void accumulateOps(Operation *root, const CostModel &model, PlanCost &cost,
                   double &commSeconds) {
  auto transfer = [&](double sent, bool interNode) {
    cost.commBytes += sent;
    commSeconds +=
        sent / ((interNode ? model.interNodeGBps : model.linkGBps) * 1e9);
    ++cost.collectives;
  };
  auto ring = [&](Operation *op, FlatSymbolRefAttr grid,
                  ArrayRef<shard::GridAxis> axes, double bytes, double factor) {
    int64_t n = groupSize(op, grid, axes);
    if (n <= 1)
      return;
    transfer(factor * bytes * static_cast<double>(n - 1) / n,
             n > model.devicesPerNode);
  };
  root->walk([&](Operation *op) {
    if (isa<MatMulOp, AttentionOp, ConvOp, MoEOp>(op))
      cost.flops += estimateFlops(op);
    if (auto attention = dyn_cast<AttentionOp>(op)) {
      cost.kvCacheBytes += bytesOf(attention.getKey().getType()) +
                           bytesOf(attention.getValue().getType());
    } else if (auto reduce = dyn_cast<shard::AllReduceOp>(op)) {
      ring(op, reduce.getGridAttr(), reduce.getGridAxes(),
           bytesOf(reduce.getInput().getType()), 2);
    } else if (auto gather = dyn_cast<shard::AllGatherOp>(op)) {
      ring(op, gather.getGridAttr(), gather.getGridAxes(),
           bytesOf(gather.getType()), 1);
    } else if (auto scatter = dyn_cast<shard::ReduceScatterOp>(op)) {
      ring(op, scatter.getGridAttr(), scatter.getGridAxes(),
           bytesOf(scatter.getInput().getType()), 1);
    } else if (auto exchange = dyn_cast<shard::AllToAllOp>(op)) {
      ring(op, exchange.getGridAttr(), exchange.getGridAxes(),
           bytesOf(exchange.getInput().getType()), 1);
    } else if (auto broadcast = dyn_cast<shard::BroadcastOp>(op)) {
      ring(op, broadcast.getGridAttr(), broadcast.getGridAxes(),
           bytesOf(broadcast.getType()), 1);
    } else if (auto send = dyn_cast<shard::SendOp>(op)) {
      // Neighbouring stages are `stride` ranks apart: on another node once
      // the stride reaches a node's size.
      auto gridOp = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(
          op, send.getGridAttr());
      int64_t stride = 1;
      if (gridOp && !send.getGridAxes().empty())
        for (int64_t d = send.getGridAxes().front() + 1;
             d < static_cast<int64_t>(gridOp.getShape().size()); ++d)
          stride *= gridOp.getShape()[d];
      transfer(bytesOf(send.getInput().getType()),
               stride >= model.devicesPerNode);
    }
  });
}

/// The bytes of weights the ops under `region` keep: each constant passed
/// in as an argument, as the smallest piece they slice from it.
double keptArgumentBytes(PipelineStageOp stage,
                         llvm::DenseSet<Operation *> &counted) {
  double bytes = 0;
  for (auto [input, arg] :
       llvm::zip(stage.getInputs(), stage.getBody().getArguments())) {
    auto constant = input.getDefiningOp<ConstantOp>();
    if (!constant || !isa<FloatType>(constant.getType().getElementType()) ||
        !counted.insert(constant).second)
      continue;
    bytes += keptBytes(arg);
  }
  return bytes;
}

} // namespace

PlanCost loom::measurePartitioned(ModuleOp module, const CostModel &model) {
  PlanCost cost;
  double commSeconds = 0;
  SmallVector<PipelineStageOp> stageOps;
  module.walk([&](PipelineStageOp stage) { stageOps.push_back(stage); });
  if (stageOps.empty()) {
    accumulateOps(module, model, cost, commSeconds);
    module.walk([&](ConstantOp constant) {
      if (isa<FloatType>(constant.getType().getElementType()))
        cost.weightBytes += keptBytes(constant.getResult());
    });
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.getBody().empty())
        cost.activationBytes = std::max(cost.activationBytes,
                                        peakLiveBytes(func.getBody().front()));
    cost.seconds = cost.flops / (model.deviceGflops * 1e9) + commSeconds +
                   cost.collectives * model.collectiveLatencyUs * 1e-6;
    return cost;
  }

  // A pipeline: a device runs the regions of one stage. Count each stage
  // over all micro-batches and report the costliest; GPipe's fill and drain
  // stretch the step to (M + P - 1) / M times the slowest stage's work.
  int64_t stages = 0, microBatches = 0;
  for (PipelineStageOp stage : stageOps) {
    stages = std::max(stages, stage.getStageIndex() + 1);
    microBatches = std::max(microBatches, stage.getMicroBatchIndex() + 1);
  }
  SmallVector<PlanCost> perStage(stages);
  SmallVector<double> stageComm(stages, 0);
  SmallVector<llvm::DenseSet<Operation *>> weightsOf(stages);
  for (PipelineStageOp stage : stageOps) {
    int64_t s = stage.getStageIndex();
    accumulateOps(stage, model, perStage[s], stageComm[s]);
    perStage[s].weightBytes += keptArgumentBytes(stage, weightsOf[s]);
    llvm::DenseSet<Value> weights;
    for (auto [input, arg] :
         llvm::zip(stage.getInputs(), stage.getBody().getArguments()))
      if (input.getDefiningOp<ConstantOp>())
        weights.insert(arg);
    perStage[s].activationBytes =
        std::max(perStage[s].activationBytes,
                 peakLiveBytes(stage.getBody().front(), weights));
  }
  double slowest = 0;
  for (auto [s, c] : llvm::enumerate(perStage)) {
    double seconds = c.flops / (model.deviceGflops * 1e9) + stageComm[s] +
                     c.collectives * model.collectiveLatencyUs * 1e-6;
    slowest = std::max(slowest, seconds);
    cost.flops = std::max(cost.flops, c.flops);
    cost.commBytes = std::max(cost.commBytes, c.commBytes);
    cost.collectives = std::max(cost.collectives, c.collectives);
    cost.weightBytes = std::max(cost.weightBytes, c.weightBytes);
    cost.activationBytes = std::max(cost.activationBytes, c.activationBytes);
    cost.kvCacheBytes = std::max(cost.kvCacheBytes, c.kvCacheBytes);
  }
  // What runs outside the stages (the broadcast of the results).
  PlanCost outside;
  double outsideComm = 0;
  for (auto func : module.getOps<func::FuncOp>())
    for (Operation &op : func.getOps())
      if (!isa<PipelineStageOp>(op))
        accumulateOps(&op, model, outside, outsideComm);
  cost.commBytes += outside.commBytes;
  cost.collectives += outside.collectives;
  cost.seconds = slowest * double(microBatches + stages - 1) / microBatches +
                 outsideComm +
                 outside.collectives * model.collectiveLatencyUs * 1e-6;
  return cost;
}

SmallVector<PlanCandidate> loom::evaluatePlans(
    ModuleOp module, int64_t devices, const CostModel &model,
    function_ref<LogicalResult(ModuleOp, const PartitionOptions &)> partition,
    std::optional<size_t> &chosen) {
  SmallVector<PlanCandidate> candidates;
  std::optional<size_t> best;
  bool experts = false;
  module.walk([&](MoEOp) { experts = true; });
  for (PartitionOptions &options : candidatePlans(devices, experts)) {
    PlanCandidate candidate;
    candidate.options = options;
    OwningOpRef<ModuleOp> copy = module.clone();
    LogicalResult partitioned = failure();
    {
      // A plan that does not apply says why; that is its row of the report,
      // not an error of the program.
      ScopedDiagnosticHandler capture(module.getContext(), [&](Diagnostic &d) {
        if (candidate.reason.empty() &&
            d.getSeverity() == DiagnosticSeverity::Error)
          candidate.reason = d.str();
        return success();
      });
      partitioned = partition(*copy, options);
    }
    int64_t tp = 1;
    for (const GridAxisSpec &axis : options.axes)
      if (axis.name == "tp")
        tp = axis.size;
    if (tp > model.devicesPerNode) {
      candidate.reason =
          "tensor parallelism would span nodes (tp=" + std::to_string(tp) +
          ", " + std::to_string(model.devicesPerNode) + " devices per node)";
      candidates.push_back(std::move(candidate));
      continue;
    }
    if (succeeded(partitioned)) {
      PlanCost cost = measurePartitioned(*copy, model);
      if (cost.memoryBytes() > double(model.deviceMemory)) {
        candidate.reason =
            "needs " + std::to_string(int64_t(cost.memoryBytes())) +
            " bytes per device (weights, activations, KV cache), has " +
            std::to_string(model.deviceMemory);
        candidates.push_back(std::move(candidate));
        continue;
      }
      candidate.cost = cost;
      auto better = [&](const PlanCost &a, const PlanCost &b) {
        return a.seconds < b.seconds ||
               (a.seconds == b.seconds && a.collectives < b.collectives);
      };
      if (!best || better(*candidate.cost, *candidates[*best].cost))
        best = candidates.size();
    } else if (candidate.reason.empty()) {
      candidate.reason = "partitioning failed";
    }
    candidates.push_back(std::move(candidate));
  }
  chosen = best;
  return candidates;
}

std::string loom::formatPlanReport(ArrayRef<PlanCandidate> candidates,
                                   std::optional<size_t> chosen,
                                   const CostModel &model, int64_t devices) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "partition plans for " << devices
     << " devices (cost model: " << llvm::format("%g", model.deviceGflops)
     << " GFLOP/s, " << llvm::format("%g", model.linkGBps)
     << " GB/s links in a node of " << model.devicesPerNode << ", "
     << llvm::format("%g", model.interNodeGBps) << " GB/s between nodes, "
     << model.deviceMemory << " bytes per device, "
     << llvm::format("%g", model.collectiveLatencyUs)
     << " us per collective; per device):\n";
  os << llvm::format("  %-22s %12s %14s %11s %14s %14s %12s %12s\n", "plan",
                     "MFLOP", "comm bytes", "collectives", "weight bytes",
                     "activ. bytes", "KV bytes", "estimate us");
  for (auto [i, candidate] : llvm::enumerate(candidates)) {
    std::string name = gridString(candidate.options);
    if (candidate.options.microBatches > 1)
      name += " m=" + std::to_string(candidate.options.microBatches);
    if (candidate.options.sequenceParallel)
      name += " +sp";
    os << (i == chosen ? "* " : "  ");
    if (!candidate.cost) {
      os << llvm::format("%-22s ", name.c_str())
         << "not applicable: " << candidate.reason << "\n";
      continue;
    }
    const PlanCost &cost = *candidate.cost;
    os << llvm::format("%-22s %12.3f %14.0f %11lld %14.0f %14.0f %12.0f "
                       "%12.2f\n",
                       name.c_str(), cost.flops / 1e6, cost.commBytes,
                       static_cast<long long>(cost.collectives),
                       cost.weightBytes, cost.activationBytes,
                       cost.kvCacheBytes, cost.seconds * 1e6);
  }
  if (!chosen) {
    os << "none applies";
    return text;
  }
  const PartitionOptions &best = candidates[*chosen].options;
  os << "chosen: " << gridString(best)
     << (best.microBatches > 1
             ? " micro-batches=" + std::to_string(best.microBatches)
             : std::string())
     << (best.sequenceParallel ? " sequence-parallel=true" : "");
  return text;
}
