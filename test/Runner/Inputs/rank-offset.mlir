// y = x + rank, and its sum over the ranks: rank-dependent outputs for
// loom-run --ranks.
shard.grid @grid(shape = ?)

func.func @main(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %idx = shard.process_linear_index on @grid : index
  %i = arith.index_cast %idx : index to i64
  %ti = tensor.from_elements %i : tensor<i64>
  %tf = loom.cast %ti : tensor<i64> to tensor<f32>
  %y = loom.add %x, %tf : tensor<3xf32>, tensor<f32> -> tensor<3xf32>
  %s = shard.all_reduce %y on @grid grid_axes = [0]
    : tensor<3xf32> -> tensor<3xf32>
  return %y, %s : tensor<3xf32>, tensor<3xf32>
}
