//===- KernelUtils.h - Helpers shared by the reference kernels --*- C++ -*-===//

#ifndef LOOM_LIB_REFERENCE_KERNELUTILS_H
#define LOOM_LIB_REFERENCE_KERNELUTILS_H

#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Reference/Interpreter.h"

#include "mlir/IR/Operation.h"

namespace loom::reference {

/// The element kind of result `i` (ops are verified, so it is supported).
inline ElementKind resultKind(mlir::Operation *op, unsigned i = 0) {
  return *getElementKind(mlir::getElementTypeOrSelf(op->getResult(i)));
}

/// The static type of result `i`.
inline mlir::RankedTensorType resultType(mlir::Operation *op, unsigned i = 0) {
  return mlir::cast<mlir::RankedTensorType>(op->getResult(i).getType());
}

/// numpy broadcast of two run-time shapes; nullopt when they do not
/// broadcast.
std::optional<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b);

/// The linear index into a tensor of `shape`, broadcast to `outShape`, of the
/// element at multi-index `outIndex` of the output.
int64_t broadcastSourceIndex(llvm::ArrayRef<int64_t> outIndex,
                             llvm::ArrayRef<int64_t> shape);

/// Calls `fn(linear, index)` for every multi-index of `shape` in row-major
/// order.
void forEachIndex(
    llvm::ArrayRef<int64_t> shape,
    llvm::function_ref<void(int64_t, llvm::ArrayRef<int64_t>)> fn);

/// Row-major linear index of `index` in `shape`.
int64_t linearIndex(llvm::ArrayRef<int64_t> index,
                    llvm::ArrayRef<int64_t> shape);

/// Maps a possibly negative axis into [0, rank).
inline int64_t normalizedAxis(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

/// `axis` normalized into [0, rank); an error at `op` when out of range.
mlir::FailureOr<int64_t> getAxis(mlir::Operation *op, int64_t axis,
                                 int64_t rank);

/// The values of a small integer tensor (shapes, axes, pads, ...).
llvm::SmallVector<int64_t> toInts(const Tensor &t);

/// numpy matmul of `a` and `b` (both float or both integer) into a tensor
/// of `kind`; run-time shape errors are reported at `op`.
mlir::FailureOr<Tensor> computeMatMul(mlir::Operation *op, const Tensor &a,
                                      const Tensor &b, ElementKind kind);

/// loom.conv of `x` and `w` (plus the optional `bias`) into a tensor of
/// `kind`; run-time shape errors are reported at `op`.
mlir::FailureOr<Tensor> computeConv(mlir::Operation *op, const Tensor &x,
                                    const Tensor &w, const Tensor *bias,
                                    llvm::ArrayRef<int64_t> strides,
                                    llvm::ArrayRef<int64_t> pads,
                                    llvm::ArrayRef<int64_t> dilations,
                                    int64_t group, ElementKind kind);

} // namespace loom::reference

#endif // LOOM_LIB_REFERENCE_KERNELUTILS_H
