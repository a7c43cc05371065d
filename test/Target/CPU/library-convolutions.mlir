// RUN: loom-opt %s --split-input-file --loom-cpu-select-library-convolutions | FileCheck %s --check-prefix=SELECT
// RUN: loom-opt %s --split-input-file --loom-cpu-select-library-convolutions --loom-cpu-im2col --loom-cpu-contraction-order --loom-cpu-bufferize --loom-cpu-memory-plan --loom-cpu-library-convolutions | FileCheck %s --check-prefix=CALL
// RUN: loom-opt %s --split-input-file --loom-cpu-select-library-convolutions=min-flops=300000000 | FileCheck %s --check-prefix=THRESHOLD

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
// CALL-DAG: func.func private @loom_rt_conv2d_f32(i64, i64, i64, i64, i64)
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
// CALL: call @loom_rt_conv2d_f32(
func.func @accumulate(%x: tensor<2x16x35x35xf32>, %w: tensor<32x16x3x3xf32>, %init: tensor<2x32x16x16xf32>) -> tensor<2x32x16x16xf32> {
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<2> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<2x16x35x35xf32>, tensor<32x16x3x3xf32>) outs(%init : tensor<2x32x16x16xf32>) -> tensor<2x32x16x16xf32>
  return %y : tensor<2x32x16x16xf32>
}

// -----

// An engine's weight parameter (marked loom.weight by externalizeWeights)
// is a constant too (flags = 2 with the zero fill).
// CALL-DAG: memref.global "private" constant @__loom_conv_desc_0 : memref<20xi64> = dense<[1, 1, 32, 32, 32, 32, 3, 3, 30, 30, 1, 1, 1, 1, 0, 0, 0, 0, 1, 2]>
// CALL-LABEL: func.func @weight
func.func @weight(%x: tensor<1x32x32x32xf32>, %w: tensor<32x32x3x3xf32> {loom.weight}) -> tensor<1x32x30x30xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1x32x30x30xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x32x30x30xf32>) -> tensor<1x32x30x30xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x32x32x32xf32>, tensor<32x32x3x3xf32>) outs(%init : tensor<1x32x30x30xf32>) -> tensor<1x32x30x30xf32>
  return %y : tensor<1x32x30x30xf32>
}

// -----

// Not the library's shape class: a 1x1 window (a plain matrix product,
// generated as fast), a convolution under 2^20 operations, and f16. They
// stay for im2col (or loops).
// SELECT-LABEL: func.func @generated
// SELECT-NOT: loom.library
// CALL-LABEL: func.func @generated
// CALL-NOT: call @loom_rt_conv2d_f32
func.func @generated(%x: tensor<1x64x56x56xf32>, %w1: tensor<64x64x1x1xf32>, %y1: tensor<1x64x56x56xf32>,
                     %s: tensor<1x8x10x10xf32>, %w2: tensor<8x8x3x3xf32>, %y2: tensor<1x8x8x8xf32>,
                     %h: tensor<1x64x58x58xf16>, %w3: tensor<64x64x3x3xf16>, %y3: tensor<1x64x56x56xf16>)
    -> (tensor<1x64x56x56xf32>, tensor<1x8x8x8xf32>, tensor<1x64x56x56xf16>) {
  %a = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w1 : tensor<1x64x56x56xf32>, tensor<64x64x1x1xf32>) outs(%y1 : tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
  %b = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%s, %w2 : tensor<1x8x10x10xf32>, tensor<8x8x3x3xf32>) outs(%y2 : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%h, %w3 : tensor<1x64x58x58xf16>, tensor<64x64x3x3xf16>) outs(%y3 : tensor<1x64x56x56xf16>) -> tensor<1x64x56x56xf16>
  return %a, %b, %c : tensor<1x64x56x56xf32>, tensor<1x8x8x8xf32>, tensor<1x64x56x56xf16>
}
