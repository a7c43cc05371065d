// RUN: loom-opt %s --split-input-file --convert-loom-to-linalg | FileCheck %s

// A kernel group lowers as its body, its block arguments replaced by the
// group's operands.
// CHECK-LABEL: func.func @epilogue
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>, %[[W:.+]]: tensor<8x16xf32>, %[[B:.+]]: tensor<16xf32>)
// CHECK-NOT: loom.
// CHECK: %[[MM:.+]] = linalg.matmul ins(%[[X]], %[[W]] : tensor<4x8xf32>, tensor<8x16xf32>)
// CHECK: %[[R:.+]] = linalg.generic {{.+}} ins(%[[MM]], %[[B]] : tensor<4x16xf32>, tensor<16xf32>)
// CHECK: arith.addf
// CHECK: %[[G:.+]] = linalg.generic {{.+}} ins(%[[R]] : tensor<4x16xf32>)
// CHECK: math.erf
// CHECK-NOT: loom.
// CHECK: return %[[G]]
func.func @epilogue(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %y = loom.fusion "epilogue" ins(%x, %w, %b : tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<4x16xf32> {
  ^bb0(%a: tensor<4x8xf32>, %c: tensor<8x16xf32>, %d: tensor<16xf32>):
    %0 = loom.matmul %a, %c : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
    %1 = loom.add %0, %d : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
    %2 = loom.gelu %1 : tensor<4x16xf32>
    loom.yield %2 : tensor<4x16xf32>
  }
  return %y : tensor<4x16xf32>
}

// -----

// Several results.
// CHECK-LABEL: func.func @two_results
// CHECK: %[[E:.+]] = linalg.generic
// CHECK: math.exp
// CHECK: %[[N:.+]] = linalg.generic
// CHECK: arith.negf
// CHECK: return %[[E]], %[[N]]
func.func @two_results(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %y:2 = loom.fusion "elementwise" ins(%x : tensor<4xf32>) -> tensor<4xf32>, tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %0 = loom.exp %a : tensor<4xf32>
    %1 = loom.neg %0 : tensor<4xf32>
    loom.yield %0, %1 : tensor<4xf32>, tensor<4xf32>
  }
  return %y#0, %y#1 : tensor<4xf32>, tensor<4xf32>
}
