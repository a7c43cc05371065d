//===- BuilderUtils.h - Helpers shared by the op builders -------*- C++ -*-===//

#ifndef LOOM_LIB_IMPORTER_ONNX_BUILDERUTILS_H
#define LOOM_LIB_IMPORTER_ONNX_BUILDERUTILS_H

#include "NodeBinder.h"
#include "OpTable.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"

#include <algorithm>
#include <string>

namespace loom::onnx_import {

namespace detail {

/// The type an inferred op is built with until settleInferredType runs.
inline mlir::Type unsettledType(NodeBinder &b) {
  return mlir::NoneType::get(b.context());
}

/// A ranked tensor of dynamic sizes standing in for a result whose type
/// could not be inferred: of the operands' largest rank and the first
/// tensor operand's element type, so that code reading it stays in bounds.
inline mlir::RankedTensorType placeholderResultType(NodeBinder &b,
                                                    mlir::Operation *op) {
  int64_t rank = 0;
  mlir::Type element;
  for (mlir::Value v : op->getOperands())
    if (auto t = v ? mlir::dyn_cast<mlir::RankedTensorType>(v.getType())
                   : mlir::RankedTensorType()) {
      rank = std::max(rank, t.getRank());
      if (!element)
        element = t.getElementType();
    }
  llvm::SmallVector<int64_t> shape(rank, mlir::ShapedType::kDynamic);
  return mlir::RankedTensorType::get(
      shape, element ? element : mlir::Float32Type::get(b.context()));
}

/// Gives `op`, built with unsettledType(), the result type its inference
/// computes, or notes why it cannot (createInferred).
template <typename OpT> mlir::Value settleInferredType(NodeBinder &b, OpT op) {
  static_assert(OpT::template hasTrait<mlir::OpTrait::OneResult>(),
                "createInferred builds ops with one result");
  mlir::Operation *operation = op.getOperation();
  mlir::Value result = operation->getResult(0);
  bool complete = llvm::all_of(operation->getOperands(),
                               [](mlir::Value v) { return bool(v); });
  llvm::SmallVector<mlir::Type, 1> types;
  std::string reason;
  mlir::LogicalResult inferred = mlir::failure();
  if (complete) {
    mlir::ScopedDiagnosticHandler capture(b.context(),
                                          [&](mlir::Diagnostic &d) {
                                            if (reason.empty())
                                              reason = d.str();
                                            return mlir::success();
                                          });
    inferred = OpT::inferReturnTypes(
        b.context(), operation->getLoc(), operation->getOperands(),
        operation->getRawDictionaryAttrs(), operation->getPropertiesStorage(),
        operation->getRegions(), types);
  }
  if (mlir::succeeded(inferred) && types.size() == 1) {
    result.setType(types.front());
    return result;
  }
  if (reason.empty())
    reason = complete ? "its result type cannot be inferred"
                      : "an operand is missing";
  b.noteUninferable("'" + operation->getName().getStringRef().str() +
                    "': " + reason);
  result.setType(placeholderResultType(b, operation));
  return result;
}

/// The result type `op`'s inference computes from its operands, or null
/// (its diagnostics are dropped: the verifier reports them).
template <typename OpT> mlir::RankedTensorType inferredResultType(OpT op) {
  mlir::Operation *operation = op.getOperation();
  llvm::SmallVector<mlir::Type, 1> types;
  mlir::ScopedDiagnosticHandler drop(
      operation->getContext(),
      [](mlir::Diagnostic &) { return mlir::success(); });
  if (mlir::failed(OpT::inferReturnTypes(
          operation->getContext(), operation->getLoc(),
          operation->getOperands(), operation->getRawDictionaryAttrs(),
          operation->getPropertiesStorage(), operation->getRegions(), types)) ||
      types.size() != 1)
    return {};
  return mlir::dyn_cast<mlir::RankedTensorType>(types.front());
}

/// Whether `a` fits `b` (same element type and rank, no conflicting
/// sizes) and leaves some size dynamic that `b` has static.
inline bool lessStaticThan(mlir::RankedTensorType a, mlir::RankedTensorType b) {
  if (a.getElementType() != b.getElementType() || a.getRank() != b.getRank())
    return false;
  bool less = false;
  for (auto [x, y] : llvm::zip(a.getShape(), b.getShape())) {
    if (mlir::ShapedType::isDynamic(x))
      less |= !mlir::ShapedType::isDynamic(y);
    else if (!mlir::ShapedType::isDynamic(y) && x != y)
      return false;
  }
  return less;
}

} // namespace detail

/// Builds `OpT` with one result of the node's inferred output type 0 from
/// `operands` and `attrs`, and binds it to output 0.
///
/// When ONNX inference left the output untyped (it does after ops whose
/// shape it cannot propagate in ONNX 1.12, e.g. Reshape by a computed shape),
/// ops that infer their own result type still import.
template <typename OpT>
mlir::LogicalResult
buildSimple(NodeBinder &b, mlir::ValueRange operands,
            llvm::ArrayRef<mlir::NamedAttribute> attrs = {}) {
  for (mlir::Value v : operands)
    if (!v)
      return mlir::failure();
  mlir::RankedTensorType type = b.knownOutputType(0);
  if constexpr (OpT::template hasTrait<mlir::InferTypeOpInterface::Trait>()) {
    if (!type) {
      auto op = OpT::create(b.builder(), b.loc(),
                            mlir::TypeRange{detail::unsettledType(b)}, operands,
                            attrs);
      b.setOutput(0, detail::settleInferredType(b, op));
      return mlir::success();
    }
  }
  if (!type && !(type = b.outputType(0)))
    return mlir::failure();
  auto op =
      OpT::create(b.builder(), b.loc(), mlir::TypeRange{type}, operands, attrs);
  mlir::Value result = op->getResult(0);
  if constexpr (OpT::template hasTrait<mlir::InferTypeOpInterface::Trait>()) {
    // The declared type may be more static than what the operands show
    // (the last op of an inlined function body, whose intermediate values
    // ONNX never typed): the op keeps its own type and a cast gives the
    // declared one.
    if (mlir::RankedTensorType inferred = detail::inferredResultType(op);
        inferred && detail::lessStaticThan(inferred, type)) {
      result.setType(inferred);
      result = mlir::tensor::CastOp::create(b.builder(), b.loc(), type, result);
    }
  }
  b.setOutput(0, result);
  return mlir::success();
}

/// Creates `OpT` with its result type inferred from the operands (for
/// intermediate values of decompositions, which ONNX inference never saw).
///
/// The op is built with a placeholder result type and then given the type
/// its inference computes: ODS's inferring builders abort the process when
/// inference fails, and inputs a builder did not foresee (found by fuzzing:
/// a Gemm whose K sizes differ, attention heads of different widths) must
/// give the node an error instead. On failure the reason is noted with the
/// binder (the node fails once its builder returns) and the value gets a
/// placeholder type, so that the builder can run to its end.
template <typename OpT, typename... Args>
mlir::Value createInferred(NodeBinder &b, Args &&...args) {
  auto op = OpT::create(b.builder(), b.loc(), detail::unsettledType(b),
                        std::forward<Args>(args)...);
  return detail::settleInferredType(b, op);
}

/// Per dimension the static size of either type; `a` wins a conflict, and a
/// null type, or one of another rank or element type, is ignored.
inline mlir::RankedTensorType mergeStaticSizes(mlir::RankedTensorType a,
                                               mlir::RankedTensorType b) {
  if (!a || !b)
    return a ? a : b;
  if (a.getRank() != b.getRank() || a.getElementType() != b.getElementType())
    return a;
  llvm::SmallVector<int64_t> shape(a.getShape());
  for (auto [size, other] : llvm::zip(shape, b.getShape()))
    if (mlir::ShapedType::isDynamic(size))
      size = other;
  return mlir::RankedTensorType::get(shape, a.getElementType());
}

/// The type values of `a` and `b` both fit (as the branches of an If):
/// their sizes where they agree, `?` where they do not. Null when the
/// element types or ranks differ.
inline mlir::RankedTensorType joinBranchTypes(mlir::RankedTensorType a,
                                              mlir::RankedTensorType b) {
  if (a.getElementType() != b.getElementType() || a.getRank() != b.getRank())
    return {};
  llvm::SmallVector<int64_t> shape;
  for (auto [x, y] : llvm::zip(a.getShape(), b.getShape()))
    shape.push_back(x == y ? x : mlir::ShapedType::kDynamic);
  return mlir::RankedTensorType::get(shape, a.getElementType());
}

/// The ranked tensor type of `v`.
inline mlir::RankedTensorType typeOf(mlir::Value v) {
  return mlir::cast<mlir::RankedTensorType>(v.getType());
}

/// `v` transposed by `perm`, its type inferred.
inline mlir::Value transpose(NodeBinder &b, mlir::Value v,
                             llvm::ArrayRef<int64_t> perm) {
  return createInferred<TransposeOp>(b, v, perm);
}

/// `v` with dimensions of size 1 inserted at `axes`, its type inferred.
inline mlir::Value unsqueeze(NodeBinder &b, mlir::Value v,
                             llvm::ArrayRef<int64_t> axes) {
  return createInferred<UnsqueezeOp>(b, v, axes);
}

/// Makes `value` have exactly `type` (what ONNX inferred for the output):
/// a `tensor.cast` when it only refines dynamic dimensions, an error when the
/// types disagree.
inline mlir::LogicalResult refineTo(NodeBinder &b, mlir::Value &value,
                                    mlir::RankedTensorType type) {
  if (value.getType() == type)
    return mlir::success();
  if (!areRefinedTypesCompatible(mlir::TypeRange{value.getType()},
                                 mlir::TypeRange{type}))
    return b.emitError() << "computed type " << value.getType()
                         << " disagrees with the inferred type " << type;
  value = mlir::tensor::CastOp::create(b.builder(), b.loc(), type, value);
  return mlir::success();
}

/// Binds output `output` to `value`, refined to the type ONNX inferred or
/// the graph declares for it when one is known (results of ops ONNX's
/// inference cannot type keep the type loom infers). Fails on a null value.
inline mlir::LogicalResult bindRefined(NodeBinder &b, mlir::Value value,
                                       size_t output = 0) {
  if (!value)
    return mlir::failure();
  if (mlir::RankedTensorType type = b.knownOutputType(output))
    if (mlir::failed(refineTo(b, value, type)))
      return mlir::failure();
  b.setOutput(output, value);
  return mlir::success();
}

/// `value` converted to `elementType` (itself when it already has it).
inline mlir::Value castTo(NodeBinder &b, mlir::Value value,
                          mlir::Type elementType) {
  auto type = mlir::cast<mlir::RankedTensorType>(value.getType());
  if (type.getElementType() == elementType)
    return value;
  return CastOp::create(b.builder(), b.loc(), type.clone(elementType), value);
}

/// Normalizes a possibly negative axis; reports an error when out of range.
inline std::optional<int64_t> normalizeAxisOrFail(NodeBinder &b, int64_t axis,
                                                  int64_t rank) {
  if (axis < -rank || axis >= rank) {
    b.emitError() << "axis " << axis << " is out of range for rank " << rank;
    return std::nullopt;
  }
  return axis < 0 ? axis + rank : axis;
}

} // namespace loom::onnx_import

#endif // LOOM_LIB_IMPORTER_ONNX_BUILDERUTILS_H
