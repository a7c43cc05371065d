// RUN: loom-opt %s --split-input-file --convert-loom-to-linalg | FileCheck %s

// A reshape is a collapse to one dimension and an expansion to the result
// (canonicalization merges the pair where a single view suffices).
// CHECK-LABEL: func.func @reshape
// CHECK-SAME: (%[[A:.+]]: tensor<2x3x4xf32>)
// CHECK: %[[FLAT:.+]] = tensor.collapse_shape %[[A]] {{\[\[}}0, 1, 2]] : tensor<2x3x4xf32> into tensor<24xf32>
// CHECK: %[[R:.+]] = tensor.expand_shape %[[FLAT]] {{\[\[}}0, 1]] output_shape [6, 4] : tensor<24xf32> into tensor<6x4xf32>
// CHECK: return %[[R]]
func.func @reshape(%a: tensor<2x3x4xf32>) -> tensor<6x4xf32> {
  %s = loom.constant dense<[6, 4]> : tensor<2xi64>
  %0 = loom.reshape %a, %s : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<6x4xf32>
  return %0 : tensor<6x4xf32>
}

// -----

// CHECK-LABEL: func.func @unsqueeze
// CHECK: tensor.expand_shape %{{.+}} {{\[\[}}0, 1]] output_shape [1, 3] : tensor<3xf32> into tensor<1x3xf32>
func.func @unsqueeze(%a: tensor<3xf32>) -> tensor<1x3xf32> {
  %0 = loom.unsqueeze %a {axes = array<i64: 0>} : tensor<3xf32> -> tensor<1x3xf32>
  return %0 : tensor<1x3xf32>
}

// -----

// CHECK-LABEL: func.func @transpose
// CHECK-SAME: (%[[A:.+]]: tensor<2x3x4xf32>)
// CHECK: %[[INIT:.+]] = tensor.empty() : tensor<2x4x3xf32>
// CHECK: %[[T:.+]] = linalg.transpose ins(%[[A]] : tensor<2x3x4xf32>) outs(%[[INIT]] : tensor<2x4x3xf32>) permutation = [0, 2, 1]
// CHECK: return %[[T]]
func.func @transpose(%a: tensor<2x3x4xf32>) -> tensor<2x4x3xf32> {
  %0 = loom.transpose %a {perm = array<i64: 0, 2, 1>} : tensor<2x3x4xf32> -> tensor<2x4x3xf32>
  return %0 : tensor<2x4x3xf32>
}

// -----

// CHECK-LABEL: func.func @concat
// CHECK-SAME: (%[[A:.+]]: tensor<2x4xf32>, %[[B:.+]]: tensor<3x4xf32>)
// CHECK: %[[INIT:.+]] = tensor.empty() : tensor<5x4xf32>
// CHECK: %[[I0:.+]] = tensor.insert_slice %[[A]] into %[[INIT]][0, 0] [2, 4] [1, 1]
// CHECK: %[[I1:.+]] = tensor.insert_slice %[[B]] into %[[I0]][2, 0] [3, 4] [1, 1]
// CHECK: return %[[I1]]
func.func @concat(%a: tensor<2x4xf32>, %b: tensor<3x4xf32>) -> tensor<5x4xf32> {
  %0 = loom.concat %a, %b {axis = 0 : i64} : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<5x4xf32>
  return %0 : tensor<5x4xf32>
}

// -----

// CHECK-LABEL: func.func @split
// CHECK-SAME: (%[[A:.+]]: tensor<4x8xf32>)
// CHECK: %[[S0:.+]] = tensor.extract_slice %[[A]][0, 0] [4, 2] [1, 1]
// CHECK: %[[S1:.+]] = tensor.extract_slice %[[A]][0, 2] [4, 6] [1, 1]
// CHECK: return %[[S0]], %[[S1]]
func.func @split(%a: tensor<4x8xf32>) -> (tensor<4x2xf32>, tensor<4x6xf32>) {
  %0, %1 = loom.split %a {axis = 1 : i64, sizes = array<i64: 2, 6>} : tensor<4x8xf32> -> tensor<4x2xf32>, tensor<4x6xf32>
  return %0, %1 : tensor<4x2xf32>, tensor<4x6xf32>
}

// -----

// Negative starts count from the end; ends clamp to the dimension.
// CHECK-LABEL: func.func @slice
// CHECK-SAME: (%[[A:.+]]: tensor<8x16xf32>)
// CHECK: %[[S:.+]] = tensor.extract_slice %[[A]][0, 8] [8, 4] [1, 2] : tensor<8x16xf32> to tensor<8x4xf32>
// CHECK: return %[[S]]
func.func @slice(%a: tensor<8x16xf32>) -> tensor<8x4xf32> {
  %s = loom.constant dense<[-8]> : tensor<1xi64>
  %e = loom.constant dense<[100]> : tensor<1xi64>
  %x = loom.constant dense<[1]> : tensor<1xi64>
  %t = loom.constant dense<[2]> : tensor<1xi64>
  %0 = loom.slice %a, %s, %e, %x, %t : (tensor<8x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// Gather first checks its indices: one reduction over them finds the
// first outside [-10, 10) (and its dimension's size), and when there is
// one the runtime is told (loom_rt_index_error with the op's description).
// Then it reads the data with tensor.extract at the (wrapped) index,
// clamped into the dimension so that a bad index reads nothing outside it.
// CHECK-DAG: memref.global "private" constant @__loom_check_site_0 : memref<12xi8>
// CHECK-DAG: func.func private @loom_rt_index_error(i64, i64, i64)
// CHECK-DAG: #[[IDX:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @gather
// CHECK-SAME: (%[[E:.+]]: tensor<10x4xf32>, %[[I:.+]]: tensor<2x3xi64>)
// CHECK: %[[FOUND:.+]] = linalg.generic {{.+}} iterator_types = ["reduction", "reduction", "parallel"]} ins(%[[I]] : tensor<2x3xi64>) outs(%{{.+}} : tensor<2xi64>)
// CHECK: arith.cmpi slt
// CHECK: arith.cmpi sge
// CHECK: %[[BADINDEX:.+]] = tensor.extract %[[FOUND]][%c0]
// CHECK: %[[BADSIZE:.+]] = tensor.extract %[[FOUND]][%c1]
// CHECK: %[[ANY:.+]] = arith.cmpi ne, %[[BADSIZE]]
// CHECK: scf.if %[[ANY]] {
// CHECK: %[[SITE:.+]] = memref.get_global @__loom_check_site_0
// CHECK: func.call @loom_rt_index_error(%[[BADINDEX]], %[[BADSIZE]], %{{.+}})
// CHECK: linalg.generic {indexing_maps = [#[[IDX]], #{{.+}}], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[I]] : tensor<2x3xi64>)
// CHECK: ^bb0(%[[IN:.+]]: i64, %{{.+}}: f32):
// CHECK: %[[CAST:.+]] = arith.index_cast %[[IN]] : i64 to index
// CHECK: %[[NEG:.+]] = arith.cmpi slt, %[[CAST]]
// CHECK: %[[WRAP:.+]] = arith.addi %[[CAST]]
// CHECK: %[[WRAPPED:.+]] = arith.select %[[NEG]], %[[WRAP]], %[[CAST]] : index
// CHECK: %[[BELOW:.+]] = arith.minsi %[[WRAPPED]]
// CHECK: %[[ROW:.+]] = arith.maxsi %[[BELOW]]
// CHECK: %[[COL:.+]] = linalg.index 2 : index
// CHECK: %[[V:.+]] = tensor.extract %[[E]][%[[ROW]], %[[COL]]] : tensor<10x4xf32>
// CHECK: linalg.yield %[[V]]
func.func @gather(%e: tensor<10x4xf32>, %i: tensor<2x3xi64>) -> tensor<2x3x4xf32> {
  %0 = loom.gather %e, %i {axis = 0 : i64} : tensor<10x4xf32>, tensor<2x3xi64> -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func.func @pad
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: tensor.pad %{{.+}} low[1, 2] high[1, 2]
// CHECK: tensor.yield %[[ZERO]] : f32
// CHECK: } : tensor<2x3xf32> to tensor<4x7xf32>
func.func @pad(%a: tensor<2x3xf32>) -> tensor<4x7xf32> {
  %p = loom.constant dense<[1, 2, 1, 2]> : tensor<4xi64>
  %0 = loom.pad %a, %p : (tensor<2x3xf32>, tensor<4xi64>) -> tensor<4x7xf32>
  return %0 : tensor<4x7xf32>
}

// -----

// Constants keep their (resource) storage.
// CHECK-LABEL: func.func @constant
// CHECK: %[[C:.+]] = arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK: return %[[C]]
func.func @constant() -> tensor<2xf32> {
  %0 = loom.constant dense<[1.0, 2.0]> : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// CHECK-LABEL: func.func @gather_elements
// CHECK-SAME: (%[[D:.+]]: tensor<3x4xf32>, %[[I:.+]]: tensor<3x2xi64>)
// CHECK: linalg.generic {{.+}} ins(%[[I]] : tensor<3x2xi64>)
// CHECK: %[[ROW:.+]] = linalg.index 0 : index
// CHECK: %[[V:.+]] = tensor.extract %[[D]][%[[ROW]], %{{.+}}] : tensor<3x4xf32>
// CHECK: linalg.yield %[[V]]
func.func @gather_elements(%d: tensor<3x4xf32>, %i: tensor<3x2xi64>) -> tensor<3x2xf32> {
  %0 = loom.gather_elements %d, %i {axis = 1 : i64} : tensor<3x4xf32>, tensor<3x2xi64> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// CHECK-DAG: #[[TILE:.+]] = affine_map<(d0, d1) -> (d0 mod 2, 0)>
// CHECK-LABEL: func.func @tile
// CHECK: linalg.generic {indexing_maps = [#[[TILE]], #{{.+}}]
func.func @tile(%x: tensor<2x1xf32>) -> tensor<4x3xf32> {
  %r = loom.constant dense<[2, 3]> : tensor<2xi64>
  %0 = loom.tile %x, %r : (tensor<2x1xf32>, tensor<2xi64>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// CHECK-LABEL: func.func @trilu
// CHECK: %[[ROW:.+]] = linalg.index 0 : index
// CHECK: %[[COL:.+]] = linalg.index 1 : index
// CHECK: %[[DIFF:.+]] = arith.subi %[[COL]], %[[ROW]] : index
// CHECK: %[[D:.+]] = arith.index_cast %[[DIFF]] : index to i64
// CHECK: %[[KEEP:.+]] = arith.cmpi sle, %[[D]], %{{.+}} : i64
// CHECK: arith.select %[[KEEP]]
func.func @trilu(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = loom.trilu %x {upper = false} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// CHECK-LABEL: func.func @one_hot
// CHECK-SAME: (%[[I:.+]]: tensor<4xi64>, %{{.+}}: tensor<i64>, %[[V:.+]]: tensor<2xf32>)
// CHECK: %[[OFF:.+]] = tensor.extract %[[V]][%{{.+}}] : tensor<2xf32>
// CHECK: %[[ON:.+]] = tensor.extract %[[V]][%{{.+}}] : tensor<2xf32>
// CHECK: linalg.generic {{.+}} ins(%[[I]] : tensor<4xi64>) outs(%{{.+}} : tensor<4x10xf32>)
// CHECK: %[[HIT:.+]] = arith.cmpi eq
// CHECK: arith.select %[[HIT]], %[[ON]], %[[OFF]] : f32
func.func @one_hot(%i: tensor<4xi64>, %d: tensor<i64>, %v: tensor<2xf32>) -> tensor<4x10xf32> {
  %0 = loom.one_hot %i, %d, %v {axis = -1 : i64} : tensor<4xi64>, tensor<i64>, tensor<2xf32> -> tensor<4x10xf32>
  return %0 : tensor<4x10xf32>
}

// -----

// Bounds known only at run time: each dimension's offset and step are
// selected from the entries whose axis names it, and a generic reads
// x[offset + d * step].
// CHECK-LABEL: func.func @runtime_slice
// CHECK-SAME: (%[[X:.+]]: tensor<8xf32>, %[[S:.+]]: tensor<1xi64>, %[[E:.+]]: tensor<1xi64>)
// CHECK: tensor.extract %[[S]]
// CHECK: arith.select
// CHECK: linalg.generic
// CHECK: %[[D:.+]] = linalg.index 0 : index
// CHECK: %[[SCALED:.+]] = arith.muli %[[D]], %{{.+}} : index
// CHECK: %[[AT:.+]] = arith.addi %{{.+}}, %[[SCALED]] : index
// CHECK: tensor.extract %[[X]][%[[AT]]]
func.func @runtime_slice(%x: tensor<8xf32>, %s: tensor<1xi64>, %e: tensor<1xi64>) -> tensor<4xf32> {
  %y = loom.slice %x, %s, %e : (tensor<8xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Scatter applies updates in order: a loop nest over the updates carries
// the result, starting from the data.
// CHECK-LABEL: func.func @scatter_elements
// CHECK-SAME: (%[[D:.+]]: tensor<4x5xf32>, %[[I:.+]]: tensor<3x5xi64>, %[[U:.+]]: tensor<3x5xf32>)
// CHECK: %[[R:.+]] = scf.for %[[A:.+]] = {{.+}} iter_args(%[[T0:.+]] = %[[D]]) -> (tensor<4x5xf32>)
// CHECK: scf.for %[[B:.+]] = {{.+}} iter_args(%[[T1:.+]] = %[[T0]]) -> (tensor<4x5xf32>)
// CHECK: %[[IDX:.+]] = tensor.extract %[[I]][%[[A]], %[[B]]]
// CHECK: arith.select
// CHECK: arith.minsi
// CHECK: %[[ROW:.+]] = arith.maxsi
// CHECK: %[[NEW:.+]] = tensor.extract %[[U]][%[[A]], %[[B]]]
// CHECK: %[[OLD:.+]] = tensor.extract %[[T1]][%[[ROW]], %[[B]]]
// CHECK: %[[SUM:.+]] = arith.addf %[[OLD]], %[[NEW]]
// CHECK: %[[INS:.+]] = tensor.insert %[[SUM]] into %[[T1]][%[[ROW]], %[[B]]]
// CHECK: scf.yield %[[INS]]
// CHECK: return %[[R]]
func.func @scatter_elements(%d: tensor<4x5xf32>, %i: tensor<3x5xi64>, %u: tensor<3x5xf32>) -> tensor<4x5xf32> {
  %0 = loom.scatter_elements %d, %i, %u {axis = 0 : i64, reduction = "add"} : tensor<4x5xf32>, tensor<3x5xi64>, tensor<3x5xf32> -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

// CHECK-LABEL: func.func @gather_nd
// CHECK-SAME: (%[[D:.+]]: tensor<4x5xf32>, %[[I:.+]]: tensor<3x2xi64>)
// CHECK: linalg.generic
// CHECK: %[[P:.+]] = linalg.index 0 : index
// CHECK: tensor.extract %[[I]][%[[P]], %{{.+}}]
// CHECK: tensor.extract %[[I]][%[[P]], %{{.+}}]
// CHECK: tensor.extract %[[D]]
func.func @gather_nd(%d: tensor<4x5xf32>, %i: tensor<3x2xi64>) -> tensor<3xf32> {
  %0 = loom.gather_nd %d, %i : tensor<4x5xf32>, tensor<3x2xi64> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Sizes known only at run time with a constant target: views where the
// input and the result share their leading sizes (0: the input's own) and
// their static trailing ones. A head split, the -1 computed from the static
// size it splits:
// CHECK-LABEL: func.func @split_heads
// CHECK: %[[B:.+]] = tensor.dim %arg0, %c0
// CHECK: %[[S:.+]] = tensor.dim %arg0, %c1
// CHECK: %[[R:.+]] = tensor.expand_shape %arg0 {{\[\[}}0], [1], [2, 3]] output_shape [%[[B]], %[[S]], 4, 16] : tensor<?x?x64xf32> into tensor<?x?x4x16xf32>
// CHECK-NOT: tensor.extract_slice
// CHECK: return %[[R]]
func.func @split_heads(%a: tensor<?x?x64xf32>) -> tensor<?x?x4x16xf32> {
  %s = loom.constant dense<[0, 0, -1, 16]> : tensor<4xi64>
  %0 = loom.reshape %a, %s : (tensor<?x?x64xf32>, tensor<4xi64>) -> tensor<?x?x4x16xf32>
  return %0 : tensor<?x?x4x16xf32>
}

// -----

// Their merge, and a merge of a run-time size with a static one (the -1).
// CHECK-LABEL: func.func @merge_heads
// CHECK: %[[R:.+]] = tensor.collapse_shape %arg0 {{\[\[}}0], [1], [2, 3]] : tensor<?x?x4x16xf32> into tensor<?x?x64xf32>
// CHECK-NOT: tensor.extract_slice
// CHECK: return %[[R]]
func.func @merge_heads(%a: tensor<?x?x4x16xf32>) -> tensor<?x?x64xf32> {
  %s = loom.constant dense<[0, 0, 64]> : tensor<3xi64>
  %0 = loom.reshape %a, %s : (tensor<?x?x4x16xf32>, tensor<3xi64>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}

// CHECK-LABEL: func.func @merge_rows
// CHECK: %[[R:.+]] = tensor.collapse_shape %arg0 {{\[\[}}0], [1, 2]] : tensor<?x?x64xf32> into tensor<?x?xf32>
// CHECK-NOT: tensor.extract_slice
// CHECK: return %[[R]]
func.func @merge_rows(%a: tensor<?x?x64xf32>) -> tensor<?x?xf32> {
  %s = loom.constant dense<[0, -1]> : tensor<2xi64>
  %0 = loom.reshape %a, %s : (tensor<?x?x64xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// A run-time size split into a static one and the -1 is not a view: the
// general reshape, its element count checked at run time.
// CHECK-LABEL: func.func @split_run_time_size
// CHECK: tensor.collapse_shape %arg0 {{\[\[}}0, 1, 2]]
// CHECK: tensor.extract_slice
// CHECK: tensor.expand_shape
func.func @split_run_time_size(%a: tensor<?x?x64xf32>) -> tensor<?x32x?xf32> {
  %s = loom.constant dense<[0, 32, -1]> : tensor<3xi64>
  %0 = loom.reshape %a, %s : (tensor<?x?x64xf32>, tensor<3xi64>) -> tensor<?x32x?xf32>
  return %0 : tensor<?x32x?xf32>
}
