func.func @main(%x: tensor<4x5xf32>, %i: tensor<3x5xi64>, %u: tensor<3x5xf32>, %ind: tensor<3x1xi64>, %rows: tensor<3x5xf32>, %pairs: tensor<2x3x2xi64>) -> (tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<2x3xf32>) {
  %none = loom.scatter_elements %x, %i, %u {axis = 0 : i64} : tensor<4x5xf32>, tensor<3x5xi64>, tensor<3x5xf32> -> tensor<4x5xf32>
  %add = loom.scatter_elements %x, %i, %u {axis = 0 : i64, reduction = "add"} : tensor<4x5xf32>, tensor<3x5xi64>, tensor<3x5xf32> -> tensor<4x5xf32>
  %max = loom.scatter_elements %x, %i, %u {axis = 0 : i64, reduction = "max"} : tensor<4x5xf32>, tensor<3x5xi64>, tensor<3x5xf32> -> tensor<4x5xf32>
  %nd = loom.scatter_nd %x, %ind, %rows {reduction = "mul"} : tensor<4x5xf32>, tensor<3x1xi64>, tensor<3x5xf32> -> tensor<4x5xf32>
  %g = loom.gather_nd %x, %pairs : tensor<4x5xf32>, tensor<2x3x2xi64> -> tensor<2x3xf32>
  return %none, %add, %max, %nd, %g : tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<2x3xf32>
}
