// Quantized contractions (loom.qmatmul, loom.qconv): per tensor and per
// channel, int8 and uint8, with and without zero points, a padded 2-D
// convolution with bias, a grouped, strided, dilated, asymmetrically padded
// one, a 1-D one with uint8 weights, a 3-D grouped one, a uint8 x uint8
// product of 4-D activations, and a product long enough (K = 33100)
// that the sums leave i32's guaranteed range. The 8-bit operands are
// quantized here from the seeded random inputs in [-1, 1), with scales
// that make them span (and saturate) the integer ranges.
func.func @main(%a: tensor<2x3x16xf32>, %b: tensor<16x8xf32>,
                %c: tensor<4x32xf32>, %d: tensor<32x16xf32>,
                %e: tensor<1x33100xf32>, %f: tensor<33100x2xf32>,
                %x: tensor<1x3x9x9xf32>, %w: tensor<6x3x3x3xf32>,
                %x2: tensor<2x4x10x10xf32>, %w2: tensor<6x2x3x3xf32>,
                %x3: tensor<1x4x12xf32>, %w3: tensor<5x4x3xf32>,
                %a4: tensor<2x2x3x20xf32>, %b4: tensor<20x5xf32>,
                %x5: tensor<1x4x5x6x7xf32>, %w5: tensor<4x2x2x3x2xf32>)
    -> (tensor<2x3x8xf32>, tensor<4x16xf32>, tensor<1x2xf32>,
        tensor<1x6x9x9xf32>, tensor<2x6x4x5xf32>, tensor<1x5x12xf32>,
        tensor<2x2x3x5xf32>, tensor<1x4x3x3x4xf32>) {
  %s127 = loom.constant dense<0.0078125> : tensor<f32>
  %s140 = loom.constant dense<0.00714285714> : tensor<f32>
  %z128 = loom.constant dense<128> : tensor<ui8>
  %z100 = loom.constant dense<100> : tensor<ui8>
  %zi = loom.constant dense<3> : tensor<i8>

  // ui8 x i8, per-column weights with zero points, 3-D activations.
  %qa = loom.quantize %a, %s140, %z128 : (tensor<2x3x16xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x3x16xui8>
  %qb = loom.quantize %b, %s140 : (tensor<16x8xf32>, tensor<f32>) -> tensor<16x8xi8>
  %sa = loom.constant dense<0.0213> : tensor<f32>
  %sb = loom.constant dense<[0.011, 0.0021, 0.37, 0.049, 0.0051, 0.06, 0.7, 0.0087]> : tensor<8xf32>
  %zb = loom.constant dense<[0, 1, -2, 3, 0, 5, -6, 127]> : tensor<8xi8>
  %y0 = loom.qmatmul %qa, %qb scales(%sa, %sb) zero_points(%z128, %zb) : (tensor<2x3x16xui8>, tensor<16x8xi8>, tensor<f32>, tensor<8xf32>, tensor<ui8>, tensor<8xi8>) -> tensor<2x3x8xf32>

  // i8 x i8 per tensor, no zero points.
  %qc = loom.quantize %c, %s127 : (tensor<4x32xf32>, tensor<f32>) -> tensor<4x32xi8>
  %qd = loom.quantize %d, %s140 : (tensor<32x16xf32>, tensor<f32>) -> tensor<32x16xi8>
  %sc = loom.constant dense<0.0173> : tensor<f32>
  %sd = loom.constant dense<0.0031> : tensor<f32>
  %y1 = loom.qmatmul %qc, %qd scales(%sc, %sd) : (tensor<4x32xi8>, tensor<32x16xi8>, tensor<f32>, tensor<f32>) -> tensor<4x16xf32>

  // A long reduction: 33100 products of up to 255 * 255 overflow i32.
  %qe = loom.quantize %e, %s140, %z128 : (tensor<1x33100xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x33100xui8>
  %qf = loom.quantize %f, %s140 : (tensor<33100x2xf32>, tensor<f32>) -> tensor<33100x2xi8>
  %zf = loom.constant dense<-128> : tensor<i8>
  %y2 = loom.qmatmul %qe, %qf scales(%sc, %sd) zero_points(%z128, %zf) : (tensor<1x33100xui8>, tensor<33100x2xi8>, tensor<f32>, tensor<f32>, tensor<ui8>, tensor<i8>) -> tensor<1x2xf32>

  // 2-D, padded, per-channel weights with zero points, bias.
  %qx = loom.quantize %x, %s127, %z100 : (tensor<1x3x9x9xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x3x9x9xui8>
  %qw = loom.quantize %w, %s140 : (tensor<6x3x3x3xf32>, tensor<f32>) -> tensor<6x3x3x3xi8>
  %sx = loom.constant dense<0.0123> : tensor<f32>
  %sw = loom.constant dense<[0.002, 0.013, 0.0007, 0.3, 0.0451, 0.0099]> : tensor<6xf32>
  %zw = loom.constant dense<[0, -1, 7, -128, 127, 2]> : tensor<6xi8>
  %bias = loom.constant dense<[0.1, -0.25, 3.0, 0.0, -1.5e-3, 17.0]> : tensor<6xf32>
  %y3 = loom.qconv %qx, %qw scales(%sx, %sw) zero_points(%z100, %zw) bias(%bias) {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x3x9x9xui8>, tensor<6x3x3x3xi8>, tensor<f32>, tensor<6xf32>, tensor<ui8>, tensor<6xi8>, tensor<6xf32>) -> tensor<1x6x9x9xf32>

  // Grouped (2 groups), strided, dilated, asymmetric pads, per-tensor
  // int8 with zero points, bias.
  %qx2 = loom.quantize %x2, %s140, %zi : (tensor<2x4x10x10xf32>, tensor<f32>, tensor<i8>) -> tensor<2x4x10x10xi8>
  %qw2 = loom.quantize %w2, %s127 : (tensor<6x2x3x3xf32>, tensor<f32>) -> tensor<6x2x3x3xi8>
  %zw2 = loom.constant dense<-5> : tensor<i8>
  %y4 = loom.qconv %qx2, %qw2 scales(%sx, %sd) zero_points(%zi, %zw2) bias(%bias) {strides = array<i64: 2, 2>, pads = array<i64: 1, 2, 0, 1>, dilations = array<i64: 2, 2>, group = 2 : i64} : (tensor<2x4x10x10xi8>, tensor<6x2x3x3xi8>, tensor<f32>, tensor<f32>, tensor<i8>, tensor<i8>, tensor<6xf32>) -> tensor<2x6x4x5xf32>

  // 1-D, uint8 weights with per-channel zero points, no bias.
  %qx3 = loom.quantize %x3, %s127, %z128 : (tensor<1x4x12xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x4x12xui8>
  %qw3 = loom.quantize %w3, %s140, %z128 : (tensor<5x4x3xf32>, tensor<f32>, tensor<ui8>) -> tensor<5x4x3xui8>
  %sw3 = loom.constant dense<[0.01, 0.02, 0.03, 0.04, 0.05]> : tensor<5xf32>
  %zw3 = loom.constant dense<[0, 128, 255, 1, 90]> : tensor<5xui8>
  %y5 = loom.qconv %qx3, %qw3 scales(%sc, %sw3) zero_points(%z128, %zw3) {strides = array<i64: 1>, pads = array<i64: 1, 1>, dilations = array<i64: 1>} : (tensor<1x4x12xui8>, tensor<5x4x3xui8>, tensor<f32>, tensor<5xf32>, tensor<ui8>, tensor<5xui8>) -> tensor<1x5x12xf32>

  // uint8 x uint8 with per-tensor zero points, 4-D activations.
  %z17 = loom.constant dense<17> : tensor<ui8>
  %z200 = loom.constant dense<200> : tensor<ui8>
  %qa4 = loom.quantize %a4, %s127, %z17 : (tensor<2x2x3x20xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x2x3x20xui8>
  %qb4 = loom.quantize %b4, %s127, %z200 : (tensor<20x5xf32>, tensor<f32>, tensor<ui8>) -> tensor<20x5xui8>
  %sa4 = loom.constant dense<0.37> : tensor<f32>
  %sb4 = loom.constant dense<1.0e-3> : tensor<f32>
  %y6 = loom.qmatmul %qa4, %qb4 scales(%sa4, %sb4) zero_points(%z17, %z200) : (tensor<2x2x3x20xui8>, tensor<20x5xui8>, tensor<f32>, tensor<f32>, tensor<ui8>, tensor<ui8>) -> tensor<2x2x3x5xf32>

  // 3-D, grouped, mixed strides and dilations, no zero points, bias.
  %qx5 = loom.quantize %x5, %s127 : (tensor<1x4x5x6x7xf32>, tensor<f32>) -> tensor<1x4x5x6x7xi8>
  %qw5 = loom.quantize %w5, %s127 : (tensor<4x2x2x3x2xf32>, tensor<f32>) -> tensor<4x2x2x3x2xi8>
  %sw5 = loom.constant dense<[0.1, 0.2, 0.3, 0.4]> : tensor<4xf32>
  %b5 = loom.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %y7 = loom.qconv %qx5, %qw5 scales(%sa4, %sw5) bias(%b5) {strides = array<i64: 2, 1, 2>, pads = array<i64: 1, 0, 1, 0, 1, 0>, dilations = array<i64: 1, 2, 1>, group = 2 : i64} : (tensor<1x4x5x6x7xi8>, tensor<4x2x2x3x2xi8>, tensor<f32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x3x3x4xf32>

  return %y0, %y1, %y2, %y3, %y4, %y5, %y6, %y7 : tensor<2x3x8xf32>, tensor<4x16xf32>, tensor<1x2xf32>, tensor<1x6x9x9xf32>, tensor<2x6x4x5xf32>, tensor<1x5x12xf32>, tensor<2x2x3x5xf32>, tensor<1x4x3x3x4xf32>
}
