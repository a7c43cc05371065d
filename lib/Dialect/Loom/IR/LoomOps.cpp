//===- LoomOps.cpp - Verifiers and type inference of loom ops -------------===//

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/StringSwitch.h"

#include <cmath>

using namespace mlir;
using namespace loom;

namespace {

RankedTensorType tensorTypeOf(Value value) {
  return cast<RankedTensorType>(value.getType());
}

/// Static element count of a 1-D tensor, or nullopt when dynamic.
std::optional<int64_t> staticLength(Value value) {
  auto type = tensorTypeOf(value);
  if (type.getRank() != 1 || type.isDynamicDim(0))
    return std::nullopt;
  return type.getDimSize(0);
}

bool isDynamicOr(int64_t dim, int64_t expected) {
  return ShapedType::isDynamic(dim) || ShapedType::isDynamic(expected) ||
         dim == expected;
}

LogicalResult verifyOneOf(Operation *op, StringRef name, StringRef value,
                          ArrayRef<StringRef> allowed) {
  if (llvm::is_contained(allowed, value))
    return success();
  InFlightDiagnostic diag = op->emitOpError()
                            << name << " must be one of ";
  llvm::interleaveComma(allowed, diag,
                        [&](StringRef s) { diag << '"' << s << '"'; });
  return diag << ", got \"" << value << '"';
}

LogicalResult verifySameElementType(Operation *op, Value a, Value b,
                                    StringRef what) {
  if (getElementTypeOrSelf(a.getType()) != getElementTypeOrSelf(b.getType()))
    return op->emitOpError(what) << " must have the element type of the input";
  return success();
}

/// Checks the windowed-op attributes shared by conv, conv_transpose and
/// pooling for an input of `rank` (N, C, spatial...).
LogicalResult verifyWindowAttrs(Operation *op, int64_t rank,
                                ArrayRef<int64_t> strides,
                                ArrayRef<int64_t> pads,
                                ArrayRef<int64_t> dilations) {
  if (rank < 3)
    return op->emitOpError("expects an input of rank >= 3 (N, C, spatial...)");
  size_t spatial = rank - 2;
  if (strides.size() != spatial || dilations.size() != spatial)
    return op->emitOpError("expects ")
           << spatial << " strides and dilations, one per spatial axis";
  if (pads.size() != 2 * spatial)
    return op->emitOpError("expects ")
           << 2 * spatial << " pads (begin pads, then end pads)";
  if (llvm::any_of(strides, [](int64_t s) { return s <= 0; }) ||
      llvm::any_of(dilations, [](int64_t d) { return d <= 0; }))
    return op->emitOpError("strides and dilations must be positive");
  if (llvm::any_of(pads, [](int64_t p) { return p < 0; }))
    return op->emitOpError("pads must be non-negative");
  return success();
}

/// floor((in + pads - effective_kernel) / stride) + 1 or nullopt if dynamic.
std::optional<int64_t> windowOutputSize(int64_t in, int64_t kernel,
                                        int64_t stride, int64_t padBegin,
                                        int64_t padEnd, int64_t dilation) {
  if (ShapedType::isDynamic(in) || ShapedType::isDynamic(kernel))
    return std::nullopt;
  int64_t effective = (kernel - 1) * dilation + 1;
  return (in + padBegin + padEnd - effective) / stride + 1;
}

} // namespace

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

LogicalResult GeluOp::verify() {
  return verifyOneOf(*this, "approximate", getApproximate(), {"none", "tanh"});
}

LogicalResult WhereOp::inferReturnTypes(MLIRContext *ctx,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  auto c = cast<RankedTensorType>(adaptor.getCondition().getType());
  auto t = cast<RankedTensorType>(adaptor.getOnTrue().getType());
  auto f = cast<RankedTensorType>(adaptor.getOnFalse().getType());
  auto tf = broadcastShapes(t.getShape(), f.getShape());
  if (failed(tf))
    return emitOptionalError(loc, "operand shapes do not broadcast");
  auto all = broadcastShapes(c.getShape(), *tf);
  if (failed(all))
    return emitOptionalError(loc, "condition does not broadcast");
  types.push_back(RankedTensorType::get(*all, t.getElementType()));
  return success();
}

bool WhereOp::isCompatibleReturnTypes(TypeRange l, TypeRange r) {
  return areRefinedTypesCompatible(l, r);
}

LogicalResult WhereOp::verify() {
  return verifySameElementType(*this, getOnTrue(), getOnFalse(), "on_false");
}

//===----------------------------------------------------------------------===//
// Contractions and convolutions
//===----------------------------------------------------------------------===//

LogicalResult MatMulOp::inferReturnTypes(MLIRContext *ctx,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  auto a = cast<RankedTensorType>(adaptor.getLhs().getType());
  auto b = cast<RankedTensorType>(adaptor.getRhs().getType());
  if (a.getRank() == 0 || b.getRank() == 0)
    return emitOptionalError(loc, "matmul operands must have rank >= 1");
  // numpy promotion of 1-D operands.
  SmallVector<int64_t> as(a.getShape()), bs(b.getShape());
  bool vecA = as.size() == 1, vecB = bs.size() == 1;
  if (vecA)
    as.insert(as.begin(), 1);
  if (vecB)
    bs.push_back(1);
  int64_t k1 = as.back(), k2 = bs[bs.size() - 2];
  if (!isDynamicOr(k1, k2))
    return emitOptionalError(loc, "contracting dimensions differ: ", k1,
                             " vs ", k2);
  auto batch = broadcastShapes(ArrayRef<int64_t>(as).drop_back(2),
                               ArrayRef<int64_t>(bs).drop_back(2));
  if (failed(batch))
    return emitOptionalError(loc, "batch dimensions do not broadcast");
  SmallVector<int64_t> shape(*batch);
  if (!vecA)
    shape.push_back(as[as.size() - 2]);
  if (!vecB)
    shape.push_back(bs.back());
  types.push_back(RankedTensorType::get(shape, a.getElementType()));
  return success();
}

bool MatMulOp::isCompatibleReturnTypes(TypeRange l, TypeRange r) {
  return areRefinedTypesCompatible(l, r);
}

LogicalResult MatMulOp::verify() {
  return verifySameElementType(*this, getLhs(), getRhs(), "rhs");
}

LogicalResult ConvOp::verify() {
  auto in = tensorTypeOf(getInput()), w = tensorTypeOf(getWeight());
  auto out = tensorTypeOf(getResult());
  if (failed(verifyWindowAttrs(*this, in.getRank(), getStrides(), getPads(),
                               getDilations())))
    return failure();
  if (w.getRank() != in.getRank() || out.getRank() != in.getRank())
    return emitOpError("input, weight and result must have the same rank");
  int64_t group = getGroup();
  if (group <= 0)
    return emitOpError("group must be positive");
  int64_t c = in.getDimSize(1), m = w.getDimSize(0), cPerGroup = w.getDimSize(1);
  if (!ShapedType::isDynamic(c) && !ShapedType::isDynamic(cPerGroup) &&
      c != cPerGroup * group)
    return emitOpError("input has ")
           << c << " channels but weight expects " << cPerGroup << " x "
           << group << " groups";
  if (!ShapedType::isDynamic(m) && m % group != 0)
    return emitOpError("output channels ")
           << m << " are not divisible by group " << group;
  if (!isDynamicOr(out.getDimSize(1), m) ||
      !isDynamicOr(out.getDimSize(0), in.getDimSize(0)))
    return emitOpError("result shape ") << out << " disagrees with N and M";
  if (getBias()) {
    auto b = tensorTypeOf(getBias());
    if (b.getRank() != 1 || !isDynamicOr(b.getDimSize(0), m))
      return emitOpError("bias must be 1-D with one value per output channel");
  }
  size_t spatial = in.getRank() - 2;
  for (size_t i = 0; i < spatial; ++i) {
    std::optional<int64_t> size = windowOutputSize(
        in.getDimSize(2 + i), w.getDimSize(2 + i), getStrides()[i],
        getPads()[i], getPads()[spatial + i], getDilations()[i]);
    if (size && !isDynamicOr(out.getDimSize(2 + i), *size))
      return emitOpError("spatial dimension ")
             << i << " of the result should be " << *size;
  }
  return verifySameElementType(*this, getInput(), getWeight(), "weight");
}

LogicalResult ConvTransposeOp::verify() {
  auto in = tensorTypeOf(getInput()), w = tensorTypeOf(getWeight());
  auto out = tensorTypeOf(getResult());
  if (failed(verifyWindowAttrs(*this, in.getRank(), getStrides(), getPads(),
                               getDilations())))
    return failure();
  if (w.getRank() != in.getRank() || out.getRank() != in.getRank())
    return emitOpError("input, weight and result must have the same rank");
  if (getOutputPadding().size() != getStrides().size())
    return emitOpError("expects one output_padding per spatial axis");
  int64_t group = getGroup();
  if (group <= 0)
    return emitOpError("group must be positive");
  if (!isDynamicOr(in.getDimSize(1), w.getDimSize(0)))
    return emitOpError("input channels must equal weight dimension 0");
  int64_t m = ShapedType::isDynamic(w.getDimSize(1))
                  ? ShapedType::kDynamic
                  : w.getDimSize(1) * group;
  if (!isDynamicOr(out.getDimSize(1), m))
    return emitOpError("result must have ") << m << " channels";
  size_t spatial = in.getRank() - 2;
  for (size_t i = 0; i < spatial; ++i) {
    int64_t x = in.getDimSize(2 + i), k = w.getDimSize(2 + i);
    if (ShapedType::isDynamic(x) || ShapedType::isDynamic(k))
      continue;
    int64_t size = getStrides()[i] * (x - 1) + getOutputPadding()[i] +
                   (k - 1) * getDilations()[i] + 1 - getPads()[i] -
                   getPads()[spatial + i];
    if (!isDynamicOr(out.getDimSize(2 + i), size))
      return emitOpError("spatial dimension ")
             << i << " of the result should be " << size;
  }
  return verifySameElementType(*this, getInput(), getWeight(), "weight");
}

template <typename PoolOp>
static LogicalResult verifyPool(PoolOp op) {
  auto in = tensorTypeOf(op.getInput()), out = tensorTypeOf(op.getResult());
  if (failed(verifyWindowAttrs(op, in.getRank(), op.getStrides(), op.getPads(),
                               op.getDilations())))
    return failure();
  if (op.getKernelShape().size() != op.getStrides().size())
    return op.emitOpError("expects one kernel size per spatial axis");
  if (out.getRank() != in.getRank() ||
      !isDynamicOr(out.getDimSize(0), in.getDimSize(0)) ||
      !isDynamicOr(out.getDimSize(1), in.getDimSize(1)))
    return op.emitOpError("result must keep N and C of the input");
  if (op.getCeilMode())
    return success();
  size_t spatial = in.getRank() - 2;
  for (size_t i = 0; i < spatial; ++i) {
    std::optional<int64_t> size = windowOutputSize(
        in.getDimSize(2 + i), op.getKernelShape()[i], op.getStrides()[i],
        op.getPads()[i], op.getPads()[spatial + i], op.getDilations()[i]);
    if (size && !isDynamicOr(out.getDimSize(2 + i), *size))
      return op.emitOpError("spatial dimension ")
             << i << " of the result should be " << *size;
  }
  return success();
}

LogicalResult MaxPoolOp::verify() { return verifyPool(*this); }
LogicalResult AvgPoolOp::verify() { return verifyPool(*this); }

LogicalResult MaxPoolWithIndicesOp::verify() {
  if (failed(verifyPool(*this)))
    return failure();
  if (!areShapesCompatible(tensorTypeOf(getIndices()).getShape(),
                           tensorTypeOf(getResult()).getShape()))
    return emitOpError("indices must have the shape of the result");
  // Read signed: the I64Attr getter is unsigned.
  int64_t order = getStorageOrder();
  if (order != 0 && order != 1)
    return emitOpError("storage_order must be 0 (row-major) or 1 "
                       "(column-major), got ")
           << order;
  return verifySameElementType(*this, getInput(), getResult(), "result");
}

//===----------------------------------------------------------------------===//
// Normalizations, softmax, attention
//===----------------------------------------------------------------------===//

/// Per-channel parameters: 1-D with C elements.
static LogicalResult verifyChannelParams(Operation *op, Value input,
                                         ValueRange params) {
  auto in = tensorTypeOf(input);
  if (in.getRank() < 2)
    return op->emitOpError("expects an input of rank >= 2 (N, C, ...)");
  for (Value p : params) {
    auto t = tensorTypeOf(p);
    if (t.getRank() != 1 || !isDynamicOr(t.getDimSize(0), in.getDimSize(1)))
      return op->emitOpError("per-channel parameters must be 1-D with ")
             << in.getDimSize(1) << " elements, got " << t;
  }
  return success();
}

LogicalResult BatchNormOp::verify() {
  return verifyChannelParams(*this, getInput(),
                             {getScale(), getBias(), getMean(), getVariance()});
}

LogicalResult InstanceNormOp::verify() {
  if (tensorTypeOf(getInput()).getRank() < 3)
    return emitOpError("expects an input of rank >= 3 (N, C, spatial...)");
  return verifyChannelParams(*this, getInput(), {getScale(), getBias()});
}

/// Scale/bias of a norm over axes [axis, rank) must broadcast to those axes.
static LogicalResult verifyNormParams(Operation *op, Value input, int64_t axis,
                                      ValueRange params) {
  auto in = tensorTypeOf(input);
  std::optional<int64_t> a = normalizeAxis(axis, in.getRank());
  if (!a)
    return op->emitOpError("axis ")
           << axis << " is out of range for rank " << in.getRank();
  ArrayRef<int64_t> normalized = in.getShape().drop_front(*a);
  for (Value p : params) {
    auto t = tensorTypeOf(p);
    auto b = broadcastShapes(normalized, t.getShape());
    if (failed(b) || b->size() != normalized.size() ||
        !areShapesCompatible(*b, normalized))
      return op->emitOpError("parameter of type ")
             << t << " does not broadcast to the normalized shape";
  }
  return success();
}

LogicalResult LayerNormOp::verify() {
  SmallVector<Value> params{getScale()};
  if (getBias())
    params.push_back(getBias());
  return verifyNormParams(*this, getInput(), getAxis(), params);
}

LogicalResult RMSNormOp::verify() {
  return verifyNormParams(*this, getInput(), getAxis(), {getScale()});
}

LogicalResult AttentionOp::verify() {
  auto q = tensorTypeOf(getQuery()), k = tensorTypeOf(getKey()),
       v = tensorTypeOf(getValue()), o = tensorTypeOf(getResult());
  if (q.getRank() != 4 || k.getRank() != 4 || v.getRank() != 4 ||
      o.getRank() != 4)
    return emitOpError("query, key, value and result must be [B, H, S, D]");
  int64_t h = q.getDimSize(1), hkv = k.getDimSize(1);
  if (!ShapedType::isDynamic(h) && !ShapedType::isDynamic(hkv) &&
      (hkv == 0 || h % hkv != 0))
    return emitOpError("query heads (")
           << h << ") must be a multiple of key/value heads (" << hkv << ")";
  if (!isDynamicOr(k.getDimSize(1), v.getDimSize(1)) ||
      !isDynamicOr(k.getDimSize(2), v.getDimSize(2)))
    return emitOpError("key and value must have the same heads and length");
  if (!isDynamicOr(q.getDimSize(3), k.getDimSize(3)))
    return emitOpError("query and key head sizes differ");
  SmallVector<int64_t> expected{q.getDimSize(0), h, q.getDimSize(2),
                                v.getDimSize(3)};
  if (!areShapesCompatible(o.getShape(), expected))
    return emitOpError("result must be [B, H, S, Dv]");
  if (getMask()) {
    auto m = tensorTypeOf(getMask());
    SmallVector<int64_t> scores{q.getDimSize(0), h, q.getDimSize(2),
                                k.getDimSize(2)};
    auto b = broadcastShapes(scores, m.getShape());
    if (failed(b) || !areShapesCompatible(*b, scores))
      return emitOpError("mask of type ")
             << m << " does not broadcast to [B, H, S, T]";
  }
  return success();
}

LogicalResult RotaryEmbeddingOp::verify() {
  auto x = tensorTypeOf(getInput());
  if (x.getRank() < 2)
    return emitOpError("expects an input of rank >= 2 ([..., S, D])");
  int64_t d = x.getShape().back();
  if (!ShapedType::isDynamic(d) && d % 2 != 0)
    return emitOpError("the feature size must be even");
  for (Value table : {getCos(), getSin()}) {
    auto t = tensorTypeOf(table);
    if (t.getRank() < 2)
      return emitOpError("cos and sin tables must be [..., S, D/2]");
    int64_t half = ShapedType::isDynamic(d) ? d : d / 2;
    if (!isDynamicOr(t.getShape().back(), half))
      return emitOpError("cos and sin tables must have D/2 = ")
             << half << " columns";
  }
  return success();
}

/// The values of `value` when it is a constant float tensor.
static std::optional<SmallVector<float>> constantFloatValues(Value value) {
  DenseFPElementsAttr attr;
  if (!value || !matchPattern(value, m_Constant(&attr)))
    return std::nullopt;
  SmallVector<float> values;
  for (const APFloat &v : attr.getValues<APFloat>()) {
    APFloat f = v;
    bool lost;
    f.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
    values.push_back(f.convertToFloat());
  }
  return values;
}

std::optional<SmallVector<float>> ResizeOp::getStaticScales() {
  return constantFloatValues(getScales());
}

std::optional<SmallVector<float>> ResizeOp::getStaticRoi() {
  return constantFloatValues(getRoi());
}

LogicalResult ResizeOp::verify() {
  auto in = tensorTypeOf(getInput()), out = tensorTypeOf(getResult());
  int64_t rank = in.getRank();
  if (rank != out.getRank())
    return emitOpError("result must have the rank of the input");
  // Lengths and values are checked where they are known; run-time scales
  // and roi are the executor's to check.
  if (std::optional<int64_t> len = staticLength(getScales());
      len && *len != rank)
    return emitOpError("expects one scale per axis (")
           << rank << "), got " << *len;
  if (std::optional<SmallVector<float>> scales = getStaticScales())
    for (float s : *scales)
      if (!(s > 0.0f) || !std::isfinite(s))
        return emitOpError("scales must be positive and finite, got ") << s;
  if (getRoi())
    if (std::optional<int64_t> len = staticLength(getRoi());
        len && *len != 2 * rank)
      return emitOpError("roi must hold 2 * rank = ")
             << 2 * rank << " values, got " << *len;
  if (failed(verifyOneOf(*this, "mode", getMode(),
                         {"nearest", "linear", "cubic"})) ||
      failed(verifyOneOf(*this, "coordinate_transformation_mode",
                         getCoordinateTransformationMode(),
                         {"half_pixel", "half_pixel_symmetric",
                          "pytorch_half_pixel", "align_corners", "asymmetric",
                          "tf_half_pixel_for_nn", "tf_crop_and_resize"})) ||
      failed(verifyOneOf(*this, "nearest_mode", getNearestMode(),
                         {"round_prefer_floor", "round_prefer_ceil", "floor",
                          "ceil"})))
    return failure();
  if (getCoordinateTransformationMode() == "tf_crop_and_resize" && !getRoi())
    return emitOpError("tf_crop_and_resize requires a roi operand");
  return verifySameElementType(*this, getInput(), getResult(), "result");
}

//===----------------------------------------------------------------------===//
// Reductions, scans, top-k
//===----------------------------------------------------------------------===//

template <typename ArgOp>
static LogicalResult verifyArgReduce(ArgOp op) {
  auto in = tensorTypeOf(op.getInput()), out = tensorTypeOf(op.getResult());
  std::optional<int64_t> axis = normalizeAxis(op.getAxis(), in.getRank());
  if (!axis)
    return op.emitOpError("axis is out of range");
  SmallVector<int64_t> expected(in.getShape());
  if (op.getKeepdims())
    expected[*axis] = 1;
  else
    expected.erase(expected.begin() + *axis);
  if (!areShapesCompatible(out.getShape(), expected))
    return op.emitOpError("result shape does not match the reduced input");
  return success();
}

LogicalResult ArgMaxOp::verify() { return verifyArgReduce(*this); }
LogicalResult ArgMinOp::verify() { return verifyArgReduce(*this); }

LogicalResult CumSumOp::verify() {
  return verifyAxis(*this, getAxis(), tensorTypeOf(getInput()).getRank());
}

LogicalResult TopKOp::verify() {
  auto in = tensorTypeOf(getInput());
  std::optional<int64_t> axis = normalizeAxis(getAxis(), in.getRank());
  if (!axis)
    return emitOpError("axis is out of range");
  if (std::optional<int64_t> len = staticLength(getK()); len && *len != 1)
    return emitOpError("k must hold exactly one value");
  auto values = tensorTypeOf(getValues()), indices = tensorTypeOf(getIndices());
  if (values.getShape() != indices.getShape())
    return emitOpError("values and indices must have one shape");
  if (values.getRank() != in.getRank())
    return emitOpError("results must have the rank of the input");
  for (int64_t i = 0; i < in.getRank(); ++i)
    if (i != *axis && !isDynamicOr(values.getDimSize(i), in.getDimSize(i)))
      return emitOpError("results must match the input except along axis");
  return verifySameElementType(*this, getInput(), getValues(), "values");
}

//===----------------------------------------------------------------------===//
// Shapes and data movement
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  auto in = tensorTypeOf(getInput()), out = tensorTypeOf(getResult());
  if (failed(verifySameElementType(*this, getInput(), getResult(), "result")))
    return failure();
  if (std::optional<int64_t> len = staticLength(getShape());
      len && *len != out.getRank())
    return emitOpError("shape has ")
           << *len << " elements but the result has rank " << out.getRank();
  if (in.hasStaticShape() && out.hasStaticShape() &&
      in.getNumElements() != out.getNumElements())
    return emitOpError("cannot reshape ")
           << in.getNumElements() << " elements into " << out;
  return success();
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  auto in = cast<RankedTensorType>(adaptor.getInput().getType());
  ArrayRef<int64_t> perm = adaptor.getPerm();
  if (perm.size() != static_cast<size_t>(in.getRank()))
    return emitOptionalError(loc, "perm must have one entry per dimension");
  SmallVector<int64_t> shape;
  llvm::SmallBitVector seen(in.getRank());
  for (int64_t p : perm) {
    if (p < 0 || p >= in.getRank() || seen.test(p))
      return emitOptionalError(loc, "perm is not a permutation");
    seen.set(p);
    shape.push_back(in.getDimSize(p));
  }
  types.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

bool TransposeOp::isCompatibleReturnTypes(TypeRange l, TypeRange r) {
  return areRefinedTypesCompatible(l, r);
}

LogicalResult TransposeOp::verify() { return success(); }

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  if (adaptor.getInputs().empty())
    return emitOptionalError(loc, "concat needs at least one operand");
  auto first = cast<RankedTensorType>(adaptor.getInputs()[0].getType());
  std::optional<int64_t> axis = normalizeAxis(adaptor.getAxis(), first.getRank());
  if (!axis)
    return emitOptionalError(loc, "axis is out of range");
  SmallVector<int64_t> shape(first.getShape());
  shape[*axis] = 0;
  for (Value v : adaptor.getInputs()) {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getRank() != first.getRank() ||
        t.getElementType() != first.getElementType())
      return emitOptionalError(loc, "operands must share rank and element type");
    for (int64_t i = 0; i < t.getRank(); ++i) {
      int64_t d = t.getDimSize(i);
      if (i == *axis) {
        shape[i] = ShapedType::isDynamic(d) || ShapedType::isDynamic(shape[i])
                       ? ShapedType::kDynamic
                       : shape[i] + d;
      } else if (ShapedType::isDynamic(shape[i])) {
        shape[i] = d;
      } else if (!isDynamicOr(d, shape[i])) {
        return emitOptionalError(loc, "operand dimension ", i, " differs");
      }
    }
  }
  types.push_back(RankedTensorType::get(shape, first.getElementType()));
  return success();
}

bool ConcatOp::isCompatibleReturnTypes(TypeRange l, TypeRange r) {
  return areRefinedTypesCompatible(l, r);
}

LogicalResult ConcatOp::verify() { return success(); }

LogicalResult SplitOp::verify() {
  auto in = tensorTypeOf(getInput());
  std::optional<int64_t> axis = normalizeAxis(getAxis(), in.getRank());
  if (!axis)
    return emitOpError("axis is out of range");
  if (getNumResults() == 0)
    return emitOpError("expects at least one result");
  if (getSizes() && getSizes()->size() != getNumResults())
    return emitOpError("expects one size per result");
  int64_t total = 0;
  bool allStatic = true;
  for (auto [i, r] : llvm::enumerate(getResults())) {
    auto t = tensorTypeOf(r);
    if (t.getRank() != in.getRank() || t.getElementType() != in.getElementType())
      return emitOpError("results must have the rank and element type of the input");
    for (int64_t d = 0; d < in.getRank(); ++d)
      if (d != *axis && !isDynamicOr(t.getDimSize(d), in.getDimSize(d)))
        return emitOpError("results must match the input except along axis");
    int64_t size = t.getDimSize(*axis);
    if (getSizes() && !isDynamicOr(size, (*getSizes())[i]))
      return emitOpError("result ") << i << " does not have the stated size";
    if (ShapedType::isDynamic(size))
      allStatic = false;
    else
      total += size;
  }
  if (allStatic && !in.isDynamicDim(*axis) && total != in.getDimSize(*axis))
    return emitOpError("result sizes add up to ")
           << total << ", not " << in.getDimSize(*axis);
  return success();
}

LogicalResult SliceOp::verify() {
  auto in = tensorTypeOf(getInput()), out = tensorTypeOf(getResult());
  if (in.getRank() != out.getRank())
    return emitOpError("result must have the rank of the input");
  SmallVector<Value> params{getStarts(), getEnds()};
  if (getAxes())
    params.push_back(getAxes());
  if (getSteps())
    params.push_back(getSteps());
  std::optional<int64_t> length;
  for (Value p : params) {
    if (tensorTypeOf(p).getRank() != 1)
      return emitOpError("starts, ends, axes and steps must be 1-D");
    std::optional<int64_t> l = staticLength(p);
    if (l && length && *l != *length)
      return emitOpError("starts, ends, axes and steps must have one length");
    if (l)
      length = l;
  }
  return verifySameElementType(*this, getInput(), getResult(), "result");
}

LogicalResult GatherOp::verify() {
  auto data = tensorTypeOf(getData()), idx = tensorTypeOf(getIndices());
  auto out = tensorTypeOf(getResult());
  std::optional<int64_t> axis = normalizeAxis(getAxis(), data.getRank());
  if (!axis)
    return emitOpError("axis is out of range");
  SmallVector<int64_t> expected(data.getShape().take_front(*axis));
  llvm::append_range(expected, idx.getShape());
  llvm::append_range(expected, data.getShape().drop_front(*axis + 1));
  if (!areShapesCompatible(out.getShape(), expected))
    return emitOpError("result shape must be data[:axis] + indices + data[axis+1:]");
  return verifySameElementType(*this, getData(), getResult(), "result");
}

LogicalResult GatherElementsOp::verify() {
  auto data = tensorTypeOf(getData()), idx = tensorTypeOf(getIndices());
  if (failed(verifyAxis(*this, getAxis(), data.getRank())))
    return failure();
  if (idx.getRank() != data.getRank())
    return emitOpError("indices must have the rank of data");
  if (!areShapesCompatible(tensorTypeOf(getResult()).getShape(), idx.getShape()))
    return emitOpError("result must have the shape of indices");
  return verifySameElementType(*this, getData(), getResult(), "result");
}

LogicalResult GatherNDOp::verify() {
  auto data = tensorTypeOf(getData()), idx = tensorTypeOf(getIndices());
  int64_t b = getBatchDims();
  if (idx.getRank() < 1 || b < 0 || b >= std::min(data.getRank(), idx.getRank()))
    return emitOpError("batch_dims must be smaller than both ranks");
  int64_t last = idx.getShape().back();
  if (!ShapedType::isDynamic(last) && (last < 1 || b + last > data.getRank()))
    return emitOpError("index tuples of length ")
           << last << " do not address data of rank " << data.getRank();
  return verifySameElementType(*this, getData(), getResult(), "result");
}

static LogicalResult verifyReduction(Operation *op, StringRef reduction) {
  return verifyOneOf(op, "reduction", reduction,
                     {"none", "add", "mul", "max", "min"});
}

LogicalResult ScatterElementsOp::verify() {
  auto data = tensorTypeOf(getData()), idx = tensorTypeOf(getIndices());
  if (failed(verifyAxis(*this, getAxis(), data.getRank())))
    return failure();
  if (idx.getRank() != data.getRank() ||
      !areShapesCompatible(idx.getShape(), tensorTypeOf(getUpdates()).getShape()))
    return emitOpError("indices and updates must have one shape of data's rank");
  if (failed(verifySameElementType(*this, getData(), getUpdates(), "updates")))
    return failure();
  return verifyReduction(*this, getReduction());
}

LogicalResult ScatterNDOp::verify() {
  auto data = tensorTypeOf(getData()), idx = tensorTypeOf(getIndices());
  if (idx.getRank() < 1)
    return emitOpError("indices must have rank >= 1");
  int64_t last = idx.getShape().back();
  if (!ShapedType::isDynamic(last) && last > data.getRank())
    return emitOpError("index tuples are longer than the rank of data");
  if (!ShapedType::isDynamic(last)) {
    int64_t updatesRank = idx.getRank() - 1 + data.getRank() - last;
    if (tensorTypeOf(getUpdates()).getRank() != updatesRank)
      return emitOpError("updates must have rank ") << updatesRank;
  }
  if (failed(verifySameElementType(*this, getData(), getUpdates(), "updates")))
    return failure();
  return verifyReduction(*this, getReduction());
}

LogicalResult PadOp::verify() {
  auto in = tensorTypeOf(getInput());
  if (tensorTypeOf(getResult()).getRank() != in.getRank())
    return emitOpError("result must have the rank of the input");
  if (std::optional<int64_t> len = staticLength(getPads());
      len && *len != 2 * in.getRank())
    return emitOpError("pads must hold 2 * rank = ")
           << 2 * in.getRank() << " values";
  if (getConstantValue()) {
    auto c = tensorTypeOf(getConstantValue());
    if (c.hasStaticShape() && c.getNumElements() != 1)
      return emitOpError("constant_value must be a scalar");
    if (failed(verifySameElementType(*this, getInput(), getConstantValue(),
                                     "constant_value")))
      return failure();
  }
  if (failed(verifyOneOf(*this, "mode", getMode(),
                         {"constant", "reflect", "edge", "wrap"})))
    return failure();
  return verifySameElementType(*this, getInput(), getResult(), "result");
}

LogicalResult ExpandOp::verify() {
  auto in = tensorTypeOf(getInput()), out = tensorTypeOf(getResult());
  if (out.getRank() < in.getRank())
    return emitOpError("result rank must be at least the input rank");
  if (std::optional<int64_t> len = staticLength(getShape());
      len && *len > out.getRank())
    return emitOpError("shape is longer than the result rank");
  auto b = broadcastShapes(in.getShape(), out.getShape());
  if (failed(b) || !areShapesCompatible(*b, out.getShape()))
    return emitOpError("input does not broadcast to the result shape");
  return verifySameElementType(*this, getInput(), getResult(), "result");
}

LogicalResult TileOp::verify() {
  auto in = tensorTypeOf(getInput()), out = tensorTypeOf(getResult());
  if (out.getRank() != in.getRank())
    return emitOpError("result must have the rank of the input");
  if (std::optional<int64_t> len = staticLength(getRepeats());
      len && *len != in.getRank())
    return emitOpError("repeats must have one value per dimension");
  return verifySameElementType(*this, getInput(), getResult(), "result");
}

LogicalResult SqueezeOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  auto in = cast<RankedTensorType>(adaptor.getInput().getType());
  llvm::SmallBitVector drop(in.getRank());
  for (int64_t axis : adaptor.getAxes()) {
    if (axis < 0 || axis >= in.getRank())
      return emitOptionalError(loc, "squeeze axis ", axis, " is out of range");
    if (!isDynamicOr(in.getDimSize(axis), 1))
      return emitOptionalError(loc, "squeezed dimension ", axis,
                               " does not have size 1");
    drop.set(axis);
  }
  if (adaptor.getAxes().empty())
    for (int64_t i = 0; i < in.getRank(); ++i)
      if (in.getDimSize(i) == 1)
        drop.set(i);
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < in.getRank(); ++i)
    if (!drop.test(i))
      shape.push_back(in.getDimSize(i));
  types.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

bool SqueezeOp::isCompatibleReturnTypes(TypeRange l, TypeRange r) {
  return areRefinedTypesCompatible(l, r);
}

LogicalResult SqueezeOp::verify() { return success(); }

LogicalResult UnsqueezeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  auto in = cast<RankedTensorType>(adaptor.getInput().getType());
  int64_t rank = in.getRank() + adaptor.getAxes().size();
  llvm::SmallBitVector inserted(rank);
  for (int64_t axis : adaptor.getAxes()) {
    if (axis < 0 || axis >= rank || inserted.test(axis))
      return emitOptionalError(loc, "unsqueeze axis ", axis,
                               " is out of range or repeated");
    inserted.set(axis);
  }
  SmallVector<int64_t> shape;
  int64_t next = 0;
  for (int64_t i = 0; i < rank; ++i)
    shape.push_back(inserted.test(i) ? 1 : in.getDimSize(next++));
  types.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

bool UnsqueezeOp::isCompatibleReturnTypes(TypeRange l, TypeRange r) {
  return areRefinedTypesCompatible(l, r);
}

LogicalResult UnsqueezeOp::verify() { return success(); }

LogicalResult ShapeOp::verify() {
  int64_t rank = tensorTypeOf(getInput()).getRank();
  auto clamp = [&](int64_t v) {
    if (v < 0)
      v += rank;
    return std::clamp<int64_t>(v, 0, rank);
  };
  int64_t start = clamp(getStart());
  int64_t end = clamp(getEnd() ? *getEnd() : rank);
  int64_t length = std::max<int64_t>(end - start, 0);
  if (!isDynamicOr(tensorTypeOf(getResult()).getDimSize(0), length))
    return emitOpError("result must hold ") << length << " dimensions";
  return success();
}

LogicalResult RangeOp::verify() {
  for (Value v : {getStart(), getLimit(), getDelta()}) {
    auto t = tensorTypeOf(v);
    if (t.getRank() != 0 ||
        t.getElementType() != tensorTypeOf(getResult()).getElementType())
      return emitOpError("start, limit and delta must be 0-D tensors of the "
                         "result's element type");
  }
  return success();
}

LogicalResult ConstantOfShapeOp::verify() {
  auto out = tensorTypeOf(getResult());
  auto value = dyn_cast<TypedAttr>(getValue());
  if (!value || value.getType() != out.getElementType())
    return emitOpError("value must have the result's element type");
  if (std::optional<int64_t> len = staticLength(getShape());
      len && *len != out.getRank())
    return emitOpError("shape length must equal the result rank");
  return success();
}

LogicalResult OneHotOp::verify() {
  auto idx = tensorTypeOf(getIndices()), out = tensorTypeOf(getResult());
  if (out.getRank() != idx.getRank() + 1)
    return emitOpError("result rank must be the indices rank + 1");
  if (failed(verifyAxis(*this, getAxis(), out.getRank())))
    return failure();
  auto values = tensorTypeOf(getValues());
  if (values.getRank() != 1 || !isDynamicOr(values.getDimSize(0), 2))
    return emitOpError("values must be [off, on]");
  return verifySameElementType(*this, getValues(), getResult(), "result");
}

LogicalResult TriluOp::verify() {
  if (tensorTypeOf(getInput()).getRank() < 2)
    return emitOpError("expects an input of rank >= 2");
  if (getK()) {
    auto k = tensorTypeOf(getK());
    if (k.hasStaticShape() && k.getNumElements() != 1)
      return emitOpError("k must be a scalar");
  }
  return success();
}

LogicalResult NonZeroOp::verify() {
  if (!isDynamicOr(tensorTypeOf(getResult()).getDimSize(0),
                   tensorTypeOf(getInput()).getRank()))
    return emitOpError("result must have one row per input dimension");
  return success();
}

//===----------------------------------------------------------------------===//
// Vision: grid sampling, RoI align, non-maximum suppression
//===----------------------------------------------------------------------===//

LogicalResult GridSampleOp::verify() {
  auto in = tensorTypeOf(getInput()), grid = tensorTypeOf(getGrid());
  auto out = tensorTypeOf(getResult());
  if (in.getRank() != 4 || grid.getRank() != 4 || out.getRank() != 4)
    return emitOpError("expects a 4-D input [N, C, H, W], grid [N, Ho, Wo, 2] "
                       "and result [N, C, Ho, Wo]");
  if (!isDynamicOr(grid.getDimSize(3), 2))
    return emitOpError("grid must hold (x, y) pairs in its last dimension, "
                       "got ")
           << grid;
  if (!isDynamicOr(grid.getDimSize(0), in.getDimSize(0)))
    return emitOpError("grid and input must have one batch size");
  SmallVector<int64_t> expected{in.getDimSize(0), in.getDimSize(1),
                                grid.getDimSize(1), grid.getDimSize(2)};
  if (!areShapesCompatible(out.getShape(), expected))
    return emitOpError("result must be [N, C, Ho, Wo], got ") << out;
  if (failed(verifyOneOf(*this, "mode", getMode(),
                         {"bilinear", "nearest", "bicubic"})) ||
      failed(verifyOneOf(*this, "padding_mode", getPaddingMode(),
                         {"zeros", "border", "reflection"})))
    return failure();
  return verifySameElementType(*this, getInput(), getResult(), "result");
}

LogicalResult RoiAlignOp::verify() {
  auto in = tensorTypeOf(getInput()), rois = tensorTypeOf(getRois());
  auto idx = tensorTypeOf(getBatchIndices()), out = tensorTypeOf(getResult());
  if (in.getRank() != 4 || out.getRank() != 4)
    return emitOpError("expects a 4-D input [N, C, H, W] and result "
                       "[R, C, output_height, output_width]");
  if (rois.getRank() != 2 || !isDynamicOr(rois.getDimSize(1), 4))
    return emitOpError("rois must be [R, 4], got ") << rois;
  if (!isDynamicOr(idx.getDimSize(0), rois.getDimSize(0)))
    return emitOpError("batch_indices must hold one index per roi");
  // I64Attr getters are unsigned: read the values as the signed ones ONNX
  // gives so that negative sizes are reported, not wrapped.
  int64_t height = getOutputHeight(), width = getOutputWidth();
  if (height <= 0 || width <= 0)
    return emitOpError("output_height and output_width must be positive");
  if (static_cast<int64_t>(getSamplingRatio()) < 0)
    return emitOpError("sampling_ratio must be non-negative");
  float scale = getSpatialScale().convertToFloat();
  if (!(scale > 0.0f) || !std::isfinite(scale))
    return emitOpError("spatial_scale must be positive and finite");
  int64_t r = ShapedType::isDynamic(rois.getDimSize(0)) ? idx.getDimSize(0)
                                                        : rois.getDimSize(0);
  SmallVector<int64_t> expected{r, in.getDimSize(1), height, width};
  if (!areShapesCompatible(out.getShape(), expected))
    return emitOpError("result must be [R, C, output_height, output_width], "
                       "got ")
           << out;
  if (failed(verifyOneOf(*this, "mode", getMode(), {"avg", "max"})) ||
      failed(verifyOneOf(*this, "coordinate_transformation_mode",
                         getCoordinateTransformationMode(),
                         {"half_pixel", "output_half_pixel"})) ||
      failed(verifySameElementType(*this, getInput(), getRois(), "rois")))
    return failure();
  return verifySameElementType(*this, getInput(), getResult(), "result");
}

/// A scalar operand: rank 0, or rank 1 with one element.
static LogicalResult verifyScalarOperand(Operation *op, Value value,
                                         StringRef name) {
  if (!value)
    return success();
  auto t = tensorTypeOf(value);
  if (t.getRank() > 1 || (t.getRank() == 1 && !isDynamicOr(t.getDimSize(0), 1)))
    return op->emitOpError(name) << " must be a scalar (0-D or [1]), got " << t;
  return success();
}

LogicalResult NonMaxSuppressionOp::verify() {
  auto boxes = tensorTypeOf(getBoxes()), scores = tensorTypeOf(getScores());
  auto out = tensorTypeOf(getResult());
  if (boxes.getRank() != 3 || !isDynamicOr(boxes.getDimSize(2), 4))
    return emitOpError("boxes must be [B, N, 4], got ") << boxes;
  if (scores.getRank() != 3)
    return emitOpError("scores must be [B, C, N], got ") << scores;
  if (!isDynamicOr(scores.getDimSize(0), boxes.getDimSize(0)) ||
      !isDynamicOr(scores.getDimSize(2), boxes.getDimSize(1)))
    return emitOpError("scores ")
           << scores << " do not match boxes " << boxes << " in B and N";
  if (failed(verifySameElementType(*this, getBoxes(), getScores(), "scores")))
    return failure();
  if (failed(verifyScalarOperand(*this, getMaxOutputBoxesPerClass(),
                                 "max_output_boxes_per_class")) ||
      failed(verifyScalarOperand(*this, getIouThreshold(), "iou_threshold")) ||
      failed(verifyScalarOperand(*this, getScoreThreshold(),
                                 "score_threshold")))
    return failure();
  // How many boxes survive is data-dependent; a static count would be a
  // claim the op cannot check.
  if (!out.isDynamicDim(0) || !isDynamicOr(out.getDimSize(1), 3) ||
      out.isDynamicDim(1))
    return emitOpError("result must be tensor<?x3xi64>, got ") << out;
  return success();
}

#define GET_OP_CLASSES
#include "loom/Dialect/Loom/IR/LoomOps.cpp.inc"
