//===- ElementwiseToLinalg.cpp - Elementwise lowerings --------------------===//
//
// Broadcasting elementwise ops become one linalg.generic each (later
// fusion merges chains of them). Data movement is in
// DataMovementToLinalg.cpp, gathers and scatters in IndexingToLinalg.cpp.
//
//===----------------------------------------------------------------------===//

#include "loom/Conversion/LoomToLinalg/LoomToLinalg.h"

#include "Utils.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>
#include <functional>

using namespace mlir;
using namespace loom::lowering;

namespace loom {
namespace {

/// The converted type of a result, or null when it has no conversion.
RankedTensorType convertedType(const TypeConverter *converter, Value value) {
  return dyn_cast_or_null<RankedTensorType>(
      converter->convertType(value.getType()));
}

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

/// Scalar semantics of one elementwise op: the op, the operands' scalars and
/// the result's element type.
template <typename OpTy>
using ScalarFn =
    std::function<Value(OpTy, OpBuilder &, Location, ValueRange, Type)>;

/// Code emitted once before an op's elementwise loop, given its converted
/// operands (run-time checks).
template <typename OpTy>
using PrologueFn = std::function<void(OpTy, OpBuilder &, ValueRange)>;

/// Any elementwise op with broadcasting operands, given its scalar form.
template <typename OpTy>
class ElementwiseLowering : public OpConversionPattern<OpTy> {
public:
  ElementwiseLowering(const TypeConverter &converter, MLIRContext *ctx,
                      ScalarFn<OpTy> scalar, PrologueFn<OpTy> prologue = {})
      : OpConversionPattern<OpTy>(converter, ctx), scalar(std::move(scalar)),
        prologue(std::move(prologue)) {}

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type =
        convertedType(this->getTypeConverter(), op->getResult(0));
    if (!type)
      return rewriter.notifyMatchFailure(op, "unsupported result type");
    for (Value operand : adaptor.getOperands())
      if (!convertedType(this->getTypeConverter(), operand))
        return rewriter.notifyMatchFailure(op, "unsupported operand type");
    SmallVector<Value> inputs(adaptor.getOperands());
    if (prologue)
      prologue(op, rewriter, inputs);
    SmallVector<Value> sizes =
        alignRunTimeSizes(rewriter, op.getLoc(), op, type, inputs);
    Value result = buildElementwise(
        rewriter, op.getLoc(), type, inputs,
        [&](OpBuilder &b, Location loc, ValueRange x) {
          return scalar(op, b, loc, x, type.getElementType());
        },
        sizes);
    rewriter.replaceOp(op, result);
    return success();
  }

private:
  ScalarFn<OpTy> scalar;
  PrologueFn<OpTy> prologue;
};

template <typename OpTy>
void addElementwise(RewritePatternSet &patterns, const TypeConverter &converter,
                    ScalarFn<OpTy> scalar, PrologueFn<OpTy> prologue = {}) {
  patterns.add<ElementwiseLowering<OpTy>>(
      converter, patterns.getContext(), std::move(scalar), std::move(prologue));
}

/// Integer division and remainder trap on x86 (SIGFPE) for a zero divisor
/// and, signed, for the most negative value by -1. Before the loop, a zero
/// anywhere in the divisor is reported through the runtime (the reference
/// executor's error, "integer division by zero"); in the loop those
/// divisors become 1: the most negative value by -1 then gives the
/// wrapped quotient (itself) and remainder 0, as the reference does, and
/// the reported zero divisors give the dividend and 0 rather than a crash.
template <typename OpTy>
void checkIntegerDivisor(OpTy op, OpBuilder &b, ValueRange operands) {
  Value divisor = operands[1];
  auto type = cast<RankedTensorType>(divisor.getType());
  if (!isa<IntegerType>(type.getElementType()))
    return;
  Location loc = op.getLoc();
  auto rank = static_cast<int64_t>(type.getRank());
  Value zeros = buildReduction(
      b, loc, divisor, llvm::to_vector(llvm::seq<int64_t>(0, rank)),
      /*keepdims=*/false,
      arith::ConstantOp::create(b, loc, b.getBoolAttr(false)),
      [](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        Value zero = arith::ConstantOp::create(
            nb, nloc, nb.getIntegerAttr(args[0].getType(), 0));
        return arith::OrIOp::create(
            nb, nloc, args[1],
            arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::eq, args[0],
                                  zero));
      });
  Value anyZero = tensor::ExtractOp::create(b, loc, zeros, ValueRange{});
  checkCondition(b, loc, op, anyZero, "integer division by zero");
}

/// `divisor`, or 1 where dividing by it would trap (see
/// checkIntegerDivisor).
Value trapFreeDivisor(OpBuilder &b, Location loc, Value dividend, Value divisor,
                      bool isUnsigned) {
  Type type = divisor.getType();
  auto constant = [&](const APInt &value) -> Value {
    return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, value));
  };
  unsigned width = type.getIntOrFloatBitWidth();
  Value traps = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, divisor,
                                      constant(APInt::getZero(width)));
  if (!isUnsigned) {
    Value overflows = arith::AndIOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, dividend,
                              constant(APInt::getSignedMinValue(width))),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, divisor,
                              constant(APInt::getAllOnes(width))));
    traps = arith::OrIOp::create(b, loc, traps, overflows);
  }
  return arith::SelectOp::create(b, loc, traps, constant(APInt(width, 1)),
                                 divisor);
}

/// A binary op with a float and an integer form.
template <typename OpTy, typename FloatOp, typename IntOp>
void addBinary(RewritePatternSet &patterns, const TypeConverter &converter) {
  addElementwise<OpTy>(
      patterns, converter,
      [](OpTy, OpBuilder &b, Location loc, ValueRange x, Type) -> Value {
        return floatOrInt<FloatOp, IntOp>(b, loc, x[0], x[1]);
      });
}

/// A float unary op that is one math op.
template <typename OpTy, typename MathOp>
void addMath(RewritePatternSet &patterns, const TypeConverter &converter) {
  addElementwise<OpTy>(
      patterns, converter,
      [](OpTy, OpBuilder &b, Location loc, ValueRange x, Type) -> Value {
        return MathOp::create(b, loc, x[0]);
      });
}

/// The unsigned form of a signed integer predicate.
arith::CmpIPredicate unsignedPredicate(arith::CmpIPredicate predicate) {
  switch (predicate) {
  case arith::CmpIPredicate::slt:
    return arith::CmpIPredicate::ult;
  case arith::CmpIPredicate::sle:
    return arith::CmpIPredicate::ule;
  case arith::CmpIPredicate::sgt:
    return arith::CmpIPredicate::ugt;
  case arith::CmpIPredicate::sge:
    return arith::CmpIPredicate::uge;
  default:
    return predicate;
  }
}

/// A binary op with float, signed and unsigned integer forms.
template <typename OpTy, typename FloatOp, typename SignedOp,
          typename UnsignedOp>
void addSignAware(RewritePatternSet &patterns, const TypeConverter &converter) {
  addElementwise<OpTy>(
      patterns, converter,
      [](OpTy op, OpBuilder &b, Location loc, ValueRange x, Type) -> Value {
        return floatSignedOrUnsigned<FloatOp, SignedOp, UnsignedOp>(
            b, loc, isUnsigned(op.getLhs()), x[0], x[1]);
      });
}

/// A comparison with its float and integer predicates.
template <typename OpTy>
void addCompare(RewritePatternSet &patterns, const TypeConverter &converter,
                arith::CmpFPredicate floatPredicate,
                arith::CmpIPredicate intPredicate) {
  addElementwise<OpTy>(
      patterns, converter,
      [=](OpTy op, OpBuilder &b, Location loc, ValueRange x, Type) -> Value {
        if (isa<FloatType>(x[0].getType()))
          return arith::CmpFOp::create(b, loc, floatPredicate, x[0], x[1]);
        return arith::CmpIOp::create(b, loc,
                                     isUnsigned(op.getLhs())
                                         ? unsignedPredicate(intPredicate)
                                         : intPredicate,
                                     x[0], x[1]);
      });
}

Value constant(OpBuilder &b, Location loc, Value like, double value) {
  return scalarConstant(b, loc, like.getType(), value);
}

Value sigmoid(OpBuilder &b, Location loc, Value x) {
  Value one = constant(b, loc, x, 1);
  Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
  return arith::DivFOp::create(b, loc, one,
                               arith::AddFOp::create(b, loc, one, e));
}

/// `x > 0 ? x : negative(x)` for the exponential-linear family.
Value selectPositive(
    OpBuilder &b, Location loc, Value x, Value negative,
    arith::CmpFPredicate predicate = arith::CmpFPredicate::OGT) {
  Value positive =
      arith::CmpFOp::create(b, loc, predicate, x, constant(b, loc, x, 0));
  return arith::SelectOp::create(b, loc, positive, x, negative);
}

void populateUnaryPatterns(RewritePatternSet &patterns,
                           const TypeConverter &converter) {
  addMath<ExpOp, math::ExpOp>(patterns, converter);
  addMath<LogOp, math::LogOp>(patterns, converter);
  addMath<SqrtOp, math::SqrtOp>(patterns, converter);
  addMath<RsqrtOp, math::RsqrtOp>(patterns, converter);
  addMath<SinOp, math::SinOp>(patterns, converter);
  addMath<CosOp, math::CosOp>(patterns, converter);
  addMath<TanOp, math::TanOp>(patterns, converter);
  addMath<AsinOp, math::AsinOp>(patterns, converter);
  addMath<AcosOp, math::AcosOp>(patterns, converter);
  addMath<AtanOp, math::AtanOp>(patterns, converter);
  addMath<SinhOp, math::SinhOp>(patterns, converter);
  addMath<CoshOp, math::CoshOp>(patterns, converter);
  addMath<AsinhOp, math::AsinhOp>(patterns, converter);
  addMath<AcoshOp, math::AcoshOp>(patterns, converter);
  addMath<AtanhOp, math::AtanhOp>(patterns, converter);
  addMath<TanhOp, math::TanhOp>(patterns, converter);
  addMath<ErfOp, math::ErfOp>(patterns, converter);
  addMath<FloorOp, math::FloorOp>(patterns, converter);
  addMath<CeilOp, math::CeilOp>(patterns, converter);
  addMath<RoundOp, math::RoundEvenOp>(patterns, converter);

  addElementwise<AbsOp>(patterns, converter,
                        [](AbsOp op, B &b, L loc, V x, Type) -> Value {
                          if (isUnsigned(op.getInput()))
                            return x[0];
                          if (isa<FloatType>(x[0].getType()))
                            return math::AbsFOp::create(b, loc, x[0]);
                          return math::AbsIOp::create(b, loc, x[0]);
                        });
  addElementwise<NegOp>(
      patterns, converter, [](NegOp, B &b, L loc, V x, Type) -> Value {
        if (isa<FloatType>(x[0].getType()))
          return arith::NegFOp::create(b, loc, x[0]);
        return arith::SubIOp::create(b, loc, constant(b, loc, x[0], 0), x[0]);
      });
  addElementwise<SignOp>(
      patterns, converter, [](SignOp op, B &b, L loc, V x, Type) -> Value {
        Value zero = constant(b, loc, x[0], 0);
        Value one = constant(b, loc, x[0], 1);
        Value minusOne = constant(b, loc, x[0], -1);
        bool isFloat = isa<FloatType>(x[0].getType());
        Value positive =
            isFloat
                ? Value(arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT,
                                              x[0], zero))
                : Value(arith::CmpIOp::create(b, loc,
                                              isUnsigned(op.getInput())
                                                  ? arith::CmpIPredicate::ugt
                                                  : arith::CmpIPredicate::sgt,
                                              x[0], zero));
        Value negative =
            isFloat
                ? Value(arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT,
                                              x[0], zero))
                : Value(arith::CmpIOp::create(b, loc,
                                              isUnsigned(op.getInput())
                                                  ? arith::CmpIPredicate::ult
                                                  : arith::CmpIPredicate::slt,
                                              x[0], zero));
        return arith::SelectOp::create(
            b, loc, positive, one,
            arith::SelectOp::create(b, loc, negative, minusOne, zero));
      });
  addElementwise<ReciprocalOp>(
      patterns, converter, [](ReciprocalOp, B &b, L loc, V x, Type) -> Value {
        return arith::DivFOp::create(b, loc, constant(b, loc, x[0], 1), x[0]);
      });
  addElementwise<NotOp>(
      patterns, converter, [](NotOp, B &b, L loc, V x, Type) -> Value {
        return arith::XOrIOp::create(b, loc, x[0], constant(b, loc, x[0], 1));
      });
  addElementwise<BitwiseNotOp>(
      patterns, converter, [](BitwiseNotOp, B &b, L loc, V x, Type) -> Value {
        return arith::XOrIOp::create(b, loc, x[0], constant(b, loc, x[0], -1));
      });
  addElementwise<ReluOp>(patterns, converter,
                         [](ReluOp op, B &b, L loc, V x, Type) -> Value {
                           if (isUnsigned(op.getInput()))
                             return x[0];
                           Value zero = constant(b, loc, x[0], 0);
                           if (!isa<FloatType>(x[0].getType()))
                             return arith::MaxSIOp::create(b, loc, x[0], zero);
                           // NaN gives 0, as the reference's x > 0 ? x : 0.
                           return selectPositive(b, loc, x[0], zero);
                         });
  addElementwise<SigmoidOp>(patterns, converter,
                            [](SigmoidOp, B &b, L loc, V x, Type) -> Value {
                              return sigmoid(b, loc, x[0]);
                            });
  addElementwise<SiluOp>(
      patterns, converter, [](SiluOp, B &b, L loc, V x, Type) -> Value {
        return arith::MulFOp::create(b, loc, x[0], sigmoid(b, loc, x[0]));
      });
  addElementwise<SoftplusOp>(
      patterns, converter, [](SoftplusOp, B &b, L loc, V x, Type) -> Value {
        return math::Log1pOp::create(b, loc, math::ExpOp::create(b, loc, x[0]));
      });
  addElementwise<SoftsignOp>(
      patterns, converter, [](SoftsignOp, B &b, L loc, V x, Type) -> Value {
        Value denominator =
            arith::AddFOp::create(b, loc, constant(b, loc, x[0], 1),
                                  math::AbsFOp::create(b, loc, x[0]));
        return arith::DivFOp::create(b, loc, x[0], denominator);
      });
  addElementwise<LeakyReluOp>(
      patterns, converter, [](LeakyReluOp op, B &b, L loc, V x, Type) -> Value {
        Value alpha = constant(b, loc, x[0], op.getAlpha().convertToDouble());
        return selectPositive(b, loc, x[0],
                              arith::MulFOp::create(b, loc, alpha, x[0]),
                              arith::CmpFPredicate::OGE);
      });
  auto expLinear = [](B &b, L loc, Value x, double alpha) -> Value {
    Value expm1 = arith::SubFOp::create(b, loc, math::ExpOp::create(b, loc, x),
                                        constant(b, loc, x, 1));
    return selectPositive(
        b, loc, x,
        arith::MulFOp::create(b, loc, constant(b, loc, x, alpha), expm1));
  };
  addElementwise<EluOp>(
      patterns, converter, [=](EluOp op, B &b, L loc, V x, Type) -> Value {
        return expLinear(b, loc, x[0], op.getAlpha().convertToDouble());
      });
  addElementwise<SeluOp>(
      patterns, converter, [=](SeluOp op, B &b, L loc, V x, Type) -> Value {
        Value gamma = constant(b, loc, x[0], op.getGamma().convertToDouble());
        return arith::MulFOp::create(
            b, loc, gamma,
            expLinear(b, loc, x[0], op.getAlpha().convertToDouble()));
      });
  addElementwise<HardSigmoidOp>(
      patterns, converter,
      [](HardSigmoidOp op, B &b, L loc, V x, Type) -> Value {
        Value v = arith::AddFOp::create(
            b, loc,
            arith::MulFOp::create(
                b, loc, constant(b, loc, x[0], op.getAlpha().convertToDouble()),
                x[0]),
            constant(b, loc, x[0], op.getBeta().convertToDouble()));
        v = arith::MinimumFOp::create(b, loc, constant(b, loc, x[0], 1), v);
        return arith::MaximumFOp::create(b, loc, constant(b, loc, x[0], 0), v);
      });
  addElementwise<GeluOp>(
      patterns, converter, [](GeluOp op, B &b, L loc, V x, Type) -> Value {
        Value v = x[0];
        Value half = arith::MulFOp::create(b, loc, constant(b, loc, v, 0.5), v);
        Value inner;
        if (op.getApproximate() == "tanh") {
          Value cube = arith::MulFOp::create(
              b, loc, v, arith::MulFOp::create(b, loc, v, v));
          Value poly = arith::AddFOp::create(
              b, loc, v,
              arith::MulFOp::create(b, loc, constant(b, loc, v, 0.044715),
                                    cube));
          inner = math::TanhOp::create(
              b, loc,
              arith::MulFOp::create(
                  b, loc, constant(b, loc, v, std::sqrt(2.0 / M_PI)), poly));
        } else {
          inner = math::ErfOp::create(
              b, loc,
              arith::MulFOp::create(b, loc, v, constant(b, loc, v, M_SQRT1_2)));
        }
        return arith::MulFOp::create(
            b, loc, half,
            arith::AddFOp::create(b, loc, constant(b, loc, v, 1), inner));
      });
  addElementwise<IsNaNOp>(patterns, converter,
                          [](IsNaNOp, B &b, L loc, V x, Type) -> Value {
                            return arith::CmpFOp::create(
                                b, loc, arith::CmpFPredicate::UNO, x[0], x[0]);
                          });
  addElementwise<IsInfOp>(
      patterns, converter, [](IsInfOp op, B &b, L loc, V x, Type) -> Value {
        Type type = x[0].getType();
        Value positive =
            arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x[0],
                                  extremeValue(b, loc, type, /*lowest=*/false));
        Value negative =
            arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x[0],
                                  extremeValue(b, loc, type, /*lowest=*/true));
        Value no = arith::ConstantOp::create(b, loc, b.getBoolAttr(false));
        return arith::OrIOp::create(b, loc,
                                    op.getDetectPositive() ? positive : no,
                                    op.getDetectNegative() ? negative : no);
      });
  addElementwise<BitcastOp>(
      patterns, converter, [](BitcastOp, B &b, L loc, V x, Type to) -> Value {
        Type from = x[0].getType();
        if (from == to)
          return x[0];
        // A boolean is a byte holding 0 or 1; a byte is true when non-zero.
        if (from.isInteger(1))
          return arith::ExtUIOp::create(b, loc, to, x[0]);
        if (to.isInteger(1))
          return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, x[0],
                                       scalarConstant(b, loc, from, 0));
        return arith::BitcastOp::create(b, loc, to, x[0]);
      });
  addElementwise<CastOp>(
      patterns, converter, [](CastOp op, B &b, L loc, V x, Type to) -> Value {
        Type from = op.getInput().getType().getElementType();
        Type result = op.getType().getElementType();
        bool fromUnsigned = isUnsigned(op.getInput());
        Value v = x[0];
        // Narrow floats arrive and leave as their bits.
        if (isNarrowFloat(from)) {
          v = decodeNarrowFloat(b, loc, v, cast<FloatType>(from),
                                b.getF32Type());
          fromUnsigned = false;
        }
        if (isNarrowFloat(result)) {
          if (!isa<FloatType>(v.getType()))
            v = castScalar(b, loc, v, b.getF32Type(), fromUnsigned);
          return encodeNarrowFloat(b, loc, v, cast<FloatType>(result),
                                   op.getSaturate(), op.getRoundMode());
        }
        unsigned width = result.getIntOrFloatBitWidth();
        if (isa<FloatType>(v.getType()) && isa<IntegerType>(result) &&
            width > 1 && width < 8) {
          // Floats beyond the range of i2/i4/ui2/ui4 become 0 (onnx's
          // reference implementation); in the range they truncate.
          bool toUnsigned = isUnsigned(op.getResult());
          double lowest = toUnsigned ? 0.0 : -std::ldexp(1.0, width - 1);
          double highest = std::ldexp(1.0, toUnsigned ? width : width - 1) - 1;
          Type floatType = v.getType();
          Value truncated = math::TruncOp::create(b, loc, v);
          Value inRange = arith::AndIOp::create(
              b, loc,
              arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE,
                                    truncated,
                                    scalarConstant(b, loc, floatType, lowest)),
              arith::CmpFOp::create(
                  b, loc, arith::CmpFPredicate::OLE, truncated,
                  scalarConstant(b, loc, floatType, highest)));
          Value safe = arith::SelectOp::create(
              b, loc, inRange, truncated, scalarConstant(b, loc, floatType, 0));
          Value integer = arith::FPToSIOp::create(b, loc, b.getI32Type(), safe);
          return arith::TruncIOp::create(b, loc, to, integer);
        }
        v = castScalar(b, loc, v, to, fromUnsigned, isUnsigned(op.getResult()));
        if (isa<IntegerType>(result) && width > 1 && width < 8 &&
            isa<IntegerType>(v.getType())) {
          // Integers wrap to the 2 or 4 bits of the result, which travels
          // as a byte: sign-extended for the signed, masked otherwise.
          auto bits = [&](int64_t n) -> Value {
            return scalarConstant(b, loc, v.getType(), n);
          };
          if (isUnsigned(op.getResult()))
            return arith::AndIOp::create(b, loc, v, bits((1 << width) - 1));
          Value up = arith::ShLIOp::create(b, loc, v, bits(8 - width));
          return arith::ShRSIOp::create(b, loc, up, bits(8 - width));
        }
        return v;
      });
}

void populateBinaryPatterns(RewritePatternSet &patterns,
                            const TypeConverter &converter) {
  addBinary<AddOp, arith::AddFOp, arith::AddIOp>(patterns, converter);
  addBinary<SubOp, arith::SubFOp, arith::SubIOp>(patterns, converter);
  addBinary<MulOp, arith::MulFOp, arith::MulIOp>(patterns, converter);
  addElementwise<DivOp>(
      patterns, converter,
      [](DivOp op, OpBuilder &b, Location loc, ValueRange x, Type) -> Value {
        bool unsignedOperands = isUnsigned(op.getLhs());
        if (isa<FloatType>(x[0].getType()))
          return arith::DivFOp::create(b, loc, x[0], x[1]);
        Value divisor = trapFreeDivisor(b, loc, x[0], x[1], unsignedOperands);
        if (unsignedOperands)
          return arith::DivUIOp::create(b, loc, x[0], divisor);
        return arith::DivSIOp::create(b, loc, x[0], divisor);
      },
      checkIntegerDivisor<DivOp>);
  addSignAware<MaxOp, arith::MaximumFOp, arith::MaxSIOp, arith::MaxUIOp>(
      patterns, converter);
  addSignAware<MinOp, arith::MinimumFOp, arith::MinSIOp, arith::MinUIOp>(
      patterns, converter);
  addElementwise<BitShiftOp>(
      patterns, converter,
      [](BitShiftOp op, OpBuilder &b, Location loc, ValueRange x,
         Type type) -> Value {
        // A shift by the width or more (a negative amount reads as a large
        // unsigned one) gives 0, or for signed values shifted right their
        // sign in every bit: LLVM's shifts would be poison there.
        unsigned width = type.getIntOrFloatBitWidth();
        auto constant = [&](int64_t v) -> Value {
          return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, v));
        };
        if (op.getDirection() != "LEFT" && !isUnsigned(op.getResult()))
          return arith::ShRSIOp::create(
              b, loc, x[0],
              arith::MinUIOp::create(b, loc, x[1], constant(width - 1)));
        Value shifted = op.getDirection() == "LEFT"
                            ? Value(arith::ShLIOp::create(b, loc, x[0], x[1]))
                            : Value(arith::ShRUIOp::create(b, loc, x[0], x[1]));
        Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                              x[1], constant(width));
        return arith::SelectOp::create(b, loc, inRange, shifted, constant(0));
      });
  addBinary<AndOp, arith::AndIOp, arith::AndIOp>(patterns, converter);
  addBinary<OrOp, arith::OrIOp, arith::OrIOp>(patterns, converter);
  addBinary<XorOp, arith::XOrIOp, arith::XOrIOp>(patterns, converter);
  addCompare<EqualOp>(patterns, converter, arith::CmpFPredicate::OEQ,
                      arith::CmpIPredicate::eq);
  addCompare<LessOp>(patterns, converter, arith::CmpFPredicate::OLT,
                     arith::CmpIPredicate::slt);
  addCompare<LessEqualOp>(patterns, converter, arith::CmpFPredicate::OLE,
                          arith::CmpIPredicate::sle);
  addCompare<GreaterOp>(patterns, converter, arith::CmpFPredicate::OGT,
                        arith::CmpIPredicate::sgt);
  addCompare<GreaterEqualOp>(patterns, converter, arith::CmpFPredicate::OGE,
                             arith::CmpIPredicate::sge);
  addElementwise<SwigluOp>(
      patterns, converter,
      [](SwigluOp, OpBuilder &b, Location loc, ValueRange x, Type) -> Value {
        // silu(gate) * up.
        Value silu = arith::MulFOp::create(b, loc, x[0], sigmoid(b, loc, x[0]));
        return arith::MulFOp::create(b, loc, silu, x[1]);
      });
  addElementwise<PowOp>(
      patterns, converter,
      [](PowOp op, OpBuilder &b, Location loc, ValueRange x, Type to) -> Value {
        // The exponent may have another element type (ONNX Pow-12).
        Value exponent = castScalar(b, loc, x[1], to, isUnsigned(op.getRhs()),
                                    isUnsigned(op.getResult()));
        if (isa<FloatType>(to))
          return math::PowFOp::create(b, loc, x[0], exponent);
        return math::IPowIOp::create(b, loc, x[0], exponent);
      });
  addElementwise<ModOp>(
      patterns, converter,
      [](ModOp op, OpBuilder &b, Location loc, ValueRange x, Type) -> Value {
        bool isFloat = isa<FloatType>(x[0].getType());
        bool unsignedOperands = isUnsigned(op.getLhs());
        Value divisor =
            isFloat ? x[1]
                    : trapFreeDivisor(b, loc, x[0], x[1], unsignedOperands);
        if (unsignedOperands)
          return arith::RemUIOp::create(b, loc, x[0], divisor);
        Value remainder =
            floatOrInt<arith::RemFOp, arith::RemSIOp>(b, loc, x[0], divisor);
        if (op.getFmod())
          return remainder;
        // Python's %: the sign follows the divisor.
        Value zero = constant(b, loc, x[0], 0);
        auto less = [&](Value a, Value c) -> Value {
          if (isFloat)
            return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, a,
                                         c);
          return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, a, c);
        };
        Value nonZero =
            isFloat
                ? Value(arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ONE,
                                              remainder, zero))
                : Value(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                              remainder, zero));
        Value signsDiffer = arith::XOrIOp::create(b, loc, less(remainder, zero),
                                                  less(x[1], zero));
        Value adjust = arith::AndIOp::create(b, loc, nonZero, signsDiffer);
        return arith::SelectOp::create(
            b, loc, adjust,
            floatOrInt<arith::AddFOp, arith::AddIOp>(b, loc, remainder, x[1]),
            remainder);
      },
      checkIntegerDivisor<ModOp>);
  addElementwise<WhereOp>(
      patterns, converter,
      [](WhereOp, OpBuilder &b, Location loc, ValueRange x, Type) -> Value {
        return arith::SelectOp::create(b, loc, x[0], x[1], x[2]);
      });
}

} // namespace

void populateLoomElementwiseToLinalgPatterns(const TypeConverter &converter,
                                             RewritePatternSet &patterns) {
  populateUnaryPatterns(patterns, converter);
  populateBinaryPatterns(patterns, converter);
}

} // namespace loom
