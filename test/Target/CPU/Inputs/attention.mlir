func.func @main(%q: tensor<2x4x5x8xf32>, %k: tensor<2x2x7x8xf32>, %v: tensor<2x2x7x6xf32>, %mask: tensor<5x7xf32>, %keep: tensor<2x1x5x7xi1>) -> (tensor<2x4x5x6xf32>, tensor<2x4x5x6xf32>) {
  %a = loom.attention %q, %k, %v, %mask {is_causal = true} : (tensor<2x4x5x8xf32>, tensor<2x2x7x8xf32>, tensor<2x2x7x6xf32>, tensor<5x7xf32>) -> tensor<2x4x5x6xf32>
  %b = loom.attention %q, %k, %v, %keep {scale = 0.25 : f32} : (tensor<2x4x5x8xf32>, tensor<2x2x7x8xf32>, tensor<2x2x7x6xf32>, tensor<2x1x5x7xi1>) -> tensor<2x4x5x6xf32>
  return %a, %b : tensor<2x4x5x6xf32>, tensor<2x4x5x6xf32>
}
