// RUN: loom-opt %s --split-input-file --loom-cpu-vectorize-contractions="vector-bits=512 registers=32 lower-contractions=false" | FileCheck %s

// A contraction of at least parallel-flops (default 2^20) operations has
// its outermost loop of independent iterations parallel. Here (64x512x512,
// 33.5 MFLOP, B of 1 MiB) that is the loop over panels of B's columns:
// each iteration copies into a panel of its own, and the K blocks stay a
// sequential loop inside it. The shared panel is not allocated.
// CHECK-LABEL: func.func @panels
// CHECK-NOT: memref.alloc
// CHECK: scf.parallel (%[[NB:.+]]) = (%{{.+}}) to (%{{.+}}) step (%[[C256:[^ ]+]]) {
// CHECK:   %[[PANEL:.+]] = memref.alloc() {alignment = 64 : i64} : memref<256x256xf32>
// CHECK:   scf.for %[[KB:.+]] = %{{.+}} to %{{.+}} step %[[C256]] {
// CHECK:     %[[SRC:.+]] = memref.subview %arg1[%[[KB]], %[[NB]]] [256, 256] [1, 1]
// CHECK:     linalg.copy ins(%[[SRC]] : {{.*}}) outs(%[[PANEL]] : memref<256x256xf32>)
// CHECK-NOT: scf.parallel
// CHECK:     vector.contract {{.*}} into vector<8x32xf32>
// CHECK:   memref.dealloc %[[PANEL]]
// CHECK:   scf.reduce
// CHECK-NOT: scf.parallel
// CHECK: return
func.func @panels(%a: memref<64x512xf32>, %b: memref<512x512xf32>, %c: memref<64x512xf32>) {
  linalg.matmul ins(%a, %b : memref<64x512xf32>, memref<512x512xf32>) outs(%c : memref<64x512xf32>)
  return
}

// -----

// B small enough to stay in cache (no panels): the row tiles are the
// parallel loop (256x64x64, 2.1 MFLOP).
// CHECK-LABEL: func.func @rows
// CHECK: scf.parallel (%[[M:.+]]) = (%{{.+}}) to (%{{.+}}) step (%{{.+}}) {
// CHECK:   scf.for %[[N:.+]] =
// CHECK:     vector.transfer_read %arg2[%[[M]], %[[N]]]{{.*}} vector<8x32xf32>
// CHECK:     scf.for
// CHECK:       vector.contract {{.*}} into vector<8x32xf32>
// CHECK:   scf.reduce
// CHECK-NOT: scf.parallel
// CHECK: return
func.func @rows(%a: memref<256x64xf32>, %b: memref<64x64xf32>, %c: memref<256x64xf32>) {
  linalg.matmul ins(%a, %b : memref<256x64xf32>, memref<64x64xf32>) outs(%c : memref<256x64xf32>)
  return
}

// -----

// Batches are independent: the batch loop is the parallel one.
// CHECK-LABEL: func.func @batched
// CHECK: scf.parallel (%[[BATCH:.+]]) =
// CHECK:   vector.transfer_read %arg2[%[[BATCH]], %{{.+}}, %{{.+}}]{{.*}} vector<8x32xf32>
// CHECK-NOT: scf.parallel
// CHECK: return
func.func @batched(%a: memref<16x64x64xf32>, %b: memref<16x64x64xf32>, %c: memref<16x64x64xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<16x64x64xf32>, memref<16x64x64xf32>) outs(%c : memref<16x64x64xf32>)
  return
}

// -----

// Below the threshold (20x64x72, 0.18 MFLOP) the loops stay sequential:
// forking threads would cost more than the work.
// CHECK-LABEL: func.func @small
// CHECK-NOT: scf.parallel
// CHECK: return
func.func @small(%a: memref<20x64xf32>, %b: memref<64x72xf32>, %c: memref<20x72xf32>) {
  linalg.matmul ins(%a, %b : memref<20x64xf32>, memref<64x72xf32>) outs(%c : memref<20x72xf32>)
  return
}

// -----

// Rows known only at run time (x 256 x 256, 131072 operations a row): the
// whole row tiles are the parallel loop when, at run time, there are two
// or more and they reach parallel-flops (8 rows here); else, and for the
// rows left after them, serial loops.
// CHECK-LABEL: func.func @run_time_rows
// CHECK: %[[ROWS:.+]] = memref.dim %arg2, %c0
// CHECK: %[[FULL:.+]] = arith.muli
// CHECK: %[[ENOUGH:.+]] = arith.cmpi uge, %[[ROWS]], %c8
// CHECK: %[[TWO:.+]] = arith.cmpi uge, %[[FULL]], %c16
// CHECK: %[[WORTH:.+]] = arith.andi %[[ENOUGH]], %[[TWO]]
// CHECK: scf.if %[[WORTH]] {
// CHECK:   scf.parallel (%[[M:.+]]) = (%{{.+}}) to (%[[FULL]]) step (%c8{{.*}}) {
// CHECK:     vector.contract {{.*}} into vector<8x32xf32>
// CHECK:     scf.reduce
// CHECK: } else {
// CHECK:   scf.for %{{.+}} = %{{.+}} to %[[FULL]] step %c8
// CHECK:     vector.contract {{.*}} into vector<8x32xf32>
// CHECK: }
// CHECK-NOT: scf.parallel
// CHECK: scf.for %{{.+}} = %[[FULL]] to %[[ROWS]] step %c1
// CHECK:   vector.contract {{.*}} into vector<1x32xf32>
// CHECK-NOT: scf.parallel
// CHECK: return
func.func @run_time_rows(%a: memref<?x256xf32>, %b: memref<256x256xf32>, %c: memref<?x256xf32>) {
  linalg.matmul ins(%a, %b : memref<?x256xf32>, memref<256x256xf32>) outs(%c : memref<?x256xf32>)
  return
}

// -----

// A large contraction inside a parallel loop already (attention's items)
// forks nothing more.
// CHECK-LABEL: func.func @nested
// CHECK: scf.parallel
// CHECK-NOT: scf.parallel
// CHECK: vector.contract {{.*}} into vector<8x32xf32>
// CHECK-NOT: scf.parallel
// CHECK: return
func.func @nested(%a: memref<4x256x256xf32>, %b: memref<256x256xf32>, %c: memref<4x256x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %x = memref.subview %a[%i, 0, 0] [1, 256, 256] [1, 1, 1] : memref<4x256x256xf32> to memref<256x256xf32, strided<[256, 1], offset: ?>>
    %y = memref.subview %c[%i, 0, 0] [1, 256, 256] [1, 1, 1] : memref<4x256x256xf32> to memref<256x256xf32, strided<[256, 1], offset: ?>>
    linalg.matmul ins(%x, %b : memref<256x256xf32, strided<[256, 1], offset: ?>>, memref<256x256xf32>) outs(%y : memref<256x256xf32, strided<[256, 1], offset: ?>>)
    scf.reduce
  }
  return
}
