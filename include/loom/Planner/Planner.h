//===- Planner.h - Choosing parallel degrees with a cost model --*- C++ -*-===//
//
// The planner behind -loom-plan: what a program costs (ModelCost, measured
// from the IR), what a machine offers (Machine), and the estimate of every
// dp x tp x pp grid of it (PlanEstimate), so that tests and tools can check
// each figure.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_PLANNER_PLANNER_H
#define LOOM_PLANNER_PLANNER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <vector>

namespace loom {

/// What one forward step of a program costs, measured from its IR.
struct ModelCost {
  /// Bytes of all constants (the weights).
  int64_t weightBytes = 0;
  /// Bytes of the constants that tensor parallelism splits: the weights of
  /// matmuls with a constant 2-D right operand.
  int64_t splittableWeightBytes = 0;
  /// 2 * multiply-adds of matmuls, convolutions and attention.
  double flops = 0;
  /// The most bytes of intermediate values alive at once, in program order.
  int64_t peakActivationBytes = 0;
  /// Bytes of the keys and values attention ops read (the KV cache of a
  /// decoder step).
  int64_t kvCacheBytes = 0;
  /// Tensor-parallel blocks (attention ops, and MLPs: pairs of projections)
  /// and the bytes of one block's output (each block ends in an
  /// all-reduce of that size under tensor parallelism).
  int64_t blocks = 0;
  int64_t blockOutputBytes = 0;
  /// The smallest number of attention heads (key/value heads for grouped
  /// queries) and hidden size that tensor parallelism must divide; 0 when
  /// the program has none.
  int64_t heads = 0;
  int64_t hiddenSize = 0;
  /// The batch (dimension 0 of the first input) data parallelism splits.
  int64_t batch = 1;
  /// Ops in program order that a pipeline could be cut between.
  int64_t layers = 0;
};

/// Measures `module`'s entry function (@main or its only function).
ModelCost measureModel(mlir::ModuleOp module);

struct Machine {
  int64_t devices = 1;
  int64_t deviceMemory = int64_t(80) << 30;
  double deviceFlops = 1e14;
  double intraBandwidth = 4e11;
  double interBandwidth = 2.5e10;
  int64_t devicesPerNode = 8;
  int64_t microBatches = 4;
  bool tpAcrossNodes = false;
};

struct PlanEstimate {
  int64_t dp = 1, tp = 1, pp = 1;
  /// Per device.
  int64_t weightBytes = 0, activationBytes = 0, kvCacheBytes = 0;
  int64_t memoryBytes() const {
    return weightBytes + activationBytes + kvCacheBytes;
  }
  /// Bytes each device sends per step: all-reduces (ring: 2 (tp-1)/tp of
  /// the block output per block) and pipeline sends (one boundary
  /// activation per micro-batch per stage boundary).
  int64_t allReduceBytes = 0, sendBytes = 0;
  double computeSeconds = 0, communicationSeconds = 0, bubbleSeconds = 0;
  double stepSeconds() const {
    return computeSeconds + communicationSeconds + bubbleSeconds;
  }
  /// Empty when the plan is feasible; else why not.
  std::string rejected;
};

/// Every dp x tp x pp grid of `machine.devices`, estimated, feasible ones
/// first by step time.
std::vector<PlanEstimate> estimatePlans(const ModelCost &cost,
                                        const Machine &machine);

/// The report -loom-plan prints.
void printPlanReport(llvm::raw_ostream &os, const ModelCost &cost,
                     const Machine &machine,
                     const std::vector<PlanEstimate> &plans);

#define GEN_PASS_DECL
#include "loom/Planner/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "loom/Planner/Passes.h.inc"

} // namespace loom

#endif // LOOM_PLANNER_PLANNER_H
