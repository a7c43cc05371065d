//===- QuantizationBuilders.cpp - QDQ and integer-arithmetic ONNX ops -----===//
//
// The quantization ops become loom.quantize / loom.dequantize around float
// compute, so that passes see the usual dequantize / compute / quantize
// pattern:
//
//   QuantizeLinear         saturate(round(x / scale) + zero_point), in the
//                          scale's float type, cast to the zero point's type
//   DequantizeLinear       (float(x) - float(zero_point)) * scale
//   DynamicQuantizeLinear  uint8 scale and zero point from min/max of x
//   MatMulInteger          (a - a_zp) @ (b - b_zp) on i32
//   ConvInteger            conv(x - x_zp, w - w_zp) on i32
//   QLinearMatMul          quantize(dequantize(a) @ dequantize(b)) in float
//   QLinearConv            quantize(conv(dequantize(x), dequantize(w), b))
//
// QuantizeLinear and DequantizeLinear become loom.quantize and
// loom.dequantize, which `-loom-fold-qdq` turns into quantized contractions
// around matmul and conv. Per-axis (and per-row / per-column / per-channel)
// scales and zero points are reshaped so that they broadcast along their
// axis. Shapes are checked before a broadcasting op is created, so a bad
// model gets a diagnostic, never a failed type inference.
//
//===----------------------------------------------------------------------===//

#include "BuilderUtils.h"
#include "ConvWindow.h"
#include "GraphImporter.h"

#include "loom/Dialect/Loom/IR/ShapeUtils.h"

using namespace mlir;

namespace loom::onnx_import {
namespace {

/// A broadcasting binary op whose operand shapes are checked first (an
/// inference failure inside `create` would abort). Null after an error or
/// when an operand is null.
template <typename OpT> Value binary(NodeBinder &b, Value lhs, Value rhs) {
  if (!lhs || !rhs)
    return {};
  RankedTensorType lt = typeOf(lhs), rt = typeOf(rhs);
  if (failed(broadcastShapes(lt.getShape(), rt.getShape()))) {
    b.emitError() << "operand shapes " << lt << " and " << rt
                  << " do not broadcast";
    return {};
  }
  return createInferred<OpT>(b, lhs, rhs);
}

/// The float type of a scale input; an error when it is not a float.
FloatType scaleFloatType(NodeBinder &b, Value scale, StringRef name) {
  if (!scale)
    return {};
  Type t = typeOf(scale).getElementType();
  if (!isa<Float16Type, BFloat16Type, Float32Type, Float64Type>(t)) {
    b.emitError() << "'" << name << "' must be a float tensor, not " << t;
    return {};
  }
  return cast<FloatType>(t);
}

/// Checks that `v` holds 8- or 16-bit integers (the quantized types).
LogicalResult requireQuantizedInt(NodeBinder &b, Value v, StringRef name) {
  auto t = dyn_cast<IntegerType>(typeOf(v).getElementType());
  if (!t || (t.getWidth() != 8 && t.getWidth() != 16))
    return b.emitError() << "'" << name << "' of element type "
                         << typeOf(v).getElementType() << " is not supported "
                         << "(expects 8- or 16-bit integers)";
  return success();
}

/// Makes a quantization parameter (scale or zero point) broadcast against
/// `data`:
///  - 0-D, or 1-D with one element: per tensor, made 0-D;
///  - 1-D with D elements when `axis` is set: per axis, reshaped to the rank
///    of `data` with D at `axis` and 1 elsewhere (D must match `data`);
///  - with `allowFullRank`, a tensor of the rank of `data` that broadcasts
///    against it (MatMulInteger's N-D zero points), used as is.
/// `axis` may be negative; it is only normalized when a per-axis parameter
/// needs it. Null after an error; null in, null out.
Value alignParam(NodeBinder &b, Value v, StringRef name, RankedTensorType data,
                 StringRef dataName, std::optional<int64_t> axis,
                 bool allowFullRank = false) {
  if (!v)
    return {};
  RankedTensorType type = typeOf(v);
  auto &builder = b.builder();
  if (type.getRank() == 0)
    return v;
  if (type.getRank() == 1 && type.getDimSize(0) == 1)
    return ReshapeOp::create(builder, b.loc(),
                             RankedTensorType::get({}, type.getElementType()),
                             v, b.i64Tensor({}), false);
  if (type.getRank() == 1 && axis) {
    std::optional<int64_t> a = normalizeAxisOrFail(b, *axis, data.getRank());
    if (!a)
      return {};
    int64_t size = type.getDimSize(0), expected = data.getDimSize(*a);
    if (!ShapedType::isDynamic(size) && !ShapedType::isDynamic(expected) &&
        size != expected) {
      b.emitError() << "'" << name << "' has " << size << " elements but axis "
                    << *a << " of '" << dataName << "' has size " << expected;
      return {};
    }
    if (data.getRank() == 1)
      return v;
    SmallVector<int64_t> shape(data.getRank(), 1), shapeValues = shape;
    shape[*a] = size;
    shapeValues[*a] = ShapedType::isDynamic(size) ? -1 : size;
    return ReshapeOp::create(
        builder, b.loc(), RankedTensorType::get(shape, type.getElementType()),
        v, b.i64Tensor(shapeValues), false);
  }
  if (allowFullRank && type.getRank() == data.getRank()) {
    FailureOr<SmallVector<int64_t>> shape =
        broadcastShapes(data.getShape(), type.getShape());
    if (succeeded(shape) && areShapesCompatible(*shape, data.getShape()))
      return v;
    b.emitError() << "'" << name << "' of type " << type
                  << " does not broadcast against '" << dataName << "' of type "
                  << data;
    return {};
  }
  b.emitError() << "'" << name << "' of type " << type
                << " is not supported here (expects a scalar, a 1-element "
                << "tensor"
                << (axis ? " or a 1-D tensor along the quantized axis" : "")
                << (allowFullRank ? " or a tensor of the data's rank" : "")
                << ")";
  return {};
}

/// Checks what loom.quantize and loom.dequantize require of aligned
/// parameters: the scale broadcasts to the data, and a zero point has the
/// scale's shape (ONNX gives both one shape, but a model may not).
LogicalResult checkParamsFit(NodeBinder &b, Value x, Value scale,
                             Value zeroPoint) {
  RankedTensorType data = typeOf(x), scaleType = typeOf(scale);
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes(data.getShape(), scaleType.getShape());
  if (failed(shape) || ArrayRef<int64_t>(*shape) != data.getShape())
    return b.emitError() << "scale of type " << scaleType
                         << " does not broadcast to " << data;
  if (zeroPoint && typeOf(zeroPoint).getShape() != scaleType.getShape())
    return b.emitError() << "zero point of type " << typeOf(zeroPoint)
                         << " does not have the shape of the scale "
                         << scaleType;
  return success();
}

/// loom.quantize: saturate(round(x / scale) + zeroPoint) as `resultElement`.
/// `x` and `scale` share a float type; `zeroPoint` (may be null: 0) has
/// `resultElement` and the shape of `scale`. `saturate` matters for the
/// 8-bit float results only.
Value quantize(NodeBinder &b, Value x, Value scale, Value zeroPoint,
               Type resultElement, bool saturate = true) {
  if (!x || !scale || failed(checkParamsFit(b, x, scale, zeroPoint)))
    return {};
  auto op =
      QuantizeOp::create(b.builder(), b.loc(), typeOf(x).clone(resultElement),
                         x, scale, zeroPoint);
  if (!saturate)
    op.setSaturate(false);
  return op;
}

/// loom.dequantize: (x - zeroPoint) * scale in the scale's float type;
/// `zeroPoint` (may be null: 0) has `x`'s element type and the shape of
/// `scale`.
Value dequantize(NodeBinder &b, Value x, Value scale, Value zeroPoint) {
  if (!x || !scale || failed(checkParamsFit(b, x, scale, zeroPoint)))
    return {};
  if (zeroPoint &&
      typeOf(zeroPoint).getElementType() != typeOf(x).getElementType()) {
    b.emitError() << "the zero point's element type "
                  << typeOf(zeroPoint).getElementType()
                  << " differs from the quantized value's "
                  << typeOf(x).getElementType();
    return {};
  }
  return DequantizeOp::create(b.builder(), b.loc(),
                              typeOf(x).clone(typeOf(scale).getElementType()),
                              x, scale, zeroPoint);
}

/// The integer type of a quantized result: the zero point's element type,
/// uint8 when there is none.
Type quantizedType(NodeBinder &b, Value zeroPoint) {
  if (!zeroPoint)
    return IntegerType::get(b.context(), 8, IntegerType::Unsigned);
  return typeOf(zeroPoint).getElementType();
}

/// Binds `value` to output `i` after refining it to the inferred type.
LogicalResult finish(NodeBinder &b, size_t i, Value value) {
  if (!value)
    return failure();
  RankedTensorType type = b.outputType(i);
  if (!type || failed(refineTo(b, value, type)))
    return failure();
  b.setOutput(i, value);
  return success();
}

/// The attributes of QuantizeLinear/DequantizeLinear. Per-axis parameters
/// exist from opset 13 (default axis 1); before, only scalars are allowed.
/// Opset 19 adds `saturate` (QuantizeLinear; float8 results only), 21
/// `block_size` and QuantizeLinear's `output_dtype`, 25 `precision` (the
/// type `x / scale` is computed in; only the default, the scale's type, is
/// supported).
struct QuantAttrs {
  std::optional<int64_t> axis;
  bool saturate = true;
  int64_t blockSize = 0;
  int64_t outputDataType = 0;
};

FailureOr<QuantAttrs> readQuantAttrs(NodeBinder &b, bool isQuantize) {
  QuantAttrs attrs;
  if (b.opset() < 13) {
    if (failed(b.rejectUnknownAttrs({})))
      return failure();
    return attrs;
  }
  SmallVector<StringRef> known = {"axis"};
  if (isQuantize && b.opset() >= 19)
    known.push_back("saturate");
  if (b.opset() >= 21)
    known.append({"block_size", "output_dtype"});
  if (b.opset() >= 25)
    known.push_back("precision");
  if (failed(b.rejectUnknownAttrs(known)))
    return failure();
  std::optional<int64_t> axis = b.intAttr("axis", 1);
  std::optional<int64_t> saturate = b.intAttr("saturate", 1);
  std::optional<int64_t> blockSize = b.intAttr("block_size", 0);
  std::optional<int64_t> outputDataType = b.intAttr("output_dtype", 0);
  std::optional<int64_t> precision = b.intAttr("precision", 0);
  if (!axis || !saturate || !blockSize || !outputDataType || !precision)
    return failure();
  if (*blockSize < 0)
    return b.fail("'block_size' must not be negative, got " +
                  std::to_string(*blockSize));
  if (*precision != 0)
    return b.fail("'precision' = " + std::to_string(*precision) +
                  " is not supported (only the scale's type, the default)");
  attrs.axis = *axis;
  attrs.saturate = *saturate != 0;
  attrs.blockSize = *blockSize;
  attrs.outputDataType = *outputDataType;
  return attrs;
}

/// Whether `t` is one of the 8- and 4-bit floats that QuantizeLinear and
/// DequantizeLinear take (float8 from opset 19, float4 from 23); not E8M0,
/// a scale type that the lowering's `isNarrowFloat` also counts.
bool isQuantizedFloat(Type t) {
  return isa<Float8E4M3FNType, Float8E4M3FNUZType, Float8E5M2Type,
             Float8E5M2FNUZType, Float4E2M1FNType>(t);
}

/// Checks that `v` holds quantized values: integers of 2 bits up to
/// `maxBits` (16 for QuantizeLinear's results, 32 for DequantizeLinear's
/// inputs, which include int32 biases), or the 8- and 4-bit floats.
LogicalResult requireQuantized(NodeBinder &b, Value v, StringRef name,
                               unsigned maxBits) {
  Type element = typeOf(v).getElementType();
  auto t = dyn_cast<IntegerType>(element);
  if (isQuantizedFloat(element) ||
      (t && t.getWidth() != 1 && t.getWidth() <= maxBits &&
       llvm::isPowerOf2_32(t.getWidth())))
    return success();
  return b.emitError() << "'" << name << "' of element type " << element
                       << " is not supported (expects integers of 2 to "
                       << maxBits << " bits, or 8- or 4-bit floats)";
}

/// Whether input `index`, a zero point of a float type, is a constant of
/// zeros: loom.quantize and loom.dequantize take no float zero point, so
/// such a one is dropped, and any other is applied by elementwise ops
/// (the float8 types rarely have one; ONNX defines it all the same).
bool isZeroFloatZeroPoint(NodeBinder &b, size_t index) {
  DenseElementsAttr values = b.constantInput(index);
  return values && llvm::all_of(values.getValues<APFloat>(),
                                [](const APFloat &v) { return v.isZero(); });
}

/// Blocked quantization (opset 21's `block_size` B): `param` has the rank of
/// `data`, with ceil(D / B) entries along `axis` (D = the data's size there)
/// and the data's sizes elsewhere; each entry covers B consecutive elements.
/// Gathered to D entries along the axis, it broadcasts as a per-element
/// parameter. Null after an error; null in, null out.
Value expandBlocks(NodeBinder &b, Value param, StringRef name,
                   RankedTensorType data, int64_t axis, int64_t blockSize) {
  if (!param)
    return {};
  RankedTensorType type = typeOf(param);
  std::optional<int64_t> a = normalizeAxisOrFail(b, axis, data.getRank());
  if (!a)
    return {};
  if (type.getRank() != data.getRank()) {
    b.emitError() << "blocked '" << name << "' of type " << type
                  << " must have the rank of the data " << data;
    return {};
  }
  int64_t size = data.getDimSize(*a);
  if (ShapedType::isDynamic(size)) {
    b.emitError() << "blocked quantization along axis " << *a
                  << " of run-time size is not supported";
    return {};
  }
  // The gather's index table has an entry per element along the axis; a
  // size a few bytes of model can claim must not allocate it unchecked.
  constexpr int64_t kMaxBlockedAxis = int64_t(1) << 24;
  if (size > kMaxBlockedAxis) {
    b.emitError() << "blocked quantization along axis " << *a << " of " << size
                  << " elements is not supported (at most " << kMaxBlockedAxis
                  << ")";
    return {};
  }
  int64_t blocks = (size + blockSize - 1) / blockSize;
  for (int64_t d = 0; d < data.getRank(); ++d) {
    int64_t expected = d == *a ? blocks : data.getDimSize(d);
    if (!ShapedType::isDynamic(expected) && type.getDimSize(d) != expected) {
      b.emitError() << "blocked '" << name << "' of type " << type
                    << " must have " << expected << " entries along axis " << d
                    << " (block_size " << blockSize << ", data " << data << ")";
      return {};
    }
  }
  SmallVector<int64_t> blockOf(size);
  for (int64_t i = 0; i < size; ++i)
    blockOf[i] = i / blockSize;
  SmallVector<int64_t> shape(type.getShape());
  shape[*a] = size;
  return GatherOp::create(b.builder(), b.loc(), type.clone(shape), param,
                          b.i64Tensor(blockOf),
                          b.builder().getI64IntegerAttr(*a));
}

/// Aligns a scale or zero point with the data: blocked when `block_size`
/// is set, else per tensor or per axis (alignParam).
Value alignQuantParam(NodeBinder &b, Value v, StringRef name,
                      RankedTensorType data, const QuantAttrs &attrs) {
  if (attrs.blockSize > 0)
    return expandBlocks(b, v, name, data, *attrs.axis, attrs.blockSize);
  return alignParam(b, v, name, data, "x", attrs.axis);
}

LogicalResult buildQuantizeLinear(NodeBinder &b) {
  FailureOr<QuantAttrs> attrs = readQuantAttrs(b, /*isQuantize=*/true);
  Value x = b.input(0), scale = b.input(1), zeroPoint = b.optionalInput(2);
  if (failed(attrs) || !x || !scale)
    return failure();
  FloatType floatType = scaleFloatType(b, scale, "y_scale");
  if (!floatType)
    return failure();
  if (zeroPoint &&
      failed(requireQuantized(b, zeroPoint, "y_zero_point", /*maxBits=*/16)))
    return failure();
  // The result's type: the zero point's, else `output_dtype`, else uint8.
  Type resultElement =
      zeroPoint ? typeOf(zeroPoint).getElementType()
                : IntegerType::get(b.context(), 8, IntegerType::Unsigned);
  if (!zeroPoint && attrs->outputDataType != 0) {
    resultElement = convertElementType(
        b.context(), static_cast<int32_t>(attrs->outputDataType));
    if (!resultElement)
      return b.fail(
          "'output_dtype' = " + std::to_string(attrs->outputDataType) +
          " names an element type that is not supported");
  }
  bool floatZeroPoint = zeroPoint && isQuantizedFloat(resultElement);
  if (floatZeroPoint && isZeroFloatZeroPoint(b, 2))
    zeroPoint = {}, floatZeroPoint = false;
  RankedTensorType data = typeOf(x);
  scale = alignQuantParam(b, scale, "y_scale", data, *attrs);
  if (!scale ||
      (zeroPoint && !(zeroPoint = alignQuantParam(b, zeroPoint, "y_zero_point",
                                                  data, *attrs))))
    return failure();
  x = castTo(b, x, floatType);
  if (floatZeroPoint) {
    // x / scale + zero_point, rounded once into the float type.
    Value shifted = binary<AddOp>(b, binary<DivOp>(b, x, scale),
                                  castTo(b, zeroPoint, floatType));
    if (!shifted)
      return failure();
    auto y = CastOp::create(b.builder(), b.loc(),
                            typeOf(shifted).clone(resultElement), shifted);
    if (!attrs->saturate)
      y.setSaturate(false);
    return finish(b, 0, y);
  }
  Value y = quantize(b, x, scale, zeroPoint, resultElement, attrs->saturate);
  // The linked library's inference predates `output_dtype` and says uint8
  // for a result without a zero point: the node's own type stands.
  RankedTensorType inferred = b.knownOutputType(0);
  if (y && attrs->outputDataType != 0 && inferred &&
      inferred.getElementType() != resultElement) {
    b.setOutput(0, y);
    return success();
  }
  return finish(b, 0, y);
}

LogicalResult buildDequantizeLinear(NodeBinder &b) {
  FailureOr<QuantAttrs> attrs = readQuantAttrs(b, /*isQuantize=*/false);
  Value x = b.input(0), scale = b.input(1), zeroPoint = b.optionalInput(2);
  if (failed(attrs) || !x || !scale)
    return failure();
  FloatType floatType = scaleFloatType(b, scale, "x_scale");
  if (!floatType || failed(requireQuantized(b, x, "x", /*maxBits=*/32)))
    return failure();
  bool floatZeroPoint =
      zeroPoint && isQuantizedFloat(typeOf(x).getElementType());
  if (floatZeroPoint && isZeroFloatZeroPoint(b, 2))
    zeroPoint = {}, floatZeroPoint = false;
  RankedTensorType data = typeOf(x);
  scale = alignQuantParam(b, scale, "x_scale", data, *attrs);
  if (!scale ||
      (zeroPoint && !(zeroPoint = alignQuantParam(b, zeroPoint, "x_zero_point",
                                                  data, *attrs))))
    return failure();
  // (x - zero_point) * scale: a float zero point by elementwise ops.
  Value y = floatZeroPoint
                ? binary<MulOp>(b,
                                binary<SubOp>(b, castTo(b, x, floatType),
                                              castTo(b, zeroPoint, floatType)),
                                scale)
                : dequantize(b, x, scale, zeroPoint);
  // `output_dtype` (opset 21+), when given, must be the scale's type.
  if (y && attrs->outputDataType != 0 &&
      convertElementType(b.context(), static_cast<int32_t>(
                                          attrs->outputDataType)) != floatType)
    return b.fail("'output_dtype' = " + std::to_string(attrs->outputDataType) +
                  " differs from the scale's type, which is not supported");
  return finish(b, 0, y);
}

/// DynamicQuantizeLinear-11, as its ONNX function body:
///   scale = (max(0, max(x)) - min(0, min(x))) / 255
///   zero_point = uint8(round(clip(0 - min(0, min(x)) / scale, 0, 255)))
///   y = QuantizeLinear(x, scale, zero_point)
LogicalResult buildDynamicQuantizeLinear(NodeBinder &b) {
  if (failed(b.rejectUnknownAttrs({})))
    return failure();
  Value x = b.input(0);
  if (!x)
    return failure();
  RankedTensorType type = typeOf(x);
  if (!type.getElementType().isF32())
    return b.emitError() << "'x' of element type " << type.getElementType()
                         << " is not supported (expects f32)";
  auto &builder = b.builder();
  Type f32 = type.getElementType();
  auto u8 = IntegerType::get(b.context(), 8, IntegerType::Unsigned);
  auto scalarType = RankedTensorType::get({}, f32);
  SmallVector<int64_t> axes;
  for (int64_t i = 0; i < type.getRank(); ++i)
    axes.push_back(i);
  Value min = ReduceMinOp::create(builder, b.loc(), scalarType, x, axes, false);
  Value max = ReduceMaxOp::create(builder, b.loc(), scalarType, x, axes, false);
  min = createInferred<MinOp>(b, min, b.scalar(f32, 0.0));
  max = createInferred<MaxOp>(b, max, b.scalar(f32, 0.0));
  Value scale = createInferred<DivOp>(b, createInferred<SubOp>(b, max, min),
                                      b.scalar(f32, 255.0));
  Value zeroPoint = createInferred<SubOp>(b, b.scalar(f32, 0.0),
                                          createInferred<DivOp>(b, min, scale));
  zeroPoint = createInferred<MaxOp>(b, zeroPoint, b.scalar(f32, 0.0));
  zeroPoint = createInferred<MinOp>(b, zeroPoint, b.scalar(f32, 255.0));
  // Rounded and clamped to [0, 255], so the cast is exact.
  zeroPoint = castTo(b, createInferred<RoundOp>(b, zeroPoint), u8);
  if (b.hasOutput(0) &&
      failed(finish(b, 0, quantize(b, x, scale, zeroPoint, u8))))
    return failure();
  if (b.hasOutput(1) && failed(finish(b, 1, scale)))
    return failure();
  if (b.hasOutput(2) && failed(finish(b, 2, zeroPoint)))
    return failure();
  return success();
}

/// `v - zeroPoint` on i32 (`zeroPoint` may be null).
Value subtractOnI32(NodeBinder &b, Value v, Value zeroPoint) {
  Type i32 = b.builder().getI32Type();
  Value result = castTo(b, v, i32);
  if (zeroPoint)
    result = binary<SubOp>(b, result, castTo(b, zeroPoint, i32));
  return result;
}

/// Per-row axis of a matrix operand (its second-to-last), none for 1-D.
std::optional<int64_t> rowAxis(RankedTensorType t) {
  return t.getRank() >= 2 ? std::optional<int64_t>(t.getRank() - 2)
                          : std::nullopt;
}
/// Per-column axis of a matrix operand (its last), none for 1-D.
std::optional<int64_t> columnAxis(RankedTensorType t) {
  return t.getRank() >= 2 ? std::optional<int64_t>(t.getRank() - 1)
                          : std::nullopt;
}

/// MatMulInteger-10: (a - a_zero_point) @ (b - b_zero_point) on i32. A 1-D
/// a_zero_point is per row of `a`, a 1-D b_zero_point per column of `b`;
/// N-D zero points broadcast as they are.
LogicalResult buildMatMulInteger(NodeBinder &b) {
  if (failed(b.rejectUnknownAttrs({})))
    return failure();
  Value lhs = b.input(0), rhs = b.input(1);
  Value lhsZp = b.optionalInput(2), rhsZp = b.optionalInput(3);
  RankedTensorType type = b.outputType(0);
  if (!lhs || !rhs || !type)
    return failure();
  if (failed(requireQuantizedInt(b, lhs, "A")) ||
      failed(requireQuantizedInt(b, rhs, "B")))
    return failure();
  if (!type.getElementType().isInteger(32))
    return b.emitError() << "expects an i32 result, not " << type;
  RankedTensorType lt = typeOf(lhs), rt = typeOf(rhs);
  if (lhsZp && !(lhsZp = alignParam(b, lhsZp, "a_zero_point", lt, "A",
                                    rowAxis(lt), true)))
    return failure();
  if (rhsZp && !(rhsZp = alignParam(b, rhsZp, "b_zero_point", rt, "B",
                                    columnAxis(rt), true)))
    return failure();
  Value a = subtractOnI32(b, lhs, lhsZp), w = subtractOnI32(b, rhs, rhsZp);
  if (!a || !w)
    return failure();
  b.setOutput(0, MatMulOp::create(b.builder(), b.loc(), type, a, w));
  return success();
}

/// QLinearMatMul-10: quantize(dequantize(a) @ dequantize(b)) in the float
/// type of a_scale. Scales and zero points of `a` and of the result are per
/// tensor or per row, those of `b` per tensor or per column.
LogicalResult buildQLinearMatMul(NodeBinder &b) {
  if (failed(b.rejectUnknownAttrs({})))
    return failure();
  Value lhs = b.input(0), lhsScale = b.input(1), lhsZp = b.input(2);
  Value rhs = b.input(3), rhsScale = b.input(4), rhsZp = b.input(5);
  Value outScale = b.input(6), outZp = b.input(7);
  RankedTensorType type = b.outputType(0);
  if (!lhs || !lhsScale || !lhsZp || !rhs || !rhsScale || !rhsZp || !outScale ||
      !outZp || !type)
    return failure();
  FloatType floatType = scaleFloatType(b, lhsScale, "a_scale");
  if (!floatType || !scaleFloatType(b, rhsScale, "b_scale") ||
      !scaleFloatType(b, outScale, "y_scale"))
    return failure();
  if (failed(requireQuantizedInt(b, lhs, "a")) ||
      failed(requireQuantizedInt(b, rhs, "b")) ||
      failed(requireQuantizedInt(b, outZp, "y_zero_point")))
    return failure();
  RankedTensorType lt = typeOf(lhs), rt = typeOf(rhs);
  auto param = [&](Value v, StringRef name, RankedTensorType data,
                   std::optional<int64_t> axis) {
    StringRef dataName = name.substr(0, 1); // a_*, b_*, y_*: 'a', 'b', 'y'
    return alignParam(b, v, name, data, dataName, axis);
  };
  Value a = dequantize(
      b, lhs, param(castTo(b, lhsScale, floatType), "a_scale", lt, rowAxis(lt)),
      param(lhsZp, "a_zero_point", lt, rowAxis(lt)));
  if (!a)
    return failure();
  Value w = dequantize(
      b, rhs,
      param(castTo(b, rhsScale, floatType), "b_scale", rt, columnAxis(rt)),
      param(rhsZp, "b_zero_point", rt, columnAxis(rt)));
  if (!w)
    return failure();
  Value product =
      MatMulOp::create(b.builder(), b.loc(), type.clone(floatType), a, w);
  Value scale =
      param(castTo(b, outScale, floatType), "y_scale", type, rowAxis(type));
  Value zeroPoint = param(outZp, "y_zero_point", type, rowAxis(type));
  if (!scale || !zeroPoint)
    return failure();
  return finish(
      b, 0,
      quantize(b, product, scale, zeroPoint, quantizedType(b, zeroPoint)));
}

/// Kernel window attributes of ConvInteger and QLinearConv: the rules of
/// Conv (ConvWindow.h) plus `group`.
struct WindowAttrs : Window {
  int64_t group = 1;
};

std::optional<WindowAttrs> readConvWindow(NodeBinder &b, RankedTensorType input,
                                          RankedTensorType weight) {
  if (failed(b.rejectUnknownAttrs({"auto_pad", "dilations", "group",
                                   "kernel_shape", "pads", "strides"})))
    return std::nullopt;
  WindowAttrs w;
  std::optional<int64_t> group = b.intAttr("group", 1);
  if (!group || failed(onnx_import::readConvWindow(b, input, weight, w)))
    return std::nullopt;
  w.group = *group;
  return w;
}

/// ConvInteger-10: conv(x - x_zero_point, w - w_zero_point) on i32. Padding
/// is applied after the subtraction (pads contribute 0). x_zero_point is per
/// tensor, w_zero_point per tensor or per output channel.
LogicalResult buildConvInteger(NodeBinder &b) {
  Value x = b.input(0), weight = b.input(1);
  Value xZp = b.optionalInput(2), wZp = b.optionalInput(3);
  RankedTensorType type = b.outputType(0);
  if (!x || !weight || !type)
    return failure();
  std::optional<WindowAttrs> w = readConvWindow(b, typeOf(x), typeOf(weight));
  if (!w)
    return failure();
  if (failed(requireQuantizedInt(b, x, "x")) ||
      failed(requireQuantizedInt(b, weight, "w")))
    return failure();
  if (!type.getElementType().isInteger(32))
    return b.emitError() << "expects an i32 result, not " << type;
  if (xZp &&
      !(xZp = alignParam(b, xZp, "x_zero_point", typeOf(x), "x", std::nullopt)))
    return failure();
  if (wZp &&
      !(wZp = alignParam(b, wZp, "w_zero_point", typeOf(weight), "w", 0)))
    return failure();
  Value input = subtractOnI32(b, x, xZp),
        filter = subtractOnI32(b, weight, wZp);
  if (!input || !filter)
    return failure();
  b.setOutput(0,
              ConvOp::create(b.builder(), b.loc(), type, input, filter, Value(),
                             w->strides, w->pads, w->dilations, w->group));
  return success();
}

/// QLinearConv-10: quantize(conv(dequantize(x), dequantize(w)) + bias) in
/// the float type of x_scale, where the i32 bias is dequantized with scale
/// x_scale * w_scale. w_scale and w_zero_point are per tensor or per output
/// channel; the others are per tensor.
LogicalResult buildQLinearConv(NodeBinder &b) {
  Value x = b.input(0), xScale = b.input(1), xZp = b.input(2);
  Value weight = b.input(3), wScale = b.input(4), wZp = b.input(5);
  Value yScale = b.input(6), yZp = b.input(7), bias = b.optionalInput(8);
  RankedTensorType type = b.outputType(0);
  if (!x || !xScale || !xZp || !weight || !wScale || !wZp || !yScale || !yZp ||
      !type)
    return failure();
  RankedTensorType xt = typeOf(x), wt = typeOf(weight);
  std::optional<WindowAttrs> w = readConvWindow(b, xt, wt);
  if (!w)
    return failure();
  FloatType floatType = scaleFloatType(b, xScale, "x_scale");
  if (!floatType || !scaleFloatType(b, wScale, "w_scale") ||
      !scaleFloatType(b, yScale, "y_scale"))
    return failure();
  if (failed(requireQuantizedInt(b, x, "x")) ||
      failed(requireQuantizedInt(b, weight, "w")) ||
      failed(requireQuantizedInt(b, yZp, "y_zero_point")))
    return failure();
  xScale = alignParam(b, castTo(b, xScale, floatType), "x_scale", xt, "x",
                      std::nullopt);
  wScale = castTo(b, wScale, floatType);
  Value input = dequantize(
      b, x, xScale, alignParam(b, xZp, "x_zero_point", xt, "x", std::nullopt));
  if (!input)
    return failure();
  Value filter =
      dequantize(b, weight, alignParam(b, wScale, "w_scale", wt, "w", 0),
                 alignParam(b, wZp, "w_zero_point", wt, "w", 0));
  if (!filter)
    return failure();
  Value biasValue;
  if (bias) {
    RankedTensorType bt = typeOf(bias);
    if (bt.getRank() != 1)
      return b.emitError() << "'B' must be 1-D, not " << bt;
    if (!isa<IntegerType>(bt.getElementType()))
      return b.emitError() << "'B' must hold integers, not " << bt;
    // One scale per output channel: x_scale * w_scale.
    Value biasScale =
        binary<MulOp>(b, xScale, alignParam(b, wScale, "w_scale", bt, "B", 0));
    biasValue = binary<MulOp>(b, castTo(b, bias, floatType), biasScale);
    if (!biasValue)
      return failure();
  }
  Value conv =
      ConvOp::create(b.builder(), b.loc(), type.clone(floatType), input, filter,
                     biasValue, w->strides, w->pads, w->dilations, w->group);
  Value scale = alignParam(b, castTo(b, yScale, floatType), "y_scale", type,
                           "y", std::nullopt);
  Value zeroPoint = alignParam(b, yZp, "y_zero_point", type, "y", std::nullopt);
  if (!scale || !zeroPoint)
    return failure();
  return finish(
      b, 0, quantize(b, conv, scale, zeroPoint, quantizedType(b, zeroPoint)));
}

} // namespace

void registerQuantizationBuilders(OpTable &t) {
  t.add("", "QuantizeLinear", 10, buildQuantizeLinear);
  t.add("", "DequantizeLinear", 10, buildDequantizeLinear);
  t.add("", "DynamicQuantizeLinear", 11, buildDynamicQuantizeLinear);
  t.add("", "MatMulInteger", 10, buildMatMulInteger);
  t.add("", "ConvInteger", 10, buildConvInteger);
  t.add("", "QLinearMatMul", 10, buildQLinearMatMul);
  t.add("", "QLinearConv", 10, buildQLinearConv);
}

} // namespace loom::onnx_import
