//===- ShapeUtils.cpp - Shape rules shared by loom ops --------------------===//

#include "loom/Dialect/Loom/IR/ShapeUtils.h"

#include "mlir/IR/Diagnostics.h"

using namespace mlir;

namespace loom {

FailureOr<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> lhs,
                                                ArrayRef<int64_t> rhs) {
  size_t rank = std::max(lhs.size(), rhs.size());
  SmallVector<int64_t> result(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Align from the trailing dimension; missing dimensions act as 1.
    int64_t a = i < rank - lhs.size() ? 1 : lhs[i - (rank - lhs.size())];
    int64_t b = i < rank - rhs.size() ? 1 : rhs[i - (rank - rhs.size())];
    if (a == 1) {
      result[i] = b;
    } else if (b == 1) {
      result[i] = a;
    } else if (ShapedType::isDynamic(a)) {
      result[i] = b;
    } else if (ShapedType::isDynamic(b) || a == b) {
      result[i] = a;
    } else {
      return failure();
    }
  }
  return result;
}

bool areShapesCompatible(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs) {
  if (lhs.size() != rhs.size())
    return false;
  for (auto [a, b] : llvm::zip(lhs, rhs))
    if (!ShapedType::isDynamic(a) && !ShapedType::isDynamic(b) && a != b)
      return false;
  return true;
}

bool areRefinedTypesCompatible(TypeRange lhs, TypeRange rhs) {
  if (lhs.size() != rhs.size())
    return false;
  for (auto [l, r] : llvm::zip(lhs, rhs)) {
    if (l == r)
      continue;
    // An unranked side is what inference gives when even the rank depends
    // on a dynamic dimension (gather_nd's index tuple length).
    if (isa<UnrankedTensorType>(l) || isa<UnrankedTensorType>(r)) {
      if (!isa<TensorType>(l) || !isa<TensorType>(r) ||
          cast<TensorType>(l).getElementType() !=
              cast<TensorType>(r).getElementType())
        return false;
      continue;
    }
    auto lt = dyn_cast<RankedTensorType>(l);
    auto rt = dyn_cast<RankedTensorType>(r);
    if (!lt || !rt || lt.getElementType() != rt.getElementType() ||
        !areShapesCompatible(lt.getShape(), rt.getShape()))
      return false;
  }
  return true;
}

LogicalResult inferBroadcastResult(MLIRContext *ctx,
                                   std::optional<Location> loc, Type lhs,
                                   Type rhs, bool boolResult,
                                   SmallVectorImpl<Type> &inferredTypes) {
  auto lt = dyn_cast<RankedTensorType>(lhs);
  auto rt = dyn_cast<RankedTensorType>(rhs);
  if (!lt || !rt)
    return emitOptionalError(loc, "expected ranked tensor operands");
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes(lt.getShape(), rt.getShape());
  if (failed(shape))
    return emitOptionalError(loc, "operand shapes ", lt, " and ", rt,
                             " do not broadcast");
  Type elementType =
      boolResult ? IntegerType::get(ctx, 1) : lt.getElementType();
  inferredTypes.push_back(RankedTensorType::get(*shape, elementType));
  return success();
}

LogicalResult verifyBroadcastOperands(Operation *op) {
  auto lt = cast<RankedTensorType>(op->getOperand(0).getType());
  auto rt = cast<RankedTensorType>(op->getOperand(1).getType());
  if (lt.getElementType() != rt.getElementType())
    return op->emitOpError("operands have different element types: ")
           << lt.getElementType() << " and " << rt.getElementType();
  return success();
}

std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

LogicalResult verifyAxis(Operation *op, int64_t axis, int64_t rank) {
  if (!normalizeAxis(axis, rank))
    return op->emitOpError("axis ")
           << axis << " is out of range for rank " << rank;
  return success();
}

LogicalResult verifyReductionAxes(Operation *op, ArrayRef<int64_t> axes) {
  auto type = cast<RankedTensorType>(op->getOperand(0).getType());
  llvm::SmallBitVector seen(type.getRank());
  for (int64_t axis : axes) {
    if (axis < 0 || axis >= type.getRank())
      return op->emitOpError("reduction axis ")
             << axis << " is out of range [0, " << type.getRank() << ")";
    if (seen.test(axis))
      return op->emitOpError("reduction axis ") << axis << " is repeated";
    seen.set(axis);
  }
  return success();
}

LogicalResult inferReductionResult(MLIRContext *ctx,
                                   std::optional<Location> loc, Type input,
                                   ArrayRef<int64_t> axes, bool keepdims,
                                   Type resultElementType,
                                   SmallVectorImpl<Type> &inferredTypes) {
  auto type = dyn_cast<RankedTensorType>(input);
  if (!type)
    return emitOptionalError(loc, "expected a ranked tensor operand");
  llvm::SmallBitVector reduced(type.getRank(), axes.empty());
  for (int64_t axis : axes) {
    if (axis < 0 || axis >= type.getRank())
      return emitOptionalError(loc, "reduction axis ", axis,
                               " is out of range");
    reduced.set(axis);
  }
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < type.getRank(); ++i) {
    if (!reduced.test(i))
      shape.push_back(type.getDimSize(i));
    else if (keepdims)
      shape.push_back(1);
  }
  inferredTypes.push_back(RankedTensorType::get(
      shape, resultElementType ? resultElementType : type.getElementType()));
  return success();
}

} // namespace loom
