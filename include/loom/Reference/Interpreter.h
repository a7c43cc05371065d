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

#include <chrono>
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
void registerQuantKernels(KernelRegistry &registry);
void registerReductionKernels(KernelRegistry &registry);
void registerShapeKernels(KernelRegistry &registry);
void registerShardKernels(KernelRegistry &registry);
void registerUpstreamKernels(KernelRegistry &registry);

/// The calling rank's coordinate along `axis` of `grid` (resolved from
/// `op`); errors at `op` outside a rank or for an unknown grid or axis.
mlir::FailureOr<int64_t>
gridCoordinate(mlir::Operation *op, mlir::FlatSymbolRefAttr grid, int64_t axis);

/// The value of a constant attribute (dense or dense_resource).
mlir::FailureOr<Tensor> tensorFromAttr(mlir::ElementsAttr attr,
                                       mlir::Location loc);

/// A dense constant of `elementType` holding `tensor` (its static shape);
/// null when `elementType` is not the tensor's element kind.
mlir::DenseElementsAttr attrFromTensor(const Tensor &tensor,
                                       mlir::Type elementType);

/// Runs the kernel of the single op `op` on `operands` (one value per
/// operand, in order) and checks each result against its op's type, as a
/// run would. Errors, including "no kernel", are emitted at `op`. Ops with
/// regions run their bodies; shard ops run as the only rank of a one-device
/// grid when called outside executeRanks.
mlir::FailureOr<llvm::SmallVector<Tensor>>
evaluateOp(mlir::Operation *op, llvm::ArrayRef<Tensor> operands);

/// Runs `func` on `inputs`. Checks the inputs against the signature
/// (count, element type, static dimensions) and every result against its
/// op's static type; errors are emitted at the offending op. Values of
/// scalar types (`index`, from shard ops) are held as rank-0 tensors.
///
/// Outside executeRanks, the function runs as the only rank of a grid, so
/// shard ops work on grids of one device.
mlir::FailureOr<llvm::SmallVector<Tensor>>
execute(mlir::func::FuncOp func, llvm::ArrayRef<Tensor> inputs);

/// How executeRanks runs.
struct RankOptions {
  /// Bounds every wait of a rank for its peers (a collective, a receive):
  /// a deadlock ends the run with an error instead of hanging.
  std::chrono::milliseconds timeout{5000};
};

/// Runs `func` as an SPMD program on `numRanks` ranks, each on its own
/// thread with `inputs[rank]`; the shard ops of the function communicate
/// through an in-process communicator, and the grids they name must hold
/// `numRanks` devices. Returns every rank's outputs, or failure when any rank
/// fails: its errors are emitted first, prefixed with "rank N: ", then those
/// of the ranks it aborted.
mlir::FailureOr<llvm::SmallVector<llvm::SmallVector<Tensor>>>
executeRanks(mlir::func::FuncOp func, int64_t numRanks,
             llvm::ArrayRef<llvm::SmallVector<Tensor>> inputs,
             const RankOptions &options = {});

} // namespace loom::reference

#endif // LOOM_REFERENCE_INTERPRETER_H
