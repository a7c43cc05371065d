// A deadlock ends every rank with an error after the timeout instead of
// hanging: every rank waits for a message from rank 0 that nobody sends.
// The first rank to time out poisons the communicator; the others abort.
// RUN: not timeout 60 loom-run %s --ranks 2 --rank-timeout-ms 200 2>&1 | FileCheck %s

shard.grid @grid(shape = 2)

func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %r = shard.recv %x on @grid grid_axes = [0] source = [0]
    : (tensor<2xf32>) -> tensor<2xf32>
  return %r : tensor<2xf32>
}

// CHECK: error: rank [[R:[01]]]: timed out after 200 ms in 'shard.recv' waiting for rank(s) 0 (deadlock?)
// CHECK: error: rank {{[01]}}: 'shard.recv' aborted: rank [[R]] timed out
// CHECK-NOT: output
