// RUN: loom-opt %s --convert-loom-to-linalg | FileCheck %s

// loom.if becomes scf.if on the condition's one element; the branches'
// block arguments become the op's operands (lowered: unsigned elements
// travel as signless integers), their ops lower in place and loom.yield
// becomes scf.yield.
// CHECK-LABEL: func.func @branches
// CHECK-SAME: (%[[C:.+]]: tensor<1xi1>, %[[X:.+]]: tensor<4xf32>, %[[U:.+]]: tensor<4xi8>)
// CHECK-NOT: loom.
// CHECK: %[[FLAG:.+]] = tensor.extract %[[C]][%{{.+}}] : tensor<1xi1>
// CHECK: %[[R:.+]]:2 = scf.if %[[FLAG]] -> (tensor<?xf32>, tensor<4xi8>) {
// CHECK:   %[[E:.+]] = linalg.generic {{.+}} ins(%[[X]] : tensor<4xf32>)
// CHECK:   math.exp
// CHECK:   %[[CAST:.+]] = tensor.cast %[[E]] : tensor<4xf32> to tensor<?xf32>
// CHECK:   scf.yield %[[CAST]], %[[U]] : tensor<?xf32>, tensor<4xi8>
// CHECK: } else {
// CHECK:   %[[EMPTY:.+]] = tensor.cast %{{.+}} : tensor<0xf32> to tensor<?xf32>
// CHECK:   %[[SUM:.+]] = linalg.generic {{.+}} ins(%[[U]], %[[U]] : tensor<4xi8>, tensor<4xi8>)
// CHECK:   scf.yield %[[EMPTY]], %[[SUM]] : tensor<?xf32>, tensor<4xi8>
// CHECK: return %[[R]]#0, %[[R]]#1
func.func @branches(%c: tensor<1xi1>, %x: tensor<4xf32>, %u: tensor<4xui8>) -> (tensor<?xf32>, tensor<4xui8>) {
  %0:2 = loom.if %c : tensor<1xi1> ins(%x, %u : tensor<4xf32>, tensor<4xui8>) -> tensor<?xf32>, tensor<4xui8> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xui8>):
    %1 = loom.exp %a : tensor<4xf32>
    %2 = tensor.cast %1 : tensor<4xf32> to tensor<?xf32>
    loom.yield %2, %b : tensor<?xf32>, tensor<4xui8>
  } else {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xui8>):
    %1 = loom.constant dense<> : tensor<0xf32>
    %2 = tensor.cast %1 : tensor<0xf32> to tensor<?xf32>
    %3 = loom.add %b, %b : tensor<4xui8>, tensor<4xui8> -> tensor<4xui8>
    loom.yield %2, %3 : tensor<?xf32>, tensor<4xui8>
  }
  return %0#0, %0#1 : tensor<?xf32>, tensor<4xui8>
}
