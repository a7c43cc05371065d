// Inputs for loom-partition.mlir's odd cases: a dynamic batch, a non-tensor
// argument, an external declaration, a 0-d tensor.
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
