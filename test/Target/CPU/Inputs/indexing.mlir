func.func @main(%x: tensor<3x4x5xf32>, %i: tensor<3x2x5xi64>, %n: tensor<6xi64>) -> (tensor<3x2x5xf32>, tensor<6x4x10xf32>, tensor<3x4x5xf32>, tensor<3x4x5xf32>, tensor<3x5xi64>, tensor<3x1x5xi64>, tensor<3x4x5xf32>, tensor<3x4x5xf32>, tensor<6x3xf32>, tensor<3x4x5xf32>) {
  %ge = loom.gather_elements %x, %i {axis = 1 : i64} : tensor<3x4x5xf32>, tensor<3x2x5xi64> -> tensor<3x2x5xf32>
  %reps = loom.constant dense<[2, 1, 2]> : tensor<3xi64>
  %t = loom.tile %x, %reps : (tensor<3x4x5xf32>, tensor<3xi64>) -> tensor<6x4x10xf32>
  %k = loom.constant dense<1> : tensor<i64>
  %up = loom.trilu %x, %k : (tensor<3x4x5xf32>, tensor<i64>) -> tensor<3x4x5xf32>
  %lo = loom.trilu %x {upper = false} : (tensor<3x4x5xf32>) -> tensor<3x4x5xf32>
  %am = loom.argmax %x {axis = 1 : i64, keepdims = false} : tensor<3x4x5xf32> -> tensor<3x5xi64>
  %rounded = loom.round %x : tensor<3x4x5xf32>
  %an = loom.argmin %rounded {axis = 1 : i64, select_last_index = true} : tensor<3x4x5xf32> -> tensor<3x1x5xi64>
  %cs = loom.cumsum %x {axis = 1 : i64} : tensor<3x4x5xf32>
  %cr = loom.cumsum %x {axis = 2 : i64, exclusive = true, reverse = true} : tensor<3x4x5xf32>
  %cp = loom.cumprod %x {axis = 1 : i64, exclusive = true} : tensor<3x4x5xf32>
  %depth = loom.constant dense<3> : tensor<i64>
  %vals = loom.constant dense<[-1.0, 2.0]> : tensor<2xf32>
  %oh = loom.one_hot %n, %depth, %vals {axis = 1 : i64} : tensor<6xi64>, tensor<i64>, tensor<2xf32> -> tensor<6x3xf32>
  return %ge, %t, %up, %lo, %am, %an, %cs, %cr, %oh, %cp : tensor<3x2x5xf32>, tensor<6x4x10xf32>, tensor<3x4x5xf32>, tensor<3x4x5xf32>, tensor<3x5xi64>, tensor<3x1x5xi64>, tensor<3x4x5xf32>, tensor<3x4x5xf32>, tensor<6x3xf32>, tensor<3x4x5xf32>
}
