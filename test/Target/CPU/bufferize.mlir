// RUN: loom-opt %s --split-input-file --loom-cpu-bufferize | FileCheck %s

// Identity layouts at the function boundary; the copy into the strided
// interior of the pad result is a linalg.copy (it lowers to loops, not to
// a call into an MLIR runtime library).
// CHECK-LABEL: func.func @pad
// CHECK-SAME: (%[[A:.+]]: memref<2x3xf32>) -> memref<4x5xf32>
// CHECK: %[[BUF:.+]] = memref.alloc() {{.+}} : memref<4x5xf32>
// CHECK: %[[VIEW:.+]] = memref.subview %[[BUF]][1, 1] [2, 3] [1, 1]
// CHECK: linalg.copy ins(%[[A]] : memref<2x3xf32>) outs(%[[VIEW]] :
// CHECK-NOT: memref.copy
// CHECK: return %[[BUF]]
func.func @pad(%a: tensor<2x3xf32>) -> tensor<4x5xf32> {
  %c = arith.constant 0.0 : f32
  %p = tensor.pad %a low[1, 1] high[1, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %c : f32
  } : tensor<2x3xf32> to tensor<4x5xf32>
  return %p : tensor<4x5xf32>
}
