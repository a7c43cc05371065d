// RUN: loom-opt %s -loom-simplify -split-input-file | FileCheck %s

// Conv + BatchNorm with dense constants: s = scale / sqrt(var + eps) =
// [0.5, 1], W' = W * s per output channel, b' = (b - mean) * s + bias.
// The conv keeps its attributes.
// CHECK-LABEL: func.func @bn_fold
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x4x4xf32>)
// CHECK-DAG: %[[W:.*]] = loom.constant dense<{{\[}}{{\[}}[{{\[}}5.000000e-01]], {{\[}}[1.000000e+00]]], {{\[}}[{{\[}}3.000000e+00]], {{\[}}[4.000000e+00]]]]> : tensor<2x2x1x1xf32>
// CHECK-DAG: %[[B:.*]] = loom.constant dense<[0.000000e+00, -2.250000e+00]> : tensor<2xf32>
// CHECK: %[[Y:.*]] = loom.conv %[[X]], %[[W]], %[[B]] {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NOT: loom.batch_norm
// CHECK: return %[[Y]]
func.func @bn_fold(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = loom.constant dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]]]> : tensor<2x2x1x1xf32>
  %b = loom.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %s = loom.constant dense<[1.0, 4.0]> : tensor<2xf32>
  %bb = loom.constant dense<[0.25, 0.75]> : tensor<2xf32>
  %m = loom.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %v = loom.constant dense<[3.0, 15.0]> : tensor<2xf32>
  %y = loom.conv %x, %w, %b {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %z = loom.batch_norm %y, %s, %bb, %m, %v {epsilon = 1.0 : f32} : tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32> -> tensor<1x2x4x4xf32>
  return %z : tensor<1x2x4x4xf32>
}

// -----

// A conv without bias gets one: b' = bias - mean * s. Grouped (depthwise)
// weights scale along dimension 0 as well; f16 stays f16.
// CHECK-LABEL: func.func @bn_fold_no_bias_f16
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x3xf16>)
// CHECK-DAG: %[[W:.*]] = loom.constant dense<{{\[}}{{\[}}[5.000000e-01, 1.000000e+00]], {{\[}}[-3.000000e+00, 0.000000e+00]]]> : tensor<2x1x2xf16>
// CHECK-DAG: %[[B:.*]] = loom.constant dense<[-2.500000e-01, -1.250000e+00]> : tensor<2xf16>
// CHECK: %[[Y:.*]] = loom.conv %[[X]], %[[W]], %[[B]] {dilations = array<i64: 1>, group = 2 : i64, pads = array<i64: 0, 0>, strides = array<i64: 1>}
// CHECK-NOT: loom.batch_norm
// CHECK: return %[[Y]]
func.func @bn_fold_no_bias_f16(%x: tensor<1x2x3xf16>) -> tensor<1x2x2xf16> {
  %w = loom.constant dense<[[[1.0, 2.0]], [[-3.0, 0.0]]]> : tensor<2x1x2xf16>
  %s = loom.constant dense<[1.0, 4.0]> : tensor<2xf16>
  %bb = loom.constant dense<[0.25, 0.75]> : tensor<2xf16>
  %m = loom.constant dense<[1.0, 2.0]> : tensor<2xf16>
  %v = loom.constant dense<[3.0, 15.0]> : tensor<2xf16>
  %y = loom.conv %x, %w {strides = array<i64: 1>, pads = array<i64: 0, 0>, dilations = array<i64: 1>, group = 2 : i64} : (tensor<1x2x3xf16>, tensor<2x1x2xf16>) -> tensor<1x2x2xf16>
  %z = loom.batch_norm %y, %s, %bb, %m, %v {epsilon = 1.0 : f32} : tensor<1x2x2xf16>, tensor<2xf16>, tensor<2xf16>, tensor<2xf16>, tensor<2xf16> -> tensor<1x2x2xf16>
  return %z : tensor<1x2x2xf16>
}

// -----

// Resource weights give resource weights: a new blob (8-byte aligned) with
// W * s = [0.5, 1, 3, 4] as little-endian f32. The dense bias stays dense.
// CHECK-LABEL: func.func @bn_fold_resource
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x4x4xf32>)
// CHECK-DAG: %[[W:.*]] = loom.constant dense_resource<[[BLOB:bn_folded_weight[_0-9]*]]> : tensor<2x2x1x1xf32>
// CHECK-DAG: %[[B:.*]] = loom.constant dense<[0.000000e+00, -2.250000e+00]> : tensor<2xf32>
// CHECK: %[[Y:.*]] = loom.conv %[[X]], %[[W]], %[[B]]
// CHECK-NOT: loom.batch_norm
// CHECK: return %[[Y]]
// CHECK: [[BLOB]]: "0x080000000000003F0000803F0000404000008040"
func.func @bn_fold_resource(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = loom.constant dense_resource<conv_w> : tensor<2x2x1x1xf32>
  %b = loom.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %s = loom.constant dense<[1.0, 4.0]> : tensor<2xf32>
  %bb = loom.constant dense<[0.25, 0.75]> : tensor<2xf32>
  %m = loom.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %v = loom.constant dense_resource<bn_var> : tensor<2xf32>
  %y = loom.conv %x, %w, %b {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %z = loom.batch_norm %y, %s, %bb, %m, %v {epsilon = 1.0 : f32} : tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32> -> tensor<1x2x4x4xf32>
  return %z : tensor<1x2x4x4xf32>
}

{-#
  dialect_resources: {
    builtin: {
      conv_w: "0x040000000000803F000000400000404000008040",
      bn_var: "0x040000000000404000007041"
    }
  }
#-}

// -----

// A resource bias gives a resource bias: b' = [0, -2.25].
// CHECK-LABEL: func.func @bn_fold_resource_bias
// CHECK-DAG: %[[B:.*]] = loom.constant dense_resource<[[BLOB:bn_folded_bias[_0-9]*]]> : tensor<2xf32>
// CHECK: loom.conv %{{.*}}, %{{.*}}, %[[B]]
// CHECK-NOT: loom.batch_norm
// CHECK: [[BLOB]]: "0x0800000000000000000010C0"
func.func @bn_fold_resource_bias(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = loom.constant dense<1.0> : tensor<2x2x1x1xf32>
  %b = loom.constant dense_resource<conv_b> : tensor<2xf32>
  %s = loom.constant dense<[1.0, 4.0]> : tensor<2xf32>
  %bb = loom.constant dense<[0.25, 0.75]> : tensor<2xf32>
  %m = loom.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %v = loom.constant dense<[3.0, 15.0]> : tensor<2xf32>
  %y = loom.conv %x, %w, %b {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %z = loom.batch_norm %y, %s, %bb, %m, %v {epsilon = 1.0 : f32} : tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32> -> tensor<1x2x4x4xf32>
  return %z : tensor<1x2x4x4xf32>
}

{-#
  dialect_resources: {
    builtin: {
      conv_b: "0x040000000000003F000080BF"
    }
  }
#-}

// -----

// The conv has a second user: folding would need a second copy of the
// weights, so both ops stay.
// CHECK-LABEL: func.func @bn_conv_two_users
// CHECK: %[[Y:.*]] = loom.conv
// CHECK: %[[Z:.*]] = loom.batch_norm %[[Y]]
// CHECK: return %[[Y]], %[[Z]]
func.func @bn_conv_two_users(%x: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %w = loom.constant dense<1.0> : tensor<2x2x1x1xf32>
  %s = loom.constant dense<[1.0, 4.0]> : tensor<2xf32>
  %bb = loom.constant dense<[0.25, 0.75]> : tensor<2xf32>
  %m = loom.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %v = loom.constant dense<[3.0, 15.0]> : tensor<2xf32>
  %y = loom.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %z = loom.batch_norm %y, %s, %bb, %m, %v : tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32> -> tensor<1x2x4x4xf32>
  return %y, %z : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// -----

// Weights that are not constant (a function argument) cannot be folded.
// CHECK-LABEL: func.func @bn_weight_not_constant
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x4x4xf32>, %[[W:.*]]: tensor<2x2x1x1xf32>)
// CHECK: %[[Y:.*]] = loom.conv %[[X]], %[[W]]
// CHECK: %[[Z:.*]] = loom.batch_norm %[[Y]]
// CHECK: return %[[Z]]
func.func @bn_weight_not_constant(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32> {
  %s = loom.constant dense<[1.0, 4.0]> : tensor<2xf32>
  %bb = loom.constant dense<[0.25, 0.75]> : tensor<2xf32>
  %m = loom.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %v = loom.constant dense<[3.0, 15.0]> : tensor<2xf32>
  %y = loom.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %z = loom.batch_norm %y, %s, %bb, %m, %v : tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32> -> tensor<1x2x4x4xf32>
  return %z : tensor<1x2x4x4xf32>
}

// -----

// Statistics that are not constant (the mean is an argument) stay too.
// CHECK-LABEL: func.func @bn_mean_not_constant
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x4x4xf32>, %[[M:.*]]: tensor<2xf32>)
// CHECK: %[[Y:.*]] = loom.conv %[[X]]
// CHECK: %[[Z:.*]] = loom.batch_norm %[[Y]], %{{.*}}, %{{.*}}, %[[M]], %{{.*}}
// CHECK: return %[[Z]]
func.func @bn_mean_not_constant(%x: tensor<1x2x4x4xf32>, %m: tensor<2xf32>) -> tensor<1x2x4x4xf32> {
  %w = loom.constant dense<1.0> : tensor<2x2x1x1xf32>
  %s = loom.constant dense<[1.0, 4.0]> : tensor<2xf32>
  %bb = loom.constant dense<[0.25, 0.75]> : tensor<2xf32>
  %v = loom.constant dense<[3.0, 15.0]> : tensor<2xf32>
  %y = loom.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %z = loom.batch_norm %y, %s, %bb, %m, %v : tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32> -> tensor<1x2x4x4xf32>
  return %z : tensor<1x2x4x4xf32>
}

// -----

// A batch-norm that does not follow a conv, and one whose variance + epsilon
// is not positive (no inverse square root to fold), stay.
// CHECK-LABEL: func.func @bn_not_foldable
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x4x4xf32>)
// CHECK: %[[A:.*]] = loom.batch_norm %[[X]]
// CHECK: %[[Y:.*]] = loom.conv %[[A]]
// CHECK: %[[Z:.*]] = loom.batch_norm %[[Y]]
// CHECK: return %[[Z]]
func.func @bn_not_foldable(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = loom.constant dense<1.0> : tensor<2x2x1x1xf32>
  %s = loom.constant dense<[1.0, 4.0]> : tensor<2xf32>
  %bb = loom.constant dense<[0.25, 0.75]> : tensor<2xf32>
  %m = loom.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %v = loom.constant dense<[3.0, -1.0]> : tensor<2xf32>
  %a = loom.batch_norm %x, %s, %bb, %m, %v : tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32> -> tensor<1x2x4x4xf32>
  %y = loom.conv %a, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %z = loom.batch_norm %y, %s, %bb, %m, %v : tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32> -> tensor<1x2x4x4xf32>
  return %z : tensor<1x2x4x4xf32>
}

// -----

// An elided resource has no data to fold.
// CHECK-LABEL: func.func @bn_elided_resource
// CHECK: loom.batch_norm
func.func @bn_elided_resource(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = loom.constant dense_resource<__elided__> : tensor<2x2x1x1xf32>
  %s = loom.constant dense<[1.0, 4.0]> : tensor<2xf32>
  %bb = loom.constant dense<[0.25, 0.75]> : tensor<2xf32>
  %m = loom.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %v = loom.constant dense<[3.0, 15.0]> : tensor<2xf32>
  %y = loom.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %z = loom.batch_norm %y, %s, %bb, %m, %v : tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32> -> tensor<1x2x4x4xf32>
  return %z : tensor<1x2x4x4xf32>
}

// -----

// Two transposes compose into one: q[i] = p1[p2[i]].
// CHECK-LABEL: func.func @transpose_compose
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK: %[[T:.*]] = loom.transpose %[[X]] {perm = array<i64: 2, 1, 0>} : tensor<2x3x4xf32> -> tensor<4x3x2xf32>
// CHECK: return %[[T]]
func.func @transpose_compose(%x: tensor<2x3x4xf32>) -> tensor<4x3x2xf32> {
  %a = loom.transpose %x {perm = array<i64: 1, 2, 0>} : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  %b = loom.transpose %a {perm = array<i64: 1, 0, 2>} : tensor<3x4x2xf32> -> tensor<4x3x2xf32>
  return %b : tensor<4x3x2xf32>
}

// -----

// Inverse transposes cancel, dynamic sizes included; the inner one stays
// for its other user.
// CHECK-LABEL: func.func @transpose_inverse
// CHECK-SAME: (%[[X:.*]]: tensor<?x3x4xf32>)
// CHECK: %[[A:.*]] = loom.transpose %[[X]] {perm = array<i64: 1, 2, 0>}
// CHECK-NOT: loom.transpose
// CHECK: return %[[X]], %[[A]]
func.func @transpose_inverse(%x: tensor<?x3x4xf32>) -> (tensor<?x3x4xf32>, tensor<3x4x?xf32>) {
  %a = loom.transpose %x {perm = array<i64: 1, 2, 0>} : tensor<?x3x4xf32> -> tensor<3x4x?xf32>
  %b = loom.transpose %a {perm = array<i64: 2, 0, 1>} : tensor<3x4x?xf32> -> tensor<?x3x4xf32>
  return %b, %a : tensor<?x3x4xf32>, tensor<3x4x?xf32>
}

// -----

// An identity composition whose result type is more refined than the
// input's keeps one (identity) transpose to carry the refined type.
// CHECK-LABEL: func.func @transpose_inverse_refined
// CHECK-SAME: (%[[X:.*]]: tensor<?x3xf32>)
// CHECK: %[[T:.*]] = loom.transpose %[[X]] {perm = array<i64: 0, 1>} : tensor<?x3xf32> -> tensor<2x3xf32>
// CHECK: return %[[T]]
func.func @transpose_inverse_refined(%x: tensor<?x3xf32>) -> tensor<2x3xf32> {
  %a = loom.transpose %x {perm = array<i64: 1, 0>} : tensor<?x3xf32> -> tensor<3x?xf32>
  %b = loom.transpose %a {perm = array<i64: 1, 0>} : tensor<3x?xf32> -> tensor<2x3xf32>
  return %b : tensor<2x3xf32>
}

// -----

// A transpose of something else stays.
// CHECK-LABEL: func.func @transpose_single
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK: %[[N:.*]] = loom.neg %[[X]]
// CHECK: %[[T:.*]] = loom.transpose %[[N]] {perm = array<i64: 1, 0>}
// CHECK: return %[[T]]
func.func @transpose_single(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %n = loom.neg %x : tensor<2x3xf32>
  %t = loom.transpose %n {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  return %t : tensor<3x2xf32>
}
