func.func @main(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<f32>) {
  %s = loom.add %a, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %r = loom.relu %s : tensor<2x3xf32>
  %m = loom.reduce_sum %r {axes = array<i64>, keepdims = false} : tensor<2x3xf32> -> tensor<f32>
  return %r, %m : tensor<2x3xf32>, tensor<f32>
}
