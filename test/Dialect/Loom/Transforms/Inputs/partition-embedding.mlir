// An embedding lookup with negative indices (counted from the end), for
// partition-numerics.test.
func.func @main(%ids: tensor<2x5xi64>) -> tensor<2x5x4xf32> {
  %table = loom.constant dense<[[0.5, 1.0, 1.5, 2.0], [2.5, 3.0, 3.5, 4.0], [4.5, 5.0, 5.5, 6.0], [6.5, 7.0, 7.5, 8.0], [8.5, 9.0, 9.5, 10.0], [10.5, 11.0, 11.5, 12.0]]> : tensor<6x4xf32>
  %rows = loom.gather %table, %ids : tensor<6x4xf32>, tensor<2x5xi64> -> tensor<2x5x4xf32>
  return %rows : tensor<2x5x4xf32>
}
