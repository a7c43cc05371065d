// A message that is sent but never received is an error once every rank
// returned (sends are buffered, so nothing waits for it).
// RUN: not loom-run %s --ranks 2 2>&1 | FileCheck %s

shard.grid @grid(shape = 2)

func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %s = shard.send %x on @grid grid_axes = [0] destination = [1]
    : (tensor<2xf32>) -> tensor<2xf32>
  return %s : tensor<2xf32>
}

// CHECK-DAG: error: 'shard.send' from rank 0 to rank 1 (f32[2]) was never received
// CHECK-DAG: error: 'shard.send' from rank 1 to rank 1 (f32[2]) was never received
// CHECK-NOT: output
