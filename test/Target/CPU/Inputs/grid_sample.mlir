func.func @main(%x: tensor<2x3x5x6xf32>, %g: tensor<2x4x7x2xf32>, %v: tensor<2x2x3x4x5xf32>, %vg: tensor<2x3x2x4x3xf32>) -> (tensor<2x3x4x7xf32>, tensor<2x3x4x7xf32>, tensor<2x3x4x7xf32>, tensor<2x3x4x7xf32>, tensor<2x2x3x2x4xf32>, tensor<2x2x3x2x4xf32>, tensor<2x2x3x2x4xf32>) {
  %s = loom.constant dense<1.6> : tensor<f32>
  %grid = loom.mul %g, %s : tensor<2x4x7x2xf32>, tensor<f32> -> tensor<2x4x7x2xf32>
  %a = loom.grid_sample %x, %grid : tensor<2x3x5x6xf32>, tensor<2x4x7x2xf32> -> tensor<2x3x4x7xf32>
  %b = loom.grid_sample %x, %grid {mode = "nearest", padding_mode = "reflection"} : tensor<2x3x5x6xf32>, tensor<2x4x7x2xf32> -> tensor<2x3x4x7xf32>
  %c = loom.grid_sample %x, %grid {mode = "bicubic", padding_mode = "border", align_corners = true} : tensor<2x3x5x6xf32>, tensor<2x4x7x2xf32> -> tensor<2x3x4x7xf32>
  %d = loom.grid_sample %x, %grid {mode = "bilinear", padding_mode = "reflection", align_corners = true} : tensor<2x3x5x6xf32>, tensor<2x4x7x2xf32> -> tensor<2x3x4x7xf32>
  // Volumes [N, C, D, H, W] at (x, y, z) positions: trilinear and nearest,
  // the grid reaching outside the volume.
  %vgrid = loom.mul %vg, %s : tensor<2x3x2x4x3xf32>, tensor<f32> -> tensor<2x3x2x4x3xf32>
  %e = loom.grid_sample %v, %vgrid : tensor<2x2x3x4x5xf32>, tensor<2x3x2x4x3xf32> -> tensor<2x2x3x2x4xf32>
  %f = loom.grid_sample %v, %vgrid {mode = "nearest", padding_mode = "border", align_corners = true} : tensor<2x2x3x4x5xf32>, tensor<2x3x2x4x3xf32> -> tensor<2x2x3x2x4xf32>
  %h = loom.grid_sample %v, %vgrid {padding_mode = "reflection"} : tensor<2x2x3x4x5xf32>, tensor<2x3x2x4x3xf32> -> tensor<2x2x3x2x4xf32>
  return %a, %b, %c, %d, %e, %f, %h : tensor<2x3x4x7xf32>, tensor<2x3x4x7xf32>, tensor<2x3x4x7xf32>, tensor<2x3x4x7xf32>, tensor<2x2x3x2x4xf32>, tensor<2x2x3x2x4xf32>, tensor<2x2x3x2x4xf32>
}
