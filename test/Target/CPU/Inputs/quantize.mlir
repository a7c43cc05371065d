// Quantize and dequantize (the QDQ ops of ONNX models): per tensor and per
// channel, signed and unsigned, with and without zero points. Inputs are
// seeded random floats in [-1, 1); the scales make them span and overflow
// the integer ranges, so rounding and saturation are both exercised.
func.func @main(%x: tensor<4x8xf32>) -> (tensor<4x8xui8>, tensor<4x8xi8>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %s = loom.constant dense<0.0037> : tensor<f32>
  %zp = loom.constant dense<128> : tensor<ui8>
  %q = loom.quantize %x, %s, %zp : (tensor<4x8xf32>, tensor<f32>, tensor<ui8>) -> tensor<4x8xui8>
  %cs = loom.constant dense<[[0.001], [0.01], [0.1], [0.0005]]> : tensor<4x1xf32>
  %qi = loom.quantize %x, %cs : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xi8>
  %d = loom.dequantize %q, %s, %zp : (tensor<4x8xui8>, tensor<f32>, tensor<ui8>) -> tensor<4x8xf32>
  %di = loom.dequantize %qi, %cs : (tensor<4x8xi8>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %q, %qi, %d, %di : tensor<4x8xui8>, tensor<4x8xi8>, tensor<4x8xf32>, tensor<4x8xf32>
}
