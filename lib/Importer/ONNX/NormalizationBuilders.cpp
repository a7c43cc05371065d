//===- NormalizationBuilders.cpp - LpNormalization, GroupNormalization ----===//
//
// Normalizations without a loom op of their own, decomposed into core ops
// (reductions, elementwise arithmetic, reshapes) that the reference executor
// and compiled code both run.
//
//===----------------------------------------------------------------------===//

#include "BuilderUtils.h"
#include "GraphImporter.h"

using namespace mlir;

namespace loom::onnx_import {
namespace {

Value reduceKept(NodeBinder &b, Value x, ArrayRef<int64_t> axes,
                 bool mean = false) {
  OpBuilder &builder = b.builder();
  DenseI64ArrayAttr axesAttr = builder.getDenseI64ArrayAttr(axes);
  BoolAttr keep = builder.getBoolAttr(true);
  if (mean)
    return createInferred<ReduceMeanOp>(b, x, axesAttr, keep);
  return createInferred<ReduceSumOp>(b, x, axesAttr, keep);
}

/// LpNormalization-1/22: x / ||x||_p along `axis` (p is 1 or 2), and 0 where
/// the norm is 0 (opset 22 defines that; before it, 0 / 0 was NaN).
LogicalResult buildLpNormalization(NodeBinder &b) {
  if (failed(b.rejectUnknownAttrs({"axis", "p"})))
    return failure();
  Value x = b.input(0);
  std::optional<int64_t> axis = b.intAttr("axis", -1);
  std::optional<int64_t> p = b.intAttr("p", 2);
  if (!x || !axis || !p)
    return failure();
  RankedTensorType type = typeOf(x);
  Type element = type.getElementType();
  if (!isa<FloatType>(element))
    return b.emitError() << "input 0 must be a float tensor, not " << type;
  if (*p != 1 && *p != 2)
    return b.emitError() << "attribute 'p' must be 1 or 2, got " << *p;
  std::optional<int64_t> dim = normalizeAxisOrFail(b, *axis, type.getRank());
  if (!dim)
    return failure();
  Value norm =
      *p == 1 ? reduceKept(b, createInferred<AbsOp>(b, x), {*dim})
              : createInferred<SqrtOp>(
                    b, reduceKept(b, createInferred<MulOp>(b, x, x), {*dim}));
  Value zero = b.scalar(element, 0);
  Value isZero = createInferred<EqualOp>(b, norm, zero);
  Value quotient = createInferred<DivOp>(b, x, norm);
  return bindRefined(b, createInferred<WhereOp>(b, isZero, zero, quotient));
}

/// GroupNormalization-18 (scale and bias per group) and -21 (per channel):
/// x [N, C, spatial...] viewed [N, G, C/G * spatial], normalized over its
/// last axis in the stash type, viewed back, then scaled and shifted in the
/// input's type. The channel and spatial sizes must be known at import.
LogicalResult buildGroupNormalization(NodeBinder &b, bool perChannel) {
  if (failed(b.rejectUnknownAttrs({"epsilon", "num_groups", "stash_type"})))
    return failure();
  Value x = b.input(0), scale = b.input(1), bias = b.input(2);
  std::optional<float> epsilon = b.floatAttr("epsilon", 1e-5f);
  std::optional<int64_t> stashType = b.intAttr("stash_type", 1);
  if (!x || !scale || !bias || !epsilon || !stashType)
    return failure();
  if (!b.hasAttr("num_groups"))
    return b.fail("attribute 'num_groups' is required");
  std::optional<int64_t> groups = b.intAttr("num_groups", 0);
  if (!groups)
    return failure();
  RankedTensorType type = typeOf(x);
  Type element = type.getElementType();
  if (!isa<FloatType>(element) || type.getRank() < 2)
    return b.emitError() << "input 0 must be a float tensor [N, C, ...], not "
                         << type;
  ArrayRef<int64_t> shape = type.getShape();
  if (llvm::any_of(shape.drop_front(),
                   [](int64_t size) { return ShapedType::isDynamic(size); }))
    return b.emitError() << "the channel and spatial sizes of input 0 (" << type
                         << ") must be known at import time";
  int64_t channels = shape[1];
  if (*groups <= 0 || channels % *groups != 0)
    return b.emitError() << "num_groups = " << *groups
                         << " must divide the channel count " << channels;
  int64_t affine = perChannel ? channels : *groups;
  for (auto [name, value] : {std::pair<StringRef, Value>{"scale", scale},
                             std::pair<StringRef, Value>{"bias", bias}}) {
    RankedTensorType t = typeOf(value);
    if (t.getRank() != 1 || t.getElementType() != element ||
        (!t.isDynamicDim(0) && t.getDimSize(0) != affine))
      return b.emitError() << "input '" << name << "' must be a " << affine
                           << "-element tensor of " << element << ", not " << t;
  }
  Type stash = convertElementType(b.context(), int32_t(*stashType));
  if (!stash || !isa<FloatType>(stash))
    return b.emitError() << "attribute 'stash_type' = " << *stashType
                         << " is not a float type";

  // Per group: [N, G, C/G * spatial].
  int64_t perGroup = channels / *groups;
  for (int64_t size : shape.drop_front(2))
    perGroup *= size;
  OpBuilder &builder = b.builder();
  auto grouped = RankedTensorType::get({shape[0], *groups, perGroup}, stash);
  Value xs = ReshapeOp::create(builder, b.loc(), grouped, castTo(b, x, stash),
                               b.i64Tensor({0, *groups, perGroup}));
  Value mean = reduceKept(b, xs, {2}, /*mean=*/true);
  Value centred = createInferred<SubOp>(b, xs, mean);
  Value variance =
      reduceKept(b, createInferred<MulOp>(b, centred, centred), {2}, true);
  Value deviation = createInferred<SqrtOp>(
      b, createInferred<AddOp>(b, variance, b.scalar(stash, *epsilon)));
  Value normalized =
      castTo(b, createInferred<DivOp>(b, centred, deviation), element);

  // Scale and bias: per group on the grouped view, per channel on x's.
  Value y;
  if (perChannel) {
    SmallVector<int64_t> affineShape(type.getRank() - 1, 1);
    affineShape[0] = channels;
    auto affineType = RankedTensorType::get(affineShape, element);
    auto view = [&](Value v) -> Value {
      return ReshapeOp::create(builder, b.loc(), affineType, v,
                               b.i64Tensor(affineShape));
    };
    SmallVector<int64_t> back(shape);
    back[0] = 0;
    Value restored = ReshapeOp::create(builder, b.loc(), type, normalized,
                                       b.i64Tensor(back));
    y = createInferred<AddOp>(
        b, createInferred<MulOp>(b, restored, view(scale)), view(bias));
  } else {
    auto affineType = RankedTensorType::get({*groups, 1}, element);
    auto view = [&](Value v) -> Value {
      return ReshapeOp::create(builder, b.loc(), affineType, v,
                               b.i64Tensor({*groups, 1}));
    };
    Value shifted = createInferred<AddOp>(
        b, createInferred<MulOp>(b, normalized, view(scale)), view(bias));
    SmallVector<int64_t> back(shape);
    back[0] = 0;
    y = ReshapeOp::create(builder, b.loc(), type, shifted, b.i64Tensor(back));
  }
  return bindRefined(b, y);
}

} // namespace

void registerNormalizationBuilders(OpTable &t) {
  t.add("", "LpNormalization", 1, buildLpNormalization);
  t.add("", "GroupNormalization", 18, [](NodeBinder &b) {
    return buildGroupNormalization(b, /*perChannel=*/false);
  });
  t.add("", "GroupNormalization", 21, [](NodeBinder &b) {
    return buildGroupNormalization(b, /*perChannel=*/true);
  });
}

} // namespace loom::onnx_import
