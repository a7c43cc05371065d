// RUN: loom-opt %s --split-input-file --loom-cpu-lower-to-llvm | FileCheck %s

// Results become out-parameters and every memref a bare pointer: the
// entry is void(ptr in, ptr out). The result buffer is the out-parameter
// itself (no allocation, no copy).
// CHECK-LABEL: llvm.func @main
// CHECK-SAME: (%{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr)
// CHECK-NOT: llvm.call @_mlir_memref_to_llvm_alloc
// CHECK: llvm.fadd
// CHECK-NOT: llvm.call @_mlir_memref_to_llvm_alloc
// CHECK: llvm.return
func.func @main(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %e = tensor.empty() : tensor<4x3xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<4x3xf32>, tensor<3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// -----

// Temporaries are freed; math functions without an LLVM intrinsic call
// libm; constants become globals.
// CHECK-DAG: llvm.mlir.global private constant @{{.+}}(dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>)
// CHECK-DAG: llvm.func @erfcf(f32) -> f32
// CHECK-LABEL: llvm.func @temporaries
// CHECK: %[[BUF:.+]] = llvm.call @_mlir_memref_to_llvm_alloc
// CHECK: llvm.call @erfcf
// CHECK: llvm.call @_mlir_memref_to_llvm_free(%[[BUF]])
func.func @temporaries(%a: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %w = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  // A row sum: a reduction does not fuse into its consumer, so its result
  // is a temporary buffer.
  %t = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%a : tensor<2x4xf32>) outs(%f : tensor<2xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %x, %o : f32
    linalg.yield %s : f32
  } -> tensor<2xf32>
  %e2 = tensor.empty() : tensor<2x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%a, %t, %w : tensor<2x4xf32>, tensor<2xf32>, tensor<2xf32>) outs(%e2 : tensor<2x4xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32, %o: f32):
    %s = arith.divf %x, %y : f32
    %u = arith.addf %s, %z : f32
    %v = math.erfc %u : f32
    linalg.yield %v : f32
  } -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}

// -----

// exp, erf and tanh in f32 are inline polynomial approximations, on
// vectors (loom-cpu-vectorize-elementwise); f64 keeps LLVM's exp
// intrinsic, on vectors too (LLVM calls libm per lane).
// CHECK-LABEL: llvm.func @activations
// CHECK-NOT: llvm.call
// CHECK-NOT: {{llvm.intr.exp\(.*f32}}
// CHECK: llvm.intr.exp({{.*}}) : (vector<{{[0-9]+}}xf64>) -> vector<{{[0-9]+}}xf64>
// CHECK-NOT: llvm.call
// CHECK: llvm.return
func.func @activations(%a: tensor<16xf32>, %b: tensor<16xf64>) -> (tensor<16xf32>, tensor<16xf64>) {
  %e = tensor.empty() : tensor<16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%a : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %u = math.erf %x : f32
    %v = math.exp %u : f32
    %w = math.tanh %v : f32
    linalg.yield %w : f32
  } -> tensor<16xf32>
  %e2 = tensor.empty() : tensor<16xf64>
  %r2 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%b : tensor<16xf64>) outs(%e2 : tensor<16xf64>) {
  ^bb0(%x: f64, %o: f64):
    %v = math.exp %x : f64
    linalg.yield %v : f64
  } -> tensor<16xf64>
  return %r, %r2 : tensor<16xf32>, tensor<16xf64>
}

// -----

// A matrix product becomes vector FMAs on whole rows of a register tile
// (the tiles themselves: vectorize-contractions.mlir).
// CHECK-LABEL: llvm.func @matmul
// CHECK: llvm.intr.fmuladd({{.*}}) : (vector<{{[0-9]+}}xf32>, vector<{{[0-9]+}}xf32>, vector<{{[0-9]+}}xf32>) -> vector<{{[0-9]+}}xf32>
// CHECK-NOT: llvm.call @_mlir_memref_to_llvm_alloc
// CHECK: llvm.return
func.func @matmul(%a: tensor<16x64xf32>, %b: tensor<64x64xf32>) -> tensor<16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<16x64xf32>, tensor<64x64xf32>) outs(%f : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %r : tensor<16x64xf32>
}
