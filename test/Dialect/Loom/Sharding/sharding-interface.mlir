// The ShardingInterface models of loom ops under upstream propagation and
// partitioning: which dimensions split, what partitioning rewrites, and the
// collectives it inserts.
// RUN: loom-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(sharding-propagation{traversal=forward},shard-partition))" | FileCheck %s

shard.grid @grid(shape = 2)

// A column-split weight splits the matmul's N; the result is gathered to
// leave replicated.
// CHECK-LABEL: func.func @column
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8x3xf32>)
// CHECK: %[[Y:.*]] = loom.matmul %[[X]], %[[W]] : tensor<4x8xf32>, tensor<8x3xf32> -> tensor<4x3xf32>
// CHECK: shard.all_gather %[[Y]] on @grid grid_axes = [0] gather_axis = 1 : tensor<4x3xf32> -> tensor<4x6xf32>
func.func @column(%x: tensor<4x8xf32>, %w: tensor<8x6xf32>) -> tensor<4x6xf32> {
  %split = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %rep = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %ws = shard.shard %w to %split annotate_for_users : tensor<8x6xf32>
  %y = loom.matmul %x, %ws : tensor<4x8xf32>, tensor<8x6xf32> -> tensor<4x6xf32>
  %r = shard.shard %y to %rep annotate_for_users : tensor<4x6xf32>
  return %r : tensor<4x6xf32>
}

// -----

shard.grid @grid(shape = 2)

// A split contraction (batched matmul, broadcast weight) leaves partial sums
// and one all-reduce.
// CHECK-LABEL: func.func @contraction
// CHECK: %[[P:.*]] = loom.matmul %{{.*}}, %{{.*}} : tensor<2x4x4xf32>, tensor<4x6xf32> -> tensor<2x4x6xf32>
// CHECK-NEXT: %[[S:.*]] = shard.all_reduce %[[P]] on @grid grid_axes = [0] : tensor<2x4x6xf32> -> tensor<2x4x6xf32>
// CHECK-NOT: shard.all_
// CHECK: return %[[S]]
func.func @contraction(%x: tensor<2x4x8xf32>, %w: tensor<8x6xf32>) -> tensor<2x4x6xf32> {
  %k = shard.sharding @grid split_axes = [[], [], [0]] : !shard.sharding
  %row = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %rep = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %xs = shard.shard %x to %k annotate_for_users : tensor<2x4x8xf32>
  %ws = shard.shard %w to %row annotate_for_users : tensor<8x6xf32>
  %y = loom.matmul %xs, %ws : tensor<2x4x8xf32>, tensor<8x6xf32> -> tensor<2x4x6xf32>
  %r = shard.shard %y to %rep annotate_for_users : tensor<2x4x6xf32>
  return %r : tensor<2x4x6xf32>
}

// -----

shard.grid @grid(shape = 2)

// Broadcasting: the bias follows the split last dimension, the size-1
// operand dimension is not split; GELU stays split.
// CHECK-LABEL: func.func @broadcast
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<3xf32>, %[[C:.*]]: tensor<2x1xf32>)
// CHECK: %[[A:.*]] = loom.add %[[X]], %[[B]] : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
// CHECK: %[[M:.*]] = loom.mul %[[A]], %[[C]] : tensor<2x3xf32>, tensor<2x1xf32> -> tensor<2x3xf32>
// CHECK: loom.gelu %[[M]] : tensor<2x3xf32>
func.func @broadcast(%x: tensor<2x6xf32>, %b: tensor<6xf32>, %c: tensor<2x1xf32>) -> tensor<2x6xf32> {
  %split = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %rep = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %xs = shard.shard %x to %split annotate_for_users : tensor<2x6xf32>
  %a = loom.add %xs, %b : tensor<2x6xf32>, tensor<6xf32> -> tensor<2x6xf32>
  %m = loom.mul %a, %c : tensor<2x6xf32>, tensor<2x1xf32> -> tensor<2x6xf32>
  %g = loom.gelu %m : tensor<2x6xf32>
  %r = shard.shard %g to %rep annotate_for_users : tensor<2x6xf32>
  return %r : tensor<2x6xf32>
}

// -----

shard.grid @grid(shape = 2)

// softmax and layer_norm keep their reduced axis whole: a split there is
// gathered first; a split of another axis passes through.
// CHECK-LABEL: func.func @keep_axis
// CHECK: %[[G:.*]] = shard.all_gather %{{.*}} on @grid grid_axes = [0] gather_axis = 1 : tensor<4x4xf32> -> tensor<4x8xf32>
// CHECK: loom.softmax %{{.*}} {axis = 1 : i64} : tensor<4x8xf32>
// CHECK: loom.layer_norm %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
func.func @keep_axis(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %g: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %last = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %first = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %rep = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %xs = shard.shard %x to %last annotate_for_users : tensor<4x8xf32>
  %s = loom.softmax %xs {axis = 1 : i64} : tensor<4x8xf32>
  %ys = shard.shard %y to %first annotate_for_users : tensor<4x8xf32>
  %n = loom.layer_norm %ys, %g {axis = 1 : i64} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %r0 = shard.shard %s to %rep annotate_for_users : tensor<4x8xf32>
  %r1 = shard.shard %n to %rep annotate_for_users : tensor<4x8xf32>
  return %r0, %r1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

shard.grid @grid(shape = 2)

// Heads: a split feature dimension maps through the reshape to the heads
// (the shape operand is rewritten to the local shape), the transpose moves
// it, and grouped-query attention splits query and key/value heads alike.
// CHECK-LABEL: func.func @heads
// CHECK: %[[SHAPE:.*]] = loom.constant dense<[1, 8, 2, 8]> : tensor<4xi64>
// CHECK: %[[R:.*]] = loom.reshape %{{.*}}, %[[SHAPE]] : (tensor<1x8x16xf32>, tensor<4xi64>) -> tensor<1x8x2x8xf32>
// CHECK: %[[Q:.*]] = loom.transpose %[[R]] {perm = array<i64: 0, 2, 1, 3>} : tensor<1x8x2x8xf32> -> tensor<1x2x8x8xf32>
// CHECK: loom.attention %[[Q]], %{{.*}}, %{{.*}} {is_causal = true} : (tensor<1x2x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>) -> tensor<1x2x8x8xf32>
// CHECK-NOT: shard.all_gather
// CHECK: return
func.func @heads(%x: tensor<1x8x32xf32>, %k: tensor<1x2x8x8xf32>, %v: tensor<1x2x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %last = shard.sharding @grid split_axes = [[], [], [0]] : !shard.sharding
  %heads = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %last annotate_for_users : tensor<1x8x32xf32>
  %ks = shard.shard %k to %heads annotate_for_users : tensor<1x2x8x8xf32>
  %vs = shard.shard %v to %heads annotate_for_users : tensor<1x2x8x8xf32>
  %shape = loom.constant dense<[1, 8, 4, 8]> : tensor<4xi64>
  %r = loom.reshape %xs, %shape : (tensor<1x8x32xf32>, tensor<4xi64>) -> tensor<1x8x4x8xf32>
  %q = loom.transpose %r {perm = array<i64: 0, 2, 1, 3>} : tensor<1x8x4x8xf32> -> tensor<1x4x8x8xf32>
  %o = loom.attention %q, %ks, %vs {is_causal = true} : (tensor<1x4x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x4x8x8xf32>
  %os = shard.shard %o to %heads annotate_for_users : tensor<1x4x8x8xf32>
  return %os : tensor<1x4x8x8xf32>
}

// -----

shard.grid @grid(shape = 2)

// A split reduced axis: partial sums, means and maxima are all-reduced with
// the matching kind.
// CHECK-LABEL: func.func @reductions
// CHECK: %[[S:.*]] = loom.reduce_sum %{{.*}} {axes = array<i64: 1>} : tensor<4x4xf32> -> tensor<4x1xf32>
// CHECK-NEXT: shard.all_reduce %[[S]] on @grid grid_axes = [0] : tensor<4x1xf32> -> tensor<4x1xf32>
// CHECK: %[[M:.*]] = loom.reduce_mean %{{.*}} {axes = array<i64: 1>, keepdims = false} : tensor<4x4xf32> -> tensor<4xf32>
// CHECK-NEXT: shard.all_reduce %[[M]] on @grid grid_axes = [0] reduction = average : tensor<4xf32> -> tensor<4xf32>
// CHECK: %[[X:.*]] = loom.reduce_max %{{.*}} {axes = array<i64: 1>} : tensor<4x4xf32> -> tensor<4x1xf32>
// CHECK-NEXT: shard.all_reduce %[[X]] on @grid grid_axes = [0] reduction = max : tensor<4x1xf32> -> tensor<4x1xf32>
func.func @reductions(%x: tensor<4x8xf32>) -> (tensor<4x1xf32>, tensor<4xf32>, tensor<4x1xf32>) {
  %last = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %rep = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %xs = shard.shard %x to %last annotate_for_users : tensor<4x8xf32>
  %s = loom.reduce_sum %xs {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4x1xf32>
  %m = loom.reduce_mean %xs {axes = array<i64: 1>, keepdims = false} : tensor<4x8xf32> -> tensor<4xf32>
  %x2 = loom.reduce_max %xs {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4x1xf32>
  %r0 = shard.shard %s to %rep annotate_for_users : tensor<4x1xf32>
  %r1 = shard.shard %m to %rep annotate_for_users : tensor<4xf32>
  %r2 = shard.shard %x2 to %rep annotate_for_users : tensor<4x1xf32>
  return %r0, %r1, %r2 : tensor<4x1xf32>, tensor<4xf32>, tensor<4x1xf32>
}

// -----

shard.grid @grid(shape = 2)

// A split that does not divide every dimension on its loop is not chosen:
// 6 columns split in 2 reshape to 3x2, and 3 does not divide by 2, so the
// reshape sees the whole tensor. An op without a rule (conv) runs
// replicated.
// CHECK-LABEL: func.func @replicated
// CHECK: shard.all_gather %{{.*}} on @grid grid_axes = [0] gather_axis = 2 : tensor<1x2x2x4xf32> -> tensor<1x2x4x4xf32>
// CHECK: shard.all_gather %{{.*}} on @grid grid_axes = [0] gather_axis = 1 : tensor<4x3xf32> -> tensor<4x6xf32>
// CHECK: loom.reshape %{{.*}}, %{{.*}} : (tensor<4x6xf32>, tensor<3xi64>) -> tensor<4x3x2xf32>
// CHECK: loom.conv %{{.*}}, %{{.*}} {{.*}} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
func.func @replicated(%x: tensor<4x6xf32>, %y: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>) -> (tensor<4x3x2xf32>, tensor<1x2x4x4xf32>) {
  %cols = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %rows = shard.sharding @grid split_axes = [[], [], [0]] : !shard.sharding
  %rep = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %xs = shard.shard %x to %cols annotate_for_users : tensor<4x6xf32>
  %shape = loom.constant dense<[4, 3, 2]> : tensor<3xi64>
  %e = loom.reshape %xs, %shape : (tensor<4x6xf32>, tensor<3xi64>) -> tensor<4x3x2xf32>
  %ys = shard.shard %y to %rows annotate_for_users : tensor<1x2x4x4xf32>
  %c = loom.conv %ys, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %r0 = shard.shard %e to %rep annotate_for_users : tensor<4x3x2xf32>
  %r1 = shard.shard %c to %rep annotate_for_users : tensor<1x2x4x4xf32>
  return %r0, %r1 : tensor<4x3x2xf32>, tensor<1x2x4x4xf32>
}

// -----

shard.grid @grid(shape = 2)

// A batch split passes through a batched matmul whose weight broadcasts.
// CHECK-LABEL: func.func @batch
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x8xf32>, %[[W:.*]]: tensor<8x6xf32>)
// CHECK-NEXT: %[[Y:.*]] = loom.matmul %[[X]], %[[W]] : tensor<1x4x8xf32>, tensor<8x6xf32> -> tensor<1x4x6xf32>
// CHECK-NEXT: shard.all_gather %[[Y]] on @grid grid_axes = [0] gather_axis = 0 : tensor<1x4x6xf32> -> tensor<2x4x6xf32>
func.func @batch(%x: tensor<2x4x8xf32>, %w: tensor<8x6xf32>) -> tensor<2x4x6xf32> {
  %split = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %rep = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %xs = shard.shard %x to %split annotate_for_users : tensor<2x4x8xf32>
  %y = loom.matmul %xs, %w : tensor<2x4x8xf32>, tensor<8x6xf32> -> tensor<2x4x6xf32>
  %r = shard.shard %y to %rep annotate_for_users : tensor<2x4x6xf32>
  return %r : tensor<2x4x6xf32>
}

// -----

shard.grid @grid(shape = 4)

// Grouped-query attention over more devices than key/value heads (4 query
// heads, 2 key/value heads, 4 devices): keys and values stay whole, and each
// device repeats the key/value heads and keeps the one of its query head.
// CHECK-LABEL: func.func @more_devices_than_kv_heads
// CHECK-SAME: (%[[Q:.*]]: tensor<1x1x8x8xf32>, %[[K:.*]]: tensor<1x2x8x8xf32>, %[[V:.*]]: tensor<1x2x8x8xf32>)
// CHECK: %[[K1:.*]] = loom.reshape %[[K]], %{{.*}} : (tensor<1x2x8x8xf32>, tensor<5xi64>) -> tensor<1x2x1x8x8xf32>
// CHECK: %[[K2:.*]] = loom.expand %[[K1]], %{{.*}} : (tensor<1x2x1x8x8xf32>, tensor<5xi64>) -> tensor<1x2x2x8x8xf32>
// CHECK: %[[K3:.*]] = loom.reshape %[[K2]], %{{.*}} : (tensor<1x2x2x8x8xf32>, tensor<4xi64>) -> tensor<1x4x8x8xf32>
// CHECK: %[[KL:.*]] = shard.all_slice %[[K3]] on @grid grid_axes = [0] slice_axis = 1 : tensor<1x4x8x8xf32> -> tensor<1x1x8x8xf32>
// CHECK: %[[VL:.*]] = shard.all_slice %{{.*}} on @grid grid_axes = [0] slice_axis = 1 : tensor<1x4x8x8xf32> -> tensor<1x1x8x8xf32>
// CHECK: loom.attention %[[Q]], %[[KL]], %[[VL]] : (tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32>
func.func @more_devices_than_kv_heads(%q: tensor<1x4x8x8xf32>, %k: tensor<1x2x8x8xf32>, %v: tensor<1x2x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %heads = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %qs = shard.shard %q to %heads annotate_for_users : tensor<1x4x8x8xf32>
  %o = loom.attention %qs, %k, %v : (tensor<1x4x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x4x8x8xf32>
  %os = shard.shard %o to %heads annotate_for_users : tensor<1x4x8x8xf32>
  return %os : tensor<1x4x8x8xf32>
}

// -----

shard.grid @grid(shape = 2)

// A gather from rows split over the grid (vocabulary parallelism): global
// indices become local rows (negative ones counted from the end of the
// whole table), rows held elsewhere contribute zeros, and the pieces are
// summed.
// CHECK-LABEL: func.func @rows
// CHECK-SAME: (%[[T:.*]]: tensor<3x4xf32>, %[[I:.*]]: tensor<5xi64>)
// CHECK: %[[IDX:.*]] = shard.process_multi_index on @grid axes = [0] : index
// CHECK: %[[R:.*]] = arith.index_cast %[[IDX]] : index to i64
// CHECK: %[[FIRST:.*]] = arith.muli %[[R]], %{{.*}} : i64
// CHECK: %[[OFF:.*]] = tensor.from_elements %[[FIRST]] : tensor<i64>
// CHECK: %[[NEG:.*]] = loom.less %[[I]], %{{.*}} : tensor<5xi64>, tensor<i64> -> tensor<5xi1>
// CHECK: %[[WRAP:.*]] = loom.add %[[I]], %{{.*}} : tensor<5xi64>, tensor<i64> -> tensor<5xi64>
// CHECK: %[[G:.*]] = loom.where %[[NEG]], %[[WRAP]], %[[I]]
// CHECK: %[[L:.*]] = loom.sub %[[G]], %[[OFF]] : tensor<5xi64>, tensor<i64> -> tensor<5xi64>
// CHECK: %[[VALID:.*]] = loom.and
// CHECK: %[[SAFE:.*]] = loom.where %[[VALID]], %[[L]], %{{.*}} : tensor<5xi1>, tensor<5xi64>, tensor<i64> -> tensor<5xi64>
// CHECK: %[[ROWS:.*]] = loom.gather %[[T]], %[[SAFE]] : tensor<3x4xf32>, tensor<5xi64> -> tensor<5x4xf32>
// CHECK: %[[M:.*]] = loom.unsqueeze %[[VALID]] {axes = array<i64: 1>} : tensor<5xi1> -> tensor<5x1xi1>
// CHECK: %[[Z:.*]] = loom.where %[[M]], %[[ROWS]], %{{.*}} : tensor<5x1xi1>, tensor<5x4xf32>, tensor<f32> -> tensor<5x4xf32>
// CHECK: shard.all_reduce %[[Z]] on @grid grid_axes = [0] : tensor<5x4xf32> -> tensor<5x4xf32>
func.func @rows(%table: tensor<6x4xf32>, %ids: tensor<5xi64>) -> tensor<5x4xf32> {
  %rows = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %rep = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %ts = shard.shard %table to %rows annotate_for_users : tensor<6x4xf32>
  %y = loom.gather %ts, %ids : tensor<6x4xf32>, tensor<5xi64> -> tensor<5x4xf32>
  %r = shard.shard %y to %rep annotate_for_users : tensor<5x4xf32>
  return %r : tensor<5x4xf32>
}

// -----

shard.grid @grid(shape = 2)

// A gather along a negative axis: the indices' split passes to the result.
// CHECK-LABEL: func.func @gather_negative_axis
// CHECK: loom.gather %{{.*}}, %{{.*}} {axis = -1 : i64} : tensor<3x4xf32>, tensor<1xi64> -> tensor<3x1xf32>
func.func @gather_negative_axis(%data: tensor<3x4xf32>, %ids: tensor<2xi64>) -> tensor<3x2xf32> {
  %split = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %rep = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %is = shard.shard %ids to %split annotate_for_users : tensor<2xi64>
  %y = loom.gather %data, %is {axis = -1 : i64} : tensor<3x4xf32>, tensor<2xi64> -> tensor<3x2xf32>
  %r = shard.shard %y to %rep annotate_for_users : tensor<3x2xf32>
  return %r : tensor<3x2xf32>
}
