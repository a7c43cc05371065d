// An all-to-all that splits along axis 1: not what engines compile yet.
shard.grid @grid(shape = 2)
func.func @main(%x: tensor<4x4xf32>) -> tensor<8x2xf32> {
  %y = shard.all_to_all %x on @grid grid_axes = [0] split_axis = 1 concat_axis = 0 : tensor<4x4xf32> -> tensor<8x2xf32>
  return %y : tensor<8x2xf32>
}
