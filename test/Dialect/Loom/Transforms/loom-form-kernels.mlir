// RUN: loom-opt %s -loom-form-kernels -split-input-file | FileCheck %s
// RUN: loom-opt %s -loom-form-kernels=report -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT

// Bias add and GELU run in the matmul's epilogue; the bias constant, defined
// after the matmul, moves up and becomes an operand.
// CHECK-LABEL: func.func @epilogue
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8x16xf32>)
// CHECK: %[[B:.*]] = loom.constant
// CHECK-NEXT: %[[F:.*]] = loom.fusion "epilogue" ins(%[[X]], %[[W]], %[[B]] : {{.*}}) -> tensor<4x16xf32> {
// CHECK-NEXT: ^bb0(%[[A0:.*]]: tensor<4x8xf32>, %[[A1:.*]]: tensor<8x16xf32>, %[[A2:.*]]: tensor<16xf32>):
// CHECK-NEXT: %[[M:.*]] = loom.matmul %[[A0]], %[[A1]]
// CHECK-NEXT: %[[S:.*]] = loom.add %[[M]], %[[A2]]
// CHECK-NEXT: %[[G:.*]] = loom.gelu %[[S]]
// CHECK-NEXT: loom.yield %[[G]] : tensor<4x16xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F]]
// REPORT: @epilogue: 3 ops -> 1 kernels (1 fusions: 0 elementwise, 0 reduction, 1 epilogue; 0 unfused ops)
func.func @epilogue(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %0 = loom.matmul %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %b = loom.constant dense<0.5> : tensor<16xf32>
  %1 = loom.add %0, %b : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  %2 = loom.gelu %1 : tensor<4x16xf32>
  return %2 : tensor<4x16xf32>
}

// -----

// A chain of elementwise and broadcasting ops is one kernel; every value
// used after the chain is a result.
// CHECK-LABEL: func.func @elementwise_chain
// CHECK: %[[F:.*]]:2 = loom.fusion "elementwise" ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>, tensor<4x8xf32> {
// CHECK: loom.exp
// CHECK-NEXT: loom.add
// CHECK-NEXT: loom.tanh
// CHECK-NEXT: %[[C:.*]] = loom.cast
// CHECK-NEXT: %[[K:.*]] = loom.greater
// CHECK-NEXT: %[[R:.*]] = loom.where %[[K]], %[[C]]
// CHECK-NEXT: loom.yield %[[K]], %[[R]]
// CHECK: return %[[F]]#1, %[[F]]#0
// REPORT: @elementwise_chain: 6 ops -> 1 kernels (1 fusions: 1 elementwise, 0 reduction, 0 epilogue; 0 unfused ops)
func.func @elementwise_chain(%x: tensor<4x8xf32>, %y: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xi1>) {
  %0 = loom.exp %x : tensor<4x8xf32>
  %1 = loom.add %0, %y : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %2 = loom.tanh %1 : tensor<4x8xf32>
  %3 = loom.cast %2 : tensor<4x8xf32> to tensor<4x8xf32>
  %4 = loom.greater %3, %y : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xi1>
  %5 = loom.where %4, %3, %x : tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return %5, %4 : tensor<4x8xf32>, tensor<4x8xi1>
}

// -----

// A value with two users is computed once: the exp feeds both the
// elementwise group and the reduction, so the reduction does not absorb it
// (that would compute it twice) and the exp's group yields it.
// CHECK-LABEL: func.func @two_users
// CHECK: %[[F:.*]]:2 = loom.fusion "elementwise"
// CHECK: loom.exp
// CHECK: loom.neg
// CHECK: loom.yield
// CHECK: loom.reduce_sum %[[F]]#0
// CHECK-NOT: loom.exp
// The matmul's result is returned as well, so the add is no epilogue.
// CHECK: loom.matmul
// CHECK-NEXT: loom.add
// CHECK-NOT: loom.fusion
// CHECK: return
// REPORT: @two_users: 5 ops -> 4 kernels (1 fusions: 1 elementwise, 0 reduction, 0 epilogue; 3 unfused ops)
func.func @two_users(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = loom.exp %x : tensor<4x8xf32>
  %1 = loom.neg %0 : tensor<4x8xf32>
  %2 = loom.reduce_sum %0 {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4x1xf32>
  %3 = loom.matmul %x, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %4 = loom.add %3, %x : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return %1, %2, %3, %4 : tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A reduction absorbs its single-use elementwise producer and takes the
// elementwise ops that follow it (here an RMS normalization spelled out);
// the softmax after it starts a group of its own, since a group holds one
// root, and absorbs nothing.
// CHECK-LABEL: func.func @reduction_root
// CHECK: %[[EPS:.*]] = loom.constant
// CHECK-NEXT: %[[F:.*]] = loom.fusion "reduction" ins(%arg0, %[[EPS]] : tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32> {
// CHECK-NEXT: ^bb0
// CHECK-NEXT: loom.mul
// CHECK-NEXT: loom.reduce_mean
// CHECK-NEXT: loom.add
// CHECK-NEXT: loom.rsqrt
// CHECK-NEXT: loom.mul
// CHECK-NEXT: loom.yield
// CHECK-NEXT: }
// CHECK-NEXT: loom.softmax %[[F]]
// REPORT: @reduction_root: 6 ops -> 2 kernels (1 fusions: 0 elementwise, 1 reduction, 0 epilogue; 1 unfused ops)
func.func @reduction_root(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %eps = loom.constant dense<1.0e-5> : tensor<f32>
  %0 = loom.mul %x, %x : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = loom.reduce_mean %0 {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4x1xf32>
  %2 = loom.add %1, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %3 = loom.rsqrt %2 : tensor<4x1xf32>
  %4 = loom.mul %x, %3 : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %5 = loom.softmax %4 {axis = 1 : i64} : tensor<4x8xf32>
  return %5 : tensor<4x8xf32>
}

// -----

// Softmax absorbs the scaling before it, but not a producer with another
// user.
// CHECK-LABEL: func.func @softmax_prologue
// CHECK: %[[F:.*]] = loom.fusion "reduction" ins(%arg0, %{{.*}} : tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32> {
// CHECK-NEXT: ^bb0
// CHECK-NEXT: loom.div
// CHECK-NEXT: loom.softmax
// CHECK-NEXT: loom.yield
// CHECK: %[[E:.*]] = loom.exp %arg0
// CHECK-NEXT: loom.log_softmax %[[E]]
// CHECK-NEXT: return %[[F]], %[[E]]
// REPORT: @softmax_prologue: 4 ops -> 3 kernels (1 fusions: 0 elementwise, 1 reduction, 0 epilogue; 2 unfused ops)
func.func @softmax_prologue(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %c = loom.constant dense<8.0> : tensor<f32>
  %0 = loom.div %x, %c : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %1 = loom.softmax %0 {axis = 1 : i64} : tensor<4x8xf32>
  %2 = loom.exp %x : tensor<4x8xf32>
  %3 = loom.log_softmax %2 {axis = 1 : i64} : tensor<4x8xf32>
  return %1, %2, %3 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// An op never joins a group that one of its other operands depends on:
// %b uses %a's group and the matmul that reads %a, so it joins the
// matmul's epilogue instead, and %a stays alone.
// CHECK-LABEL: func.func @no_cycle
// CHECK: %[[A:.*]] = loom.add %arg0, %arg0
// CHECK-NEXT: loom.fusion "epilogue" ins(%[[A]], %arg1
// CHECK-NEXT: ^bb0
// CHECK-NEXT: loom.matmul
// CHECK-NEXT: loom.mul
// CHECK-NEXT: loom.yield
func.func @no_cycle(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %a = loom.add %x, %x : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %m = loom.matmul %a, %w : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %b = loom.mul %a, %m : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  return %b : tensor<4x4xf32>
}

// -----

// A group stops at 16 ops: a chain of 20 becomes kernels of 16 and 4.
// CHECK-LABEL: func.func @limit
// CHECK: %[[F:.*]] = loom.fusion "elementwise" ins(%arg0 : tensor<8xf32>)
// CHECK-COUNT-16: loom.neg
// CHECK-NEXT: loom.yield
// CHECK: loom.fusion "elementwise" ins(%[[F]] : tensor<8xf32>)
// CHECK-COUNT-4: loom.abs
// CHECK-NEXT: loom.yield
// CHECK-NOT: loom.neg
// CHECK-NOT: loom.abs
// CHECK: return
// REPORT: @limit: 20 ops -> 2 kernels (2 fusions: 2 elementwise, 0 reduction, 0 epilogue; 0 unfused ops)
func.func @limit(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = loom.neg %x : tensor<8xf32>
  %1 = loom.neg %0 : tensor<8xf32>
  %2 = loom.neg %1 : tensor<8xf32>
  %3 = loom.neg %2 : tensor<8xf32>
  %4 = loom.neg %3 : tensor<8xf32>
  %5 = loom.neg %4 : tensor<8xf32>
  %6 = loom.neg %5 : tensor<8xf32>
  %7 = loom.neg %6 : tensor<8xf32>
  %8 = loom.neg %7 : tensor<8xf32>
  %9 = loom.neg %8 : tensor<8xf32>
  %10 = loom.neg %9 : tensor<8xf32>
  %11 = loom.neg %10 : tensor<8xf32>
  %12 = loom.neg %11 : tensor<8xf32>
  %13 = loom.neg %12 : tensor<8xf32>
  %14 = loom.neg %13 : tensor<8xf32>
  %15 = loom.neg %14 : tensor<8xf32>
  %16 = loom.abs %15 : tensor<8xf32>
  %17 = loom.abs %16 : tensor<8xf32>
  %18 = loom.abs %17 : tensor<8xf32>
  %19 = loom.abs %18 : tensor<8xf32>
  return %19 : tensor<8xf32>
}

// -----

// A layout op joins the kernel that produces its input when it is that
// kernel's only consumer: the kernel writes its result in the new layout.
// CHECK-LABEL: func.func @layout_epilogue
// CHECK: loom.fusion "elementwise"
// CHECK-NEXT: ^bb0
// CHECK-NEXT: loom.exp
// CHECK-NEXT: loom.transpose
// CHECK-NEXT: loom.yield
// CHECK: loom.matmul
// REPORT: @layout_epilogue: 3 ops -> 2 kernels (1 fusions: 1 elementwise, 0 reduction, 0 epilogue; 1 unfused ops)
func.func @layout_epilogue(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = loom.exp %x : tensor<4x4xf32>
  %1 = loom.transpose %0 {perm = array<i64: 1, 0>} : tensor<4x4xf32> -> tensor<4x4xf32>
  %2 = loom.matmul %1, %x : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  return %2 : tensor<4x4xf32>
}

// -----

// Single ops, a layout op whose input has another user (fusing it would
// compute the input twice), and constants stay as they are.
// CHECK-LABEL: func.func @nothing_to_fuse
// CHECK-NOT: loom.fusion
// CHECK: loom.exp
// CHECK: loom.transpose
// CHECK: loom.matmul
// REPORT: @nothing_to_fuse: 3 ops -> 3 kernels (0 fusions: 0 elementwise, 0 reduction, 0 epilogue; 3 unfused ops)
func.func @nothing_to_fuse(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = loom.exp %x : tensor<4x4xf32>
  %1 = loom.transpose %0 {perm = array<i64: 1, 0>} : tensor<4x4xf32> -> tensor<4x4xf32>
  %2 = loom.matmul %1, %0 : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  return %2 : tensor<4x4xf32>
}
