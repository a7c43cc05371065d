// Six tokens: ep=3 divides them but not the 4 experts; dp=2 x ep=2 does
// not divide them.
func.func @six_tokens(%x: tensor<6x4xf32>, %p: tensor<6x4xf32>) -> tensor<6x4xf32> {
  %w1 = loom.constant dense<0.1> : tensor<4x4x8xf32>
  %w2 = loom.constant dense<0.2> : tensor<4x8x4xf32>
  %y = loom.moe %x, %p, %w1, %w2 {k = 1 : i64} : (tensor<6x4xf32>, tensor<6x4xf32>, tensor<4x4x8xf32>, tensor<4x8x4xf32>) -> tensor<6x4xf32>
  return %y : tensor<6x4xf32>
}
