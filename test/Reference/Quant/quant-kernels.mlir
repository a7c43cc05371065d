// The reference kernels of the quantization ops on values whose results are
// known by hand: ties round half to even, results saturate, f8E4M3FN rounds
// to its 3-bit mantissa and saturates at +-448, and the quantized
// contractions equal (q - zp) products scaled once.
// RUN: loom-run %s --print-values 16 | FileCheck %s

func.func @main() -> (tensor<8xui8>, tensor<4xi8>, tensor<6xf8E4M3FN>,
                      tensor<4xf32>, tensor<2x2xf32>, tensor<1x2x1x1xf32>) {
  // x / 0.5 = [-1, 0.5, 1.5, 2.5, 3, 200, 400, -2]: +10, then round half to
  // even and clamp to [0, 255].
  %x = loom.constant dense<[-0.5, 0.25, 0.75, 1.25, 1.5, 100.0, 200.0, -1.0]> : tensor<8xf32>
  %s = loom.constant dense<0.5> : tensor<f32>
  %zp = loom.constant dense<10> : tensor<ui8>
  %q = loom.quantize %x, %s, %zp : (tensor<8xf32>, tensor<f32>, tensor<ui8>) -> tensor<8xui8>
  // CHECK: output 0: ui8[8] [9, 10, 12, 12, 13, 210, 255, 8]

  // int8 saturates at both ends; per-element scales broadcast.
  %y = loom.constant dense<[-1000.0, 1000.0, 0.3, -0.3]> : tensor<4xf32>
  %ys = loom.constant dense<[1.0, 1.0, 0.1, 0.1]> : tensor<4xf32>
  %qi = loom.quantize %y, %ys : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi8>
  // CHECK: output 1: i8[4] [-128, 127, 3, -3]

  // f8E4M3FN: 0.3 -> 0.3125 (nearest with 3 mantissa bits), 1000 -> 448,
  // -500 -> -448, 17 -> 16 (tie to even), 0.0015 -> the smallest subnormal
  // (2^-9), 0.0009 (under half of it) -> 0.
  %f = loom.constant dense<[0.3, 1000.0, -500.0, 17.0, 0.0015, 0.0009]> : tensor<6xf32>
  %one = loom.constant dense<1.0> : tensor<f32>
  %qf = loom.quantize %f, %one : (tensor<6xf32>, tensor<f32>) -> tensor<6xf8E4M3FN>
  // CHECK: output 2: f8E4M3FN[6] [0.3125, 448, -448, 16, 0.00195312, 0]

  // dequantize: (q - zp) * scale.
  %dq = loom.constant dense<[0, 10, 11, 255]> : tensor<4xui8>
  %d = loom.dequantize %dq, %s, %zp : (tensor<4xui8>, tensor<f32>, tensor<ui8>) -> tensor<4xf32>
  // CHECK: output 3: f32[4] [-5, 0, 0.5, 122.5]

  // qmatmul: a - 1 = [[1, 2], [3, 4]], w per column zero points [0, 1]:
  // w - zp = [[1, 1], [2, 0]]; products [[5, 1], [11, 3]] times 0.5 * [1, 2].
  %a = loom.constant dense<[[2, 3], [4, 5]]> : tensor<2x2xui8>
  %za = loom.constant dense<1> : tensor<ui8>
  %w = loom.constant dense<[[1, 2], [2, 1]]> : tensor<2x2xi8>
  %zw = loom.constant dense<[0, 1]> : tensor<2xi8>
  %sw = loom.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %mm = loom.qmatmul %a, %w scales(%s, %sw) zero_points(%za, %zw) : (tensor<2x2xui8>, tensor<2x2xi8>, tensor<f32>, tensor<2xf32>, tensor<ui8>, tensor<2xi8>) -> tensor<2x2xf32>
  // CHECK: output 4: f32[2, 2] [2.5, 1, 5.5, 3]

  // qconv, 1x1 kernel over one pixel of 2 channels, per output channel
  // scales and a bias: x - 1 = [1, 2]; w = [[1, 1], [-1, 2]] -> [3, 3],
  // times 0.5 * [1, 2] plus [0.25, -1].
  %x4 = loom.constant dense<[[[[2]], [[3]]]]> : tensor<1x2x1x1xui8>
  %k = loom.constant dense<[[[[1]], [[1]]], [[[-1]], [[2]]]]> : tensor<2x2x1x1xi8>
  %zk = loom.constant dense<0> : tensor<2xi8>
  %b = loom.constant dense<[0.25, -1.0]> : tensor<2xf32>
  %c = loom.qconv %x4, %k scales(%s, %sw) zero_points(%za, %zk) bias(%b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x2x1x1xui8>, tensor<2x2x1x1xi8>, tensor<f32>, tensor<2xf32>, tensor<ui8>, tensor<2xi8>, tensor<2xf32>) -> tensor<1x2x1x1xf32>
  // CHECK: output 5: f32[1, 2, 1, 1] [1.75, 2]
  return %q, %qi, %qf, %d, %mm, %c : tensor<8xui8>, tensor<4xi8>, tensor<6xf8E4M3FN>, tensor<4xf32>, tensor<2x2xf32>, tensor<1x2x1x1xf32>
}
