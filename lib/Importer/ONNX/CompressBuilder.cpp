//===- CompressBuilder.cpp - Compress -------------------------------------===//
//
// Compress becomes a gather of the indices its condition selects.
//
//===----------------------------------------------------------------------===//

#include "BuilderUtils.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;

namespace loom::onnx_import {
namespace {

/// Compress(x, cond, axis) = gather(x, indices of the true elements of
/// cond, axis), where x is flattened first when there is no axis. A
/// constant condition gives constant indices; otherwise loom.non_zero
/// finds them at run time and the selected dimension is dynamic.
LogicalResult buildCompress(NodeBinder &b) {
  if (failed(b.rejectUnknownAttrs({"axis"})))
    return failure();
  Value x = b.input(0), condition = b.input(1);
  RankedTensorType type = b.outputType(0);
  if (!x || !condition || !type)
    return failure();
  RankedTensorType condType = b.inputType(1);
  if (condType.getRank() != 1 || !condType.getElementType().isInteger(1))
    return b.fail("condition must be a 1-D bool tensor");
  RankedTensorType xType = b.inputType(0);
  int64_t axis = 0;
  if (b.hasAttr("axis")) {
    auto a = b.intAttr("axis", 0);
    if (!a)
      return failure();
    std::optional<int64_t> normalized =
        normalizeAxisOrFail(b, *a, xType.getRank());
    if (!normalized)
      return failure();
    axis = *normalized;
  } else {
    int64_t n =
        xType.hasStaticShape() ? xType.getNumElements() : ShapedType::kDynamic;
    x = ReshapeOp::create(b.builder(), b.loc(),
                          RankedTensorType::get({n}, xType.getElementType()), x,
                          b.i64Tensor({-1}), false);
    xType = typeOf(x);
  }
  SmallVector<int64_t> shape(xType.getShape());
  Value indices;
  if (std::optional<SmallVector<int64_t>> cond = b.constantInts(1)) {
    SmallVector<int64_t> picked;
    for (auto [i, v] : llvm::enumerate(*cond))
      if (v != 0)
        picked.push_back(i);
    int64_t size = shape[axis];
    if (!picked.empty() && !ShapedType::isDynamic(size) &&
        picked.back() >= size)
      return b.fail("condition selects index " + Twine(picked.back()) +
                    " beyond the axis size " + Twine(size));
    indices = b.i64Tensor(picked);
    shape[axis] = picked.size();
  } else {
    Type i64 = b.builder().getI64Type();
    Value nonZero = NonZeroOp::create(
        b.builder(), b.loc(),
        RankedTensorType::get({1, ShapedType::kDynamic}, i64), condition);
    indices = createInferred<SqueezeOp>(b, nonZero, ArrayRef<int64_t>{0});
    shape[axis] = ShapedType::kDynamic;
  }
  Value y =
      GatherOp::create(b.builder(), b.loc(),
                       RankedTensorType::get(shape, xType.getElementType()), x,
                       indices, b.builder().getI64IntegerAttr(axis));
  if (failed(refineTo(b, y, type)))
    return failure();
  b.setOutput(0, y);
  return success();
}

} // namespace

void registerCompressBuilders(OpTable &t) {
  t.add("", "Compress", 9, buildCompress);
  t.add("", "Compress", 11, buildCompress);
}

} // namespace loom::onnx_import
