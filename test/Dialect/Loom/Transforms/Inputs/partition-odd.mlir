// Inputs for loom-partition.mlir's odd cases: a dynamic batch, a non-tensor
// argument, an external declaration, a 0-d tensor, unused results.
func.func @dynamic(%a: tensor<?x4xf32>, %i: i64) -> tensor<?x4xf32> {
  %r = loom.relu %a : tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}
func.func private @external(tensor<2xf32>) -> tensor<2xf32>
func.func @scalars(%a: tensor<f32>, %b: tensor<4x6xf32>) -> (tensor<f32>, tensor<4x6xf32>) {
  %r = loom.neg %a : tensor<f32>
  %s = loom.softmax %b {axis = 1 : i64} : tensor<4x6xf32>
  return %r, %s : tensor<f32>, tensor<4x6xf32>
}
func.func @unused_results(%x: tensor<4x6xf32>, %w: tensor<6x6xf32>) -> tensor<4x2xf32> {
  %dead = loom.transpose %w {perm = array<i64: 1, 0>} : tensor<6x6xf32> -> tensor<6x6xf32>
  %a:3 = loom.split %x {axis = 1 : i64, sizes = array<i64: 2, 2, 2>} : tensor<4x6xf32> -> tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>
  return %a#0 : tensor<4x2xf32>
}
