func.func @main(%x: tensor<3x8xf32>, %n: tensor<2x6x3xi32>, %p: tensor<1x2x6x5xf32>) -> (tensor<3x3xf32>, tensor<3x3xi64>, tensor<2x2x3xi32>, tensor<2x2x3xi64>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xi64>, tensor<1x2x3x2xi64>) {
  %k = loom.constant dense<3> : tensor<1xi64>
  %v, %i = loom.topk %x, %k {axis = -1 : i64} : tensor<3x8xf32>, tensor<1xi64> -> tensor<3x3xf32>, tensor<3x3xi64>
  %k2 = loom.constant dense<2> : tensor<1xi64>
  %sv, %si = loom.topk %n, %k2 {axis = 1 : i64, largest = false} : tensor<2x6x3xi32>, tensor<1xi64> -> tensor<2x2x3xi32>, tensor<2x2x3xi64>
  %m, %mi = loom.max_pool_with_indices %p {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = true} : tensor<1x2x6x5xf32> -> tensor<1x2x3x3xf32>, tensor<1x2x3x3xi64>
  %m2, %mi2 = loom.max_pool_with_indices %p {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 0, 0>, dilations = array<i64: 1, 1>, storage_order = 1 : i64} : tensor<1x2x6x5xf32> -> tensor<1x2x3x2xf32>, tensor<1x2x3x2xi64>
  return %v, %i, %sv, %si, %m, %mi, %mi2 : tensor<3x3xf32>, tensor<3x3xi64>, tensor<2x2x3xi32>, tensor<2x2x3xi64>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xi64>, tensor<1x2x3x2xi64>
}
