// RUN: loom-opt %s --split-input-file --loom-cuda-map-to-blocks --loom-cuda-device-buffers | FileCheck %s
// RUN: loom-opt %s --split-input-file --loom-cuda-map-to-blocks --loom-cuda-device-buffers --convert-parallel-loops-to-gpu --loom-cuda-check-host-code | FileCheck %s --check-prefix=LAUNCH

// The input is copied to the device when the call starts, the output
// computed on the device and copied back before the return; the weight is
// used where it is (the runtime passes its device copy); the temporary is a
// device buffer.
// CHECK-LABEL: func.func @entry
// CHECK-SAME: (%[[X:.*]]: memref<64xf32> {loom.input}, %[[W:.*]]: memref<64xf32> {loom.weight}, %[[Y:.*]]: memref<64xf32>)
// CHECK: %[[DX:.*]] = gpu.alloc () : memref<64xf32>
// CHECK: gpu.memcpy %[[DX]], %[[X]]
// CHECK: %[[DY:.*]] = gpu.alloc () : memref<64xf32>
// CHECK: %[[T:.*]] = gpu.alloc () : memref<64xf32>
// CHECK: memref.load %[[DX]]
// CHECK: memref.load %[[W]]
// CHECK: memref.store {{.*}}, %[[T]]
// CHECK: memref.load %[[T]]
// CHECK: memref.store {{.*}}, %[[DY]]
// CHECK: gpu.dealloc %[[T]]
// CHECK: gpu.memcpy %[[Y]], %[[DY]]
// CHECK-DAG: gpu.dealloc %[[DX]]
// CHECK-DAG: gpu.dealloc %[[DY]]
// CHECK: return
// LAUNCH-LABEL: func.func @entry
// LAUNCH-COUNT-2: gpu.launch blocks
// LAUNCH-NOT: gpu.launch
#id = affine_map<(d0) -> (d0)>
func.func @entry(%x: memref<64xf32> {loom.input}, %w: memref<64xf32> {loom.weight},
                 %y: memref<64xf32>) {
  %t = memref.alloc() : memref<64xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%x, %w : memref<64xf32>, memref<64xf32>) outs(%t : memref<64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.mulf %a, %b : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%t : memref<64xf32>) outs(%y : memref<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = math.exp %a : f32
    linalg.yield %s : f32
  }
  memref.dealloc %t : memref<64xf32>
  return
}

// -----

// Host code that reads one element of a device buffer (an index a check
// looks at): a one-thread kernel copies it into a one-element device
// buffer, which is copied to the host's stack and read there.
// CHECK-LABEL: func.func @scalar_read
// CHECK: gpu.alloc () : memref<8xi64>
// CHECK: %[[OUT:.*]] = gpu.alloc () : memref<1xi64>
// CHECK: %[[D:.*]] = gpu.alloc () : memref<1xi64>
// CHECK: %[[H:.*]] = memref.alloca() : memref<1xi64>
// CHECK: scf.parallel
// CHECK: memref.load
// CHECK: memref.store {{.*}}, %[[D]]
// CHECK: processor = block_x
// CHECK: gpu.memcpy %[[H]], %[[D]]
// CHECK: gpu.dealloc %[[D]]
// CHECK: memref.load %[[H]]
// CHECK: gpu.memcpy %{{.*}}, %[[OUT]]
// LAUNCH-LABEL: func.func @scalar_read
// LAUNCH: gpu.launch blocks
// LAUNCH: memref.load %{{.*}}[%{{.*}}] : memref<1xi64>
func.func @scalar_read(%x: memref<8xi64> {loom.input}, %y: memref<1xi64>) {
  %c3 = arith.constant 3 : index
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c3] : memref<8xi64>
  %d = arith.addi %v, %v : i64
  memref.store %d, %y[%c0] : memref<1xi64>
  return
}

// -----

// An op the host would run against device memory is an error, not a crash
// where the engine runs.
// RUN: not loom-opt %s --split-input-file --loom-cuda-check-host-code 2>&1 | FileCheck %s --check-prefix=ERROR
// ERROR: error: the CUDA target would run this op on the host, against device memory; it has no device form yet
func.func @left_on_host(%x: memref<8xf32>, %y: memref<8xf32>) {
  linalg.copy ins(%x : memref<8xf32>) outs(%y : memref<8xf32>)
  return
}
