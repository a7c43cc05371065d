// RUN: loom-opt %s --split-input-file --convert-loom-to-linalg | FileCheck %s

// Grouped-query attention (8 query heads over 2 key/value heads): K is
// transposed once to [B, Hkv, D, T] and the 4 query heads sharing a key
// head are stacked as rows ([1, 2, 64, 64]), so the scores and the
// weighted values are plain batched matrix products (the CPU target
// register-tiles them); scores are scaled by 1/sqrt(64) and causally
// masked with -inf before a softmax over the keys.
// CHECK-DAG: #[[Q:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[KT:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>
// CHECK-LABEL: func.func @attention
// CHECK-SAME: (%[[QA:.+]]: tensor<1x8x16x64xf32>, %[[KA:.+]]: tensor<1x2x16x64xf32>, %[[VA:.+]]: tensor<1x2x16x64xf32>)
// CHECK: %[[KTA:.+]] = linalg.transpose ins(%[[KA]] : tensor<1x2x16x64xf32>) outs(%{{.+}} : tensor<1x2x64x16xf32>) permutation = [0, 1, 3, 2]
// CHECK: %[[QX:.+]] = tensor.expand_shape %[[QA]] {{\[\[}}0], [1, 2], [3], [4]] output_shape [1, 2, 4, 16, 64]
// CHECK: %[[QS:.+]] = tensor.collapse_shape %[[QX]] {{\[\[}}0], [1], [2, 3], [4]] : tensor<1x2x4x16x64xf32> into tensor<1x2x64x64xf32>
// CHECK: %[[SS:.+]] = linalg.generic {indexing_maps = [#[[Q]], #[[KT]], #{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[QS]], %[[KTA]] : {{.+}}) outs(%{{.+}} : tensor<1x2x64x16xf32>)
// CHECK: %[[SX:.+]] = tensor.expand_shape %[[SS]] {{\[\[}}0], [1], [2, 3], [4]] output_shape [1, 2, 4, 16, 16]
// CHECK: %[[S:.+]] = tensor.collapse_shape %[[SX]] {{\[\[}}0], [1, 2], [3], [4]] : tensor<1x2x4x16x16xf32> into tensor<1x8x16x16xf32>
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
// CHECK: %[[PX:.+]] = tensor.expand_shape %[[P]]
// CHECK: %[[PS:.+]] = tensor.collapse_shape %[[PX]] {{.+}} into tensor<1x2x64x16xf32>
// CHECK: %[[OS:.+]] = linalg.generic {indexing_maps = [#[[Q]], #[[KT]], #{{.+}}], {{.+}} ins(%[[PS]], %[[VA]] : {{.+}}) outs(%{{.+}} : tensor<1x2x64x64xf32>)
// CHECK: %[[OX:.+]] = tensor.expand_shape %[[OS]]
// CHECK: %[[O:.+]] = tensor.collapse_shape %[[OX]] {{.+}} into tensor<1x8x16x64xf32>
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

// -----

// Rotary embedding: x is read twice, directly and at its pair partner
// (j + D/2) mod D; the tables are indexed by j mod D/2. The first half
// subtracts the cross term, the second adds it.
// CHECK-DAG: #[[PARTNER:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, (d3 + 4) mod 8)>
// CHECK-DAG: #[[TABLE:.+]] = affine_map<(d0, d1, d2, d3) -> (d2, d3 mod 4)>
// CHECK-LABEL: func.func @rotary
// CHECK-SAME: (%[[X:.+]]: tensor<1x2x4x8xf32>, %[[C:.+]]: tensor<4x4xf32>, %[[S:.+]]: tensor<4x4xf32>)
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[PARTNER]], #[[TABLE]], #[[TABLE]], #{{.+}}], {{.+}} ins(%[[X]], %[[X]], %[[C]], %[[S]] :
// CHECK: ^bb0(%[[XV:.+]]: f32, %[[PV:.+]]: f32, %[[CV:.+]]: f32, %[[SV:.+]]: f32, %{{.+}}: f32):
// CHECK: %[[J:.+]] = linalg.index 3 : index
// CHECK: %[[FIRST:.+]] = arith.cmpi ult, %[[J]], %{{.+}} : index
// CHECK: %[[D:.+]] = arith.mulf %[[XV]], %[[CV]]
// CHECK: %[[CR:.+]] = arith.mulf %[[PV]], %[[SV]]
// CHECK: %[[SUB:.+]] = arith.subf %[[D]], %[[CR]]
// CHECK: %[[ADD:.+]] = arith.addf %[[D]], %[[CR]]
// CHECK: arith.select %[[FIRST]], %[[SUB]], %[[ADD]]
func.func @rotary(%x: tensor<1x2x4x8xf32>, %c: tensor<4x4xf32>, %s: tensor<4x4xf32>) -> tensor<1x2x4x8xf32> {
  %y = loom.rotary_embedding %x, %c, %s : tensor<1x2x4x8xf32>, tensor<4x4xf32>, tensor<4x4xf32> -> tensor<1x2x4x8xf32>
  return %y : tensor<1x2x4x8xf32>
}

// -----

// Interleaved pairs (2i, 2i + 1): partner j + 1 - 2 (j mod 2), table j floordiv 2.
// CHECK-DAG: #[[PARTNER:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3 - (d3 mod 2) * 2 + 1)>
// CHECK-DAG: #[[TABLE:.+]] = affine_map<(d0, d1, d2, d3) -> (d2, d3 floordiv 2)>
// CHECK-LABEL: func.func @rotary_interleaved
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[PARTNER]], #[[TABLE]], #[[TABLE]], #{{.+}}]
func.func @rotary_interleaved(%x: tensor<1x2x4x8xf32>, %c: tensor<4x4xf32>, %s: tensor<4x4xf32>) -> tensor<1x2x4x8xf32> {
  %y = loom.rotary_embedding %x, %c, %s {interleaved = true} : tensor<1x2x4x8xf32>, tensor<4x4xf32>, tensor<4x4xf32> -> tensor<1x2x4x8xf32>
  return %y : tensor<1x2x4x8xf32>
}

// -----

// f16 attention: scores, softmax and the product with the values in f32,
// rounded to f16 once at the end.
// CHECK-LABEL: func.func @attention_f16
// CHECK: %[[KT16:.+]] = linalg.transpose ins(%arg1 : tensor<1x2x4x8xf16>)
// CHECK: linalg.generic {{.+}} ins(%arg0, %[[KT16]] : tensor<1x2x4x8xf16>, tensor<1x2x8x4xf16>) outs(%{{.+}} : tensor<1x2x4x4xf32>)
// CHECK-NOT: tensor<1x2x4x4xf16>
// CHECK: ins(%{{.+}}, %arg2 : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf16>) outs(%{{.+}} : tensor<1x2x4x8xf32>)
// CHECK: arith.truncf %{{.+}} : f32 to f16
func.func @attention_f16(%q: tensor<1x2x4x8xf16>, %k: tensor<1x2x4x8xf16>, %v: tensor<1x2x4x8xf16>) -> tensor<1x2x4x8xf16> {
  %0 = loom.attention %q, %k, %v {is_causal = true} : (tensor<1x2x4x8xf16>, tensor<1x2x4x8xf16>, tensor<1x2x4x8xf16>) -> tensor<1x2x4x8xf16>
  return %0 : tensor<1x2x4x8xf16>
}

// -----

// Scores of 2^20 elements or more are never materialized. An scf.forall
// over the batch's items and the key/value heads (here one of each) takes
// one item's query heads that share the key/value head, and its K
// transposed; the two query heads are stacked as the 64 rows of a tile of
// 32 query positions, so both products are plain batched matrix products.
// In it an scf.for over query tiles, in that one over tiles of 128 keys
// carrying the running row maxima, sums of exponentials and weighted value
// sums; the 100 keys left over are one more tile. Each item's result is
// inserted into the whole in parallel.
// CHECK-LABEL: func.func @attention_tiled
// CHECK-NOT: tensor<1x2x1024x1124xf32>
// CHECK: %[[ALL:.+]] = scf.forall (%[[ITEM:.+]], %[[KVH:.+]]) in (1, 1) shared_outs(%[[SHARED:.+]] = %{{.+}}) -> (tensor<1x2x1024x16xf32>)
// CHECK: %[[FIRST:.+]] = arith.muli %[[KVH]], %c2
// CHECK: %[[QI:.+]] = tensor.extract_slice %arg0[%[[ITEM]], %[[FIRST]], 0, 0] [1, 2, 1024, 16]
// CHECK: %[[KI:.+]] = tensor.extract_slice %arg1[%[[ITEM]], %[[KVH]], 0, 0] [1, 1, 1124, 16]
// CHECK: %[[VI:.+]] = tensor.extract_slice %arg2[%[[ITEM]], %[[KVH]], 0, 0] [1, 1, 1124, 16]
// CHECK: %[[KT:.+]] = linalg.transpose ins(%[[KI]] : tensor<1x1x1124x16xf32>) outs(%{{.+}} : tensor<1x1x16x1124xf32>) permutation = [0, 1, 3, 2]
// CHECK: %[[OUT:.+]] = scf.for %[[S0:[a-z0-9]+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC_OUT:.+]] = %{{.+}}) -> (tensor<1x2x1024x16xf32>)
// CHECK: %[[Q:.+]] = tensor.extract_slice %[[QI]][0, 0, %[[S0]], 0] [1, 2, 32, 16]
// CHECK: %[[QH:.+]] = tensor.expand_shape %[[Q]] {{\[\[}}0], [1, 2], [3], [4]] output_shape [1, 1, 2, 32, 16]
// CHECK: tensor.collapse_shape %[[QH]] {{\[\[}}0], [1], [2, 3], [4]] : tensor<1x1x2x32x16xf32> into tensor<1x1x64x16xf32>
// CHECK: scf.for %[[T0:[a-z0-9]+]] = {{.+}} -> (tensor<1x1x64x1xf32>, tensor<1x1x64x1xf32>, tensor<1x1x64x16xf32>)
// CHECK: tensor.extract_slice %[[KT]][0, 0, 0, %[[T0]]] [1, 1, 16, 128]
// CHECK: math.exp
// CHECK: tensor.extract_slice %[[VI]][0, 0, %[[T0]], 0] [1, 1, 128, 16]
// CHECK: scf.yield
// CHECK: tensor.extract_slice %[[KT]][0, 0, 0, %{{.+}}] [1, 1, 16, 100]
// CHECK: arith.divf
// CHECK: tensor.collapse_shape %{{.+}} {{\[\[}}0], [1, 2], [3], [4]] : tensor<1x1x2x32x16xf32> into tensor<1x2x32x16xf32>
// CHECK: tensor.insert_slice %{{.+}} into %[[ACC_OUT]][0, 0, %[[S0]], 0] [1, 2, 32, 16]
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice %[[OUT]] into %[[SHARED]][%[[ITEM]], %[[FIRST]], 0, 0] [1, 2, 1024, 16]
// CHECK-NOT: tensor<1x2x1024x1124xf32>
// CHECK: return %[[ALL]]
func.func @attention_tiled(%q: tensor<1x2x1024x16xf32>, %k: tensor<1x1x1124x16xf32>, %v: tensor<1x1x1124x16xf32>) -> tensor<1x2x1024x16xf32> {
  %0 = loom.attention %q, %k, %v {is_causal = true} : (tensor<1x2x1024x16xf32>, tensor<1x1x1124x16xf32>, tensor<1x1x1124x16xf32>) -> tensor<1x2x1024x16xf32>
  return %0 : tensor<1x2x1024x16xf32>
}

// -----

// Sizes known only at run time run in tiles too, every tile of a static
// shape: an scf.forall over the batch's items (as many as the queries')
// and the key/value heads, in it query rows in tiles of 8 (a register
// tile's rows) then one at a time, and in each keys in tiles of 128 then
// of 16, the last tile of 16 read into zeros where fewer keys are left and
// those masked. No tensor of scores with a run-time size is ever made.
// CHECK-LABEL: func.func @attention_run_time_sizes
// CHECK-NOT: x?x?xf32>
// Keys and values whose batch is not the queries' are reported, and zeros
// read in their place.
// CHECK: call @loom_rt_check_failed
// CHECK: %[[KEYS:.+]] = scf.if %{{.+}} -> (tensor<?x2x?x8xf32>)
// CHECK: %[[BATCH:.+]] = tensor.dim %arg0, %c0{{.*}} : tensor<?x4x?x8xf32>
// CHECK: tensor.empty(%[[BATCH]], %{{.+}}) : tensor<?x4x?x6xf32>
// CHECK: scf.forall (%[[ITEM:.+]], %[[KVH:.+]]) in (%[[BATCH]], 2)
// CHECK: %[[K:.+]] = tensor.extract_slice %[[KEYS]][%[[ITEM]], %[[KVH]], 0, 0] [1, 1, %[[T:.+]], 8]
// CHECK: %[[KT:.+]] = linalg.transpose ins(%[[K]] : tensor<1x1x?x8xf32>)
// CHECK: scf.for %{{.+}} step %c8{{.*}} -> (tensor<1x2x?x6xf32>)
// CHECK: tensor<1x1x16x8xf32>
// Causal: tiles past the last key visible to the query tile are skipped.
// CHECK: %[[VISIBLE:.+]] = arith.minsi %{{.+}}, %[[T]] : index
// CHECK: arith.addi %[[VISIBLE]], %c127
// CHECK: %[[UPTO:.+]] = arith.minui
// CHECK: scf.for %[[T0:[a-z0-9]+]] = %{{.+}} to %[[UPTO]] step %c128
// CHECK: tensor.extract_slice %[[KT]][0, 0, 0, %[[T0]]] [1, 1, 8, 128]
// CHECK: scf.for %[[T1:[a-z0-9]+]] = %[[UPTO]] to %{{.+}} step %c16
// CHECK: %[[LEFT:.+]] = arith.subi %[[T]], %[[T1]]
// CHECK: scf.if
// CHECK: tensor.extract_slice %[[KT]][0, 0, 0, %[[T1]]] [1, 1, 8, 16]
// CHECK: } else {
// CHECK: %[[PART:.+]] = tensor.extract_slice %[[KT]][0, 0, 0, %[[T1]]] [1, 1, 8, %[[LEFT]]]
// CHECK: tensor.insert_slice %[[PART]] into %{{.+}}[0, 0, 0, 0] [1, 1, 8, %[[LEFT]]] [1, 1, 1, 1] : tensor<1x1x8x?xf32> into tensor<1x1x8x16xf32>
// CHECK: arith.cmpi sge, %{{.+}}, %[[T]] : index
// One query row at a time: its two heads are the tile's two rows.
// CHECK: scf.for %{{.+}} step %c1{{.*}} -> (tensor<1x2x?x6xf32>)
// CHECK: tensor<1x1x2x8xf32>
// CHECK: tensor.parallel_insert_slice
// CHECK-NOT: x?x?xf32>
// CHECK: return
func.func @attention_run_time_sizes(%q: tensor<?x4x?x8xf32>, %k: tensor<?x2x?x8xf32>, %v: tensor<?x2x?x6xf32>) -> tensor<?x4x?x6xf32> {
  %0 = loom.attention %q, %k, %v {is_causal = true} : (tensor<?x4x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x6xf32>) -> tensor<?x4x?x6xf32>
  return %0 : tensor<?x4x?x6xf32>
}

// -----

// A causal sliding window aligned to the first key: the key tiles before
// the window of every row of the query tile, and those after it, are
// skipped -- the key loop runs from the window's first tile to the last
// visible one -- and each score outside [position - 255, position] is
// masked.
// CHECK-LABEL: func.func @attention_sliding_window
// CHECK: scf.for %[[S0:[a-z0-9]+]] = %{{.+}} to %{{.+}} step %c32
// CHECK: %[[END:.+]] = arith.addi %[[S0]], %c32
// CHECK: %[[VISIBLE:.+]] = arith.minsi
// CHECK: %[[BACK:.+]] = arith.subi %{{.+}}, %c255
// CHECK: %[[FIRST:.+]] = arith.maxsi %[[BACK]]
// CHECK: %[[TILES:.+]] = arith.divui %[[FIRST]], %c128
// CHECK: %[[ROUNDED:.+]] = arith.muli %[[TILES]], %c128
// CHECK: %[[FROM:.+]] = arith.maxui %{{.+}}, %[[ROUNDED]]
// CHECK: arith.addi %[[VISIBLE]], %c127
// CHECK: %[[UPTO:.+]] = arith.minui
// CHECK: scf.for %{{.+}} = %[[FROM]] to %[[UPTO]] step %c128
// CHECK: arith.cmpi sgt
// CHECK: %[[WINDOW:.+]] = arith.addi %{{.+}}, %c-255
// CHECK: arith.cmpi slt, %{{.+}}, %[[WINDOW]]
func.func @attention_sliding_window(%q: tensor<1x2x1024x16xf32>, %k: tensor<1x2x1024x16xf32>, %v: tensor<1x2x1024x16xf32>) -> tensor<1x2x1024x16xf32> {
  %0 = loom.attention %q, %k, %v {is_causal = true, left_window = 255, start_aligned = true} : (tensor<1x2x1024x16xf32>, tensor<1x2x1024x16xf32>, tensor<1x2x1024x16xf32>) -> tensor<1x2x1024x16xf32>
  return %0 : tensor<1x2x1024x16xf32>
}
