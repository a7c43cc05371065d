// RUN: loom-opt %s --loom-partition="grid=tp=2" | FileCheck %s

// Finding an MLP's hidden activation walks the elementwise ops between its
// projections as a DAG: quick GELU (x * sigmoid(1.702 * x), CLIP's
// activation) scales by a 0-D constant (which crashed the walk) and reaches
// x twice. The MLP is split column- then row-parallel: one all-reduce.
// CHECK-LABEL: func.func @quick_gelu_mlp
// CHECK-SAME: (%[[X:.+]]: tensor<2x8xf32>)
// CHECK: loom.matmul %[[X]], %{{.+}} : tensor<2x8xf32>, tensor<8x16xf32> -> tensor<2x16xf32>
// CHECK: loom.sigmoid
// CHECK: loom.matmul %{{.+}}, %{{.+}} : tensor<2x16xf32>, tensor<16x8xf32> -> tensor<2x8xf32>
// CHECK: shard.all_reduce
// CHECK-NOT: shard.all_reduce
func.func @quick_gelu_mlp(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %w1 = loom.constant dense<0.25> : tensor<8x32xf32>
  %w2 = loom.constant dense<0.5> : tensor<32x8xf32>
  %k = loom.constant dense<1.702> : tensor<f32>
  %h = loom.matmul %x, %w1 : tensor<2x8xf32>, tensor<8x32xf32> -> tensor<2x32xf32>
  %s = loom.mul %h, %k : tensor<2x32xf32>, tensor<f32> -> tensor<2x32xf32>
  %g = loom.sigmoid %s : tensor<2x32xf32>
  %a = loom.mul %h, %g : tensor<2x32xf32>, tensor<2x32xf32> -> tensor<2x32xf32>
  %y = loom.matmul %a, %w2 : tensor<2x32xf32>, tensor<32x8xf32> -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}
