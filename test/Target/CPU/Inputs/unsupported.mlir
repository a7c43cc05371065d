func.func @main(%x: tensor<1x3x8x8xf32>, %grid: tensor<1x4x4x2xf32>) -> tensor<1x3x4x4xf32> {
  %y = loom.grid_sample %x, %grid {mode = "bilinear", padding_mode = "border", align_corners = true} : tensor<1x3x8x8xf32>, tensor<1x4x4x2xf32> -> tensor<1x3x4x4xf32>
  return %y : tensor<1x3x4x4xf32>
}
