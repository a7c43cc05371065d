// RUN: loom-opt %s --split-input-file --loom-cpu-vectorize-contractions="vector-bits=512 registers=32 parallel-flops=0 lower-contractions=false" | FileCheck %s
// RUN: loom-opt %s --split-input-file --loom-cpu-vectorize-contractions="vector-bits=512 registers=32 parallel-flops=0" | FileCheck %s --check-prefix=OUTER

// The schedule of one thread (parallel-flops=0); vectorize-contractions-
// parallel.mlir pins the parallel loops of large contractions.

// Register tiles of 8 rows x 32 columns (two 512-bit registers of f32:
// 16 accumulators) x 1 step of K, K innermost. M = 20 is two full row
// tiles and a 4-row remainder; N = 72 two full column tiles and an
// 8-wide remainder. The accumulator is read before the K loop, carried
// through it in registers and written after it.
// CHECK-LABEL: func.func @matmul
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG: %[[C8:.+]] = arith.constant 8 : index
// CHECK-DAG: %[[C16:.+]] = arith.constant 16 : index
// CHECK-DAG: %[[C32:.+]] = arith.constant 32 : index
// CHECK-DAG: %[[C64:.+]] = arith.constant 64 : index
// CHECK: scf.for %[[M:.+]] = %[[C0]] to %[[C16]] step %[[C8]] {
// CHECK:   scf.for %[[N:.+]] = %[[C0]] to %[[C64]] step %[[C32]] {
// CHECK:     %[[ACC:.+]] = vector.transfer_read %arg2[%[[M]], %[[N]]]{{.*}} : memref<20x72xf32>, vector<8x32xf32>
// CHECK:     %[[SUM:.+]] = scf.for %[[K:.+]] = %[[C0]] to %[[C64]] step %[[C1]] iter_args(%[[IT:.+]] = %[[ACC]]) -> (vector<8x32xf32>) {
// CHECK:       %[[A:.+]] = vector.transfer_read %arg0[%[[M]], %[[K]]]{{.*}} : memref<20x64xf32>, vector<8x1xf32>
// CHECK:       %[[B:.+]] = vector.transfer_read %arg1[%[[K]], %[[N]]]{{.*}} : memref<64x72xf32>, vector<1x32xf32>
// CHECK:       %[[R:.+]] = vector.contract {{.*}} %[[A]], %[[B]], %[[IT]] : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
// CHECK:       scf.yield %[[R]]
// CHECK:     vector.transfer_write %[[SUM]], %arg2[%[[M]], %[[N]]]
// CHECK:   vector.contract {{.*}} : vector<8x1xf32>, vector<1x8xf32> into vector<8x8xf32>
// CHECK: scf.for %{{.+}} = %[[C0]] to %[[C64]] step %[[C32]] {
// CHECK:   vector.contract {{.*}} : vector<4x1xf32>, vector<1x32xf32> into vector<4x32xf32>
// CHECK: vector.contract {{.*}} : vector<4x1xf32>, vector<1x8xf32> into vector<4x8xf32>
// CHECK-NOT: linalg.
// CHECK: return

// Lowered, each step of K is one outer product of a column of A and a
// row of B (one FMA per row); nothing contracts any more.
// OUTER-LABEL: func.func @matmul
// OUTER: vector.outerproduct %{{.+}}, %{{.+}}, %{{.+}} {kind = #vector.kind<add>} : vector<8xf32>, vector<32xf32>
// OUTER: vector.outerproduct %{{.+}}, %{{.+}}, %{{.+}} {kind = #vector.kind<add>} : vector<8xf32>, vector<8xf32>
// OUTER: vector.outerproduct %{{.+}}, %{{.+}}, %{{.+}} {kind = #vector.kind<add>} : vector<4xf32>, vector<32xf32>
// OUTER: vector.outerproduct %{{.+}}, %{{.+}}, %{{.+}} {kind = #vector.kind<add>} : vector<4xf32>, vector<8xf32>
// OUTER-NOT: vector.contract
// OUTER: return
func.func @matmul(%a: memref<20x64xf32>, %b: memref<64x72xf32>, %c: memref<20x72xf32>) {
  linalg.matmul ins(%a, %b : memref<20x64xf32>, memref<64x72xf32>) outs(%c : memref<20x72xf32>)
  return
}

// -----

// B of 1 MiB: panels of 256 columns x 256 steps of K are copied into one
// contiguous buffer (loops n, k, then the row tiles), which the tiles read.
// CHECK-LABEL: func.func @blocked
// CHECK: %[[PANEL:.+]] = memref.alloc() {alignment = 64 : i64} : memref<256x256xf32>
// CHECK: scf.for %[[NB:.+]] = %{{.+}} to %{{.+}} step %[[C256:[^ ]+]] {
// CHECK:   scf.for %[[KB:.+]] = %{{.+}} to %{{.+}} step %[[C256]] {
// CHECK:     %[[SRC:.+]] = memref.subview %arg1[%[[KB]], %[[NB]]] [256, 256] [1, 1]
// CHECK:     linalg.copy ins(%[[SRC]] : {{.*}}) outs(%[[PANEL]] : memref<256x256xf32>)
// CHECK:     scf.for %[[M:.+]] = {{.*}} step %{{.+}} {
// CHECK:       scf.for %[[N:.+]] = {{.*}} step %{{.+}} {
// CHECK:         scf.for %[[K:.+]] = {{.*}} iter_args
// CHECK:           vector.transfer_read %arg0
// CHECK:           vector.transfer_read %[[PANEL]][%[[K]], %[[N]]]{{.*}} : memref<256x256xf32>, vector<1x32xf32>
// CHECK:           vector.contract {{.*}} into vector<8x32xf32>
// CHECK: memref.dealloc %[[PANEL]]
func.func @blocked(%a: memref<64x512xf32>, %b: memref<512x512xf32>, %c: memref<64x512xf32>) {
  linalg.matmul ins(%a, %b : memref<64x512xf32>, memref<512x512xf32>) outs(%c : memref<64x512xf32>)
  return
}

// -----

// The same product writing a view of the memory plan's arena (as every
// temporary of an engine is): its accumulators still live in registers
// across K. The panel is a buffer of its own and shares no byte with the
// arena, so nothing in the K loop can change them.
// CHECK-LABEL: func.func @blocked_into_arena
// CHECK: %[[C:.+]] = memref.view
// CHECK: %[[PANEL:.+]] = memref.alloc() {alignment = 64 : i64} : memref<256x256xf32>
// CHECK: linalg.copy ins({{.*}}) outs(%[[PANEL]] : memref<256x256xf32>)
// CHECK: %[[ACC:.+]] = vector.transfer_read %[[C]]
// CHECK: %[[SUM:.+]] = scf.for %{{.+}} = {{.*}} iter_args(%{{.+}} = %[[ACC]])
// CHECK-NOT: vector.transfer_write
// CHECK: vector.contract
// CHECK: scf.yield
// CHECK: vector.transfer_write %[[SUM]], %[[C]]
func.func @blocked_into_arena(%a: memref<64x512xf32>, %b: memref<512x512xf32>) {
  %arena = memref.alloc() : memref<131072xi8>
  %zero = arith.constant 0 : index
  %c = memref.view %arena[%zero][] : memref<131072xi8> to memref<64x512xf32>
  linalg.matmul ins(%a, %b : memref<64x512xf32>, memref<512x512xf32>) outs(%c : memref<64x512xf32>)
  memref.dealloc %arena : memref<131072xi8>
  return
}

// -----

// Batch dimensions are loops outside the tiles.
// CHECK-LABEL: func.func @batched
// CHECK: scf.for %[[BATCH:.+]] =
// CHECK:   vector.transfer_read %arg2[%[[BATCH]], %{{.+}}, %{{.+}}]{{.*}} vector<8x32xf32>
// CHECK:   scf.for
// CHECK:     vector.transfer_read %arg0[%[[BATCH]],
// CHECK:     vector.contract {{.*}} into vector<8x32xf32>
func.func @batched(%a: memref<2x8x16xf32>, %b: memref<2x16x32xf32>, %c: memref<2x8x32xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<2x8x16xf32>, memref<2x16x32xf32>) outs(%c : memref<2x8x32xf32>)
  return
}

// -----

// f64: two 512-bit registers hold 16 columns.
// CHECK-LABEL: func.func @f64
// CHECK: vector.contract {{.*}} : vector<8x1xf64>, vector<1x16xf64> into vector<8x16xf64>
func.func @f64(%a: memref<8x4xf64>, %b: memref<4x16xf64>, %c: memref<8x16xf64>) {
  linalg.matmul ins(%a, %b : memref<8x4xf64>, memref<4x16xf64>) outs(%c : memref<8x16xf64>)
  return
}

// -----

// i32 (the exact sums of quantized contractions): two 512-bit registers
// hold 32 columns; integer multiply-adds.
// CHECK-LABEL: func.func @i32
// CHECK: vector.contract {{.*}} : vector<8x1xi32>, vector<1x32xi32> into vector<8x32xi32>
// OUTER-LABEL: func.func @i32
// OUTER: vector.outerproduct {{.*}} {kind = #vector.kind<add>} : vector<8xi32>, vector<32xi32>
func.func @i32(%a: memref<8x4xi32>, %b: memref<4x32xi32>, %c: memref<8x32xi32>) {
  linalg.matmul ins(%a, %b : memref<8x4xi32>, memref<4x32xi32>) outs(%c : memref<8x32xi32>)
  return
}

// -----

// Left alone (they become loops): B walked along K innermost (a product
// with a transposed right operand), a body that is not a multiply-add
// (an activation fused into the product), and f16.
// CHECK-LABEL: func.func @transposed_b
// CHECK-NOT: vector.
// CHECK: linalg.generic
// CHECK-LABEL: func.func @not_multiply_add
// CHECK-NOT: vector.
// CHECK: linalg.generic
// CHECK-LABEL: func.func @f16
// CHECK-NOT: vector.
// CHECK: linalg.generic
func.func @transposed_b(%a: memref<8x16xf32>, %b: memref<32x16xf32>, %c: memref<8x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<8x16xf32>, memref<32x16xf32>) outs(%c : memref<8x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
func.func @not_multiply_add(%a: memref<8x16xf32>, %b: memref<16x32xf32>, %c: memref<8x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<8x16xf32>, memref<16x32xf32>) outs(%c : memref<8x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %e = math.erf %x : f32
    %p = arith.mulf %e, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
func.func @f16(%a: memref<8x16xf16>, %b: memref<16x32xf16>, %c: memref<8x32xf16>) {
  linalg.matmul ins(%a, %b : memref<8x16xf16>, memref<16x32xf16>) outs(%c : memref<8x32xf16>)
  return
}

// -----

// C read through A (the same buffer): the accumulators could not stay in
// registers, so the product is left to the loop path.
// CHECK-LABEL: func.func @aliased
// CHECK-NOT: vector.
// CHECK: linalg.generic
func.func @aliased(%a: memref<8x32xf32>, %b: memref<32x32xf32>) {
  %c = memref.subview %a[0, 0] [8, 32] [1, 1] : memref<8x32xf32> to memref<8x32xf32, strided<[32, 1]>>
  linalg.matmul ins(%a, %b : memref<8x32xf32>, memref<32x32xf32>) outs(%c : memref<8x32xf32, strided<[32, 1]>>)
  return
}

// -----

// Rows known only at run time (a symbolic batch x sequence): full tiles of
// 8 rows up to the largest multiple of 8, then the rest one row at a
// time, both vectorized; the columns and K are static as before.
// CHECK-LABEL: func.func @run_time_rows
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG: %[[C8:.+]] = arith.constant 8 : index
// CHECK: %[[ROWS:.+]] = memref.dim %arg2, %[[C0]] : memref<?x32xf32>
// CHECK: %[[Q:.+]] = arith.divui %[[ROWS]], %[[C8]]
// CHECK: %[[FULL:.+]] = arith.muli %[[Q]], %[[C8]]
// CHECK: scf.for %[[M:.+]] = %[[C0]] to %[[FULL]] step %[[C8]] {
// CHECK:   vector.contract {{.*}} : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
// CHECK: scf.for %[[R:.+]] = %[[FULL]] to %[[ROWS]] step %[[C1]] {
// CHECK:   vector.contract {{.*}} : vector<1x1xf32>, vector<1x32xf32> into vector<1x32xf32>
// CHECK-NOT: linalg.generic
func.func @run_time_rows(%a: memref<?x64xf32>, %b: memref<64x32xf32>, %c: memref<?x32xf32>) {
  linalg.matmul ins(%a, %b : memref<?x64xf32>, memref<64x32xf32>) outs(%c : memref<?x32xf32>)
  return
}

// -----

// Any other size known only at run time (here K) keeps the plain loops.
// CHECK-LABEL: func.func @run_time_depth
// CHECK-NOT: vector.contract
// CHECK: linalg.generic
func.func @run_time_depth(%a: memref<8x?xf32>, %b: memref<?x32xf32>, %c: memref<8x32xf32>) {
  linalg.matmul ins(%a, %b : memref<8x?xf32>, memref<?x32xf32>) outs(%c : memref<8x32xf32>)
  return
}

// -----

// The accumulator in the memory plan's arena (a memref.view), and seen
// through a collapse_shape as a 1x1 convolution's output is: still read
// once before the K loop and written once after it, since no other
// access in the loop can reach its bytes (A and B are parameters).
// CHECK-LABEL: func.func @arena_accumulator
// CHECK: %[[VIEW:.+]] = memref.view
// CHECK: %[[FLAT:.+]] = memref.collapse_shape %[[VIEW]]
// CHECK: %[[ACC:.+]] = vector.transfer_read %[[FLAT]]
// CHECK: %[[SUM:.+]] = scf.for {{.*}} iter_args(%{{.+}} = %[[ACC]]) -> (vector<8x32xf32>) {
// CHECK-NOT: vector.transfer_write
// CHECK: scf.yield
// CHECK: vector.transfer_write %[[SUM]], %[[FLAT]]
func.func @arena_accumulator(%a: memref<16x8xf32>, %b: memref<8x64xf32>) -> memref<1x16x8x8xf32> {
  %c0 = arith.constant 0 : index
  %arena = memref.alloc() : memref<4096xi8>
  %view = memref.view %arena[%c0][] : memref<4096xi8> to memref<1x16x8x8xf32>
  %flat = memref.collapse_shape %view [[0, 1], [2, 3]] : memref<1x16x8x8xf32> into memref<16x64xf32>
  linalg.matmul ins(%a, %b : memref<16x8xf32>, memref<8x64xf32>) outs(%flat : memref<16x64xf32>)
  return %view : memref<1x16x8x8xf32>
}

// -----

// A read from the same arena at an offset known only at run time may
// share the accumulator's bytes: the accumulator stays in the K loop,
// read and written at every step.
// CHECK-LABEL: func.func @may_overlap
// CHECK: scf.for
// CHECK-NOT: iter_args
// CHECK: vector.transfer_read
// CHECK: vector.transfer_write
func.func @may_overlap(%b: memref<8x64xf32>, %offset: index) -> memref<16x64xf32> {
  %c0 = arith.constant 0 : index
  %arena = memref.alloc() : memref<8192xi8>
  %a = memref.view %arena[%offset][] : memref<8192xi8> to memref<16x8xf32>
  %c = memref.view %arena[%c0][] : memref<8192xi8> to memref<16x64xf32>
  linalg.matmul ins(%a, %b : memref<16x8xf32>, memref<8x64xf32>) outs(%c : memref<16x64xf32>)
  return %c : memref<16x64xf32>
}

// -----

// An outer product of views that add a unit dimension ([2, 4, 8] viewed
// [2, 4, 8, 1] and [2, 4, 1, 8]). Their tiles (vector<8x1>, vector<1x8>)
// span a dimension that shares its source dimension with another, so they
// stay reads of the views (a reinterpret_cast of each), not of the source
// buffers: upstream's fold would read the first one's tiles from the
// source's [4, 8] dimensions.
// CHECK-LABEL: func.func @unit_dim_views
// CHECK-DAG: %[[KC:.+]] = memref.reinterpret_cast %{{.+}} to offset: [0], sizes: [2, 4, 8, 1], strides: [32, 8, 1, 1]
// CHECK-DAG: %[[W:.+]] = memref.reinterpret_cast %{{.+}} to offset: [0], sizes: [2, 4, 1, 8], strides: [32, 8, 8, 1]
// CHECK: vector.transfer_read %[[KC]][%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}]{{.*}} : memref<2x4x8x1xf32>, vector<8x1xf32>
// CHECK: vector.transfer_read %[[W]][%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}]{{.*}} : memref<2x4x1x8xf32>, vector<1x8xf32>
// CHECK-NOT: memref<2x4x8xf32>, vector
func.func @unit_dim_views(%k: memref<2x4x8xf32>, %y: memref<2x4x8xf32>, %out: memref<2x4x8x8xf32>) {
  %kc = memref.expand_shape %k [[0], [1], [2, 3]] output_shape [2, 4, 8, 1] : memref<2x4x8xf32> into memref<2x4x8x1xf32>
  %w = memref.expand_shape %y [[0], [1, 2], [3]] output_shape [2, 4, 1, 8] : memref<2x4x8xf32> into memref<2x4x1x8xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%kc, %w : memref<2x4x8x1xf32>, memref<2x4x1x8xf32>) outs(%out : memref<2x4x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// bf16 products summed in f32 (loom-precision's matrix products): the
// same register tiles of f32 accumulators; the contraction reads the bf16
// operands, and its outer products widen A's column of the tile and B's
// row once per step of K (not A's broadcast tile element by element).
// CHECK-LABEL: func.func @bf16_products
// CHECK: %[[ACC:.+]] = vector.transfer_read %arg2{{.*}} : memref<16x32xf32>, vector<8x32xf32>
// CHECK: scf.for
// CHECK:   %[[A:.+]] = vector.transfer_read %arg0{{.*}} : memref<16x64xbf16>, vector<8x1xbf16>
// CHECK:   %[[B:.+]] = vector.transfer_read %arg1{{.*}} : memref<64x32xbf16>, vector<1x32xbf16>
// CHECK:   vector.contract {{.*}} %[[A]], %[[B]], %{{.+}} : vector<8x1xbf16>, vector<1x32xbf16> into vector<8x32xf32>
// OUTER-LABEL: func.func @bf16_products
// OUTER: %[[WA:.+]] = arith.extf %{{.+}} : vector<8xbf16> to vector<8xf32>
// OUTER: %[[WB:.+]] = arith.extf %{{.+}} : vector<32xbf16> to vector<32xf32>
// OUTER: vector.outerproduct %[[WA]], %[[WB]], %{{.+}} {kind = #vector.kind<add>} : vector<8xf32>, vector<32xf32>
// OUTER-NOT: arith.extf {{.*}} vector<8x32xbf16>
func.func @bf16_products(%a: memref<16x64xbf16>, %b: memref<64x32xbf16>, %c: memref<16x32xf32>) {
  linalg.matmul ins(%a, %b : memref<16x64xbf16>, memref<64x32xbf16>) outs(%c : memref<16x32xf32>)
  return
}
