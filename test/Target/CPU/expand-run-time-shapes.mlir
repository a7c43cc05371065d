// RUN: loom-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(loom-cpu-expand-run-time-shapes),expand-strided-metadata)' -verify-diagnostics | FileCheck %s

// Two run-time sizes in one group: a view at those sizes with row-major
// strides (upstream expand-strided-metadata alone crashes on it).
// CHECK-LABEL: func.func @two_in_a_group
// CHECK-SAME: (%[[M:.*]]: memref<?x64xf32>, %[[A:.*]]: index, %[[B:.*]]: index)
// CHECK: %[[S:.*]] = arith.muli %[[B]], %c64
// CHECK: memref.reinterpret_cast %[[M]] to offset: [0], sizes: [%[[A]], %[[B]], 64], strides: [%[[S]], 64, 1]
// CHECK-NOT: memref.expand_shape
func.func @two_in_a_group(%m: memref<?x64xf32>, %a: index, %b: index) -> memref<?x?x64xf32> {
  %0 = memref.expand_shape %m [[0, 1], [2]] output_shape [%a, %b, 64] : memref<?x64xf32> into memref<?x?x64xf32>
  return %0 : memref<?x?x64xf32>
}

// -----

// One run-time size per group is left to upstream.
// CHECK-LABEL: func.func @one_in_a_group
// CHECK: memref.reinterpret_cast {{.*}} sizes: [%{{.*}}, 1, 1, 1], strides: [1, 1, 1, 1]
func.func @one_in_a_group(%m: memref<?xi64>, %a: index) -> memref<?x1x1x1xi64> {
  %0 = memref.expand_shape %m [[0, 1, 2, 3]] output_shape [%a, 1, 1, 1] : memref<?xi64> into memref<?x1x1x1xi64>
  return %0 : memref<?x1x1x1xi64>
}

// -----

// A source that is not contiguous is refused.
func.func @strided(%m: memref<?x64xf32, strided<[128, 1]>>, %a: index, %b: index) -> memref<?x?x64xf32, strided<[?, 128, 1]>> {
  // expected-error @+1 {{expands a buffer that is not contiguous}}
  %0 = memref.expand_shape %m [[0, 1], [2]] output_shape [%a, %b, 64] : memref<?x64xf32, strided<[128, 1]>> into memref<?x?x64xf32, strided<[?, 128, 1]>>
  return %0 : memref<?x?x64xf32, strided<[?, 128, 1]>>
}
