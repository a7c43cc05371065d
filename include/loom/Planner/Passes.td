//===- Passes.td - Parallelism planner ---------------------*- tablegen -*-===//

#ifndef LOOM_PLANNER_PASSES_TD
#define LOOM_PLANNER_PASSES_TD

include "mlir/Pass/PassBase.td"

def LoomPlanPass : Pass<"loom-plan", "::mlir::ModuleOp"> {
  let summary = "Choose data, tensor and pipeline parallel degrees with a "
                "cost model and report why";
  let description = [{
    Measures the program (weight bytes, FLOPs, the peak of live activation
    bytes, the KV cache of its attention ops, the activations crossing each
    tensor-parallel block and pipeline stage boundary), enumerates every
    grid `dp x tp x pp` of `devices` devices that the model's shapes allow,
    and estimates for each the memory per device and the step time (compute
    at `device-flops`, collectives at the intra- or inter-node bandwidth).
    It prints a report (per-device memory split into weights, activations
    and KV cache; bytes per collective per step; estimated time; why each
    rejected plan lost) and records the choice as the module attribute
    `loom.plan` ("dp=2,tp=4,pp=1"). With `apply=true` and `pp=1`, it then
    partitions the program with -loom-partition.

    Tensor parallelism stays inside a node (`devices-per-node`) unless
    `tp-across-nodes=true`.
  }];
  let options = [
    Option<"devices", "devices", "int64_t", /*default=*/"1",
           "Number of devices">,
    Option<"deviceMemory", "device-memory", "int64_t",
           /*default=*/"int64_t(80) << 30", "Memory per device in bytes">,
    Option<"deviceFlops", "device-flops", "double", /*default=*/"1e14",
           "Sustained FLOP/s of one device">,
    Option<"intraBandwidth", "intra-bandwidth", "double", /*default=*/"4e11",
           "Bytes/s between devices of one node">,
    Option<"interBandwidth", "inter-bandwidth", "double", /*default=*/"2.5e10",
           "Bytes/s between nodes">,
    Option<"devicesPerNode", "devices-per-node", "int64_t", /*default=*/"8",
           "Devices in one node">,
    Option<"microBatches", "micro-batches", "int64_t", /*default=*/"4",
           "Micro-batches per step with pipeline parallelism (GPipe)">,
    Option<"tpAcrossNodes", "tp-across-nodes", "bool", /*default=*/"false",
           "Allow tensor parallelism to span nodes">,
    Option<"apply", "apply", "bool", /*default=*/"false",
           "Partition the program with the chosen plan (pp=1 only)">,
  ];
  let dependentDialects = ["::loom::LoomDialect",
                           "::mlir::shard::ShardDialect"];
}

#endif // LOOM_PLANNER_PASSES_TD
