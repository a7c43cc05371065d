//===- LoomFolds.cpp - Folders of loom ops --------------------------------===//
//
// Folding covers what exporters emit: identity reshapes, transposes and
// casts, and constant shape arithmetic (Shape -> Gather -> Concat -> Reshape
// chains). Constants are only computed for small tensors (kMaxFoldElements):
// folding weights is a graph optimization with its own pass and policy.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "loom/Dialect/Loom/IR/ConstantValues.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace loom;

namespace {

constexpr int64_t kMaxFoldElements = 4096;

/// The elements of a constant operand when they are small enough to fold.
DenseElementsAttr smallConstant(Attribute attr) {
  auto dense = dyn_cast_or_null<DenseElementsAttr>(attr);
  if (!dense || dense.getNumElements() > kMaxFoldElements)
    return {};
  return dense;
}

bool isFoldableResult(Type type) {
  auto t = dyn_cast<RankedTensorType>(type);
  return t && t.hasStaticShape() && t.getNumElements() <= kMaxFoldElements;
}

/// Maps a linear index of `resultShape` to the linear index of a broadcast
/// operand of `operandShape` (right-aligned, size-1 dimensions repeat).
int64_t broadcastSourceIndex(ArrayRef<int64_t> resultShape,
                             ArrayRef<int64_t> operandShape, int64_t linear) {
  int64_t source = 0, stride = 1;
  size_t offset = resultShape.size() - operandShape.size();
  for (int64_t d = resultShape.size() - 1; d >= 0; --d) {
    int64_t coordinate = linear % resultShape[d];
    linear /= resultShape[d];
    if (d < static_cast<int64_t>(offset))
      continue;
    int64_t size = operandShape[d - offset];
    if (size != 1)
      source += coordinate * stride;
    stride *= size;
  }
  return source;
}

using IntFn = function_ref<std::optional<APInt>(const APInt &, const APInt &)>;
using FloatFn =
    function_ref<std::optional<APFloat>(const APFloat &, const APFloat &)>;

/// Folds a broadcasting binary op over small constants. Either callback may
/// be null (that element kind is not folded) or return nullopt (not foldable,
/// e.g. division by zero).
OpFoldResult foldBinary(Type resultType, Attribute lhsAttr, Attribute rhsAttr,
                        IntFn intFn, FloatFn floatFn) {
  DenseElementsAttr lhs = smallConstant(lhsAttr), rhs = smallConstant(rhsAttr);
  if (!lhs || !rhs || !isFoldableResult(resultType))
    return {};
  auto type = cast<RankedTensorType>(resultType);
  ArrayRef<int64_t> shape = type.getShape();
  ArrayRef<int64_t> ls = lhs.getType().getShape(),
                    rs = rhs.getType().getShape();
  int64_t n = type.getNumElements();
  Type elementType = lhs.getElementType();
  if (isa<IntegerType>(elementType) && intFn) {
    auto lv = llvm::to_vector(lhs.getValues<APInt>());
    auto rv = llvm::to_vector(rhs.getValues<APInt>());
    SmallVector<APInt> out;
    for (int64_t i = 0; i < n; ++i) {
      std::optional<APInt> v = intFn(lv[broadcastSourceIndex(shape, ls, i)],
                                     rv[broadcastSourceIndex(shape, rs, i)]);
      if (!v)
        return {};
      out.push_back(*v);
    }
    return DenseElementsAttr::get(type, out);
  }
  if (isa<FloatType>(elementType) && floatFn) {
    auto lv = llvm::to_vector(lhs.getValues<APFloat>());
    auto rv = llvm::to_vector(rhs.getValues<APFloat>());
    SmallVector<APFloat> out;
    for (int64_t i = 0; i < n; ++i) {
      std::optional<APFloat> v =
          floatFn(lv[broadcastSourceIndex(shape, ls, i)],
                  rv[broadcastSourceIndex(shape, rs, i)]);
      if (!v)
        return {};
      out.push_back(*v);
    }
    return DenseElementsAttr::get(type, out);
  }
  return {};
}

/// `value` when it is a splat integer constant equal to `expected`.
bool isIntegerSplat(Attribute attr, int64_t expected) {
  auto dense = dyn_cast_or_null<DenseIntElementsAttr>(attr);
  return dense && dense.isSplat() &&
         dense.getSplatValue<APInt>().getSExtValue() == expected;
}

/// x op c -> x when c is an integer identity element and no broadcast grows x.
OpFoldResult foldIdentityOperand(Operation *op, Attribute rhs,
                                 int64_t identity) {
  Value lhs = op->getOperand(0);
  if (lhs.getType() == op->getResult(0).getType() &&
      isIntegerSplat(rhs, identity))
    return lhs;
  return {};
}

bool isUnsigned(Type type) {
  return getElementTypeOrSelf(type).isUnsignedInteger();
}

} // namespace

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  if (OpFoldResult r = foldIdentityOperand(*this, adaptor.getRhs(), 0))
    return r;
  return foldBinary(
      getType(), adaptor.getLhs(), adaptor.getRhs(),
      [](const APInt &a, const APInt &b) -> std::optional<APInt> {
        return a + b;
      },
      [](const APFloat &a, const APFloat &b) -> std::optional<APFloat> {
        return a + b;
      });
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  if (OpFoldResult r = foldIdentityOperand(*this, adaptor.getRhs(), 0))
    return r;
  return foldBinary(
      getType(), adaptor.getLhs(), adaptor.getRhs(),
      [](const APInt &a, const APInt &b) -> std::optional<APInt> {
        return a - b;
      },
      [](const APFloat &a, const APFloat &b) -> std::optional<APFloat> {
        return a - b;
      });
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  if (OpFoldResult r = foldIdentityOperand(*this, adaptor.getRhs(), 1))
    return r;
  return foldBinary(
      getType(), adaptor.getLhs(), adaptor.getRhs(),
      [](const APInt &a, const APInt &b) -> std::optional<APInt> {
        return a * b;
      },
      [](const APFloat &a, const APFloat &b) -> std::optional<APFloat> {
        return a * b;
      });
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  if (OpFoldResult r = foldIdentityOperand(*this, adaptor.getRhs(), 1))
    return r;
  bool isUnsignedDiv = isUnsigned(getType());
  return foldBinary(
      getType(), adaptor.getLhs(), adaptor.getRhs(),
      [&](const APInt &a, const APInt &b) -> std::optional<APInt> {
        if (b.isZero())
          return std::nullopt;
        return isUnsignedDiv ? a.udiv(b) : a.sdiv(b);
      },
      [](const APFloat &a, const APFloat &b) -> std::optional<APFloat> {
        return a / b;
      });
}

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  DenseElementsAttr input = smallConstant(adaptor.getInput());
  if (!input || !isFoldableResult(getType()))
    return {};
  auto type = cast<RankedTensorType>(getType());
  Type from = input.getElementType(), to = type.getElementType();
  // Integer <-> integer, the common case of shape arithmetic (i64 <-> i32).
  auto fromInt = dyn_cast<IntegerType>(from), toInt = dyn_cast<IntegerType>(to);
  if (fromInt && toInt) {
    SmallVector<APInt> out;
    for (const APInt &v : input.getValues<APInt>()) {
      if (toInt.getWidth() == 1)
        out.push_back(APInt(1, !v.isZero()));
      else if (fromInt.isUnsigned() || fromInt.getWidth() == 1)
        out.push_back(v.zextOrTrunc(toInt.getWidth()));
      else
        out.push_back(v.sextOrTrunc(toInt.getWidth()));
    }
    return DenseElementsAttr::get(type, out);
  }
  auto toFloat = dyn_cast<FloatType>(to);
  // The 8- and 4-bit floats saturate (or not) as the op says: not folded.
  if (fromInt && toFloat && fromInt.getWidth() > 1 &&
      toFloat.getWidth() >= 16) {
    SmallVector<APFloat> out;
    for (const APInt &v : input.getValues<APInt>()) {
      APFloat f(toFloat.getFloatSemantics());
      f.convertFromAPInt(v, !fromInt.isUnsigned(),
                         APFloat::rmNearestTiesToEven);
      out.push_back(f);
    }
    return DenseElementsAttr::get(type, out);
  }
  return {};
}

OpFoldResult DequantizeOp::fold(FoldAdaptor adaptor) {
  DenseElementsAttr input = smallConstant(adaptor.getInput());
  DenseElementsAttr scale = smallConstant(adaptor.getScale());
  DenseElementsAttr zeroPoint = smallConstant(adaptor.getZeroPoint());
  if (!input || !scale || (getZeroPoint() && !zeroPoint) ||
      !isa<IntegerType>(input.getElementType()) ||
      input.getElementType().getIntOrFloatBitWidth() <= 8 ||
      !isFoldableResult(getType()))
    return {};
  return evaluate(input, scale, zeroPoint, cast<RankedTensorType>(getType()));
}

DenseElementsAttr DequantizeOp::evaluate(ElementsAttr input,
                                         DenseElementsAttr scale,
                                         ElementsAttr zeroPoint,
                                         RankedTensorType type) {
  std::optional<SmallVector<int64_t>> values = getIntegerValues(input);
  std::optional<SmallVector<int64_t>> zeros;
  if (zeroPoint && !(zeros = getIntegerValues(zeroPoint)))
    return {};
  if (!values || !isa<FloatType>(scale.getElementType()))
    return {};
  ArrayRef<int64_t> shape = type.getShape();
  auto scales =
      llvm::map_to_vector(scale.getValues<APFloat>(),
                          [](const APFloat &f) { return f.convertToDouble(); });
  auto element = [&](int64_t i) {
    double zp =
        zeros
            ? double((*zeros)[broadcastSourceIndex(
                  shape, cast<ShapedType>(zeroPoint.getType()).getShape(), i)])
            : 0.0;
    // (x - zp) is exact in double; one rounding to the result type.
    return (double((*values)[i]) - zp) *
           scales[broadcastSourceIndex(shape, scale.getType().getShape(), i)];
  };
  int64_t n = type.getNumElements();
  if (type.getElementType().isF32()) {
    // Weights of whole models come this way: no APFloat per element.
    SmallVector<float> out(n);
    for (int64_t i = 0; i < n; ++i)
      out[i] = static_cast<float>(element(i));
    return DenseElementsAttr::get(type, ArrayRef<float>(out));
  }
  const llvm::fltSemantics &semantics =
      cast<FloatType>(type.getElementType()).getFloatSemantics();
  SmallVector<APFloat> out;
  out.reserve(n);
  for (int64_t i = 0; i < n; ++i) {
    APFloat f(element(i));
    bool lost;
    f.convert(semantics, APFloat::rmNearestTiesToEven, &lost);
    out.push_back(f);
  }
  return DenseElementsAttr::get(type, out);
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  auto type = cast<RankedTensorType>(getType());
  if (getInput().getType() == type && type.hasStaticShape())
    return getInput();
  if (DenseElementsAttr input = smallConstant(adaptor.getInput());
      input && type.hasStaticShape())
    return input.reshape(type);
  return {};
}

OpFoldResult TransposeOp::fold(FoldAdaptor adaptor) {
  ArrayRef<int64_t> perm = getPerm();
  bool identity = llvm::all_of(llvm::enumerate(perm), [](auto it) {
    return static_cast<int64_t>(it.index()) == it.value();
  });
  if (identity && getInput().getType() == getType())
    return getInput();
  DenseElementsAttr input = smallConstant(adaptor.getInput());
  if (!input || !isFoldableResult(getType()))
    return {};
  if (input.isSplat())
    return input.resizeSplat(cast<ShapedType>(getType()));
  auto type = cast<RankedTensorType>(getType());
  ArrayRef<int64_t> inShape = input.getType().getShape();
  SmallVector<int64_t> inStrides(inShape.size(), 1);
  for (int64_t d = static_cast<int64_t>(inShape.size()) - 2; d >= 0; --d)
    inStrides[d] = inStrides[d + 1] * inShape[d + 1];
  auto values = llvm::to_vector(input.getValues<Attribute>());
  SmallVector<Attribute> out;
  for (int64_t i = 0, n = type.getNumElements(); i < n; ++i) {
    int64_t linear = i, source = 0;
    for (int64_t d = type.getRank() - 1; d >= 0; --d) {
      source += (linear % type.getDimSize(d)) * inStrides[perm[d]];
      linear /= type.getDimSize(d);
    }
    out.push_back(values[source]);
  }
  return DenseElementsAttr::get(type, out);
}

OpFoldResult ConcatOp::fold(FoldAdaptor adaptor) {
  if (getInputs().size() == 1 && getInputs()[0].getType() == getType())
    return getInputs()[0];
  if (!isFoldableResult(getType()))
    return {};
  auto type = cast<RankedTensorType>(getType());
  int64_t axis = *normalizeAxis(getAxis(), type.getRank());
  SmallVector<DenseElementsAttr> parts;
  for (Attribute a : adaptor.getInputs()) {
    DenseElementsAttr d = smallConstant(a);
    if (!d)
      return {};
    parts.push_back(d);
  }
  // Rows of the concatenation: the product of the dimensions before `axis`.
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= type.getDimSize(d);
  SmallVector<SmallVector<Attribute>> partValues;
  for (DenseElementsAttr p : parts)
    partValues.push_back(llvm::to_vector(p.getValues<Attribute>()));
  SmallVector<Attribute> out;
  for (int64_t row = 0; row < outer; ++row) {
    for (auto [p, values] : llvm::zip(parts, partValues)) {
      int64_t chunk = p.getNumElements() / std::max<int64_t>(outer, 1);
      out.append(values.begin() + row * chunk,
                 values.begin() + (row + 1) * chunk);
    }
  }
  return DenseElementsAttr::get(type, out);
}

OpFoldResult GatherOp::fold(FoldAdaptor adaptor) {
  DenseElementsAttr data = smallConstant(adaptor.getData());
  auto indices = dyn_cast_or_null<DenseIntElementsAttr>(adaptor.getIndices());
  if (!data || !indices || !isFoldableResult(getType()))
    return {};
  auto type = cast<RankedTensorType>(getType());
  ArrayRef<int64_t> dataShape = data.getType().getShape();
  int64_t axis = *normalizeAxis(getAxis(), dataShape.size());
  int64_t outer = 1, inner = 1, axisSize = dataShape[axis];
  for (int64_t d = 0; d < axis; ++d)
    outer *= dataShape[d];
  for (size_t d = axis + 1; d < dataShape.size(); ++d)
    inner *= dataShape[d];
  auto values = llvm::to_vector(data.getValues<Attribute>());
  SmallVector<int64_t> idx;
  for (const APInt &v : indices.getValues<APInt>()) {
    int64_t i = v.getSExtValue();
    if (i < 0)
      i += axisSize;
    if (i < 0 || i >= axisSize)
      return {}; // Out of range: leave it for the run-time error.
    idx.push_back(i);
  }
  SmallVector<Attribute> out;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i : idx)
      for (int64_t in = 0; in < inner; ++in)
        out.push_back(values[(o * axisSize + i) * inner + in]);
  return DenseElementsAttr::get(type, out);
}

template <typename AxesOp>
static OpFoldResult foldAxesReshape(AxesOp op, Attribute input) {
  if (op.getAxes().empty() && op.getInput().getType() == op.getType())
    return op.getInput();
  auto type = cast<RankedTensorType>(op.getType());
  if (DenseElementsAttr d = smallConstant(input); d && type.hasStaticShape())
    return d.reshape(type);
  return {};
}

OpFoldResult SqueezeOp::fold(FoldAdaptor adaptor) {
  return foldAxesReshape(*this, adaptor.getInput());
}

OpFoldResult UnsqueezeOp::fold(FoldAdaptor adaptor) {
  return foldAxesReshape(*this, adaptor.getInput());
}

OpFoldResult ShapeOp::fold(FoldAdaptor) {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto type = cast<RankedTensorType>(getType());
  if (!type.hasStaticShape())
    return {};
  int64_t rank = in.getRank();
  // I64Attr getters return uint64_t: read the value signed first.
  int64_t start = static_cast<int64_t>(getStart());
  if (start < 0)
    start += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  SmallVector<int64_t> dims;
  for (int64_t i = start; i < start + type.getDimSize(0); ++i) {
    if (in.isDynamicDim(i))
      return {};
    dims.push_back(in.getDimSize(i));
  }
  return DenseElementsAttr::get(type, ArrayRef<int64_t>(dims));
}

OpFoldResult SizeOp::fold(FoldAdaptor) {
  auto in = cast<RankedTensorType>(getInput().getType());
  if (!in.hasStaticShape())
    return {};
  return DenseElementsAttr::get(cast<ShapedType>(getType()),
                                ArrayRef<int64_t>{in.getNumElements()});
}

OpFoldResult ConstantOfShapeOp::fold(FoldAdaptor) {
  if (!isFoldableResult(getType()))
    return {};
  return DenseElementsAttr::get(cast<ShapedType>(getType()),
                                ArrayRef<Attribute>{getValue()});
}
