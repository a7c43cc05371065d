//===- DecoderPlanner.cpp - plan=auto for decoders, by the cluster planner ===//
//
// A decoder's grid is chosen the way loom-plan chooses a cluster's: the
// analytic model (loom/ClusterPlanner) ranks every dp x tp x pp grid for
// the program's call, without partitioning anything. Only the ranking's
// best grids are partitioned, in order, until the partitioner builds one;
// that program is measured, and its weights and collective bytes are
// printed next to the prediction, so every plan=auto compile checks the
// planner's formulas on the program it partitions.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/Sharding/DecoderShape.h"
#include "loom/Dialect/Loom/Sharding/Planner.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <vector>

using namespace mlir;

namespace loom {
namespace {

/// A device described by the cost model, in the cluster planner's terms.
/// Engines plan their memory statically: no runtime reserve, no
/// fragmentation.
plan::Cluster clusterOf(const AutoPlanRequest &request) {
  const CostModel &model = request.model;
  plan::Cluster cluster;
  cluster.gpu.name = "device";
  cluster.gpu.bf16Flops = model.deviceGflops * 1e9;
  cluster.gpu.memoryBytes = double(model.deviceMemory);
  cluster.gpu.memoryBandwidth = model.memoryGBps * 1e9;
  cluster.gpu.intraNodeBandwidth = model.linkGBps * 1e9;
  cluster.gpu.interNodeBandwidth = model.interNodeGBps * 1e9;
  cluster.gpu.intraNodeLatency = model.collectiveLatencyUs * 1e-6;
  cluster.gpu.interNodeLatency = model.collectiveLatencyUs * 1e-6;
  cluster.gpu.runtimeReserveBytes = 0;
  cluster.gpu.fragmentation = 0;
  cluster.gpu.sustainedShare = 1;
  cluster.gpu.gemmWidthKnee = 0;
  cluster.gpu.gemmTokensKnee = 0;
  cluster.gpus = request.devices;
  cluster.gpusPerNode = std::min(model.devicesPerNode, request.devices);
  return cluster;
}

double part(const plan::Parts &parts, llvm::StringRef name) {
  for (const auto &[key, value] : parts)
    if (key == name)
      return value;
  return 0;
}

std::string percent(double measured, double predicted) {
  if (predicted == 0)
    return measured == 0 ? "equal" : "predicted none";
  return llvm::formatv("{0:+0.0;-0.0} %",
                       100.0 * (predicted - measured) / std::max(measured, 1.0))
      .str();
}

/// The partitioner's options for a dp x tp x pp grid (axes of size 1
/// left out).
PartitionOptions optionsOf(const plan::Config &config,
                           const AutoPlanRequest &request) {
  PartitionOptions options;
  for (auto [name, size] :
       {std::make_pair("dp", config.dp), std::make_pair("tp", config.tp),
        std::make_pair("pp", config.pp)})
    if (size > 1)
      options.axes.push_back(GridAxisSpec{name, size});
  if (options.axes.empty())
    options.axes.push_back(GridAxisSpec{"dp", 1});
  options.shardWeights = request.shardWeights;
  options.capacityFactor = request.capacityFactor;
  return options;
}

/// What a device of a Loom engine sends in one call, in the ring
/// convention of loom_collective_stats: the planner's collectives (tp's
/// all-reduces and logits, the activation to the next stage: the first
/// stage's figure), and, because an engine returns every output on every
/// rank, the outputs gathered over dp (on the last stage) and broadcast
/// along the pipeline (every stage forwards (pp-1)/pp of them). The
/// busiest stage's figure.
double engineTraffic(const plan::Prediction &p, double outputBytes) {
  const plan::Config &c = p.config;
  double tp = part(p.traffic, "tp");
  double gathered = c.dp > 1 ? double(c.dp - 1) / c.dp * outputBytes : 0.0;
  double broadcast = c.pp > 1 ? double(c.pp - 1) / c.pp * outputBytes : 0.0;
  if (c.pp == 1)
    return tp + gathered;
  double first = tp + part(p.traffic, "pp") + broadcast;
  double last = tp + gathered + broadcast;
  return std::max(first, last);
}

struct Ranked {
  plan::Config config;
  std::optional<plan::Prediction> prediction;
  std::string reason;
};

} // namespace

std::optional<FailureOr<PartitionOptions>>
chooseDecoderPlan(ModuleOp module, const AutoPlanRequest &request,
                  std::string &report, std::string &notDecoder) {
  llvm::Expected<plan::ModelShape> shape =
      recognizeDecoder(module, "the program");
  if (!shape) {
    notDecoder = llvm::toString(shape.takeError());
    return std::nullopt;
  }
  llvm::Expected<DecoderCall> call = describeDecoderCall(module);
  if (!call) {
    notDecoder = "the decoder's call: " + llvm::toString(call.takeError());
    return std::nullopt;
  }
  plan::Cluster cluster = clusterOf(request);

  // Every dp x tp x pp grid; a replica (tp x pp devices) serves its share
  // of the batch.
  std::vector<Ranked> ranked;
  for (int64_t tp = 1; tp <= request.devices; ++tp) {
    if (request.devices % tp)
      continue;
    for (int64_t pp = 1; pp <= request.devices / tp; ++pp) {
      if ((request.devices / tp) % pp)
        continue;
      Ranked r;
      r.config.tp = tp, r.config.pp = pp;
      r.config.dp = request.devices / (tp * pp);
      if (call->batch % r.config.dp) {
        r.reason = llvm::formatv("dp={0} does not divide the batch ({1})",
                                 r.config.dp, call->batch);
        ranked.push_back(std::move(r));
        continue;
      }
      plan::Workload w;
      w.mode = plan::Mode::Serve;
      w.servingBatch = call->batch / r.config.dp;
      w.queryTokens = call->queryTokens;
      w.promptTokens = call->queryTokens;
      w.seqLen = call->keyTokens;
      w.valueBytes = call->valueBytes;
      w.stagesByFlops = true;
      w.servingWeightBytes =
          call->parameters > 0
              ? std::max<int64_t>(
                    1, std::lround(call->parameterBytes / call->parameters))
              : 4;
      plan::Prediction p = plan::evaluate(*shape, cluster, w, r.config);
      if (!p.invalid.empty())
        r.reason = p.invalid;
      else
        r.prediction = std::move(p);
      ranked.push_back(std::move(r));
    }
  }
  // Fitting grids by step time (within 0.5 %, fewer devices per replica);
  // then those that do not fit, least memory first; then the inapplicable.
  // An insertion sort: stable, and safe with a tolerance in the order
  // (which is not a strict weak ordering); there are few grids.
  auto before = [](const Ranked &a, const Ranked &b) {
    if (a.prediction.has_value() != b.prediction.has_value())
      return a.prediction.has_value();
    if (!a.prediction)
      return false;
    const plan::Prediction &x = *a.prediction, &y = *b.prediction;
    if (x.fits != y.fits)
      return x.fits;
    if (!x.fits)
      return x.memoryBytes < y.memoryBytes;
    double ratio = x.stepSeconds / y.stepSeconds;
    if (ratio < 1 / 1.005 || ratio > 1.005)
      return ratio < 1;
    return x.config.tp * x.config.pp < y.config.tp * y.config.pp;
  };
  for (size_t i = 1; i < ranked.size(); ++i)
    for (size_t j = i; j > 0 && before(ranked[j], ranked[j - 1]); --j)
      std::swap(ranked[j], ranked[j - 1]);

  // The best fitting grids, partitioned in turn until one applies.
  std::optional<size_t> chosen;
  std::optional<PlanCost> measured;
  llvm::SmallVector<std::string> refused(ranked.size());
  for (auto [i, r] : llvm::enumerate(ranked)) {
    if (!r.prediction || !r.prediction->fits)
      break;
    PartitionOptions options = optionsOf(r.config, request);
    OwningOpRef<ModuleOp> copy = cast<ModuleOp>(module->clone());
    std::string diagnostics;
    LogicalResult partitioned = failure();
    {
      ScopedDiagnosticHandler capture(module.getContext(),
                                      [&](Diagnostic &diagnostic) {
                                        if (diagnostics.empty())
                                          diagnostics = diagnostic.str();
                                        return success();
                                      });
      partitioned = partitionModule(*copy, options);
    }
    if (failed(partitioned)) {
      refused[i] = "the partitioner refuses it: " + diagnostics;
      continue;
    }
    // The partitioner may split less than the planner assumes (a fused
    // projection it cannot split keeps its whole weight): with the weights
    // the program really keeps, the grid must still fit.
    PlanCost cost = measurePartitioned(*copy, request.model);
    double predictedWeights = part(r.prediction->memory, "parameters");
    double memory = r.prediction->memoryBytes - predictedWeights +
                    std::max(predictedWeights, cost.weightBytes);
    if (memory > double(request.model.deviceMemory)) {
      refused[i] = llvm::formatv("partitioned, it keeps {0} bytes of weights "
                                 "per device: {1} bytes in all do not fit",
                                 int64_t(cost.weightBytes), int64_t(memory));
      continue;
    }
    chosen = i;
    measured = cost;
    break;
  }

  const plan::ModelShape &m = *shape;
  const CostModel &cost = request.model;
  llvm::raw_string_ostream os(report);
  os << "partition plans for " << request.devices
     << " devices, ranked by the cluster planner (decoder: "
     << plan::describe(m) << "; call: batch " << call->batch << ", "
     << call->queryTokens << " new tokens, " << call->keyTokens << " keys, "
     << call->valueBytes << "-byte values; devices: "
     << llvm::format("%g GFLOP/s, %g GB/s memory, %g GB/s links in a node "
                     "of %lld, %g GB/s between nodes, %lld bytes",
                     cost.deviceGflops, cost.memoryGBps, cost.linkGBps,
                     (long long)cost.devicesPerNode, cost.interNodeGBps,
                     (long long)cost.deviceMemory)
     << "; per device):\n";
  os << llvm::format("  %-20s %5s %14s %14s %14s %12s\n", "plan", "fits",
                     "memory bytes", "weight bytes", "sent bytes",
                     "estimate us");
  for (auto [i, r] : llvm::enumerate(ranked)) {
    std::string grid = r.config.str(plan::Mode::Serve);
    const char *mark = chosen && *chosen == i ? "*" : " ";
    if (!r.prediction) {
      os << llvm::format("%s %-20s not applicable: %s\n", mark, grid.c_str(),
                         r.reason.c_str());
      continue;
    }
    const plan::Prediction &p = *r.prediction;
    os << llvm::format(
        "%s %-20s %5s %14.0f %14.0f %14.0f %12.2f", mark, grid.c_str(),
        p.fits ? "yes" : "no", p.memoryBytes, part(p.memory, "parameters"),
        engineTraffic(p, call->outputBytes), p.stepSeconds * 1e6);
    if (!refused[i].empty())
      os << "  (" << refused[i] << ")";
    os << "\n";
  }
  if (!chosen) {
    return FailureOr<PartitionOptions>(
        emitError(module.getLoc()) << "no partition plan fits or applies to "
                                   << request.devices << " devices:\n"
                                   << report);
  }
  const plan::Prediction &best = *ranked[*chosen].prediction;
  double predictedWeights = part(best.memory, "parameters");
  double predictedSent = engineTraffic(best, call->outputBytes);
  os << "checked on the partitioned program ("
     << best.config.str(plan::Mode::Serve) << "): weights "
     << llvm::format("%.0f", measured->weightBytes)
     << " bytes per device (predicted "
     << llvm::format("%.0f", predictedWeights) << ", "
     << percent(measured->weightBytes, predictedWeights)
     << "); collectives send " << llvm::format("%.0f", measured->commBytes)
     << " bytes per device (predicted " << llvm::format("%.0f", predictedSent)
     << ", " << percent(measured->commBytes, predictedSent) << ")\n";
  os << "chosen: " << best.config.str(plan::Mode::Serve);

  return FailureOr<PartitionOptions>(optionsOf(best.config, request));
}

} // namespace loom
