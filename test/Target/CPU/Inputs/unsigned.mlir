func.func @main(%a: tensor<3x4xui8>, %b: tensor<4xui8>, %c: tensor<3x4xui32>) -> (tensor<3x4xui8>, tensor<3x4xui8>, tensor<3x4xi1>, tensor<3x4xf32>, tensor<3xui32>, tensor<3xi64>, tensor<3x4xui8>, tensor<3x4xui8>) {
  %one = loom.constant dense<1> : tensor<ui8>
  %b1 = loom.add %b, %one : tensor<4xui8>, tensor<ui8> -> tensor<4xui8>
  %big = loom.constant dense<250> : tensor<ui8>
  %a2 = loom.add %a, %big : tensor<3x4xui8>, tensor<ui8> -> tensor<3x4xui8>
  %d = loom.div %a2, %b1 : tensor<3x4xui8>, tensor<4xui8> -> tensor<3x4xui8>
  %m = loom.mod %a2, %b1 : tensor<3x4xui8>, tensor<4xui8> -> tensor<3x4xui8>
  %l = loom.less %a2, %a : tensor<3x4xui8>, tensor<3x4xui8> -> tensor<3x4xi1>
  %f = loom.cast %a2 : tensor<3x4xui8> to tensor<3x4xf32>
  %r = loom.reduce_max %c {axes = array<i64: 1>, keepdims = false} : tensor<3x4xui32> -> tensor<3xui32>
  %am = loom.argmax %a2 {axis = 1 : i64, keepdims = false} : tensor<3x4xui8> -> tensor<3xi64>
  %s = loom.bit_shift %a2, %b {direction = "RIGHT"} : tensor<3x4xui8>, tensor<4xui8> -> tensor<3x4xui8>
  %mx = loom.max %a2, %b : tensor<3x4xui8>, tensor<4xui8> -> tensor<3x4xui8>
  return %d, %m, %l, %f, %r, %am, %s, %mx : tensor<3x4xui8>, tensor<3x4xui8>, tensor<3x4xi1>, tensor<3x4xf32>, tensor<3xui32>, tensor<3xi64>, tensor<3x4xui8>, tensor<3x4xui8>
}
