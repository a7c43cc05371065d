// RUN: loom-opt %s --loom-cpu-im2col | FileCheck %s

// A convolution with 8x8 output positions: the windows are copied into
// col[n, c, kh, kw, oh, ow] (a copy whose innermost loop walks an input
// row: stride 2 here), then out[n, f, oh*ow] += w[f, c*kh*kw] *
// col[n, c*kh*kw, oh*ow], a batched matrix product whose columns are the
// output positions.
// CHECK-DAG: #[[WINDOW:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4 * 2 + d2, d5 * 2 + d3)>
// CHECK-DAG: #[[W:.+]] = affine_map<(d0, d1, d2, d3) -> (d1, d3)>
// CHECK-DAG: #[[COL:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @conv
// CHECK: %[[COPY:.+]] = linalg.generic {indexing_maps = [#[[WINDOW]], #{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%arg0 : tensor<1x3x17x17xf32>) outs(%{{.+}} : tensor<1x3x3x3x8x8xf32>)
// CHECK: %[[COLS:.+]] = tensor.collapse_shape %[[COPY]] {{\[\[}}0], [1, 2, 3], [4, 5]] : tensor<1x3x3x3x8x8xf32> into tensor<1x27x64xf32>
// CHECK: %[[FILTER:.+]] = tensor.collapse_shape %arg1 {{\[\[}}0], [1, 2, 3]] : tensor<4x3x3x3xf32> into tensor<4x27xf32>
// CHECK: %[[INIT:.+]] = tensor.collapse_shape %arg2 {{\[\[}}0], [1], [2, 3]] : tensor<1x4x8x8xf32> into tensor<1x4x64xf32>
// CHECK: %[[PRODUCT:.+]] = linalg.generic {indexing_maps = [#[[W]], #[[COL]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[FILTER]], %[[COLS]] : tensor<4x27xf32>, tensor<1x27x64xf32>) outs(%[[INIT]] : tensor<1x4x64xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: tensor.expand_shape %[[PRODUCT]] {{\[\[}}0], [1], [2, 3]] output_shape [1, 4, 8, 8]
// CHECK-NOT: linalg.conv
func.func @conv(%x: tensor<1x3x17x17xf32>, %w: tensor<4x3x3x3xf32>, %y: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x3x17x17xf32>, tensor<4x3x3x3xf32>) outs(%y : tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  return %0 : tensor<1x4x8x8xf32>
}

// i32, the exact accumulation of quantized convolutions: the same, with
// integer multiply-adds.
// CHECK-LABEL: func.func @conv_i32
// CHECK: linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<4x27xi32>, tensor<1x27x64xi32>) outs(%{{.+}} : tensor<1x4x64xi32>)
// CHECK: arith.muli
// CHECK: arith.addi
// CHECK-NOT: linalg.conv
func.func @conv_i32(%x: tensor<1x3x17x17xi32>, %w: tensor<4x3x3x3xi32>, %y: tensor<1x4x8x8xi32>) -> tensor<1x4x8x8xi32> {
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x3x17x17xi32>, tensor<4x3x3x3xi32>) outs(%y : tensor<1x4x8x8xi32>) -> tensor<1x4x8x8xi32>
  return %0 : tensor<1x4x8x8xi32>
}

// Fewer output positions than min-columns (16): the copy does not pay.
// CHECK-LABEL: func.func @small
// CHECK: linalg.conv_2d_nchw_fchw
func.func @small(%x: tensor<1x3x4x4xf32>, %w: tensor<4x3x3x3xf32>, %y: tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32> {
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x3x4x4xf32>, tensor<4x3x3x3xf32>) outs(%y : tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  return %0 : tensor<1x4x2x2xf32>
}

// A 1x1 window with unit strides: the input already is the column
// matrix, viewed as [n, c, h*w]; no copy.
// CHECK-LABEL: func.func @pointwise
// CHECK-NOT: linalg.generic {{.*}}"parallel", "parallel", "parallel", "parallel", "parallel", "parallel"
// CHECK: %[[COLS:.+]] = tensor.collapse_shape %arg0 {{\[\[}}0], [1], [2, 3]] : tensor<1x8x6x6xf32> into tensor<1x8x36xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.+}}, %[[COLS]] : tensor<16x8xf32>, tensor<1x8x36xf32>)
func.func @pointwise(%x: tensor<1x8x6x6xf32>, %w: tensor<16x8x1x1xf32>, %y: tensor<1x16x6x6xf32>) -> tensor<1x16x6x6xf32> {
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x8x6x6xf32>, tensor<16x8x1x1xf32>) outs(%y : tensor<1x16x6x6xf32>) -> tensor<1x16x6x6xf32>
  return %0 : tensor<1x16x6x6xf32>
}
