//===- ReductionsToLinalg.cpp - Reductions, softmax, cumsum, top-k --------===//
//
// Reductions over axes (sum, mean, max, min, prod) and arg-max/arg-min
// become linalg.generic ops with reduction loops; softmax and log-softmax
// are built from them; cumsum is an ordered scan and top-k a selection per
// row.
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

template <typename OpTy>
class ReduceLowering : public ResultTypedLowering<OpTy> {
public:
  using ResultTypedLowering<OpTy>::ResultTypedLowering;
  LogicalResult lower(OpTy op, typename OpTy::Adaptor adaptor,
                      RankedTensorType type,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
    SmallVector<int64_t> axes;
    for (int64_t axis : op.getAxes())
      axes.push_back(axisIndex(axis, rank));
    if (axes.empty())
      axes = axesFrom(0, rank);
    llvm::sort(axes);
    bool keep = op.getKeepdims();
    Type element = type.getElementType();
    bool unsignedInput = isUnsigned(op.getInput());
    Value result;
    if constexpr (std::is_same_v<OpTy, ReduceMeanOp>) {
      result = buildMean(rewriter, loc, input, axes, keep);
    } else if constexpr (std::is_same_v<OpTy, ReduceSumOp>) {
      result = buildReduction(
          rewriter, loc, input, axes, keep,
          scalarConstant(rewriter, loc, element, 0), [](B &b, L loc, V x) {
            return floatOrInt<arith::AddFOp, arith::AddIOp>(b, loc, x[0], x[1]);
          });
    } else if constexpr (std::is_same_v<OpTy, ReduceProdOp>) {
      result = buildReduction(
          rewriter, loc, input, axes, keep,
          scalarConstant(rewriter, loc, element, 1), [](B &b, L loc, V x) {
            return floatOrInt<arith::MulFOp, arith::MulIOp>(b, loc, x[0], x[1]);
          });
    } else if constexpr (std::is_same_v<OpTy, ReduceMaxOp>) {
      result = buildReduction(
          rewriter, loc, input, axes, keep,
          extremeValue(rewriter, loc, element, true, unsignedInput),
          [&](B &b, L loc, V x) {
            return floatSignedOrUnsigned<arith::MaximumFOp, arith::MaxSIOp,
                                         arith::MaxUIOp>(b, loc, unsignedInput,
                                                         x[0], x[1]);
          });
    } else {
      result = buildReduction(
          rewriter, loc, input, axes, keep,
          extremeValue(rewriter, loc, element, false, unsignedInput),
          [&](B &b, L loc, V x) {
            return floatSignedOrUnsigned<arith::MinimumFOp, arith::MinSIOp,
                                         arith::MinUIOp>(b, loc, unsignedInput,
                                                         x[0], x[1]);
          });
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// One generic with two accumulators, the best value and its i64 index;
/// ties keep the first index, or the last with `select_last_index`.
template <typename OpTy>
class ArgReduceLowering : public ResultTypedLowering<OpTy> {
public:
  using ResultTypedLowering<OpTy>::ResultTypedLowering;
  LogicalResult lower(OpTy op, typename OpTy::Adaptor adaptor,
                      RankedTensorType type,
                      ConversionPatternRewriter &rewriter) const override {
    constexpr bool isMax = std::is_same_v<OpTy, ArgMaxOp>;
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value input = adaptor.getInput();
    auto inputType = cast<RankedTensorType>(input.getType());
    Type element = inputType.getElementType();
    int64_t rank = inputType.getRank();
    int64_t axis = axisIndex(op.getAxis(), rank);
    bool keep = op.getKeepdims(), last = op.getSelectLastIndex();
    bool isUnsignedInput = isUnsigned(op.getInput());
    SmallVector<int64_t> shape;
    SmallVector<AffineExpr> exprs;
    SmallVector<utils::IteratorType> iterators;
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < rank; ++d) {
      iterators.push_back(d == axis ? utils::IteratorType::reduction
                                    : utils::IteratorType::parallel);
      if (d == axis && !keep)
        continue;
      if (d != axis && inputType.isDynamicDim(d))
        sizes.push_back(tensor::DimOp::create(rewriter, loc, input, d));
      shape.push_back(d == axis ? 1 : inputType.getDimSize(d));
      exprs.push_back(d == axis ? getAffineConstantExpr(0, ctx)
                                : getAffineDimExpr(d, ctx));
    }
    auto valueType = RankedTensorType::get(shape, element);
    if (type.getShape() != valueType.getShape())
      return rewriter.notifyMatchFailure(op, "unexpected result shape");
    Value values = filledTensor(
        rewriter, loc, valueType,
        extremeValue(rewriter, loc, element, isMax, isUnsignedInput), sizes);
    Value indices = zeroFilled(rewriter, loc, type, sizes);
    AffineMap out = AffineMap::get(rank, 0, exprs, ctx);
    SmallVector<AffineMap> maps{rewriter.getMultiDimIdentityMap(rank), out,
                                out};
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{valueType, type}, ValueRange{input},
        ValueRange{values, indices}, maps, iterators, [&](B &b, L loc, V args) {
          Value x = args[0], best = args[1], bestIndex = args[2];
          Value better;
          if (isa<FloatType>(element)) {
            auto predicate = isMax ? (last ? arith::CmpFPredicate::OGE
                                           : arith::CmpFPredicate::OGT)
                                   : (last ? arith::CmpFPredicate::OLE
                                           : arith::CmpFPredicate::OLT);
            better = arith::CmpFOp::create(b, loc, predicate, x, best);
          } else {
            auto predicate = isUnsignedInput
                                 ? (isMax ? (last ? arith::CmpIPredicate::uge
                                                  : arith::CmpIPredicate::ugt)
                                          : (last ? arith::CmpIPredicate::ule
                                                  : arith::CmpIPredicate::ult))
                                 : (isMax ? (last ? arith::CmpIPredicate::sge
                                                  : arith::CmpIPredicate::sgt)
                                          : (last ? arith::CmpIPredicate::sle
                                                  : arith::CmpIPredicate::slt));
            better = arith::CmpIOp::create(b, loc, predicate, x, best);
          }
          Value position = arith::IndexCastOp::create(
              b, loc, b.getI64Type(), linalg::IndexOp::create(b, loc, axis));
          linalg::YieldOp::create(
              b, loc,
              ValueRange{arith::SelectOp::create(b, loc, better, x, best),
                         arith::SelectOp::create(b, loc, better, position,
                                                 bestIndex)});
        });
    rewriter.replaceOp(op, generic.getResult(1));
    return success();
  }
};

/// Running sums (cumsum) or products (cumprod) as a generic over (result
/// dims..., k): element k of the axis counts towards position i when
/// k <= i (k < i exclusive; reversed with `reverse`); the accumulator starts
/// at the identity, 0 or 1.
template <typename OpTy>
class CumulativeLowering : public ResultTypedLowering<OpTy> {
public:
  using ResultTypedLowering<OpTy>::ResultTypedLowering;
  LogicalResult lower(OpTy op, typename OpTy::Adaptor adaptor,
                      RankedTensorType type,
                      ConversionPatternRewriter &rewriter) const override {
    constexpr bool product = std::is_same_v<OpTy, CumProdOp>;
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    int64_t rank = type.getRank();
    int64_t axis = axisIndex(op.getAxis(), rank);
    SmallVector<AffineExpr> inputExprs, outExprs;
    for (int64_t d = 0; d < rank; ++d) {
      inputExprs.push_back(getAffineDimExpr(d == axis ? rank : d, ctx));
      outExprs.push_back(getAffineDimExpr(d, ctx));
    }
    SmallVector<AffineMap> maps{AffineMap::get(rank + 1, 0, inputExprs, ctx),
                                AffineMap::get(rank + 1, 0, outExprs, ctx)};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    arith::CmpIPredicate predicate =
        op.getReverse() ? (op.getExclusive() ? arith::CmpIPredicate::sgt
                                             : arith::CmpIPredicate::sge)
                        : (op.getExclusive() ? arith::CmpIPredicate::slt
                                             : arith::CmpIPredicate::sle);
    Value identity =
        scalarConstant(rewriter, loc, type.getElementType(), product ? 1 : 0);
    Value init = filledTensor(
        rewriter, loc, type, identity,
        sizesFrom(rewriter, loc, type, ValueRange{adaptor.getInput()}));
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{type}, ValueRange{adaptor.getInput()},
        ValueRange{init}, maps, iterators, [&](B &b, L loc, V args) {
          Value k = linalg::IndexOp::create(b, loc, rank);
          Value i = linalg::IndexOp::create(b, loc, axis);
          Value counts = arith::CmpIOp::create(b, loc, predicate, k, i);
          Value combined = product ? floatOrInt<arith::MulFOp, arith::MulIOp>(
                                         b, loc, args[1], args[0])
                                   : floatOrInt<arith::AddFOp, arith::AddIOp>(
                                         b, loc, args[1], args[0]);
          linalg::YieldOp::create(b, loc,
                                  Value(arith::SelectOp::create(
                                      b, loc, counts, combined, args[1])));
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// The longest static axis whose top-k is found by ranks (n^2 comparisons,
/// vectorized); longer ones are sorted.
constexpr int64_t kLongestRankedTopK = 32;

/// Top-k of a short axis without sorting: the rank of each element along
/// the axis (how many elements come before it: better values, or equal
/// ones at lower indices), then output position p takes the element of
/// rank p. Both steps are generics with an extra reduction dimension over
/// the axis. Long axes: a stable merge sort of the positions per row
/// (buildStableOrder), then its first k.
class TopKLowering : public LoomLowering<TopKOp> {
public:
  using LoomLowering::LoomLowering;
  LogicalResult
  matchAndRewrite(TopKOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType valuesType = resultType(op);
    RankedTensorType indicesType = convertedType(op.getIndices());
    if (!valuesType || !indicesType)
      return failure();
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value x = adaptor.getInput();
    auto inputType = cast<RankedTensorType>(x.getType());
    Type element = inputType.getElementType();
    int64_t rank = inputType.getRank();
    int64_t axis = axisIndex(op.getAxis(), rank);
    bool largest = op.getLargest(), unsignedInput = isUnsigned(op.getInput());
    Type i64 = rewriter.getI64Type();
    SmallVector<AffineExpr> ownExprs, otherExprs;
    for (int64_t d = 0; d < rank; ++d) {
      ownExprs.push_back(getAffineDimExpr(d, ctx));
      otherExprs.push_back(getAffineDimExpr(d == axis ? rank : d, ctx));
    }
    AffineMap own = AffineMap::get(rank + 1, 0, ownExprs, ctx);
    AffineMap other = AffineMap::get(rank + 1, 0, otherExprs, ctx);
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);

    // Sizes known only at run time are the input's, except k.
    auto sizesOf = [&](RankedTensorType type) -> FailureOr<SmallVector<Value>> {
      SmallVector<Value> sizes;
      for (int64_t d = 0; d < type.getRank(); ++d) {
        if (!type.isDynamicDim(d))
          continue;
        if (d == axis && type != inputType && d < rank &&
            type.getShape() != inputType.getShape())
          return failure();
        sizes.push_back(tensor::DimOp::create(rewriter, loc, x, d));
      }
      return sizes;
    };
    auto rankType = RankedTensorType::get(inputType.getShape(), i64);
    FailureOr<SmallVector<Value>> rankSizes = sizesOf(rankType);
    FailureOr<SmallVector<Value>> valueSizes = sizesOf(valuesType);
    FailureOr<SmallVector<Value>> indexSizes = sizesOf(indicesType);
    if (failed(rankSizes) || failed(valueSizes) || failed(indexSizes))
      return rewriter.notifyMatchFailure(op, "k known only at run time");

    // Whether `rival` comes before `self`: a better value (equal ones keep
    // their order, which the callers make the index order).
    auto beats = [&](OpBuilder &b, Location loc, Value self, Value rival) {
      if (isa<FloatType>(element))
        return Value(arith::CmpFOp::create(b, loc,
                                           largest ? arith::CmpFPredicate::OGT
                                                   : arith::CmpFPredicate::OLT,
                                           rival, self));
      auto predicate = largest ? (unsignedInput ? arith::CmpIPredicate::ugt
                                                : arith::CmpIPredicate::sgt)
                               : (unsignedInput ? arith::CmpIPredicate::ult
                                                : arith::CmpIPredicate::slt);
      return Value(arith::CmpIOp::create(b, loc, predicate, rival, self));
    };

    // Long axes (or lengths known only at run time: a detector's score
    // filter) are sorted: O(n log n) per row instead of the ranks' n^2.
    if (inputType.isDynamicDim(axis) ||
        inputType.getDimSize(axis) > kLongestRankedTopK) {
      Value values = emptyTensor(rewriter, loc, valuesType, *valueSizes);
      Value indices = emptyTensor(rewriter, loc, indicesType, *indexSizes);
      auto c = [&](OpBuilder &b, int64_t v) -> Value {
        return arith::ConstantIndexOp::create(b, loc, v);
      };
      // The rows: every position of the other dimensions, in row-major
      // order.
      SmallVector<Value> extents;
      Value rows = c(rewriter, 1);
      for (int64_t d = 0; d < rank; ++d) {
        Value size = tensor::DimOp::create(rewriter, loc, x, d);
        extents.push_back(size);
        if (d != axis)
          rows = arith::MulIOp::create(rewriter, loc, rows, size);
      }
      Value length = extents[axis];
      Value k = tensor::DimOp::create(rewriter, loc, values, axis);
      auto loop = scf::ForOp::create(
          rewriter, loc, c(rewriter, 0), rows, c(rewriter, 1),
          ValueRange{values, indices},
          [&](OpBuilder &b, Location loc, Value row, ValueRange acc) {
            SmallVector<Value> at(rank);
            Value rest = row;
            for (int64_t d = rank - 1; d >= 0; --d) {
              if (d == axis)
                continue;
              at[d] = arith::RemUIOp::create(b, loc, rest, extents[d]);
              rest = arith::DivUIOp::create(b, loc, rest, extents[d]);
            }
            auto element = [&](OpBuilder &b, Location loc, Value position) {
              SmallVector<Value> indices(at);
              indices[axis] = position;
              return Value(tensor::ExtractOp::create(b, loc, x, indices));
            };
            Value order = buildStableOrder(
                b, loc, length,
                [&](OpBuilder &b, Location loc, Value left, Value right) {
                  return beats(b, loc, element(b, loc, left),
                               element(b, loc, right));
                });
            auto firstK = scf::ForOp::create(
                b, loc, c(b, 0), k, c(b, 1), acc,
                [&](OpBuilder &b, Location loc, Value p, ValueRange out) {
                  Value source = arith::IndexCastOp::create(
                      b, loc, b.getIndexType(),
                      tensor::ExtractOp::create(b, loc, order, p));
                  SmallVector<Value> target(at);
                  target[axis] = p;
                  Value v = tensor::InsertOp::create(
                      b, loc, element(b, loc, source), out[0], target);
                  Value i = tensor::InsertOp::create(
                      b, loc, arith::IndexCastOp::create(b, loc, i64, source),
                      out[1], target);
                  scf::YieldOp::create(b, loc, ValueRange{v, i});
                });
            scf::YieldOp::create(b, loc, firstK.getResults());
          });
      rewriter.replaceOp(op, loop.getResults());
      return success();
    }
    Value ranks =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{rankType}, ValueRange{x, x},
            ValueRange{zeroFilled(rewriter, loc, rankType, *rankSizes)},
            {own, other, own}, iterators,
            [&](B &b, L loc, V args) {
              Value self = args[0], rival = args[1];
              Value beats, ties;
              if (isa<FloatType>(element)) {
                beats =
                    arith::CmpFOp::create(b, loc,
                                          largest ? arith::CmpFPredicate::OGT
                                                  : arith::CmpFPredicate::OLT,
                                          rival, self);
                ties = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                             rival, self);
              } else {
                auto predicate =
                    largest ? (unsignedInput ? arith::CmpIPredicate::ugt
                                             : arith::CmpIPredicate::sgt)
                            : (unsignedInput ? arith::CmpIPredicate::ult
                                             : arith::CmpIPredicate::slt);
                beats = arith::CmpIOp::create(b, loc, predicate, rival, self);
                ties = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                             rival, self);
              }
              Value earlier =
                  arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                        linalg::IndexOp::create(b, loc, rank),
                                        linalg::IndexOp::create(b, loc, axis));
              Value before = arith::OrIOp::create(
                  b, loc, beats, arith::AndIOp::create(b, loc, ties, earlier));
              Value count = arith::ExtUIOp::create(b, loc, i64, before);
              linalg::YieldOp::create(
                  b, loc, Value(arith::AddIOp::create(b, loc, args[2], count)));
            })
            .getResult(0);

    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{valuesType, indicesType}, ValueRange{x, ranks},
        ValueRange{zeroFilled(rewriter, loc, valuesType, *valueSizes),
                   zeroFilled(rewriter, loc, indicesType, *indexSizes)},
        {other, other, own, own}, iterators, [&](B &b, L loc, V args) {
          Value position = arith::IndexCastOp::create(
              b, loc, i64, linalg::IndexOp::create(b, loc, axis));
          Value source = arith::IndexCastOp::create(
              b, loc, i64, linalg::IndexOp::create(b, loc, rank));
          Value hit = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                            args[1], position);
          linalg::YieldOp::create(
              b, loc,
              ValueRange{
                  arith::SelectOp::create(b, loc, hit, args[0], args[2]),
                  arith::SelectOp::create(b, loc, hit, source, args[3])});
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

template <typename OpTy>
class SoftmaxLowering : public ResultTypedLowering<OpTy> {
public:
  using ResultTypedLowering<OpTy>::ResultTypedLowering;
  LogicalResult lower(OpTy op, typename OpTy::Adaptor adaptor,
                      RankedTensorType type,
                      ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op,
                       buildSoftmax(rewriter, op.getLoc(), adaptor.getInput(),
                                    axisIndex(op.getAxis(), type.getRank()),
                                    std::is_same_v<OpTy, LogSoftmaxOp>));
    return success();
  }
};

} // namespace

void populateLoomReductionsToLinalgPatterns(const TypeConverter &converter,
                                            RewritePatternSet &patterns) {
  patterns.add<ReduceLowering<ReduceSumOp>, ReduceLowering<ReduceMeanOp>,
               ReduceLowering<ReduceMaxOp>, ReduceLowering<ReduceMinOp>,
               ReduceLowering<ReduceProdOp>, SoftmaxLowering<SoftmaxOp>,
               SoftmaxLowering<LogSoftmaxOp>, ArgReduceLowering<ArgMaxOp>,
               ArgReduceLowering<ArgMinOp>, CumulativeLowering<CumSumOp>,
               CumulativeLowering<CumProdOp>, TopKLowering>(
      converter, patterns.getContext());
}

} // namespace loom
