func.func @main(%x: tensor<1x2x4x5xf32>) -> (tensor<1x2x8x10xf32>, tensor<1x2x6x3xf32>, tensor<1x2x7x9xf32>, tensor<1x2x3x3xf32>, tensor<1x2x8x10xf32>) {
  %s2 = loom.constant dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>
  %near = loom.resize %x, %s2 {mode = "nearest", coordinate_transformation_mode = "asymmetric", nearest_mode = "floor"} : (tensor<1x2x4x5xf32>, tensor<4xf32>) -> tensor<1x2x8x10xf32>
  %s3 = loom.constant dense<[1.0, 1.0, 1.5, 0.6]> : tensor<4xf32>
  %lin = loom.resize %x, %s3 {mode = "linear"} : (tensor<1x2x4x5xf32>, tensor<4xf32>) -> tensor<1x2x6x3xf32>
  %s4 = loom.constant dense<[1.0, 1.0, 1.75, 1.8]> : tensor<4xf32>
  %cub = loom.resize %x, %s4 {mode = "cubic", coordinate_transformation_mode = "align_corners", exclude_outside = true, cubic_coeff_a = -0.5 : f32} : (tensor<1x2x4x5xf32>, tensor<4xf32>) -> tensor<1x2x7x9xf32>
  %s5 = loom.constant dense<[1.0, 1.0, 0.75, 0.6]> : tensor<4xf32>
  %roi = loom.constant dense<[0.0, 0.0, 0.2, -0.3, 1.0, 1.0, 1.1, 0.9]> : tensor<8xf32>
  %crop = loom.resize %x, %s5, %roi {mode = "linear", coordinate_transformation_mode = "tf_crop_and_resize", extrapolation_value = 7.5 : f32} : (tensor<1x2x4x5xf32>, tensor<4xf32>, tensor<8xf32>) -> tensor<1x2x3x3xf32>
  %rpc = loom.resize %x, %s2 {mode = "nearest", nearest_mode = "round_prefer_ceil"} : (tensor<1x2x4x5xf32>, tensor<4xf32>) -> tensor<1x2x8x10xf32>
  return %near, %lin, %cub, %crop, %rpc : tensor<1x2x8x10xf32>, tensor<1x2x6x3xf32>, tensor<1x2x7x9xf32>, tensor<1x2x3x3xf32>, tensor<1x2x8x10xf32>
}
