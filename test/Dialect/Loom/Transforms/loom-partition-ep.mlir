// RUN: loom-opt %s -split-input-file --loom-partition="grid=ep=2" | FileCheck %s --check-prefix=EP2
// RUN: loom-opt %s -split-input-file --loom-partition="grid=ep=4" | FileCheck %s --check-prefix=EP4
// RUN: loom-opt %s -split-input-file --loom-partition="grid=dp=2,ep=2" | FileCheck %s --check-prefix=DPEP

// Each MoE layer has exactly two all-to-alls (dispatch and combine) and no
// other collective inside; four layers in all below.
// RUN: loom-opt %s -split-input-file --loom-partition="grid=ep=2" | grep -c shard.all_to_all | FileCheck %s --check-prefix=COUNT
// COUNT: 8
// RUN: loom-opt %s -split-input-file --loom-partition="grid=ep=2" | FileCheck %s --check-prefix=NOREDUCE
// NOREDUCE-NOT: shard.all_reduce

// capacity-factor=0.5 gives every layer without one C = ceil(0.5 * 4 * 2 / 4)
// = 1 slot per expert and rank; a layer's own capacity factor stays.
// RUN: loom-opt %s -split-input-file --loom-partition="grid=ep=2 capacity-factor=0.5" | FileCheck %s --check-prefix=CAP
// CAP-LABEL: func.func @moe
// CAP: shard.all_to_all %{{.*}} : tensor<4x1x4xf32> -> tensor<4x1x4xf32>
// CAP-LABEL: func.func @two_layers
// CAP: shard.all_to_all %{{.*}} : tensor<4x1x4xf32> -> tensor<4x1x4xf32>
// CAP: shard.all_to_all %{{.*}} : tensor<4x1x4xf32> -> tensor<4x1x4xf32>
// CAP: shard.all_to_all %{{.*}} : tensor<4x2x4xf32> -> tensor<4x2x4xf32>
// RUN: not loom-opt %s --loom-partition="grid=dp=2 capacity-factor=1.5" 2>&1 | FileCheck %s --check-prefix=CAPNOEP
// CAPNOEP: error: capacity-factor needs an expert-parallel (ep) grid axis
// RUN: not loom-opt %s --loom-partition="grid=ep=2 capacity-factor=-1" 2>&1 | FileCheck %s --check-prefix=CAPNEG
// CAPNEG: error: capacity-factor must be positive (or 0 for no capacity), got -1

// Degrees that do not divide the tokens or the experts are errors.
// RUN: not loom-opt %s -split-input-file --loom-partition="grid=ep=3" 2>&1 | FileCheck %s --check-prefix=EP3
// EP3: error: ep=3 does not divide the token dimension (8) of argument 0
// EP3: error: ep=3 does not divide the token dimension (8) of argument 0
// RUN: not loom-opt %s -split-input-file --loom-partition="grid=ep=8" 2>&1 | FileCheck %s --check-prefix=EP8
// EP8: error: ep=8 does not divide the 4 experts of this mixture-of-experts layer
// RUN: not loom-opt %S/Inputs/partition-ep-six-tokens.mlir --loom-partition="grid=ep=3" 2>&1 | FileCheck %s --check-prefix=SIX3
// SIX3: error: ep=3 does not divide the 4 experts of this mixture-of-experts layer
// RUN: not loom-opt %S/Inputs/partition-ep-six-tokens.mlir --loom-partition="grid=dp=2,ep=2" 2>&1 | FileCheck %s --check-prefix=SIXDPEP
// SIXDPEP: error: dp=2 x ep=2 does not divide dimension 0 (6) of argument 0

// Top-2 of 4 experts on 8 tokens. With ep=2 each rank routes its 4 tokens,
// fills a dispatch buffer [4 experts, C = 4 slots, 4 features] (no
// capacity factor: room for every token), sends experts 2r and 2r+1's
// blocks to rank r, runs its 2 experts on the 2 x 4 slots it receives, and
// sends the results back.
// EP2-LABEL: func.func @moe
// EP2: %[[X:.*]] = shard.all_slice %arg0 on @grid grid_axes = [0] slice_axis = 0 : tensor<8x4xf32> -> tensor<4x4xf32>
// EP2-DAG: %[[W1:.*]] = shard.all_slice %{{.*}} on @grid grid_axes = [0] slice_axis = 0 : tensor<4x4x8xf32> -> tensor<2x4x8xf32>
// EP2-DAG: %[[W2:.*]] = shard.all_slice %{{.*}} on @grid grid_axes = [0] slice_axis = 0 : tensor<4x8x4xf32> -> tensor<2x8x4xf32>
// EP2: loom.topk %{{.*}} : tensor<4x4xf32>, tensor<1xi64> -> tensor<4x2xf32>, tensor<4x2xi64>
// EP2: %[[BUF:.*]] = loom.matmul %{{.*}}, %[[X]] : tensor<16x4xf32>, tensor<4x4xf32> -> tensor<16x4xf32>
// EP2: %[[SEND:.*]] = loom.reshape %[[BUF]]
// EP2: %[[RECV:.*]] = shard.all_to_all %[[SEND]] on @grid grid_axes = [0] split_axis = 0 concat_axis = 0 : tensor<4x4x4xf32> -> tensor<4x4x4xf32>
// EP2: loom.matmul %{{.*}}, %[[W1]] : tensor<2x8x4xf32>, tensor<2x4x8xf32> -> tensor<2x8x8xf32>
// EP2: loom.silu
// EP2: loom.matmul %{{.*}}, %[[W2]] : tensor<2x8x8xf32>, tensor<2x8x4xf32> -> tensor<2x8x4xf32>
// EP2: %[[BACK:.*]] = shard.all_to_all %{{.*}} on @grid grid_axes = [0] split_axis = 0 concat_axis = 0 : tensor<4x4x4xf32> -> tensor<4x4x4xf32>
// EP2: %[[FLAT:.*]] = loom.reshape %[[BACK]]
// EP2: %[[Y:.*]] = loom.matmul %{{.*}}, %[[FLAT]] : tensor<4x16xf32>, tensor<16x4xf32> -> tensor<4x4xf32>
// EP2: shard.all_gather %[[Y]] on @grid grid_axes = [0] gather_axis = 0 : tensor<4x4xf32> -> tensor<8x4xf32>
// ep=4: one expert and 2 tokens per rank.
// EP4-LABEL: func.func @moe
// EP4: shard.all_to_all %{{.*}} on @grid grid_axes = [0] split_axis = 0 concat_axis = 0 : tensor<4x2x4xf32> -> tensor<4x2x4xf32>
// EP4: loom.matmul %{{.*}}, %{{.*}} : tensor<1x8x4xf32>, tensor<1x4x8xf32> -> tensor<1x8x8xf32>
// EP4: shard.all_to_all
// With dp=2,ep=2 the tokens split over both axes, the experts over ep
// (axis 1) only, and the all-to-alls run within each ep group.
// DPEP-LABEL: func.func @moe
// DPEP: %[[DP:.*]] = shard.all_slice %arg0 on @grid grid_axes = [0] slice_axis = 0 : tensor<8x4xf32> -> tensor<4x4xf32>
// DPEP: shard.all_slice %[[DP]] on @grid grid_axes = [1] slice_axis = 0 : tensor<4x4xf32> -> tensor<2x4xf32>
// DPEP: shard.all_to_all %{{.*}} on @grid grid_axes = [1] split_axis = 0 concat_axis = 0 : tensor<4x2x4xf32> -> tensor<4x2x4xf32>
// DPEP: shard.all_to_all %{{.*}} on @grid grid_axes = [1]
func.func @moe(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %wg = loom.constant dense<[[0.1, 0.2, 0.3, 0.4], [0.5, -0.6, 0.7, -0.8], [0.9, 1.0, -1.1, 1.2], [-1.3, 1.4, 1.5, 1.6]]> : tensor<4x4xf32>
  %w1 = loom.constant dense<0.1> : tensor<4x4x8xf32>
  %w2 = loom.constant dense<0.2> : tensor<4x8x4xf32>
  %logits = loom.matmul %x, %wg : tensor<8x4xf32>, tensor<4x4xf32> -> tensor<8x4xf32>
  %p = loom.softmax %logits {axis = 1 : i64} : tensor<8x4xf32>
  %y = loom.moe %x, %p, %w1, %w2 {k = 2 : i64, normalize = true, activation = "silu"} : (tensor<8x4xf32>, tensor<8x4xf32>, tensor<4x4x8xf32>, tensor<4x8x4xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

// Two layers with a residual, the second with a capacity factor of 1:
// C = ceil(1 * 4 tokens * 2 / 4 experts) = 2 slots per expert and rank.
// EP2-LABEL: func.func @two_layers
// EP2: shard.all_to_all %{{.*}} : tensor<4x4x4xf32> -> tensor<4x4x4xf32>
// EP2: shard.all_to_all %{{.*}} : tensor<4x4x4xf32> -> tensor<4x4x4xf32>
// EP2: loom.add
// EP2: shard.all_to_all %{{.*}} : tensor<4x2x4xf32> -> tensor<4x2x4xf32>
// EP2: loom.matmul %{{.*}}, %{{.*}} : tensor<2x4x4xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
// EP2: shard.all_to_all %{{.*}} : tensor<4x2x4xf32> -> tensor<4x2x4xf32>
func.func @two_layers(%x: tensor<8x4xf32>, %p: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %w1 = loom.constant dense<0.1> : tensor<4x4x8xf32>
  %w2 = loom.constant dense<0.2> : tensor<4x8x4xf32>
  %a = loom.moe %x, %p, %w1, %w2 {k = 2 : i64} : (tensor<8x4xf32>, tensor<8x4xf32>, tensor<4x4x8xf32>, tensor<4x8x4xf32>) -> tensor<8x4xf32>
  %r = loom.add %x, %a : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<8x4xf32>
  %b = loom.moe %r, %p, %w1, %w2 {k = 2 : i64, capacity_factor = 1.0 : f64} : (tensor<8x4xf32>, tensor<8x4xf32>, tensor<4x4x8xf32>, tensor<4x8x4xf32>) -> tensor<8x4xf32>
  return %b : tensor<8x4xf32>
}

// -----

// Gated experts: w_gate is split by experts like w_in and w_out.
// EP2-LABEL: func.func @gated
// EP2: %[[WIN:.*]] = shard.all_slice %{{.*}} slice_axis = 0 : tensor<4x4x8xf32> -> tensor<2x4x8xf32>
// EP2: shard.all_slice %{{.*}} slice_axis = 0 : tensor<4x8x4xf32> -> tensor<2x8x4xf32>
// EP2: %[[WG:.*]] = shard.all_slice %{{.*}} slice_axis = 0 : tensor<4x4x8xf32> -> tensor<2x4x8xf32>
// EP2: shard.all_to_all
// EP2: %[[UP:.*]] = loom.matmul %{{.*}}, %[[WIN]] : tensor<2x8x4xf32>, tensor<2x4x8xf32> -> tensor<2x8x8xf32>
// EP2: %[[GATE:.*]] = loom.matmul %{{.*}}, %[[WG]] : tensor<2x8x4xf32>, tensor<2x4x8xf32> -> tensor<2x8x8xf32>
// EP2: %[[S:.*]] = loom.silu %[[GATE]]
// EP2: loom.mul %[[S]], %[[UP]]
// EP2: shard.all_to_all
func.func @gated(%x: tensor<8x4xf32>, %p: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %w1 = loom.constant dense<0.1> : tensor<4x4x8xf32>
  %w2 = loom.constant dense<0.2> : tensor<4x8x4xf32>
  %wg = loom.constant dense<0.3> : tensor<4x4x8xf32>
  %y = loom.moe %x, %p, %w1, %w2 gate %wg {k = 2 : i64, activation = "silu"} : (tensor<8x4xf32>, tensor<8x4xf32>, tensor<4x4x8xf32>, tensor<4x8x4xf32>, tensor<4x4x8xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}
