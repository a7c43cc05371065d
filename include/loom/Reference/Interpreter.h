//===- Interpreter.h - The reference executor -------------------*- C++ -*-===//
//
// Runs a function of loom-dialect (and graph-level upstream) ops on the CPU
// with plain kernels. It is Loom's oracle: every transformation is checked by
// running the program before and after it.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_REFERENCE_INTERPRETER_H
#define LOOM_REFERENCE_INTERPRETER_H

#include "loom/Reference/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringMap.h"

#include <functional>

namespace loom::reference {

/// A kernel computes the results of one op from its operand tensors. It
/// reports errors (unsupported attribute values, run-time shape problems)
/// with `op->emitError()` and returns failure.
using Kernel = std::function<mlir::LogicalResult(
    mlir::Operation *op, llvm::ArrayRef<const Tensor *> operands,
    llvm::SmallVectorImpl<Tensor> &results)>;

/// Op name ("loom.add") -> kernel.
class KernelRegistry {
public:
  void add(llvm::StringRef opName, Kernel kernel);
  const Kernel *lookup(llvm::StringRef opName) const;
  /// The registry with every kernel of the executor.
  static const KernelRegistry &get();

private:
  llvm::StringMap<Kernel> kernels;
};

// One registration function per kernel family (one file each).
void registerElementwiseKernels(KernelRegistry &registry);
void registerNNKernels(KernelRegistry &registry);
void registerReductionKernels(KernelRegistry &registry);
void registerShapeKernels(KernelRegistry &registry);
void registerUpstreamKernels(KernelRegistry &registry);

/// The value of a constant attribute (dense or dense_resource).
mlir::FailureOr<Tensor> tensorFromAttr(mlir::ElementsAttr attr,
                                       mlir::Location loc);

/// Runs `func` on `inputs`. Checks the inputs against the signature
/// (count, element type, static dimensions) and every result against its
/// op's static type; errors are emitted at the offending op.
mlir::FailureOr<llvm::SmallVector<Tensor>>
execute(mlir::func::FuncOp func, llvm::ArrayRef<Tensor> inputs);

} // namespace loom::reference

#endif // LOOM_REFERENCE_INTERPRETER_H
