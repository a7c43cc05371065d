// RUN: loom-opt %s --split-input-file --loom-cpu-lower-to-llvm | FileCheck %s

// A large matrix product (256x256x256, 33.5 MFLOP) is forked once: one
// OpenMP parallel region around one work-sharing loop over its tiles,
// lowered to the LLVM dialect (the OpenMP ops stay, for the translation
// to calls into the OpenMP runtime).
// CHECK-LABEL: llvm.func @large
// CHECK: omp.parallel {
// CHECK-NEXT: omp.wsloop {
// CHECK-NEXT: omp.loop_nest
// CHECK: llvm.intr.fmuladd
// CHECK: omp.yield
// CHECK: omp.terminator
// CHECK-NOT: omp.parallel
// CHECK: llvm.return
func.func @large(%a: tensor<256x256xf32>, %b: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x256xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
  %r = linalg.matmul ins(%a, %b : tensor<256x256xf32>, tensor<256x256xf32>) outs(%f : tensor<256x256xf32>) -> tensor<256x256xf32>
  return %r : tensor<256x256xf32>
}

// -----

// A small one (16x64x64, 0.13 MFLOP) runs on the calling thread alone.
// CHECK-LABEL: llvm.func @small
// CHECK-NOT: omp.
// CHECK: llvm.return
func.func @small(%a: tensor<16x64xf32>, %b: tensor<64x64xf32>) -> tensor<16x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<16x64xf32>, tensor<64x64xf32>) outs(%f : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %r : tensor<16x64xf32>
}

// -----

// A large elementwise op (1024x1024, 2^20 points): one OpenMP loop over
// chunks of its rows (loom-cpu-parallelize-loops), whose serial inner loops
// compute the chunk.
// CHECK-LABEL: llvm.func @elementwise
// CHECK: omp.parallel {
// CHECK-NEXT: omp.wsloop {
// CHECK-NEXT: omp.loop_nest
// CHECK: llvm.fadd
// CHECK: omp.yield
// CHECK: omp.terminator
// CHECK-NOT: omp.parallel
// CHECK: llvm.return
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @elementwise(%a: tensor<1024x1024xf32>, %b: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %e = tensor.empty() : tensor<1024x1024xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<1024x1024xf32>, tensor<1024x1024xf32>) outs(%e : tensor<1024x1024xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<1024x1024xf32>
  return %r : tensor<1024x1024xf32>
}
