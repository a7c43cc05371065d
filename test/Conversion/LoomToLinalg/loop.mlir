// RUN: loom-opt %s --convert-loom-to-linalg | FileCheck %s

// loom.loop becomes scf.while: the iteration number (i64) and the
// condition (i1) travel as scalars beside the carried values and one
// growing tensor per scan output; the loop goes on while the number is
// below the trip count and the condition holds. The body runs on 0-D
// tensors of the two scalars, and each iteration appends its scan row
// (concatenated as tensor.insert_slice into a tensor one row longer).
// Unsigned elements travel as signless integers.
// CHECK-LABEL: func.func @loop
// CHECK-SAME: (%[[N:.+]]: tensor<i64>, %[[C:.+]]: tensor<i1>, %[[Y0:.+]]: tensor<4xi8>, %[[X:.+]]: tensor<4xi8>)
// CHECK-NOT: loom.
// CHECK-DAG: %[[TRIPS:.+]] = tensor.extract %[[N]][] : tensor<i64>
// CHECK-DAG: %[[GO:.+]] = tensor.extract %[[C]][] : tensor<i1>
// CHECK-DAG: %[[EMPTY:.+]] = tensor.cast %{{.+}} : tensor<0x4xi8> to tensor<?x4xi8>
// CHECK: %[[R:.+]]:4 = scf.while (%[[I:.+]] = %{{.+}}, %[[GOING:.+]] = %[[GO]], %[[Y:.+]] = %[[Y0]], %[[ACC:.+]] = %[[EMPTY]]) : (i64, i1, tensor<4xi8>, tensor<?x4xi8>) -> (i64, i1, tensor<4xi8>, tensor<?x4xi8>) {
// CHECK:   %[[MORE:.+]] = arith.cmpi slt, %[[I]], %[[TRIPS]] : i64
// CHECK:   %[[AND:.+]] = arith.andi %[[MORE]], %[[GOING]] : i1
// CHECK:   scf.condition(%[[AND]]) %[[I]], %[[GOING]], %[[Y]], %[[ACC]]
// CHECK: } do {
// CHECK: ^bb0(%[[BI:.+]]: i64, %[[BC:.+]]: i1, %[[BY:.+]]: tensor<4xi8>, %[[BACC:.+]]: tensor<?x4xi8>):
// CHECK:   tensor.from_elements %[[BI]] : tensor<i64>
// CHECK:   %[[COND:.+]] = tensor.from_elements %[[BC]] : tensor<i1>
// CHECK:   %[[SUM:.+]] = linalg.generic {{.+}} ins(%[[BY]], %[[X]] : tensor<4xi8>, tensor<4xi8>)
// CHECK:   arith.addi
// CHECK:   %[[NEXT:.+]] = arith.addi %[[BI]], %{{.+}} : i64
// CHECK:   %[[STOP:.+]] = tensor.extract %[[COND]][] : tensor<i1>
// CHECK:   tensor.insert_slice %[[BACC]]
// CHECK:   %[[GROWN:.+]] = tensor.insert_slice
// CHECK:   scf.yield %[[NEXT]], %[[STOP]], %[[SUM]], %[[GROWN]] : i64, i1, tensor<4xi8>, tensor<?x4xi8>
// CHECK: return %[[R]]#2, %[[R]]#3
func.func @loop(%n: tensor<i64>, %c: tensor<i1>, %y0: tensor<4xui8>, %x: tensor<4xui8>) -> (tensor<4xui8>, tensor<?x4xui8>) {
  %y, %s = loom.loop %n, %c : tensor<i64>, tensor<i1> carried(%y0 : tensor<4xui8>) ins(%x : tensor<4xui8>) -> tensor<4xui8>, tensor<?x4xui8> {
  ^bb0(%i: tensor<i64>, %go: tensor<i1>, %acc: tensor<4xui8>, %a: tensor<4xui8>):
    %0 = loom.add %acc, %a : tensor<4xui8>, tensor<4xui8> -> tensor<4xui8>
    loom.yield %go, %0, %0 : tensor<i1>, tensor<4xui8>, tensor<4xui8>
  }
  return %y, %s : tensor<4xui8>, tensor<?x4xui8>
}
