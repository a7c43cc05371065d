func.func @main(%x: tensor<3x4x6xf32>, %i: tensor<2x5xi64>, %y: tensor<4x4xf32>, %c: tensor<3x1x6xi1>, %n: tensor<4x6xi32>) -> (tensor<3x2x5x6xf32>, tensor<3x4x2xf32>, tensor<7x4x6xf32>, tensor<3x4x4xf32>, tensor<6x12xf32>, tensor<3x4x6xf32>, tensor<4xi32>, tensor<3x4x6xi64>, tensor<3x4x6xf32>, tensor<4x6xi32>) {
  %g = loom.gather %x, %i {axis = 1 : i64} : tensor<3x4x6xf32>, tensor<2x5xi64> -> tensor<3x2x5x6xf32>
  %starts = loom.constant dense<[-5]> : tensor<1xi64>
  %ends = loom.constant dense<[6]> : tensor<1xi64>
  %axes = loom.constant dense<[2]> : tensor<1xi64>
  %steps = loom.constant dense<[3]> : tensor<1xi64>
  %s = loom.slice %x, %starts, %ends, %axes, %steps : (tensor<3x4x6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3x4x2xf32>
  %s2, %s3 = loom.split %x {axis = 0 : i64, sizes = array<i64: 1, 2>} : tensor<3x4x6xf32> -> tensor<1x4x6xf32>, tensor<2x4x6xf32>
  %cat = loom.concat %x, %x, %s2 {axis = 0 : i64} : (tensor<3x4x6xf32>, tensor<3x4x6xf32>, tensor<1x4x6xf32>) -> tensor<7x4x6xf32>
  %t = loom.transpose %x {perm = array<i64: 0, 2, 1>} : tensor<3x4x6xf32> -> tensor<3x6x4xf32>
  %mm = loom.matmul %t, %y : tensor<3x6x4xf32>, tensor<4x4xf32> -> tensor<3x6x4xf32>
  %bt = loom.transpose %mm {perm = array<i64: 0, 2, 1>} : tensor<3x6x4xf32> -> tensor<3x4x6xf32>
  %bmm = loom.matmul %x, %t : tensor<3x4x6xf32>, tensor<3x6x4xf32> -> tensor<3x4x4xf32>
  %pads = loom.constant dense<[0, 1, 0, 2, 0, 0]> : tensor<6xi64>
  %pv = loom.constant dense<1.5> : tensor<f32>
  %p = loom.pad %s3, %pads, %pv : (tensor<2x4x6xf32>, tensor<6xi64>, tensor<f32>) -> tensor<4x5x6xf32>
  %starts0 = loom.constant dense<[1]> : tensor<1xi64>
  %ends0 = loom.constant dense<[4]> : tensor<1xi64>
  %axes0 = loom.constant dense<[0]> : tensor<1xi64>
  %pr = loom.slice %p, %starts0, %ends0, %axes0 : (tensor<4x5x6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3x5x6xf32>
  %pr2 = loom.slice %pr, %starts0, %ends0, %starts0 : (tensor<3x5x6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3x3x6xf32>
  %shape = loom.constant dense<[6, 9]> : tensor<2xi64>
  %r = loom.reshape %pr2, %shape : (tensor<3x3x6xf32>, tensor<2xi64>) -> tensor<6x9xf32>
  %shape2 = loom.constant dense<[14, 12]> : tensor<2xi64>
  %r2 = loom.reshape %cat, %shape2 : (tensor<7x4x6xf32>, tensor<2xi64>) -> tensor<14x12xf32>
  %eshape = loom.constant dense<[2, 1, 1, 1]> : tensor<4xi64>
  %e = loom.expand %x, %eshape : (tensor<3x4x6xf32>, tensor<4xi64>) -> tensor<2x3x4x6xf32>
  %w = loom.where %c, %x, %bt : tensor<3x1x6xi1>, tensor<3x4x6xf32>, tensor<3x4x6xf32> -> tensor<3x4x6xf32>
  %red = loom.reduce_sum %x {axes = array<i64: 1>, keepdims = false} : tensor<3x4x6xf32> -> tensor<3x6xf32>
  %rmax = loom.reduce_max %n {axes = array<i64: 1>, keepdims = false} : tensor<4x6xi32> -> tensor<4xi32>
  %ci = loom.cast %x : tensor<3x4x6xf32> to tensor<3x4x6xi64>
  %prod = loom.reduce_prod %x {axes = array<i64: 0>, keepdims = true} : tensor<3x4x6xf32> -> tensor<1x4x6xf32>
  %pb = loom.add %x, %prod : tensor<3x4x6xf32>, tensor<1x4x6xf32> -> tensor<3x4x6xf32>
  %three = loom.constant dense<-3> : tensor<i32>
  %mod = loom.mod %n, %three : tensor<4x6xi32>, tensor<i32> -> tensor<4x6xi32>
  %rs = loom.slice %r2, %starts0, %ends0, %axes0 : (tensor<14x12xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3x12xf32>
  %rsum = loom.reduce_mean %rs {axes = array<i64>, keepdims = true} : tensor<3x12xf32> -> tensor<1x1xf32>
  %rr = loom.add %r, %rsum : tensor<6x9xf32>, tensor<1x1xf32> -> tensor<6x9xf32>
  %rshape = loom.constant dense<[6, 12]> : tensor<2xi64>
  %fin = loom.concat %rr, %rr {axis = 1 : i64} : (tensor<6x9xf32>, tensor<6x9xf32>) -> tensor<6x18xf32>
  %st = loom.constant dense<[0]> : tensor<1xi64>
  %en = loom.constant dense<[12]> : tensor<1xi64>
  %ax = loom.constant dense<[1]> : tensor<1xi64>
  %fin2 = loom.slice %fin, %st, %en, %ax : (tensor<6x18xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<6x12xf32>
  return %g, %s, %cat, %bmm, %fin2, %w, %rmax, %ci, %pb, %mod : tensor<3x2x5x6xf32>, tensor<3x4x2xf32>, tensor<7x4x6xf32>, tensor<3x4x4xf32>, tensor<6x12xf32>, tensor<3x4x6xf32>, tensor<4xi32>, tensor<3x4x6xi64>, tensor<3x4x6xf32>, tensor<4x6xi32>
}
