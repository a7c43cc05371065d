//===- ElementwiseBuilders.cpp - Elementwise ONNX ops ---------------------===//
//
// Unary math, activations, broadcasting arithmetic, logic, comparison,
// Where, Cast, Clip and the variadic Sum/Mean/Max/Min. Activations without a
// core op are decomposed here into core ops.
//
//===----------------------------------------------------------------------===//

#include "BuilderUtils.h"
#include "GraphImporter.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace loom::onnx_import {
namespace {

template <typename OpT> LogicalResult buildUnary(NodeBinder &b) {
  return buildSimple<OpT>(b, {b.input(0)});
}

template <typename OpT> LogicalResult buildBinary(NodeBinder &b) {
  return buildSimple<OpT>(b, {b.input(0), b.input(1)});
}

/// Before opset 7, binary ops broadcast only with `broadcast=1` and an
/// explicit `axis`; Loom serves the numpy form those models can be
/// re-exported to, and names the problem otherwise.
LogicalResult rejectLegacyBroadcast(NodeBinder &b) {
  if (b.hasAttr("axis"))
    return b.fail(
        "legacy broadcasting with 'axis' (opset < 7) is not supported");
  return success();
}

template <typename OpT> LogicalResult buildLegacyBinary(NodeBinder &b) {
  if (failed(rejectLegacyBroadcast(b)))
    return failure();
  return buildBinary<OpT>(b);
}

/// Sum, Mean, Max, Min: a left fold of broadcasting binary ops.
template <typename OpT>
LogicalResult buildVariadic(NodeBinder &b, bool mean = false) {
  SmallVector<Value> inputs = b.variadicInputs();
  RankedTensorType type = b.outputType(0);
  if (inputs.empty() || !type)
    return inputs.empty() ? b.fail("expects at least one input") : failure();
  Value acc = inputs[0];
  for (Value v : ArrayRef<Value>(inputs).drop_front())
    acc = createInferred<OpT>(b, acc, v);
  if (mean) {
    Value n = b.scalar(type.getElementType(), inputs.size());
    acc = createInferred<DivOp>(b, acc, n);
  }
  if (failed(refineTo(b, acc, type)))
    return failure();
  b.setOutput(0, acc);
  return success();
}

/// The element type a node's required `to` attribute names (Cast, BitCast);
/// null after an error naming the attribute.
Type targetElementType(NodeBinder &b) {
  if (!b.hasAttr("to")) {
    b.emitError() << "the required attribute 'to' is missing";
    return {};
  }
  std::optional<int64_t> to = b.intAttr("to", 0);
  if (!to)
    return {};
  Type element = convertElementType(b.context(), static_cast<int32_t>(*to));
  if (!element)
    b.emitError() << "'to' = " << *to
                  << " names an element type that is not supported";
  return element;
}

LogicalResult buildCast(NodeBinder &b) {
  Value x = b.input(0);
  if (!x)
    return failure();
  // The result's element type comes from the node (Cast's `to`, CastLike's
  // second input), not from ONNX's inference: the linked library's predates
  // the 8-, 4- and 2-bit types and leaves such outputs untyped.
  Type element;
  if (b.opType() == "CastLike") {
    Value like = b.input(1);
    if (!like)
      return failure();
    element = cast<RankedTensorType>(like.getType()).getElementType();
  } else if (!(element = targetElementType(b))) {
    return failure();
  }
  std::optional<int64_t> saturate = b.intAttr("saturate", 1);
  // Cast-24's `round_mode` matters for float8 E8M0 results only.
  std::optional<std::string> roundMode = b.stringAttr("round_mode", "up");
  if (!saturate || !roundMode)
    return failure();
  if (*roundMode != "up" && *roundMode != "down" && *roundMode != "nearest")
    return b.fail("round_mode \"" + *roundMode +
                  "\" is not one of \"up\", \"down\", \"nearest\"");
  auto inputType = cast<RankedTensorType>(x.getType());
  RankedTensorType type = b.knownOutputType(0);
  if (!type || type.getElementType() != element)
    type = inputType.clone(element);
  auto op = CastOp::create(b.builder(), b.loc(), type, x);
  if (*saturate == 0)
    op.setSaturate(false);
  if (*roundMode != "up")
    op.setRoundMode(*roundMode);
  b.setOutput(0, op);
  return success();
}

LogicalResult buildBitCast(NodeBinder &b) {
  Value x = b.input(0);
  Type element = x ? targetElementType(b) : Type();
  if (!element)
    return failure();
  auto inputType = cast<RankedTensorType>(x.getType());
  Type from = inputType.getElementType();
  auto bits = [](Type t) {
    unsigned width = t.getIntOrFloatBitWidth();
    return width == 1 ? 8u : width;
  };
  if (bits(from) != bits(element))
    return b.emitError() << "'to' names " << element << ", whose width differs "
                         << "from the input's " << from;
  b.setOutput(
      0, BitcastOp::create(b.builder(), b.loc(), inputType.clone(element), x));
  return success();
}

LogicalResult buildClip(NodeBinder &b) {
  Value x = b.input(0);
  RankedTensorType type = b.outputType(0);
  if (!x || !type)
    return failure();
  Type elementType = type.getElementType();
  Value lo, hi;
  if (b.opset() < 11) {
    // Clip-6: bounds are attributes (defaults: the float range).
    std::optional<float> min = b.floatAttr("min", -3.4028234663852886e38f);
    std::optional<float> max = b.floatAttr("max", 3.4028234663852886e38f);
    if (!min || !max)
      return failure();
    lo = b.scalar(elementType, *min);
    hi = b.scalar(elementType, *max);
  } else {
    lo = b.optionalInput(1);
    hi = b.optionalInput(2);
  }
  Value result = x;
  if (lo)
    result = createInferred<MaxOp>(b, result, lo);
  if (hi)
    result = createInferred<MinOp>(b, result, hi);
  if (failed(refineTo(b, result, type)))
    return failure();
  b.setOutput(0, result);
  return success();
}

template <typename OpT>
LogicalResult
buildParamActivation(NodeBinder &b,
                     ArrayRef<std::pair<StringRef, float>> params) {
  SmallVector<NamedAttribute> attrs;
  for (auto [name, fallback] : params) {
    std::optional<float> v = b.floatAttr(name, fallback);
    if (!v)
      return failure();
    attrs.push_back(
        b.builder().getNamedAttr(name, b.builder().getF32FloatAttr(*v)));
  }
  return buildSimple<OpT>(b, {b.input(0)}, attrs);
}

LogicalResult buildPRelu(NodeBinder &b) {
  // PRelu(x, slope) = where(x < 0, slope * x, x), slope broadcasting.
  Value x = b.input(0), slope = b.input(1);
  RankedTensorType type = b.outputType(0);
  if (!x || !slope || !type)
    return failure();
  Value zero = b.scalar(type.getElementType(), 0);
  Value negative = createInferred<LessOp>(b, x, zero);
  Value scaled = createInferred<MulOp>(b, x, slope);
  b.setOutput(0,
              WhereOp::create(b.builder(), b.loc(), type, negative, scaled, x));
  return success();
}

LogicalResult buildThresholdedRelu(NodeBinder &b) {
  // x if x > alpha else 0.
  Value x = b.input(0);
  RankedTensorType type = b.outputType(0);
  std::optional<float> alpha = b.floatAttr("alpha", 1.0f);
  if (!x || !type || !alpha)
    return failure();
  Value above =
      createInferred<GreaterOp>(b, x, b.scalar(type.getElementType(), *alpha));
  Value zero = b.scalar(type.getElementType(), 0);
  b.setOutput(0, WhereOp::create(b.builder(), b.loc(), type, above, x, zero));
  return success();
}

LogicalResult buildMish(NodeBinder &b) {
  // x * tanh(softplus(x)).
  Value x = b.input(0);
  RankedTensorType type = b.outputType(0);
  if (!x || !type)
    return failure();
  Value sp = createInferred<SoftplusOp>(b, x);
  Value t = createInferred<TanhOp>(b, sp);
  b.setOutput(0, MulOp::create(b.builder(), b.loc(), type, x, t));
  return success();
}

/// x * sigmoid(alpha * x): loom.silu when alpha is 1.
Value swish(NodeBinder &b, Value x, float alpha) {
  if (alpha == 1.0f)
    return createInferred<SiluOp>(b, x);
  Type element = typeOf(x).getElementType();
  Value scaled = createInferred<MulOp>(b, x, b.scalar(element, alpha));
  return createInferred<MulOp>(b, x, createInferred<SigmoidOp>(b, scaled));
}

/// Swish-24: x * sigmoid(alpha * x).
LogicalResult buildSwish(NodeBinder &b) {
  if (failed(b.rejectUnknownAttrs({"alpha"})))
    return failure();
  Value x = b.input(0);
  std::optional<float> alpha = b.floatAttr("alpha", 1.0f);
  if (!x || !alpha)
    return failure();
  if (!isa<FloatType>(typeOf(x).getElementType()))
    return b.emitError() << "input 0 must be a float tensor, not " << typeOf(x);
  return bindRefined(b, swish(b, x, *alpha));
}

/// SwiGLU-28: Swish_alpha(A) * B, A and B of one shape (no broadcasting);
/// loom.swiglu when alpha is 1.
LogicalResult buildSwiGLU(NodeBinder &b) {
  if (failed(b.rejectUnknownAttrs({"alpha"})))
    return failure();
  Value gate = b.input(0), linear = b.input(1);
  std::optional<float> alpha = b.floatAttr("alpha", 1.0f);
  if (!gate || !linear || !alpha)
    return failure();
  RankedTensorType gateType = typeOf(gate), linearType = typeOf(linear);
  if (!isa<FloatType>(gateType.getElementType()) ||
      gateType.getElementType() != linearType.getElementType())
    return b.emitError() << "inputs A and B must be float tensors of one "
                            "element type, not "
                         << gateType << " and " << linearType;
  if (failed(verifyCompatibleShape(gateType, linearType)))
    return b.emitError() << "inputs A " << gateType << " and B " << linearType
                         << " must have one shape (SwiGLU does not broadcast)";
  if (*alpha == 1.0f)
    return bindRefined(b, createInferred<SwigluOp>(b, gate, linear));
  return bindRefined(b,
                     createInferred<MulOp>(b, swish(b, gate, *alpha), linear));
}

/// Shrink: x + bias where x < -lambd, x - bias where x > lambd, else 0.
LogicalResult buildShrink(NodeBinder &b) {
  Value x = b.input(0);
  RankedTensorType type = b.outputType(0);
  std::optional<float> bias = b.floatAttr("bias", 0.0f);
  std::optional<float> lambd = b.floatAttr("lambd", 0.5f);
  if (!x || !type || !bias || !lambd)
    return failure();
  Type et = type.getElementType();
  Value below = createInferred<LessOp>(b, x, b.scalar(et, -*lambd));
  Value above = createInferred<GreaterOp>(b, x, b.scalar(et, *lambd));
  Value raised = createInferred<AddOp>(b, x, b.scalar(et, *bias));
  Value lowered = createInferred<SubOp>(b, x, b.scalar(et, *bias));
  Value upper = WhereOp::create(b.builder(), b.loc(), type, above, lowered,
                                b.splat(type, 0));
  b.setOutput(
      0, WhereOp::create(b.builder(), b.loc(), type, below, raised, upper));
  return success();
}

LogicalResult buildGelu(NodeBinder &b) {
  std::optional<std::string> approximate = b.stringAttr("approximate", "none");
  if (!approximate)
    return failure();
  return buildSimple<GeluOp>(
      b, {b.input(0)},
      {b.builder().getNamedAttr("approximate",
                                b.builder().getStringAttr(*approximate))});
}

LogicalResult buildMod(NodeBinder &b) {
  std::optional<int64_t> fmod = b.intAttr("fmod", 0);
  if (!fmod)
    return failure();
  return buildSimple<ModOp>(
      b, {b.input(0), b.input(1)},
      {b.builder().getNamedAttr("fmod", b.builder().getBoolAttr(*fmod != 0))});
}

LogicalResult buildBitShift(NodeBinder &b) {
  std::optional<std::string> direction = b.stringAttr("direction", "");
  if (!direction)
    return failure();
  if (*direction != "LEFT" && *direction != "RIGHT")
    return b.fail("attribute 'direction' must be \"LEFT\" or \"RIGHT\"");
  return buildSimple<BitShiftOp>(
      b, {b.input(0), b.input(1)},
      {b.builder().getNamedAttr("direction",
                                b.builder().getStringAttr(*direction))});
}

LogicalResult buildIsInf(NodeBinder &b) {
  std::optional<int64_t> neg = b.intAttr("detect_negative", 1);
  std::optional<int64_t> pos = b.intAttr("detect_positive", 1);
  if (!neg || !pos)
    return failure();
  return buildSimple<IsInfOp>(
      b, {b.input(0)},
      {b.builder().getNamedAttr("detect_negative",
                                b.builder().getBoolAttr(*neg)),
       b.builder().getNamedAttr("detect_positive",
                                b.builder().getBoolAttr(*pos))});
}

} // namespace

void registerElementwiseBuilders(OpTable &t) {
  // Unary math (the oldest opsets differ only in type lists or the removed
  // `consumed_inputs` attribute, which changes nothing at inference).
  t.add("", "Abs", 1, buildUnary<AbsOp>);
  t.add("", "Neg", 1, buildUnary<NegOp>);
  t.add("", "Sign", 9, buildUnary<SignOp>);
  t.add("", "Exp", 1, buildUnary<ExpOp>);
  t.add("", "Log", 1, buildUnary<LogOp>);
  t.add("", "Sqrt", 1, buildUnary<SqrtOp>);
  t.add("", "Reciprocal", 1, buildUnary<ReciprocalOp>);
  t.add("", "Sin", 7, buildUnary<SinOp>);
  t.add("", "Cos", 7, buildUnary<CosOp>);
  t.add("", "Tan", 7, buildUnary<TanOp>);
  t.add("", "Asin", 7, buildUnary<AsinOp>);
  t.add("", "Acos", 7, buildUnary<AcosOp>);
  t.add("", "Atan", 7, buildUnary<AtanOp>);
  t.add("", "Sinh", 9, buildUnary<SinhOp>);
  t.add("", "Cosh", 9, buildUnary<CoshOp>);
  t.add("", "Asinh", 9, buildUnary<AsinhOp>);
  t.add("", "Acosh", 9, buildUnary<AcoshOp>);
  t.add("", "Atanh", 9, buildUnary<AtanhOp>);
  t.add("", "Tanh", 1, buildUnary<TanhOp>);
  t.add("", "Erf", 9, buildUnary<ErfOp>);
  t.add("", "Floor", 1, buildUnary<FloorOp>);
  t.add("", "Ceil", 1, buildUnary<CeilOp>);
  t.add("", "Round", 11, buildUnary<RoundOp>);
  t.add("", "Not", 1, buildUnary<NotOp>);
  t.add("", "BitwiseNot", 18, buildUnary<BitwiseNotOp>);
  t.add("", "IsNaN", 9, buildUnary<IsNaNOp>);
  t.add("", "IsInf", 10, buildIsInf);

  // Activations.
  t.add("", "Relu", 1, buildUnary<ReluOp>);
  t.add("", "Sigmoid", 1, buildUnary<SigmoidOp>);
  t.add("", "Softplus", 1, buildUnary<SoftplusOp>);
  t.add("", "Softsign", 1, buildUnary<SoftsignOp>);
  t.add("", "LeakyRelu", 1, [](NodeBinder &b) {
    return buildParamActivation<LeakyReluOp>(b, {{"alpha", 0.01f}});
  });
  t.add("", "Elu", 1, [](NodeBinder &b) {
    return buildParamActivation<EluOp>(b, {{"alpha", 1.0f}});
  });
  t.add("", "Selu", 1, [](NodeBinder &b) {
    return buildParamActivation<SeluOp>(
        b, {{"alpha", 1.67326319217681884765625f},
            {"gamma", 1.05070102214813232421875f}});
  });
  t.add("", "HardSigmoid", 1, [](NodeBinder &b) {
    return buildParamActivation<HardSigmoidOp>(
        b, {{"alpha", 0.2f}, {"beta", 0.5f}});
  });
  t.add("", "Gelu", 20, buildGelu);
  t.add("", "PRelu", 7, buildPRelu);
  t.add("", "ThresholdedRelu", 10, buildThresholdedRelu);
  t.add("", "Mish", 18, buildMish);
  t.add("", "Swish", 24, buildSwish);
  t.add("", "SwiGLU", 28, buildSwiGLU);
  t.add("", "Shrink", 9, buildShrink);

  // Broadcasting arithmetic (numpy broadcasting from opset 7).
  t.add("", "Add", 1, buildLegacyBinary<AddOp>);
  t.add("", "Sub", 1, buildLegacyBinary<SubOp>);
  t.add("", "Mul", 1, buildLegacyBinary<MulOp>);
  t.add("", "Div", 1, buildLegacyBinary<DivOp>);
  t.add("", "Pow", 1, buildLegacyBinary<PowOp>);
  t.add("", "Mod", 10, buildMod);
  t.add("", "BitShift", 11, buildBitShift);
  t.add("", "And", 1, buildLegacyBinary<AndOp>);
  t.add("", "Or", 1, buildLegacyBinary<OrOp>);
  t.add("", "Xor", 1, buildLegacyBinary<XorOp>);
  t.add("", "BitwiseAnd", 18, buildBinary<AndOp>);
  t.add("", "BitwiseOr", 18, buildBinary<OrOp>);
  t.add("", "BitwiseXor", 18, buildBinary<XorOp>);
  t.add("", "Equal", 1, buildLegacyBinary<EqualOp>);
  t.add("", "Less", 1, buildLegacyBinary<LessOp>);
  t.add("", "LessOrEqual", 12, buildBinary<LessEqualOp>);
  t.add("", "Greater", 1, buildLegacyBinary<GreaterOp>);
  t.add("", "GreaterOrEqual", 12, buildBinary<GreaterEqualOp>);
  t.add("", "Sum", 1, [](NodeBinder &b) { return buildVariadic<AddOp>(b); });
  t.add("", "Mean", 1,
        [](NodeBinder &b) { return buildVariadic<AddOp>(b, true); });
  t.add("", "Max", 1, [](NodeBinder &b) { return buildVariadic<MaxOp>(b); });
  t.add("", "Min", 1, [](NodeBinder &b) { return buildVariadic<MinOp>(b); });

  // Select, cast, clip.
  t.add("", "Where", 9, [](NodeBinder &b) {
    return buildSimple<WhereOp>(b, {b.input(0), b.input(1), b.input(2)});
  });
  t.add("", "Cast", 1, buildCast);
  t.add("", "CastLike", 15, buildCast);
  t.add("", "BitCast", 26, buildBitCast);
  t.add("", "Clip", 1, buildClip);
}

} // namespace loom::onnx_import
