// RUN: loom-opt %s --split-input-file --verify-diagnostics --convert-loom-to-linalg

// An op without a lowering fails the pass and is named: a range whose
// length is only known at run time, even under a static result type.
func.func @no_lowering(%start: tensor<i64>, %limit: tensor<i64>, %delta: tensor<i64>) -> tensor<4xi64> {
  // expected-error @+1 {{failed to legalize operation 'loom.range'}}
  %y = loom.range %start, %limit, %delta : tensor<i64>, tensor<i64>, tensor<i64> -> tensor<4xi64>
  return %y : tensor<4xi64>
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

// -----

// f8E4M3FN values lower as their bits: ops other than quantization and
// data movement would compute on them as integers, so they are refused.
func.func @fp8_cast(%x: tensor<4xf8E4M3FN>) -> tensor<4xf32> {
  // expected-error @+1 {{'loom.cast' op has elements of type 'f8E4M3FN', which the lowering to linalg supports only in quantization ops and data movement}}
  %y = loom.cast %x : tensor<4xf8E4M3FN> to tensor<4xf32>
  return %y : tensor<4xf32>
}
