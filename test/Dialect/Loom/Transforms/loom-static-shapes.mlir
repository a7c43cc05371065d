// RUN: loom-opt %s --split-input-file --loom-static-shapes | FileCheck %s

// A constant depth makes one_hot static, and inference carries the static
// shape to the users and the function's result.
// CHECK-LABEL: func.func @one_hot_chain
// CHECK-SAME: -> tensor<4x6xf32>
// CHECK: %[[H:.+]] = loom.one_hot {{.+}} -> tensor<6x2x4xf32>
// CHECK: %[[S:.+]] = loom.reduce_sum %[[H]] {{.+}} : tensor<6x2x4xf32> -> tensor<6x4xf32>
// CHECK: %[[T:.+]] = loom.transpose %[[S]] {{.+}} : tensor<6x4xf32> -> tensor<4x6xf32>
// CHECK: %[[R:.+]] = loom.exp %[[T]] : tensor<4x6xf32>
// CHECK: return %[[R]] : tensor<4x6xf32>
func.func @one_hot_chain(%i: tensor<6x2xi64>, %v: tensor<2xf32>) -> tensor<?x6xf32> {
  %d = loom.constant dense<4> : tensor<i64>
  %h = loom.one_hot %i, %d, %v {axis = 2 : i64} : tensor<6x2xi64>, tensor<i64>, tensor<2xf32> -> tensor<6x2x?xf32>
  %s = loom.reduce_sum %h {axes = array<i64: 1>, keepdims = false} : tensor<6x2x?xf32> -> tensor<6x?xf32>
  %t = loom.transpose %s {perm = array<i64: 1, 0>} : tensor<6x?xf32> -> tensor<?x6xf32>
  %r = loom.exp %t : tensor<?x6xf32>
  return %r : tensor<?x6xf32>
}
