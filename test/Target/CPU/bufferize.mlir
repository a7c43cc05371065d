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

// -----

// The entry's arguments (the caller's inputs, and the weights the runtime
// maps read-only) are never written: an in-place update starts from a copy.
// CHECK-LABEL: func.func @insert_into_argument
// CHECK-SAME: (%[[A:.+]]: memref<4xf32>, %[[W:.+]]: memref<4xf32> {loom.weight})
// CHECK-SAME: -> (memref<4xf32>, memref<4xf32>)
// CHECK-DAG: %[[CA:.+]] = memref.alloc() {{.+}} : memref<4xf32>
// CHECK-DAG: linalg.copy ins(%[[A]] : memref<4xf32>) outs(%[[CA]] :
// CHECK-DAG: %[[CW:.+]] = memref.alloc() {{.+}} : memref<4xf32>
// CHECK-DAG: linalg.copy ins(%[[W]] : memref<4xf32>) outs(%[[CW]] :
// CHECK-DAG: memref.store %{{.+}}, %[[CA]]
// CHECK-DAG: memref.store %{{.+}}, %[[CW]]
// CHECK: return %[[CA]], %[[CW]]
func.func @insert_into_argument(%a: tensor<4xf32>,
                                %w: tensor<4xf32> {loom.weight})
    -> (tensor<4xf32>, tensor<4xf32>) {
  %c1 = arith.constant 1 : index
  %v = arith.constant 7.0 : f32
  %0 = tensor.insert %v into %a[%c1] : tensor<4xf32>
  %1 = tensor.insert %v into %w[%c1] : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}
