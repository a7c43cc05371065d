//===- ShapeBuilders.cpp - Constants, shapes and data movement ------------===//

#include "BuilderUtils.h"

using namespace mlir;

namespace loom::onnx_import {
namespace {

LogicalResult buildConstant(NodeBinder &b) {
  if (const onnx::TensorProto *t = b.tensorAttr("value")) {
    Value v = b.tensorConstant(*t);
    if (!v)
      return failure();
    b.setOutput(0, v);
    return success();
  }
  RankedTensorType type = b.outputType(0);
  if (!type)
    return failure();
  auto &builder = b.builder();
  ElementsAttr value;
  if (std::optional<float> f = b.floatAttr("value_float", 0);
      f && b.hasAttr("value_float")) {
    value = DenseElementsAttr::get(type, builder.getF32FloatAttr(*f));
  } else if (b.hasAttr("value_int")) {
    value = DenseElementsAttr::get(type, builder.getI64IntegerAttr(*b.intAttr("value_int", 0)));
  } else if (b.hasAttr("value_floats")) {
    auto fs = b.floatsAttr("value_floats");
    if (!fs)
      return failure();
    value = DenseElementsAttr::get(type, ArrayRef<float>(*fs));
  } else if (b.hasAttr("value_ints")) {
    auto is = b.intsAttr("value_ints");
    if (!is)
      return failure();
    value = DenseElementsAttr::get(type, ArrayRef<int64_t>(*is));
  } else {
    return b.fail("only 'value', 'value_float(s)' and 'value_int(s)' "
                  "constants are supported");
  }
  b.setOutput(0, ConstantOp::create(builder, b.loc(), value));
  return success();
}

LogicalResult buildIdentity(NodeBinder &b) {
  Value x = b.input(0);
  if (!x)
    return failure();
  b.setOutput(0, x);
  return success();
}

LogicalResult buildReshape(NodeBinder &b) {
  RankedTensorType type = b.outputType(0);
  Value x = b.input(0);
  if (!type || !x)
    return failure();
  Value shape;
  std::optional<int64_t> allowzero = b.intAttr("allowzero", 0);
  if (!allowzero)
    return failure();
  if (b.opset() < 5) {
    auto dims = b.intsAttr("shape");
    if (!dims)
      return failure();
    shape = b.i64Tensor(*dims);
  } else {
    shape = b.input(1);
  }
  if (!shape)
    return failure();
  b.setOutput(0, ReshapeOp::create(b.builder(), b.loc(), type, x, shape,
                                   *allowzero != 0));
  return success();
}

LogicalResult buildTranspose(NodeBinder &b) {
  RankedTensorType in = b.inputType(0);
  if (!in)
    return b.input(0) ? failure() : failure();
  SmallVector<int64_t> reversed;
  for (int64_t i = in.getRank() - 1; i >= 0; --i)
    reversed.push_back(i);
  std::optional<SmallVector<int64_t>> perm = b.intsAttr("perm", reversed);
  if (!perm)
    return failure();
  return buildSimple<TransposeOp>(
      b, {b.input(0)},
      {b.builder().getNamedAttr("perm", b.builder().getDenseI64ArrayAttr(*perm))});
}

/// Flatten: a reshape to [prod(dims[:axis]), prod(dims[axis:])].
LogicalResult buildFlatten(NodeBinder &b) {
  RankedTensorType type = b.outputType(0);
  Value x = b.input(0);
  if (!type || !x)
    return failure();
  if (!type.hasStaticShape())
    return b.fail("Flatten of a dynamic shape is not supported yet");
  b.setOutput(0, ReshapeOp::create(b.builder(), b.loc(), type, x,
                                   b.i64Tensor(type.getShape()), false));
  return success();
}

} // namespace

void registerShapeBuilders(OpTable &t) {
  t.add("", "Constant", 1, buildConstant);
  t.add("", "Identity", 1, buildIdentity);
  t.add("", "Reshape", 1, buildReshape);
  t.add("", "Transpose", 1, buildTranspose);
  t.add("", "Flatten", 1, buildFlatten);
}

} // namespace loom::onnx_import
