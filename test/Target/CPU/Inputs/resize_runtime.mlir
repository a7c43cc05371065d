func.func @main(%x: tensor<1x2x4x5xf32>, %r: tensor<4xf32>) -> (tensor<1x2x7x3xf32>, tensor<1x2x6x9xf32>, tensor<1x2x3x3xf32>) {
  // Scales known only at run time: 0 * r keeps them out of reach of folding.
  %zero = loom.constant dense<0.0> : tensor<f32>
  %z = loom.mul %r, %zero : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %s = loom.constant dense<[1.0, 1.0, 1.75, 0.6]> : tensor<4xf32>
  %scales = loom.add %s, %z : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %a = loom.resize %x, %scales {mode = "linear", coordinate_transformation_mode = "pytorch_half_pixel"} : (tensor<1x2x4x5xf32>, tensor<4xf32>) -> tensor<1x2x7x3xf32>
  %s2 = loom.constant dense<[1.0, 1.0, 1.5, 1.8]> : tensor<4xf32>
  %scales2 = loom.add %s2, %z : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %b = loom.resize %x, %scales2 {mode = "cubic", exclude_outside = true} : (tensor<1x2x4x5xf32>, tensor<4xf32>) -> tensor<1x2x6x9xf32>
  %s3 = loom.constant dense<[1.0, 1.0, 0.75, 0.6]> : tensor<4xf32>
  %scales3 = loom.add %s3, %z : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %roi = loom.constant dense<[0.0, 0.0, 0.2, -0.3, 1.0, 1.0, 1.1, 0.9]> : tensor<8xf32>
  %c = loom.resize %x, %scales3, %roi {mode = "nearest", coordinate_transformation_mode = "tf_crop_and_resize", nearest_mode = "round_prefer_ceil", extrapolation_value = 7.5 : f32} : (tensor<1x2x4x5xf32>, tensor<4xf32>, tensor<8xf32>) -> tensor<1x2x3x3xf32>
  return %a, %b, %c : tensor<1x2x7x3xf32>, tensor<1x2x6x9xf32>, tensor<1x2x3x3xf32>
}
