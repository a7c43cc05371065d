//===- RewriteUtils.h - Builders shared by the graph passes ----*- C++ -*-===//

#ifndef LOOM_DIALECT_LOOM_TRANSFORMS_REWRITEUTILS_H
#define LOOM_DIALECT_LOOM_TRANSFORMS_REWRITEUTILS_H

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/IR/Builders.h"

namespace loom {

/// `value` reshaped to the static `shape` by a loom.reshape with a constant
/// shape operand; `value` itself when it has that shape already.
inline mlir::Value reshapeTo(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::Value value, llvm::ArrayRef<int64_t> shape) {
  auto type = llvm::cast<mlir::RankedTensorType>(value.getType());
  if (type.getShape() == shape)
    return value;
  auto shapeType =
      mlir::RankedTensorType::get({int64_t(shape.size())}, b.getI64Type());
  mlir::Value shapeValue = ConstantOp::create(
      b, loc, mlir::DenseElementsAttr::get(shapeType, shape));
  return ReshapeOp::create(b, loc, type.clone(shape), value, shapeValue,
                           /*allowzero=*/false);
}

} // namespace loom

#endif // LOOM_DIALECT_LOOM_TRANSFORMS_REWRITEUTILS_H
