func.func @main(%start: tensor<i64>, %limit: tensor<i64>, %delta: tensor<i64>) -> tensor<4xi64> {
  %y = loom.range %start, %limit, %delta : tensor<i64>, tensor<i64>, tensor<i64> -> tensor<4xi64>
  return %y : tensor<4xi64>
}
