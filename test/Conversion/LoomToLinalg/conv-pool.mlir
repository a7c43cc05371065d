// RUN: loom-opt %s --split-input-file --convert-loom-to-linalg | FileCheck %s

// Ungrouped 2-D convolution: zero padding, the named op, then the bias
// broadcast per channel.
// CHECK-DAG: #[[CHAN:.+]] = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
// CHECK-LABEL: func.func @conv
// CHECK-SAME: (%[[X:.+]]: tensor<1x3x8x8xf32>, %[[W:.+]]: tensor<16x3x3x3xf32>, %[[B:.+]]: tensor<16xf32>)
// CHECK: %[[P:.+]] = tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: } : tensor<1x3x8x8xf32> to tensor<1x3x10x10xf32>
// CHECK: %[[ACC:.+]] = linalg.fill
// CHECK: %[[C:.+]] = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%[[P]], %[[W]] : tensor<1x3x10x10xf32>, tensor<16x3x3x3xf32>) outs(%[[ACC]] : tensor<1x16x8x8xf32>)
// CHECK: %[[BV:.+]] = tensor.expand_shape %[[B]] {{.+}} output_shape [16, 1, 1]
// CHECK: %[[R:.+]] = linalg.generic {indexing_maps = [#{{.+}}, #[[CHAN]], #{{.+}}], {{.+}} ins(%[[C]], %[[BV]] : tensor<1x16x8x8xf32>, tensor<16x1x1xf32>)
// CHECK: arith.addf
// CHECK: return %[[R]]
func.func @conv(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>, %b: tensor<16xf32>) -> tensor<1x16x8x8xf32> {
  %y = loom.conv %x, %w, %b {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>) -> tensor<1x16x8x8xf32>
  return %y : tensor<1x16x8x8xf32>
}

// -----

// 16-bit floats accumulate in f32, the bias added to the f32 sum, and are
// rounded once at the end (the reference executor rounds the exact sum).
// CHECK-LABEL: func.func @conv_bf16_accumulates_in_f32
// CHECK: %[[CONV:.+]] = linalg.conv_2d_nchw_fchw {{.*}} ins(%{{.+}}, %{{.+}} : tensor<1x3x10x10xbf16>, tensor<16x3x3x3xbf16>) outs(%{{.+}} : tensor<1x16x8x8xf32>)
// CHECK: %[[BIASED:.+]] = linalg.generic {{.*}} ins(%[[CONV]], %{{.+}} : tensor<1x16x8x8xf32>, tensor<16x1x1xbf16>) outs(%{{.+}} : tensor<1x16x8x8xf32>)
// CHECK: arith.extf %{{.+}} : bf16 to f32
// CHECK: arith.addf
// CHECK: linalg.generic {{.*}} ins(%[[BIASED]] : tensor<1x16x8x8xf32>) outs(%{{.+}} : tensor<1x16x8x8xbf16>)
// CHECK: arith.truncf %{{.+}} : f32 to bf16
func.func @conv_bf16_accumulates_in_f32(%x: tensor<1x3x8x8xbf16>, %w: tensor<16x3x3x3xbf16>, %b: tensor<16xbf16>) -> tensor<1x16x8x8xbf16> {
  %y = loom.conv %x, %w, %b {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x8x8xbf16>, tensor<16x3x3x3xbf16>, tensor<16xbf16>) -> tensor<1x16x8x8xbf16>
  return %y : tensor<1x16x8x8xbf16>
}

// -----

// Ungrouped 1-D convolution (audio and sequence models): the 2-D named op
// over a height of one, with the input and filter given a unit height
// and the result's dropped, so the CPU target's im2col and kernel
// library take it like any 2-D convolution.
// CHECK-LABEL: func.func @conv_1d
// CHECK-SAME: (%[[X:.+]]: tensor<2x8x16xf32>, %[[W:.+]]: tensor<4x8x3xf32>)
// CHECK: %[[P:.+]] = tensor.pad %[[X]] low[0, 0, 1] high[0, 0, 1]
// CHECK: %[[X4:.+]] = tensor.expand_shape %[[P]] {{\[\[}}0], [1], [2, 3]] output_shape [2, 8, 1, 18] : tensor<2x8x18xf32> into tensor<2x8x1x18xf32>
// CHECK: %[[W4:.+]] = tensor.expand_shape %[[W]] {{\[\[}}0], [1], [2, 3]] output_shape [4, 8, 1, 3] : tensor<4x8x3xf32> into tensor<4x8x1x3xf32>
// CHECK: %[[C:.+]] = linalg.conv_2d_nchw_fchw {dilations = dense<[1, 2]> : tensor<2xi64>, strides = dense<[1, 2]> : tensor<2xi64>} ins(%[[X4]], %[[W4]] : tensor<2x8x1x18xf32>, tensor<4x8x1x3xf32>) outs(%{{.+}} : tensor<2x4x1x7xf32>)
// CHECK: %[[R:.+]] = tensor.collapse_shape %[[C]] {{\[\[}}0], [1], [2, 3]] : tensor<2x4x1x7xf32> into tensor<2x4x7xf32>
// CHECK: return %[[R]]
func.func @conv_1d(%x: tensor<2x8x16xf32>, %w: tensor<4x8x3xf32>) -> tensor<2x4x7xf32> {
  %y = loom.conv %x, %w {strides = array<i64: 2>, pads = array<i64: 1, 1>, dilations = array<i64: 2>, group = 1 : i64} : (tensor<2x8x16xf32>, tensor<4x8x3xf32>) -> tensor<2x4x7xf32>
  return %y : tensor<2x4x7xf32>
}

// -----

// The same with a batch known only at run time (an encoder served at any
// batch): still the 2-D named op, whose batch the CPU target then runs
// one element at a time (loom-cpu-batch-loops).
// CHECK-LABEL: func.func @conv_1d_run_time_batch
// CHECK-SAME: (%[[X:.+]]: tensor<?x8x16xf32>, %[[W:.+]]: tensor<4x8x3xf32>)
// CHECK: %[[N:.+]] = tensor.dim %[[X]], %c0
// CHECK: %[[X4:.+]] = tensor.expand_shape %[[X]] {{\[\[}}0], [1], [2, 3]] output_shape [%{{.+}}, 8, 1, 16] : tensor<?x8x16xf32> into tensor<?x8x1x16xf32>
// CHECK: tensor.empty(%{{.+}}) : tensor<?x4x1x14xf32>
// CHECK: %[[C:.+]] = linalg.conv_2d_nchw_fchw {{.+}} ins(%[[X4]], %{{.+}} : tensor<?x8x1x16xf32>, tensor<4x8x1x3xf32>) outs(%{{.+}} : tensor<?x4x1x14xf32>)
// CHECK: tensor.collapse_shape %[[C]] {{\[\[}}0], [1], [2, 3]] : tensor<?x4x1x14xf32> into tensor<?x4x14xf32>
// CHECK: return
func.func @conv_1d_run_time_batch(%x: tensor<?x8x16xf32>, %w: tensor<4x8x3xf32>) -> tensor<?x4x14xf32> {
  %a = loom.conv %x, %w {strides = array<i64: 1>, pads = array<i64: 0, 0>, dilations = array<i64: 1>, group = 1 : i64} : (tensor<?x8x16xf32>, tensor<4x8x3xf32>) -> tensor<?x4x14xf32>
  return %a : tensor<?x4x14xf32>
}

// -----

// Grouped: the input channel of output channel m is
// (m floordiv M/group) * C/group + c.
// CHECK-DAG: #[[IN:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, (d1 floordiv 2) * 2 + d4, d2 + d5, d3 + d6)>
// CHECK-DAG: #[[WT:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>
// CHECK-LABEL: func.func @conv_grouped
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[WT]], #{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
func.func @conv_grouped(%x: tensor<1x4x8x8xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %y = loom.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %y : tensor<1x4x6x6xf32>
}

// -----

// Max pooling: the window dimensions come from an empty kernel-shaped
// tensor; the accumulator starts at -inf.
// CHECK-DAG: #[[WIN:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 * 2 + d4, d3 * 2 + d5)>
// CHECK-DAG: #[[KER:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>
// CHECK-LABEL: func.func @max_pool
// CHECK-SAME: (%[[X:.+]]: tensor<1x3x8x8xf32>)
// CHECK: %[[NEGINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: %[[K:.+]] = tensor.empty() : tensor<2x2xf32>
// CHECK: %[[ACC:.+]] = linalg.fill ins(%[[NEGINF]] : f32)
// CHECK: linalg.generic {indexing_maps = [#[[WIN]], #[[KER]], #{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[X]], %[[K]] : tensor<1x3x8x8xf32>, tensor<2x2xf32>) outs(%[[ACC]] : tensor<1x3x4x4xf32>)
// CHECK: arith.maximumf
func.func @max_pool(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> {
  %y = loom.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  return %y : tensor<1x3x4x4xf32>
}

// -----

// Average pooling without counting pads: each window sum is divided by
// the overlap of its window with the unpadded input, per axis
// min(o*s + k, pad + size) - max(o*s, pad).
// CHECK-LABEL: func.func @avg_pool
// CHECK: tensor.pad %{{.+}} low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: arith.addf
// CHECK: linalg.generic
// CHECK: %[[O:.+]] = linalg.index 2 : index
// CHECK: %[[START:.+]] = arith.muli %[[O]], %{{.+}} : index
// CHECK: %[[END:.+]] = arith.addi %[[START]], %{{.+}} : index
// CHECK: %[[HI:.+]] = arith.minsi %[[END]], %{{.+}} : index
// CHECK: %[[LO:.+]] = arith.maxsi %[[START]], %{{.+}} : index
// CHECK: arith.subi %[[HI]], %[[LO]] : index
// CHECK: linalg.index 3 : index
// CHECK: arith.sitofp
// CHECK: arith.divf
func.func @avg_pool(%x: tensor<1x3x5x5xf32>) -> tensor<1x3x3x3xf32> {
  %y = loom.avg_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : tensor<1x3x5x5xf32> -> tensor<1x3x3x3xf32>
  return %y : tensor<1x3x3x3xf32>
}

// -----

// Dilated windows count their taps o*s + t*d inside the unpadded input: t
// from ceil((pad - o*s) / d) to floor((pad + size - 1 - o*s) / d), within
// [0, k).
// CHECK-LABEL: func.func @avg_pool_dilated
// CHECK: linalg.generic
// CHECK: %[[O:.+]] = linalg.index 2 : index
// CHECK: %[[START:.+]] = arith.muli %[[O]], %{{.+}} : index
// CHECK: %[[FROM:.+]] = arith.subi %{{.+}}, %[[START]] : index
// CHECK: arith.ceildivsi %[[FROM]], %{{.+}} : index
// CHECK: arith.floordivsi
// CHECK: arith.divf
func.func @avg_pool_dilated(%x: tensor<1x3x6x6xf32>) -> tensor<1x3x3x3xf32> {
  %y = loom.avg_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 2, 2>} : tensor<1x3x6x6xf32> -> tensor<1x3x3x3xf32>
  return %y : tensor<1x3x3x3xf32>
}

// -----

// Transposed convolution, output-stationary: the weight is read at
// ((m floordiv M/group) * C/group + c, m mod M/group, k), the input with
// tensor.extract where o + pad - k * dilation is a multiple of the stride.
// CHECK-DAG: #[[WT:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> ((d1 floordiv 3) * 2 + d4, d1 mod 3, d5, d6)>
// CHECK-DAG: #[[WIN:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5, d6)>
// CHECK-LABEL: func.func @conv_transpose
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x5x5xf32>, %[[W:.+]]: tensor<4x3x3x3xf32>)
// CHECK: %[[WINDOW:.+]] = tensor.empty() : tensor<2x3x3xf32>
// CHECK: linalg.generic {indexing_maps = [#[[WT]], #[[WIN]], #{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%[[W]], %[[WINDOW]] :
// CHECK: arith.remsi
// CHECK: %[[V:.+]] = tensor.extract %[[X]]
// CHECK: arith.mulf %[[V]]
// CHECK: arith.select
func.func @conv_transpose(%x: tensor<2x4x5x5xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x6x11x11xf32> {
  %y = loom.conv_transpose %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, group = 2 : i64} : (tensor<2x4x5x5xf32>, tensor<4x3x3x3xf32>) -> tensor<2x6x11x11xf32>
  return %y : tensor<2x6x11x11xf32>
}

// -----

// Resize with constant scales: the resized axes get constant tables of
// source indices (and, interpolating, weights) [out, taps]; one tap
// dimension per resized axis is reduced. N and C are copied.
// CHECK-DAG: #[[TH:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d2, d4)>
// CHECK-DAG: #[[TW:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d3, d5)>
// CHECK-LABEL: func.func @resize_linear
// CHECK-SAME: (%[[X:.+]]: tensor<1x1x2x2xf32>)
// CHECK-DAG: %[[IH:.+]] = arith.constant dense<{{.+}}> : tensor<4x2xi64>
// CHECK-DAG: %[[WH:.+]] = arith.constant dense<{{.+}}> : tensor<4x2xf32>
// CHECK: linalg.generic {indexing_maps = [#[[TH]], #[[TH]], #[[TW]], #[[TW]], #{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[IH]], %[[WH]], %{{.+}}, %{{.+}} :
// CHECK: %[[N:.+]] = linalg.index 0 : index
// CHECK: %[[W:.+]] = arith.mulf
// CHECK: %[[V:.+]] = tensor.extract %[[X]][%[[N]],
// CHECK: %[[P:.+]] = arith.mulf %[[W]], %[[V]]
// CHECK: arith.addf %{{.+}}, %[[P]]
func.func @resize_linear(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32> {
  %s = loom.constant dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>
  %y = loom.resize %x, %s {mode = "linear"} : (tensor<1x1x2x2xf32>, tensor<4xf32>) -> tensor<1x1x4x4xf32>
  return %y : tensor<1x1x4x4xf32>
}

// -----

// Nearest keeps one source per position: the table is [out, 1] and the
// element is copied.
// CHECK-LABEL: func.func @resize_nearest
// CHECK: arith.constant dense<{{\[\[}}0], [0], [1], [1]]> : tensor<4x1xi64>
// CHECK: %[[V:.+]] = tensor.extract
// CHECK-NEXT: linalg.yield %[[V]]
func.func @resize_nearest(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32> {
  %s = loom.constant dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>
  %y = loom.resize %x, %s {mode = "nearest", coordinate_transformation_mode = "asymmetric", nearest_mode = "floor"} : (tensor<1x1x2x2xf32>, tensor<4xf32>) -> tensor<1x1x4x4xf32>
  return %y : tensor<1x1x4x4xf32>
}

// -----

// Max pooling with indices: a second accumulator holds the flat index
// ((n * C + c) * H + h) * W + w of the first maximum.
// CHECK-LABEL: func.func @max_pool_with_indices
// CHECK: %[[R:.+]]:2 = linalg.generic {{.+}} outs(%{{.+}}, %{{.+}} : tensor<1x3x4x4xf32>, tensor<1x3x4x4xi64>)
// CHECK: %[[BETTER:.+]] = arith.cmpf ogt
// CHECK: arith.select %[[BETTER]]
// CHECK: arith.select %[[BETTER]]
// CHECK: return %[[R]]#0, %[[R]]#1
func.func @max_pool_with_indices(%x: tensor<1x3x8x8xf32>) -> (tensor<1x3x4x4xf32>, tensor<1x3x4x4xi64>) {
  %y, %i = loom.max_pool_with_indices %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>, tensor<1x3x4x4xi64>
  return %y, %i : tensor<1x3x4x4xf32>, tensor<1x3x4x4xi64>
}

// -----

// Grid sampling: a generic over (n, c, oy, ox, tap y, tap x) reads the
// grid and the image with tensor.extract; bilinear has two taps per axis
// and "zeros" padding drops neighbours outside the image.
// CHECK-LABEL: func.func @grid_sample
// CHECK-SAME: (%[[X:.+]]: tensor<1x2x4x4xf32>, %[[G:.+]]: tensor<1x3x3x2xf32>)
// CHECK: %[[TAPS:.+]] = tensor.empty() : tensor<2x2xf32>
// CHECK: linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[TAPS]] : tensor<2x2xf32>)
// CHECK: tensor.extract %[[G]]
// CHECK: tensor.extract %[[G]]
// CHECK: math.floor
// CHECK: %[[V:.+]] = tensor.extract %[[X]]
// CHECK: arith.select
func.func @grid_sample(%x: tensor<1x2x4x4xf32>, %g: tensor<1x3x3x2xf32>) -> tensor<1x2x3x3xf32> {
  %y = loom.grid_sample %x, %g : tensor<1x2x4x4xf32>, tensor<1x3x3x2xf32> -> tensor<1x2x3x3xf32>
  return %y : tensor<1x2x3x3xf32>
}

// -----

// Scales known only at run time: each axis's tables [out, taps] come from
// a generic that evaluates the sampling in f64 from the scale it reads.
// CHECK-LABEL: func.func @resize_runtime
// CHECK-SAME: (%[[X:.+]]: tensor<1x1x2x2xf32>, %[[S:.+]]: tensor<4xf32>)
// CHECK: tensor.extract %[[S]]
// CHECK: %{{.+}}:3 = linalg.generic {{.+}} outs({{.+}} : tensor<1x2xi64>, tensor<1x2xf32>, tensor<1x2xi1>)
// CHECK: math.floor %{{.+}} : f64
// CHECK: tensor.extract %[[S]]
// CHECK: %[[H:.+]]:3 = linalg.generic {{.+}} outs({{.+}} : tensor<4x2xi64>, tensor<4x2xf32>, tensor<4x2xi1>)
// CHECK: linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]
func.func @resize_runtime(%x: tensor<1x1x2x2xf32>, %s: tensor<4xf32>) -> tensor<1x1x4x4xf32> {
  %y = loom.resize %x, %s {mode = "linear"} : (tensor<1x1x2x2xf32>, tensor<4xf32>) -> tensor<1x1x4x4xf32>
  return %y : tensor<1x1x4x4xf32>
}
