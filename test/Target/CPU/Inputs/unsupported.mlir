func.func @main(%x: tensor<3x4xf32>) -> tensor<3x2xi64> {
  %i = loom.non_zero %x : tensor<3x4xf32> -> tensor<2x?xi64>
  %t = loom.transpose %i {perm = array<i64: 1, 0>} : tensor<2x?xi64> -> tensor<?x2xi64>
  %c = tensor.cast %t : tensor<?x2xi64> to tensor<3x2xi64>
  return %c : tensor<3x2xi64>
}
