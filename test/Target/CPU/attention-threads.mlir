// RUN: loom-opt %s --convert-loom-to-linalg --loom-cpu-lower-to-llvm | FileCheck %s

// Attention in tiles runs one batch item and key/value head per iteration
// of an scf.forall, which becomes one OpenMP work-sharing loop over the
// 2 x 4 items and heads (collapsed). The tiles' products inside (here
// 32 x 128 x 128, 1 MFLOP, as large as a matrix product forked on its
// own) run on the thread of their iteration: no parallel region is nested
// in it, and there is no other.
// CHECK-LABEL: llvm.func @attention_threads
// CHECK: omp.parallel {
// CHECK-NEXT: omp.wsloop {
// CHECK-NEXT: omp.loop_nest (%{{.+}}, %{{.+}}) : i64 = {{.+}} collapse(2) {
// CHECK-NOT: omp.parallel
// CHECK: omp.yield
// CHECK: omp.terminator
// CHECK-NOT: omp.parallel
// CHECK: llvm.return
func.func @attention_threads(%q: tensor<2x4x256x128xf32>, %k: tensor<2x4x256x128xf32>, %v: tensor<2x4x256x128xf32>) -> tensor<2x4x256x128xf32> {
  %0 = loom.attention %q, %k, %v {is_causal = true} : (tensor<2x4x256x128xf32>, tensor<2x4x256x128xf32>, tensor<2x4x256x128xf32>) -> tensor<2x4x256x128xf32>
  return %0 : tensor<2x4x256x128xf32>
}
