//===- LoomOps.td - The loom dialect's ops -----------------*- tablegen -*-===//
//
// One file per family of ops; this one collects them for ODS.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_IR_LOOMOPS_TD
#define LOOM_DIALECT_LOOM_IR_LOOMOPS_TD

include "loom/Dialect/Loom/IR/LoomControlFlowOps.td"
include "loom/Dialect/Loom/IR/LoomElementwiseOps.td"
include "loom/Dialect/Loom/IR/LoomFusionOps.td"
include "loom/Dialect/Loom/IR/LoomNNOps.td"
include "loom/Dialect/Loom/IR/LoomPipelineOps.td"
include "loom/Dialect/Loom/IR/LoomQuantOps.td"
include "loom/Dialect/Loom/IR/LoomReductionOps.td"
include "loom/Dialect/Loom/IR/LoomShapeOps.td"
include "loom/Dialect/Loom/IR/LoomVisionOps.td"

#endif // LOOM_DIALECT_LOOM_IR_LOOMOPS_TD
