//===- CUDATarget.h - Compiling loom programs for NVIDIA GPUs ---*- C++ -*-===//
//
// The CUDA target: the shared graph pipeline and loom->linalg lowering,
// then kernels mapped to blocks of threads (loom-cuda-map-to-blocks), the
// program's buffers in device memory (loom-cuda-device-buffers), kernels
// compiled through MLIR's NVVM path to one cubin per rank (LLVM's NVPTX
// backend, then the toolkit's ptxas), and host code that launches them
// through the runtime's device layer (runtime/src/drivers/cuda). What is
// done and what is not: docs/cuda.md.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TARGET_CUDA_CUDATARGET_H
#define LOOM_TARGET_CUDA_CUDATARGET_H

#include "loom/Target/Target.h"

#include <memory>
#include <string>

namespace loom::cuda {

/// The CUDA target's own options.
struct CUDAOptions {
  /// The GPU architectures the kernels are compiled for, comma-separated
  /// ("sm_80,sm_90a": A100 and H100/H200). With several, the engine holds
  /// one fat binary with a cubin for each.
  std::string chips = "sm_80,sm_90a";
  /// The CUDA toolkit whose ptxas assembles the kernels.
  std::string toolkit = "/usr/local/cuda";
  /// Threads per block of the generated kernels.
  int64_t blockSize = 256;
  /// Testing without a GPU: the kernels as mapped to blocks and threads
  /// (loom-cuda-map-to-blocks) but lowered for this CPU, their loops run
  /// sequentially, in an ordinary CPU engine. Proves the mapping (the
  /// collapsed, tiled, guarded loops) numerically; what only the device
  /// does (memory spaces, copies, launches) it does not.
  bool emulateOnHost = false;
};

/// The lowering from linalg on tensors (the entry `@loom_main`, weights
/// already parameters) to the LLVM dialect with the kernels as a
/// `gpu.binary` (see the header comment). Registered as
/// `loom-cuda-lower-to-llvm` for loom-opt.
void buildLinalgToLLVMPipeline(mlir::OpPassManager &pm,
                               const CUDAOptions &options);

/// The same mapping lowered for this CPU (CUDAOptions::emulateOnHost).
void buildHostEmulationPipeline(mlir::OpPassManager &pm,
                                const CUDAOptions &options);

/// The first part of it: bufferized, buffers in device memory, kernels as
/// `gpu.launch` (`loomc --target=cuda --emit=gpu`).
void buildBuffersAndLaunchesPipeline(mlir::OpPassManager &pm,
                                     const CUDAOptions &options);

std::unique_ptr<Target> createCUDATarget(const CUDAOptions &options);

/// Adds the target ("cuda") and its command-line options to the registry.
void registerCUDATarget();

/// Registers `loom-cuda-lower-to-llvm` and `loom-cuda-buffers-and-launches`
/// with mlir-opt style drivers.
void registerCUDAPipelines();

/// The dialects and interfaces the pipeline needs (gpu, nvvm, the NVVM
/// target attribute, the GPU translations to LLVM IR).
void registerCUDADialects(mlir::DialectRegistry &registry);

} // namespace loom::cuda

#endif // LOOM_TARGET_CUDA_CUDATARGET_H
