func.func @main(%x: tensor<2x4x5x5xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<6xf32>, %x1: tensor<1x2x7xf32>, %w1: tensor<2x3x4xf32>) -> (tensor<2x6x11x13xf32>, tensor<1x3x14xf32>) {
  %y = loom.conv_transpose %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 0, 0>, dilations = array<i64: 1, 2>, output_padding = array<i64: 1, 0>, group = 2 : i64} : (tensor<2x4x5x5xf32>, tensor<4x3x3x3xf32>, tensor<6xf32>) -> tensor<2x6x11x13xf32>
  %z = loom.conv_transpose %x1, %w1 {strides = array<i64: 2>, pads = array<i64: 1, 2>, dilations = array<i64: 1>, output_padding = array<i64: 1>, group = 1 : i64} : (tensor<1x2x7xf32>, tensor<2x3x4xf32>) -> tensor<1x3x14xf32>
  return %y, %z : tensor<2x6x11x13xf32>, tensor<1x3x14xf32>
}
