// A mixture-of-experts export's pattern: each token's expert weights
// gathered by gather_nd (rows copied as vectors, the index arithmetic once
// per row), then multiplied with the token as one column (a row-dot
// reduction per batch); and a plain matrix times a column.
func.func @main(%w: tensor<4x32x40xf32>, %x: tensor<6x40x1xf32>, %m: tensor<5x40xf32>, %c: tensor<40x1xf32>) -> (tensor<6x32x40xf32>, tensor<6x32x1xf32>, tensor<5x1xf32>) {
  %idx = loom.constant dense<[[0], [3], [-1], [2], [1], [0]]> : tensor<6x1xi64>
  %g = loom.gather_nd %w, %idx : tensor<4x32x40xf32>, tensor<6x1xi64> -> tensor<6x32x40xf32>
  %y = loom.matmul %g, %x : tensor<6x32x40xf32>, tensor<6x40x1xf32> -> tensor<6x32x1xf32>
  %z = loom.matmul %m, %c : tensor<5x40xf32>, tensor<40x1xf32> -> tensor<5x1xf32>
  return %g, %y, %z : tensor<6x32x40xf32>, tensor<6x32x1xf32>, tensor<5x1xf32>
}
