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

// Resource weights give resource weights: a new blob, named after the old
// one and 8-byte aligned, holding W * s = [0.5, 1, 3, 4] as little-endian
// f32. The dense bias stays dense.
// CHECK-LABEL: func.func @bn_fold_resource
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x4x4xf32>)
// CHECK-DAG: %[[W:.*]] = loom.constant dense_resource<[[BLOB:conv_w_bn[_0-9]*]]> : tensor<2x2x1x1xf32>
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

// f16 resource weights are read and written as 2-byte elements.
// CHECK-LABEL: func.func @bn_fold_resource_f16
// CHECK: %[[W:.*]] = loom.constant dense_resource<[[BLOB:w16_bn[_0-9]*]]> : tensor<2x1x2xf16>
// CHECK: loom.conv %{{.*}}, %[[W]], %{{.*}}
// CHECK-NOT: loom.batch_norm
// CHECK: [[BLOB]]: "0x080000000038003C00C20000"
func.func @bn_fold_resource_f16(%x: tensor<1x2x3xf16>) -> tensor<1x2x2xf16> {
  %w = loom.constant dense_resource<w16> : tensor<2x1x2xf16>
  %s = loom.constant dense<[1.0, 4.0]> : tensor<2xf16>
  %bb = loom.constant dense<[0.25, 0.75]> : tensor<2xf16>
  %m = loom.constant dense<[1.0, 2.0]> : tensor<2xf16>
  %v = loom.constant dense<[3.0, 15.0]> : tensor<2xf16>
  %y = loom.conv %x, %w {strides = array<i64: 1>, pads = array<i64: 0, 0>, dilations = array<i64: 1>, group = 2 : i64} : (tensor<1x2x3xf16>, tensor<2x1x2xf16>) -> tensor<1x2x2xf16>
  %z = loom.batch_norm %y, %s, %bb, %m, %v {epsilon = 1.0 : f32} : tensor<1x2x2xf16>, tensor<2xf16>, tensor<2xf16>, tensor<2xf16>, tensor<2xf16> -> tensor<1x2x2xf16>
  return %z : tensor<1x2x2xf16>
}

{-#
  dialect_resources: {
    builtin: {
      w16: "0x02000000003C004000C20000"
    }
  }
#-}

// -----

// A resource bias gives a resource bias: b' = [0, -2.25].
// CHECK-LABEL: func.func @bn_fold_resource_bias
// CHECK-DAG: %[[B:.*]] = loom.constant dense_resource<[[BLOB:conv_b_bn[_0-9]*]]> : tensor<2xf32>
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

// -----

// A reshape of a reshape reads the input directly, with the static result
// shape as a new constant (the outer shape's -1 would be resolved against
// another input).
// CHECK-LABEL: func.func @reshape_reshape
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>, %[[S1:.*]]: tensor<2xi64>)
// CHECK: %[[S:.*]] = loom.constant dense<[4, 6]> : tensor<2xi64>
// CHECK: %[[R:.*]] = loom.reshape %[[X]], %[[S]] : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<4x6xf32>
// CHECK: return %[[R]]
func.func @reshape_reshape(%x: tensor<2x3x4xf32>, %s1: tensor<2xi64>) -> tensor<4x6xf32> {
  %s2 = loom.constant dense<[-1, 6]> : tensor<2xi64>
  %a = loom.reshape %x, %s1 : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<6x4xf32>
  %b = loom.reshape %a, %s2 : (tensor<6x4xf32>, tensor<2xi64>) -> tensor<4x6xf32>
  return %b : tensor<4x6xf32>
}

// -----

// An empty result dimension needs allowzero: without it a 0 in the shape
// copies the input dimension.
// CHECK-LABEL: func.func @reshape_reshape_empty
// CHECK-SAME: (%[[X:.*]]: tensor<0x4xf32>)
// CHECK: %[[S:.*]] = loom.constant dense<[2, 0]> : tensor<2xi64>
// CHECK: %[[R:.*]] = loom.reshape %[[X]], %[[S]] {allowzero = true} : (tensor<0x4xf32>, tensor<2xi64>) -> tensor<2x0xf32>
// CHECK: return %[[R]]
func.func @reshape_reshape_empty(%x: tensor<0x4xf32>) -> tensor<2x0xf32> {
  %s1 = loom.constant dense<[4, 0]> : tensor<2xi64>
  %s2 = loom.constant dense<[2, 0]> : tensor<2xi64>
  %a = loom.reshape %x, %s1 {allowzero = true} : (tensor<0x4xf32>, tensor<2xi64>) -> tensor<4x0xf32>
  %b = loom.reshape %a, %s2 {allowzero = true} : (tensor<4x0xf32>, tensor<2xi64>) -> tensor<2x0xf32>
  return %b : tensor<2x0xf32>
}

// -----

// Squeezes and unsqueezes next to a reshape join it.
// CHECK-LABEL: func.func @reshape_squeeze
// CHECK-SAME: (%[[X:.*]]: tensor<6xf32>, %[[Y:.*]]: tensor<2x3xf32>)
// CHECK-DAG: %[[S1:.*]] = loom.constant dense<[2, 3]> : tensor<2xi64>
// CHECK-DAG: %[[S2:.*]] = loom.constant dense<[1, 6]> : tensor<2xi64>
// CHECK-DAG: %[[A:.*]] = loom.reshape %[[X]], %[[S1]] : (tensor<6xf32>, tensor<2xi64>) -> tensor<2x3xf32>
// CHECK-DAG: %[[B:.*]] = loom.reshape %[[Y]], %[[S2]] : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<1x6xf32>
// CHECK: return %[[A]], %[[B]]
func.func @reshape_squeeze(%x: tensor<6xf32>, %y: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<1x6xf32>) {
  %s = loom.constant dense<[2, 1, 3]> : tensor<3xi64>
  %a = loom.reshape %x, %s : (tensor<6xf32>, tensor<3xi64>) -> tensor<2x1x3xf32>
  %b = loom.squeeze %a {axes = array<i64: 1>} : tensor<2x1x3xf32> -> tensor<2x3xf32>
  %u = loom.unsqueeze %y {axes = array<i64: 0>} : tensor<2x3xf32> -> tensor<1x2x3xf32>
  %t = loom.constant dense<[1, 6]> : tensor<2xi64>
  %c = loom.reshape %u, %t : (tensor<1x2x3xf32>, tensor<2xi64>) -> tensor<1x6xf32>
  return %b, %c : tensor<2x3xf32>, tensor<1x6xf32>
}

// -----

// A dynamic outer result keeps the chain: its shape is only known from the
// shape operand, whose 0 and -1 refer to the intermediate tensor.
// CHECK-LABEL: func.func @reshape_reshape_dynamic
// CHECK: %[[A:.*]] = loom.reshape
// CHECK: %[[B:.*]] = loom.reshape %[[A]]
// CHECK: return %[[B]]
func.func @reshape_reshape_dynamic(%x: tensor<?x4xf32>, %s1: tensor<3xi64>) -> tensor<?x2xf32> {
  %s2 = loom.constant dense<[0, -1]> : tensor<2xi64>
  %a = loom.reshape %x, %s1 : (tensor<?x4xf32>, tensor<3xi64>) -> tensor<?x2x2xf32>
  %b = loom.reshape %a, %s2 : (tensor<?x2x2xf32>, tensor<2xi64>) -> tensor<?x2xf32>
  return %b : tensor<?x2xf32>
}

// -----

// A reshape to its own type is removed when the type fixes every size: one
// dynamic dimension follows from the element count. With two, or with an
// empty static dimension, the sizes can move, so those stay.
// CHECK-LABEL: func.func @reshape_identity
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32>, %[[Y:.*]]: tensor<?x?xf32>, %[[Z:.*]]: tensor<?x0xf32>
// CHECK-NOT: loom.reshape %[[X]]
// CHECK-DAG: %[[B:.*]] = loom.reshape %[[Y]]
// CHECK-DAG: %[[C:.*]] = loom.reshape %[[Z]]
// CHECK: return %[[X]], %[[B]], %[[C]]
func.func @reshape_identity(%x: tensor<?x4xf32>, %y: tensor<?x?xf32>, %z: tensor<?x0xf32>, %s: tensor<2xi64>) -> (tensor<?x4xf32>, tensor<?x?xf32>, tensor<?x0xf32>) {
  %a = loom.reshape %x, %s : (tensor<?x4xf32>, tensor<2xi64>) -> tensor<?x4xf32>
  %b = loom.reshape %y, %s : (tensor<?x?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %c = loom.reshape %z, %s : (tensor<?x0xf32>, tensor<2xi64>) -> tensor<?x0xf32>
  return %a, %b, %c : tensor<?x4xf32>, tensor<?x?xf32>, tensor<?x0xf32>
}

// -----

// Squeezing the dimensions an unsqueeze inserted, or unsqueezing the ones a
// squeeze removed, gives the input back, dynamic sizes included.
// CHECK-LABEL: func.func @squeeze_unsqueeze
// CHECK-SAME: (%[[X:.*]]: tensor<?x3xf32>, %[[Y:.*]]: tensor<?x1x?xf32>, %[[Z:.*]]: tensor<3x4xf32>)
// CHECK-NOT: loom.squeeze
// CHECK-NOT: loom.unsqueeze
// CHECK: return %[[X]], %[[Y]], %[[Z]]
func.func @squeeze_unsqueeze(%x: tensor<?x3xf32>, %y: tensor<?x1x?xf32>, %z: tensor<3x4xf32>) -> (tensor<?x3xf32>, tensor<?x1x?xf32>, tensor<3x4xf32>) {
  %a = loom.unsqueeze %x {axes = array<i64: 0, 2>} : tensor<?x3xf32> -> tensor<1x?x1x3xf32>
  %b = loom.squeeze %a {axes = array<i64: 2, 0>} : tensor<1x?x1x3xf32> -> tensor<?x3xf32>
  %c = loom.squeeze %y {axes = array<i64: 1>} : tensor<?x1x?xf32> -> tensor<?x?xf32>
  %d = loom.unsqueeze %c {axes = array<i64: 1>} : tensor<?x?xf32> -> tensor<?x1x?xf32>
  // Without axes, a static input shows which dimensions go.
  %e = loom.unsqueeze %z {axes = array<i64: 1>} : tensor<3x4xf32> -> tensor<3x1x4xf32>
  %f = loom.squeeze %e {axes = array<i64>} : tensor<3x1x4xf32> -> tensor<3x4xf32>
  return %b, %d, %f : tensor<?x3xf32>, tensor<?x1x?xf32>, tensor<3x4xf32>
}

// -----

// Chains that do not cancel stay: a partial squeeze, and a squeeze without
// axes of a dynamic tensor (a '?' may be 1 at run time and go too).
// CHECK-LABEL: func.func @squeeze_unsqueeze_kept
// CHECK-SAME: (%[[X:.*]]: tensor<3x4xf32>, %[[Y:.*]]: tensor<?x4xf32>)
// CHECK: %[[A:.*]] = loom.unsqueeze %[[X]]
// CHECK: %[[B:.*]] = loom.squeeze %[[A]] {axes = array<i64: 0>}
// CHECK: %[[C:.*]] = loom.unsqueeze %[[Y]]
// CHECK: %[[D:.*]] = loom.squeeze %[[C]] {axes = array<i64>}
// CHECK: return %[[B]], %[[D]]
func.func @squeeze_unsqueeze_kept(%x: tensor<3x4xf32>, %y: tensor<?x4xf32>) -> (tensor<1x3x4xf32>, tensor<?x4xf32>) {
  %a = loom.unsqueeze %x {axes = array<i64: 0, 1>} : tensor<3x4xf32> -> tensor<1x1x3x4xf32>
  %b = loom.squeeze %a {axes = array<i64: 0>} : tensor<1x1x3x4xf32> -> tensor<1x3x4xf32>
  %c = loom.unsqueeze %y {axes = array<i64: 0>} : tensor<?x4xf32> -> tensor<1x?x4xf32>
  %d = loom.squeeze %c {axes = array<i64>} : tensor<1x?x4xf32> -> tensor<?x4xf32>
  return %b, %d : tensor<1x3x4xf32>, tensor<?x4xf32>
}

// -----

// Casts through a type that holds every value lose nothing: the middle
// step goes, and a round trip goes entirely.
// CHECK-LABEL: func.func @cast_widening
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[I:.*]]: tensor<4xi32>, %[[H:.*]]: tensor<4xf16>, %[[U:.*]]: tensor<4xui8>)
// CHECK-DAG: %[[A:.*]] = loom.cast %[[X]] : tensor<4xf32> to tensor<4xf16>
// CHECK-DAG: %[[B:.*]] = loom.cast %[[H]] : tensor<4xf16> to tensor<4xf64>
// CHECK-DAG: %[[C:.*]] = loom.cast %[[I]] : tensor<4xi32> to tensor<4xf32>
// CHECK-DAG: %[[D:.*]] = loom.cast %[[U]] : tensor<4xui8> to tensor<4xi16>
// CHECK: return %[[X]], %[[I]], %[[A]], %[[B]], %[[C]], %[[D]], %[[X]]
func.func @cast_widening(%x: tensor<4xf32>, %i: tensor<4xi32>, %h: tensor<4xf16>, %u: tensor<4xui8>) -> (tensor<4xf32>, tensor<4xi32>, tensor<4xf16>, tensor<4xf64>, tensor<4xf32>, tensor<4xi16>, tensor<4xf32>) {
  %0 = loom.cast %x : tensor<4xf32> to tensor<4xf64>
  %1 = loom.cast %0 : tensor<4xf64> to tensor<4xf32>
  %2 = loom.cast %i : tensor<4xi32> to tensor<4xi64>
  %3 = loom.cast %2 : tensor<4xi64> to tensor<4xi32>
  %4 = loom.cast %0 : tensor<4xf64> to tensor<4xf16>
  %5 = loom.cast %h : tensor<4xf16> to tensor<4xf32>
  %6 = loom.cast %5 : tensor<4xf32> to tensor<4xf64>
  %7 = loom.cast %2 : tensor<4xi64> to tensor<4xf32>
  %8 = loom.cast %u : tensor<4xui8> to tensor<4xui32>
  %9 = loom.cast %8 : tensor<4xui32> to tensor<4xi16>
  // A cast to the same type is its input.
  %10 = loom.cast %x : tensor<4xf32> to tensor<4xf32>
  return %1, %3, %4, %6, %7, %9, %10 : tensor<4xf32>, tensor<4xi32>, tensor<4xf16>, tensor<4xf64>, tensor<4xf32>, tensor<4xi16>, tensor<4xf32>
}

// -----

// Casts through a type that rounds, wraps or changes kind stay.
// CHECK-LABEL: func.func @cast_lossy
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[I:.*]]: tensor<4xi64>, %[[H:.*]]: tensor<4xf16>, %[[U:.*]]: tensor<4xui8>)
// CHECK: %[[A:.*]] = loom.cast %[[X]] : tensor<4xf32> to tensor<4xf16>
// CHECK: %[[B:.*]] = loom.cast %[[A]] : tensor<4xf16> to tensor<4xf32>
// CHECK: %[[C:.*]] = loom.cast %[[I]] : tensor<4xi64> to tensor<4xi32>
// CHECK: %[[D:.*]] = loom.cast %[[C]] : tensor<4xi32> to tensor<4xi64>
// CHECK: %[[E:.*]] = loom.cast %[[H]] : tensor<4xf16> to tensor<4xbf16>
// CHECK: %[[F:.*]] = loom.cast %[[E]] : tensor<4xbf16> to tensor<4xf32>
// CHECK: %[[G:.*]] = loom.cast %[[U]] : tensor<4xui8> to tensor<4xi32>
// CHECK: %[[K:.*]] = loom.cast %[[G]] : tensor<4xi32> to tensor<4xf32>
// CHECK: %[[L:.*]] = loom.cast %[[X]] : tensor<4xf32> to tensor<4xi1>
// CHECK: %[[M:.*]] = loom.cast %[[L]] : tensor<4xi1> to tensor<4xi32>
// CHECK: %[[N:.*]] = loom.cast %[[I]] : tensor<4xi64> to tensor<4xf64>
// CHECK: %[[P:.*]] = loom.cast %[[N]] : tensor<4xf64> to tensor<4xi64>
// CHECK: return %[[B]], %[[D]], %[[F]], %[[K]], %[[M]], %[[P]]
func.func @cast_lossy(%x: tensor<4xf32>, %i: tensor<4xi64>, %h: tensor<4xf16>, %u: tensor<4xui8>) -> (tensor<4xf32>, tensor<4xi64>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xi64>) {
  %0 = loom.cast %x : tensor<4xf32> to tensor<4xf16>
  %1 = loom.cast %0 : tensor<4xf16> to tensor<4xf32>
  %2 = loom.cast %i : tensor<4xi64> to tensor<4xi32>
  %3 = loom.cast %2 : tensor<4xi32> to tensor<4xi64>
  // Neither of f16 and bf16 holds all values of the other.
  %4 = loom.cast %h : tensor<4xf16> to tensor<4xbf16>
  %5 = loom.cast %4 : tensor<4xbf16> to tensor<4xf32>
  // Unsigned to signed changes kind.
  %6 = loom.cast %u : tensor<4xui8> to tensor<4xi32>
  %7 = loom.cast %6 : tensor<4xi32> to tensor<4xf32>
  // i1 is a boolean: casting to it tests for non-zero.
  %8 = loom.cast %x : tensor<4xf32> to tensor<4xi1>
  %9 = loom.cast %8 : tensor<4xi1> to tensor<4xi32>
  // Integer to float changes kind (and f64 does not hold every i64).
  %10 = loom.cast %i : tensor<4xi64> to tensor<4xf64>
  %11 = loom.cast %10 : tensor<4xf64> to tensor<4xi64>
  return %1, %3, %5, %7, %9, %11 : tensor<4xf32>, tensor<4xi64>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xi64>
}

// -----

// A transposed float constant becomes the transposed constant (any size;
// weights stored transposed, as Gemm's transB gives them).
// CHECK-LABEL: func.func @transpose_constant
// CHECK: %[[C:.*]] = loom.constant dense<{{\[}}[1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
// CHECK-NOT: loom.transpose
// CHECK: return %[[C]]
func.func @transpose_constant() -> tensor<3x2xf32> {
  %c = loom.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %t = loom.transpose %c {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  return %t : tensor<3x2xf32>
}

// -----

// Rank 3: result[i, j, k] = input[j, k, i] for perm [2, 0, 1].
// CHECK-LABEL: func.func @transpose_constant_rank3
// CHECK: loom.constant dense<{{\[}}{{\[}}[0.000000e+00, 2.000000e+00]], {{\[}}[1.000000e+00, 3.000000e+00]]]> : tensor<2x1x2xf32>
func.func @transpose_constant_rank3() -> tensor<2x1x2xf32> {
  %c = loom.constant dense<[[[0.0, 1.0]], [[2.0, 3.0]]]> : tensor<2x1x2xf32>
  %t = loom.transpose %c {perm = array<i64: 2, 0, 1>} : tensor<2x1x2xf32> -> tensor<2x2x1xf32>
  %r = loom.constant dense<[2, 1, 2]> : tensor<3xi64>
  %y = loom.reshape %t, %r : (tensor<2x2x1xf32>, tensor<3xi64>) -> tensor<2x1x2xf32>
  return %y : tensor<2x1x2xf32>
}

// -----

// Negative: a transpose of a computed value stays.
// CHECK-LABEL: func.func @transpose_argument
// CHECK: loom.transpose
func.func @transpose_argument(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %t = loom.transpose %x {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  return %t : tensor<3x2xf32>
}

// -----

// An expert's weight picked by a run-time index and transposed (x @
// W[e].T in mixture-of-experts exports): the transpose moves onto the
// stacked constant, which is transposed at compile time; the gather then
// picks the transposed slice. W[e] = [[e0, e1, e2], [e3, e4, e5]] (2x3),
// so the folded constant holds each expert's slice transposed (3x2).
// CHECK-LABEL: func.func @transpose_of_expert_weight
// CHECK-SAME: (%[[E:.+]]: tensor<i64>)
// CHECK: %[[WT:.+]] = loom.constant dense<{{\[}}{{\[}}[0.000000e+00, 3.000000e+00], [1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00]], {{\[}}[6.000000e+00, 9.000000e+00], [7.000000e+00, 1.000000e+01], [8.000000e+00, 1.100000e+01]]]> : tensor<2x3x2xf32>
// CHECK: %[[G:.+]] = loom.gather %[[WT]], %[[E]] : tensor<2x3x2xf32>, tensor<i64> -> tensor<3x2xf32>
// CHECK-NOT: loom.transpose
// CHECK: return %[[G]]
func.func @transpose_of_expert_weight(%e: tensor<i64>) -> tensor<3x2xf32> {
  %w = loom.constant dense<[[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], [[6.0, 7.0, 8.0], [9.0, 10.0, 11.0]]]> : tensor<2x2x3xf32>
  %g = loom.gather %w, %e : tensor<2x2x3xf32>, tensor<i64> -> tensor<2x3xf32>
  %t = loom.transpose %g {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  return %t : tensor<3x2xf32>
}

// -----

// Negative: indices that are not one scalar (the slices would be many).
// CHECK-LABEL: func.func @transpose_of_gathered_rows
// CHECK: loom.gather
// CHECK: loom.transpose
func.func @transpose_of_gathered_rows(%e: tensor<2xi64>) -> tensor<3x2xf32> {
  %w = loom.constant dense<[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]> : tensor<2x3xf32>
  %g = loom.gather %w, %e : tensor<2x3xf32>, tensor<2xi64> -> tensor<2x3xf32>
  %t = loom.transpose %g {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  return %t : tensor<3x2xf32>
}

// -----

// A chain through an exact widening keeps the outer cast's rounding: its
// `saturate`. A round trip through a float8 type rounds and stays.
// CHECK-LABEL: func.func @cast_keeps_saturate
// CHECK-SAME: (%[[H:.*]]: tensor<4xf16>, %[[X:.*]]: tensor<4xf32>)
// CHECK: %[[A:.*]] = loom.cast %[[H]] {saturate = false} : tensor<4xf16> to tensor<4xf8E5M2>
// CHECK: %[[B:.*]] = loom.cast %[[X]] : tensor<4xf32> to tensor<4xf8E4M3FN>
// CHECK: %[[C:.*]] = loom.cast %[[B]] : tensor<4xf8E4M3FN> to tensor<4xf32>
// CHECK: return %[[A]], %[[C]]
func.func @cast_keeps_saturate(%h: tensor<4xf16>, %x: tensor<4xf32>) -> (tensor<4xf8E5M2>, tensor<4xf32>) {
  %0 = loom.cast %h : tensor<4xf16> to tensor<4xf32>
  %1 = loom.cast %0 {saturate = false} : tensor<4xf32> to tensor<4xf8E5M2>
  %2 = loom.cast %x : tensor<4xf32> to tensor<4xf8E4M3FN>
  %3 = loom.cast %2 : tensor<4xf8E4M3FN> to tensor<4xf32>
  return %1, %3 : tensor<4xf8E5M2>, tensor<4xf32>
}
