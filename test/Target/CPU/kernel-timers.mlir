// RUN: loom-opt %s --loom-cpu-kernel-timers | FileCheck %s

// Each op that does work is bracketed by the runtime's timer calls: the
// index, then the label (kind and ONNX node names), the multiply-add
// operations counted 2 each (4x8x16 products: 1024) and the bytes its
// operands span. Views, allocations and scalar loads are not kernels.
// (The labels, "fill /model/MatMul" and "matmul /model/MatMul (+1 nodes)",
// are checked through loom-run --profile in test/Runtime/kernel-profile.test.)
// CHECK-DAG: memref.global "private" constant @__loom_kernel_label_0 : memref<19xi8> = dense<
// CHECK-DAG: func.func private @loom_rt_kernel_begin(i64)
// CHECK-DAG: func.func private @loom_rt_kernel_end(i64, i64, i64, i64)
// CHECK-LABEL: func.func @main
// CHECK: memref.alloc
// CHECK-NEXT: %[[I0:.+]] = arith.constant 0 : i64
// CHECK-NEXT: call @loom_rt_kernel_begin(%[[I0]])
// CHECK-NEXT: linalg.fill
// CHECK: %[[L0:.+]] = memref.get_global @__loom_kernel_label_0
// CHECK: %[[F0:.+]] = arith.constant 0 : i64
// CHECK: %[[B0:.+]] = arith.constant 128 : i64
// CHECK: call @loom_rt_kernel_end(%[[I0]], %{{.+}}, %[[F0]], %[[B0]])
// CHECK: %[[I1:.+]] = arith.constant 1 : i64
// CHECK-NEXT: call @loom_rt_kernel_begin(%[[I1]])
// CHECK-NEXT: linalg.matmul
// CHECK: %[[F1:.+]] = arith.constant 1024 : i64
// CHECK: %[[B1:.+]] = arith.constant 896 : i64
// CHECK: call @loom_rt_kernel_end(%[[I1]], %{{.+}}, %[[F1]], %[[B1]])
// CHECK: memref.load
// CHECK-NOT: loom_rt_kernel_begin
// CHECK: return
func.func @main(%a: memref<4x16xf32>, %b: memref<16x8xf32>, %out: memref<4x8xf32>, %i: memref<1xindex>) -> f32 {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %tmp = memref.alloc() : memref<4x8xf32>
  linalg.fill ins(%zero : f32) outs(%out : memref<4x8xf32>) loc("/model/MatMul")
  linalg.matmul ins(%a, %b : memref<4x16xf32>, memref<16x8xf32>) outs(%out : memref<4x8xf32>) loc(fused["/model/MatMul"("m.onnx":0:0), "/model/Add"("m.onnx":0:0)])
  %x = memref.load %out[%c0, %c0] : memref<4x8xf32>
  return %x : f32
}

