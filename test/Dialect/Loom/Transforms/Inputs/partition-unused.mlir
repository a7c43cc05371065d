// An unused argument, for loom-partition.mlir.
func.func @unused(%a: tensor<4x2xf32>, %b: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %r = loom.relu %b : tensor<4x2xf32>
  return %r : tensor<4x2xf32>
}
