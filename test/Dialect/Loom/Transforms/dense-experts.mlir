// RUN: loom-opt %s -loom-simplify -split-input-file | FileCheck %s

// Expert weights gathered per token (torch.export's mixture of experts):
// gather_nd(W [E, N, K]) @ x [B, K, 1] becomes one product with every
// expert, W laid out as [K, E*N] at compile time, and a gather of each
// token's expert's block. E = 2 experts, B = 4 tokens, N = 3, K = 2.
// CHECK-LABEL: func.func @weight_on_left
// CHECK-SAME: (%[[X:.+]]: tensor<4x2x1xf32>, %[[E:.+]]: tensor<4x1xi64>)
// CHECK-DAG: %[[W:.+]] = loom.constant dense<{{\[}}[1.000000e+00, 3.000000e+00, 5.000000e+00, 7.000000e+00, 9.000000e+00, 1.100000e+01], [2.000000e+00, 4.000000e+00, 6.000000e+00, 8.000000e+00, 1.000000e+01, 1.200000e+01]]> : tensor<2x6xf32>
// CHECK-DAG: %[[R:.+]] = loom.reshape %[[X]], %{{.+}} : (tensor<4x2x1xf32>, tensor<2xi64>) -> tensor<4x2xf32>
// CHECK: %[[P:.+]] = loom.matmul %[[R]], %[[W]] : tensor<4x2xf32>, tensor<2x6xf32> -> tensor<4x6xf32>
// CHECK: %[[PE:.+]] = loom.reshape %[[P]], %{{.+}} : (tensor<4x6xf32>, tensor<3xi64>) -> tensor<4x2x3xf32>
// CHECK: %[[G:.+]] = loom.gather_nd %[[PE]], %[[E]] {batch_dims = 1 : i64} : tensor<4x2x3xf32>, tensor<4x1xi64> -> tensor<4x3xf32>
// CHECK: %[[Y:.+]] = loom.reshape %[[G]], %{{.+}} : (tensor<4x3xf32>, tensor<3xi64>) -> tensor<4x3x1xf32>
// CHECK-NOT: loom.gather_nd
// CHECK: return %[[Y]]
func.func @weight_on_left(%x: tensor<4x2x1xf32>, %e: tensor<4x1xi64>) -> tensor<4x3x1xf32> {
  %w = loom.constant dense<[[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], [[7.0, 8.0], [9.0, 10.0], [11.0, 12.0]]]> : tensor<2x3x2xf32>
  %g = loom.gather_nd %w, %e : tensor<2x3x2xf32>, tensor<4x1xi64> -> tensor<4x3x2xf32>
  %y = loom.matmul %g, %x : tensor<4x3x2xf32>, tensor<4x2x1xf32> -> tensor<4x3x1xf32>
  return %y : tensor<4x3x1xf32>
}

// -----

// Tokens as rows: x [B, 1, K] @ gather_nd(W [E, K, N]); W as [K, E*N].
// CHECK-LABEL: func.func @weight_on_right
// CHECK-DAG: %[[W:.+]] = loom.constant dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00, 7.000000e+00, 8.000000e+00, 9.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00, 1.000000e+01, 1.100000e+01, 1.200000e+01]]> : tensor<2x6xf32>
// CHECK: loom.matmul %{{.+}}, %[[W]] : tensor<4x2xf32>, tensor<2x6xf32> -> tensor<4x6xf32>
// CHECK: loom.gather_nd %{{.+}}, %{{.+}} {batch_dims = 1 : i64} : tensor<4x2x3xf32>, tensor<4x1xi64> -> tensor<4x3xf32>
// CHECK: loom.reshape %{{.+}} -> tensor<4x1x3xf32>
func.func @weight_on_right(%x: tensor<4x1x2xf32>, %e: tensor<4x1xi64>) -> tensor<4x1x3xf32> {
  %w = loom.constant dense<[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [[7.0, 8.0, 9.0], [10.0, 11.0, 12.0]]]> : tensor<2x2x3xf32>
  %g = loom.gather_nd %w, %e : tensor<2x2x3xf32>, tensor<4x1xi64> -> tensor<4x2x3xf32>
  %y = loom.matmul %x, %g : tensor<4x1x2xf32>, tensor<4x2x3xf32> -> tensor<4x1x3xf32>
  return %y : tensor<4x1x3xf32>
}

// -----

// Fewer tokens than experts: the gathered copies are smaller than the
// weights, and the product with every expert would read them all.
// CHECK-LABEL: func.func @fewer_tokens_than_experts
// CHECK: loom.gather_nd %{{.+}}, %{{.+}} : tensor<2x3x2xf32>, tensor<1x1xi64> -> tensor<1x3x2xf32>
// CHECK: loom.matmul %{{.+}}, %{{.+}} : tensor<1x3x2xf32>, tensor<1x2x1xf32> -> tensor<1x3x1xf32>
func.func @fewer_tokens_than_experts(%x: tensor<1x2x1xf32>, %e: tensor<1x1xi64>) -> tensor<1x3x1xf32> {
  %w = loom.constant dense<[[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], [[7.0, 8.0], [9.0, 10.0], [11.0, 12.0]]]> : tensor<2x3x2xf32>
  %g = loom.gather_nd %w, %e : tensor<2x3x2xf32>, tensor<1x1xi64> -> tensor<1x3x2xf32>
  %y = loom.matmul %g, %x : tensor<1x3x2xf32>, tensor<1x2x1xf32> -> tensor<1x3x1xf32>
  return %y : tensor<1x3x1xf32>
}

// -----

// Weights computed at run time, and more than one column per token, stay
// as they are.
// CHECK-LABEL: func.func @not_constant_or_not_vectors
// CHECK: loom.gather_nd %arg2, %arg1 : tensor<2x3x2xf32>, tensor<4x1xi64> -> tensor<4x3x2xf32>
// CHECK: loom.gather_nd %{{.+}}, %arg1 : tensor<2x3x2xf32>, tensor<4x1xi64> -> tensor<4x3x2xf32>
// CHECK-NOT: batch_dims
func.func @not_constant_or_not_vectors(%x: tensor<4x2x1xf32>, %e: tensor<4x1xi64>, %v: tensor<2x3x2xf32>, %x2: tensor<4x2x2xf32>) -> (tensor<4x3x1xf32>, tensor<4x3x2xf32>) {
  %g = loom.gather_nd %v, %e : tensor<2x3x2xf32>, tensor<4x1xi64> -> tensor<4x3x2xf32>
  %y = loom.matmul %g, %x : tensor<4x3x2xf32>, tensor<4x2x1xf32> -> tensor<4x3x1xf32>
  %w = loom.constant dense<1.0> : tensor<2x3x2xf32>
  %g2 = loom.gather_nd %w, %e : tensor<2x3x2xf32>, tensor<4x1xi64> -> tensor<4x3x2xf32>
  %y2 = loom.matmul %g2, %x2 : tensor<4x3x2xf32>, tensor<4x2x2xf32> -> tensor<4x3x2xf32>
  return %y, %y2 : tensor<4x3x1xf32>, tensor<4x3x2xf32>
}
