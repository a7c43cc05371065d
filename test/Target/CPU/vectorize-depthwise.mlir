// RUN: loom-opt %s --split-input-file --loom-cpu-vectorize-depthwise="vector-bits=256 registers=8 parallel-flops=0" | FileCheck %s
// RUN: loom-opt %s --split-input-file --loom-cpu-vectorize-depthwise="vector-bits=256 registers=8 parallel-flops=1" | FileCheck %s --check-prefix=PARALLEL

// A 3x3 depthwise convolution with unit stride, its loops in the order
// loom-cpu-contraction-order leaves them (n, m, oh, c, kh, kw, ow): one
// loop over batch x filters that loads the nine weights once, a loop over
// rows, and per row a full piece of 8 and a remainder of 1, one block
// (8 registers: blocks of 2 pieces). Each piece reads its accumulator
// from the output; for each of the nine taps, both pieces add their input
// row piece times the tap's broadcast weight (multiplies and adds that
// may contract into FMAs); each piece is written once.
// CHECK-LABEL: func.func @unit_stride
// CHECK-NOT: linalg.generic
// CHECK: scf.for %[[PLANE:.+]] = %{{.+}} to %c16{{.*}} step
// CHECK-COUNT-9: memref.load %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] : memref<8x1x3x3xf32>
// CHECK: scf.for %[[ROW:.+]] = %{{.+}} to %c9{{.*}} step
// CHECK: vector.transfer_read %{{.+}} : memref<2x8x9x9xf32>, vector<8xf32>
// CHECK: vector.transfer_read %{{.+}} : memref<2x8x9x9xf32>, vector<1xf32>
// CHECK: vector.transfer_read %{{.+}} : memref<2x8x11x11xf32>, vector<8xf32>
// CHECK: arith.mulf %{{.+}}, %{{.+}} fastmath<contract> : vector<8xf32>
// CHECK: arith.addf %{{.+}}, %{{.+}} fastmath<contract> : vector<8xf32>
// CHECK: vector.transfer_read %{{.+}} : memref<2x8x11x11xf32>, vector<1xf32>
// CHECK: arith.mulf %{{.+}}, %{{.+}} fastmath<contract> : vector<1xf32>
// CHECK: arith.addf %{{.+}}, %{{.+}} fastmath<contract> : vector<1xf32>
// CHECK-COUNT-8: vector.transfer_read %{{.+}} : memref<2x8x11x11xf32>, vector<8xf32>
// CHECK: vector.transfer_write %{{.+}} : vector<8xf32>, memref<2x8x9x9xf32>
// CHECK: vector.transfer_write %{{.+}} : vector<1xf32>, memref<2x8x9x9xf32>
// PARALLEL-LABEL: func.func @unit_stride
// PARALLEL: scf.parallel
func.func @unit_stride(%x: memref<2x8x11x11xf32>, %w: memref<8x1x3x3xf32>, %y: memref<2x8x9x9xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d3, d2 + d4, d6 + d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%x, %w : memref<2x8x11x11xf32>, memref<8x1x3x3xf32>) outs(%y : memref<2x8x9x9xf32>) {
  ^bb0(%in: f32, %f: f32, %out: f32):
    %0 = arith.mulf %in, %f : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// Stride 2 in the loops' original order, with two filters per channel
// (the input channel is m floordiv 2). Rows of 12 outputs: a piece of 8
// reads 16 input elements and keeps every second one; the piece of 4
// after it, where a read of 8 would leave the row (the window's last
// column is the row's last), reads exactly 7.
// CHECK-LABEL: func.func @stride_two
// CHECK: scf.for %[[PLANE:.+]] = %{{.+}} to %c8{{.*}} step
// CHECK: %[[FILTER:.+]] = arith.remui %[[PLANE]], %c8
// CHECK: arith.divui %[[FILTER]], %c2
// CHECK: vector.transfer_read %{{.+}} : memref<1x4x9x25xf32>, vector<16xf32>
// CHECK: vector.shuffle %{{.+}}, %{{.+}} [0, 2, 4, 6, 8, 10, 12, 14] : vector<16xf32>, vector<16xf32>
// CHECK: vector.transfer_read %{{.+}} : memref<1x4x9x25xf32>, vector<7xf32>
// CHECK: vector.shuffle %{{.+}}, %{{.+}} [0, 2, 4, 6] : vector<7xf32>, vector<7xf32>
func.func @stride_two(%x: memref<1x4x9x25xf32>, %w: memref<8x1x3x3xf32>, %y: memref<1x8x4x12xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 floordiv 2 + d4, d2 * 2 + d5, d3 * 2 + d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %w : memref<1x4x9x25xf32>, memref<8x1x3x3xf32>) outs(%y : memref<1x8x4x12xf32>) {
  ^bb0(%in: f32, %f: f32, %out: f32):
    %0 = arith.mulf %in, %f : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// bf16 operands summed in f32 (loomc --bf16): the input pieces and the
// weights widened to f32, then the same pieces as in f32.
// CHECK-LABEL: func.func @stride_two_bf16
// CHECK: %[[W:.+]] = memref.load %{{.+}} : memref<8x1x3x3xbf16>
// CHECK: arith.extf %[[W]] : bf16 to f32
// CHECK: %[[IN:.+]] = vector.transfer_read %{{.+}} : memref<1x4x9x25xbf16>, vector<16xbf16>
// CHECK: %[[F32:.+]] = arith.extf %[[IN]] : vector<16xbf16> to vector<16xf32>
// CHECK: vector.shuffle %[[F32]], %[[F32]] [0, 2, 4, 6, 8, 10, 12, 14] : vector<16xf32>, vector<16xf32>
// CHECK-NOT: linalg.generic
func.func @stride_two_bf16(%x: memref<1x4x9x25xbf16>, %w: memref<8x1x3x3xbf16>, %y: memref<1x8x4x12xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 floordiv 2 + d4, d2 * 2 + d5, d3 * 2 + d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %w : memref<1x4x9x25xbf16>, memref<8x1x3x3xbf16>) outs(%y : memref<1x8x4x12xf32>) {
  ^bb0(%in: bf16, %f: bf16, %out: f32):
    %0 = arith.extf %in : bf16 to f32
    %1 = arith.extf %f : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  }
  return
}

// -----

// Rows of 40 outputs, five full pieces of 8: a loop over two blocks of
// two pieces (columns 0-31), then the last piece.
// CHECK-LABEL: func.func @long_rows
// CHECK: scf.for %[[AT:.+]] = %{{.+}} to %c32{{.*}} step %c16
// CHECK: %[[NEXT:.+]] = arith.addi %[[AT]], %c8
// CHECK: vector.transfer_read %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}, %[[AT]]]{{.*}} : memref<1x2x2x40xf32>, vector<8xf32>
// CHECK: vector.transfer_read %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}, %[[NEXT]]]{{.*}} : memref<1x2x2x40xf32>, vector<8xf32>
// CHECK: vector.transfer_write %{{.+}}, %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}, %[[NEXT]]]
// CHECK: vector.transfer_read %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}, %c32{{.*}}]{{.*}} : memref<1x2x2x40xf32>, vector<8xf32>
// CHECK-NOT: vector<4xf32>
func.func @long_rows(%x: memref<1x2x4x42xf32>, %w: memref<2x1x3x3xf32>, %y: memref<1x2x2x40xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d3 + d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %w : memref<1x2x4x42xf32>, memref<2x1x3x3xf32>) outs(%y : memref<1x2x2x40xf32>) {
  ^bb0(%in: f32, %f: f32, %out: f32):
    %0 = arith.mulf %in, %f : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// Not depthwise: 4 groups of 2 input channels each (the library's), and
// a max pooling look-alike. Both are left alone.
// CHECK-LABEL: func.func @not_depthwise
// CHECK-COUNT-2: linalg.generic
// CHECK-NOT: vector.transfer_read
func.func @not_depthwise(%x: memref<1x8x6x6xf32>, %w: memref<8x2x3x3xf32>, %y: memref<1x8x4x4xf32>, %v: memref<8x1x3x3xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, (d1 floordiv 2) * 2 + d4, d2 + d5, d3 + d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %w : memref<1x8x6x6xf32>, memref<8x2x3x3xf32>) outs(%y : memref<1x8x4x4xf32>) {
  ^bb0(%in: f32, %f: f32, %out: f32):
    %0 = arith.mulf %in, %f : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d3 + d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %v : memref<1x8x6x6xf32>, memref<8x1x3x3xf32>) outs(%y : memref<1x8x4x4xf32>) {
  ^bb0(%in: f32, %f: f32, %out: f32):
    %0 = arith.maximumf %in, %out : f32
    linalg.yield %0 : f32
  }
  return
}
