// RUN: loom-opt %s -canonicalize -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @identity_ops
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>
// CHECK-NOT: loom.
// CHECK: return %[[X]]
func.func @identity_ops(%x: tensor<2x3xf32>, %s: tensor<2xi64>) -> tensor<2x3xf32> {
  %0 = loom.reshape %x, %s : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  %1 = loom.transpose %0 {perm = array<i64: 0, 1>} : tensor<2x3xf32> -> tensor<2x3xf32>
  %2 = loom.cast %1 : tensor<2x3xf32> to tensor<2x3xf32>
  %3 = loom.concat %2 {axis = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %3 : tensor<2x3xf32>
}

// -----

// The PyTorch exporter's dynamic-shape idiom on a static input: the whole
// shape computation folds to one constant.
// CHECK-LABEL: func.func @shape_chain
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK: %[[S:.*]] = loom.constant dense<[2, -1]> : tensor<2xi64>
// CHECK-NOT: loom.shape
// CHECK-NOT: loom.gather
// CHECK-NOT: loom.concat
// CHECK: loom.reshape %[[X]], %[[S]]
func.func @shape_chain(%x: tensor<2x3x4xf32>) -> tensor<2x12xf32> {
  %shape = loom.shape %x : tensor<2x3x4xf32> -> tensor<3xi64>
  %i0 = loom.constant dense<0> : tensor<i64>
  %d0 = loom.gather %shape, %i0 {axis = 0 : i64} : tensor<3xi64>, tensor<i64> -> tensor<i64>
  %u0 = loom.unsqueeze %d0 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %minus1 = loom.constant dense<[-1]> : tensor<1xi64>
  %target = loom.concat %u0, %minus1 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %r = loom.reshape %x, %target : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<2x12xf32>
  return %r : tensor<2x12xf32>
}

// -----

// CHECK-LABEL: func.func @int_arithmetic
// CHECK: %[[C:.*]] = loom.constant dense<[7, 13]> : tensor<2xi64>
// CHECK: return %[[C]]
func.func @int_arithmetic() -> tensor<2xi64> {
  %a = loom.constant dense<[2, 4]> : tensor<2xi64>
  %b = loom.constant dense<3> : tensor<i64>
  %m = loom.mul %a, %b : tensor<2xi64>, tensor<i64> -> tensor<2xi64>
  %one = loom.constant dense<1> : tensor<i64>
  %s = loom.add %m, %one : tensor<2xi64>, tensor<i64> -> tensor<2xi64>
  %d = loom.div %s, %one : tensor<2xi64>, tensor<i64> -> tensor<2xi64>
  return %d : tensor<2xi64>
}

// -----

// Division by zero is left for run time.
// CHECK-LABEL: func.func @no_fold_div_by_zero
// CHECK: loom.div
func.func @no_fold_div_by_zero() -> tensor<2xi64> {
  %a = loom.constant dense<[2, 4]> : tensor<2xi64>
  %z = loom.constant dense<[1, 0]> : tensor<2xi64>
  %d = loom.div %a, %z : tensor<2xi64>, tensor<2xi64> -> tensor<2xi64>
  return %d : tensor<2xi64>
}

// -----

// x + 0.0 is not folded for floats (-0.0 + 0.0 = +0.0).
// CHECK-LABEL: func.func @no_fold_float_add_zero
// CHECK: loom.add
func.func @no_fold_float_add_zero(%x: tensor<4xf32>) -> tensor<4xf32> {
  %z = loom.constant dense<0.0> : tensor<f32>
  %r = loom.add %x, %z : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// A broadcast that grows the operand is not an identity.
// CHECK-LABEL: func.func @no_fold_growing_broadcast
// CHECK: loom.add
func.func @no_fold_growing_broadcast(%x: tensor<4xi32>) -> tensor<3x4xi32> {
  %z = loom.constant dense<0> : tensor<3x4xi32>
  %r = loom.add %x, %z : tensor<4xi32>, tensor<3x4xi32> -> tensor<3x4xi32>
  return %r : tensor<3x4xi32>
}

// -----

// CHECK-LABEL: func.func @constant_transpose_and_cast
// CHECK-DAG: loom.constant dense<{{\[}}[1, 3], [2, 4]]> : tensor<2x2xi32>
// CHECK-DAG: loom.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
func.func @constant_transpose_and_cast() -> (tensor<2x2xi32>, tensor<2xf32>) {
  %a = loom.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  %t = loom.transpose %a {perm = array<i64: 1, 0>} : tensor<2x2xi32> -> tensor<2x2xi32>
  %i = loom.constant dense<[1, 2]> : tensor<2xi64>
  %f = loom.cast %i : tensor<2xi64> to tensor<2xf32>
  return %t, %f : tensor<2x2xi32>, tensor<2xf32>
}

// -----

// Dynamic dimensions stay dynamic: nothing to fold.
// CHECK-LABEL: func.func @dynamic_shape
// CHECK: loom.shape
// CHECK: loom.size
func.func @dynamic_shape(%x: tensor<?x3xf32>) -> (tensor<2xi64>, tensor<i64>) {
  %s = loom.shape %x : tensor<?x3xf32> -> tensor<2xi64>
  %n = loom.size %x : tensor<?x3xf32> -> tensor<i64>
  return %s, %n : tensor<2xi64>, tensor<i64>
}

// -----

// A negative start counts from the end.
// CHECK-LABEL: func.func @shape_negative_start
// CHECK: %[[S:.*]] = loom.constant dense<[3, 4]> : tensor<2xi64>
// CHECK: return %[[S]]
func.func @shape_negative_start(%x: tensor<2x3x4xf32>) -> tensor<2xi64> {
  %s = loom.shape %x {start = -2 : i64} : tensor<2x3x4xf32> -> tensor<2xi64>
  return %s : tensor<2xi64>
}

// -----

// Dequantization of a small integer constant folds: (x - zp) * scale per
// element, the scale broadcast (a QDQ model's i32 bias).
// CHECK-LABEL: func.func @fold_dequantize
// CHECK: %[[C:.*]] = loom.constant dense<[-5.000000e-01, 0.000000e+00, 1.500000e+00]> : tensor<3xf32>
// CHECK-NOT: loom.dequantize
// CHECK: return %[[C]]
func.func @fold_dequantize() -> tensor<3xf32> {
  %q = loom.constant dense<[-1, 0, 3]> : tensor<3xi32>
  %s = loom.constant dense<0.5> : tensor<f32>
  %y = loom.dequantize %q, %s : (tensor<3xi32>, tensor<f32>) -> tensor<3xf32>
  return %y : tensor<3xf32>
}

// -----

// 8-bit constants are quantized weights: they stay 8-bit for
// -loom-fold-qdq's quantized contractions, which evaluates what is left
// (test/Dialect/Loom/Transforms/loom-fold-qdq.mlir).
// CHECK-LABEL: func.func @keep_dequantize_8_bit
// CHECK: loom.dequantize
func.func @keep_dequantize_8_bit() -> tensor<3xf32> {
  %q = loom.constant dense<[126, 128, 255]> : tensor<3xui8>
  %s = loom.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %z = loom.constant dense<[128, 128, 105]> : tensor<3xui8>
  %y = loom.dequantize %q, %s, %z : (tensor<3xui8>, tensor<3xf32>, tensor<3xui8>) -> tensor<3xf32>
  return %y : tensor<3xf32>
}

// -----

// A computed input does not fold.
// CHECK-LABEL: func.func @no_fold_dequantize
// CHECK: loom.dequantize
func.func @no_fold_dequantize(%q: tensor<3xi8>) -> tensor<3xf32> {
  %s = loom.constant dense<0.5> : tensor<f32>
  %y = loom.dequantize %q, %s : (tensor<3xi8>, tensor<f32>) -> tensor<3xf32>
  return %y : tensor<3xf32>
}
