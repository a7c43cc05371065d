// RUN: loom-opt %s --split-input-file --verify-diagnostics --convert-loom-to-linalg

// Sizes known only at run time lower in the ops that produce them and in
// the ops that carry them on; any other op is named, with where its size
// came from.
func.func @run_time_size(%x: tensor<3x4xf32>) -> tensor<?x2xi64> {
  %i = loom.non_zero %x : tensor<3x4xf32> -> tensor<2x?xi64>
  // expected-error @+1 {{'loom.transpose' op has a size known only at run time ('tensor<2x?xi64>', from loom.non_zero); the CPU target supports run-time sizes in elementwise ops, gather indices, squeeze/unsqueeze and the ops that produce them (range, non_zero, constant_of_shape, non_max_suppression)}}
  %t = loom.transpose %i {perm = array<i64: 1, 0>} : tensor<2x?xi64> -> tensor<?x2xi64>
  return %t : tensor<?x2xi64>
}

// -----

func.func @dynamic_input(%x: tensor<?x8xf32>) -> tensor<8x?xf32> {
  // expected-error @+1 {{'loom.transpose' op has a size known only at run time ('tensor<?x8xf32>', from an input of the function)}}
  %y = loom.transpose %x {perm = array<i64: 1, 0>} : tensor<?x8xf32> -> tensor<8x?xf32>
  return %y : tensor<8x?xf32>
}

// -----

// Gather takes run-time sizes in its indices only.
func.func @gather_dynamic_data(%x: tensor<?x8xf32>, %i: tensor<2xi64>) -> tensor<?x2xf32> {
  // expected-error @+1 {{'loom.gather' op has a size known only at run time}}
  %y = loom.gather %x, %i {axis = 1 : i64} : tensor<?x8xf32>, tensor<2xi64> -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
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
