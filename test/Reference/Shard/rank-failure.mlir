// When one rank fails, the ranks waiting for it in a collective report the
// error at once instead of waiting (the timeout here is a minute): rank 0
// divides by its rank number.
// RUN: not timeout 30 loom-run %s --ranks 4 --rank-timeout-ms 60000 2>&1 | FileCheck %s

shard.grid @grid(shape = 4)

func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %idx = shard.process_linear_index on @grid : index
  %one = arith.constant 1 : index
  %q = arith.divsi %one, %idx : index
  %r = shard.all_reduce %x on @grid grid_axes = [0]
    : tensor<2xf32> -> tensor<2xf32>
  return %r : tensor<2xf32>
}

// The failing rank comes first, then the ranks it aborted, in rank order.
// CHECK:      rank-failure.mlir":11:8): error: rank 0: division by zero
// CHECK-NEXT: rank-failure.mlir":12:8): error: rank 1: 'shard.all_reduce' aborted: rank 0 failed: division by zero
// CHECK-NEXT: rank-failure.mlir":12:8): error: rank 2: 'shard.all_reduce' aborted: rank 0 failed: division by zero
// CHECK-NEXT: rank-failure.mlir":12:8): error: rank 3: 'shard.all_reduce' aborted: rank 0 failed: division by zero
// CHECK-NOT: output
