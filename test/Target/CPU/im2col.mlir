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
// CHECK-DAG: #[[PWINDOW:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d3, d1 + d4, d2 + d5)>
// CHECK-DAG: #[[PCOL:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[PW:.+]] = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
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

// bf16 operands summed in f32 (a bf16 convolution as convert-loom-to-linalg
// lowers it): the windows are copied as bf16 and the product widens them.
// CHECK-LABEL: func.func @conv_bf16
// CHECK: linalg.generic {{.*}} ins(%arg0 : tensor<1x3x17x17xbf16>) outs(%{{.+}} : tensor<1x3x3x3x8x8xbf16>)
// CHECK: linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<4x27xbf16>, tensor<1x27x64xbf16>) outs(%{{.+}} : tensor<1x4x64xf32>)
// CHECK: arith.extf %{{.+}} : bf16 to f32
// CHECK: arith.extf %{{.+}} : bf16 to f32
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-NOT: linalg.conv
func.func @conv_bf16(%x: tensor<1x3x17x17xbf16>, %w: tensor<4x3x3x3xbf16>, %y: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x3x17x17xbf16>, tensor<4x3x3x3xbf16>) outs(%y : tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
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

// Fewer output positions than min-columns (16): positions-major. The
// windows are copied into col[n, oh, ow, c, kh, kw], the product's rows
// are the positions and its columns the output channels (a register tile
// full of channels instead of 4 positions), with the filter transposed
// to [c*kh*kw, f]; a zero-filled init becomes a zero fill of [n, p, f],
// and the result is transposed back to [n, f, p].
// CHECK-LABEL: func.func @small
// CHECK: %[[PCOPY:.+]] = linalg.generic {indexing_maps = [#[[PWINDOW]], #{{.+}}], {{.*}} ins(%arg0 : tensor<1x3x4x4xf32>) outs(%{{.+}} : tensor<1x2x2x3x3x3xf32>)
// CHECK: %[[PCOLS:.+]] = tensor.collapse_shape %[[PCOPY]] {{\[\[}}0], [1, 2], [3, 4, 5]] : tensor<1x2x2x3x3x3xf32> into tensor<1x4x27xf32>
// CHECK: %[[PFILTER:.+]] = tensor.collapse_shape %arg1 {{\[\[}}0], [1, 2, 3]] : tensor<4x3x3x3xf32> into tensor<4x27xf32>
// CHECK: %[[PFILTERT:.+]] = linalg.transpose ins(%[[PFILTER]] : tensor<4x27xf32>) outs(%{{.+}} : tensor<27x4xf32>) permutation = [1, 0]
// CHECK: %[[PZERO:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<1x4x4xf32>)
// CHECK: %[[PPRODUCT:.+]] = linalg.generic {indexing_maps = [#[[PCOL]], #[[PW]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[PCOLS]], %[[PFILTERT]] : tensor<1x4x27xf32>, tensor<27x4xf32>) outs(%[[PZERO]] : tensor<1x4x4xf32>)
// CHECK: %[[PBACK:.+]] = linalg.transpose ins(%[[PPRODUCT]] : tensor<1x4x4xf32>) outs(%{{.+}} : tensor<1x4x4xf32>) permutation = [0, 2, 1]
// CHECK: tensor.expand_shape %[[PBACK]] {{\[\[}}0], [1], [2, 3]] output_shape [1, 4, 2, 2]
// CHECK-NOT: linalg.conv
func.func @small(%x: tensor<1x3x4x4xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x2x2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x2x2xf32>
  %y = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x3x4x4xf32>, tensor<4x3x3x3xf32>) outs(%y : tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  return %0 : tensor<1x4x2x2xf32>
}

// A constant filter (a weight) is transposed here, once: the new constant
// holds w[f, c] at [c, f]. Any other init is transposed into the product.
// CHECK-LABEL: func.func @small_weight
// CHECK: %[[WT:.+]] = arith.constant dense<{{\[\[}}1.000000e+00, 3.000000e+00], [2.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK: %[[INITT:.+]] = linalg.transpose ins(%{{.+}} : tensor<1x2x1xf32>) outs(%{{.+}} : tensor<1x1x2xf32>) permutation = [0, 2, 1]
// CHECK: linalg.generic {{.*}} ins(%{{.+}}, %[[WT]] : tensor<1x1x2xf32>, tensor<2x2xf32>) outs(%[[INITT]] : tensor<1x1x2xf32>)
func.func @small_weight(%x: tensor<1x2x1x1xf32>, %y: tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32> {
  %w = arith.constant dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]]]> : tensor<2x2x1x1xf32>
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x2x1x1xf32>, tensor<2x2x1x1xf32>) outs(%y : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  return %0 : tensor<1x2x1x1xf32>
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
