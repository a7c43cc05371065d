//===- Planner.h - Choosing a partitioning plan -----------------*- C++ -*-===//
//
// `-loom-partition="plan=auto devices=N"`: partitions a copy of the program
// for every grid of N devices, measures each with a cost model, reports
// them, and picks the cheapest.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_SHARDING_PLANNER_H
#define LOOM_DIALECT_LOOM_SHARDING_PLANNER_H

#include "loom/Dialect/Loom/Sharding/Partition.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>
#include <string>

namespace loom {

/// What a device and its links can do, for estimates.
struct CostModel {
  /// Sustained compute per device.
  double deviceGflops = 100.0;
  /// Bandwidth of a device's memory (weights and caches are read at it).
  double memoryGBps = 20.0;
  /// Bandwidth of one device's link to the devices of its node, and
  /// between nodes: a collective whose group holds more devices than a node
  /// runs at the inter-node rate.
  double linkGBps = 10.0;
  double interNodeGBps = 2.5;
  int64_t devicesPerNode = 8;
  /// Memory per device; plans needing more are rejected.
  int64_t deviceMemory = int64_t(80) << 30;
  /// Fixed cost of one collective.
  double collectiveLatencyUs = 5.0;
};

/// The measured cost of one partitioned program, per device.
struct PlanCost {
  double flops = 0;
  /// Bytes a device sends for its collectives (ring algorithms).
  double commBytes = 0;
  int64_t collectives = 0;
  /// Bytes of weights a device keeps (its pieces of the constants).
  double weightBytes = 0;
  /// The most bytes of intermediate values alive at once on a device (local
  /// shapes, program order), and the bytes of the keys and values its
  /// attention ops read (the KV cache of a decoder step).
  double activationBytes = 0;
  double kvCacheBytes = 0;
  double memoryBytes() const {
    return weightBytes + activationBytes + kvCacheBytes;
  }
  double seconds = 0;
};

/// One plan the planner tried.
struct PlanCandidate {
  PartitionOptions options;
  /// Set when the plan applies; otherwise `reason` says why not.
  std::optional<PlanCost> cost;
  std::string reason;
};

/// The grid of `options` as `-loom-partition` spells it ("dp=2,tp=2").
std::string gridString(const PartitionOptions &options);

/// The plans for `devices` devices: every way to write `devices` as
/// dp * cp * tp * pp (* ep with `experts`, for programs with loom.moe):
/// with tp, with and without sequence parallelism; with pp, with one
/// micro-batch and with pp of them.
llvm::SmallVector<PartitionOptions> candidatePlans(int64_t devices,
                                                   bool experts = false);

/// Measures a partitioned module: matmul and attention FLOPs and the bytes
/// of every collective at their local shapes, and the weights kept.
PlanCost measurePartitioned(mlir::ModuleOp module, const CostModel &model);

/// Partitions a copy of `module` with every candidate (`partition` runs the
/// partitioning on the copy), measures the ones that apply and returns them
/// all; `chosen` is the index of the cheapest (fewest collectives on a tie),
/// unset when none applies.
llvm::SmallVector<PlanCandidate>
evaluatePlans(mlir::ModuleOp module, int64_t devices, const CostModel &model,
              llvm::function_ref<mlir::LogicalResult(mlir::ModuleOp,
                                                     const PartitionOptions &)>
                  partition,
              std::optional<size_t> &chosen);

/// What `plan=auto` searches: the devices, what they can do, and the
/// options every candidate shares.
struct AutoPlanRequest {
  int64_t devices = 0;
  /// Decoders: the cluster planner's analytic ranking, checked by
  /// partitioning its best grids (`Analytic`), or every grid partitioned
  /// and measured (`Trials`, what other programs always get).
  enum class Search { Analytic, Trials } search = Search::Analytic;
  CostModel model;
  /// ZeRO weights (with a dp axis) and the MoE capacity factor of every
  /// candidate.
  bool shardWeights = false;
  double capacityFactor = 0.0;
};

/// The plan for `request.devices` devices. A decoder (recognizeDecoder)
/// with `Search::Analytic`: the cluster planner ranks every dp x tp x pp
/// grid for the program's call, and the best grids are partitioned in that
/// order until one applies; `report` shows the ranking and, for the grid
/// chosen, the weights and collective bytes the partitioned program holds
/// next to the planner's predictions. Otherwise: partitions a copy of
/// `module` for every candidate plan (partitionModule), measures them and
/// returns the cheapest; `report` receives the table of all of them. Fails
/// with a diagnostic (carrying the table) when none applies or the request
/// is invalid.
mlir::FailureOr<PartitionOptions> choosePlan(mlir::ModuleOp module,
                                             const AutoPlanRequest &request,
                                             std::string &report);

/// choosePlan's decoder path: none (with `notDecoder` saying why) when
/// `module` is not a decoder the cluster planner can describe; otherwise
/// the chosen grid, or a failure with a diagnostic when no ranked grid fits
/// and applies.
std::optional<mlir::FailureOr<PartitionOptions>>
chooseDecoderPlan(mlir::ModuleOp module, const AutoPlanRequest &request,
                  std::string &report, std::string &notDecoder);

/// A table of the candidates for `devices` devices, the chosen one marked.
std::string formatPlanReport(llvm::ArrayRef<PlanCandidate> candidates,
                             std::optional<size_t> chosen,
                             const CostModel &model, int64_t devices);

} // namespace loom

#endif // LOOM_DIALECT_LOOM_SHARDING_PLANNER_H
