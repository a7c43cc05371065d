// roi_align's batch indices, for test/Target/CPU/index-checks.test.
func.func @main(%x: tensor<2x1x4x4xf32>, %rois: tensor<1x4xf32>, %idx: tensor<1xi64>) -> tensor<1x1x2x2xf32> {
  %y = loom.roi_align %x, %rois, %idx {output_height = 2 : i64, output_width = 2 : i64, sampling_ratio = 2 : i64, spatial_scale = 1.0 : f32} : tensor<2x1x4x4xf32>, tensor<1x4xf32>, tensor<1xi64> -> tensor<1x1x2x2xf32>
  return %y : tensor<1x1x2x2xf32>
}
