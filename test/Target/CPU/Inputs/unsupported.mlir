func.func @main(%x: tensor<3x4xf32>) -> tensor<4x2xi64> {
  %i = loom.non_zero %x : tensor<3x4xf32> -> tensor<2x?xi64>
  %pads = loom.constant dense<[1, 0, 1, 0]> : tensor<4xi64>
  %t = loom.pad %i, %pads {mode = "edge"} : (tensor<2x?xi64>, tensor<4xi64>) -> tensor<4x?xi64>
  %s = loom.transpose %t {perm = array<i64: 1, 0>} : tensor<4x?xi64> -> tensor<?x4xi64>
  %c = tensor.cast %s : tensor<?x4xi64> to tensor<2x4xi64>
  %r = loom.transpose %c {perm = array<i64: 1, 0>} : tensor<2x4xi64> -> tensor<4x2xi64>
  return %r : tensor<4x2xi64>
}
