//===- QuantToLinalg.cpp - Quantization and quantized contractions --------===//
//
// loom.quantize and loom.dequantize become one elementwise generic each,
// computing what the reference executor computes; f8E4M3FN values are
// encoded and decoded on their bits.
//
// loom.qmatmul and loom.qconv compute what the reference executor computes
// (lib/Reference/QuantKernels.cpp), in the same order:
//
//  1. the operands minus their zero points, widened to the accumulator type
//     (one elementwise generic per operand; the input is padded with zeros
//     after this, so padding contributes nothing, as in the reference);
//  2. the contraction (linalg.matmul, linalg.conv_2d_nchw_fchw or a
//     windowed generic) accumulating those exactly: in i32 for 8-bit
//     integers (|q - zp| <= 255, so i32 holds any sum of up to 33025
//     products; longer reductions accumulate in i64), in f64 for f8E4M3FN
//     (products of 4-bit significands whose sums fit a double's mantissa);
//  3. one epilogue generic in f64: acc * (activation_scale *
//     weight_scale[channel]) (+ bias[channel]), rounded once to f32.
//
// The exact sum is the same whatever the summation order, and the epilogue
// performs the reference's f64 operations in its order, so the results are
// bit-identical to the reference executor's.
//
// With byte products (the pass's byte-products option, which the CPU
// target sets on hosts with VNNI), a product of an unsigned 8-bit
// activation and a constant signed 8-bit weight with zero weight zero
// points keeps both operands as bytes: the contraction's body widens them
// itself (unsigned, signed), so that a target can multiply bytes (x86's
// vpdpbusd) and move a quarter of the data. The activation's zero point
// moves to the epilogue: sum((a - za) w) = sum(a w) - za colsum(w), with
// za colsum(w) a constant per output channel; a convolution pads its
// input with za, which is what padding the centred input with 0 was. The
// sums are the same integers, so the results stay bit-identical.
//
//===----------------------------------------------------------------------===//

#include "loom/Conversion/LoomToLinalg/LoomToLinalg.h"

#include "Utils.h"

#include "loom/Dialect/Loom/IR/ConstantValues.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace loom::lowering;

namespace loom {
namespace lowering {

bool isNarrowFloat(Type type) {
  return isa<Float8E4M3FNType, Float8E4M3FNUZType, Float8E5M2Type,
             Float8E5M2FNUZType, Float4E2M1FNType, Float8E8M0FNUType>(type);
}

namespace {

/// What the bit-level conversions need to know of a narrow float type.
struct NarrowFloatLayout {
  unsigned width;        // bits in all
  unsigned mantissaBits; // stored mantissa bits
  int64_t minExponent;   // of the least normal number, unbiased
  uint64_t largestCode;  // bits of the largest finite value
  std::optional<uint64_t> infinityCode;
  std::optional<uint64_t> nanCode;
  bool nanIsNegativeZero; // the FNUZ types: NaN is 1.000..., no -0

  explicit NarrowFloatLayout(FloatType type) {
    const llvm::fltSemantics &sem = type.getFloatSemantics();
    width = type.getWidth();
    mantissaBits = type.getFPMantissaWidth() - 1;
    minExponent = llvm::APFloat::semanticsMinExponent(sem);
    largestCode =
        llvm::APFloat::getLargest(sem).bitcastToAPInt().getZExtValue();
    if (llvm::APFloat::semanticsHasInf(sem))
      infinityCode = llvm::APFloat::getInf(sem).bitcastToAPInt().getZExtValue();
    if (llvm::APFloat::semanticsHasNaN(sem))
      nanCode = llvm::APFloat::getQNaN(sem).bitcastToAPInt().getZExtValue();
    nanIsNegativeZero = nanCode && *nanCode == signBit();
  }
  uint64_t signBit() const { return uint64_t(1) << (width - 1); }
};

} // namespace

/// f8E8M0FNU, a biased exponent alone: 2^(e - 127), 0xFF NaN.
static Value decodeE8M0(OpBuilder &b, Location loc, Value bits, FloatType to) {
  Type i32 = b.getI32Type();
  if (isa<FloatType>(bits.getType()))
    bits = arith::BitcastOp::create(b, loc, b.getI8Type(), bits);
  Value e = arith::ExtUIOp::create(b, loc, i32, bits);
  auto c = [&](int64_t v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
  };
  // e << 23 is 2^(e - 127) for e >= 1; 2^-127 (e = 0) is f32's subnormal
  // 0x00400000.
  Value isZero =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, e, c(0));
  Value f32Bits = arith::SelectOp::create(
      b, loc, isZero, c(0x400000), arith::ShLIOp::create(b, loc, e, c(23)));
  Value value = arith::BitcastOp::create(b, loc, b.getF32Type(), f32Bits);
  Value isNan =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, e, c(0xff));
  value = arith::SelectOp::create(
      b, loc, isNan,
      arith::ConstantOp::create(
          b, loc, b.getF32FloatAttr(std::numeric_limits<float>::quiet_NaN())),
      value);
  return castScalar(b, loc, value, to);
}

/// The f8E8M0FNU code of `x` by ONNX's Cast-24 rule on the f32 bits (see
/// loom.cast): the exponent, plus one as `roundMode` says.
static Value encodeE8M0(OpBuilder &b, Location loc, Value x, bool saturate,
                        StringRef roundMode) {
  Type i32 = b.getI32Type();
  if (!x.getType().isF32())
    x = castScalar(b, loc, x, b.getF32Type());
  auto c = [&](int64_t v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
  };
  auto nonZero = [&](Value v, int64_t mask) -> Value {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                 arith::AndIOp::create(b, loc, v, c(mask)),
                                 c(0));
  };
  Value bits = arith::BitcastOp::create(b, loc, i32, x);
  Value exponent = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, bits, c(23)), c(0xff));
  Value up = arith::ConstantOp::create(b, loc, b.getBoolAttr(false));
  if (roundMode == "up") {
    up = nonZero(bits, 0x7fffff);
  } else if (roundMode == "nearest") {
    Value positive =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, exponent, c(0));
    up = arith::AndIOp::create(
        b, loc, nonZero(bits, 0x400000),
        arith::OrIOp::create(
            b, loc, nonZero(bits, 0x200000),
            arith::OrIOp::create(b, loc, nonZero(bits, 0x1fffff), positive)));
  }
  // Infinities and NaN keep 0xFF; saturated, 2^127 stays.
  Value special = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        exponent, c(0xff));
  Value noUp = special;
  if (saturate)
    noUp = arith::OrIOp::create(b, loc, noUp,
                                arith::CmpIOp::create(b, loc,
                                                      arith::CmpIPredicate::eq,
                                                      exponent, c(0xfe)));
  up = arith::AndIOp::create(
      b, loc, up,
      arith::XOrIOp::create(
          b, loc, noUp,
          arith::ConstantOp::create(b, loc, b.getBoolAttr(true))));
  Value code = arith::AddIOp::create(b, loc, exponent,
                                     arith::ExtUIOp::create(b, loc, i32, up));
  return arith::TruncIOp::create(b, loc, b.getI8Type(), code);
}

Value decodeNarrowFloat(OpBuilder &b, Location loc, Value bits, FloatType type,
                        FloatType to) {
  if (isa<Float8E8M0FNUType>(type))
    return decodeE8M0(b, loc, bits, to);
  NarrowFloatLayout layout(type);
  Type i32 = b.getI32Type();
  if (isa<FloatType>(bits.getType()))
    bits =
        arith::BitcastOp::create(b, loc, b.getIntegerType(layout.width), bits);
  Value x = arith::ExtUIOp::create(b, loc, i32, bits);
  auto c = [&](int64_t v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
  };
  auto eq = [&](Value l, Value r) -> Value {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, l, r);
  };
  int64_t signBit = static_cast<int64_t>(layout.signBit());
  unsigned m = layout.mantissaBits;
  Value magnitude = arith::AndIOp::create(b, loc, x, c(signBit - 1));
  Value exponent = arith::ShRUIOp::create(b, loc, magnitude, c(m));
  Value mantissa = arith::AndIOp::create(b, loc, x, c((1 << m) - 1));
  // Normal numbers: the f32 whose exponent is rebiased and whose mantissa
  // holds the narrow one at its top.
  int64_t bias = 1 - layout.minExponent;
  Value normalBits = arith::AddIOp::create(
      b, loc, arith::ShLIOp::create(b, loc, magnitude, c(23 - m)),
      c((127 - bias) << 23));
  Value value = arith::BitcastOp::create(b, loc, b.getF32Type(), normalBits);
  // Subnormals (and zero): mantissa * 2^(minExponent - m), exact.
  Value subnormal = arith::MulFOp::create(
      b, loc, arith::UIToFPOp::create(b, loc, b.getF32Type(), mantissa),
      arith::ConstantOp::create(
          b, loc,
          b.getF32FloatAttr(std::ldexp(1.0f, int(layout.minExponent - m)))));
  value = arith::SelectOp::create(b, loc, eq(exponent, c(0)), subnormal, value);
  auto special = [&](Value is, float v) {
    value = arith::SelectOp::create(
        b, loc, is, arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v)),
        value);
  };
  int64_t allOnes = (signBit - 1) >> m;
  if (layout.infinityCode) {
    // IEEE-like (f8E5M2): the top exponent holds infinity and the NaNs.
    Value top = eq(exponent, c(allOnes));
    special(arith::AndIOp::create(b, loc, top, eq(mantissa, c(0))),
            std::numeric_limits<float>::infinity());
    special(arith::AndIOp::create(
                b, loc, top,
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                      mantissa, c(0))),
            std::numeric_limits<float>::quiet_NaN());
  } else if (layout.nanCode && !layout.nanIsNegativeZero) {
    // f8E4M3FN: S.1111.111 alone is NaN.
    special(eq(magnitude, c(signBit - 1)),
            std::numeric_limits<float>::quiet_NaN());
  }
  Value negative =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, x, c(signBit));
  value = arith::SelectOp::create(b, loc, negative,
                                  arith::NegFOp::create(b, loc, value), value);
  if (layout.nanIsNegativeZero)
    special(eq(x, c(signBit)), std::numeric_limits<float>::quiet_NaN());
  return castScalar(b, loc, value, to);
}

Value encodeNarrowFloat(OpBuilder &b, Location loc, Value x, FloatType type,
                        bool saturate, StringRef roundMode) {
  if (isa<Float8E8M0FNUType>(type))
    return encodeE8M0(b, loc, x, saturate, roundMode);
  NarrowFloatLayout layout(type);
  auto from = cast<FloatType>(x.getType());
  if (from.getWidth() < 32) { // f16, bf16: exactly as f32
    x = arith::ExtFOp::create(b, loc, b.getF32Type(), x);
    from = b.getF32Type();
  }
  unsigned width = from.getWidth();
  unsigned sourceMantissa = from.getFPMantissaWidth() - 1;
  int64_t sourceBias = width == 32 ? 127 : 1023;
  auto intType = b.getIntegerType(width);
  auto c = [&](int64_t v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getIntegerAttr(intType, v));
  };
  auto cmp = [&](arith::CmpIPredicate p, Value l, Value r) -> Value {
    return arith::CmpIOp::create(b, loc, p, l, r);
  };
  using P = arith::CmpIPredicate;
  Value bits = arith::BitcastOp::create(b, loc, intType, x);
  Value abs = arith::AndIOp::create(
      b, loc, bits, c(static_cast<int64_t>(~(uint64_t(1) << (width - 1)))));
  // |x| = S * 2^(e - sourceMantissa), S with its implicit bit (source
  // subnormals are far below every narrow type's range: they shift out).
  Value biased = arith::ShRUIOp::create(b, loc, abs, c(sourceMantissa));
  Value exponent = arith::SubIOp::create(b, loc, biased, c(sourceBias));
  Value significand = arith::OrIOp::create(
      b, loc,
      arith::AndIOp::create(b, loc, abs, c((int64_t(1) << sourceMantissa) - 1)),
      c(int64_t(1) << sourceMantissa));
  // Keep the narrow type's mantissa bits, more below its least normal
  // exponent (subnormals), and round half to even.
  int64_t minExponent = layout.minExponent;
  Value below = arith::MaxSIOp::create(
      b, loc, arith::SubIOp::create(b, loc, c(minExponent), exponent), c(0));
  Value shift = arith::MinSIOp::create(
      b, loc,
      arith::AddIOp::create(b, loc, below,
                            c(sourceMantissa - layout.mantissaBits)),
      c(width - 2));
  Value kept = arith::ShRUIOp::create(b, loc, significand, shift);
  Value one = c(1);
  Value dropped = arith::AndIOp::create(
      b, loc, significand,
      arith::SubIOp::create(b, loc, arith::ShLIOp::create(b, loc, one, shift),
                            one));
  Value half = arith::ShLIOp::create(b, loc, one,
                                     arith::SubIOp::create(b, loc, shift, one));
  Value odd = cmp(P::ne, arith::AndIOp::create(b, loc, kept, one), c(0));
  Value roundUp = arith::OrIOp::create(
      b, loc, cmp(P::ugt, dropped, half),
      arith::AndIOp::create(b, loc, cmp(P::eq, dropped, half), odd));
  kept = arith::AddIOp::create(
      b, loc, kept, arith::ExtUIOp::create(b, loc, intType, roundUp));
  // The code: (max(e, minExponent) - minExponent) << m, plus the kept
  // significand, whose implicit bit lands in the exponent field (a carry
  // from rounding moves the exponent up; a subnormal rounding up to the
  // least normal number gets exponent field 1).
  Value code = arith::AddIOp::create(
      b, loc,
      arith::ShLIOp::create(
          b, loc,
          arith::SubIOp::create(
              b, loc, arith::MaxSIOp::create(b, loc, exponent, c(minExponent)),
              c(minExponent)),
          c(layout.mantissaBits)),
      kept);
  // Beyond the largest finite value (infinities too: their exponent makes
  // the largest codes): saturated, or infinity, or NaN. f4E2M1FN, with
  // neither, always saturates.
  int64_t largest = static_cast<int64_t>(layout.largestCode);
  Value overflow = cmp(P::sgt, code, c(largest));
  int64_t beyond = largest;
  if (!saturate && layout.infinityCode)
    beyond = static_cast<int64_t>(*layout.infinityCode);
  else if (!saturate && layout.nanCode && !layout.nanIsNegativeZero)
    beyond = static_cast<int64_t>(*layout.nanCode & (layout.signBit() - 1));
  code = arith::SelectOp::create(b, loc, overflow, c(beyond), code);
  Value sign = arith::ShRUIOp::create(b, loc, bits, c(width - 1));
  sign = arith::ShLIOp::create(b, loc, sign, c(layout.width - 1));
  Value result = arith::OrIOp::create(b, loc, code, sign);
  Value isNan = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x);
  // NaN keeps the type's NaN code. The FNUZ types have no -0 (zero is +0)
  // and their NaN is the code -0 would have; f4E2M1FN, which has no NaN,
  // takes NaN to -0 as onnx's reference implementation does.
  Value nan = c(static_cast<int64_t>(layout.nanCode ? *layout.nanCode
                                                    : layout.signBit()));
  if (layout.nanIsNegativeZero) {
    result =
        arith::SelectOp::create(b, loc, cmp(P::eq, code, c(0)), c(0), result);
    if (!saturate)
      isNan = arith::OrIOp::create(b, loc, isNan, overflow);
  }
  result = arith::SelectOp::create(b, loc, isNan, nan, result);
  // A byte at least: f4E2M1FN's bits travel in one (LoomToLinalg's types).
  return arith::TruncIOp::create(
      b, loc, b.getIntegerType(std::max(layout.width, 8u)), result);
}

} // namespace lowering

namespace {

/// The largest |q - zp| of an 8-bit integer operand.
int64_t maxCentered(Value q, bool hasZeroPoint) {
  if (hasZeroPoint)
    return 255;
  return isUnsigned(q) ? 255 : 128;
}

/// The accumulator of a reduction over `k` products of operands bounded by
/// `lhsMax` and `rhsMax`: i32 when no sum can overflow it, i64 otherwise;
/// f64 for f8E4M3FN operands.
Type accumulatorType(B &b, Value lhs, Value rhs, bool hasZeroPoints,
                     int64_t k) {
  if (isa<FloatType>(getElementTypeOrSelf(lhs.getType())))
    return b.getF64Type();
  int64_t bound =
      maxCentered(lhs, hasZeroPoints) * maxCentered(rhs, hasZeroPoints);
  if (k <= std::numeric_limits<int32_t>::max() / bound)
    return b.getI32Type();
  return b.getI64Type();
}

/// `q` - `zp` (broadcast to it) in `acc`: 8-bit integers widen exactly
/// (signed or unsigned after the original types), f8E4M3FN decodes.
/// `original` and `originalZp` are the values before type conversion.
Value centered(B &b, L loc, Value q, Value original, Value zp, Value originalZp,
               Type acc) {
  auto type = cast<RankedTensorType>(q.getType()).clone(acc);
  bool qUnsigned = isUnsigned(original);
  bool zpUnsigned = originalZp && isUnsigned(originalZp);
  SmallVector<Value> inputs{q};
  if (zp)
    inputs.push_back(zp);
  return buildElementwise(b, loc, type, inputs, [&](B &b, L loc, V x) {
    if (auto f = dyn_cast<FloatType>(acc))
      return decodeNarrowFloat(
          b, loc, x[0], cast<FloatType>(getElementTypeOrSelf(original)), f);
    Value v = castScalar(b, loc, x[0], acc, qUnsigned);
    if (x.size() > 1)
      v = arith::SubIOp::create(b, loc, v,
                                castScalar(b, loc, x[1], acc, zpUnsigned));
    return v;
  });
}

/// The elements of a constant operand: `converted` (the operand after type
/// conversion, which is also what a loom.fusion's inlined block reads) seen
/// through conversion casts. Signedness comes from `original`'s type.
std::optional<SmallVector<int64_t>> constantIntegers(Value converted,
                                                     Value original) {
  while (auto cast = converted.getDefiningOp<UnrealizedConversionCastOp>()) {
    if (cast.getInputs().size() != 1)
      return std::nullopt;
    converted = cast.getInputs()[0];
  }
  ElementsAttr attr;
  if (!matchPattern(converted, m_Constant(&attr)))
    return std::nullopt;
  // Signless after conversion: extend as the original type says.
  return getIntegerValues(attr, isUnsigned(original));
}

/// `q - zp` computed now when both are constants and `acc` is an integer:
/// a constant weight is centred and widened once, at compile time, so the
/// code reads (and the CPU target packs) a constant instead of widening
/// the weight on every call. `zp` is 0-D or one value per channel, the
/// channel of element i being `channelOf(i)`. `q` and `zp` are converted
/// operands, `original*` the op's own.
Value centeredConstant(B &b, L loc, Value q, Value originalQ, Value zp,
                       Value originalZp, Type acc,
                       function_ref<int64_t(int64_t)> channelOf) {
  if (!isa<IntegerType>(acc))
    return {};
  std::optional<SmallVector<int64_t>> values = constantIntegers(q, originalQ);
  std::optional<SmallVector<int64_t>> zeros;
  if (!values || (zp && !(zeros = constantIntegers(zp, originalZp))))
    return {};
  unsigned width = acc.getIntOrFloatBitWidth();
  SmallVector<APInt> out;
  out.reserve(values->size());
  for (auto [i, v] : llvm::enumerate(*values)) {
    int64_t z = !zeros               ? 0
                : zeros->size() == 1 ? (*zeros)[0]
                                     : (*zeros)[channelOf(i)];
    out.push_back(APInt(width, v - z, /*isSigned=*/true));
  }
  auto type = cast<RankedTensorType>(q.getType()).clone(acc);
  return arith::ConstantOp::create(b, loc, type,
                                   DenseElementsAttr::get(type, out));
}

/// A [M] vector viewed as [M, 1, ..., 1] (`trailing` ones); 0-D values
/// stay as they are.
Value perChannel(B &b, L loc, Value value, int64_t trailing) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getRank() == 0)
    return value;
  SmallVector<int64_t> shape{type.getNumElements()};
  shape.append(trailing, 1);
  return reshapeTo(b, loc, value,
                   RankedTensorType::get(shape, type.getElementType()));
}

Value toF64(B &b, L loc, Value x) {
  Type f64 = b.getF64Type();
  if (x.getType() == f64)
    return x;
  if (isa<FloatType>(x.getType()))
    return arith::ExtFOp::create(b, loc, f64, x);
  return arith::SIToFPOp::create(b, loc, f64, x);
}

/// The elements of `value` when it is a constant seen through conversion
/// casts and reshapes (a per-channel parameter viewed as [M, 1, ...]).
ElementsAttr constantElements(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (auto cast = dyn_cast<UnrealizedConversionCastOp>(def)) {
      if (cast.getInputs().size() != 1)
        return {};
      value = cast.getInputs()[0];
    } else if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def)) {
      value = def->getOperand(0);
    } else {
      break;
    }
  }
  ElementsAttr attr;
  if (!matchPattern(value, m_Constant(&attr)))
    return {};
  return attr;
}

/// `value`'s elements as doubles (floats exactly, integers as signed) when
/// it is a constant.
std::optional<SmallVector<double>> constantAsDoubles(Value value) {
  ElementsAttr attr = constantElements(value);
  if (!attr)
    return std::nullopt;
  if (isa<FloatType>(getElementTypeOrSelf(attr.getType())))
    return getFloatValues(attr);
  std::optional<SmallVector<int64_t>> ints =
      getIntegerValues(attr, /*zeroExtend=*/false);
  if (!ints)
    return std::nullopt;
  return SmallVector<double>(ints->begin(), ints->end());
}

/// An f64 constant of `like`'s shape.
Value f64Constant(B &b, L loc, Value like, ArrayRef<double> values) {
  auto type = cast<RankedTensorType>(like.getType()).clone(b.getF64Type());
  return arith::ConstantOp::create(b, loc, type,
                                   DenseElementsAttr::get(type, values));
}

/// The reference's epilogue: f64(acc) * (f64(sa) * f64(sw)) (+ f64(bias)),
/// rounded once to the result type. `inputs` are acc, sa, sw[, bias],
/// broadcast to `type`. A byte product's `correction` (za colsum(w),
/// broadcast to `type`) is first subtracted from acc, in i32, exactly.
/// Constant scales are multiplied here, and a constant bias widened, in
/// the same f64 operations: the code then does per element only what
/// depends on it.
Value scaleAccumulator(B &b, L loc, RankedTensorType type, ValueRange inputs,
                       Value correction = {}) {
  SmallVector<Value> operands{inputs[0]};
  std::optional<SmallVector<double>> sa = constantAsDoubles(inputs[1]);
  std::optional<SmallVector<double>> sw = constantAsDoubles(inputs[2]);
  bool scaleKnown = sa && sw && sa->size() == 1;
  if (scaleKnown) {
    SmallVector<double> scale;
    for (double w : *sw)
      scale.push_back((*sa)[0] * w);
    operands.push_back(f64Constant(b, loc, inputs[2], scale));
  } else {
    operands.append({inputs[1], inputs[2]});
  }
  bool hasBias = inputs.size() > 3;
  if (hasBias) {
    std::optional<SmallVector<double>> bias = constantAsDoubles(inputs[3]);
    operands.push_back(bias ? f64Constant(b, loc, inputs[3], *bias)
                            : inputs[3]);
  }
  if (correction)
    operands.push_back(correction);
  return buildElementwise(b, loc, type, operands, [&](B &b, L loc, V x) {
    Value acc = x[0];
    if (correction)
      acc = arith::SubIOp::create(b, loc, acc, x.back());
    Value scale = scaleKnown
                      ? x[1]
                      : arith::MulFOp::create(b, loc, toF64(b, loc, x[1]),
                                              toF64(b, loc, x[2]))
                            .getResult();
    Value v = arith::MulFOp::create(b, loc, toF64(b, loc, acc), scale);
    if (hasBias)
      v = arith::AddFOp::create(b, loc, v,
                                toF64(b, loc, x[scaleKnown ? 2 : 3]));
    return castScalar(b, loc, v, type.getElementType());
  });
}

//===----------------------------------------------------------------------===//
// Byte products
//===----------------------------------------------------------------------===//

/// What a byte product needs to know of its operands: the activation's
/// zero point and the weight's values (as [rows of the contraction,
/// columns]).
struct ByteOperands {
  int64_t activationZeroPoint = 0;
  SmallVector<int64_t> weights;
};

/// The byte form's operands when the product may take it: an unsigned
/// 8-bit activation of static shape with a constant (or no) zero point, a
/// constant signed 8-bit weight whose zero points are all 0 (or absent),
/// and at most `k` products per sum that i32 holds whatever the values.
std::optional<ByteOperands>
byteOperands(Value activation, Value activationConverted, Value activationZp,
             Value activationZpConverted, Value weight, Value weightConverted,
             Value weightZp, Value weightZpConverted, int64_t k) {
  auto is8Bit = [](Value v) {
    return getElementTypeOrSelf(v.getType()).isInteger(8);
  };
  if (!is8Bit(activation) || !isUnsigned(activation) || !is8Bit(weight) ||
      isUnsigned(weight) ||
      !cast<RankedTensorType>(activation.getType()).hasStaticShape() ||
      k > std::numeric_limits<int32_t>::max() / (255 * 128))
    return std::nullopt;
  ByteOperands operands;
  if (activationZp) {
    std::optional<SmallVector<int64_t>> zp =
        constantIntegers(activationZpConverted, activationZp);
    if (!zp || zp->size() != 1)
      return std::nullopt;
    operands.activationZeroPoint = (*zp)[0];
  }
  if (weightZp) {
    std::optional<SmallVector<int64_t>> zp =
        constantIntegers(weightZpConverted, weightZp);
    if (!zp || llvm::any_of(*zp, [](int64_t z) { return z != 0; }))
      return std::nullopt;
  }
  std::optional<SmallVector<int64_t>> weights =
      constantIntegers(weightConverted, weight);
  if (!weights)
    return std::nullopt;
  operands.weights = std::move(*weights);
  return operands;
}

/// The body of a byte product: out + zext(a) * sext(w), in i32.
void byteMultiplyAccumulate(OpBuilder &b, Location loc, ValueRange args) {
  Type i32 = b.getI32Type();
  Value a = arith::ExtUIOp::create(b, loc, i32, args[0]);
  Value w = arith::ExtSIOp::create(b, loc, i32, args[1]);
  Value product = arith::MulIOp::create(b, loc, a, w);
  Value sum = arith::AddIOp::create(b, loc, args[2], product);
  linalg::YieldOp::create(b, loc, sum);
}

/// za * (the sum of each output channel's weights), as an i32 constant of
/// `shape`; `channelOf(i)` is the channel of weight element i.
Value zeroPointCorrection(B &b, L loc, const ByteOperands &operands,
                          ArrayRef<int64_t> shape,
                          function_ref<int64_t(int64_t)> channelOf) {
  int64_t channels = 1;
  for (int64_t d : shape)
    channels *= d;
  SmallVector<int64_t> sums(channels, 0);
  for (auto [i, w] : llvm::enumerate(operands.weights))
    sums[channelOf(i)] += w;
  SmallVector<APInt> values;
  for (int64_t sum : sums)
    values.push_back(APInt(32, operands.activationZeroPoint * sum,
                           /*isSigned=*/true));
  auto type = RankedTensorType::get(shape, b.getI32Type());
  return arith::ConstantOp::create(b, loc, type,
                                   DenseElementsAttr::get(type, values));
}

/// [rows, K] x [K, N] of bytes into i32, the rows being every dimension of
/// `lhs` but its last.
Value buildByteMatrixProduct(B &b, L loc, Value lhs, Value rhs,
                             RankedTensorType type) {
  MLIRContext *ctx = b.getContext();
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  int64_t k = lhsType.getShape().back();
  int64_t rows = lhsType.getNumElements() / std::max<int64_t>(k, 1);
  Value lhs2 = reshapeTo(
      b, loc, lhs, RankedTensorType::get({rows, k}, lhsType.getElementType()));
  auto flatType = RankedTensorType::get(
      {rows, cast<RankedTensorType>(rhs.getType()).getDimSize(1)},
      type.getElementType());
  AffineExpr m, n, kk;
  bindDims(ctx, m, n, kk);
  SmallVector<AffineMap> maps{AffineMap::get(3, 0, {m, kk}, ctx),
                              AffineMap::get(3, 0, {kk, n}, ctx),
                              AffineMap::get(3, 0, {m, n}, ctx)};
  Value product =
      linalg::GenericOp::create(
          b, loc, TypeRange{flatType}, ValueRange{lhs2, rhs},
          ValueRange{zeroFilled(b, loc, flatType)}, maps,
          {utils::IteratorType::parallel, utils::IteratorType::parallel,
           utils::IteratorType::reduction},
          byteMultiplyAccumulate)
          .getResult(0);
  return reshapeTo(b, loc, product, type);
}

/// The 2-D convolution of the (padded) byte input [N, C, H, W] with the
/// byte weight [F, C, KH, KW] into i32 `type`: the generic of
/// buildConvolution's layout (loops n, f, oh, ow, c, kh, kw) with the byte
/// body, which loom-cpu-im2col turns into a byte product.
Value buildByteConvolution(B &b, L loc, Value input, Value weight,
                           RankedTensorType type, ArrayRef<int64_t> strides,
                           ArrayRef<int64_t> dilations) {
  MLIRContext *ctx = b.getContext();
  auto dim = [&](int64_t d) { return getAffineDimExpr(d, ctx); };
  SmallVector<AffineMap> maps{
      AffineMap::get(7, 0,
                     {dim(0), dim(4),
                      windowExpr(ctx, 2, 5, strides[0], dilations[0]),
                      windowExpr(ctx, 3, 6, strides[1], dilations[1])},
                     ctx),
      AffineMap::get(7, 0, {dim(1), dim(4), dim(5), dim(6)}, ctx),
      AffineMap::get(7, 0, {dim(0), dim(1), dim(2), dim(3)}, ctx)};
  SmallVector<utils::IteratorType> iterators(4, utils::IteratorType::parallel);
  iterators.append(3, utils::IteratorType::reduction);
  return linalg::GenericOp::create(b, loc, TypeRange{type},
                                   ValueRange{input, weight},
                                   ValueRange{zeroFilled(b, loc, type)}, maps,
                                   iterators, byteMultiplyAccumulate)
      .getResult(0);
}

/// The quantized lowerings' common state: whether products may keep their
/// operands as bytes.
template <typename OpTy>
class QuantizedProductLowering : public ResultTypedLowering<OpTy> {
public:
  QuantizedProductLowering(const TypeConverter &converter, MLIRContext *ctx,
                           bool byteProducts)
      : ResultTypedLowering<OpTy>(converter, ctx), byteProducts(byteProducts) {}

protected:
  bool byteProducts;
};

class QMatMulLowering : public QuantizedProductLowering<QMatMulOp> {
public:
  using QuantizedProductLowering::QuantizedProductLowering;
  LogicalResult lower(QMatMulOp op, OpAdaptor adaptor, RankedTensorType type,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto lhsType = cast<RankedTensorType>(adaptor.getLhs().getType());
    auto rhsType = cast<RankedTensorType>(adaptor.getRhs().getType());
    int64_t k = lhsType.getShape().back();
    int64_t columns = rhsType.getShape().back();
    if (byteProducts && rhsType.getRank() == 2 && type.hasStaticShape()) {
      if (std::optional<ByteOperands> bytes = byteOperands(
              op.getLhs(), adaptor.getLhs(), op.getLhsZeroPoint(),
              adaptor.getLhsZeroPoint(), op.getRhs(), adaptor.getRhs(),
              op.getRhsZeroPoint(), adaptor.getRhsZeroPoint(), k)) {
        Value product = buildByteMatrixProduct(
            rewriter, loc, adaptor.getLhs(), adaptor.getRhs(),
            type.clone(rewriter.getI32Type()));
        Value correction;
        if (bytes->activationZeroPoint != 0)
          correction =
              zeroPointCorrection(rewriter, loc, *bytes, {columns},
                                  [&](int64_t i) { return i % columns; });
        rewriter.replaceOp(op, scaleAccumulator(rewriter, loc, type,
                                                {product, adaptor.getLhsScale(),
                                                 adaptor.getRhsScale()},
                                                correction));
        return success();
      }
    }
    bool hasZp = bool(op.getLhsZeroPoint());
    Type acc = accumulatorType(rewriter, op.getLhs(), op.getRhs(), hasZp, k);
    Value lhs = centered(rewriter, loc, adaptor.getLhs(), op.getLhs(),
                         adaptor.getLhsZeroPoint(), op.getLhsZeroPoint(), acc);
    // Per-column zero points [N] broadcast over the rows of [K, N].
    Value rhs = centeredConstant(
        rewriter, loc, adaptor.getRhs(), op.getRhs(), adaptor.getRhsZeroPoint(),
        op.getRhsZeroPoint(), acc, [&](int64_t i) { return i % columns; });
    if (!rhs)
      rhs = centered(rewriter, loc, adaptor.getRhs(), op.getRhs(),
                     adaptor.getRhsZeroPoint(), op.getRhsZeroPoint(), acc);
    Value product =
        buildMatrixProduct(rewriter, loc, lhs, rhs, type.clone(acc));
    rewriter.replaceOp(op, scaleAccumulator(rewriter, loc, type,
                                            {product, adaptor.getLhsScale(),
                                             adaptor.getRhsScale()}));
    return success();
  }
};

class QConvLowering : public QuantizedProductLowering<QConvOp> {
public:
  using QuantizedProductLowering::QuantizedProductLowering;
  LogicalResult lower(QConvOp op, OpAdaptor adaptor, RankedTensorType type,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t spatial = type.getRank() - 2;
    auto weightType = cast<RankedTensorType>(adaptor.getWeight().getType());
    // Each output sums C/group * prod(K) products.
    int64_t k = weightType.getNumElements() / weightType.getDimSize(0);
    ArrayRef<int64_t> pads = op.getPads();
    auto padded = [&](Value input, Value padValue) {
      if (llvm::none_of(pads, [](int64_t p) { return p != 0; }))
        return input;
      SmallVector<int64_t> low{0, 0}, high{0, 0};
      low.append(pads.begin(), pads.begin() + spatial);
      high.append(pads.begin() + spatial, pads.end());
      return padStatic(rewriter, loc, input, low, high, padValue);
    };
    // acc * (sa * sw[channel]) (+ bias[channel]), after the contraction.
    auto epilogue = [&](Value acc, Value correction) {
      SmallVector<Value> inputs{
          acc, adaptor.getInputScale(),
          perChannel(rewriter, loc, adaptor.getWeightScale(), spatial)};
      if (Value bias = adaptor.getBias())
        inputs.push_back(perChannel(rewriter, loc, bias, spatial));
      return scaleAccumulator(rewriter, loc, type, inputs, correction);
    };

    if (byteProducts && spatial == 2 && op.getGroup() == 1 &&
        type.hasStaticShape()) {
      if (std::optional<ByteOperands> bytes = byteOperands(
              op.getInput(), adaptor.getInput(), op.getInputZeroPoint(),
              adaptor.getInputZeroPoint(), op.getWeight(), adaptor.getWeight(),
              op.getWeightZeroPoint(), adaptor.getWeightZeroPoint(), k)) {
        Value padValue = arith::ConstantOp::create(
            rewriter, loc,
            rewriter.getIntegerAttr(rewriter.getI8Type(),
                                    bytes->activationZeroPoint));
        Value result = buildByteConvolution(
            rewriter, loc, padded(adaptor.getInput(), padValue),
            adaptor.getWeight(), type.clone(rewriter.getI32Type()),
            op.getStrides(), op.getDilations());
        Value correction;
        if (bytes->activationZeroPoint != 0) {
          SmallVector<int64_t> shape{weightType.getDimSize(0)};
          shape.append(spatial, 1);
          correction = zeroPointCorrection(rewriter, loc, *bytes, shape,
                                           [&](int64_t i) { return i / k; });
        }
        rewriter.replaceOp(op, epilogue(result, correction));
        return success();
      }
    }

    bool hasZp = bool(op.getInputZeroPoint());
    Type acc =
        accumulatorType(rewriter, op.getInput(), op.getWeight(), hasZp, k);
    Value input =
        centered(rewriter, loc, adaptor.getInput(), op.getInput(),
                 adaptor.getInputZeroPoint(), op.getInputZeroPoint(), acc);
    // Per-output-channel zero points [M] of [M, C/group, K...].
    Value weight =
        centeredConstant(rewriter, loc, adaptor.getWeight(), op.getWeight(),
                         adaptor.getWeightZeroPoint(), op.getWeightZeroPoint(),
                         acc, [&](int64_t i) { return i / k; });
    if (!weight) {
      Value weightZp = adaptor.getWeightZeroPoint();
      if (weightZp)
        weightZp =
            perChannel(rewriter, loc, weightZp, weightType.getRank() - 1);
      weight = centered(rewriter, loc, adaptor.getWeight(), op.getWeight(),
                        weightZp, op.getWeightZeroPoint(), acc);
    }
    input = padded(input, scalarConstant(rewriter, loc, acc, 0));
    Value result =
        buildConvolution(rewriter, loc, input, weight, type.clone(acc),
                         op.getStrides(), op.getDilations(), op.getGroup());
    rewriter.replaceOp(op, epilogue(result, Value()));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Quantize and dequantize
//===----------------------------------------------------------------------===//

/// loom.quantize to an integer type: saturate(round_half_even(x / scale) +
/// zero_point), NaN to 0, as the reference executor computes it. To a
/// narrow float: x / scale rounded to the nearest number of the type, ties
/// to even, saturated as the op says, emulated on the bits.
class QuantizeLowering : public ResultTypedLowering<QuantizeOp> {
public:
  using ResultTypedLowering::ResultTypedLowering;

  LogicalResult lower(QuantizeOp op, OpAdaptor adaptor, RankedTensorType type,
                      ConversionPatternRewriter &rewriter) const override {
    Type resultElement = op.getType().getElementType();
    if (isNarrowFloat(resultElement)) {
      rewriter.replaceOp(
          op, buildElementwise(
                  rewriter, op.getLoc(), type, adaptor.getOperands(),
                  [&](OpBuilder &b, Location loc, ValueRange x) -> Value {
                    Value q = arith::DivFOp::create(b, loc, x[0], x[1]);
                    return encodeNarrowFloat(b, loc, q,
                                             cast<FloatType>(resultElement),
                                             op.getSaturate());
                  }));
      return success();
    }
    auto to = dyn_cast<IntegerType>(type.getElementType());
    if (!to)
      return op.emitOpError("with a float result (")
             << op.getType().getElementType() << ") is not lowered yet";
    bool outUnsigned = isUnsigned(op.getResult());
    bool zpUnsigned = op.getZeroPoint() && isUnsigned(op.getZeroPoint());
    // The range of the original type (i4 travels as a byte).
    unsigned width = resultElement.getIntOrFloatBitWidth();
    double lo = outUnsigned ? 0.0 : -std::ldexp(1.0, width - 1);
    double hi = outUnsigned ? std::ldexp(1.0, width) - 1
                            : std::ldexp(1.0, width - 1) - 1;
    Value result = buildElementwise(
        rewriter, op.getLoc(), type, adaptor.getOperands(),
        [&](OpBuilder &b, Location loc, ValueRange x) -> Value {
          Type floatType = x[0].getType();
          Value q = arith::DivFOp::create(b, loc, x[0], x[1]);
          q = math::RoundEvenOp::create(b, loc, q);
          if (x.size() > 2)
            q = arith::AddFOp::create(
                b, loc, q, castScalar(b, loc, x[2], floatType, zpUnsigned));
          auto constant = [&](double v) -> Value {
            return arith::ConstantOp::create(b, loc,
                                             b.getFloatAttr(floatType, v));
          };
          q = arith::MaximumFOp::create(b, loc, q, constant(lo));
          q = arith::MinimumFOp::create(b, loc, q, constant(hi));
          Value isNan =
              arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, q, q);
          q = arith::SelectOp::create(b, loc, isNan, constant(0.0), q);
          return castScalar(b, loc, q, to, false, outUnsigned);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// loom.dequantize: (x - zero_point) * scale, narrow float values decoded
/// from their bits (exactly).
class DequantizeLowering : public ResultTypedLowering<DequantizeOp> {
public:
  using ResultTypedLowering::ResultTypedLowering;

  LogicalResult lower(DequantizeOp op, OpAdaptor adaptor, RankedTensorType type,
                      ConversionPatternRewriter &rewriter) const override {
    Type inElement = op.getInput().getType().getElementType();
    bool isF8 = isNarrowFloat(inElement);
    if (!isa<IntegerType>(inElement) && !isF8)
      return op.emitOpError("of ") << inElement << " values is not lowered yet";
    bool inUnsigned = isUnsigned(op.getInput());
    Value result = buildElementwise(
        rewriter, op.getLoc(), type, adaptor.getOperands(),
        [&](OpBuilder &b, Location loc, ValueRange x) -> Value {
          auto floatType = cast<FloatType>(type.getElementType());
          auto value = [&](Value q) {
            return isF8 ? decodeNarrowFloat(
                              b, loc, q, cast<FloatType>(inElement), floatType)
                        : castScalar(b, loc, q, floatType, inUnsigned);
          };
          Value v = value(x[0]);
          if (x.size() > 2)
            v = arith::SubFOp::create(b, loc, v, value(x[2]));
          return arith::MulFOp::create(b, loc, v, x[1]);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateLoomQuantToLinalgPatterns(const TypeConverter &converter,
                                       RewritePatternSet &patterns,
                                       bool byteProducts) {
  patterns.add<QMatMulLowering, QConvLowering>(converter, patterns.getContext(),
                                               byteProducts);
  patterns.add<QuantizeLowering, DequantizeLowering>(converter,
                                                     patterns.getContext());
}

} // namespace loom
