// Depthwise convolutions (one input channel per group) of every shape
// class loom-cpu-vectorize-depthwise distinguishes: unit stride with a
// remainder piece, stride 2 (read twice as wide, and exactly as wide at a
// row's end), a channel multiplier of 2 with dilation 2, a 5x5 window, a
// row long enough for a loop of full pieces, and two batches.
func.func @main(%x: tensor<2x6x9x9xf32>, %w3: tensor<6x1x3x3xf32>, %b: tensor<6xf32>, %w2: tensor<12x1x3x3xf32>, %y: tensor<1x4x12x100xf32>, %w5: tensor<4x1x5x5xf32>) -> (tensor<2x6x9x9xf32>, tensor<2x6x4x4xf32>, tensor<2x6x5x5xf32>, tensor<2x12x5x7xf32>, tensor<1x4x8x96xf32>, tensor<1x4x5x49xf32>) {
  %s1 = loom.conv %x, %w3, %b {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 6 : i64} : (tensor<2x6x9x9xf32>, tensor<6x1x3x3xf32>, tensor<6xf32>) -> tensor<2x6x9x9xf32>
  %s2 = loom.conv %x, %w3 {strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 6 : i64} : (tensor<2x6x9x9xf32>, tensor<6x1x3x3xf32>) -> tensor<2x6x4x4xf32>
  %s2p = loom.conv %x, %w3, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 6 : i64} : (tensor<2x6x9x9xf32>, tensor<6x1x3x3xf32>, tensor<6xf32>) -> tensor<2x6x5x5xf32>
  %m2 = loom.conv %x, %w2 {strides = array<i64: 1, 1>, pads = array<i64: 0, 1, 0, 1>, dilations = array<i64: 2, 2>, group = 6 : i64} : (tensor<2x6x9x9xf32>, tensor<12x1x3x3xf32>) -> tensor<2x12x5x7xf32>
  %k5 = loom.conv %y, %w5 {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 4 : i64} : (tensor<1x4x12x100xf32>, tensor<4x1x5x5xf32>) -> tensor<1x4x8x96xf32>
  %k5s2 = loom.conv %y, %w5 {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 4 : i64} : (tensor<1x4x12x100xf32>, tensor<4x1x5x5xf32>) -> tensor<1x4x5x49xf32>
  return %s1, %s2, %s2p, %m2, %k5, %k5s2 : tensor<2x6x9x9xf32>, tensor<2x6x4x4xf32>, tensor<2x6x5x5xf32>, tensor<2x12x5x7xf32>, tensor<1x4x8x96xf32>, tensor<1x4x5x49xf32>
}
