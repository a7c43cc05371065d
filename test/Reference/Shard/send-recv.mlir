// shard.send / shard.recv: a ring where every rank sends to the next one and
// receives from the previous one (sends are buffered, so the ring does not
// deadlock), and a recv without a source, which takes any sender.
// RUN: loom-run %s --ranks 2 | FileCheck %s --check-prefix=TWO
// RUN: loom-run %s --ranks 4 | FileCheck %s --check-prefix=FOUR

shard.grid @grid(shape = ?)

func.func @main() -> (tensor<2xf32>, tensor<2xf32>) {
  %idx = shard.process_linear_index on @grid : index
  %n = shard.grid_shape @grid : index
  %one = arith.constant 1 : index
  %next0 = arith.addi %idx, %one : index
  %next = arith.remui %next0, %n : index
  %prev0 = arith.addi %idx, %n : index
  %prev1 = arith.subi %prev0, %one : index
  %prev = arith.remui %prev1, %n : index
  // x = [1, 2] + 10 * rank.
  %i = arith.index_cast %idx : index to i64
  %ti = tensor.from_elements %i : tensor<i64>
  %tf = loom.cast %ti : tensor<i64> to tensor<f32>
  %ten = loom.constant dense<10.0> : tensor<f32>
  %r10 = loom.mul %tf, %ten : tensor<f32>, tensor<f32> -> tensor<f32>
  %c = loom.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %x = loom.add %c, %r10 : tensor<2xf32>, tensor<f32> -> tensor<2xf32>
  %s = shard.send %x on @grid grid_axes = [0] destination = [%next]
    : (tensor<2xf32>, index) -> tensor<2xf32>
  %r = shard.recv %x on @grid grid_axes = [0] source = [%prev]
    : (tensor<2xf32>, index) -> tensor<2xf32>
  // Everyone sends to itself again and receives from any rank.
  %s2 = shard.send %r on @grid grid_axes = [0] destination = [%idx]
    : (tensor<2xf32>, index) -> tensor<2xf32>
  %any = shard.recv %x on @grid grid_axes = [0]
    : (tensor<2xf32>) -> tensor<2xf32>
  return %r, %any : tensor<2xf32>, tensor<2xf32>
}

// TWO:      rank 0 output 0: f32[2] [11, 12]
// TWO-NEXT: rank 0 output 1: f32[2] [11, 12]
// TWO-NEXT: rank 1 output 0: f32[2] [1, 2]
// TWO-NEXT: rank 1 output 1: f32[2] [1, 2]

// FOUR:      rank 0 output 0: f32[2] [31, 32]
// FOUR:      rank 1 output 0: f32[2] [1, 2]
// FOUR:      rank 2 output 0: f32[2] [11, 12]
// FOUR:      rank 3 output 0: f32[2] [21, 22]
// FOUR-NEXT: rank 3 output 1: f32[2] [21, 22]
