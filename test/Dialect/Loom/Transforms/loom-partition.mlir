// RUN: loom-opt %s -split-input-file --loom-partition="grid=tp=2" | FileCheck %s --check-prefix=TP
// RUN: loom-opt %s -split-input-file --loom-partition="grid=dp=2" | FileCheck %s --check-prefix=DP
// RUN: loom-opt %s -split-input-file --loom-partition="grid=dp=2,tp=2" | FileCheck %s --check-prefix=MIX
// RUN: loom-opt %s -split-input-file --loom-partition="grid=tp=2 sequence-parallel=true" | FileCheck %s --check-prefix=SP
// RUN: loom-opt %s -split-input-file --loom-partition="grid=cp=2" | FileCheck %s --check-prefix=CP
// RUN: not loom-opt %s -split-input-file --loom-partition="grid=cp=8" 2>&1 | FileCheck %s --check-prefix=CP8
// CP8: error: cp=8 does not divide the sequence dimension (4) of argument 0
// RUN: not loom-opt %s --loom-partition="grid=dp=2 sequence-parallel=true" 2>&1 | FileCheck %s --check-prefix=SPNOTP
// SPNOTP: error: sequence parallelism needs a tensor-parallel (tp) grid axis
// RUN: loom-opt %s -split-input-file --loom-partition="grid=dp=2,tp=2 zero=true" | FileCheck %s --check-prefix=ZERO
// RUN: not loom-opt %s --loom-partition="grid=tp=2 zero=true" 2>&1 | FileCheck %s --check-prefix=ZERONODP
// ZERONODP: error: weight sharding (zero) needs a data-parallel (dp) grid axis

// Degrees that do not divide what they split are errors.
// RUN: not loom-opt %s -split-input-file --loom-partition="grid=tp=3" 2>&1 | FileCheck %s --check-prefix=TP3
// TP3: error: tp=3 does not divide the MLP's hidden size 32
// TP3: error: tp=3 does not divide the attention's 4 query heads and 2 key/value heads
// RUN: not loom-opt %s -split-input-file --loom-partition="grid=dp=3" 2>&1 | FileCheck %s --check-prefix=DP3
// DP3: error: dp=3 does not divide the batch dimension (4) of argument 0
// DP3: error: dp=3 does not divide the batch dimension (2) of argument 0

// Odd programs: a batch known only at run time is sliced (engines check
// that it divides when they run) but loops of run-time size are not split
// yet, so it is gathered back; with tp (nothing to split) the functions,
// the external declaration, the 0-d and non-tensor values and the unused
// results are left as they are.
// RUN: loom-opt %S/Inputs/partition-odd.mlir --loom-partition="grid=dp=2" 2>&1 | FileCheck %s --check-prefix=DYN
// DYN-LABEL: func.func @dynamic
// DYN: shard.all_slice %arg0 on @grid grid_axes = [0] slice_axis = 0 : tensor<?x4xf32> -> tensor<?x4xf32>
// DYN: shard.all_gather %{{.*}} on @grid grid_axes = [0] gather_axis = 0 : tensor<?x4xf32> -> tensor<?x4xf32>
// RUN: loom-opt %S/Inputs/partition-odd.mlir --loom-partition="grid=tp=2" | FileCheck %s --check-prefix=ODD
// ODD-LABEL: func.func @dynamic(%{{.*}}: tensor<?x4xf32>, %{{.*}}: i64) -> tensor<?x4xf32>
// ODD-NEXT:  loom.relu %{{.*}} : tensor<?x4xf32>
// ODD-LABEL: func.func private @external
// ODD-LABEL: func.func @scalars
// ODD-NEXT:  loom.neg %{{.*}} : tensor<f32>
// ODD-NEXT:  loom.softmax %{{.*}} {axis = 1 : i64} : tensor<4x6xf32>
// Dead ops are dropped and unused results of a live op computed whole.
// ODD-LABEL: func.func @unused_results
// ODD-NEXT:  loom.split %{{.*}} -> tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>
// ODD-NEXT:  return
// ODD-NOT:   shard.all_
// An unused argument keeps its type; the used one is sliced by dp.
// RUN: loom-opt %S/Inputs/partition-unused.mlir --loom-partition="grid=dp=4" | FileCheck %s --check-prefix=UNUSED
// UNUSED:       func.func @unused(%{{.*}}: tensor<4x2xf32>, %[[B:.*]]: tensor<4x2xf32>) -> tensor<4x2xf32>
// UNUSED-NEXT:  shard.all_slice %[[B]] on @grid grid_axes = [0] slice_axis = 0 : tensor<4x2xf32> -> tensor<1x2xf32>

// The planner: every grid of 2 devices partitions a copy, the cost model
// reads each (per device: FLOPs, bytes sent by collectives, their number,
// weights kept, peak activations, KV cache), the remark reports them, and
// the cheapest is applied.
// RUN: loom-opt %s -split-input-file --loom-partition="plan=auto devices=2" 2>&1 | FileCheck %s --check-prefix=PLAN
// PLAN:      remark: partition plans for 2 devices (cost model: 100 GFLOP/s, 10 GB/s links in a node of 8, 2.5 GB/s between nodes, 85899345920 bytes per device, 5 us per collective; per device):
// PLAN-NEXT:   plan                          MFLOP     comm bytes collectives   weight bytes   activ. bytes     KV bytes  estimate us
// PLAN-NEXT:   tp=2                          0.003            128           1           1632            512            0         5.04
// PLAN-NEXT:   tp=2 +sp                      0.003            128           1           1632            512            0         5.04
// PLAN-NEXT:   cp=2                          0.004            512           1           2208           1024            0         5.09
// PLAN-NEXT: * dp=2                          0.003             64           1           3232            512            0         5.04
// PLAN-NEXT:   pp=2                          0.004            576           2           2048           1024            0        15.19
// PLAN-NEXT:   pp=2 m=2                      0.004            576           3           2048            512            0        20.14
// PLAN-NEXT: chosen: dp=2
// PLAN:      remark: partition plans for 2 devices
// PLAN:      chosen: dp=2
// PLAN:      shard.grid @grid(shape = 2)
// PLAN:      shard.all_slice %{{.*}} on @grid grid_axes = [0] slice_axis = 0 : tensor<4x16xf32> -> tensor<2x16xf32>
// With zero=true only plans with a dp axis apply.
// RUN: loom-opt %s -split-input-file --loom-partition="plan=auto devices=2 zero=true" 2>&1 | FileCheck %s --check-prefix=PLANZERO
// PLANZERO: tp=2                   not applicable: weight sharding (zero) needs a data-parallel (dp) grid axis
// PLANZERO: * dp=2
// PLANZERO: chosen: dp=2
// PLANZERO: shard.all_gather {{.*}} : tensor<8x32xf32> -> tensor<16x32xf32>
// The device and link figures are options.
// RUN: loom-opt %s -split-input-file --loom-partition="plan=auto devices=2 device-gflops=50 link-gbps=1000" 2>&1 | FileCheck %s --check-prefix=FIGURES
// FIGURES: (cost model: 50 GFLOP/s, 1000 GB/s links in a node of 8, 2.5 GB/s between nodes, 85899345920 bytes per device, 5 us per collective; per device)
// Plans that do not apply say why; when none does, that is an error.
// RUN: not loom-opt %s -split-input-file --loom-partition="plan=auto devices=3 device-memory=1000" 2>&1 | FileCheck %s --check-prefix=NOPLAN
// NOPLAN: error: no partition plan applies to 3 devices:
// NOPLAN:   tp=3                   not applicable: tp=3 does not divide the MLP's hidden size 32
// NOPLAN:   dp=3                   not applicable: dp=3 does not divide the batch dimension (4) of argument 0
// NOPLAN:   pp=3                   not applicable: needs 3072 bytes per device (weights, activations, KV cache), has 1000
// NOPLAN:   pp=3 m=3               not applicable: micro-batches=3 does not divide the batch dimension (4) of argument 0 of 'mlp'
// NOPLAN: none applies
// With 3 devices and memory enough, only a 3-stage pipeline applies.
// RUN: loom-opt %s -split-input-file --loom-partition="plan=auto devices=3" 2>&1 | FileCheck %s --check-prefix=PLAN3
// PLAN3: * pp=3
// PLAN3: chosen: pp=3
// RUN: not loom-opt %s --loom-partition="plan=auto" 2>&1 | FileCheck %s --check-prefix=BADPLAN
// RUN: not loom-opt %s --loom-partition="plan=auto devices=2 grid=tp=2" 2>&1 | FileCheck %s --check-prefix=BADPLAN
// RUN: not loom-opt %s --loom-partition="plan=fast devices=2" 2>&1 | FileCheck %s --check-prefix=BADPLAN
// BADPLAN: error: plan=auto (or plan=trials) needs devices=N (N >= 1) and no grid

// Malformed grids, and a second partitioning.
// RUN: not loom-opt %s --loom-partition 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: error: empty grid: expected name=degree pairs such as "dp=2,tp=2"
// RUN: not loom-opt %s --loom-partition="grid=tp=0" 2>&1 | FileCheck %s --check-prefix=DEGREE0
// DEGREE0: error: grid axis 'tp' needs a positive integer degree, got '0'
// RUN: not loom-opt %s --loom-partition="grid=tp" 2>&1 | FileCheck %s --check-prefix=NODEGREE
// NODEGREE: error: grid axis 'tp' needs a positive integer degree, got ''
// RUN: not loom-opt %s --loom-partition="grid=xp=2" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: unknown grid axis 'xp' in "xp=2"; known: dp cp tp
// RUN: not loom-opt %s --loom-partition="grid=tp=2,tp=2" 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: error: grid axis 'tp' given twice in "tp=2,tp=2"
// RUN: not loom-opt %s -split-input-file --loom-partition="grid=tp=2" --loom-partition="grid=tp=2" 2>&1 | FileCheck %s --check-prefix=AGAIN
// AGAIN: error: the module already has a device grid; it is partitioned once

// An MLP: the first projection is column-parallel (weight and bias sliced by
// columns), the second row-parallel; exactly one all-reduce. Inputs and
// results keep the unpartitioned types.
// TP:       shard.grid @grid(shape = 2)
// TP-LABEL: func.func @mlp(%{{.*}}: tensor<4x16xf32>) -> tensor<4x8xf32>
// TP:       %[[W1:.*]] = shard.all_slice %{{.*}} on @grid grid_axes = [0] slice_axis = 1 : tensor<16x32xf32> -> tensor<16x16xf32>
// TP:       %[[H:.*]] = loom.matmul %{{.*}}, %[[W1]] : tensor<4x16xf32>, tensor<16x16xf32> -> tensor<4x16xf32>
// TP:       %[[B1:.*]] = shard.all_slice %{{.*}} on @grid grid_axes = [0] slice_axis = 0 : tensor<32xf32> -> tensor<16xf32>
// TP:       loom.add %[[H]], %[[B1]] : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
// TP:       loom.gelu %{{.*}} : tensor<4x16xf32>
// TP:       %[[W2:.*]] = shard.all_slice %{{.*}} on @grid grid_axes = [0] slice_axis = 0 : tensor<32x8xf32> -> tensor<16x8xf32>
// TP:       %[[P:.*]] = loom.matmul %{{.*}}, %[[W2]] : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
// TP:       %[[S:.*]] = shard.all_reduce %[[P]] on @grid grid_axes = [0] : tensor<4x8xf32> -> tensor<4x8xf32>
// TP-NOT:   shard.all_
// TP:       return

// Data parallel: the batch is sliced once and gathered once; nothing
// communicates in between.
// DP:       shard.grid @grid(shape = 2)
// DP-LABEL: func.func @mlp
// DP:       shard.all_slice %{{.*}} on @grid grid_axes = [0] slice_axis = 0 : tensor<4x16xf32> -> tensor<2x16xf32>
// DP-NOT:   shard.all_
// DP:       %[[Y:.*]] = loom.add %{{.*}}, %{{.*}} : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
// DP-NEXT:  %[[G:.*]] = shard.all_gather %[[Y]] on @grid grid_axes = [0] gather_axis = 0 : tensor<2x8xf32> -> tensor<4x8xf32>
// DP-NEXT:  return %[[G]]

// Both on a 2x2 grid: the batch over axis 0, the hidden size over axis 1.
// MIX:       shard.grid @grid(shape = 2x2)
// MIX-LABEL: func.func @mlp
// MIX:       shard.all_slice %{{.*}} on @grid grid_axes = [0] slice_axis = 0 : tensor<4x16xf32> -> tensor<2x16xf32>
// MIX:       loom.matmul %{{.*}}, %{{.*}} : tensor<2x16xf32>, tensor<16x16xf32> -> tensor<2x16xf32>
// MIX:       %[[P:.*]] = loom.matmul %{{.*}}, %{{.*}} : tensor<2x16xf32>, tensor<16x8xf32> -> tensor<2x8xf32>
// MIX-NEXT:  shard.all_reduce %[[P]] on @grid grid_axes = [1] : tensor<2x8xf32> -> tensor<2x8xf32>
// MIX:       shard.all_gather %{{.*}} on @grid grid_axes = [0] gather_axis = 0 : tensor<2x8xf32> -> tensor<4x8xf32>
// ZeRO-style weights on a 2x2 grid: each weight is stored as its
// tensor-parallel piece further split over dp (a quarter of it per rank),
// and gathered over dp just before use.
// ZERO-LABEL: func.func @mlp
// ZERO:       %[[S0:.*]] = shard.all_slice %{{.*}} on @grid grid_axes = [0] slice_axis = 0 : tensor<16x32xf32> -> tensor<8x32xf32>
// ZERO-NEXT:  %[[S1:.*]] = shard.all_slice %[[S0]] on @grid grid_axes = [1] slice_axis = 1 : tensor<8x32xf32> -> tensor<8x16xf32>
// ZERO-NEXT:  %[[W1:.*]] = shard.all_gather %[[S1]] on @grid grid_axes = [0] gather_axis = 0 : tensor<8x16xf32> -> tensor<16x16xf32>
// ZERO-NEXT:  loom.matmul %{{.*}}, %[[W1]]
// ZERO:       %[[B1:.*]] = shard.all_gather %{{.*}} on @grid grid_axes = [0] gather_axis = 0 : tensor<8xf32> -> tensor<16xf32>
// ZERO-NEXT:  loom.add %{{.*}}, %[[B1]]
// ZERO:       %[[W2:.*]] = shard.all_gather %{{.*}} on @grid grid_axes = [0] gather_axis = 0 : tensor<8x8xf32> -> tensor<16x8xf32>
// ZERO-NEXT:  loom.matmul %{{.*}}, %[[W2]]
// ZERO-NEXT:  shard.all_reduce %{{.*}} on @grid grid_axes = [1]
// ZERO:       %[[B2:.*]] = shard.all_gather %{{.*}} on @grid grid_axes = [0] gather_axis = 0 : tensor<4xf32> -> tensor<8xf32>
// ZERO-NEXT:  loom.add %{{.*}}, %[[B2]]

// Sequence parallelism leaves 2-D activations (no sequence) alone.
// SP-LABEL: func.func @mlp
// SP:       shard.all_reduce
// SP-NOT:   shard.reduce_scatter
func.func @mlp(%x: tensor<4x16xf32>) -> tensor<4x8xf32> {
  %w1 = loom.constant dense<0.1> : tensor<16x32xf32>
  %b1 = loom.constant dense<0.2> : tensor<32xf32>
  %w2 = loom.constant dense<0.3> : tensor<32x8xf32>
  %b2 = loom.constant dense<0.4> : tensor<8xf32>
  %h0 = loom.matmul %x, %w1 : tensor<4x16xf32>, tensor<16x32xf32> -> tensor<4x32xf32>
  %h1 = loom.add %h0, %b1 : tensor<4x32xf32>, tensor<32xf32> -> tensor<4x32xf32>
  %h = loom.gelu %h1 : tensor<4x32xf32>
  %y0 = loom.matmul %h, %w2 : tensor<4x32xf32>, tensor<32x8xf32> -> tensor<4x8xf32>
  %y = loom.add %y0, %b2 : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// An attention block with grouped-query heads (4 query heads, 2 key/value
// heads): the projections are split by heads, the head reshapes get local
// shapes, attention runs on the local heads, and the output projection ends
// the block with its one all-reduce.
// TP-LABEL: func.func @attention_block
// TP:       %[[Q:.*]] = loom.transpose %{{.*}} {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x2x4xf32> -> tensor<2x2x4x4xf32>
// TP:       %[[KVSHAPE:.*]] = loom.constant dense<[2, 4, 1, 4]> : tensor<4xi64>
// TP:       loom.reshape %{{.*}}, %[[KVSHAPE]] : (tensor<2x4x4xf32>, tensor<4xi64>) -> tensor<2x4x1x4xf32>
// TP:       %[[A:.*]] = loom.attention %[[Q]], %{{.*}}, %{{.*}} {is_causal = true} : (tensor<2x2x4x4xf32>, tensor<2x1x4x4xf32>, tensor<2x1x4x4xf32>) -> tensor<2x2x4x4xf32>
// TP:       %[[M:.*]] = loom.reshape %{{.*}}, %{{.*}} : (tensor<2x4x2x4xf32>, tensor<3xi64>) -> tensor<2x4x8xf32>
// TP:       %[[O:.*]] = loom.matmul %[[M]], %{{.*}} : tensor<2x4x8xf32>, tensor<8x16xf32> -> tensor<2x4x16xf32>
// TP-NEXT:  %[[R:.*]] = shard.all_reduce %[[O]] on @grid grid_axes = [0] : tensor<2x4x16xf32> -> tensor<2x4x16xf32>
// TP-NEXT:  loom.add %{{.*}}, %[[R]]
// TP-NOT:   shard.all_
// TP:       return

// DP-LABEL: func.func @attention_block
// DP:       shard.all_slice
// DP-NOT:   shard.all_
// DP:       loom.attention %{{.*}} : (tensor<1x4x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x4x4x4xf32>
// DP-NOT:   shard.all_
// DP:       shard.all_gather
// DP-NEXT:  return

// MIX-LABEL: func.func @attention_block
// MIX:       loom.attention %{{.*}} : (tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32>
// MIX-COUNT-1: shard.all_reduce %{{.*}} on @grid grid_axes = [1]
// MIX-NOT:   shard.all_reduce
// Sequence parallelism: the block's all-reduce becomes a reduce-scatter
// along the sequence; the residual add runs on sequence shards (the
// replicated input is sliced locally) and the result is gathered.
// SP-LABEL: func.func @attention_block
// SP-NOT:   shard.all_reduce
// SP:       %[[RS:.*]] = shard.reduce_scatter %{{.*}} on @grid grid_axes = [0] scatter_axis = 1 : tensor<2x4x16xf32> -> tensor<2x2x16xf32>
// SP-NEXT:  %[[X:.*]] = shard.all_slice %{{.*}} on @grid grid_axes = [0] slice_axis = 1 : tensor<2x4x16xf32> -> tensor<2x2x16xf32>
// SP-NEXT:  %[[Y:.*]] = loom.add %[[X]], %[[RS]] : tensor<2x2x16xf32>, tensor<2x2x16xf32> -> tensor<2x2x16xf32>
// SP-NEXT:  %[[G:.*]] = shard.all_gather %[[Y]] on @grid grid_axes = [0] gather_axis = 1 : tensor<2x2x16xf32> -> tensor<2x4x16xf32>
// SP-NEXT:  return %[[G]]
// Context parallelism: the sequence is split; keys and values are gathered
// along the sequence before attention; the causal mask of the local queries
// uses their global positions (this rank's index times the local length).
// CP-LABEL: func.func @attention_block
// CP:       shard.all_slice %{{.*}} on @grid grid_axes = [0] slice_axis = 1 : tensor<2x4x16xf32> -> tensor<2x2x16xf32>
// CP:       %[[K:.*]] = shard.all_gather %{{.*}} on @grid grid_axes = [0] gather_axis = 2 : tensor<2x2x2x4xf32> -> tensor<2x2x4x4xf32>
// CP:       %[[V:.*]] = shard.all_gather %{{.*}} on @grid grid_axes = [0] gather_axis = 2 : tensor<2x2x2x4xf32> -> tensor<2x2x4x4xf32>
// CP:       %[[IDX:.*]] = shard.process_multi_index on @grid axes = [0] : index
// CP:       %[[I:.*]] = arith.index_cast %[[IDX]] : index to i64
// CP:       %[[LEN:.*]] = arith.constant 2 : i64
// CP:       %[[START:.*]] = arith.muli %[[I]], %[[LEN]] : i64
// CP:       %[[POS:.*]] = loom.add %{{.*}}, %{{.*}} : tensor<2x1xi64>, tensor<i64> -> tensor<2x1xi64>
// CP:       %[[KEYS:.*]] = loom.constant dense<[0, 1, 2, 3]> : tensor<4xi64>
// CP:       %[[MASK:.*]] = loom.less_equal %[[KEYS]], %[[POS]] : tensor<4xi64>, tensor<2x1xi64> -> tensor<2x4xi1>
// CP:       loom.attention %{{.*}}, %[[K]], %[[V]], %[[MASK]] : (tensor<2x4x2x4xf32>, tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>, tensor<2x4xi1>) -> tensor<2x4x2x4xf32>
// CP-NOT:   shard.all_
// CP:       shard.all_gather %{{.*}} on @grid grid_axes = [0] gather_axis = 1 : tensor<2x2x16xf32> -> tensor<2x4x16xf32>
// CP-NEXT:  return
func.func @attention_block(%x: tensor<2x4x16xf32>) -> tensor<2x4x16xf32> {
  %wq = loom.constant dense<0.1> : tensor<16x16xf32>
  %wk = loom.constant dense<0.2> : tensor<16x8xf32>
  %wv = loom.constant dense<0.3> : tensor<16x8xf32>
  %wo = loom.constant dense<0.4> : tensor<16x16xf32>
  %bq = loom.constant dense<0.5> : tensor<16xf32>
  %sq = loom.constant dense<[2, 4, 4, 4]> : tensor<4xi64>
  %skv = loom.constant dense<[2, 4, 2, 4]> : tensor<4xi64>
  %so = loom.constant dense<[2, 4, 16]> : tensor<3xi64>
  %q0 = loom.matmul %x, %wq : tensor<2x4x16xf32>, tensor<16x16xf32> -> tensor<2x4x16xf32>
  %q1 = loom.add %q0, %bq : tensor<2x4x16xf32>, tensor<16xf32> -> tensor<2x4x16xf32>
  %q2 = loom.reshape %q1, %sq : (tensor<2x4x16xf32>, tensor<4xi64>) -> tensor<2x4x4x4xf32>
  %q = loom.transpose %q2 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x4x4xf32> -> tensor<2x4x4x4xf32>
  %k0 = loom.matmul %x, %wk : tensor<2x4x16xf32>, tensor<16x8xf32> -> tensor<2x4x8xf32>
  %k1 = loom.reshape %k0, %skv : (tensor<2x4x8xf32>, tensor<4xi64>) -> tensor<2x4x2x4xf32>
  %k = loom.transpose %k1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x2x4xf32> -> tensor<2x2x4x4xf32>
  %v0 = loom.matmul %x, %wv : tensor<2x4x16xf32>, tensor<16x8xf32> -> tensor<2x4x8xf32>
  %v1 = loom.reshape %v0, %skv : (tensor<2x4x8xf32>, tensor<4xi64>) -> tensor<2x4x2x4xf32>
  %v = loom.transpose %v1 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x2x4xf32> -> tensor<2x2x4x4xf32>
  %a = loom.attention %q, %k, %v {is_causal = true} : (tensor<2x4x4x4xf32>, tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>) -> tensor<2x4x4x4xf32>
  %a1 = loom.transpose %a {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x4x4xf32> -> tensor<2x4x4x4xf32>
  %a2 = loom.reshape %a1, %so : (tensor<2x4x4x4xf32>, tensor<3xi64>) -> tensor<2x4x16xf32>
  %o = loom.matmul %a2, %wo : tensor<2x4x16xf32>, tensor<16x16xf32> -> tensor<2x4x16xf32>
  %y = loom.add %x, %o : tensor<2x4x16xf32>, tensor<2x4x16xf32> -> tensor<2x4x16xf32>
  return %y : tensor<2x4x16xf32>
}
