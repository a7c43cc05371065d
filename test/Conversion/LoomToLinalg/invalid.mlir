// RUN: loom-opt %s --split-input-file --verify-diagnostics --convert-loom-to-linalg

// An op without a lowering fails the pass and is named.
func.func @no_lowering(%x: tensor<1x3x8x8xf32>, %grid: tensor<1x4x4x2xf32>) -> tensor<1x3x4x4xf32> {
  // expected-error @+1 {{failed to legalize operation 'loom.grid_sample'}}
  %y = loom.grid_sample %x, %grid {mode = "bilinear", padding_mode = "border", align_corners = true} : tensor<1x3x8x8xf32>, tensor<1x4x4x2xf32> -> tensor<1x3x4x4xf32>
  return %y : tensor<1x3x4x4xf32>
}

// -----

func.func @dynamic(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'loom.exp' op has a dynamic shape ('tensor<?x8xf32>'); lowering to linalg needs static shapes}}
  %y = loom.exp %x : tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

func.func @complex(%x: tensor<2x3xcomplex<f32>>) -> tensor<3x2xcomplex<f32>> {
  // expected-error @+1 {{'loom.transpose' op has elements of type 'complex<f32>', which the lowering to linalg does not support yet}}
  %y = loom.transpose %x {perm = array<i64: 1, 0>} : tensor<2x3xcomplex<f32>> -> tensor<3x2xcomplex<f32>>
  return %y : tensor<3x2xcomplex<f32>>
}
