// RUN: loom-opt %s --split-input-file --loom-cpu-parallelize-loops | FileCheck %s
// RUN: loom-opt %s --split-input-file --loom-cpu-parallelize-loops=parallel-elements=0 | FileCheck %s --check-prefix=NONE

// With parallel-elements=0, none.
// NONE-LABEL: func.func @add
// NONE-NOT: scf.parallel
// NONE: linalg.generic
// NONE-LABEL: func.func @row_sums
// NONE-NOT: scf.parallel
// NONE: linalg.generic
// NONE-LABEL: func.func @column_sums

// An elementwise op of at least parallel-elements points (default 2^17;
// here 2^20): one parallel loop over chunks of its outermost loop, 16 rows
// of 1024 (chunk-elements, 16384 points) each, the op itself on views.
// CHECK-LABEL: func.func @add
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C1024:.+]] = arith.constant 1024 : index
// CHECK-DAG: %[[C16:.+]] = arith.constant 16 : index
// CHECK: scf.parallel (%[[I:.+]]) = (%[[C0]]) to (%[[C1024]]) step (%[[C16]]) {
// CHECK:   %[[A:.+]] = memref.subview %arg0[%[[I]], 0] [16, 1024] [1, 1]
// CHECK:   %[[B:.+]] = memref.subview %arg1[%[[I]], 0] [16, 1024] [1, 1]
// CHECK:   %[[C:.+]] = memref.subview %arg2[%[[I]], 0] [16, 1024] [1, 1]
// CHECK:   linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel"]
// CHECK-SAME: ins(%[[A]], %[[B]] :
// CHECK-SAME: outs(%[[C]] :
// CHECK:     arith.addf
// CHECK:   scf.reduce
// CHECK-NOT: scf.parallel
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @add(%a: memref<1024x1024xf32>, %b: memref<1024x1024xf32>,
               %c: memref<1024x1024xf32>) {
  linalg.generic {indexing_maps = [#id, #id, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : memref<1024x1024xf32>, memref<1024x1024xf32>)
      outs(%c : memref<1024x1024xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Row sums: parallel over the rows, each chunk summing whole rows in the
// same order as one thread.
// CHECK-LABEL: func.func @row_sums
// CHECK: scf.parallel (%[[I:.+]]) =
// CHECK:   %[[A:.+]] = memref.subview %arg0[%[[I]], 0] [16, 1024] [1, 1]
// CHECK:   %[[S:.+]] = memref.subview %arg1[%[[I]]] [16] [1]
// CHECK:   linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK-SAME: ins(%[[A]] :
// CHECK-SAME: outs(%[[S]] :
// CHECK:   scf.reduce
// CHECK-NOT: scf.parallel
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @row_sums(%a: memref<1024x1024xf32>, %s: memref<1024xf32>) {
  linalg.generic {indexing_maps = [#id, #row],
                  iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<1024x1024xf32>) outs(%s : memref<1024xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Column sums: the reduction loop is the outer one and is never split; the
// parallel loop is, into chunks of 16 columns over all rows.
// CHECK-LABEL: func.func @column_sums
// CHECK: scf.parallel (%[[J:.+]]) =
// CHECK:   %[[A:.+]] = memref.subview %arg0[0, %[[J]]] [1024, 16] [1, 1]
// CHECK:   %[[S:.+]] = memref.subview %arg1[%[[J]]] [16] [1]
// CHECK:   linalg.generic
// CHECK-SAME: iterator_types = ["reduction", "parallel"]
// CHECK-SAME: ins(%[[A]] :
// CHECK-SAME: outs(%[[S]] :
// CHECK-NOT: scf.parallel
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
#column = affine_map<(d0, d1) -> (d1)>
func.func @column_sums(%a: memref<1024x1024xf32>, %s: memref<1024xf32>) {
  linalg.generic {indexing_maps = [#id, #column],
                  iterator_types = ["reduction", "parallel"]}
      ins(%a : memref<1024x1024xf32>) outs(%s : memref<1024xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A softmax's row maximum with a batch of one: the outermost parallel loop
// of two or more iterations is the second.
// CHECK-LABEL: func.func @row_max
// CHECK: scf.parallel (%[[I:.+]]) =
// CHECK:   memref.subview %arg0[0, %[[I]], 0] [1, 16, 1024] [1, 1, 1]
// CHECK:   memref.subview %arg1[0, %[[I]]] [1, 16] [1, 1]
// CHECK:   linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-NOT: scf.parallel
// CHECK: return
#in = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @row_max(%a: memref<1x512x1024xf32>, %m: memref<1x512xf32>) {
  linalg.generic {indexing_maps = [#in, #out],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a : memref<1x512x1024xf32>) outs(%m : memref<1x512xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.maximumf %x, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A full reduction to a scalar has no parallel loop: left alone.
// CHECK-LABEL: func.func @total
// CHECK-NOT: scf.parallel
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["reduction", "reduction"]
// CHECK-NOT: scf.parallel
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
#scalar = affine_map<(d0, d1) -> ()>
func.func @total(%a: memref<1024x1024xf32>, %s: memref<f32>) {
  linalg.generic {indexing_maps = [#id, #scalar],
                  iterator_types = ["reduction", "reduction"]}
      ins(%a : memref<1024x1024xf32>) outs(%s : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Below parallel-elements (256x256, 2^16 points): left alone.
// CHECK-LABEL: func.func @small
// CHECK-NOT: scf.parallel
// CHECK: linalg.generic
// CHECK-NOT: scf.parallel
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @small(%a: memref<256x256xf32>, %c: memref<256x256xf32>) {
  linalg.generic {indexing_maps = [#id, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<256x256xf32>) outs(%c : memref<256x256xf32>) {
  ^bb0(%x: f32, %z: f32):
    %r = arith.negf %x : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Already inside a parallel loop: no nested one.
// CHECK-LABEL: func.func @nested
// CHECK: scf.parallel
// CHECK-NOT: scf.parallel
// CHECK: linalg.generic
// CHECK-NOT: scf.parallel
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @nested(%a: memref<4x1024x1024xf32>, %c: memref<4x1024x1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.parallel (%b) = (%c0) to (%c4) step (%c1) {
    %x = memref.subview %a[%b, 0, 0] [1, 1024, 1024] [1, 1, 1]
        : memref<4x1024x1024xf32> to memref<1024x1024xf32, strided<[1024, 1], offset: ?>>
    %y = memref.subview %c[%b, 0, 0] [1, 1024, 1024] [1, 1, 1]
        : memref<4x1024x1024xf32> to memref<1024x1024xf32, strided<[1024, 1], offset: ?>>
    linalg.generic {indexing_maps = [#id, #id],
                    iterator_types = ["parallel", "parallel"]}
        ins(%x : memref<1024x1024xf32, strided<[1024, 1], offset: ?>>)
        outs(%y : memref<1024x1024xf32, strided<[1024, 1], offset: ?>>) {
    ^bb0(%v: f32, %w: f32):
      %r = arith.negf %v : f32
      linalg.yield %r : f32
    }
    scf.reduce
  }
  return
}

// -----

// One dimension of 1000003 points: chunks of 16130 (62 chunks, as even as
// they can be), the last one shorter; linalg.index counts from the
// chunk's start.
// CHECK-LABEL: func.func @flat
// CHECK-DAG: %[[C1000003:.+]] = arith.constant 1000003 : index
// CHECK-DAG: %[[C16130:.+]] = arith.constant 16130 : index
// CHECK: scf.parallel (%[[I:.+]]) = (%{{.+}}) to (%[[C1000003]]) step (%[[C16130]]) {
// CHECK:   %[[N:.+]] = affine.min #{{.+}}(%[[I]])
// CHECK:   memref.subview %arg0[%[[I]]] [%[[N]]] [1]
// CHECK:   linalg.generic
// CHECK:     %[[K:.+]] = linalg.index 0
// CHECK:     affine.apply #{{.+}}(%[[I]])[%[[K]]]
// CHECK:   scf.reduce
// CHECK: return
#id = affine_map<(d0) -> (d0)>
func.func @flat(%a: memref<1000003xf32>, %c: memref<1000003xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : memref<1000003xf32>) outs(%c : memref<1000003xf32>) {
  ^bb0(%x: f32, %z: f32):
    %i = linalg.index 0 : index
    %j = arith.index_cast %i : index to i32
    %f = arith.sitofp %j : i32 to f32
    %s = arith.addf %x, %f : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Sizes known only at run time: decided at run time. When the op has
// parallel-elements points or more and its two outermost loops have two
// rows or more together, chunks of both loops in parallel (whole rows of
// the second loop when a chunk holds as many, else pieces of one row of
// the first: a batch of one still leaves its rows to share); otherwise the
// op as it was.
// CHECK-LABEL: func.func @run_time_sizes
// CHECK: %[[B:.+]] = memref.dim %arg0, %c0
// CHECK: %[[S:.+]] = memref.dim %arg0, %c1
// CHECK: %[[ROWS:.+]] = arith.muli %[[B]], %[[S]]
// CHECK: %[[BIG:.+]] = arith.cmpi uge, %{{.+}}, %c131072
// CHECK: %[[TWO:.+]] = arith.cmpi uge, %[[ROWS]], %c2
// CHECK: %[[SPLIT:.+]] = arith.andi %[[BIG]], %[[TWO]]
// CHECK: scf.if %[[SPLIT]] {
// CHECK:   %[[WHOLE:.+]] = arith.cmpi uge, %[[CHUNK:.+]], %[[S]]
// CHECK:   %[[PER:.+]] = arith.divui %[[CHUNK]], %[[S]]
// CHECK:   %[[T0:.+]] = arith.select %[[WHOLE]], %[[PER]], %c1
// CHECK:   %[[T1:.+]] = arith.select %[[WHOLE]], %[[S]], %[[CHUNK]]
// CHECK:   scf.parallel (%[[I:.+]], %[[J:.+]]) = (%c0{{.*}}, %c0{{.*}}) to (%[[B]], %[[S]]) step (%[[T0]], %[[T1]]) {
// CHECK:     memref.subview %arg0[%[[I]], %[[J]], 0]
// CHECK:     linalg.generic
// CHECK:     scf.reduce
// CHECK: } else {
// CHECK:   linalg.generic
// CHECK-SAME: ins(%arg0, %arg1 :
// CHECK: }
// CHECK: return
// NONE-LABEL: func.func @run_time_sizes
// NONE-NOT: scf.
// NONE: linalg.generic
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @run_time_sizes(%a: memref<?x?x768xf32>, %b: memref<?x?x768xf32>,
                          %c: memref<?x?x768xf32>) {
  linalg.generic {indexing_maps = [#id3, #id3, #id3],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a, %b : memref<?x?x768xf32>, memref<?x?x768xf32>)
      outs(%c : memref<?x?x768xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  return
}
