// Collectives over axes of a 2x2 grid on 4 ranks (rank = 2 * row + column):
// groups are the ranks that agree off `grid_axes`, ordered row-major over
// `grid_axes` in the order listed.
// RUN: loom-run %s --ranks 4 | FileCheck %s
// A grid that does not hold the ranks is an error.
// RUN: not loom-run %s --ranks 2 2>&1 | FileCheck %s --check-prefix=SIZE
// SIZE: error: rank 0: grid @grid of shape 2x2 does not fit 2 rank(s)

shard.grid @grid(shape = 2x2)

func.func @main() -> (tensor<2xf32>, tensor<2xf32>, tensor<4xf32>,
                      tensor<4xi64>, tensor<2xi64>) {
  %idx = shard.process_linear_index on @grid : index
  %i = arith.index_cast %idx : index to i64
  %ti = tensor.from_elements %i : tensor<1xi64>
  %x = loom.cast %ti : tensor<1xi64> to tensor<1xf32>
  // Along the columns (axis 1) and the rows (axis 0).
  %cols = shard.all_gather %x on @grid grid_axes = [1] gather_axis = 0
    : tensor<1xf32> -> tensor<2xf32>
  %rows = shard.all_gather %x on @grid grid_axes = [0] gather_axis = 0
    : tensor<1xf32> -> tensor<2xf32>
  // Axes [1, 0]: in-group index = 2 * column + row.
  %all = shard.all_gather %x on @grid grid_axes = [1, 0] gather_axis = 0
    : tensor<1xf32> -> tensor<4xf32>
  // Coordinates and grid shape.
  %r, %c = shard.process_multi_index on @grid : index, index
  %s0, %s1 = shard.grid_shape @grid : index, index
  %info = tensor.from_elements %r, %c, %s0, %s1 : tensor<4xindex>
  %info64 = arith.index_cast %info : tensor<4xindex> to tensor<4xi64>
  // Neighbours along axis 1 of this rank (-1: none).
  %down, %up = shard.neighbors_linear_indices on @grid[%r, %c]
    split_axes = [1] : index, index
  %nb = tensor.from_elements %down, %up : tensor<2xindex>
  %nb64 = arith.index_cast %nb : tensor<2xindex> to tensor<2xi64>
  return %cols, %rows, %all, %info64, %nb64
    : tensor<2xf32>, tensor<2xf32>, tensor<4xf32>, tensor<4xi64>,
      tensor<2xi64>
}

// CHECK:      rank 0 output 0: f32[2] [0, 1]
// CHECK-NEXT: rank 0 output 1: f32[2] [0, 2]
// CHECK-NEXT: rank 0 output 2: f32[4] [0, 2, 1, 3]
// CHECK-NEXT: rank 0 output 3: i64[4] [0, 0, 2, 2]
// CHECK-NEXT: rank 0 output 4: i64[2] [-1, 1]
// CHECK-NEXT: rank 1 output 0: f32[2] [0, 1]
// CHECK-NEXT: rank 1 output 1: f32[2] [1, 3]
// CHECK-NEXT: rank 1 output 2: f32[4] [0, 2, 1, 3]
// CHECK-NEXT: rank 1 output 3: i64[4] [0, 1, 2, 2]
// CHECK-NEXT: rank 1 output 4: i64[2] [0, -1]
// CHECK-NEXT: rank 2 output 0: f32[2] [2, 3]
// CHECK-NEXT: rank 2 output 1: f32[2] [0, 2]
// CHECK:      rank 2 output 3: i64[4] [1, 0, 2, 2]
// CHECK-NEXT: rank 2 output 4: i64[2] [-1, 3]
// CHECK-NEXT: rank 3 output 0: f32[2] [2, 3]
// CHECK-NEXT: rank 3 output 1: f32[2] [1, 3]
// CHECK-NEXT: rank 3 output 2: f32[4] [0, 2, 1, 3]
// CHECK-NEXT: rank 3 output 3: i64[4] [1, 1, 2, 2]
// CHECK-NEXT: rank 3 output 4: i64[2] [2, -1]
