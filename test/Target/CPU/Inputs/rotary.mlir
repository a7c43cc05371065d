func.func @main(%x: tensor<1x2x4x8xf32>, %c: tensor<4x4xf32>, %s: tensor<4x4xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) {
  %a = loom.rotary_embedding %x, %c, %s : tensor<1x2x4x8xf32>, tensor<4x4xf32>, tensor<4x4xf32> -> tensor<1x2x4x8xf32>
  %b = loom.rotary_embedding %x, %c, %s {interleaved = true} : tensor<1x2x4x8xf32>, tensor<4x4xf32>, tensor<4x4xf32> -> tensor<1x2x4x8xf32>
  return %a, %b : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>
}
