// RUN: loom-opt %s | loom-opt | FileCheck %s
// RUN: loom-opt %s --mlir-print-op-generic | loom-opt | FileCheck %s

// CHECK-LABEL: func.func @unary
func.func @unary(%x: tensor<2x?xf32>, %b: tensor<4xi1>, %i: tensor<4xi32>) {
  // CHECK: loom.abs
  %0 = loom.abs %x : tensor<2x?xf32>
  // CHECK: loom.neg
  %1 = loom.neg %x : tensor<2x?xf32>
  // CHECK: loom.sign
  %2 = loom.sign %x : tensor<2x?xf32>
  // CHECK: loom.exp
  %3 = loom.exp %x : tensor<2x?xf32>
  // CHECK: loom.log
  %4 = loom.log %x : tensor<2x?xf32>
  // CHECK: loom.sqrt
  %5 = loom.sqrt %x : tensor<2x?xf32>
  // CHECK: loom.rsqrt
  %6 = loom.rsqrt %x : tensor<2x?xf32>
  // CHECK: loom.reciprocal
  %7 = loom.reciprocal %x : tensor<2x?xf32>
  // CHECK: loom.sin
  %8 = loom.sin %x : tensor<2x?xf32>
  // CHECK: loom.cos
  %9 = loom.cos %x : tensor<2x?xf32>
  // CHECK: loom.tan
  %10 = loom.tan %x : tensor<2x?xf32>
  // CHECK: loom.asin
  %11 = loom.asin %x : tensor<2x?xf32>
  // CHECK: loom.acos
  %12 = loom.acos %x : tensor<2x?xf32>
  // CHECK: loom.atan
  %13 = loom.atan %x : tensor<2x?xf32>
  // CHECK: loom.sinh
  %14 = loom.sinh %x : tensor<2x?xf32>
  // CHECK: loom.cosh
  %15 = loom.cosh %x : tensor<2x?xf32>
  // CHECK: loom.asinh
  %16 = loom.asinh %x : tensor<2x?xf32>
  // CHECK: loom.acosh
  %17 = loom.acosh %x : tensor<2x?xf32>
  // CHECK: loom.atanh
  %18 = loom.atanh %x : tensor<2x?xf32>
  // CHECK: loom.tanh
  %19 = loom.tanh %x : tensor<2x?xf32>
  // CHECK: loom.erf
  %20 = loom.erf %x : tensor<2x?xf32>
  // CHECK: loom.floor
  %21 = loom.floor %x : tensor<2x?xf32>
  // CHECK: loom.ceil
  %22 = loom.ceil %x : tensor<2x?xf32>
  // CHECK: loom.round
  %23 = loom.round %x : tensor<2x?xf32>
  // CHECK: loom.not
  %24 = loom.not %b : tensor<4xi1>
  // CHECK: loom.bitwise_not
  %25 = loom.bitwise_not %i : tensor<4xi32>
  // CHECK: loom.is_nan
  %26 = loom.is_nan %x : tensor<2x?xf32> -> tensor<2x?xi1>
  // CHECK: loom.is_inf {{.*}}detect_negative = false
  %27 = loom.is_inf %x {detect_negative = false} : tensor<2x?xf32> -> tensor<2x?xi1>
  return
}

// CHECK-LABEL: func.func @activations
func.func @activations(%x: tensor<8xf32>) {
  // CHECK: loom.relu
  %0 = loom.relu %x : tensor<8xf32>
  // CHECK: loom.sigmoid
  %1 = loom.sigmoid %x : tensor<8xf32>
  // CHECK: loom.softplus
  %2 = loom.softplus %x : tensor<8xf32>
  // CHECK: loom.softsign
  %3 = loom.softsign %x : tensor<8xf32>
  // CHECK: loom.silu
  %4 = loom.silu %x : tensor<8xf32>
  // CHECK: loom.leaky_relu {{.*}}alpha = 1.000000e-01
  %5 = loom.leaky_relu %x {alpha = 0.1 : f32} : tensor<8xf32>
  // CHECK: loom.elu
  %6 = loom.elu %x {alpha = 1.0 : f32} : tensor<8xf32>
  // CHECK: loom.selu
  %7 = loom.selu %x : tensor<8xf32>
  // CHECK: loom.hard_sigmoid
  %8 = loom.hard_sigmoid %x {alpha = 0.2 : f32, beta = 0.5 : f32} : tensor<8xf32>
  // CHECK: loom.gelu {{.*}}approximate = "tanh"
  %9 = loom.gelu %x {approximate = "tanh"} : tensor<8xf32>
  return
}

// CHECK-LABEL: func.func @binary
func.func @binary(%a: tensor<4x1xf32>, %b: tensor<3xf32>, %p: tensor<4x1xi1>,
                  %q: tensor<3xi1>, %u: tensor<3xui8>) {
  // CHECK: loom.add %{{.*}}, %{{.*}} : tensor<4x1xf32>, tensor<3xf32> -> tensor<4x3xf32>
  %0 = loom.add %a, %b : tensor<4x1xf32>, tensor<3xf32> -> tensor<4x3xf32>
  // CHECK: loom.sub
  %1 = loom.sub %a, %b : tensor<4x1xf32>, tensor<3xf32> -> tensor<4x3xf32>
  // CHECK: loom.mul
  %2 = loom.mul %a, %b : tensor<4x1xf32>, tensor<3xf32> -> tensor<4x3xf32>
  // CHECK: loom.div
  %3 = loom.div %a, %b : tensor<4x1xf32>, tensor<3xf32> -> tensor<4x3xf32>
  // CHECK: loom.pow
  %4 = loom.pow %a, %b : tensor<4x1xf32>, tensor<3xf32> -> tensor<4x3xf32>
  // CHECK: loom.max
  %5 = loom.max %a, %b : tensor<4x1xf32>, tensor<3xf32> -> tensor<4x3xf32>
  // CHECK: loom.min
  %6 = loom.min %a, %b : tensor<4x1xf32>, tensor<3xf32> -> tensor<4x3xf32>
  // CHECK: loom.mod {{.*}}fmod = true
  %7 = loom.mod %a, %b {fmod = true} : tensor<4x1xf32>, tensor<3xf32> -> tensor<4x3xf32>
  // CHECK: loom.bit_shift {{.*}}direction = "LEFT"
  %8 = loom.bit_shift %u, %u {direction = "LEFT"} : tensor<3xui8>, tensor<3xui8> -> tensor<3xui8>
  // CHECK: loom.and
  %9 = loom.and %p, %q : tensor<4x1xi1>, tensor<3xi1> -> tensor<4x3xi1>
  // CHECK: loom.or
  %10 = loom.or %p, %q : tensor<4x1xi1>, tensor<3xi1> -> tensor<4x3xi1>
  // CHECK: loom.xor
  %11 = loom.xor %p, %q : tensor<4x1xi1>, tensor<3xi1> -> tensor<4x3xi1>
  // CHECK: loom.equal
  %12 = loom.equal %a, %b : tensor<4x1xf32>, tensor<3xf32> -> tensor<4x3xi1>
  // CHECK: loom.less
  %13 = loom.less %a, %b : tensor<4x1xf32>, tensor<3xf32> -> tensor<4x3xi1>
  // CHECK: loom.less_equal
  %14 = loom.less_equal %a, %b : tensor<4x1xf32>, tensor<3xf32> -> tensor<4x3xi1>
  // CHECK: loom.greater
  %15 = loom.greater %a, %b : tensor<4x1xf32>, tensor<3xf32> -> tensor<4x3xi1>
  // CHECK: loom.greater_equal
  %16 = loom.greater_equal %a, %b : tensor<4x1xf32>, tensor<3xf32> -> tensor<4x3xi1>
  // CHECK: loom.where
  %17 = loom.where %p, %a, %b : tensor<4x1xi1>, tensor<4x1xf32>, tensor<3xf32> -> tensor<4x3xf32>
  // CHECK: loom.cast %{{.*}} : tensor<3xf32> to tensor<3xf16>
  %18 = loom.cast %b : tensor<3xf32> to tensor<3xf16>
  // CHECK: loom.cast %{{.*}} {saturate = false} : tensor<3xf32> to tensor<3xf8E5M2>
  %19 = loom.cast %b {saturate = false} : tensor<3xf32> to tensor<3xf8E5M2>
  // CHECK: loom.bitcast %{{.*}} : tensor<3xf32> to tensor<3xi32>
  %20 = loom.bitcast %b : tensor<3xf32> to tensor<3xi32>
  // CHECK: loom.bitcast %{{.*}} : tensor<4x1xi1> to tensor<4x1xui8>
  %21 = loom.bitcast %p : tensor<4x1xi1> to tensor<4x1xui8>
  return
}

// CHECK-LABEL: func.func @nn
func.func @nn(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>, %b: tensor<16xf32>,
              %c: tensor<3xf32>, %s: tensor<2x8x64xf32>, %g: tensor<64xf32>,
              %q: tensor<1x8x16x64xf32>, %kv: tensor<1x2x16x64xf32>,
              %cos: tensor<16x32xf32>, %m: tensor<16x16xi1>) {
  // CHECK: loom.matmul
  %0 = loom.matmul %s, %g : tensor<2x8x64xf32>, tensor<64xf32> -> tensor<2x8xf32>
  // CHECK: loom.conv
  %1 = loom.conv %x, %w, %b {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>) -> tensor<1x16x8x8xf32>
  // CHECK: loom.conv_transpose
  %2 = loom.conv_transpose %1, %w {strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, output_padding = array<i64: 0, 0>} : (tensor<1x16x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x3x17x17xf32>
  // CHECK: loom.max_pool
  %3 = loom.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  // CHECK: loom.max_pool_with_indices %{{.*}} {{{.*}}storage_order = 1 : i64{{.*}}} : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>, tensor<1x3x4x4xi64>
  %values, %indices = loom.max_pool_with_indices %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, storage_order = 1 : i64} : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>, tensor<1x3x4x4xi64>
  // CHECK: loom.avg_pool
  %4 = loom.avg_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, count_include_pad = true} : tensor<1x3x8x8xf32> -> tensor<1x3x8x8xf32>
  // CHECK: loom.batch_norm
  %5 = loom.batch_norm %x, %c, %c, %c, %c {epsilon = 1.0e-05 : f32} : tensor<1x3x8x8xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32> -> tensor<1x3x8x8xf32>
  // CHECK: loom.instance_norm
  %6 = loom.instance_norm %x, %c, %c : tensor<1x3x8x8xf32>, tensor<3xf32>, tensor<3xf32> -> tensor<1x3x8x8xf32>
  // CHECK: loom.layer_norm
  %7 = loom.layer_norm %s, %g, %g {axis = 2 : i64} : (tensor<2x8x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x8x64xf32>
  // CHECK: loom.rms_norm
  %8 = loom.rms_norm %s, %g {epsilon = 1.0e-06 : f32} : tensor<2x8x64xf32>, tensor<64xf32> -> tensor<2x8x64xf32>
  // CHECK: loom.softmax
  %9 = loom.softmax %s {axis = -1 : i64} : tensor<2x8x64xf32>
  // CHECK: loom.log_softmax
  %10 = loom.log_softmax %s {axis = 1 : i64} : tensor<2x8x64xf32>
  // CHECK: loom.attention
  %11 = loom.attention %q, %kv, %kv, %m {is_causal = true} : (tensor<1x8x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>, tensor<16x16xi1>) -> tensor<1x8x16x64xf32>
  // CHECK: loom.rotary_embedding
  %12 = loom.rotary_embedding %q, %cos, %cos : tensor<1x8x16x64xf32>, tensor<16x32xf32>, tensor<16x32xf32> -> tensor<1x8x16x64xf32>
  return
}

// CHECK-LABEL: func.func @resize
// CHECK-SAME: (%[[X:.*]]: tensor<1x3x8x8xf32>, %[[S:.*]]: tensor<?xf32>, %[[R:.*]]: tensor<8xf32>)
func.func @resize(%x: tensor<1x3x8x8xf32>, %s: tensor<?xf32>, %roi: tensor<8xf32>) {
  // CHECK: %[[C:.*]] = loom.constant dense<[1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00]> : tensor<4xf32>
  %c = loom.constant dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>
  // CHECK: loom.resize %[[X]], %[[C]] {mode = "linear"} : (tensor<1x3x8x8xf32>, tensor<4xf32>) -> tensor<1x3x16x16xf32>
  %0 = loom.resize %x, %c {mode = "linear"} : (tensor<1x3x8x8xf32>, tensor<4xf32>) -> tensor<1x3x16x16xf32>
  // Run-time scales of unknown length and a dynamic result.
  // CHECK: loom.resize %[[X]], %[[S]] {nearest_mode = "floor"} : (tensor<1x3x8x8xf32>, tensor<?xf32>) -> tensor<1x3x?x?xf32>
  %1 = loom.resize %x, %s {nearest_mode = "floor"} : (tensor<1x3x8x8xf32>, tensor<?xf32>) -> tensor<1x3x?x?xf32>
  // CHECK: loom.resize %[[X]], %[[C]], %[[R]] {coordinate_transformation_mode = "tf_crop_and_resize", extrapolation_value = 1.000000e+01 : f32, mode = "linear"} : (tensor<1x3x8x8xf32>, tensor<4xf32>, tensor<8xf32>) -> tensor<1x3x4x4xf32>
  %2 = loom.resize %x, %c, %roi {coordinate_transformation_mode = "tf_crop_and_resize", extrapolation_value = 10.0 : f32, mode = "linear"} : (tensor<1x3x8x8xf32>, tensor<4xf32>, tensor<8xf32>) -> tensor<1x3x4x4xf32>
  return
}

// CHECK-LABEL: func.func @vision
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x8x8xf32>, %[[G:.*]]: tensor<2x4x5x2xf32>, %[[R:.*]]: tensor<7x4xf32>, %[[I:.*]]: tensor<7xi64>, %[[B:.*]]: tensor<2x6x4xf32>, %[[S:.*]]: tensor<2x3x6xf32>, %[[K:.*]]: tensor<1xi64>, %[[T:.*]]: tensor<f32>)
func.func @vision(%x: tensor<2x3x8x8xf32>, %grid: tensor<2x4x5x2xf32>,
                  %rois: tensor<7x4xf32>, %idx: tensor<7xi64>,
                  %boxes: tensor<2x6x4xf32>, %scores: tensor<2x3x6xf32>,
                  %k: tensor<1xi64>, %t: tensor<f32>) {
  // CHECK: loom.grid_sample %[[X]], %[[G]] : tensor<2x3x8x8xf32>, tensor<2x4x5x2xf32> -> tensor<2x3x4x5xf32>
  %0 = loom.grid_sample %x, %grid : tensor<2x3x8x8xf32>, tensor<2x4x5x2xf32> -> tensor<2x3x4x5xf32>
  // CHECK: loom.grid_sample %[[X]], %[[G]] {align_corners = true, mode = "bicubic", padding_mode = "reflection"} : tensor<2x3x8x8xf32>, tensor<2x4x5x2xf32> -> tensor<2x3x?x?xf32>
  %1 = loom.grid_sample %x, %grid {mode = "bicubic", padding_mode = "reflection", align_corners = true} : tensor<2x3x8x8xf32>, tensor<2x4x5x2xf32> -> tensor<2x3x?x?xf32>
  // CHECK: loom.roi_align %[[X]], %[[R]], %[[I]] {mode = "max", output_height = 2 : i64, output_width = 3 : i64, sampling_ratio = 2 : i64, spatial_scale = 5.000000e-01 : f32} : tensor<2x3x8x8xf32>, tensor<7x4xf32>, tensor<7xi64> -> tensor<7x3x2x3xf32>
  %2 = loom.roi_align %x, %rois, %idx {mode = "max", output_height = 2 : i64, output_width = 3 : i64, sampling_ratio = 2 : i64, spatial_scale = 0.5 : f32} : tensor<2x3x8x8xf32>, tensor<7x4xf32>, tensor<7xi64> -> tensor<7x3x2x3xf32>
  // CHECK: loom.roi_align %[[X]], %[[R]], %[[I]] {coordinate_transformation_mode = "output_half_pixel"} : tensor<2x3x8x8xf32>, tensor<7x4xf32>, tensor<7xi64> -> tensor<7x3x1x1xf32>
  %3 = loom.roi_align %x, %rois, %idx {coordinate_transformation_mode = "output_half_pixel"} : tensor<2x3x8x8xf32>, tensor<7x4xf32>, tensor<7xi64> -> tensor<7x3x1x1xf32>
  // CHECK: loom.non_max_suppression %[[B]], %[[S]] max_output_boxes_per_class %[[K]] iou_threshold %[[T]] score_threshold %[[T]] {center_point_box = true} : (tensor<2x6x4xf32>, tensor<2x3x6xf32>, tensor<1xi64>, tensor<f32>, tensor<f32>) -> tensor<?x3xi64>
  %4 = loom.non_max_suppression %boxes, %scores max_output_boxes_per_class %k iou_threshold %t score_threshold %t {center_point_box = true} : (tensor<2x6x4xf32>, tensor<2x3x6xf32>, tensor<1xi64>, tensor<f32>, tensor<f32>) -> tensor<?x3xi64>
  // Only some of the optional scalars.
  // CHECK: loom.non_max_suppression %[[B]], %[[S]] score_threshold %[[T]] : (tensor<2x6x4xf32>, tensor<2x3x6xf32>, tensor<f32>) -> tensor<?x3xi64>
  %5 = loom.non_max_suppression %boxes, %scores score_threshold %t : (tensor<2x6x4xf32>, tensor<2x3x6xf32>, tensor<f32>) -> tensor<?x3xi64>
  // CHECK: loom.non_max_suppression %[[B]], %[[S]] : (tensor<2x6x4xf32>, tensor<2x3x6xf32>) -> tensor<?x3xi64>
  %6 = loom.non_max_suppression %boxes, %scores : (tensor<2x6x4xf32>, tensor<2x3x6xf32>) -> tensor<?x3xi64>
  return
}

// CHECK-LABEL: func.func @reductions
func.func @reductions(%x: tensor<2x8xf32>, %k: tensor<1xi64>) {
  // CHECK: loom.reduce_sum %{{.*}} {axes = array<i64: 1>}
  %0 = loom.reduce_sum %x {axes = array<i64: 1>} : tensor<2x8xf32> -> tensor<2x1xf32>
  // CHECK: loom.reduce_mean
  %1 = loom.reduce_mean %x {axes = array<i64: 0, 1>, keepdims = false} : tensor<2x8xf32> -> tensor<f32>
  // CHECK: loom.reduce_max
  %2 = loom.reduce_max %x {axes = array<i64>} : tensor<2x8xf32> -> tensor<1x1xf32>
  // CHECK: loom.reduce_min
  %3 = loom.reduce_min %x {axes = array<i64: 0>, keepdims = false} : tensor<2x8xf32> -> tensor<8xf32>
  // CHECK: loom.reduce_prod
  %4 = loom.reduce_prod %x {axes = array<i64: 1>} : tensor<2x8xf32> -> tensor<2x1xf32>
  // CHECK: loom.argmax
  %5 = loom.argmax %x {axis = 1 : i64, keepdims = false} : tensor<2x8xf32> -> tensor<2xi64>
  // CHECK: loom.argmin
  %6 = loom.argmin %x {axis = 0 : i64, select_last_index = true} : tensor<2x8xf32> -> tensor<1x8xi64>
  // CHECK: loom.cumsum
  %7 = loom.cumsum %x {axis = 1 : i64, exclusive = true, reverse = true} : tensor<2x8xf32>
  // CHECK: loom.cumprod
  %9 = loom.cumprod %x {axis = 0 : i64, exclusive = true} : tensor<2x8xf32>
  // CHECK: loom.topk
  %8:2 = loom.topk %x, %k {axis = -1 : i64} : tensor<2x8xf32>, tensor<1xi64> -> tensor<2x3xf32>, tensor<2x3xi64>
  return
}

// CHECK-LABEL: func.func @shapes
func.func @shapes(%x: tensor<2x3x4xf32>, %s: tensor<2xi64>, %i: tensor<1xi64>,
                  %d: tensor<?x3xf32>, %idx: tensor<2x2xi64>, %sc: tensor<i64>) {
  // CHECK: loom.constant dense<1.000000e+00> : tensor<2xf32>
  %0 = loom.constant dense<1.0> : tensor<2xf32>
  // CHECK: loom.reshape
  %1 = loom.reshape %x, %s : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<6x4xf32>
  // CHECK: loom.transpose
  %2 = loom.transpose %x {perm = array<i64: 0, 2, 1>} : tensor<2x3x4xf32> -> tensor<2x4x3xf32>
  // CHECK: loom.concat
  %3 = loom.concat %x, %x {axis = 0 : i64} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<4x3x4xf32>
  // CHECK: loom.split
  %4:2 = loom.split %x {axis = 2 : i64, sizes = array<i64: 1, 3>} : tensor<2x3x4xf32> -> tensor<2x3x1xf32>, tensor<2x3x3xf32>
  // CHECK: loom.slice
  %5 = loom.slice %x, %i, %i, %i, %i : (tensor<2x3x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x3x?xf32>
  // CHECK: loom.gather
  %6 = loom.gather %x, %idx {axis = 1 : i64} : tensor<2x3x4xf32>, tensor<2x2xi64> -> tensor<2x2x2x4xf32>
  // CHECK: loom.gather_elements
  %7 = loom.gather_elements %d, %idx {axis = 1 : i64} : tensor<?x3xf32>, tensor<2x2xi64> -> tensor<2x2xf32>
  // CHECK: loom.gather_nd
  %8 = loom.gather_nd %x, %idx : tensor<2x3x4xf32>, tensor<2x2xi64> -> tensor<2x4xf32>
  // CHECK: loom.scatter_elements
  %9 = loom.scatter_elements %d, %idx, %7 {axis = 0 : i64, reduction = "add"} : tensor<?x3xf32>, tensor<2x2xi64>, tensor<2x2xf32> -> tensor<?x3xf32>
  // CHECK: loom.scatter_nd
  %10 = loom.scatter_nd %x, %idx, %8 : tensor<2x3x4xf32>, tensor<2x2xi64>, tensor<2x4xf32> -> tensor<2x3x4xf32>
  %p = loom.constant dense<[0, 1, 0, 0, 1, 0]> : tensor<6xi64>
  // CHECK: loom.pad
  %11 = loom.pad %x, %p {mode = "reflect"} : (tensor<2x3x4xf32>, tensor<6xi64>) -> tensor<2x5x4xf32>
  %es = loom.constant dense<[5, 2, 3, 4]> : tensor<4xi64>
  // CHECK: loom.expand
  %12 = loom.expand %x, %es : (tensor<2x3x4xf32>, tensor<4xi64>) -> tensor<5x2x3x4xf32>
  %r = loom.constant dense<[1, 2, 1]> : tensor<3xi64>
  // CHECK: loom.tile
  %13 = loom.tile %x, %r : (tensor<2x3x4xf32>, tensor<3xi64>) -> tensor<2x6x4xf32>
  // CHECK: loom.unsqueeze
  %14 = loom.unsqueeze %x {axes = array<i64: 0, 4>} : tensor<2x3x4xf32> -> tensor<1x2x3x4x1xf32>
  // CHECK: loom.squeeze
  %15 = loom.squeeze %14 {axes = array<i64: 0>} : tensor<1x2x3x4x1xf32> -> tensor<2x3x4x1xf32>
  // CHECK: loom.shape
  %16 = loom.shape %d {start = 1 : i64} : tensor<?x3xf32> -> tensor<1xi64>
  // CHECK: loom.size
  %17 = loom.size %d : tensor<?x3xf32> -> tensor<i64>
  // CHECK: loom.range
  %18 = loom.range %sc, %sc, %sc : tensor<i64>, tensor<i64>, tensor<i64> -> tensor<?xi64>
  // CHECK: loom.constant_of_shape
  %19 = loom.constant_of_shape %s {value = 0.0 : f32} : tensor<2xi64> -> tensor<?x4xf32>
  %v = loom.constant dense<[0.0, 1.0]> : tensor<2xf32>
  // CHECK: loom.one_hot
  %20 = loom.one_hot %i, %sc, %v {axis = -1 : i64} : tensor<1xi64>, tensor<i64>, tensor<2xf32> -> tensor<1x?xf32>
  // CHECK: loom.trilu
  %21 = loom.trilu %x, %sc {upper = false} : (tensor<2x3x4xf32>, tensor<i64>) -> tensor<2x3x4xf32>
  // CHECK: loom.non_zero
  %22 = loom.non_zero %x : tensor<2x3x4xf32> -> tensor<3x?xi64>
  return
}

// Ops that infer their result types accept a stated type that refines a
// dynamic inferred dimension, and keep it.
// CHECK-LABEL: func.func @refined_results
func.func @refined_results(%x: tensor<?x3x?x8xf32>, %w: tensor<16x3x3x3xf32>,
                           %wt: tensor<3x2x3x3xf32>, %q: tensor<?x8x16x64xf32>,
                           %kv: tensor<1x2x?x64xf32>, %d: tensor<?x4xf32>,
                           %i: tensor<?xi64>, %ie: tensor<?x2xi64>,
                           %nd: tensor<?x1xi64>, %grid: tensor<?x4x?x2xf32>,
                           %rois: tensor<?x4xf32>, %bi: tensor<7xi64>) {
  // CHECK: loom.conv {{.*}} -> tensor<1x16x8x6xf32>
  %0 = loom.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 1, 0, 1, 0>, dilations = array<i64: 1, 1>} : (tensor<?x3x?x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x8x6xf32>
  // CHECK: loom.conv_transpose {{.*}} -> tensor<1x2x9x17xf32>
  %1 = loom.conv_transpose %x, %wt {strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, output_padding = array<i64: 0, 0>} : (tensor<?x3x?x8xf32>, tensor<3x2x3x3xf32>) -> tensor<1x2x9x17xf32>
  // CHECK: loom.max_pool {{.*}} -> tensor<1x3x4x4xf32>
  %2 = loom.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<?x3x?x8xf32> -> tensor<1x3x4x4xf32>
  // CHECK: loom.avg_pool {{.*}} -> tensor<2x3x5x3xf32>
  %3 = loom.avg_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 3, 3>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = true} : tensor<?x3x?x8xf32> -> tensor<2x3x5x3xf32>
  // CHECK: loom.max_pool_with_indices {{.*}} -> tensor<1x3x4x4xf32>, tensor<1x3x4x4xi64>
  %4:2 = loom.max_pool_with_indices %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<?x3x?x8xf32> -> tensor<1x3x4x4xf32>, tensor<1x3x4x4xi64>
  // CHECK: loom.attention {{.*}} -> tensor<1x8x16x64xf32>
  %5 = loom.attention %q, %kv, %kv : (tensor<?x8x16x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32>) -> tensor<1x8x16x64xf32>
  // CHECK: loom.gather {{.*}} -> tensor<5x4xf32>
  %6 = loom.gather %d, %i {axis = 0 : i64} : tensor<?x4xf32>, tensor<?xi64> -> tensor<5x4xf32>
  // CHECK: loom.gather_elements {{.*}} -> tensor<6x2xf32>
  %7 = loom.gather_elements %d, %ie {axis = 1 : i64} : tensor<?x4xf32>, tensor<?x2xi64> -> tensor<6x2xf32>
  // CHECK: loom.gather_nd {{.*}} -> tensor<5x4xf32>
  %8 = loom.gather_nd %d, %nd : tensor<?x4xf32>, tensor<?x1xi64> -> tensor<5x4xf32>
  // CHECK: loom.argmax {{.*}} -> tensor<2x3x?x1xi64>
  %9 = loom.argmax %x {axis = -1 : i64} : tensor<?x3x?x8xf32> -> tensor<2x3x?x1xi64>
  // CHECK: loom.argmin {{.*}} -> tensor<2x3x8xi64>
  %10 = loom.argmin %x {axis = 2 : i64, keepdims = false} : tensor<?x3x?x8xf32> -> tensor<2x3x8xi64>
  // CHECK: loom.split {{.*}} -> tensor<2x4xf32>, tensor<3x4xf32>
  %11:2 = loom.split %d {axis = 0 : i64, sizes = array<i64: 2, 3>} : tensor<?x4xf32> -> tensor<2x4xf32>, tensor<3x4xf32>
  // CHECK: loom.grid_sample {{.*}} -> tensor<1x3x4x6xf32>
  %12 = loom.grid_sample %x, %grid : tensor<?x3x?x8xf32>, tensor<?x4x?x2xf32> -> tensor<1x3x4x6xf32>
  // CHECK: loom.roi_align {{.*}} -> tensor<7x3x2x2xf32>
  %13 = loom.roi_align %x, %rois, %bi {output_height = 2 : i64, output_width = 2 : i64} : tensor<?x3x?x8xf32>, tensor<?x4xf32>, tensor<7xi64> -> tensor<7x3x2x2xf32>
  return
}

// CHECK-LABEL: func.func @fusion
func.func @fusion(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  // CHECK: %[[R:.*]]:2 = loom.fusion "epilogue" ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>, tensor<4x16xf32> {
  // CHECK-NEXT: ^bb0(%[[A:.*]]: tensor<4x8xf32>, %[[C:.*]]: tensor<8x16xf32>, %[[D:.*]]: tensor<16xf32>):
  // CHECK-NEXT: %[[M:.*]] = loom.matmul %[[A]], %[[C]]
  // CHECK-NEXT: %[[S:.*]] = loom.add %[[M]], %[[D]]
  // CHECK-NEXT: %[[G:.*]] = loom.gelu %[[S]]
  // CHECK-NEXT: loom.yield %[[S]], %[[G]] : tensor<4x16xf32>, tensor<4x16xf32>
  %0:2 = loom.fusion "epilogue" ins(%x, %w, %b : tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>, tensor<4x16xf32> {
  ^bb0(%a: tensor<4x8xf32>, %c: tensor<8x16xf32>, %d: tensor<16xf32>):
    %1 = loom.matmul %a, %c : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
    %2 = loom.add %1, %d : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
    %3 = loom.gelu %2 : tensor<4x16xf32>
    loom.yield %2, %3 : tensor<4x16xf32>, tensor<4x16xf32>
  }
  // A fusion without inputs, with a discardable attribute.
  // CHECK: loom.fusion "elementwise" -> tensor<2xf32> attributes {tag = 1 : i64} {
  // CHECK-NEXT: loom.constant
  // CHECK-NEXT: loom.exp
  // CHECK-NEXT: loom.yield
  %4 = loom.fusion "elementwise" -> tensor<2xf32> attributes {tag = 1 : i64} {
    %5 = loom.constant dense<1.0> : tensor<2xf32>
    %6 = loom.exp %5 : tensor<2xf32>
    loom.yield %6 : tensor<2xf32>
  }
  return %0#0, %0#1 : tensor<4x16xf32>, tensor<4x16xf32>
}

// CHECK-LABEL: func.func @quantization
func.func @quantization(%x: tensor<4x16xf32>, %s: tensor<f32>, %zp: tensor<ui8>,
                        %w: tensor<16x8xi8>, %ws: tensor<8xf32>, %wzp: tensor<8xi8>,
                        %img: tensor<1x3x8x8xui8>, %k: tensor<16x3x3x3xi8>,
                        %ks: tensor<16xf32>, %kzp: tensor<16xi8>, %b: tensor<16xf32>)
    -> (tensor<4x8xf32>, tensor<1x16x8x8xf32>, tensor<4x16xf32>, tensor<4x8xf32>) {
  // CHECK: %[[Q:.*]] = loom.quantize %{{.*}}, %{{.*}}, %{{.*}} : (tensor<4x16xf32>, tensor<f32>, tensor<ui8>) -> tensor<4x16xui8>
  %q = loom.quantize %x, %s, %zp : (tensor<4x16xf32>, tensor<f32>, tensor<ui8>) -> tensor<4x16xui8>
  // CHECK: loom.dequantize %[[Q]], %{{.*}}, %{{.*}} : (tensor<4x16xui8>, tensor<f32>, tensor<ui8>) -> tensor<4x16xf32>
  %d = loom.dequantize %q, %s, %zp : (tensor<4x16xui8>, tensor<f32>, tensor<ui8>) -> tensor<4x16xf32>
  // CHECK: loom.qmatmul %[[Q]], %{{.*}} scales(%{{.*}}, %{{.*}}) zero_points(%{{.*}}, %{{.*}}) : (tensor<4x16xui8>, tensor<16x8xi8>, tensor<f32>, tensor<8xf32>, tensor<ui8>, tensor<8xi8>) -> tensor<4x8xf32>
  %y = loom.qmatmul %q, %w scales(%s, %ws) zero_points(%zp, %wzp) : (tensor<4x16xui8>, tensor<16x8xi8>, tensor<f32>, tensor<8xf32>, tensor<ui8>, tensor<8xi8>) -> tensor<4x8xf32>
  // CHECK: loom.qconv {{.*}} scales({{.*}}) zero_points({{.*}}) bias(%{{.*}}) {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xui8>, tensor<16x3x3x3xi8>, tensor<f32>, tensor<16xf32>, tensor<ui8>, tensor<16xi8>, tensor<16xf32>) -> tensor<1x16x8x8xf32>
  %c = loom.qconv %img, %k scales(%s, %ks) zero_points(%zp, %kzp) bias(%b) {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x3x8x8xui8>, tensor<16x3x3x3xi8>, tensor<f32>, tensor<16xf32>, tensor<ui8>, tensor<16xi8>, tensor<16xf32>) -> tensor<1x16x8x8xf32>
  // fp8: no zero points.
  // CHECK: %[[F8:.*]] = loom.quantize %{{.*}}, %{{.*}} : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf8E4M3FN>
  %f = loom.quantize %x, %s : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf8E4M3FN>
  %fw = loom.quantize %d, %s : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf8E4M3FN>
  %fwt = loom.constant dense<1.0> : tensor<16x8xf8E4M3FN>
  // CHECK: loom.qmatmul %[[F8]], %{{.*}} scales(%{{.*}}, %{{.*}}) : (tensor<4x16xf8E4M3FN>, tensor<16x8xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<4x8xf32>
  %g = loom.qmatmul %f, %fwt scales(%s, %s) : (tensor<4x16xf8E4M3FN>, tensor<16x8xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<4x8xf32>
  return %y, %c, %d, %g : tensor<4x8xf32>, tensor<1x16x8x8xf32>, tensor<4x16xf32>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @swiglu
func.func @swiglu(%g: tensor<4x8xf32>, %u: tensor<8xf32>) -> tensor<4x8xf32> {
  // CHECK: loom.swiglu %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %y = loom.swiglu %g, %u : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

shard.grid @pipeline_grid(shape = 2x2)

// CHECK-LABEL: func.func @pipeline_stage
// CHECK:       loom.pipeline_stage @pipeline_grid axis 1 stage 0 micro_batch 3 ins(%{{.*}}, %{{.*}} : tensor<2x4xf32>, tensor<4x4xf32>) {
// CHECK:         shard.send
// CHECK:         loom.yield
// CHECK:       loom.pipeline_stage @pipeline_grid axis 1 stage 1 micro_batch 3 ins(%{{.*}} : tensor<4x4xf32>) -> tensor<2x4xf32> {
// CHECK:         loom.yield %{{.*}} : tensor<2x4xf32>
func.func @pipeline_stage(%x: tensor<2x4xf32>, %w: tensor<4x4xf32>) -> tensor<2x4xf32> {
  loom.pipeline_stage @pipeline_grid axis 1 stage 0 micro_batch 3 ins(%x, %w : tensor<2x4xf32>, tensor<4x4xf32>) {
  ^bb0(%a: tensor<2x4xf32>, %b: tensor<4x4xf32>):
    %0 = loom.matmul %a, %b : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
    %1 = shard.send %0 on @pipeline_grid grid_axes = [1] destination = [1] : (tensor<2x4xf32>) -> tensor<2x4xf32>
    loom.yield
  }
  %y = loom.pipeline_stage @pipeline_grid axis 1 stage 1 micro_batch 3 ins(%w : tensor<4x4xf32>) -> tensor<2x4xf32> {
  ^bb0(%b: tensor<4x4xf32>):
    %e = tensor.empty() : tensor<2x4xf32>
    %0 = shard.recv %e on @pipeline_grid grid_axes = [1] source = [0] : (tensor<2x4xf32>) -> tensor<2x4xf32>
    %1 = loom.matmul %0, %b : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
    loom.yield %1 : tensor<2x4xf32>
  }
  return %y : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @moe
func.func @moe(%x: tensor<6x16xf32>, %p: tensor<6x4xf32>, %w1: tensor<4x16x32xf32>, %w2: tensor<4x32x16xf32>) {
  // CHECK: loom.moe %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {activation = "silu", k = 2 : i64, normalize = true}
  %0 = loom.moe %x, %p, %w1, %w2 {k = 2 : i64, activation = "silu", normalize = true} : (tensor<6x16xf32>, tensor<6x4xf32>, tensor<4x16x32xf32>, tensor<4x32x16xf32>) -> tensor<6x16xf32>
  // CHECK: loom.moe %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {capacity_factor = 1.250000e+00 : f64, k = 1 : i64}
  %1 = loom.moe %x, %p, %w1, %w2 {k = 1 : i64, capacity_factor = 1.25 : f64} : (tensor<6x16xf32>, tensor<6x4xf32>, tensor<4x16x32xf32>, tensor<4x32x16xf32>) -> tensor<6x16xf32>
  // CHECK: loom.moe %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} gate %{{.*}} {activation = "silu", k = 2 : i64}
  %2 = loom.moe %x, %p, %w1, %w2 gate %w1 {k = 2 : i64, activation = "silu"} : (tensor<6x16xf32>, tensor<6x4xf32>, tensor<4x16x32xf32>, tensor<4x32x16xf32>, tensor<4x16x32xf32>) -> tensor<6x16xf32>
  return
}

// CHECK-LABEL: func.func @if_branches
// CHECK:       loom.if %{{.*}} : tensor<1xi1> ins(%{{.*}} : tensor<4xf32>) -> tensor<?xf32> {
// CHECK:         loom.yield %{{.*}} : tensor<?xf32>
// CHECK:       } else {
// CHECK:         loom.yield %{{.*}} : tensor<?xf32>
func.func @if_branches(%c: tensor<1xi1>, %x: tensor<4xf32>) -> tensor<?xf32> {
  %0 = loom.if %c : tensor<1xi1> ins(%x : tensor<4xf32>) -> tensor<?xf32> {
  ^bb0(%a: tensor<4xf32>):
    %1 = tensor.cast %a : tensor<4xf32> to tensor<?xf32>
    loom.yield %1 : tensor<?xf32>
  } else {
  ^bb0(%a: tensor<4xf32>):
    %1 = loom.constant dense<> : tensor<0xf32>
    %2 = tensor.cast %1 : tensor<0xf32> to tensor<?xf32>
    loom.yield %2 : tensor<?xf32>
  }
  return %0 : tensor<?xf32>
}

// CHECK-LABEL: func.func @loop_scan
// CHECK:       loom.loop %{{.*}}, %{{.*}} : tensor<i64>, tensor<i1> carried(%{{.*}} : tensor<1xf32>) ins(%{{.*}} : tensor<5xf32>) -> tensor<1xf32>, tensor<?x1xf32> {
// CHECK:         loom.yield %{{.*}}, %{{.*}}, %{{.*}} : tensor<i1>, tensor<1xf32>, tensor<1xf32>
func.func @loop_scan(%n: tensor<i64>, %c: tensor<i1>, %y0: tensor<1xf32>, %x: tensor<5xf32>) -> (tensor<1xf32>, tensor<?x1xf32>) {
  %y, %s = loom.loop %n, %c : tensor<i64>, tensor<i1> carried(%y0 : tensor<1xf32>) ins(%x : tensor<5xf32>) -> tensor<1xf32>, tensor<?x1xf32> {
  ^bb0(%i: tensor<i64>, %go: tensor<i1>, %y: tensor<1xf32>, %a: tensor<5xf32>):
    %0 = loom.add %y, %y : tensor<1xf32>, tensor<1xf32> -> tensor<1xf32>
    loom.yield %go, %0, %0 : tensor<i1>, tensor<1xf32>, tensor<1xf32>
  }
  return %y, %s : tensor<1xf32>, tensor<?x1xf32>
}
