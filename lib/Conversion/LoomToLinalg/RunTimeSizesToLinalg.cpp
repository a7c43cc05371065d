//===- RunTimeSizesToLinalg.cpp - Ops whose result sizes come from data ---===//
//
// range, constant_of_shape and non_zero compute their result's size at run
// time, then fill a tensor of that size (tensor.empty with dynamic sizes,
// which bufferizes to an allocation of its own, outside the memory plan's
// arena). When the model states a static result type, the computed size is
// checked against it (checkedCast). Values that would make the reference
// executor fail (a zero or non-finite delta, a negative dimension) are
// reported through the runtime and replaced by an empty result.
//
//===----------------------------------------------------------------------===//

#include "loom/Conversion/LoomToLinalg/LoomToLinalg.h"

#include "Utils.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>

using namespace mlir;
using namespace loom::lowering;

namespace loom {
namespace {

/// The most elements a run-time size may have (2^32): beyond it the code
/// reports the size instead of asking malloc for it.
constexpr int64_t kMaxRunTimeElements = int64_t(1) << 32;

/// `value` as a dynamic type of the same rank, so that its static
/// dimensions too are checked against the model's stated ones.
RankedTensorType allDynamic(RankedTensorType type) {
  return RankedTensorType::get(
      SmallVector<int64_t>(type.getRank(), ShapedType::kDynamic),
      type.getElementType());
}

Value i64Constant(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIntOp::create(b, loc, value, 64);
}

/// `size` (an i64) reported when it is negative or above the limit, then
/// clamped into [0, limit] and returned as an index.
Value checkedSize(OpBuilder &b, Location loc, Operation *op, Value size,
                  StringRef what) {
  Value zero = i64Constant(b, loc, 0);
  Value limit = i64Constant(b, loc, kMaxRunTimeElements);
  Value bad = arith::OrIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, size, zero),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, size, limit));
  checkCondition(b, loc, op, bad,
                 (what + " is negative or above 2^32 elements").str());
  Value clamped = arith::MaxSIOp::create(
      b, loc, arith::MinSIOp::create(b, loc, size, limit), zero);
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), clamped);
}

/// range(start, limit, delta): max(ceil((limit - start) / delta), 0)
/// elements start + i * delta, computed as the reference executor does:
/// for floats, limit - start in the element type, the quotient and the
/// elements in f64; for integers, exactly.
class RangeLowering : public ResultTypedLowering<RangeOp> {
public:
  using ResultTypedLowering::ResultTypedLowering;
  LogicalResult lower(RangeOp op, OpAdaptor adaptor, RankedTensorType type,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type element = type.getElementType();
    Value start = scalarOf(rewriter, loc, adaptor.getStart());
    Value limit = scalarOf(rewriter, loc, adaptor.getLimit());
    Value delta = scalarOf(rewriter, loc, adaptor.getDelta());
    bool isUnsignedRange = isUnsigned(op.getType());
    Value count;
    if (isa<FloatType>(element)) {
      Type f64 = rewriter.getF64Type();
      Value difference =
          castScalar(rewriter, loc,
                     arith::SubFOp::create(rewriter, loc, limit, start), f64);
      Value step = castScalar(rewriter, loc, delta, f64);
      Value quotient = math::CeilOp::create(
          rewriter, loc,
          arith::DivFOp::create(rewriter, loc, difference, step));
      // A zero delta or a non-finite operand has no finite sequence: the
      // reference fails; here the run-time check reports it and the
      // result is empty.
      Value zero = scalarConstant(rewriter, loc, f64, 0);
      Value infinity = scalarConstant(rewriter, loc, f64, INFINITY);
      auto notFinite = [&](Value x) {
        Value wide = castScalar(rewriter, loc, x, f64);
        Value magnitude = math::AbsFOp::create(rewriter, loc, wide);
        // Unordered or infinite: NaN compares unordered.
        return arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::UGE,
                                     magnitude, infinity);
      };
      Value bad = arith::OrIOp::create(
          rewriter, loc,
          arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OEQ, step,
                                zero),
          arith::OrIOp::create(rewriter, loc, notFinite(start),
                               arith::OrIOp::create(rewriter, loc,
                                                    notFinite(limit),
                                                    notFinite(delta))));
      checkCondition(rewriter, loc, op, bad,
                     "range(start, limit, delta) is not a finite sequence "
                     "(a zero delta, or a NaN or infinite operand)");
      // Above the limit (and positive infinity) stays above it as an
      // integer; NaN and negatives become 0.
      Value cap = scalarConstant(rewriter, loc, f64, 1e18);
      Value positive = arith::CmpFOp::create(
          rewriter, loc, arith::CmpFPredicate::OGT, quotient, zero);
      Value capped = arith::MinimumFOp::create(rewriter, loc, quotient, cap);
      count = arith::SelectOp::create(
          rewriter, loc,
          arith::AndIOp::create(
              rewriter, loc, positive,
              arith::XOrIOp::create(
                  rewriter, loc, bad,
                  arith::ConstantOp::create(rewriter, loc,
                                            rewriter.getBoolAttr(true)))),
          arith::FPToSIOp::create(rewriter, loc, rewriter.getI64Type(), capped),
          i64Constant(rewriter, loc, 0));
    } else {
      // Integers: the difference and the quotient exactly, in i64 (the
      // reference uses 128 bits; operands whose difference overflows 64
      // bits are not supported).
      Type i64 = rewriter.getI64Type();
      Value s = castScalar(rewriter, loc, start, i64, isUnsignedRange);
      Value l = castScalar(rewriter, loc, limit, i64, isUnsignedRange);
      Value d = castScalar(rewriter, loc, delta, i64, isUnsignedRange);
      Value zero = i64Constant(rewriter, loc, 0);
      Value isZero = arith::CmpIOp::create(rewriter, loc,
                                           arith::CmpIPredicate::eq, d, zero);
      checkCondition(rewriter, loc, op, isZero, "range delta is zero");
      // Divide by 1 instead of 0 (the result is then empty).
      Value divisor = arith::SelectOp::create(rewriter, loc, isZero,
                                              i64Constant(rewriter, loc, 1), d);
      Value difference = arith::SubIOp::create(rewriter, loc, l, s);
      Value quotient =
          arith::CeilDivSIOp::create(rewriter, loc, difference, divisor);
      count = arith::SelectOp::create(
          rewriter, loc, isZero, zero,
          arith::MaxSIOp::create(rewriter, loc, quotient, zero));
    }
    Value size = checkedSize(rewriter, loc, op, count, "the range's length");
    RankedTensorType dynamicType = allDynamic(type);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{dynamicType}, ValueRange{},
        ValueRange{emptyTensor(rewriter, loc, dynamicType, {size})},
        ArrayRef<AffineMap>{rewriter.getMultiDimIdentityMap(1)},
        ArrayRef<utils::IteratorType>{utils::IteratorType::parallel},
        [&](OpBuilder &b, Location loc, ValueRange) {
          Value i = linalg::IndexOp::create(b, loc, 0);
          Value i64Index =
              arith::IndexCastOp::create(b, loc, b.getI64Type(), i);
          Value value;
          if (isa<FloatType>(element)) {
            Type f64 = b.getF64Type();
            Value position = arith::SIToFPOp::create(b, loc, f64, i64Index);
            value = castScalar(
                b, loc,
                arith::AddFOp::create(
                    b, loc, castScalar(b, loc, start, f64),
                    arith::MulFOp::create(b, loc, position,
                                          castScalar(b, loc, delta, f64))),
                element);
          } else {
            Value s =
                castScalar(b, loc, start, b.getI64Type(), isUnsignedRange);
            Value d =
                castScalar(b, loc, delta, b.getI64Type(), isUnsignedRange);
            value = castScalar(
                b, loc,
                arith::AddIOp::create(
                    b, loc, s, arith::MulIOp::create(b, loc, i64Index, d)),
                element);
          }
          linalg::YieldOp::create(b, loc, value);
        });
    rewriter.replaceOp(
        op, checkedCast(rewriter, loc, op, generic.getResult(0), type));
    return success();
  }
};

/// A tensor of the shape held by the operand, filled with the op's value.
class ConstantOfShapeLowering : public ResultTypedLowering<ConstantOfShapeOp> {
public:
  using ResultTypedLowering::ResultTypedLowering;
  LogicalResult lower(ConstantOfShapeOp op, OpAdaptor adaptor,
                      RankedTensorType type,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      Value size = castScalar(rewriter, loc,
                              scalarOf(rewriter, loc, adaptor.getShape(), d),
                              rewriter.getI64Type());
      sizes.push_back(
          checkedSize(rewriter, loc, op, size,
                      "dimension " + std::to_string(d) + " of the shape"));
    }
    TypedAttr value = op.getValue();
    Attribute fill;
    if (auto f = dyn_cast<FloatAttr>(value))
      fill = rewriter.getFloatAttr(type.getElementType(), f.getValueAsDouble());
    else if (auto i = dyn_cast<IntegerAttr>(value))
      fill = rewriter.getIntegerAttr(type.getElementType(), i.getValue());
    else
      return rewriter.notifyMatchFailure(op, "a value of another kind");
    Value scalar =
        arith::ConstantOp::create(rewriter, loc, cast<TypedAttr>(fill));
    RankedTensorType dynamicType = allDynamic(type);
    Value filled =
        linalg::FillOp::create(rewriter, loc, scalar,
                               emptyTensor(rewriter, loc, dynamicType, sizes))
            .getResult(0);
    rewriter.replaceOp(op, checkedCast(rewriter, loc, op, filled, type));
    return success();
  }
};

/// The coordinates of the non-zero elements, [rank, count], in row-major
/// order: one pass counts them, a second (sequential) writes them.
class NonZeroLowering : public LoomLowering<NonZeroOp> {
public:
  using LoomLowering::LoomLowering;
  LogicalResult
  matchAndRewrite(NonZeroOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = resultType(op);
    Value input = adaptor.getInput();
    auto inputType = cast<RankedTensorType>(input.getType());
    if (!type)
      return failure();
    Location loc = op.getLoc();
    Type i64 = rewriter.getI64Type();
    int64_t rank = inputType.getRank();
    auto isNonZero = [&](OpBuilder &b, Location loc, Value x) -> Value {
      // NaN is non-zero (une), as in the reference.
      if (isa<FloatType>(x.getType()))
        return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, x,
                                     scalarConstant(b, loc, x.getType(), 0));
      return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, x,
                                   scalarConstant(b, loc, x.getType(), 0));
    };
    // The count: a sum over every element (of an input whose sizes may be
    // known only at run time).
    SmallVector<Value> inputSizes;
    Value total = arith::ConstantIndexOp::create(rewriter, loc, 1);
    for (int64_t d = 0; d < rank; ++d) {
      inputSizes.push_back(indexDim(rewriter, loc, input, d));
      total = arith::MulIOp::create(rewriter, loc, total, inputSizes.back());
    }
    Value flat =
        reshapeTo(rewriter, loc, input,
                  RankedTensorType::get({inputType.hasStaticShape()
                                             ? inputType.getNumElements()
                                             : ShapedType::kDynamic},
                                        inputType.getElementType()));
    auto scalarType = RankedTensorType::get({}, i64);
    Value zeroCount =
        linalg::FillOp::create(rewriter, loc, i64Constant(rewriter, loc, 0),
                               emptyTensor(rewriter, loc, scalarType))
            .getResult(0);
    MLIRContext *ctx = rewriter.getContext();
    Value counted =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{scalarType}, ValueRange{flat},
            ValueRange{zeroCount},
            ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(1, ctx),
                                AffineMap::get(1, 0, {}, ctx)},
            ArrayRef<utils::IteratorType>{utils::IteratorType::reduction},
            [&](OpBuilder &b, Location loc, ValueRange args) {
              Value one = arith::ExtUIOp::create(b, loc, b.getI64Type(),
                                                 isNonZero(b, loc, args[0]));
              linalg::YieldOp::create(
                  b, loc, Value(arith::AddIOp::create(b, loc, args[1], one)));
            })
            .getResult(0);
    Value count = arith::IndexCastOp::create(
        rewriter, loc, rewriter.getIndexType(),
        tensor::ExtractOp::create(rewriter, loc, counted, ValueRange{}));
    auto dynamicType = RankedTensorType::get({rank, ShapedType::kDynamic}, i64);
    Value result = emptyTensor(rewriter, loc, dynamicType, {count});
    // The coordinates, in one sequential loop carrying the next column.
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    auto loop = scf::ForOp::create(
        rewriter, loc, zero, total, one, ValueRange{result, zero},
        [&](OpBuilder &b, Location loc, Value linear, ValueRange carried) {
          Value x = tensor::ExtractOp::create(b, loc, flat, linear);
          auto branch = scf::IfOp::create(
              b, loc, isNonZero(b, loc, x),
              [&](OpBuilder &then, Location loc) {
                Value written = carried[0];
                Value rest = linear;
                for (int64_t d = rank - 1; d >= 0; --d) {
                  Value size = inputSizes[d];
                  Value coordinate =
                      arith::RemUIOp::create(then, loc, rest, size);
                  rest = arith::DivUIOp::create(then, loc, rest, size);
                  Value row = arith::ConstantIndexOp::create(then, loc, d);
                  written = tensor::InsertOp::create(
                      then, loc,
                      arith::IndexCastOp::create(then, loc, then.getI64Type(),
                                                 coordinate),
                      written, ValueRange{row, carried[1]});
                }
                Value next = arith::AddIOp::create(
                    then, loc, carried[1],
                    arith::ConstantIndexOp::create(then, loc, 1));
                scf::YieldOp::create(then, loc, ValueRange{written, next});
              },
              [&](OpBuilder &otherwise, Location loc) {
                scf::YieldOp::create(otherwise, loc, carried);
              });
          scf::YieldOp::create(b, loc, branch.getResults());
        });
    rewriter.replaceOp(op,
                       checkedCast(rewriter, loc, op, loop.getResult(0), type));
    return success();
  }
};

} // namespace

void populateLoomRunTimeSizesToLinalgPatterns(const TypeConverter &converter,
                                              RewritePatternSet &patterns) {
  patterns.add<RangeLowering, ConstantOfShapeLowering, NonZeroLowering>(
      converter, patterns.getContext());
}

} // namespace loom
