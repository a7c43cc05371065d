// Sizes that only the data decides, in compiled code: a window (range,
// then elementwise ops), an integer range, Compress's spelling (non_zero,
// squeeze, gather) and constant_of_shape added to a tensor. The model
// states every output's shape; the code checks the computed sizes
// against them.
func.func @main(%start: tensor<f32>, %limit: tensor<f32>, %delta: tensor<f32>,
                %n: tensor<i64>, %x: tensor<6x3xf32>, %keep: tensor<6xi1>,
                %shape: tensor<2xi64>, %m: tensor<4x5xf32>)
    -> (tensor<7xf32>, tensor<4xi64>, tensor<4x3xf32>, tensor<4x5xf32>) {
  %r = loom.range %start, %limit, %delta : tensor<f32>, tensor<f32>, tensor<f32> -> tensor<?xf32>
  %half = loom.constant dense<0.5> : tensor<f32>
  %a = loom.mul %r, %half : tensor<?xf32>, tensor<f32> -> tensor<?xf32>
  %c = loom.cos %a : tensor<?xf32>
  %w = loom.sub %half, %c : tensor<f32>, tensor<?xf32> -> tensor<?xf32>
  %window = loom.add %w, %r : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
  %out0 = tensor.cast %window : tensor<?xf32> to tensor<7xf32>

  %zero = loom.constant dense<0> : tensor<i64>
  %two = loom.constant dense<2> : tensor<i64>
  %evens = loom.range %zero, %n, %two : tensor<i64>, tensor<i64>, tensor<i64> -> tensor<4xi64>

  %where = loom.non_zero %keep : tensor<6xi1> -> tensor<1x?xi64>
  %rows = loom.squeeze %where {axes = array<i64: 0>} : tensor<1x?xi64> -> tensor<?xi64>
  %kept = loom.gather %x, %rows : tensor<6x3xf32>, tensor<?xi64> -> tensor<?x3xf32>
  %one = loom.constant dense<1.0> : tensor<f32>
  %shifted = loom.add %kept, %one : tensor<?x3xf32>, tensor<f32> -> tensor<4x3xf32>

  %filled = loom.constant_of_shape %shape {value = 2.5 : f32} : tensor<2xi64> -> tensor<?x?xf32>
  %sum = loom.add %filled, %m : tensor<?x?xf32>, tensor<4x5xf32> -> tensor<4x5xf32>
  return %out0, %evens, %shifted, %sum : tensor<7xf32>, tensor<4xi64>, tensor<4x3xf32>, tensor<4x5xf32>
}
