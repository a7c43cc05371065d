// RUN: loom-opt %s --split-input-file --loom-cpu-im2col | FileCheck %s --check-prefix=IM2COL
// RUN: loom-opt %s --split-input-file --loom-cpu-pack-dot-product-weights | FileCheck %s --check-prefix=PACK
// RUN: loom-opt %s --split-input-file --loom-cpu-vectorize-dot-products=parallel-flops=1000 -canonicalize | FileCheck %s --check-prefix=TILES

// A byte convolution (convert-loom-to-linalg's byte-products form) with 4
// output positions becomes a byte product, position-major: the windows
// copied as bytes into col[n*oh*ow, c*kh*kw], the filter transposed at
// compile time to [c*kh*kw, f], the product keeping the convolution's body,
// its [positions, channels] transposed to NCHW.
// IM2COL-LABEL: func.func @few_positions
// IM2COL: %[[COL:.+]] = linalg.generic {{.+}} ins(%{{.+}} : tensor<1x1x4x4xi8>) outs(%{{.+}} : tensor<1x2x2x1x3x3xi8>)
// IM2COL: %[[ROWS:.+]] = tensor.collapse_shape %[[COL]] {{\[\[}}0, 1, 2], [3, 4, 5]] : tensor<1x2x2x1x3x3xi8> into tensor<4x9xi8>
// IM2COL: %[[FILTER:.+]] = arith.constant dense<{{\[\[}}1, -1], [2, -2], [3, -3], [4, -4], [5, -5], [6, -6], [7, -7], [8, -8], [9, -9]]> : tensor<9x2xi8>
// IM2COL: %[[PRODUCT:.+]] = linalg.generic {{.+}} ins(%[[ROWS]], %[[FILTER]] : tensor<4x9xi8>, tensor<9x2xi8>) outs(%{{.+}} : tensor<4x2xi32>)
// IM2COL: arith.extui
// IM2COL: arith.extsi
// IM2COL: linalg.transpose ins(%{{.+}} : tensor<1x4x2xi32>) outs(%{{.+}} : tensor<1x2x4xi32>) permutation = [0, 2, 1]
// IM2COL-NOT: linalg.generic {{.+}} tensor<1x1x4x4xi8>, tensor<2x1x3x3xi8>
#in = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 + d5, d3 + d6)>
#filter = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>
#out = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
func.func @few_positions(%x: tensor<1x1x4x4xi8>) -> tensor<1x2x2x2xi32> {
  %w = arith.constant dense<[[[[1, 2, 3], [4, 5, 6], [7, 8, 9]]], [[[-1, -2, -3], [-4, -5, -6], [-7, -8, -9]]]]> : tensor<2x1x3x3xi8>
  %zero = arith.constant 0 : i32
  %empty = tensor.empty() : tensor<1x2x2x2xi32>
  %init = linalg.fill ins(%zero : i32) outs(%empty : tensor<1x2x2x2xi32>) -> tensor<1x2x2x2xi32>
  %y = linalg.generic {indexing_maps = [#in, #filter, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %w : tensor<1x1x4x4xi8>, tensor<2x1x3x3xi8>) outs(%init : tensor<1x2x2x2xi32>) {
  ^bb0(%a: i8, %b: i8, %acc: i32):
    %0 = arith.extui %a : i8 to i32
    %1 = arith.extsi %b : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  } -> tensor<1x2x2x2xi32>
  return %y : tensor<1x2x2x2xi32>
}

// With 16 positions or more (one image), channel-major, as for other
// convolutions: w[f, c*kh*kw] times col[c*kh*kw, oh*ow] (the windows copied
// as bytes, each row a run of positions) into [f, oh*ow], already NCHW; the
// weight is the signed left operand, the activation the unsigned right one.
// IM2COL-LABEL: func.func @many_positions
// IM2COL: %[[COL:.+]] = linalg.generic {{.+}} ins(%{{.+}} : tensor<1x1x6x6xi8>) outs(%{{.+}} : tensor<1x1x3x3x4x4xi8>)
// IM2COL: %[[COLUMNS:.+]] = tensor.collapse_shape %[[COL]] {{\[\[}}0, 1, 2, 3], [4, 5]] : tensor<1x1x3x3x4x4xi8> into tensor<9x16xi8>
// IM2COL: %[[W:.+]] = tensor.collapse_shape %{{.+}} {{\[\[}}0], [1, 2, 3]] : tensor<2x1x3x3xi8> into tensor<2x9xi8>
// IM2COL: linalg.generic {{.+}} ins(%[[W]], %[[COLUMNS]] : tensor<2x9xi8>, tensor<9x16xi8>) outs(%{{.+}} : tensor<2x16xi32>)
// IM2COL-NEXT: ^bb0(%[[WB:.+]]: i8, %[[XB:.+]]: i8, %{{.+}}: i32):
// IM2COL-NEXT: arith.extsi %[[WB]] : i8 to i32
// IM2COL-NEXT: arith.extui %[[XB]] : i8 to i32
// IM2COL-NOT: linalg.transpose
func.func @many_positions(%x: tensor<1x1x6x6xi8>) -> tensor<1x2x4x4xi32> {
  %w = arith.constant dense<[[[[1, 2, 3], [4, 5, 6], [7, 8, 9]]], [[[-1, -2, -3], [-4, -5, -6], [-7, -8, -9]]]]> : tensor<2x1x3x3xi8>
  %zero = arith.constant 0 : i32
  %empty = tensor.empty() : tensor<1x2x4x4xi32>
  %init = linalg.fill ins(%zero : i32) outs(%empty : tensor<1x2x4x4xi32>) -> tensor<1x2x4x4xi32>
  %y = linalg.generic {indexing_maps = [#in, #filter, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %w : tensor<1x1x6x6xi8>, tensor<2x1x3x3xi8>) outs(%init : tensor<1x2x4x4xi32>) {
  ^bb0(%a: i8, %b: i8, %acc: i32):
    %0 = arith.extui %a : i8 to i32
    %1 = arith.extsi %b : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  } -> tensor<1x2x4x4xi32>
  return %y : tensor<1x2x4x4xi32>
}

// -----

// A byte product's constant [K = 5, N = 17] weight stored as [ceil(17 /
// 16), ceil(5 / 4), 16, 4]: lane j of block b, group g holds B[4g .. 4g+3]
// [16b + j], zero past K and N (block 0: 00 01 02 03 then 01 01 01 01 in
// group 0, 04 00 00 00 then 01 00 00 00 in group 1; block 1: column 16's
// 08 01 01 01 and 01 00 00 00, the other lanes zero); the product reads it
// through the packed map.
// PACK-DAG: #[[PACKED:.+]] = affine_map<(d0, d1, d2) -> (d1 floordiv 16, d2 floordiv 4, d1 mod 16, d2 mod 4)>
// PACK-LABEL: func.func @byte_matmul
// PACK: %[[W:.+]] = arith.constant dense<"0x00010203010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101010101040000000100000001000000010000000100000001000000010000000100000001000000010000000100000001000000010000000100000001000000010000000801010100000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000001000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"> : tensor<2x2x16x4xi8>
// PACK: linalg.generic {indexing_maps = [#{{.+}}, #[[PACKED]], #{{.+}}], {{.+}}} ins(%{{.+}}, %[[W]] : tensor<3x5xi8>, tensor<2x2x16x4xi8>) outs(%{{.+}} : tensor<3x17xi32>)
// PACK-NEXT: ^bb0
// PACK-NEXT: arith.extui
// PACK-NOT: tensor<5x17xi8>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @byte_matmul(%a: tensor<3x5xi8>, %init: tensor<3x17xi32>) -> tensor<3x17xi32> {
  %w = arith.constant dense<[[0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 8], [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1], [2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1], [3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1], [4, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]]> : tensor<5x17xi8>
  %y = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %w : tensor<3x5xi8>, tensor<5x17xi8>) outs(%init : tensor<3x17xi32>) {
  ^bb0(%x: i8, %v: i8, %acc: i32):
    %0 = arith.extui %x : i8 to i32
    %1 = arith.extsi %v : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  } -> tensor<3x17xi32>
  return %y : tensor<3x17xi32>
}

// -----

// The tiles of a packed byte product on buffers with M = 18 (two tiles of
// 8 rows, then one of 2), N = 40 (a pair of blocks, then a block of which
// 8 lanes are C's), K = 10 (a loop over two groups of four, then a group of
// two read masked). 2 * 18 * 40 * 10 operations pass parallel-flops=1000,
// and with one pair of blocks the row tiles are the parallel loop.
// TILES-LABEL: func.func @byte_tiles
// TILES: %[[B:.+]] = memref.collapse_shape %{{.+}} {{\[\[}}0], [1], [2, 3]] : memref<3x3x16x4xi8> into memref<3x3x64xi8>
// TILES: scf.parallel (%[[ROW:.+]]) = (%{{.+}}) to (%{{.+}}) step (%{{.+}})
// TILES: vector.load %{{.+}}[%[[ROW]], %{{.+}}] : memref<18x40xi32>, vector<16xi32>
// TILES: scf.for
// TILES: vector.load %[[B]][%{{.+}}, %{{.+}}, %{{.+}}] : memref<3x3x64xi8>, vector<64xi8>
// TILES: vector.load %{{.+}} : memref<18x10xi8>, vector<4xi8>
// TILES: vector.bitcast %{{.+}} : vector<4xi8> to vector<1xi32>
// TILES: vector.broadcast %{{.+}} : i32 to vector<16xi32>
// TILES: vector.bitcast %{{.+}} : vector<16xi32> to vector<64xi8>
// TILES: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%{{.+}}, %{{.+}}, %{{.+}}) : (vector<16xi32>, vector<64xi8>, vector<64xi8>) -> vector<16xi32>
// TILES: scf.yield
// TILES: vector.constant_mask [2] : vector<4xi1>
// TILES: vector.maskedload %{{.+}} : memref<18x10xi8>, vector<4xi1>, vector<4xi8> into vector<4xi8>
// TILES: vector.store %{{.+}} : memref<18x40xi32>, vector<16xi32>
// TILES: vector.constant_mask [8] : vector<16xi1>
// TILES: vector.maskedstore
// TILES-NOT: linalg.generic
#pa = affine_map<(d0, d1, d2) -> (d0, d2)>
#pb = affine_map<(d0, d1, d2) -> (d1 floordiv 16, d2 floordiv 4, d1 mod 16, d2 mod 4)>
#pc = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @byte_tiles(%a: memref<18x10xi8>, %b: memref<3x3x16x4xi8>, %c: memref<18x40xi32>) {
  linalg.generic {indexing_maps = [#pa, #pb, #pc], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<18x10xi8>, memref<3x3x16x4xi8>) outs(%c : memref<18x40xi32>) {
  ^bb0(%x: i8, %v: i8, %acc: i32):
    %0 = arith.extui %x : i8 to i32
    %1 = arith.extsi %v : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  }
  return
}

// -----

// Unsigned columns (a convolution's channel-major form): a weight [M = 3,
// K = 6] times an activation's columns [K, N = 20]. For each tile column
// (a block of 16, then one of 4 lanes) the panel of B is interleaved at
// run time: four rows of 16 bytes (masked past N, zero past K) shuffled
// into 64 bytes, lane j holding its column's four bytes; the tiles read
// it and pass it to vpdpbusd as the unsigned operand, the weight's four
// bytes broadcast as the signed one.
// TILES-LABEL: func.func @column_tiles
// TILES: %[[PANEL:.+]] = memref.alloc() {alignment = 64 : i64} : memref<1x2x64xi8>
// TILES: vector.load %{{.+}} : memref<6x20xi8>, vector<16xi8>
// TILES: vector.interleave %{{.+}}, %{{.+}} : vector<16xi8> -> vector<32xi8>
// TILES: %[[QUADS:.+]] = vector.shuffle %{{.+}}, %{{.+}} [0, 1, 32, 33, 2, 3, 34, 35, {{.+}}] : vector<32xi8>, vector<32xi8>
// TILES: vector.store %[[QUADS]], %[[PANEL]]
// TILES: %[[B:.+]] = vector.load %[[PANEL]][%{{.+}}, %{{.+}}, %{{.+}}] : memref<1x2x64xi8>, vector<64xi8>
// TILES: %[[A:.+]] = vector.bitcast %{{.+}} : vector<16xi32> to vector<64xi8>
// TILES: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%{{.+}}, %[[B]], %[[A]])
// TILES: memref.dealloc %[[PANEL]]
// TILES: vector.maskedload %{{.+}} : memref<6x20xi8>, vector<16xi1>, vector<16xi8> into vector<16xi8>
// TILES-NOT: linalg.generic
#wa = affine_map<(d0, d1, d2) -> (d0, d2)>
#wb = affine_map<(d0, d1, d2) -> (d2, d1)>
#wc = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @column_tiles(%w: memref<3x6xi8>, %x: memref<6x20xi8>, %c: memref<3x20xi32>) {
  linalg.generic {indexing_maps = [#wa, #wb, #wc], iterator_types = ["parallel", "parallel", "reduction"]} ins(%w, %x : memref<3x6xi8>, memref<6x20xi8>) outs(%c : memref<3x20xi32>) {
  ^bb0(%a: i8, %b: i8, %acc: i32):
    %0 = arith.extsi %a : i8 to i32
    %1 = arith.extui %b : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  }
  return
}
