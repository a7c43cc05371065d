// RUN: loom-opt %s --split-input-file --convert-loom-to-linalg | FileCheck %s

// range: the length from the operands (limit - start in f32, the quotient
// in f64, as the reference), a zero or non-finite delta reported, the
// elements start + i * delta in f64.
// CHECK-LABEL: func.func @range_f32
// CHECK: %[[DIFF:.*]] = arith.subf
// CHECK: arith.divf {{.*}} : f64
// CHECK: math.ceil
// CHECK: func.call @loom_rt_check_failed
// CHECK: %[[N:.*]] = arith.index_cast {{.*}} : i64 to index
// CHECK: %[[E:.*]] = tensor.empty(%[[N]]) : tensor<?xf32>
// CHECK: linalg.generic {{.*}} outs(%[[E]] : tensor<?xf32>)
// CHECK: linalg.index 0
// CHECK: arith.mulf {{.*}} : f64
// CHECK: arith.truncf {{.*}} : f64 to f32
func.func @range_f32(%s: tensor<f32>, %l: tensor<f32>, %d: tensor<f32>) -> tensor<?xf32> {
  %y = loom.range %s, %l, %d : tensor<f32>, tensor<f32>, tensor<f32> -> tensor<?xf32>
  return %y : tensor<?xf32>
}

// -----

// Integer range: exact ceil division; a zero delta divides by one instead.
// CHECK-LABEL: func.func @range_i32
// CHECK: arith.cmpi eq
// CHECK: func.call @loom_rt_check_failed
// CHECK: arith.select
// CHECK: arith.ceildivsi
// CHECK: tensor.empty({{.*}}) : tensor<?xi32>
func.func @range_i32(%s: tensor<i32>, %l: tensor<i32>, %d: tensor<i32>) -> tensor<?xi32> {
  %y = loom.range %s, %l, %d : tensor<i32>, tensor<i32>, tensor<i32> -> tensor<?xi32>
  return %y : tensor<?xi32>
}

// -----

// A stated static result: the computed length is compared at run time,
// zeros of the stated shape replace a wrong one.
// CHECK-LABEL: func.func @range_stated
// CHECK: %[[R:.*]] = linalg.generic
// CHECK: } -> tensor<?xi64>
// CHECK: %[[DIM:.*]] = tensor.dim %[[R]], %c0
// CHECK: %[[NE:.*]] = arith.cmpi ne, %[[DIM]], %c4
// CHECK: scf.if %[[NE]] {
// CHECK: func.call @loom_rt_shape_error
// CHECK: %[[EQ:.*]] = arith.cmpi eq, %[[DIM]], %c4
// CHECK: scf.if %[[EQ]] -> (tensor<4xi64>) {
// CHECK: tensor.cast %[[R]] : tensor<?xi64> to tensor<4xi64>
// CHECK: } else {
// CHECK: linalg.fill
func.func @range_stated(%s: tensor<i64>, %l: tensor<i64>, %d: tensor<i64>) -> tensor<4xi64> {
  %y = loom.range %s, %l, %d : tensor<i64>, tensor<i64>, tensor<i64> -> tensor<4xi64>
  return %y : tensor<4xi64>
}

// -----

// constant_of_shape: each size read from the shape operand, checked (not
// negative, not above 2^32 elements), the tensor filled.
// CHECK-LABEL: func.func @constant_of_shape
// CHECK-COUNT-2: tensor.extract %arg0
// CHECK: %[[E:.*]] = tensor.empty({{.*}}, {{.*}}) : tensor<?x?xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%cst{{.*}} : f32) outs(%[[E]] : tensor<?x?xf32>)
// CHECK: tensor.dim %[[F]], %c1
// CHECK: func.call @loom_rt_shape_error
func.func @constant_of_shape(%shape: tensor<2xi64>) -> tensor<?x3xf32> {
  %y = loom.constant_of_shape %shape {value = 1.5 : f32} : tensor<2xi64> -> tensor<?x3xf32>
  return %y : tensor<?x3xf32>
}

// -----

// non_zero: a count (a reduction), then the coordinates in one sequential
// loop over the elements carrying the next column.
// CHECK-LABEL: func.func @non_zero
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction"]
// CHECK: arith.cmpf une
// CHECK: %[[E:.*]] = tensor.empty(%{{.*}}) : tensor<2x?xi64>
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[E]], %{{.*}} = %c0{{.*}}) -> (tensor<2x?xi64>, index)
// CHECK: arith.cmpf une
// CHECK: scf.if
// CHECK-COUNT-2: tensor.insert
func.func @non_zero(%x: tensor<3x4xf32>) -> tensor<2x?xi64> {
  %i = loom.non_zero %x : tensor<3x4xf32> -> tensor<2x?xi64>
  return %i : tensor<2x?xi64>
}

// -----

// Elementwise ops take their result sizes from the run-time operand; a
// second run-time size in the same dimension broadcasts with the first
// (numpy: a size of 1 gives way, stretched by a copy made only when it
// must be) or is reported.
// CHECK-LABEL: func.func @elementwise
// CHECK: %[[D:.*]] = tensor.dim %arg0, %c0
// CHECK: %[[E:.*]] = tensor.empty(%[[D]]) : tensor<?xf32>
// CHECK: linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<?xf32>, tensor<f32>) outs(%[[E]] : tensor<?xf32>)
// CHECK: %[[D0:.*]] = tensor.dim %[[A:.*]], %c0
// CHECK: %[[D1:.*]] = tensor.dim %arg0, %c0
// CHECK: %[[ONE:.*]] = arith.cmpi eq, %[[D0]], %c1
// CHECK: %[[T:.*]] = arith.select %[[ONE]], %[[D1]], %[[D0]]
// CHECK: arith.cmpi ne, %{{.*}}, %[[T]]
// CHECK: func.call @loom_rt_check_failed
// CHECK: scf.if %{{.*}} -> (tensor<?xf32>)
// CHECK: linalg.generic
// CHECK: tensor.extract
// CHECK: } else {
func.func @elementwise(%x: tensor<?xf32>, %s: tensor<f32>) -> tensor<?xf32> {
  %y = loom.mul %x, %s : tensor<?xf32>, tensor<f32> -> tensor<?xf32>
  %z = loom.add %y, %x : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
  return %z : tensor<?xf32>
}

// -----

// An elementwise op whose result the model states: the run-time operand is
// checked against it first.
// CHECK-LABEL: func.func @elementwise_stated
// CHECK: func.call @loom_rt_shape_error
// CHECK: %[[C:.*]] = scf.if {{.*}} -> (tensor<10xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[C]] : tensor<10xf32>) outs({{.*}} : tensor<10xf16>)
// CHECK: arith.truncf
func.func @elementwise_stated(%x: tensor<?xf32>) -> tensor<10xf16> {
  %y = loom.cast %x : tensor<?xf32> to tensor<10xf16>
  return %y : tensor<10xf16>
}

// -----

// Compress's spelling: non_zero, squeeze (a collapse of the run-time
// shape), gather with run-time indices (the result's size from them).
// CHECK-LABEL: func.func @compress
// CHECK: %[[S:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<1x?xi64> into tensor<?xi64>
// CHECK: func.call @loom_rt_index_error
// CHECK: %[[N:.*]] = tensor.dim %[[S]], %c0
// CHECK: tensor.empty(%[[N]]) : tensor<?x2xf32>
func.func @compress(%x: tensor<3x2xf32>, %c: tensor<3xi1>) -> tensor<?x2xf32> {
  %0 = loom.non_zero %c : tensor<3xi1> -> tensor<1x?xi64>
  %1 = loom.squeeze %0 {axes = array<i64: 0>} : tensor<1x?xi64> -> tensor<?xi64>
  %2 = loom.gather %x, %1 : tensor<3x2xf32>, tensor<?xi64> -> tensor<?x2xf32>
  return %2 : tensor<?x2xf32>
}

// -----

// The importer's cast to an output's stated shape is checked too.
// CHECK-LABEL: func.func @stated_output
// CHECK: func.call @loom_rt_shape_error
// CHECK: scf.if {{.*}} -> (tensor<3xi64>)
// CHECK: tensor.cast {{.*}} : tensor<?xi64> to tensor<3xi64>
func.func @stated_output(%s: tensor<i64>, %l: tensor<i64>, %d: tensor<i64>) -> tensor<3xi64> {
  %y = loom.range %s, %l, %d : tensor<i64>, tensor<i64>, tensor<i64> -> tensor<?xi64>
  %c = tensor.cast %y : tensor<?xi64> to tensor<3xi64>
  return %c : tensor<3xi64>
}
