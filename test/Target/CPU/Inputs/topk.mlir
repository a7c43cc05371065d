func.func @main(%x: tensor<3x8xf32>) -> tensor<3x2xf32> {
  %k = loom.constant dense<2> : tensor<1xi64>
  %v, %i = loom.topk %x, %k {axis = -1 : i64} : tensor<3x8xf32>, tensor<1xi64> -> tensor<3x2xf32>, tensor<3x2xi64>
  return %v : tensor<3x2xf32>
}
