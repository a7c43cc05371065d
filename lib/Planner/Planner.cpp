//===- Planner.cpp - Choosing parallel degrees with a cost model ----------===//
//
// A deliberately small cost model, every rule of which is stated in
// docs/planner.md so that its figures can be checked by hand:
//
//   weights/device     = (splittable / tp + other weights) / pp
//   activations/device = peak live activation bytes / dp
//   KV cache/device    = KV bytes / (dp * min(tp, kv heads) * pp)
//   compute            = FLOPs / (dp * tp * pp) / device FLOP/s
//   bubble (GPipe)     = compute * (pp - 1) / micro-batches
//   all-reduce bytes   = blocks * block output / dp * 2 (tp - 1) / tp
//   send bytes         = block output / dp            (when pp > 1)
//   communication      = all-reduce bytes / B_tp + send bytes / B_pp
//
// with B_tp the intra-node bandwidth while tp fits a node, B_pp the
// intra-node bandwidth while tp * pp fits a node, else the inter-node one.
//
//===----------------------------------------------------------------------===//

#include "loom/Planner/Planner.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Format.h"

#include <algorithm>
#include <tuple>
#include <numeric>

namespace loom {
#define GEN_PASS_DEF_LOOMPLANPASS
#include "loom/Planner/Passes.h.inc"
} // namespace loom

using namespace mlir;
using namespace loom;

namespace {

int64_t bytesOf(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return 0;
  unsigned bits = tensor.getElementType().isIntOrFloat()
                      ? tensor.getElementType().getIntOrFloatBitWidth()
                      : 64;
  return tensor.getNumElements() * std::max<int64_t>(1, (bits + 7) / 8);
}

int64_t elementsOf(Value v) {
  auto tensor = cast<RankedTensorType>(v.getType());
  return tensor.hasStaticShape() ? tensor.getNumElements() : 0;
}

bool isConstant(Value v) { return matchPattern(v, m_Constant()); }

func::FuncOp entryOf(ModuleOp module) {
  if (auto main = module.lookupSymbol<func::FuncOp>("main"))
    return main;
  auto funcs = module.getOps<func::FuncOp>();
  return std::distance(funcs.begin(), funcs.end()) == 1 ? *funcs.begin()
                                                         : nullptr;
}

std::string grid(const PlanEstimate &p) {
  return "dp=" + std::to_string(p.dp) + ",tp=" + std::to_string(p.tp) +
         ",pp=" + std::to_string(p.pp);
}

} // namespace

ModelCost loom::measureModel(ModuleOp module) {
  ModelCost cost;
  func::FuncOp func = entryOf(module);
  if (!func || func.getBody().empty())
    return cost;
  Block &body = func.getBody().front();
  if (func.getNumArguments() > 0)
    if (auto t = dyn_cast<RankedTensorType>(func.getArgument(0).getType());
        t && t.getRank() > 0 && !t.isDynamicDim(0))
      cost.batch = t.getDimSize(0);

  int64_t attentions = 0, weightMatmuls = 0, lastMatmulBytes = 0;
  int64_t attentionOutputBytes = 0, hiddenGcd = 0;
  for (Operation &op : body) {
    if (auto c = dyn_cast<ConstantOp>(op)) {
      cost.weightBytes += bytesOf(c.getType());
      continue;
    }
    if (auto mm = dyn_cast<MatMulOp>(op)) {
      auto out = cast<RankedTensorType>(mm.getType());
      auto lhs = cast<RankedTensorType>(mm.getLhs().getType());
      int64_t k = lhs.getShape().back();
      cost.flops += 2.0 * elementsOf(mm.getResult()) * k;
      if (isConstant(mm.getRhs()) &&
          cast<RankedTensorType>(mm.getRhs().getType()).getRank() == 2) {
        ++weightMatmuls;
        cost.splittableWeightBytes += bytesOf(mm.getRhs().getType());
        lastMatmulBytes = bytesOf(out);
        hiddenGcd = std::gcd(hiddenGcd, out.getShape().back());
      }
    } else if (auto conv = dyn_cast<ConvOp>(op)) {
      auto w = cast<RankedTensorType>(conv.getWeight().getType());
      int64_t perOutput = 1;
      for (int64_t d : w.getShape().drop_front())
        perOutput *= d;
      cost.flops += 2.0 * elementsOf(conv.getResult()) * perOutput;
    } else if (auto attention = dyn_cast<AttentionOp>(op)) {
      auto q = cast<RankedTensorType>(attention.getQuery().getType());
      auto k = cast<RankedTensorType>(attention.getKey().getType());
      if (q.getRank() == 4 && k.getRank() == 4) {
        cost.flops += 4.0 * q.getDimSize(0) * q.getDimSize(1) *
                      q.getDimSize(2) * k.getDimSize(2) * q.getDimSize(3);
        int64_t heads = q.getDimSize(1);
        cost.heads = cost.heads ? std::min(cost.heads, heads) : heads;
      }
      ++attentions;
      cost.kvCacheBytes += bytesOf(attention.getKey().getType()) +
                           bytesOf(attention.getValue().getType());
      attentionOutputBytes =
          std::max(attentionOutputBytes, bytesOf(attention.getType()));
    }
  }
  // Megatron blocks: each attention, and each MLP of two (or, gated, three)
  // projections beyond the four projections of every attention.
  int64_t mlpBlocks = std::max<int64_t>(0, weightMatmuls - 4 * attentions) / 2;
  cost.blocks = attentions + mlpBlocks;
  cost.blockOutputBytes = attentions ? attentionOutputBytes : lastMatmulBytes;
  cost.hiddenSize = hiddenGcd;
  cost.layers = std::max<int64_t>({attentions, mlpBlocks, 1});

  // Peak of live intermediate values, in program order: a value lives from
  // its definition to its last use in the function's block.
  llvm::DenseMap<Operation *, int64_t> position;
  int64_t index = 0;
  for (Operation &op : body)
    position[&op] = index++;
  std::vector<int64_t> freedAt(index + 1, 0);
  int64_t live = 0;
  index = 0;
  for (Operation &op : body) {
    live -= freedAt[index];
    if (!isa<ConstantOp>(op))
      for (Value result : op.getResults()) {
        int64_t last = index;
        for (Operation *user : result.getUsers()) {
          Operation *top = body.findAncestorOpInBlock(*user);
          if (top)
            last = std::max(last, position[top]);
        }
        int64_t bytes = bytesOf(result.getType());
        live += bytes;
        freedAt[last + 1] += bytes;
      }
    cost.peakActivationBytes = std::max(cost.peakActivationBytes, live);
    ++index;
  }
  return cost;
}

std::vector<PlanEstimate> loom::estimatePlans(const ModelCost &cost,
                                              const Machine &m) {
  std::vector<PlanEstimate> plans;
  for (int64_t tp = 1; tp <= m.devices; ++tp) {
    if (m.devices % tp)
      continue;
    for (int64_t pp = 1; pp <= m.devices / tp; ++pp) {
      if ((m.devices / tp) % pp)
        continue;
      PlanEstimate p;
      p.tp = tp;
      p.pp = pp;
      p.dp = m.devices / (tp * pp);
      if (cost.batch % p.dp)
        p.rejected = "the batch (" + std::to_string(cost.batch) +
                     ") does not divide by dp=" + std::to_string(p.dp);
      else if (tp > 1 && cost.blocks == 0)
        p.rejected = "no tensor-parallel block (attention or MLP) to split";
      else if (tp > 1 && cost.heads && cost.heads % tp)
        p.rejected = std::to_string(cost.heads) +
                     " attention heads do not divide by tp=" +
                     std::to_string(tp);
      else if (tp > 1 && cost.hiddenSize % tp)
        p.rejected = "projection widths (gcd " +
                     std::to_string(cost.hiddenSize) +
                     ") do not divide by tp=" + std::to_string(tp);
      else if (tp > m.devicesPerNode && !m.tpAcrossNodes)
        p.rejected = "tensor parallelism would span nodes (" +
                     std::to_string(m.devicesPerNode) + " devices per node)";
      else if (pp > cost.layers)
        p.rejected = "only " + std::to_string(cost.layers) +
                     " layer(s) to cut into " + std::to_string(pp) + " stages";

      int64_t other = cost.weightBytes - cost.splittableWeightBytes;
      p.weightBytes = (cost.splittableWeightBytes / tp + other) / pp;
      p.activationBytes = cost.peakActivationBytes / p.dp;
      int64_t kvSplit = cost.heads ? std::min(tp, cost.heads) : 1;
      p.kvCacheBytes = cost.kvCacheBytes / (p.dp * kvSplit * pp);
      if (p.rejected.empty() && p.memoryBytes() > m.deviceMemory)
        p.rejected = "needs " + std::to_string(p.memoryBytes()) +
                     " bytes per device, has " +
                     std::to_string(m.deviceMemory);

      int64_t microBatches =
          std::max<int64_t>(1, std::min(m.microBatches, cost.batch / p.dp));
      p.computeSeconds = cost.flops / double(m.devices) / m.deviceFlops;
      p.bubbleSeconds = pp > 1 ? p.computeSeconds * (pp - 1) / microBatches : 0;
      if (tp > 1)
        p.allReduceBytes = cost.blocks * (cost.blockOutputBytes / p.dp) *
                           2 * (tp - 1) / tp;
      if (pp > 1)
        p.sendBytes = cost.blockOutputBytes / p.dp;
      double tpBandwidth =
          tp <= m.devicesPerNode ? m.intraBandwidth : m.interBandwidth;
      double ppBandwidth =
          tp * pp <= m.devicesPerNode ? m.intraBandwidth : m.interBandwidth;
      p.communicationSeconds =
          p.allReduceBytes / tpBandwidth + p.sendBytes / ppBandwidth;
      plans.push_back(p);
    }
  }
  // Feasible first, then by step time, memory, and the grid itself (a total
  // order: the report does not depend on the sort's stability).
  std::sort(plans.begin(), plans.end(),
            [](const PlanEstimate &a, const PlanEstimate &b) {
              if (a.rejected.empty() != b.rejected.empty())
                return a.rejected.empty();
              if (a.stepSeconds() != b.stepSeconds())
                return a.stepSeconds() < b.stepSeconds();
              if (a.memoryBytes() != b.memoryBytes())
                return a.memoryBytes() < b.memoryBytes();
              return std::make_tuple(a.dp, a.tp, a.pp) <
                     std::make_tuple(b.dp, b.tp, b.pp);
            });
  return plans;
}

void loom::printPlanReport(raw_ostream &os, const ModelCost &c,
                           const Machine &m,
                           const std::vector<PlanEstimate> &plans) {
  os << "loom-plan: model: weights " << c.weightBytes << " B (splittable "
     << c.splittableWeightBytes << " B), "
     << llvm::format("%.4g", c.flops) << " FLOP per step, peak activations "
     << c.peakActivationBytes << " B, KV cache " << c.kvCacheBytes
     << " B, batch " << c.batch << ", " << c.blocks
     << " tensor-parallel block(s) with " << c.blockOutputBytes
     << " B outputs, " << c.heads << " heads, projection width gcd "
     << c.hiddenSize << ", " << c.layers << " layer(s)\n";
  os << "loom-plan: machine: " << m.devices << " devices, "
     << m.devicesPerNode << " per node, " << m.deviceMemory
     << " B each, " << llvm::format("%.3g", m.deviceFlops)
     << " FLOP/s, intra-node " << llvm::format("%.3g", m.intraBandwidth)
     << " B/s, inter-node " << llvm::format("%.3g", m.interBandwidth)
     << " B/s, " << m.microBatches << " micro-batches\n";
  os << llvm::format("%-16s %12s %12s %12s %12s %12s %10s %12s\n", "plan",
                     "weights B", "activ. B", "KV B", "all-red. B", "send B",
                     "comm. s", "step s");
  for (const PlanEstimate &p : plans) {
    os << llvm::format("%-16s %12lld %12lld %12lld %12lld %12lld %10.3g "
                       "%12.4g",
                       grid(p).c_str(), (long long)p.weightBytes,
                       (long long)p.activationBytes,
                       (long long)p.kvCacheBytes,
                       (long long)p.allReduceBytes, (long long)p.sendBytes,
                       p.communicationSeconds, p.stepSeconds());
    os << (p.rejected.empty() ? "" : "  rejected: " + p.rejected) << "\n";
  }
  if (plans.empty() || !plans.front().rejected.empty()) {
    os << "loom-plan: no feasible plan\n";
    return;
  }
  const PlanEstimate &best = plans.front();
  os << "loom-plan: chosen " << grid(best) << ": the fastest estimated step ("
     << llvm::format("%.4g", best.stepSeconds()) << " s: compute "
     << llvm::format("%.3g", best.computeSeconds) << " s, communication "
     << llvm::format("%.3g", best.communicationSeconds) << " s, bubble "
     << llvm::format("%.3g", best.bubbleSeconds) << " s) of "
     << llvm::count_if(plans,
                       [](const PlanEstimate &p) { return p.rejected.empty(); })
     << " feasible plan(s)";
  if (plans.size() > 1 && plans[1].rejected.empty())
    os << "; next " << grid(plans[1]) << " at "
       << llvm::format("%.4g", plans[1].stepSeconds()) << " s";
  os << "\n";
}

namespace {

struct LoomPlanPass : loom::impl::LoomPlanPassBase<LoomPlanPass> {
  using LoomPlanPassBase::LoomPlanPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (devices < 1 || devicesPerNode < 1 || microBatches < 1 ||
        deviceMemory <= 0 || deviceFlops <= 0 || intraBandwidth <= 0 ||
        interBandwidth <= 0) {
      module.emitError("loom-plan: devices, devices-per-node, micro-batches, "
                       "memory, FLOP/s and bandwidths must be positive");
      return signalPassFailure();
    }
    if (!entryOf(module)) {
      module.emitError("loom-plan: needs @main or a single function");
      return signalPassFailure();
    }
    Machine machine{devices,        deviceMemory,   deviceFlops,
                    intraBandwidth, interBandwidth, devicesPerNode,
                    microBatches,   tpAcrossNodes};
    ModelCost cost = measureModel(module);
    std::vector<PlanEstimate> plans = estimatePlans(cost, machine);
    printPlanReport(llvm::errs(), cost, machine, plans);
    if (plans.empty() || !plans.front().rejected.empty()) {
      module.emitError("loom-plan: no plan fits the machine (see the report)");
      return signalPassFailure();
    }
    const PlanEstimate &best = plans.front();
    module->setAttr("loom.plan",
                    StringAttr::get(module.getContext(), grid(best)));
    if (!apply)
      return;
    if (best.pp > 1) {
      module.emitError("loom-plan: the chosen plan has pipeline stages, "
                       "which -loom-partition does not build yet");
      return signalPassFailure();
    }
    std::string axes;
    if (best.dp > 1)
      axes += "dp=" + std::to_string(best.dp);
    if (best.tp > 1)
      axes += (axes.empty() ? "" : ",") + std::string("tp=") +
              std::to_string(best.tp);
    if (axes.empty())
      return;
    OpPassManager pm(ModuleOp::getOperationName());
    LoomPartitionPassOptions partition;
    partition.grid = axes;
    pm.addPass(createLoomPartitionPass(partition));
    if (failed(runPipeline(pm, module)))
      signalPassFailure();
  }
};

} // namespace
