// Top-k of axes longer than 32: a stable merge sort per row. Values
// rounded to halves tie often, and equal values must come out in index
// order; an odd length (37) leaves runs of unequal sizes; the axis in the
// middle; k equal to the axis' length.
func.func @main(%x: tensor<2x100xf32>, %n: tensor<3x37x2xi32>, %y: tensor<40xf32>) -> (tensor<2x10xf32>, tensor<2x10xi64>, tensor<3x5x2xi32>, tensor<3x5x2xi64>, tensor<40xf32>, tensor<40xi64>) {
  %two = loom.constant dense<2.0> : tensor<f32>
  %scaled = loom.mul %x, %two : tensor<2x100xf32>, tensor<f32> -> tensor<2x100xf32>
  %halves = loom.floor %scaled : tensor<2x100xf32>
  %k = loom.constant dense<10> : tensor<1xi64>
  %v, %i = loom.topk %halves, %k {axis = -1 : i64} : tensor<2x100xf32>, tensor<1xi64> -> tensor<2x10xf32>, tensor<2x10xi64>
  %k5 = loom.constant dense<5> : tensor<1xi64>
  %sv, %si = loom.topk %n, %k5 {axis = 1 : i64, largest = false} : tensor<3x37x2xi32>, tensor<1xi64> -> tensor<3x5x2xi32>, tensor<3x5x2xi64>
  %k40 = loom.constant dense<40> : tensor<1xi64>
  %av, %ai = loom.topk %y, %k40 {axis = 0 : i64} : tensor<40xf32>, tensor<1xi64> -> tensor<40xf32>, tensor<40xi64>
  return %v, %i, %sv, %si, %av, %ai : tensor<2x10xf32>, tensor<2x10xi64>, tensor<3x5x2xi32>, tensor<3x5x2xi64>, tensor<40xf32>, tensor<40xi64>
}
