// RUN: loom-opt %s --split-input-file --convert-loom-to-linalg | FileCheck %s

// Without a capacity factor no token is dropped: the dense form, every
// expert (batched [4, 16, 32] weights) on every token, no dispatch.
// CHECK-LABEL: func.func @moe_dense
// CHECK-SAME: (%[[X:[^:]*]]: tensor<6x16xf32>
// CHECK-NOT: loom.
// CHECK: linalg.generic {{.*}} ins(%[[X]], %{{.*}} : tensor<6x16xf32>, tensor<4x16x32xf32>) outs(%{{.*}} : tensor<4x6x32xf32>)
// CHECK-NOT: tensor<12x6xf32>
// CHECK: return
func.func @moe_dense(%x: tensor<6x16xf32>, %p: tensor<6x4xf32>, %w1: tensor<4x16x32xf32>, %w2: tensor<4x32x16xf32>) -> tensor<6x16xf32> {
  %y = loom.moe %x, %p, %w1, %w2 {k = 2 : i64, normalize = true, activation = "silu"} : (tensor<6x16xf32>, tensor<6x4xf32>, tensor<4x16x32xf32>, tensor<4x32x16xf32>) -> tensor<6x16xf32>
  return %y : tensor<6x16xf32>
}

// -----

// Capacity factor 1: C = ceil(1 * 6 * 2 / 4) = 3 slots per expert. The
// tokens are gathered into a [4 * 3, 16] buffer by a [12, 6] dispatch mask,
// the experts run on their 3 slots each, and a [6, 12] combine product
// brings the results back.
// CHECK-LABEL: func.func @moe_capacity
// CHECK-SAME: (%[[X:[^:]*]]: tensor<6x16xf32>
// CHECK-NOT: loom.
// CHECK: linalg.matmul ins(%{{.*}}, %[[X]] : tensor<12x6xf32>, tensor<6x16xf32>) outs(%{{.*}} : tensor<12x16xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x3x16xf32>, tensor<4x16x32xf32>) outs(%{{.*}} : tensor<4x3x32xf32>)
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<6x12xf32>, tensor<12x16xf32>) outs(%{{.*}} : tensor<6x16xf32>)
// CHECK: return
func.func @moe_capacity(%x: tensor<6x16xf32>, %p: tensor<6x4xf32>, %w1: tensor<4x16x32xf32>, %w2: tensor<4x32x16xf32>) -> tensor<6x16xf32> {
  %y = loom.moe %x, %p, %w1, %w2 {k = 2 : i64, activation = "relu", capacity_factor = 1.0 : f64} : (tensor<6x16xf32>, tensor<6x4xf32>, tensor<4x16x32xf32>, tensor<4x32x16xf32>) -> tensor<6x16xf32>
  return %y : tensor<6x16xf32>
}

