// RUN: loom-opt %s --split-input-file --convert-loom-to-linalg | FileCheck %s

// A kept reduced dimension reads index 0 in the accumulator's map; the
// mean divides the sum by the element count.
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[KEEP:.+]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-LABEL: func.func @reduce_mean
// CHECK-SAME: (%[[X:.+]]: tensor<2x8xf32>)
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[ACC:.+]] = linalg.fill ins(%[[ZERO]] : f32)
// CHECK: %[[SUM:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[KEEP]]], iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<2x8xf32>) outs(%[[ACC]] : tensor<2x1xf32>)
// CHECK: arith.addf
// CHECK: %[[MEAN:.+]] = linalg.generic {{.+}} ins(%[[SUM]] : tensor<2x1xf32>)
// CHECK: %[[N:.+]] = arith.constant 8.000000e+00 : f32
// CHECK: arith.divf %{{.+}}, %[[N]] : f32
// CHECK: return %[[MEAN]]
func.func @reduce_mean(%x: tensor<2x8xf32>) -> tensor<2x1xf32> {
  %y = loom.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : tensor<2x8xf32> -> tensor<2x1xf32>
  return %y : tensor<2x1xf32>
}

// -----

// Without keepdims the reduced dimension is dropped; an empty axis list
// reduces everything. Max starts at the type's lowest value.
// CHECK-DAG: #[[ALL:.+]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @reduce_max_all
// CHECK: %[[LOW:.+]] = arith.constant -2147483648 : i32
// CHECK: linalg.fill ins(%[[LOW]] : i32)
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[ALL]]], iterator_types = ["reduction", "reduction"]}
// CHECK: arith.maxsi
func.func @reduce_max_all(%x: tensor<2x8xi32>) -> tensor<i32> {
  %y = loom.reduce_max %x {axes = array<i64>, keepdims = false} : tensor<2x8xi32> -> tensor<i32>
  return %y : tensor<i32>
}

// -----

// softmax = exp(x - max) / sum(exp(x - max)) along the axis.
// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:.+]]: tensor<2x10xf32>)
// CHECK: %[[MAX:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<2x10xf32>)
// CHECK: arith.maximumf
// CHECK: %[[EXP:.+]] = linalg.generic {{.+}} ins(%[[X]], %[[MAX]] : tensor<2x10xf32>, tensor<2x1xf32>)
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: %[[SUM:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]} ins(%[[EXP]] : tensor<2x10xf32>)
// CHECK: arith.addf
// CHECK: %[[R:.+]] = linalg.generic {{.+}} ins(%[[EXP]], %[[SUM]] : tensor<2x10xf32>, tensor<2x1xf32>)
// CHECK: arith.divf
// CHECK: return %[[R]]
func.func @softmax(%x: tensor<2x10xf32>) -> tensor<2x10xf32> {
  %y = loom.softmax %x {axis = -1 : i64} : tensor<2x10xf32>
  return %y : tensor<2x10xf32>
}

// -----

// CHECK-LABEL: func.func @log_softmax
// CHECK: math.exp
// CHECK: %[[R:.+]] = linalg.generic
// CHECK: %[[SHIFTED:.+]] = arith.subf
// CHECK: %[[LOG:.+]] = math.log
// CHECK: arith.subf %[[SHIFTED]], %[[LOG]]
func.func @log_softmax(%x: tensor<2x10xf32>) -> tensor<2x10xf32> {
  %y = loom.log_softmax %x {axis = 1 : i64} : tensor<2x10xf32>
  return %y : tensor<2x10xf32>
}

// -----

// Two accumulators: the best value and its index; strict comparison keeps
// the first of equal values.
// CHECK-LABEL: func.func @argmax
// CHECK: %[[R:.+]]:2 = linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]} ins(%{{.+}} : tensor<2x8xf32>) outs(%{{.+}}, %{{.+}} : tensor<2xf32>, tensor<2xi64>)
// CHECK: ^bb0(%[[X:.+]]: f32, %[[BEST:.+]]: f32, %[[IDX:.+]]: i64):
// CHECK: %[[BETTER:.+]] = arith.cmpf ogt, %[[X]], %[[BEST]] : f32
// CHECK: %[[POS:.+]] = arith.index_cast
// CHECK: %[[V:.+]] = arith.select %[[BETTER]], %[[X]], %[[BEST]]
// CHECK: %[[I:.+]] = arith.select %[[BETTER]], %[[POS]], %[[IDX]]
// CHECK: linalg.yield %[[V]], %[[I]]
// CHECK: return %[[R]]#1
func.func @argmax(%x: tensor<2x8xf32>) -> tensor<2xi64> {
  %i = loom.argmax %x {axis = 1 : i64, keepdims = false} : tensor<2x8xf32> -> tensor<2xi64>
  return %i : tensor<2xi64>
}

// -----

// CHECK-LABEL: func.func @argmin_last
// CHECK: arith.cmpf ole
func.func @argmin_last(%x: tensor<2x8xf32>) -> tensor<2x1xi64> {
  %i = loom.argmin %x {axis = 1 : i64, select_last_index = true} : tensor<2x8xf32> -> tensor<2x1xi64>
  return %i : tensor<2x1xi64>
}

// -----

// Running sums: an extra reduction dimension k counts where k <= i.
// CHECK-DAG: #[[IN:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @cumsum
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK: %[[K:.+]] = linalg.index 2 : index
// CHECK: %[[I:.+]] = linalg.index 1 : index
// CHECK: arith.cmpi sle, %[[K]], %[[I]] : index
func.func @cumsum(%x: tensor<3x5xf32>) -> tensor<3x5xf32> {
  %y = loom.cumsum %x {axis = 1 : i64} : tensor<3x5xf32>
  return %y : tensor<3x5xf32>
}

// -----

// A running product: the accumulator starts at 1 and multiplies; exclusive
// and reversed, element k counts towards position i when k > i.
// CHECK-LABEL: func.func @cumprod
// CHECK: %[[ONE:.+]] = arith.constant 1 : i32
// CHECK: linalg.fill ins(%[[ONE]] : i32)
// CHECK: linalg.generic
// CHECK: %[[K:.+]] = linalg.index 2 : index
// CHECK: %[[I:.+]] = linalg.index 1 : index
// CHECK: arith.cmpi sgt, %[[K]], %[[I]] : index
// CHECK: arith.muli
func.func @cumprod(%x: tensor<3x5xi32>) -> tensor<3x5xi32> {
  %y = loom.cumprod %x {axis = 1 : i64, exclusive = true, reverse = true} : tensor<3x5xi32>
  return %y : tensor<3x5xi32>
}

// -----

// Top-k by rank: first each element's rank along the axis (better values,
// or equal ones at lower indices, before it), then position p takes the
// element of rank p.
// CHECK-DAG: #[[OWN:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[OTHER:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @topk
// CHECK-SAME: (%[[X:.+]]: tensor<3x8xf32>
// CHECK: %[[RANKS:.+]] = linalg.generic {indexing_maps = [#[[OWN]], #[[OTHER]], #[[OWN]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]], %[[X]] : {{.+}}) outs(%{{.+}} : tensor<3x8xi64>)
// CHECK: ^bb0(%[[SELF:.+]]: f32, %[[RIVAL:.+]]: f32, %{{.+}}: i64):
// CHECK: arith.cmpf ogt, %[[RIVAL]], %[[SELF]]
// CHECK: arith.cmpf oeq, %[[RIVAL]], %[[SELF]]
// CHECK: %[[R:.+]]:2 = linalg.generic {indexing_maps = [#[[OTHER]], #[[OTHER]], #[[OWN]], #[[OWN]]], {{.+}} ins(%[[X]], %[[RANKS]] : {{.+}}) outs({{.+}} : tensor<3x2xf32>, tensor<3x2xi64>)
// CHECK: return %[[R]]#0, %[[R]]#1
func.func @topk(%x: tensor<3x8xf32>, %k: tensor<1xi64>) -> (tensor<3x2xf32>, tensor<3x2xi64>) {
  %v, %i = loom.topk %x, %k {axis = -1 : i64} : tensor<3x8xf32>, tensor<1xi64> -> tensor<3x2xf32>, tensor<3x2xi64>
  return %v, %i : tensor<3x2xf32>, tensor<3x2xi64>
}
