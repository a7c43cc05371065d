func.func @main(%x: tensor<4x5xf32>, %y: tensor<5xf32>, %n: tensor<4x5xi64>) -> (tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xi1>, tensor<4x5xi64>, tensor<4x5xf32>) {
  %a = loom.exp %x : tensor<4x5xf32>
  %b = loom.tanh %a : tensor<4x5xf32>
  %c = loom.sigmoid %b : tensor<4x5xf32>
  %d = loom.gelu %x {approximate = "tanh"} : tensor<4x5xf32>
  %e = loom.silu %d : tensor<4x5xf32>
  %f = loom.erf %e : tensor<4x5xf32>
  %g = loom.sub %f, %y : tensor<4x5xf32>, tensor<5xf32> -> tensor<4x5xf32>
  %h = loom.abs %g : tensor<4x5xf32>
  %i = loom.sqrt %h : tensor<4x5xf32>
  %j = loom.log %i : tensor<4x5xf32>
  %k = loom.pow %h, %y : tensor<4x5xf32>, tensor<5xf32> -> tensor<4x5xf32>
  %l = loom.leaky_relu %x {alpha = 0.2 : f32} : tensor<4x5xf32>
  %m = loom.elu %l : tensor<4x5xf32>
  %o = loom.softplus %m : tensor<4x5xf32>
  %p = loom.hard_sigmoid %o : tensor<4x5xf32>
  %q = loom.max %p, %y : tensor<4x5xf32>, tensor<5xf32> -> tensor<4x5xf32>
  %r = loom.div %q, %c : tensor<4x5xf32>, tensor<4x5xf32> -> tensor<4x5xf32>
  %s = loom.greater %r, %y : tensor<4x5xf32>, tensor<5xf32> -> tensor<4x5xi1>
  %t = loom.not %s : tensor<4x5xi1>
  %u = loom.sin %x : tensor<4x5xf32>
  %v = loom.atan %u : tensor<4x5xf32>
  %w = loom.round %v : tensor<4x5xf32>
  %z = loom.floor %r : tensor<4x5xf32>
  %one = loom.constant dense<1> : tensor<i64>
  %nn = loom.add %n, %one : tensor<4x5xi64>, tensor<i64> -> tensor<4x5xi64>
  %ni = loom.div %n, %nn : tensor<4x5xi64>, tensor<4x5xi64> -> tensor<4x5xi64>
  %sign = loom.sign %x : tensor<4x5xf32>
  %sel = loom.selu %sign : tensor<4x5xf32>
  return %j, %k, %z, %t, %ni, %sel : tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xi1>, tensor<4x5xi64>, tensor<4x5xf32>
}
