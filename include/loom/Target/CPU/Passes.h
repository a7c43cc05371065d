//===- Passes.h - Passes of the CPU target ----------------------*- C++ -*-===//

#ifndef LOOM_TARGET_CPU_PASSES_H
#define LOOM_TARGET_CPU_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <functional>

namespace loom {
struct MemoryPlanRecord;
} // namespace loom

namespace loom::cpu {

/// Marks a convolution for a kernel library (`loom.library = "onednn"`).
inline constexpr llvm::StringLiteral kLibraryAttr = "loom.library";
/// Marks an entry parameter that holds a weight (a constant of the model).
inline constexpr llvm::StringLiteral kWeightAttr = "loom.weight";

#define GEN_PASS_DECL
#include "loom/Target/CPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "loom/Target/CPU/Passes.h.inc"

/// Called with each function's memory plan (reports).
using MemoryPlanObserver = std::function<void(const MemoryPlanRecord &)>;

/// The memory plan pass telling `observer` what it placed.
std::unique_ptr<mlir::Pass>
createLoomCPUMemoryPlanPass(const LoomCPUMemoryPlanPassOptions &options,
                            MemoryPlanObserver observer);

} // namespace loom::cpu

#endif // LOOM_TARGET_CPU_PASSES_H
