//===- ShapeValues.h - What is known of shape arithmetic ---*- C++ -*-===//
//
// Exporters compute reshape and expand targets at run time from the input's
// own sizes (`view(*x.shape[:-1], -1, head_dim)`): Shape, Gather, Concat,
// Mul, Where of small int64 tensors. Folding constants leaves those that
// read a symbolic size unevaluated; this analysis still sees each element
// of such a 1-D value as a constant, as "the run-time size of dimension d
// of value v", or as unknown -- enough to type the result with the static
// sizes it really has (the heads and head size of attention, say) instead
// of all dimensions dynamic. The importer types reshapes with it; the
// partitioner proves with it which sizes a reshape keeps.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_IR_SHAPEVALUES_H
#define LOOM_DIALECT_LOOM_IR_SHAPEVALUES_H

#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace loom {

/// One element of an int64 shape value.
struct ShapeElement {
  /// Its value, when known at import time.
  std::optional<int64_t> constant;
  /// Otherwise, when known to be a run-time size: dimension `dim` of `of`.
  mlir::Value of;
  int64_t dim = -1;

  bool isSizeOf() const { return !constant && of; }
};

/// The elements of the 0-D or 1-D int64 value `shape` (a 0-D value has
/// one), or nullopt when their number is not known.
std::optional<llvm::SmallVector<ShapeElement>> shapeElements(mlir::Value shape);

/// Whether dimension `dimA` of `a` and dimension `dimB` of `b` are the same
/// run-time size: the same dimension of one value, followed back through
/// ops that keep it (matrix products' rows, transposes, casts, unary
/// elementwise ops, normalizations).
bool sameRunTimeSize(mlir::Value a, int64_t dimA, mlir::Value b, int64_t dimB);

} // namespace loom

#endif // LOOM_DIALECT_LOOM_IR_SHAPEVALUES_H
