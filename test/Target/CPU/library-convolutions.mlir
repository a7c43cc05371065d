// RUN: loom-opt %s --split-input-file --loom-cpu-select-library-convolutions | FileCheck %s --check-prefix=SELECT
// RUN: loom-opt %s --split-input-file --loom-cpu-select-library-convolutions --loom-cpu-im2col --loom-cpu-contraction-order --loom-cpu-bufferize --loom-cpu-memory-plan --loom-cpu-library-convolutions | FileCheck %s --check-prefix=CALL
// RUN: loom-opt %s --split-input-file --loom-cpu-select-library-convolutions=min-flops=300000000 | FileCheck %s --check-prefix=THRESHOLD
// RUN: loom-opt %s --split-input-file --loom-cpu-select-library-convolutions=min-flops=500000 | FileCheck %s --check-prefix=LOWER
// RUN: loom-opt %s --split-input-file --loom-cpu-select-library-convolutions=min-flops=0 | FileCheck %s --check-prefix=LOWER

// A 3x3 convolution of 2 x 64 x 56 x 56 x 64 x 9 operations (231 MFLOP),
// its input zero-padded and its output zero-filled, as loom.conv lowers:
// the library computes it. The call gets the unpadded input with the
// padding in the descriptor (the padded copy is gone), overwrites the
// output (no fill left), and the filter, a constant global, is flagged
// constant (flags = 2).
// SELECT-LABEL: func.func @padded
// SELECT: linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, loom.library = "onednn", strides = dense<1> : tensor<2xi64>}
// THRESHOLD-LABEL: func.func @padded
// THRESHOLD-NOT: loom.library
// CALL-DAG: func.func private @loom_rt_conv2d_f32(i64, i64, i64, i64, i64, i64)
// CALL-DAG: memref.global "private" constant @__loom_conv_desc_0 : memref<20xi64> = dense<[1, 1, 64, 56, 56, 64, 3, 3, 56, 56, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2]>
// CALL-DAG: memref.global "private" @__loom_conv_slot_0 : memref<1xi64> = dense<0> {alignment = 8 : i64}
// CALL-LABEL: func.func @padded
// CALL-SAME: (%[[X:.+]]: memref<1x64x56x56xf32>
// CALL-NOT: linalg.copy
// CALL-NOT: linalg.fill
// CALL-NOT: linalg.map
// CALL: %[[IN:.+]] = memref.extract_aligned_pointer_as_index %[[X]]
// CALL: call @loom_rt_conv2d_f32(
// CALL-NOT: linalg.conv
// CALL: return
func.func @padded(%x: tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32> {
  %w = arith.constant dense<0.5> : tensor<64x64x3x3xf32>
  %zero = arith.constant 0.0 : f32
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<1x64x56x56xf32> to tensor<1x64x58x58xf32>
  %empty = tensor.empty() : tensor<1x64x56x56xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%padded, %w : tensor<1x64x58x58xf32>, tensor<64x64x3x3xf32>) outs(%init : tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
  return %y : tensor<1x64x56x56xf32>
}

// -----

// The filter is an input (it may change between calls: not flagged
// constant) and the output accumulates onto an initial value (flags = 1:
// the library adds to it); no padding. Stride 2 and dilation 2 go into
// the descriptor.
// CALL-DAG: memref.global "private" constant @__loom_conv_desc_0 : memref<20xi64> = dense<[1, 2, 16, 35, 35, 32, 3, 3, 16, 16, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1]>
// CALL-LABEL: func.func @accumulate
// THRESHOLD-LABEL: func.func @accumulate
// CALL: call @loom_rt_conv2d_f32(
func.func @accumulate(%x: tensor<2x16x35x35xf32>, %w: tensor<32x16x3x3xf32>, %init: tensor<2x32x16x16xf32>) -> tensor<2x32x16x16xf32> {
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<2> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<2x16x35x35xf32>, tensor<32x16x3x3xf32>) outs(%init : tensor<2x32x16x16xf32>) -> tensor<2x32x16x16xf32>
  return %y : tensor<2x32x16x16xf32>
}

// -----

// A 1x1 convolution with stride 2 of 2 x 128 x 28 x 28 x 512 operations
// (102.8 MFLOP), where the library is faster than the generated product
// (from 2^25 operations for 1x1 windows).
// SELECT-LABEL: func.func @pointwise
// SELECT: loom.library = "onednn"
// CALL-DAG: memref.global "private" constant @__loom_conv_desc_0 : memref<20xi64> = dense<[1, 1, 512, 56, 56, 128, 1, 1, 28, 28, 2, 2, 1, 1, 0, 0, 0, 0, 1, 0]>
// CALL-LABEL: func.func @pointwise
// CALL: call @loom_rt_conv2d_f32(
func.func @pointwise(%x: tensor<1x512x56x56xf32>, %w: tensor<128x512x1x1xf32>) -> tensor<1x128x28x28xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1x128x28x28xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x128x28x28xf32>) -> tensor<1x128x28x28xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x512x56x56xf32>, tensor<128x512x1x1xf32>) outs(%init : tensor<1x128x28x28xf32>) -> tensor<1x128x28x28xf32>
  return %y : tensor<1x128x28x28xf32>
}

// -----

// The same with 2 x 64 x 28 x 28 x 256 operations (25.7 MFLOP): below
// 2^25, where the generated product won or tied at one and two threads.
// The 1x1 threshold is 32 times --library-conv-flops (2^20 by default):
// with 500000 (16 MFLOP for 1x1 windows) or 0, the library takes it.
// SELECT-LABEL: func.func @small_pointwise
// SELECT-NOT: loom.library
// LOWER-LABEL: func.func @small_pointwise
// LOWER: loom.library = "onednn"
// CALL-LABEL: func.func @small_pointwise
// CALL-NOT: call @loom_rt_conv2d_f32
func.func @small_pointwise(%x: tensor<1x256x56x56xf32>, %w: tensor<64x256x1x1xf32>) -> tensor<1x64x28x28xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1x64x28x28xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x64x28x28xf32>) -> tensor<1x64x28x28xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x256x56x56xf32>, tensor<64x256x1x1xf32>) outs(%init : tensor<1x64x28x28xf32>) -> tensor<1x64x28x28xf32>
  return %y : tensor<1x64x28x28xf32>
}

// -----

// An engine's weight parameter (marked loom.weight by externalizeWeights)
// is a constant too (flags = 2 with the zero fill).
// CALL-DAG: memref.global "private" constant @__loom_conv_desc_0 : memref<20xi64> = dense<[1, 1, 32, 32, 32, 32, 3, 3, 30, 30, 1, 1, 1, 1, 0, 0, 0, 0, 1, 2]>
// SELECT-LABEL: func.func @weight
// CALL-LABEL: func.func @weight
func.func @weight(%x: tensor<1x32x32x32xf32>, %w: tensor<32x32x3x3xf32> {loom.weight}) -> tensor<1x32x30x30xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1x32x30x30xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x32x30x30xf32>) -> tensor<1x32x30x30xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x32x32x32xf32>, tensor<32x32x3x3xf32>) outs(%init : tensor<1x32x30x30xf32>) -> tensor<1x32x30x30xf32>
  return %y : tensor<1x32x30x30xf32>
}

// -----

// Not the library's shape class: a 1x1 convolution and a 3x3 one under
// 2^20 operations, and f16. They stay for im2col (or loops).
// SELECT-LABEL: func.func @generated
// SELECT-NOT: loom.library
// CALL-LABEL: func.func @generated
// CALL-NOT: call @loom_rt_conv2d_f32
func.func @generated(%x: tensor<1x16x16x16xf32>, %w1: tensor<32x16x1x1xf32>, %y1: tensor<1x32x16x16xf32>,
                     %s: tensor<1x8x10x10xf32>, %w2: tensor<8x8x3x3xf32>, %y2: tensor<1x8x8x8xf32>,
                     %h: tensor<1x64x58x58xf16>, %w3: tensor<64x64x3x3xf16>, %y3: tensor<1x64x56x56xf16>)
    -> (tensor<1x32x16x16xf32>, tensor<1x8x8x8xf32>, tensor<1x64x56x56xf16>) {
  %a = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w1 : tensor<1x16x16x16xf32>, tensor<32x16x1x1xf32>) outs(%y1 : tensor<1x32x16x16xf32>) -> tensor<1x32x16x16xf32>
  %b = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%s, %w2 : tensor<1x8x10x10xf32>, tensor<8x8x3x3xf32>) outs(%y2 : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%h, %w3 : tensor<1x64x58x58xf16>, tensor<64x64x3x3xf16>) outs(%y3 : tensor<1x64x56x56xf16>) -> tensor<1x64x56x56xf16>
  return %a, %b, %c : tensor<1x32x16x16xf32>, tensor<1x8x8x8xf32>, tensor<1x64x56x56xf16>
}

// -----

// Grouped convolutions are the generic convert-loom-to-linalg builds; the
// library takes those with several channels per group at any size (4
// groups with stride 2 and dilation 2, accumulating onto its initial
// value: flags 1 | 2), with the groups in the descriptor. Depthwise ones
// (one channel per group, a 3x3 here) stay generated
// (loom-cpu-vectorize-depthwise). contraction-order leaves the marked
// generics' loops alone.
#dw_in = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d3 + d6)>
#g4_in = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, (d1 floordiv 8) * 4 + d4, d2 * 2 + d5 * 2, d3 * 2 + d6 * 2)>
#filter = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>
#out = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
// SELECT-LABEL: func.func @grouped
// SELECT: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x16x16x16xf32>) {{[{]$}}
// SELECT: linalg.generic {{.*}}loom.library = "onednn"
// THRESHOLD-LABEL: func.func @grouped
// THRESHOLD-COUNT-1: loom.library = "onednn"
// THRESHOLD-NOT: loom.library
// CALL-DAG: memref.global "private" constant @__loom_conv_desc_0 : memref<20xi64> = dense<[1, 1, 16, 20, 20, 32, 3, 3, 8, 8, 2, 2, 2, 2, 0, 0, 0, 0, 4, 3]>
// CALL-LABEL: func.func @grouped
// CALL: linalg.generic
// CALL: call @loom_rt_conv2d_f32(
// CALL-NOT: call @loom_rt_conv2d_f32(
func.func @grouped(%x: tensor<1x16x18x18xf32>, %y: tensor<1x16x20x20xf32>, %init: tensor<1x32x8x8xf32>) -> (tensor<1x16x16x16xf32>, tensor<1x32x8x8xf32>) {
  %w1 = arith.constant dense<0.25> : tensor<16x1x3x3xf32>
  %w2 = arith.constant dense<0.125> : tensor<32x4x3x3xf32>
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1x16x16x16xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x16x16x16xf32>) -> tensor<1x16x16x16xf32>
  %dw = linalg.generic {indexing_maps = [#dw_in, #filter, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %w1 : tensor<1x16x18x18xf32>, tensor<16x1x3x3xf32>) outs(%fill : tensor<1x16x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x16x16x16xf32>
  %g4 = linalg.generic {indexing_maps = [#g4_in, #filter, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%y, %w2 : tensor<1x16x20x20xf32>, tensor<32x4x3x3xf32>) outs(%init : tensor<1x32x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x32x8x8xf32>
  return %dw, %g4 : tensor<1x16x16x16xf32>, tensor<1x32x8x8xf32>
}

// -----

// Look-alikes that are not convolutions the library computes: a body that
// is not a multiply-accumulate (max pooling's), and a filter read in
// another order.
#win = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d3 + d6)>
#f = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>
#swapped = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d6, d5)>
#o = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
// SELECT-LABEL: func.func @lookalikes
// SELECT-NOT: loom.library
// CALL-LABEL: func.func @lookalikes
// CALL-NOT: call @loom_rt_conv2d_f32
func.func @lookalikes(%x: tensor<1x16x18x18xf32>, %w: tensor<16x1x3x3xf32>, %init: tensor<1x16x16x16xf32>) -> (tensor<1x16x16x16xf32>, tensor<1x16x16x16xf32>) {
  %max = linalg.generic {indexing_maps = [#win, #f, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %w : tensor<1x16x18x18xf32>, tensor<16x1x3x3xf32>) outs(%init : tensor<1x16x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.maximumf %a, %c : f32
    linalg.yield %m : f32
  } -> tensor<1x16x16x16xf32>
  %t = linalg.generic {indexing_maps = [#win, #swapped, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %w : tensor<1x16x18x18xf32>, tensor<16x1x3x3xf32>) outs(%init : tensor<1x16x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x16x16x16xf32>
  return %max, %t : tensor<1x16x16x16xf32>, tensor<1x16x16x16xf32>
}
