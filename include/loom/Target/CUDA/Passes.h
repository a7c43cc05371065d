//===- Passes.h - Passes of the CUDA target ---------------------*- C++ -*-===//

#ifndef LOOM_TARGET_CUDA_PASSES_H
#define LOOM_TARGET_CUDA_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace loom::cuda {

/// Marks an entry parameter that holds one of the model's inputs (host
/// memory, copied to the device by loom-cuda-device-buffers).
inline constexpr llvm::StringLiteral kInputAttr = "loom.input";

/// Maps the one dimension of `loop` to `processor` (gpu.block_id x,
/// gpu.thread_id x): how convert-parallel-loops-to-gpu learns what becomes
/// the grid and what the block.
void mapToProcessor(mlir::scf::ParallelOp loop, mlir::gpu::Processor processor);

#define GEN_PASS_DECL
#include "loom/Target/CUDA/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "loom/Target/CUDA/Passes.h.inc"

} // namespace loom::cuda

#endif // LOOM_TARGET_CUDA_PASSES_H
