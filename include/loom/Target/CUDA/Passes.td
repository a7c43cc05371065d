//===- Passes.td - Passes of the CUDA target ---------------*- tablegen -*-===//

#ifndef LOOM_TARGET_CUDA_PASSES_TD
#define LOOM_TARGET_CUDA_PASSES_TD

include "mlir/Pass/PassBase.td"

def LoomCUDAMapToBlocksPass
    : Pass<"loom-cuda-map-to-blocks", "::mlir::func::FuncOp"> {
  let summary = "Linalg ops on buffers become loops over blocks of threads";
  let description = [{
    Every linalg op of the function (on buffers) becomes a parallel loop
    nest (`scf.parallel` over its parallel dimensions, `scf.for` over its
    reductions). The outermost parallel loop of each is collapsed to one
    dimension and tiled by `block-size`: the tile loop is mapped to the
    blocks of a grid (x), the loop inside a tile to the threads of a block
    (x), guarded where the last tile runs past the end. Parallel loops
    nested deeper run sequentially in their thread. An op without parallel
    dimensions (a reduction to a scalar) runs in one thread of one block.
    `memref.copy` becomes `linalg.copy` first, so copies between strided
    views are kernels like the rest.

    This is the first form of kernel formation for the GPU: one thread per
    output element, reductions sequential in their thread. It is correct
    for every op; tiling into shared memory, warp reductions and tensor
    cores come later (docs/cuda.md).
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block">,
  ];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::scf::SCFDialect",
  ];
}

def LoomCUDADeviceBuffersPass
    : Pass<"loom-cuda-device-buffers", "::mlir::func::FuncOp"> {
  let summary = "Keep the entry's buffers in device memory";
  let description = [{
    On the entry function (bufferized, results as out-parameters): every
    `memref.alloc` becomes `gpu.alloc` and every `memref.dealloc`
    `gpu.dealloc`. Inputs (parameters marked `loom.input`) are copied to a
    device buffer when the call starts; outputs (the out-parameters) are
    computed in a device buffer and copied to the caller's when it ends.
    Weights (parameters marked `loom.weight`) are used as they are: the
    runtime uploads them to the device once, when it loads the engine, and
    passes their device addresses. Constants kept in the code
    (`memref.get_global`) are copied to the device when the call starts.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def LoomCUDACheckHostCodePass
    : Pass<"loom-cuda-check-host-code", "::mlir::func::FuncOp"> {
  let summary = "Fail where host code would touch device memory";
  let description = [{
    After the parallel loops became `gpu.launch`: any op left outside a
    launch that reads or writes a buffer's elements (a load or store, a
    linalg op, a vector transfer) would run on the host against device
    memory. Such an op is an error naming it, rather than a crash where
    the engine runs.
  }];
}

def LoomCUDAMergeKernelModulesPass
    : Pass<"loom-cuda-merge-kernel-modules", "::mlir::ModuleOp"> {
  let summary = "One gpu.module for all kernels";
  let description = [{
    Kernel outlining makes one `gpu.module` per kernel; each would become
    its own device binary, assembled separately and loaded separately. This
    pass moves every kernel into the first module (renamed where names
    collide) and points the launches at it: one binary per engine rank.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def LoomCUDAFatBinaryPass
    : Pass<"loom-cuda-fat-binary", "::mlir::ModuleOp"> {
  let summary = "One fat binary holding the cubin of every architecture";
  let description = [{
    `gpu-module-to-binary` gives a `gpu.binary` one object per target the
    kernels were compiled for (one cubin per architecture). This pass
    packs them into one fat binary with the toolkit's `fatbinary`: the
    driver picks the cubin of the GPU the engine runs on, so one engine
    runs on an A100 (sm_80) and an H200 (sm_90a) alike. A binary with one
    object is left as it is.
  }];
  let options = [
    Option<"toolkit", "toolkit", "std::string", /*default=*/"\"/usr/local/cuda\"",
           "The CUDA toolkit whose fatbinary packs the cubins">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

#endif // LOOM_TARGET_CUDA_PASSES_TD
