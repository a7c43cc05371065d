// RUN: loom-opt %s --split-input-file --loom-cuda-map-to-blocks="block-size=128" | FileCheck %s

// A matrix product: its parallel loops (i, j) collapse into one loop of 4*16
// iterations, tiled by 128: the tile loop is the grid's blocks, the loop in
// a tile the block's threads, guarded past the end; the reduction over k
// stays a loop in the thread.
// CHECK-LABEL: func.func @matmul
// CHECK: scf.parallel (%[[B:.*]]) =
// CHECK: scf.parallel (%[[T:.*]]) =
// CHECK: %[[I:.*]] = arith.addi
// CHECK: scf.if
// CHECK: scf.for
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]
// CHECK: mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]
// CHECK-NOT: linalg.
func.func @matmul(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>) {
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  return
}

// -----

// A reduction to a scalar has no parallel loop: one block of one thread
// runs it.
// CHECK-LABEL: func.func @sum
// CHECK: scf.parallel
// CHECK: scf.parallel
// CHECK: scf.for
// CHECK: processor = thread_x
// CHECK: processor = block_x
func.func @sum(%x: memref<100xf32>, %out: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                  iterator_types = ["reduction"]}
      ins(%x : memref<100xf32>) outs(%out : memref<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A copy between strided views is a kernel like the rest.
// CHECK-LABEL: func.func @strided_copy
// CHECK-NOT: memref.copy
// CHECK: processor = block_x
func.func @strided_copy(%x: memref<8x8xf32>, %y: memref<4x8xf32>) {
  %v = memref.subview %x[0, 0] [4, 8] [2, 1] : memref<8x8xf32> to memref<4x8xf32, strided<[16, 1]>>
  memref.copy %v, %y : memref<4x8xf32, strided<[16, 1]>> to memref<4x8xf32>
  return
}

// -----

// A parallel dimension inside a reduction (a sum over the middle axis):
// the outer parallel loop is the grid; the reduction and the parallel loop
// inside it run as loops in the thread, so the whole nest becomes one
// launch.
// CHECK-LABEL: func.func @parallel_inside_reduction
// CHECK: scf.parallel
// CHECK: scf.parallel
// CHECK: scf.if
// CHECK: scf.for
// CHECK: scf.for
// CHECK-NOT: scf.parallel
// CHECK: processor = thread_x
// CHECK: processor = block_x
// RUN: loom-opt %s --split-input-file --loom-cuda-map-to-blocks --convert-parallel-loops-to-gpu --loom-cuda-check-host-code | FileCheck %s --check-prefix=LAUNCH
// LAUNCH-LABEL: func.func @parallel_inside_reduction
// LAUNCH: gpu.launch
// LAUNCH-NOT: scf.parallel
func.func @parallel_inside_reduction(%x: memref<32x2x64xf32>, %y: memref<32x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>],
                  iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x : memref<32x2x64xf32>) outs(%y : memref<32x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  return
}
