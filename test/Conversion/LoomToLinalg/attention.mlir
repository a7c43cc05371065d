// RUN: loom-opt %s --split-input-file --convert-loom-to-linalg | FileCheck %s

// Grouped-query attention (8 query heads over 2 key/value heads): K and V
// are indexed with h floordiv 4; scores are scaled by 1/sqrt(64) and
// causally masked with -inf before a softmax over the keys.
// CHECK-DAG: #[[Q:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[K:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 4, d3, d4)>
// CHECK-DAG: #[[V:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 4, d4, d3)>
// CHECK-LABEL: func.func @attention
// CHECK-SAME: (%[[QA:.+]]: tensor<1x8x16x64xf32>, %[[KA:.+]]: tensor<1x2x16x64xf32>, %[[VA:.+]]: tensor<1x2x16x64xf32>)
// CHECK: %[[S:.+]] = linalg.generic {indexing_maps = [#[[Q]], #[[K]], #{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[QA]], %[[KA]] : {{.+}}) outs(%{{.+}} : tensor<1x8x16x16xf32>)
// CHECK: %[[M:.+]] = linalg.generic {{.+}} ins(%[[S]] : tensor<1x8x16x16xf32>)
// CHECK: ^bb0(%[[SV:.+]]: f32, %{{.+}}: f32):
// CHECK: %[[SCALE:.+]] = arith.constant 1.250000e-01 : f32
// CHECK: %[[SCALED:.+]] = arith.mulf %[[SV]], %[[SCALE]]
// CHECK: %[[NEGINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: %[[ROW:.+]] = linalg.index 2 : index
// CHECK: %[[COL:.+]] = linalg.index 3 : index
// CHECK: %[[LAST:.+]] = arith.addi %[[ROW]], %{{.+}} : index
// CHECK: %[[FUT:.+]] = arith.cmpi sgt, %[[COL]], %[[LAST]] : index
// CHECK: arith.select %[[FUT]], %[[NEGINF]], %[[SCALED]] : f32
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK: %[[P:.+]] = linalg.generic
// CHECK: arith.divf
// CHECK: %[[O:.+]] = linalg.generic {indexing_maps = [#{{.+}}, #[[V]], #{{.+}}], {{.+}} ins(%[[P]], %[[VA]] : {{.+}}) outs(%{{.+}} : tensor<1x8x16x64xf32>)
// CHECK: return %[[O]]
func.func @attention(%q: tensor<1x8x16x64xf32>, %k: tensor<1x2x16x64xf32>, %v: tensor<1x2x16x64xf32>) -> tensor<1x8x16x64xf32> {
  %o = loom.attention %q, %k, %v {is_causal = true} : (tensor<1x8x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>) -> tensor<1x8x16x64xf32>
  return %o : tensor<1x8x16x64xf32>
}

// -----

// A boolean mask keeps the scores where it is true.
// CHECK-LABEL: func.func @attention_bool_mask
// CHECK: ^bb0(%[[SV:.+]]: f32, %[[KEEP:.+]]: i1, %{{.+}}: f32):
// CHECK: %[[SCALED:.+]] = arith.mulf %[[SV]]
// CHECK: %[[NEGINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: arith.select %[[KEEP]], %[[SCALED]], %[[NEGINF]] : f32
func.func @attention_bool_mask(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %m: tensor<4x4xi1>) -> tensor<1x2x4x8xf32> {
  %o = loom.attention %q, %k, %v, %m {scale = 0.5 : f32} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<4x4xi1>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}
