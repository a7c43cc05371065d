// RUN: loom-opt %s -split-input-file -loom-fold-qdq | FileCheck %s

// A per-tensor activation and a per-column weight: the weight's [1, N]
// parameters become [N].
// CHECK-LABEL: func.func @matmul_per_column
// CHECK-SAME: %[[A:[^:]*]]: tensor<4x16xui8>, %[[W:[^:]*]]: tensor<16x8xi8>, %[[SA:[^:]*]]: tensor<f32>, %[[ZA:[^:]*]]: tensor<ui8>, %[[SW:[^:]*]]: tensor<1x8xf32>, %[[ZW:[^:]*]]: tensor<1x8xi8>
// CHECK-DAG: %[[SW1:.*]] = loom.reshape %[[SW]], %{{.*}} : (tensor<1x8xf32>, tensor<1xi64>) -> tensor<8xf32>
// CHECK-DAG: %[[ZW1:.*]] = loom.reshape %[[ZW]], %{{.*}} : (tensor<1x8xi8>, tensor<1xi64>) -> tensor<8xi8>
// CHECK: %[[Y:.*]] = loom.qmatmul %[[A]], %[[W]] scales(%[[SA]], %[[SW1]]) zero_points(%[[ZA]], %[[ZW1]]) : (tensor<4x16xui8>, tensor<16x8xi8>, tensor<f32>, tensor<8xf32>, tensor<ui8>, tensor<8xi8>) -> tensor<4x8xf32>
// CHECK-NOT: loom.matmul
// CHECK: return %[[Y]]
func.func @matmul_per_column(%a: tensor<4x16xui8>, %w: tensor<16x8xi8>, %sa: tensor<f32>, %za: tensor<ui8>, %sw: tensor<1x8xf32>, %zw: tensor<1x8xi8>) -> tensor<4x8xf32> {
  %da = loom.dequantize %a, %sa, %za : (tensor<4x16xui8>, tensor<f32>, tensor<ui8>) -> tensor<4x16xf32>
  %dw = loom.dequantize %w, %sw, %zw : (tensor<16x8xi8>, tensor<1x8xf32>, tensor<1x8xi8>) -> tensor<16x8xf32>
  %y = loom.matmul %da, %dw : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Only the activation has a zero point: the weight gets a zero one. A
// batched activation keeps its leading dimensions.
// CHECK-LABEL: func.func @matmul_one_zero_point
// CHECK: %[[Z:.*]] = loom.constant dense<0> : tensor<i8>
// CHECK: loom.qmatmul %{{.*}}, %{{.*}} scales(%{{.*}}, %{{.*}}) zero_points(%{{.*}}, %[[Z]]) : (tensor<2x4x16xi8>, tensor<16x8xi8>, tensor<f32>, tensor<f32>, tensor<i8>, tensor<i8>) -> tensor<2x4x8xf32>
func.func @matmul_one_zero_point(%a: tensor<2x4x16xi8>, %w: tensor<16x8xi8>, %s: tensor<f32>, %za: tensor<i8>) -> tensor<2x4x8xf32> {
  %da = loom.dequantize %a, %s, %za : (tensor<2x4x16xi8>, tensor<f32>, tensor<i8>) -> tensor<2x4x16xf32>
  %dw = loom.dequantize %w, %s : (tensor<16x8xi8>, tensor<f32>) -> tensor<16x8xf32>
  %y = loom.matmul %da, %dw : tensor<2x4x16xf32>, tensor<16x8xf32> -> tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}

// -----

// f8E4M3FN operands take no zero points.
// CHECK-LABEL: func.func @matmul_fp8
// CHECK: loom.qmatmul %{{.*}}, %{{.*}} scales(%{{.*}}, %{{.*}}) : (tensor<4x16xf8E4M3FN>, tensor<16x8xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<4x8xf32>
func.func @matmul_fp8(%a: tensor<4x16xf8E4M3FN>, %w: tensor<16x8xf8E4M3FN>, %s: tensor<f32>) -> tensor<4x8xf32> {
  %da = loom.dequantize %a, %s : (tensor<4x16xf8E4M3FN>, tensor<f32>) -> tensor<4x16xf32>
  %dw = loom.dequantize %w, %s : (tensor<16x8xf8E4M3FN>, tensor<f32>) -> tensor<16x8xf32>
  %y = loom.matmul %da, %dw : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Gemm's transposed weight: the transpose moves onto the quantized values
// (and the [N, 1] parameters with it), then the matmul folds.
// CHECK-LABEL: func.func @matmul_transposed_weight
// CHECK-SAME: %[[W:[^:]*]]: tensor<8x16xi8>
// CHECK: %[[WT:.*]] = loom.transpose %[[W]] {perm = array<i64: 1, 0>} : tensor<8x16xi8> -> tensor<16x8xi8>
// CHECK: loom.transpose %{{.*}} {perm = array<i64: 1, 0>} : tensor<8x1xf32> -> tensor<1x8xf32>
// CHECK: loom.qmatmul %{{.*}}, %[[WT]] scales({{.*}}) : (tensor<4x16xui8>, tensor<16x8xi8>, tensor<f32>, tensor<8xf32>) -> tensor<4x8xf32>
func.func @matmul_transposed_weight(%a: tensor<4x16xui8>, %w: tensor<8x16xi8>, %sa: tensor<f32>, %sw: tensor<8x1xf32>) -> tensor<4x8xf32> {
  %da = loom.dequantize %a, %sa : (tensor<4x16xui8>, tensor<f32>) -> tensor<4x16xf32>
  %dw = loom.dequantize %w, %sw : (tensor<8x16xi8>, tensor<8x1xf32>) -> tensor<8x16xf32>
  %t = loom.transpose %dw {perm = array<i64: 1, 0>} : tensor<8x16xf32> -> tensor<16x8xf32>
  %y = loom.matmul %da, %t : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Per-output-channel conv weights ([M, 1, 1, 1] parameters become [M]); the
// float bias and the window attributes carry over.
// CHECK-LABEL: func.func @conv_per_channel
// CHECK-SAME: %[[X:[^:]*]]: tensor<1x3x8x8xui8>, %[[W:[^:]*]]: tensor<16x3x3x3xi8>, %[[SX:[^:]*]]: tensor<f32>, %[[ZX:[^:]*]]: tensor<ui8>, %[[SW:[^:]*]]: tensor<16x1x1x1xf32>, %[[ZW:[^:]*]]: tensor<16x1x1x1xi8>, %[[B:[^:]*]]: tensor<16xf32>
// CHECK: %[[SW1:.*]] = loom.reshape %[[SW]], %{{.*}} -> tensor<16xf32>
// CHECK: %[[ZW1:.*]] = loom.reshape %[[ZW]], %{{.*}} -> tensor<16xi8>
// CHECK: %[[Y:.*]] = loom.qconv %[[X]], %[[W]] scales(%[[SX]], %[[SW1]]) zero_points(%[[ZX]], %[[ZW1]]) bias(%[[B]]) {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}
// CHECK-SAME: -> tensor<1x16x4x4xf32>
// CHECK: return %[[Y]]
func.func @conv_per_channel(%x: tensor<1x3x8x8xui8>, %w: tensor<16x3x3x3xi8>, %sx: tensor<f32>, %zx: tensor<ui8>, %sw: tensor<16x1x1x1xf32>, %zw: tensor<16x1x1x1xi8>, %b: tensor<16xf32>) -> tensor<1x16x4x4xf32> {
  %dx = loom.dequantize %x, %sx, %zx : (tensor<1x3x8x8xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x3x8x8xf32>
  %dw = loom.dequantize %w, %sw, %zw : (tensor<16x3x3x3xi8>, tensor<16x1x1x1xf32>, tensor<16x1x1x1xi8>) -> tensor<16x3x3x3xf32>
  %y = loom.conv %dx, %dw, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>) -> tensor<1x16x4x4xf32>
  return %y : tensor<1x16x4x4xf32>
}

// -----

// Negative: a per-row activation scale is not per tensor.
// CHECK-LABEL: func.func @per_row_activation
// CHECK-NOT: loom.qmatmul
// CHECK: loom.matmul
func.func @per_row_activation(%a: tensor<4x16xui8>, %w: tensor<16x8xi8>, %sa: tensor<4x1xf32>, %sw: tensor<f32>) -> tensor<4x8xf32> {
  %da = loom.dequantize %a, %sa : (tensor<4x16xui8>, tensor<4x1xf32>) -> tensor<4x16xf32>
  %dw = loom.dequantize %w, %sw : (tensor<16x8xi8>, tensor<f32>) -> tensor<16x8xf32>
  %y = loom.matmul %da, %dw : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Negative: a weight quantized per row (along K) cannot be scaled after the
// sum.
// CHECK-LABEL: func.func @per_row_weight
// CHECK-NOT: loom.qmatmul
// CHECK: loom.matmul
func.func @per_row_weight(%a: tensor<4x16xui8>, %w: tensor<16x8xi8>, %sa: tensor<f32>, %sw: tensor<16x1xf32>) -> tensor<4x8xf32> {
  %da = loom.dequantize %a, %sa : (tensor<4x16xui8>, tensor<f32>) -> tensor<4x16xf32>
  %dw = loom.dequantize %w, %sw : (tensor<16x8xi8>, tensor<16x1xf32>) -> tensor<16x8xf32>
  %y = loom.matmul %da, %dw : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Negative: int8 and fp8 operands do not mix; 16-bit integers are not
// 8-bit; a float operand that is not dequantized stays.
// CHECK-LABEL: func.func @not_foldable
// CHECK-NOT: loom.qmatmul
// CHECK-COUNT-3: loom.matmul
func.func @not_foldable(%a: tensor<4x16xi8>, %f: tensor<16x8xf8E4M3FN>, %a16: tensor<4x16xi16>, %w: tensor<16x8xi8>, %x: tensor<4x16xf32>, %s: tensor<f32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %da = loom.dequantize %a, %s : (tensor<4x16xi8>, tensor<f32>) -> tensor<4x16xf32>
  %df = loom.dequantize %f, %s : (tensor<16x8xf8E4M3FN>, tensor<f32>) -> tensor<16x8xf32>
  %y0 = loom.matmul %da, %df : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  %d16 = loom.dequantize %a16, %s : (tensor<4x16xi16>, tensor<f32>) -> tensor<4x16xf32>
  %dw = loom.dequantize %w, %s : (tensor<16x8xi8>, tensor<f32>) -> tensor<16x8xf32>
  %y1 = loom.matmul %d16, %dw : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  %y2 = loom.matmul %x, %dw : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  return %y0, %y1, %y2 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A constant weight stays 8-bit inside the quantized contraction; constants
// no contraction takes (a weight whose activation is float, here with an
// unsigned zero point and per-element scales, and one larger than the
// canonicalizer's folding limit) become float constants, so that nothing
// is dequantized at run time.
// CHECK-LABEL: func.func @constant_weights
// CHECK-DAG: %[[W:.*]] = loom.constant dense<{{.*}}> : tensor<16x8xi8>
// CHECK-DAG: %[[F:.*]] = loom.constant dense<[-2.000000e+00, 0.000000e+00, 4.500000e+02]> : tensor<3xf32>
// CHECK-DAG: %[[L:.*]] = loom.constant dense<{{.*}}> : tensor<8192xf32>
// CHECK: loom.qmatmul %{{.*}}, %[[W]]
// CHECK-NOT: loom.dequantize
// CHECK: return %{{.*}}, %[[F]], %[[L]]
func.func @constant_weights(%a: tensor<4x16xui8>, %sa: tensor<f32>) -> (tensor<4x8xf32>, tensor<3xf32>, tensor<8192xf32>) {
  %w = loom.constant dense<3> : tensor<16x8xi8>
  %sw = loom.constant dense<0.25> : tensor<f32>
  %da = loom.dequantize %a, %sa : (tensor<4x16xui8>, tensor<f32>) -> tensor<4x16xf32>
  %dw = loom.dequantize %w, %sw : (tensor<16x8xi8>, tensor<f32>) -> tensor<16x8xf32>
  %y = loom.matmul %da, %dw : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  %q = loom.constant dense<[126, 128, 255]> : tensor<3xui8>
  %s = loom.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %z = loom.constant dense<[128, 128, 105]> : tensor<3xui8>
  %f = loom.dequantize %q, %s, %z : (tensor<3xui8>, tensor<3xf32>, tensor<3xui8>) -> tensor<3xf32>
  %big = loom.constant dense<-7> : tensor<8192xi8>
  %l = loom.dequantize %big, %sw : (tensor<8192xi8>, tensor<f32>) -> tensor<8192xf32>
  return %y, %f, %l : tensor<4x8xf32>, tensor<3xf32>, tensor<8192xf32>
}

// -----

// A value quantized again with its own parameters (a Quantize/Dequantize
// pair on each side of a Reshape) is the quantized value reshaped; other
// parameters, or a scale that could underflow, requantize.
// CHECK-LABEL: func.func @requantize
// CHECK-SAME: (%[[Q:.+]]: tensor<2x8xui8>
// CHECK-DAG: %[[R:.+]] = loom.reshape %[[Q]], %{{.+}} : (tensor<2x8xui8>, tensor<1xi64>) -> tensor<16xui8>
// CHECK-DAG: %[[D:.+]] = loom.dequantize %[[Q]], %[[QUARTER:[^,]+]],
// CHECK-DAG: %[[F:.+]] = loom.reshape %[[D]]
// CHECK-DAG: %[[O:.+]] = loom.quantize %[[F]], %{{.+}}, %{{.+}} : (tensor<16xf32>, tensor<f32>, tensor<ui8>)
// CHECK-DAG: %[[T:.+]] = loom.quantize %{{.+}}, %{{.+}}, %{{.+}} : (tensor<16xf32>, tensor<f32>, tensor<ui8>)
// CHECK: return %[[R]], %[[O]], %[[T]]
func.func @requantize(%q: tensor<2x8xui8>) -> (tensor<16xui8>, tensor<16xui8>, tensor<16xui8>) {
  %s = loom.constant dense<0.25> : tensor<f32>
  %z = loom.constant dense<7> : tensor<ui8>
  %d = loom.dequantize %q, %s, %z : (tensor<2x8xui8>, tensor<f32>, tensor<ui8>) -> tensor<2x8xf32>
  %shape = loom.constant dense<16> : tensor<1xi64>
  %f = loom.reshape %d, %shape : (tensor<2x8xf32>, tensor<1xi64>) -> tensor<16xf32>
  %same_s = loom.constant dense<0.25> : tensor<f32>
  %r = loom.quantize %f, %same_s, %z : (tensor<16xf32>, tensor<f32>, tensor<ui8>) -> tensor<16xui8>
  %other = loom.constant dense<0.5> : tensor<f32>
  %o = loom.quantize %f, %other, %z : (tensor<16xf32>, tensor<f32>, tensor<ui8>) -> tensor<16xui8>
  %tiny = loom.constant dense<1.0e-38> : tensor<f32>
  %dt = loom.dequantize %q, %tiny, %z : (tensor<2x8xui8>, tensor<f32>, tensor<ui8>) -> tensor<2x8xf32>
  %ft = loom.reshape %dt, %shape : (tensor<2x8xf32>, tensor<1xi64>) -> tensor<16xf32>
  %t = loom.quantize %ft, %tiny, %z : (tensor<16xf32>, tensor<f32>, tensor<ui8>) -> tensor<16xui8>
  return %r, %o, %t : tensor<16xui8>, tensor<16xui8>, tensor<16xui8>
}
