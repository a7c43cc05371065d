func.func @main(%x: tensor<2x3x4x5xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>, %g: tensor<4x5xf32>) -> (tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>) {
  %var = loom.abs %v : tensor<3xf32>
  %bn = loom.batch_norm %x, %s, %b, %m, %var {epsilon = 1.0e-03 : f32} : tensor<2x3x4x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32> -> tensor<2x3x4x5xf32>
  %in = loom.instance_norm %x, %s, %b {epsilon = 1.0e-05 : f32} : tensor<2x3x4x5xf32>, tensor<3xf32>, tensor<3xf32> -> tensor<2x3x4x5xf32>
  %ln = loom.layer_norm %x, %g {axis = 2 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x3x4x5xf32>, tensor<4x5xf32>) -> tensor<2x3x4x5xf32>
  %rms = loom.rms_norm %x, %g {axis = -2 : i64, epsilon = 1.0e-06 : f32} : tensor<2x3x4x5xf32>, tensor<4x5xf32> -> tensor<2x3x4x5xf32>
  %sm = loom.softmax %x {axis = 1 : i64} : tensor<2x3x4x5xf32>
  %lsm = loom.log_softmax %x {axis = -1 : i64} : tensor<2x3x4x5xf32>
  return %bn, %in, %ln, %rms, %sm, %lsm : tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>
}
