// all_reduce of a rank-dependent value with every reduction kind, on 2 and
// 4 ranks; the accumulation type is the result's.
// RUN: loom-run %s --ranks 2 | FileCheck %s --check-prefix=TWO
// RUN: loom-run %s --ranks 4 | FileCheck %s --check-prefix=FOUR

shard.grid @grid(shape = ?)

func.func @main() -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>,
                      tensor<2xf32>, tensor<2xf32>, tensor<i64>, tensor<f64>,
                      tensor<i64>) {
  // x = [1, 10] + rank.
  %idx = shard.process_linear_index on @grid : index
  %i = arith.index_cast %idx : index to i64
  %ti = tensor.from_elements %i : tensor<i64>
  %tf = loom.cast %ti : tensor<i64> to tensor<f32>
  %c = loom.constant dense<[1.0, 10.0]> : tensor<2xf32>
  %x = loom.add %c, %tf : tensor<2xf32>, tensor<f32> -> tensor<2xf32>
  %sum = shard.all_reduce %x on @grid grid_axes = [0]
    : tensor<2xf32> -> tensor<2xf32>
  %max = shard.all_reduce %x on @grid grid_axes = [0] reduction = max
    : tensor<2xf32> -> tensor<2xf32>
  %min = shard.all_reduce %x on @grid grid_axes = [0] reduction = min
    : tensor<2xf32> -> tensor<2xf32>
  %prod = shard.all_reduce %x on @grid grid_axes = [0] reduction = product
    : tensor<2xf32> -> tensor<2xf32>
  %avg = shard.all_reduce %x on @grid grid_axes = [0] reduction = average
    : tensor<2xf32> -> tensor<2xf32>
  // Integer averages truncate; an f64 result accumulates the i64 inputs.
  %iavg = shard.all_reduce %ti on @grid grid_axes = [0] reduction = average
    : tensor<i64> -> tensor<i64>
  %favg = shard.all_reduce %ti on @grid grid_axes = [0] reduction = average
    : tensor<i64> -> tensor<f64>
  %xor = shard.all_reduce %ti on @grid grid_axes = [0] reduction = bitwise_xor
    : tensor<i64> -> tensor<i64>
  return %sum, %max, %min, %prod, %avg, %iavg, %favg, %xor
    : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>,
      tensor<2xf32>, tensor<i64>, tensor<f64>, tensor<i64>
}

// TWO:      rank 0 output 0: f32[2] [3, 21]
// TWO-NEXT: rank 0 output 1: f32[2] [2, 11]
// TWO-NEXT: rank 0 output 2: f32[2] [1, 10]
// TWO-NEXT: rank 0 output 3: f32[2] [2, 110]
// TWO-NEXT: rank 0 output 4: f32[2] [1.5, 10.5]
// TWO-NEXT: rank 0 output 5: i64[] [0]
// TWO-NEXT: rank 0 output 6: f64[] [0.5]
// TWO-NEXT: rank 0 output 7: i64[] [1]
// TWO:      rank 1 output 0: f32[2] [3, 21]
// TWO:      rank 1 output 7: i64[] [1]

// FOUR:      rank 0 output 0: f32[2] [10, 46]
// FOUR-NEXT: rank 0 output 1: f32[2] [4, 13]
// FOUR-NEXT: rank 0 output 2: f32[2] [1, 10]
// FOUR-NEXT: rank 0 output 3: f32[2] [24, 17160]
// FOUR-NEXT: rank 0 output 4: f32[2] [2.5, 11.5]
// FOUR-NEXT: rank 0 output 5: i64[] [1]
// FOUR-NEXT: rank 0 output 6: f64[] [1.5]
// FOUR-NEXT: rank 0 output 7: i64[] [0]
// FOUR:      rank 3 output 0: f32[2] [10, 46]
// FOUR:      rank 3 output 3: f32[2] [24, 17160]
