// Pipeline parallelism: stages, send/recv per boundary and micro-batch,
// micro-batch split and reassembly, the broadcast of the results.
// RUN: loom-opt %s --loom-partition="grid=pp=2" 2>/dev/null | FileCheck %s --check-prefix=PP2
// RUN: loom-opt %s --loom-partition="grid=pp=2 micro-batches=2" 2>/dev/null | FileCheck %s --check-prefix=MB2
// RUN: loom-opt %s --loom-partition="grid=pp=4 micro-batches=4" 2>/dev/null | FileCheck %s --check-prefix=PP4
// RUN: loom-opt %s --loom-partition="grid=tp=2,pp=2" 2>/dev/null | FileCheck %s --check-prefix=TPPP
// RUN: loom-opt %s --loom-partition="grid=pp=2 micro-batches=2" 2>&1 >/dev/null | FileCheck %s --check-prefix=REPORT

// Four layers of equal cost, one activation between layers: the stages cut
// between layers, so each boundary sends one value per micro-batch.
func.func @main(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %w = loom.constant dense<0.01> : tensor<16x16xf32>
  %0 = loom.matmul %x, %w : tensor<4x16xf32>, tensor<16x16xf32> -> tensor<4x16xf32>
  %1 = loom.relu %0 : tensor<4x16xf32>
  %2 = loom.matmul %1, %w : tensor<4x16xf32>, tensor<16x16xf32> -> tensor<4x16xf32>
  %3 = loom.relu %2 : tensor<4x16xf32>
  %4 = loom.matmul %3, %w : tensor<4x16xf32>, tensor<16x16xf32> -> tensor<4x16xf32>
  %5 = loom.relu %4 : tensor<4x16xf32>
  %6 = loom.matmul %5, %w : tensor<4x16xf32>, tensor<16x16xf32> -> tensor<4x16xf32>
  %7 = loom.relu %6 : tensor<4x16xf32>
  return %7 : tensor<4x16xf32>
}

// PP2:       shard.grid @grid(shape = 2)
// PP2-LABEL: func.func @main(%{{.*}}: tensor<4x16xf32>) -> tensor<4x16xf32>
// PP2:       loom.pipeline_stage @grid axis 0 stage 0 micro_batch 0 ins(
// PP2-COUNT-2: loom.matmul
// PP2:       shard.send %{{.*}} on @grid grid_axes = [0] destination = [1] : (tensor<4x16xf32>) -> tensor<4x16xf32>
// PP2-NEXT:  loom.yield
// PP2:       %[[Y:.*]] = loom.pipeline_stage @grid axis 0 stage 1 micro_batch 0 ins({{.*}}) -> tensor<4x16xf32>
// PP2:       shard.recv %{{.*}} on @grid grid_axes = [0] source = [0] : (tensor<4x16xf32>) -> tensor<4x16xf32>
// PP2-COUNT-2: loom.matmul
// PP2:       %[[B:.*]] = shard.broadcast %[[Y]] on @grid grid_axes = [0] root = [1]
// PP2-NEXT:  return %[[B]]
// PP2-NOT:   shard.send

// MB2-LABEL: func.func @main(%{{.*}}: tensor<4x16xf32>) -> tensor<4x16xf32>
// MB2:       %[[MB:.*]]:2 = loom.split %{{.*}} {axis = 0 : i64, sizes = array<i64: 2, 2>}
// MB2:       loom.pipeline_stage @grid axis 0 stage 0 micro_batch 0 ins(%[[MB]]#0,
// MB2:       shard.send {{.*}} : (tensor<2x16xf32>) -> tensor<2x16xf32>
// MB2:       %[[Y0:.*]] = loom.pipeline_stage @grid axis 0 stage 1 micro_batch 0
// MB2:       shard.recv {{.*}} : (tensor<2x16xf32>) -> tensor<2x16xf32>
// MB2:       loom.pipeline_stage @grid axis 0 stage 0 micro_batch 1 ins(%[[MB]]#1,
// MB2:       shard.send
// MB2:       %[[Y1:.*]] = loom.pipeline_stage @grid axis 0 stage 1 micro_batch 1
// MB2:       shard.recv
// MB2:       %[[C:.*]] = loom.concat %[[Y0]], %[[Y1]] {axis = 0 : i64}
// MB2:       shard.broadcast %[[C]] on @grid grid_axes = [0] root = [1]
// MB2-NOT:   shard.send

// One layer per stage; three boundaries times four micro-batches.
// PP4-COUNT-12: shard.send
// PP4-NOT:      shard.send
// PP4:          shard.broadcast %{{.*}} on @grid grid_axes = [0] root = [3]

// Other axes partition first; their collectives stay inside the stages
// and the stage axis is the second grid axis.
// TPPP:       shard.grid @grid(shape = 2x2)
// TPPP:       loom.pipeline_stage @grid axis 1 stage 0
// TPPP:       shard.send %{{.*}} on @grid grid_axes = [1] destination = [1]
// TPPP:       loom.pipeline_stage @grid axis 1 stage 1
// TPPP:       shard.broadcast %{{.*}} on @grid grid_axes = [1] root = [1]

// REPORT:      remark: pipeline for 'main': 2 stages x 2 micro-batches (per micro-batch)
// REPORT-NEXT: stage 0: 0.002 MFLOP; sends 1 value(s), 128 bytes
// REPORT-NEXT: stage 1: 0.002 MFLOP

// Errors.
// RUN: not loom-opt %s --loom-partition="grid=tp=2 micro-batches=2" 2>&1 | FileCheck %s --check-prefix=NOPP
// NOPP: error: micro-batches=2 needs a pipeline (pp) grid axis and a positive count
// RUN: not loom-opt %s --loom-partition="grid=pp=2 micro-batches=3" 2>&1 | FileCheck %s --check-prefix=MB3
// MB3: error: micro-batches=3 does not divide the batch dimension (4) of argument 0 of 'main'
// RUN: not loom-opt %s --loom-partition="grid=pp=9" 2>&1 | FileCheck %s --check-prefix=PP9
// PP9: error: pp=9 needs at least 9 ops that compute on activations; 'main' has 8
