// Ops that read at run-time indices, for test/Target/CPU/index-checks.test.
func.func @main(%x: tensor<4x5xf32>, %g: tensor<3xi64>, %e: tensor<3x5xi64>, %n: tensor<2x2xi64>, %s: tensor<3x5xi64>, %u: tensor<3x5xf32>, %r: tensor<2x1xi64>, %rows: tensor<2x5xf32>) -> (tensor<3x5xf32>, tensor<3x5xf32>, tensor<2xf32>, tensor<4x5xf32>, tensor<4x5xf32>) {
  %gather = loom.gather %x, %g : tensor<4x5xf32>, tensor<3xi64> -> tensor<3x5xf32>
  %elements = loom.gather_elements %x, %e {axis = 0 : i64} : tensor<4x5xf32>, tensor<3x5xi64> -> tensor<3x5xf32>
  %nd = loom.gather_nd %x, %n : tensor<4x5xf32>, tensor<2x2xi64> -> tensor<2xf32>
  %scatter = loom.scatter_elements %x, %s, %u {axis = 0 : i64, reduction = "add"} : tensor<4x5xf32>, tensor<3x5xi64>, tensor<3x5xf32> -> tensor<4x5xf32>
  %scatter_nd = loom.scatter_nd %x, %r, %rows : tensor<4x5xf32>, tensor<2x1xi64>, tensor<2x5xf32> -> tensor<4x5xf32>
  return %gather, %elements, %nd, %scatter, %scatter_nd : tensor<3x5xf32>, tensor<3x5xf32>, tensor<2xf32>, tensor<4x5xf32>, tensor<4x5xf32>
}
