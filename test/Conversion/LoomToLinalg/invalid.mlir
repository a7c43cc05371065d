// RUN: loom-opt %s --split-input-file --verify-diagnostics --convert-loom-to-linalg

// Sizes known only at run time lower in the ops that produce them and in
// the ops that carry them on; any other op is named, with where its size
// came from.
func.func @run_time_size(%x: tensor<3x4xf32>, %p: tensor<4xi64>) -> tensor<4x?xi64> {
  %i = loom.non_zero %x : tensor<3x4xf32> -> tensor<2x?xi64>
  // expected-error @+1 {{'loom.pad' op has a size known only at run time ('tensor<2x?xi64>', from loom.non_zero); the CPU target supports run-time sizes in elementwise, shape and data-movement ops (reshape, transpose, expand, tile, concat, split, slice, gather), matrix products, attention, normalizations, softmax, reductions, cumsum, top-k, and convolutions and pooling in the batch only (bind the others with --input-shape)}}
  %t = loom.pad %i, %p {mode = "edge"} : (tensor<2x?xi64>, tensor<4xi64>) -> tensor<4x?xi64>
  return %t : tensor<4x?xi64>
}

// -----

func.func @dynamic_input(%x: tensor<?x8xf32>, %p: tensor<4xi64>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'loom.pad' op has a size known only at run time ('tensor<?x8xf32>', from an input of the function)}}
  %y = loom.pad %x, %p {mode = "edge"} : (tensor<?x8xf32>, tensor<4xi64>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

func.func @complex(%x: tensor<2x3xcomplex<f32>>) -> tensor<3x2xcomplex<f32>> {
  // expected-error @+1 {{'loom.transpose' op has elements of type 'complex<f32>', which the lowering to linalg does not support yet}}
  %y = loom.transpose %x {perm = array<i64: 1, 0>} : tensor<2x3xcomplex<f32>> -> tensor<3x2xcomplex<f32>>
  return %y : tensor<3x2xcomplex<f32>>
}

// -----

// The 8- and 4-bit floats lower as their bits: ops other than
// quantization, casts and data movement would compute on them as integers,
// so they are refused.
func.func @fp8_where(%c: tensor<4xi1>, %x: tensor<4xf8E5M2>) -> tensor<4xf8E5M2> {
  // expected-error @+1 {{'loom.where' op has elements of type 'f8E5M2', which the lowering to linalg supports only in quantization ops, casts and data movement}}
  %y = loom.where %c, %x, %x : tensor<4xi1>, tensor<4xf8E5M2>, tensor<4xf8E5M2> -> tensor<4xf8E5M2>
  return %y : tensor<4xf8E5M2>
}

// -----

// top-k's k sets its results' sizes: known only at run time, it is named.
func.func @run_time_k(%x: tensor<3x8xf32>, %k: tensor<1xi64>) -> (tensor<3x?xf32>, tensor<3x?xi64>) {
  // expected-error @+1 {{'loom.topk' op takes k known only at run time ('tensor<3x?xf32>'), which the CPU target does not support yet: k must be a constant}}
  %v, %i = loom.topk %x, %k {axis = -1 : i64} : tensor<3x8xf32>, tensor<1xi64> -> tensor<3x?xf32>, tensor<3x?xi64>
  return %v, %i : tensor<3x?xf32>, tensor<3x?xi64>
}
