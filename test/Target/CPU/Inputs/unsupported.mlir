func.func @main(%x: tensor<1x4x8x8xf32>, %rois: tensor<3x4xf32>, %idx: tensor<3xi64>) -> tensor<3x4x2x2xf32> {
  %y = loom.roi_align %x, %rois, %idx {output_height = 2 : i64, output_width = 2 : i64, sampling_ratio = 2 : i64, spatial_scale = 1.0 : f32} : tensor<1x4x8x8xf32>, tensor<3x4xf32>, tensor<3xi64> -> tensor<3x4x2x2xf32>
  return %y : tensor<3x4x2x2xf32>
}
