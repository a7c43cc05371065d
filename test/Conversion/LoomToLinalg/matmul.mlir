// RUN: loom-opt %s --split-input-file --convert-loom-to-linalg | FileCheck %s

// A matrix on the right: the left operand's rows are flattened into one
// linalg.matmul on a zero-filled accumulator.
// CHECK-LABEL: func.func @matmul_rows
// CHECK-SAME: (%[[A:.+]]: tensor<2x4x8xf32>, %[[B:.+]]: tensor<8x16xf32>)
// CHECK: %[[FLAT:.+]] = tensor.collapse_shape %[[A]]
// CHECK: %[[A2:.+]] = tensor.expand_shape %[[FLAT]] {{.+}} output_shape [8, 8]
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[INIT:.+]] = tensor.empty() : tensor<8x16xf32>
// CHECK: %[[ACC:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[INIT]] : tensor<8x16xf32>)
// CHECK: %[[MM:.+]] = linalg.matmul ins(%[[A2]], %[[B]] : tensor<8x8xf32>, tensor<8x16xf32>) outs(%[[ACC]] : tensor<8x16xf32>)
// CHECK: %[[C:.+]] = tensor.collapse_shape %[[MM]]
// CHECK: %[[R:.+]] = tensor.expand_shape %[[C]] {{.+}} output_shape [2, 4, 16]
// CHECK: return %[[R]]
func.func @matmul_rows(%a: tensor<2x4x8xf32>, %b: tensor<8x16xf32>) -> tensor<2x4x16xf32> {
  %0 = loom.matmul %a, %b : tensor<2x4x8xf32>, tensor<8x16xf32> -> tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// Batched operands broadcast in their batch dimensions; K is the last,
// reduction dimension of one generic.
// CHECK-DAG: #[[LHS:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, 0, d2, d4)>
// CHECK-DAG: #[[RHS:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d4, d3)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @matmul_batched
// CHECK: linalg.generic {indexing_maps = [#[[LHS]], #[[RHS]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK: ^bb0(%[[X:.+]]: f32, %[[Y:.+]]: f32, %[[ACC:.+]]: f32):
// CHECK: %[[P:.+]] = arith.mulf %[[X]], %[[Y]] : f32
// CHECK: %[[S:.+]] = arith.addf %[[ACC]], %[[P]] : f32
// CHECK: linalg.yield %[[S]]
func.func @matmul_batched(%a: tensor<2x1x4x8xf32>, %b: tensor<3x8x16xf32>) -> tensor<2x3x4x16xf32> {
  %0 = loom.matmul %a, %b : tensor<2x1x4x8xf32>, tensor<3x8x16xf32> -> tensor<2x3x4x16xf32>
  return %0 : tensor<2x3x4x16xf32>
}

// -----

// A vector on the right has no N dimension.
// CHECK-DAG: #[[LHS:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[RHS:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @matvec
// CHECK: linalg.generic {indexing_maps = [#[[LHS]], #[[RHS]], #[[OUT]]], iterator_types = ["parallel", "reduction"]}
func.func @matvec(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4xf32> {
  %0 = loom.matmul %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A single column on the right ([batch, K, 1], as a mixture-of-experts
// export multiplies each token's gathered expert weights with it): the
// column is collapsed to a vector along K, so that K, the innermost loop,
// walks both operands contiguously (a row-dot reduction).
// CHECK-DAG: #[[LHS:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[RHS:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d3)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @matmul_column
// CHECK: %[[V:.+]] = tensor.collapse_shape %{{.+}} {{\[}}[0], [1, 2]] : tensor<6x8x1xf32> into tensor<6x8xf32>
// CHECK: linalg.generic {indexing_maps = [#[[LHS]], #[[RHS]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%{{.+}}, %[[V]] : tensor<6x4x8xf32>, tensor<6x8xf32>)
func.func @matmul_column(%a: tensor<6x4x8xf32>, %b: tensor<6x8x1xf32>) -> tensor<6x4x1xf32> {
  %0 = loom.matmul %a, %b : tensor<6x4x8xf32>, tensor<6x8x1xf32> -> tensor<6x4x1xf32>
  return %0 : tensor<6x4x1xf32>
}

// -----

// 16-bit floats accumulate in f32; the sum is rounded to f16 once.
// CHECK-LABEL: func.func @matmul_f16_accumulates_in_f32
// CHECK: %[[MM:.+]] = linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<4x8xf16>, tensor<8x16xf16>) outs(%{{.+}} : tensor<4x16xf32>)
// CHECK: linalg.generic {{.+}} ins(%[[MM]] : tensor<4x16xf32>) outs(%{{.+}} : tensor<4x16xf16>)
// CHECK: arith.truncf %{{.+}} : f32 to f16
func.func @matmul_f16_accumulates_in_f32(%a: tensor<4x8xf16>, %b: tensor<8x16xf16>) -> tensor<4x16xf16> {
  %0 = loom.matmul %a, %b : tensor<4x8xf16>, tensor<8x16xf16> -> tensor<4x16xf16>
  return %0 : tensor<4x16xf16>
}
