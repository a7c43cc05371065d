// RUN: loom-opt %s --loom-cpu-vectorize-copies=vector-bits=512 | FileCheck %s

// im2col's window copy: loops over all but the innermost dimension, which
// is one transfer of a whole row of 8 (the input row it reads is offset
// by kw).
// CHECK-DAG: #[[ROW:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d2 + d4)>
// CHECK-DAG: #[[COLUMN:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d3 + d5)>
// CHECK-DAG: #[[STRIDED:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d5 * 2 + d3)>
// CHECK-LABEL: func.func @window
// CHECK: scf.for %[[C:.+]] =
// CHECK: scf.for %[[KH:.+]] =
// CHECK: scf.for %[[KW:.+]] =
// CHECK: scf.for %[[OH:.+]] =
// CHECK: %[[Y:.+]] = affine.apply #[[ROW]](%{{.+}}, %[[C]], %[[KH]], %[[KW]], %[[OH]], %{{.+}})
// CHECK: %[[X:.+]] = affine.apply #[[COLUMN]](%{{.+}}, %[[C]], %[[KH]], %[[KW]], %[[OH]], %{{.+}})
// CHECK: %[[V:.+]] = vector.transfer_read %arg0[%{{.+}}, %{{.+}}, %[[Y]], %[[X]]]{{.*}} : memref<1x3x10x10xf32>, vector<8xf32>
// CHECK: vector.transfer_write %[[V]], %arg1[%{{.+}}, %[[C]], %[[KH]], %[[KW]], %[[OH]], %{{.+}}]
// CHECK-NOT: linalg.generic

// A copy out of a strided view: rows of 100 as 3 x 32 and 4.
// CHECK-LABEL: func.func @rows
// CHECK: scf.for
// CHECK: scf.for {{.*}} step %{{.+}} {
// CHECK: vector.transfer_read {{.*}} vector<32xf32>
// CHECK: vector.transfer_read {{.*}} vector<4xf32>
// CHECK-NOT: linalg.copy

// A strided convolution's window (stride 2): each piece of a row reads
// the contiguous run from its first element to its last (15 elements for
// 8, a masked load of 16 with the last lane off) and keeps every second
// one (#STRIDED above: the column 2 * ow + kw).
// CHECK-LABEL: func.func @strided_window
// CHECK: %[[X:.+]] = affine.apply #[[STRIDED]](
// CHECK: %[[MASK:.+]] = vector.constant_mask [15] : vector<16xi1>
// CHECK: %[[PIECE:.+]] = vector.maskedload %arg0[%{{.+}}, %{{.+}}, %{{.+}}, %[[X]]], %[[MASK]], %{{.+}} : memref<1x3x17x17xf32>, vector<16xi1>, vector<16xf32> into vector<16xf32>
// CHECK: %[[ROW:.+]] = vector.shuffle %[[PIECE]], %[[PIECE]] [0, 2, 4, 6, 8, 10, 12, 14] : vector<16xf32>, vector<16xf32>
// CHECK: vector.transfer_write %[[ROW]], %arg1
// CHECK-NOT: linalg.generic

// Left alone: a strided innermost dimension, a window of stride 5 (more
// than it would pay to read and drop), and a transpose.
// CHECK-LABEL: func.func @stride_5_window
// CHECK: linalg.generic
// CHECK-LABEL: func.func @strided(
// CHECK: linalg.copy
// CHECK-LABEL: func.func @transpose
// CHECK: linalg.generic
func.func @window(%x: memref<1x3x10x10xf32>, %col: memref<1x3x3x3x8x8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(n, c, kh, kw, oh, ow) -> (n, c, oh + kh, ow + kw)>, affine_map<(n, c, kh, kw, oh, ow) -> (n, c, kh, kw, oh, ow)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<1x3x10x10xf32>) outs(%col : memref<1x3x3x3x8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}
func.func @rows(%x: memref<4x100xf32, strided<[128, 1], offset: ?>>, %y: memref<4x100xf32>) {
  linalg.copy ins(%x : memref<4x100xf32, strided<[128, 1], offset: ?>>) outs(%y : memref<4x100xf32>)
  return
}
func.func @strided_window(%x: memref<1x3x17x17xf32>, %col: memref<1x3x3x3x8x8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(n, c, kh, kw, oh, ow) -> (n, c, oh * 2 + kh, ow * 2 + kw)>, affine_map<(n, c, kh, kw, oh, ow) -> (n, c, kh, kw, oh, ow)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<1x3x17x17xf32>) outs(%col : memref<1x3x3x3x8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}
func.func @stride_5_window(%x: memref<1x3x40x40xf32>, %col: memref<1x3x3x3x8x8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(n, c, kh, kw, oh, ow) -> (n, c, oh * 5 + kh, ow * 5 + kw)>, affine_map<(n, c, kh, kw, oh, ow) -> (n, c, kh, kw, oh, ow)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<1x3x40x40xf32>) outs(%col : memref<1x3x3x3x8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}
func.func @strided(%x: memref<4x100xf32, strided<[100, 2]>>, %y: memref<4x100xf32>) {
  linalg.copy ins(%x : memref<4x100xf32, strided<[100, 2]>>) outs(%y : memref<4x100xf32>)
  return
}
func.func @transpose(%x: memref<16x16xf32>, %y: memref<16x16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<16x16xf32>) outs(%y : memref<16x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}
