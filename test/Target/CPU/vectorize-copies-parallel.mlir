// RUN: loom-opt %s --split-input-file --loom-cpu-vectorize-copies=vector-bits=512 | FileCheck %s

// A copy of at least parallel-bytes (default 1 MiB; here im2col's window
// copy for 64 channels of 56x56 with a 3x3 window, 7.2 MB) has its
// outermost loop of two or more iterations parallel: the batch loop has
// one iteration, so the channel loop.
// CHECK-LABEL: func.func @window
// CHECK: scf.parallel (%[[C:.+]]) = (%{{.+}}) to (%{{.+}}) step (%{{.+}}) {
// CHECK:   scf.for %[[KH:.+]] =
// CHECK:     vector.transfer_write %{{.+}}, %arg1[%{{.+}}, %[[C]], %[[KH]],
// CHECK:   scf.reduce
// CHECK-NOT: scf.parallel
// CHECK: return
#in = affine_map<(n, c, kh, kw, oh, ow) -> (n, c, oh + kh, ow + kw)>
#out = affine_map<(n, c, kh, kw, oh, ow) -> (n, c, kh, kw, oh, ow)>
func.func @window(%x: memref<1x64x58x58xf32>, %col: memref<1x64x3x3x56x56xf32>) {
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%x : memref<1x64x58x58xf32>) outs(%col : memref<1x64x3x3x56x56xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

// Below 1 MiB (256 KiB): sequential loops.
// CHECK-LABEL: func.func @small
// CHECK-NOT: scf.parallel
// CHECK: return
func.func @small(%a: memref<256x256xf32>, %b: memref<256x256xf32>) {
  linalg.copy ins(%a : memref<256x256xf32>) outs(%b : memref<256x256xf32>)
  return
}

// -----

// Already inside a parallel loop (as a panel copy of a parallel
// contraction would be): no nested parallel loop.
// CHECK-LABEL: func.func @nested
// CHECK: scf.parallel
// CHECK-NOT: scf.parallel
// CHECK: return
func.func @nested(%a: memref<2x1024x1024xf32>, %b: memref<2x1024x1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  scf.parallel (%i) = (%c0) to (%c2) step (%c1) {
    %s = memref.subview %a[%i, 0, 0] [1, 1024, 1024] [1, 1, 1] : memref<2x1024x1024xf32> to memref<1024x1024xf32, strided<[1024, 1], offset: ?>>
    %d = memref.subview %b[%i, 0, 0] [1, 1024, 1024] [1, 1, 1] : memref<2x1024x1024xf32> to memref<1024x1024xf32, strided<[1024, 1], offset: ?>>
    linalg.copy ins(%s : memref<1024x1024xf32, strided<[1024, 1], offset: ?>>) outs(%d : memref<1024x1024xf32, strided<[1024, 1], offset: ?>>)
    scf.reduce
  }
  return
}
