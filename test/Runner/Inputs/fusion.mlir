// A function with loom.fusion ops, for fusion.test.
func.func @main() -> (tensor<4xf32>, tensor<4xf32>, tensor<1xf32>) {
  %x = loom.constant dense<[0.0, 1.0, 2.0, 3.0]> : tensor<4xf32>
  %c = loom.constant dense<3.0> : tensor<f32>
  // Two results: the intermediate sum and the scaled value.
  %0:2 = loom.fusion "elementwise" ins(%x, %c : tensor<4xf32>, tensor<f32>) -> tensor<4xf32>, tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %s: tensor<f32>):
    %1 = loom.add %a, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    %2 = loom.mul %1, %s : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
    loom.yield %1, %2 : tensor<4xf32>, tensor<4xf32>
  }
  // A reduction with a prologue and a constant of its own.
  %3 = loom.fusion "reduction" ins(%0#1 : tensor<4xf32>) -> tensor<1xf32> {
  ^bb0(%a: tensor<4xf32>):
    %one = loom.constant dense<1.0> : tensor<f32>
    %4 = loom.add %a, %one : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
    %5 = loom.reduce_sum %4 {axes = array<i64: 0>} : tensor<4xf32> -> tensor<1xf32>
    loom.yield %5 : tensor<1xf32>
  }
  return %0#0, %0#1, %3 : tensor<4xf32>, tensor<4xf32>, tensor<1xf32>
}
