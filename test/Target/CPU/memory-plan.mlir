// RUN: loom-opt %s --loom-cpu-memory-plan=report=true -split-input-file 2>&1 | FileCheck %s

// The figures of both functions come first (stderr):
// CHECK: loom-cpu-memory-plan: @reuse: 3 buffers, 576 bytes in all, arena 512 bytes
// CHECK: loom-cpu-memory-plan: @escapes: 1 buffers, 256 bytes in all, arena 256 bytes

// %a (16 bytes, rounded to 64) dies at its fill, before %b is allocated, so
// %b (256 bytes) takes its place at offset 0; %c lives while %b is read, so
// it goes after it, at 256: a 512-byte arena for 576 bytes of buffers.
// CHECK-LABEL: func.func @reuse
// CHECK: %[[ARENA:.*]] = memref.alloc() {alignment = 64 : i64} : memref<512xi8>
// CHECK: memref.view %[[ARENA]][%c0{{.*}}][] : memref<512xi8> to memref<4xf32>
// CHECK: memref.view %[[ARENA]][%c0{{.*}}][] : memref<512xi8> to memref<64xf32>
// CHECK: memref.view %[[ARENA]][%c256{{.*}}][] : memref<512xi8> to memref<64xf32>
// CHECK-NOT: memref.alloc()
// CHECK: return
func.func @reuse(%out: memref<64xf32>) {
  %cst = arith.constant 1.0 : f32
  %a = memref.alloc() : memref<4xf32>
  linalg.fill ins(%cst : f32) outs(%a : memref<4xf32>)
  %b = memref.alloc() : memref<64xf32>
  linalg.fill ins(%cst : f32) outs(%b : memref<64xf32>)
  %c = memref.alloc() : memref<64xf32>
  linalg.copy ins(%b : memref<64xf32>) outs(%c : memref<64xf32>)
  linalg.copy ins(%c : memref<64xf32>) outs(%out : memref<64xf32>)
  return
}

// -----

// A buffer whose address leaves as an integer (for a runtime call) keeps
// its own allocation; the other one is planned.
// CHECK-LABEL: func.func @escapes
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<256xi8>
// CHECK: memref.alloc() : memref<64xf32>
// CHECK: memref.extract_aligned_pointer_as_index
func.func @escapes(%out: memref<64xf32>) -> index {
  %cst = arith.constant 1.0 : f32
  %a = memref.alloc() : memref<64xf32>
  linalg.fill ins(%cst : f32) outs(%a : memref<64xf32>)
  %b = memref.alloc() : memref<64xf32>
  %p = memref.extract_aligned_pointer_as_index %b : memref<64xf32> -> index
  linalg.copy ins(%a : memref<64xf32>) outs(%out : memref<64xf32>)
  return %p : index
}
