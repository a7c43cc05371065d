// RUN: loom-opt %s -loom-fold-constants -split-input-file | FileCheck %s
// RUN: loom-opt %s -loom-fold-constants="max-elements=1" -split-input-file | FileCheck %s --check-prefix=SMALL
// RUN: loom-opt %s -loom-fold-constants -loom-static-shapes -split-input-file | FileCheck %s --check-prefix=STATIC

// Integer and float elementwise ops on constants.
// CHECK-LABEL: func.func @elementwise
// CHECK-DAG: %[[N:.*]] = loom.constant dense<[2, -3]> : tensor<2xi64>
// CHECK-DAG: %[[S:.*]] = loom.constant dense<[2.000000e+00, 3.000000e+00]> : tensor<2xf32>
// CHECK-NOT: loom.neg
// CHECK-NOT: loom.sqrt
// CHECK: return %[[N]], %[[S]]
// With max-elements=1 nothing folds.
// SMALL-LABEL: func.func @elementwise
// SMALL: loom.neg
// SMALL: loom.sqrt
func.func @elementwise() -> (tensor<2xi64>, tensor<2xf32>) {
  %a = loom.constant dense<[-2, 3]> : tensor<2xi64>
  %n = loom.neg %a : tensor<2xi64>
  %b = loom.constant dense<[4.0, 9.0]> : tensor<2xf32>
  %s = loom.sqrt %b : tensor<2xf32>
  return %n, %s : tensor<2xi64>, tensor<2xf32>
}

// -----

// An ONNX LayerNormalization function body: the shape [2, 3, 1, 1] of the
// statistics is computed from constants (slice, neg, constant_of_shape,
// concat); it becomes one constant with a static type.
// CHECK-LABEL: func.func @layer_norm_shape
// CHECK-SAME: (%[[X:.*]]: tensor<6x1xf32>)
// CHECK: %[[SHAPE:.*]] = loom.constant dense<[2, 3, 1, 1]> : tensor<4xi64>
// CHECK-NOT: loom.slice
// CHECK-NOT: loom.neg
// CHECK-NOT: loom.constant_of_shape
// CHECK-NOT: loom.concat
// CHECK: %[[R:.*]] = loom.reshape %[[X]], %[[SHAPE]] : (tensor<6x1xf32>, tensor<4xi64>) -> tensor<2x3x1x1xf32>
// With max-elements=1, only the 1-element neg folds.
// SMALL-LABEL: func.func @layer_norm_shape
// SMALL-NOT: loom.neg
// SMALL: loom.constant dense<2> : tensor<1xi64>
// SMALL-NOT: loom.neg
// SMALL: loom.slice
// SMALL: loom.constant_of_shape
// SMALL: loom.concat
func.func @layer_norm_shape(%x: tensor<6x1xf32>) -> tensor<2x3x1x1xf32> {
  %axis = loom.constant dense<-2> : tensor<1xi64>
  %zero = loom.constant dense<0> : tensor<1xi64>
  %dims = loom.constant dense<[2, 3, 4, 5]> : tensor<4xi64>
  %outer = loom.slice %dims, %zero, %axis : (tensor<4xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %count = loom.neg %axis : tensor<1xi64>
  %ones = loom.constant_of_shape %count {value = 1 : i64} : tensor<1xi64> -> tensor<?xi64>
  %shape = loom.concat %outer, %ones {axis = 0 : i64} : (tensor<2xi64>, tensor<?xi64>) -> tensor<?xi64>
  %r = loom.reshape %x, %shape : (tensor<6x1xf32>, tensor<?xi64>) -> tensor<2x3x1x1xf32>
  return %r : tensor<2x3x1x1xf32>
}

// -----

// Shape arithmetic from the shape of a constant: shape, gather, mul, cast.
// CHECK-LABEL: func.func @shape_chain
// CHECK: %[[C:.*]] = loom.constant dense<1.200000e+01> : tensor<1xf32>
// CHECK-NOT: loom.shape
// CHECK-NOT: loom.gather
// CHECK-NOT: loom.mul
// CHECK-NOT: loom.cast
// CHECK: return %[[C]]
func.func @shape_chain() -> tensor<1xf32> {
  %t = loom.constant dense<0.0> : tensor<3x4xf32>
  %s = loom.shape %t : tensor<3x4xf32> -> tensor<2xi64>
  %i = loom.constant dense<[0, 1]> : tensor<2xi64>
  %zero1 = loom.constant dense<0> : tensor<1xi64>
  %one1 = loom.constant dense<1> : tensor<1xi64>
  %two1 = loom.constant dense<2> : tensor<1xi64>
  %d = loom.gather %s, %i {axis = 0 : i64} : tensor<2xi64>, tensor<2xi64> -> tensor<2xi64>
  %a = loom.slice %d, %zero1, %one1 : (tensor<2xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %b = loom.slice %d, %one1, %two1 : (tensor<2xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %p = loom.mul %a, %b : tensor<1xi64>, tensor<1xi64> -> tensor<1xi64>
  %f = loom.cast %p : tensor<1xi64> to tensor<1xf32>
  return %f : tensor<1xf32>
}

// -----

// A dynamic result type that the function returns: the constant has the
// static type and the return reads it through a cast.
// CHECK-LABEL: func.func @dynamic_return
// CHECK: %[[C:.*]] = loom.constant dense<7> : tensor<3xi32>
// CHECK: %[[CAST:.*]] = tensor.cast %[[C]] : tensor<3xi32> to tensor<?xi32>
// CHECK: return %[[CAST]]
func.func @dynamic_return() -> tensor<?xi32> {
  %s = loom.constant dense<3> : tensor<1xi64>
  %c = loom.constant_of_shape %s {value = 7 : i32} : tensor<1xi64> -> tensor<?xi32>
  return %c : tensor<?xi32>
}

// -----

// A loom user takes the static type directly; static-shapes then proves
// the user's result type and the function's.
// CHECK-LABEL: func.func @static_user
// CHECK-SAME: (%[[X:.*]]: tensor<3xf32>)
// CHECK: %[[C:.*]] = loom.constant dense<1.000000e+00> : tensor<3xf32>
// CHECK: loom.add %[[X]], %[[C]] : tensor<3xf32>, tensor<3xf32> -> tensor<?xf32>
// STATIC-LABEL: func.func @static_user
// STATIC-SAME: -> tensor<3xf32>
// STATIC: loom.add %{{.*}}, %{{.*}} : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
func.func @static_user(%x: tensor<3xf32>) -> tensor<?xf32> {
  %s = loom.constant dense<3> : tensor<1xi64>
  %c = loom.constant_of_shape %s {value = 1.0 : f32} : tensor<1xi64> -> tensor<?xf32>
  %a = loom.add %x, %c : tensor<3xf32>, tensor<?xf32> -> tensor<?xf32>
  return %a : tensor<?xf32>
}

// -----

// arith.constant operands count as constants.
// CHECK-LABEL: func.func @arith_constant
// CHECK: %[[C:.*]] = loom.constant dense<[5, 7]> : tensor<2xi32>
// CHECK: return %[[C]]
func.func @arith_constant() -> tensor<2xi32> {
  %a = arith.constant dense<[1, 2]> : tensor<2xi32>
  %b = loom.constant dense<[4, 5]> : tensor<2xi32>
  %c = loom.add %a, %b : tensor<2xi32>, tensor<2xi32> -> tensor<2xi32>
  return %c : tensor<2xi32>
}

// -----

// Negative: an operand from a function argument.
// CHECK-LABEL: func.func @argument_operand
// CHECK: loom.add
func.func @argument_operand(%x: tensor<2xf32>) -> tensor<2xf32> {
  %a = loom.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %c = loom.add %x, %a : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  return %c : tensor<2xf32>
}

// -----

// Negative: results above max-elements (1024), with a static type or a
// size known only from the shape operand, are never computed.
// CHECK-LABEL: func.func @large_results
// CHECK: loom.neg
// CHECK: loom.constant_of_shape
func.func @large_results() -> (tensor<2048xf32>, tensor<?x?xf32>) {
  %a = loom.constant dense<1.0> : tensor<2048xf32>
  %n = loom.neg %a : tensor<2048xf32>
  %s = loom.constant dense<[1000000, 1000000]> : tensor<2xi64>
  %c = loom.constant_of_shape %s {value = 0.0 : f32} : tensor<2xi64> -> tensor<?x?xf32>
  return %n, %c : tensor<2048xf32>, tensor<?x?xf32>
}

// -----

// Negative: a weight larger than max-operand-elements (65536) is not read,
// even for a small result.
// CHECK-LABEL: func.func @large_weight
// CHECK: loom.reduce_sum
func.func @large_weight() -> tensor<1xf32> {
  %w = loom.constant dense<1.0> : tensor<70000xf32>
  %r = loom.reduce_sum %w {axes = array<i64: 0>} : tensor<70000xf32> -> tensor<1xf32>
  return %r : tensor<1xf32>
}

// -----

// Negative: an op whose kernel fails (an index out of range) stays, to
// report the error where it runs; ops inside a fusion stay.
// CHECK-LABEL: func.func @kernel_error
// CHECK: loom.gather
// CHECK: loom.fusion
// CHECK: loom.neg
func.func @kernel_error() -> (tensor<1xi64>, tensor<2xi64>) {
  %d = loom.constant dense<[1, 2]> : tensor<2xi64>
  %i = loom.constant dense<[5]> : tensor<1xi64>
  %g = loom.gather %d, %i {axis = 0 : i64} : tensor<2xi64>, tensor<1xi64> -> tensor<1xi64>
  %f = loom.fusion "elementwise" ins(%d : tensor<2xi64>) -> tensor<2xi64> {
  ^bb0(%arg0: tensor<2xi64>):
    %n = loom.neg %arg0 : tensor<2xi64>
    loom.yield %n : tensor<2xi64>
  }
  return %g, %f : tensor<1xi64>, tensor<2xi64>
}
