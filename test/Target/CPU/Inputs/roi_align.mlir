// Five boxes over two images, three of them partly outside the map (one
// with a negative corner, one past the far edges, one collapsed); avg and
// max, both coordinate modes, sampling_ratio 2 and 0 (adaptive per box).
func.func @main(%x: tensor<2x3x10x12xf32>) -> (tensor<5x3x3x4xf32>, tensor<5x3x3x4xf32>, tensor<5x3x2x3xf32>, tensor<5x3x2x3xf32>) {
  %rois = loom.constant dense<[[1.0, 2.5, 9.0, 8.0], [-3.0, -2.0, 6.5, 5.0], [4.0, 3.0, 27.0, 23.0], [0.0, 0.0, 23.0, 19.0], [7.0, 6.0, 7.25, 6.5]]> : tensor<5x4xf32>
  %idx = loom.constant dense<[0, 1, 1, 0, 1]> : tensor<5xi64>
  %a = loom.roi_align %x, %rois, %idx {output_height = 3 : i64, output_width = 4 : i64, sampling_ratio = 2 : i64, spatial_scale = 1.0 : f32} : tensor<2x3x10x12xf32>, tensor<5x4xf32>, tensor<5xi64> -> tensor<5x3x3x4xf32>
  %b = loom.roi_align %x, %rois, %idx {mode = "max", output_height = 3 : i64, output_width = 4 : i64, sampling_ratio = 0 : i64, spatial_scale = 0.5 : f32, coordinate_transformation_mode = "output_half_pixel"} : tensor<2x3x10x12xf32>, tensor<5x4xf32>, tensor<5xi64> -> tensor<5x3x3x4xf32>
  %c = loom.roi_align %x, %rois, %idx {output_height = 2 : i64, output_width = 3 : i64, sampling_ratio = 0 : i64, spatial_scale = 0.5 : f32, coordinate_transformation_mode = "output_half_pixel"} : tensor<2x3x10x12xf32>, tensor<5x4xf32>, tensor<5xi64> -> tensor<5x3x2x3xf32>
  %d = loom.roi_align %x, %rois, %idx {mode = "max", output_height = 2 : i64, output_width = 3 : i64, sampling_ratio = 2 : i64, spatial_scale = 1.0 : f32} : tensor<2x3x10x12xf32>, tensor<5x4xf32>, tensor<5xi64> -> tensor<5x3x2x3xf32>
  return %a, %b, %c, %d : tensor<5x3x3x4xf32>, tensor<5x3x3x4xf32>, tensor<5x3x2x3xf32>, tensor<5x3x2x3xf32>
}
