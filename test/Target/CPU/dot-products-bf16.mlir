// RUN: loom-opt %s --split-input-file --loom-cpu-pack-dot-product-weights | FileCheck %s --check-prefix=PACK
// RUN: loom-opt %s --split-input-file --loom-cpu-pack-dot-product-weights=amx-bf16=1 | FileCheck %s --check-prefix=AMXPACK
// RUN: loom-opt %s --split-input-file --loom-cpu-vectorize-dot-products -canonicalize | FileCheck %s --check-prefix=TILES
// RUN: loom-opt %s --split-input-file --loom-cpu-vectorize-dot-products=amx-bf16=1 -canonicalize | FileCheck %s --check-prefix=AMX

// bf16 products summed in f32 (loom-precision's contractions) are dot
// products: a constant weight is stored the way vdpbf16ps reads it,
// [ceil(N / 16), ceil(K / 2), 16, 2] (lane j of a block's group g holds
// B[2g][16b + j] and B[2g + 1][16b + j]); for AMX tiles K is padded to
// whole steps of 32 (16 groups).
// PACK-LABEL: func.func @weight
// The first lane of the first block: B[0][0] = -3 (0xC040) then
// B[1][0] = 3 (0x4040), little-endian.
// PACK: arith.constant dense<"0x40C04040{{[0-9A-F]+}}"> : tensor<2x2x16x2xbf16>
// PACK: linalg.generic {{.+}} ins(%{{.+}}, %{{.+}} : tensor<5x3xbf16>, tensor<2x2x16x2xbf16>) outs(%{{.+}} : tensor<5x18xf32>)
// PACK-NEXT: ^bb0
// PACK-NEXT: arith.extf
// AMXPACK-LABEL: func.func @weight
// AMXPACK: tensor<2x16x16x2xbf16>
func.func @weight(%a: tensor<5x3xbf16>) -> tensor<5x18xf32> {
  %w = arith.constant dense<[[-3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0], [3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0], [2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0, -2.0]]> : tensor<3x18xbf16>
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<5x18xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<5x18xf32>) -> tensor<5x18xf32>
  %y = linalg.matmul ins(%a, %w : tensor<5x3xbf16>, tensor<3x18xbf16>) outs(%init : tensor<5x18xf32>) -> tensor<5x18xf32>
  return %y : tensor<5x18xf32>
}

// -----

// On buffers, the packed product becomes register tiles of vdpbf16ps: per
// group of two steps of K, each row's pair of A broadcast to the 16 lanes
// against B's 64-byte block. With amx-bf16, a packed B that holds K in
// fewer than whole steps of 32 stays on vector registers.
// TILES-LABEL: func.func @packed
// TILES: llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"(%{{.+}}) : (vector<16xf32>, vector<32xbf16>, vector<32xbf16>) -> vector<16xf32>
// AMX-LABEL: func.func @packed
// AMX-NOT: tileloadd
// AMX: llvm.x86.avx512bf16.dpbf16ps.512
// AMX-NOT: tileloadd
// AMX: return
#a = affine_map<(m, n, k) -> (m, k)>
#packed = affine_map<(m, n, k) -> (n floordiv 16, k floordiv 2, n mod 16, k mod 2)>
#c = affine_map<(m, n, k) -> (m, n)>
func.func @packed(%a: memref<5x3xbf16>, %b: memref<2x2x16x2xbf16>, %c: memref<5x18xf32>) {
  linalg.generic {indexing_maps = [#a, #packed, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<5x3xbf16>, memref<2x2x16x2xbf16>) outs(%c : memref<5x18xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %0 = arith.extf %x : bf16 to f32
    %1 = arith.extf %y : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  return
}

// -----

// A B that is not a constant is interleaved at run time into a panel per
// pair of blocks, [blocks, ceil(K / 2), 32], read by every row tile.
// TILES-LABEL: func.func @panels
// TILES: %[[PANEL:.+]] = memref.alloc() {{.+}} : memref<2x35x32xbf16>
// TILES: vector.interleave %{{.+}}, %{{.+}} : vector<16xbf16> -> vector<32xbf16>
// TILES: vector.store %{{.+}}, %[[PANEL]]
// TILES: scf.for
// TILES: vector.load %[[PANEL]]
// TILES: llvm.x86.avx512bf16.dpbf16ps.512
// On AMX every tile is 16 rows x 64 bytes: A (37 x 70) is copied into a
// zeroed 48 x 96, C (37 x 45) into a 48 x 48 and back, the panels hold
// 48 groups (K = 96), the last 13 zeroed; 2 x 2 C tiles cross K in steps
// of 32.
// AMX-LABEL: func.func @panels
// AMX: %[[A:.+]] = memref.alloc() {{.+}} : memref<48x96xbf16>
// AMX: linalg.fill ins(%{{.+}} : bf16) outs(%[[A]] : memref<48x96xbf16>)
// AMX: linalg.copy ins(%arg0 : memref<37x70xbf16>)
// AMX: %[[C:.+]] = memref.alloc() {{.+}} : memref<48x48xf32>
// AMX: linalg.copy ins(%arg2 : memref<37x45xf32>)
// AMX: memref.alloc() {{.+}} : memref<2x48x32xbf16>
// AMX: scf.for %{{.+}} = %c0 to %c13
// AMX: llvm.call_intrinsic "llvm.x86.tileloadd64.internal"(%c16_i16, %c64_i16, %{{.+}}, %c192_i64) : (i16, i16, !llvm.ptr, i64) -> !llvm.x86_amx
// AMX: scf.for %{{.+}} = %c0 to %c96 step %c32 iter_args({{.+}}) -> (!llvm.x86_amx, !llvm.x86_amx, !llvm.x86_amx, !llvm.x86_amx)
// AMX: llvm.call_intrinsic "llvm.x86.tdpbf16ps.internal"(%c16_i16, %c64_i16, %c64_i16,
// AMX: llvm.call_intrinsic "llvm.x86.tilestored64.internal"
// AMX: linalg.copy ins(%{{.+}} : memref<37x45xf32, strided<[48, 1]>>) outs(%arg2 : memref<37x45xf32>)
// AMX: memref.dealloc %[[C]]
// AMX: memref.dealloc %[[A]]
func.func @panels(%a: memref<37x70xbf16>, %b: memref<70x45xbf16>, %c: memref<37x45xf32>) {
  linalg.matmul ins(%a, %b : memref<37x70xbf16>, memref<70x45xbf16>) outs(%c : memref<37x45xf32>)
  return
}

// -----

// Batch loops run one 2-D product after another on views.
// TILES-LABEL: func.func @batched
// TILES: scf.for %[[I:.+]] = %c0 to %c3
// TILES: memref.subview %arg0[%[[I]], 0, 0] [1, 7, 24] [1, 1, 1]
// TILES: memref.subview %arg1[%[[I]], 0, 0] [1, 24, 40] [1, 1, 1]
// TILES: memref.subview %arg2[%[[I]], 0, 0] [1, 7, 40] [1, 1, 1]
// TILES: llvm.x86.avx512bf16.dpbf16ps.512
func.func @batched(%a: memref<3x7x24xbf16>, %b: memref<3x24x40xbf16>, %c: memref<3x7x40xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<3x7x24xbf16>, memref<3x24x40xbf16>) outs(%c : memref<3x7x40xf32>)
  return
}
