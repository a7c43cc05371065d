func.func @main(%x: tensor<2x4x9x9xf32>, %w: tensor<6x2x3x3xf32>, %b: tensor<6xf32>, %w2: tensor<5x4x3x3xf32>, %w3: tensor<7x4x1x1xf32>) -> (tensor<2x6x5x5xf32>, tensor<2x4x5x5xf32>, tensor<2x4x5x5xf32>, tensor<2x4x5x5xf32>, tensor<2x5x3x5xf32>, tensor<2x4x3x3xf32>, tensor<2x7x9x9xf32>, tensor<2x5x7x9xf32>) {
  %g = loom.conv %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<2x4x9x9xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<2x6x5x5xf32>
  %a = loom.avg_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : tensor<2x4x9x9xf32> -> tensor<2x4x5x5xf32>
  %ai = loom.avg_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, count_include_pad = true} : tensor<2x4x9x9xf32> -> tensor<2x4x5x5xf32>
  %m = loom.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = true} : tensor<2x4x9x9xf32> -> tensor<2x4x5x5xf32>
  %d = loom.conv %x, %w2 {strides = array<i64: 2, 2>, pads = array<i64: 0, 1, 0, 1>, dilations = array<i64: 2, 1>, group = 1 : i64} : (tensor<2x4x9x9xf32>, tensor<5x4x3x3xf32>) -> tensor<2x5x3x5xf32>
  %md = loom.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 0, 0>, dilations = array<i64: 2, 2>} : tensor<2x4x9x9xf32> -> tensor<2x4x3x3xf32>
  // With 16 output positions or more, 2-D convolutions compile as im2col
  // products (a 1x1 window with unit strides without the copy).
  %p = loom.conv %x, %w3 {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<2x4x9x9xf32>, tensor<7x4x1x1xf32>) -> tensor<2x7x9x9xf32>
  %s = loom.conv %x, %w2 {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 2, 1>, group = 1 : i64} : (tensor<2x4x9x9xf32>, tensor<5x4x3x3xf32>) -> tensor<2x5x7x9xf32>
  return %g, %a, %ai, %m, %d, %md, %p, %s : tensor<2x6x5x5xf32>, tensor<2x4x5x5xf32>, tensor<2x4x5x5xf32>, tensor<2x4x5x5xf32>, tensor<2x5x3x5xf32>, tensor<2x4x3x3xf32>, tensor<2x7x9x9xf32>, tensor<2x5x7x9xf32>
}
