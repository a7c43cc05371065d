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

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "llvm/ADT/DenseMap.h"
#include "mlir/IR/Diagnostics.h"
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

SmallVector<PartitionOptions> loom::candidatePlans(int64_t devices) {
  SmallVector<PartitionOptions> plans;
  for (int64_t dp = 1; dp <= devices; ++dp) {
    if (devices % dp != 0)
      continue;
    for (int64_t cp = 1; cp <= devices / dp; ++cp) {
      if ((devices / dp) % cp != 0)
        continue;
      int64_t tp = devices / dp / cp;
      PartitionOptions options;
      for (auto [name, degree] :
           {std::make_pair("dp", dp), std::make_pair("cp", cp),
            std::make_pair("tp", tp)})
        if (degree > 1)
          options.axes.push_back({name, degree});
      if (options.axes.empty())
        options.axes.push_back({"dp", 1});
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

double bytesOf(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return 0;
  return static_cast<double>(tensor.getNumElements()) *
         std::max<int64_t>(1, tensor.getElementTypeBitWidth() / 8);
}

double elementsOf(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.hasStaticShape() ? tensor.getNumElements() : 0;
}

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

/// The most bytes of intermediate values (not arguments, not constants)
/// alive at once in `func`'s body, in program order: a value lives from its
/// definition to its last use.
double peakLiveBytes(func::FuncOp func) {
  if (func.getBody().empty())
    return 0;
  Block &body = func.getBody().front();
  llvm::DenseMap<Operation *, size_t> position;
  for (auto [i, op] : llvm::enumerate(body))
    position[&op] = i;
  std::vector<double> freedAfter(body.getOperations().size() + 1, 0);
  double live = 0, peak = 0;
  for (auto [i, op] : llvm::enumerate(body)) {
    if (!isa<ConstantOp>(op) && !op.hasTrait<OpTrait::ConstantLike>())
      for (Value result : op.getResults()) {
        size_t last = i;
        for (Operation *user : result.getUsers())
          if (Operation *top = body.findAncestorOpInBlock(*user))
            last = std::max(last, position[top]);
        live += bytesOf(result.getType());
        freedAfter[last] += bytesOf(result.getType());
      }
    peak = std::max(peak, live);
    live -= freedAfter[i];
  }
  return peak;
}

PlanCost loom::measurePartitioned(ModuleOp module, const CostModel &model) {
  PlanCost cost;
  double seconds = 0;
  auto ring = [&](Operation *op, FlatSymbolRefAttr grid,
                  ArrayRef<shard::GridAxis> axes, double bytes, double factor) {
    int64_t n = groupSize(op, grid, axes);
    if (n <= 1)
      return;
    double sent = factor * bytes * static_cast<double>(n - 1) / n;
    cost.commBytes += sent;
    seconds += sent / ((n > model.devicesPerNode ? model.interNodeGBps
                                                  : model.linkGBps) *
                       1e9);
    ++cost.collectives;
  };
  module.walk([&](Operation *op) {
    if (auto matmul = dyn_cast<MatMulOp>(op)) {
      auto lhs = cast<RankedTensorType>(matmul.getLhs().getType());
      cost.flops += 2 * elementsOf(matmul.getType()) *
                    static_cast<double>(lhs.getShape().back());
    } else if (auto attention = dyn_cast<AttentionOp>(op)) {
      auto key = cast<RankedTensorType>(attention.getKey().getType());
      auto query = cast<RankedTensorType>(attention.getQuery().getType());
      // Q K^T and the weighted sum of V.
      cost.flops += 4 * elementsOf(query) * key.getDimSize(2);
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
    } else if (auto constant = dyn_cast<ConstantOp>(op)) {
      if (isa<FloatType>(constant.getType().getElementType()))
        cost.weightBytes += keptBytes(constant.getResult());
    }
  });
  for (auto func : module.getOps<func::FuncOp>())
    cost.activationBytes = std::max(cost.activationBytes, peakLiveBytes(func));
  cost.seconds = cost.flops / (model.deviceGflops * 1e9) + seconds +
                 cost.collectives * model.collectiveLatencyUs * 1e-6;
  return cost;
}

SmallVector<PlanCandidate> loom::evaluatePlans(
    ModuleOp module, int64_t devices, const CostModel &model,
    function_ref<LogicalResult(ModuleOp, const PartitionOptions &)> partition,
    std::optional<size_t> &chosen) {
  SmallVector<PlanCandidate> candidates;
  std::optional<size_t> best;
  for (PartitionOptions &options : candidatePlans(devices)) {
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
      candidate.reason = "tensor parallelism would span nodes (tp=" +
                         std::to_string(tp) + ", " +
                         std::to_string(model.devicesPerNode) +
                         " devices per node)";
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
  os << "chosen: " << gridString(candidates[*chosen].options)
     << (candidates[*chosen].options.sequenceParallel
             ? " sequence-parallel=true"
             : "");
  return text;
}
