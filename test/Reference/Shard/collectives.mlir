// The data-moving collectives on 2 ranks, each rank holding
// x = [1, 2] + 10 * rank (rank 0: [1, 2], rank 1: [11, 12]).
// Undefined results (gather and reduce off the root, shift without rotate
// off the end) are zeros.
// RUN: loom-run %s --ranks 2 | FileCheck %s

shard.grid @grid(shape = 2)

func.func @main() -> (tensor<4xf32>, tensor<1xf32>, tensor<2xf32>,
                      tensor<2xf32>, tensor<1xf32>, tensor<4xf32>,
                      tensor<2xf32>, tensor<1xf32>, tensor<2xf32>,
                      tensor<2xf32>) {
  %idx = shard.process_linear_index on @grid : index
  %i = arith.index_cast %idx : index to i64
  %ti = tensor.from_elements %i : tensor<i64>
  %tf = loom.cast %ti : tensor<i64> to tensor<f32>
  %ten = loom.constant dense<10.0> : tensor<f32>
  %r10 = loom.mul %tf, %ten : tensor<f32>, tensor<f32> -> tensor<f32>
  %c = loom.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %x = loom.add %c, %r10 : tensor<2xf32>, tensor<f32> -> tensor<2xf32>

  %gathered = shard.all_gather %x on @grid grid_axes = [0] gather_axis = 0
    : tensor<2xf32> -> tensor<4xf32>
  %scattered = shard.reduce_scatter %x on @grid grid_axes = [0] scatter_axis = 0
    : tensor<2xf32> -> tensor<1xf32>
  %a2a = shard.all_to_all %x on @grid grid_axes = [0]
    split_axis = 0 concat_axis = 0 : tensor<2xf32> -> tensor<2xf32>
  %bcast = shard.broadcast %x on @grid grid_axes = [0] root = [1]
    : (tensor<2xf32>) -> tensor<2xf32>
  %sliced = shard.all_slice %x on @grid grid_axes = [0] slice_axis = 0
    : tensor<2xf32> -> tensor<1xf32>
  %gather = shard.gather %x on @grid grid_axes = [0] gather_axis = 0 root = [0]
    : (tensor<2xf32>) -> tensor<4xf32>
  %reduce = shard.reduce %x on @grid grid_axes = [0] root = [1]
    : (tensor<2xf32>) -> tensor<2xf32>
  %scatter = shard.scatter %x on @grid grid_axes = [0] scatter_axis = 0
    root = [1] : (tensor<2xf32>) -> tensor<1xf32>
  %rot = shard.shift %x on @grid grid_axes = [0] shift_axis = 0 offset = 1
    rotate : tensor<2xf32> -> tensor<2xf32>
  %shift = shard.shift %x on @grid grid_axes = [0] shift_axis = 0 offset = 1
    : tensor<2xf32> -> tensor<2xf32>
  return %gathered, %scattered, %a2a, %bcast, %sliced, %gather, %reduce,
    %scatter, %rot, %shift
    : tensor<4xf32>, tensor<1xf32>, tensor<2xf32>, tensor<2xf32>,
      tensor<1xf32>, tensor<4xf32>, tensor<2xf32>, tensor<1xf32>,
      tensor<2xf32>, tensor<2xf32>
}

// CHECK:      rank 0 output 0: f32[4] [1, 2, 11, 12]
// CHECK-NEXT: rank 0 output 1: f32[1] [12]
// CHECK-NEXT: rank 0 output 2: f32[2] [1, 11]
// CHECK-NEXT: rank 0 output 3: f32[2] [11, 12]
// CHECK-NEXT: rank 0 output 4: f32[1] [1]
// CHECK-NEXT: rank 0 output 5: f32[4] [1, 2, 11, 12]
// CHECK-NEXT: rank 0 output 6: f32[2] [0, 0]
// CHECK-NEXT: rank 0 output 7: f32[1] [11]
// CHECK-NEXT: rank 0 output 8: f32[2] [11, 12]
// CHECK-NEXT: rank 0 output 9: f32[2] [0, 0]
// CHECK-NEXT: rank 1 output 0: f32[4] [1, 2, 11, 12]
// CHECK-NEXT: rank 1 output 1: f32[1] [14]
// CHECK-NEXT: rank 1 output 2: f32[2] [2, 12]
// CHECK-NEXT: rank 1 output 3: f32[2] [11, 12]
// CHECK-NEXT: rank 1 output 4: f32[1] [12]
// CHECK-NEXT: rank 1 output 5: f32[4] [0, 0, 0, 0]
// CHECK-NEXT: rank 1 output 6: f32[2] [12, 14]
// CHECK-NEXT: rank 1 output 7: f32[1] [12]
// CHECK-NEXT: rank 1 output 8: f32[2] [1, 2]
// CHECK-NEXT: rank 1 output 9: f32[2] [1, 2]
