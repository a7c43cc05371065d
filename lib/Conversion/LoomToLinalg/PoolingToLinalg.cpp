//===- PoolingToLinalg.cpp - Max and average pooling ----------------------===//
//
// Pooling is a generic over (n, c, o..., k...) whose window loops are
// reductions, on the input padded with the pooling's identity.
//
//===----------------------------------------------------------------------===//

#include "loom/Conversion/LoomToLinalg/LoomToLinalg.h"

#include "Utils.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace loom::lowering;

namespace loom {
namespace {

/// The operands of a pooling generic over (n, c, o..., k...): the input
/// padded with `padValue` (the begin by `pads`, the end as far as the last
/// window reaches: ceil_mode can need more than the end pads, or less), an
/// empty tensor of the kernel's shape that gives the window loops their
/// bounds, and the maps (input, window, then `numOutputs` outputs).
struct PoolWindow {
  Value input, window;
  SmallVector<AffineMap> maps;
  SmallVector<utils::IteratorType> iterators;
};

PoolWindow buildPoolWindow(B &b, L loc, Value input, RankedTensorType type,
                           ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                           ArrayRef<int64_t> dilations, ArrayRef<int64_t> pads,
                           Value padValue, unsigned numOutputs) {
  MLIRContext *ctx = b.getContext();
  auto inputShape = cast<RankedTensorType>(input.getType()).getShape();
  int64_t spatial = type.getRank() - 2;
  SmallVector<int64_t> low{0, 0}, high{0, 0};
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t reach = (type.getDimSize(2 + i) - 1) * strides[i] +
                    (kernel[i] - 1) * dilations[i] + 1;
    low.push_back(pads[i]);
    high.push_back(std::max<int64_t>(0, reach - inputShape[2 + i] - pads[i]));
  }
  PoolWindow w;
  w.input = input;
  if (llvm::any_of(low, [](int64_t p) { return p; }) ||
      llvm::any_of(high, [](int64_t p) { return p; }))
    w.input = padStatic(b, loc, input, low, high, padValue);
  int64_t numDims = 2 + 2 * spatial;
  auto dim = [&](int64_t d) { return getAffineDimExpr(d, ctx); };
  SmallVector<AffineExpr> inputExprs{dim(0), dim(1)}, windowExprs,
      outExprs{dim(0), dim(1)};
  for (int64_t i = 0; i < spatial; ++i) {
    inputExprs.push_back(
        windowExpr(ctx, 2 + i, 2 + spatial + i, strides[i], dilations[i]));
    windowExprs.push_back(dim(2 + spatial + i));
    outExprs.push_back(dim(2 + i));
  }
  w.maps = {AffineMap::get(numDims, 0, inputExprs, ctx),
            AffineMap::get(numDims, 0, windowExprs, ctx)};
  w.maps.append(numOutputs, AffineMap::get(numDims, 0, outExprs, ctx));
  w.iterators.assign(2 + spatial, utils::IteratorType::parallel);
  w.iterators.append(spatial, utils::IteratorType::reduction);
  w.window = tensor::EmptyOp::create(b, loc, kernel,
                                     getElementTypeOrSelf(input.getType()));
  return w;
}

/// Max pooling that also returns the flat index (over the whole unpadded
/// input) of each maximum; the first of equal maxima wins. With
/// storage_order 1 the spatial positions count column-major.
class MaxPoolWithIndicesLowering : public LoomLowering<MaxPoolWithIndicesOp> {
public:
  using LoomLowering::LoomLowering;
  LogicalResult
  matchAndRewrite(MaxPoolWithIndicesOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = resultType(op);
    RankedTensorType indicesType = convertedType(op.getIndices());
    if (!type || !indicesType || !isa<FloatType>(type.getElementType()))
      return failure();
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto inputShape = cast<RankedTensorType>(input.getType()).getShape();
    Type element = type.getElementType();
    int64_t spatial = type.getRank() - 2;
    ArrayRef<int64_t> strides = op.getStrides(), dilations = op.getDilations(),
                      pads = op.getPads();
    Value lowest = extremeValue(rewriter, loc, element, true);
    PoolWindow w =
        buildPoolWindow(rewriter, loc, input, type, op.getKernelShape(),
                        strides, dilations, pads, lowest, 2);
    // Strides of the spatial positions in the flat index.
    SmallVector<int64_t> positionStrides(spatial, 1);
    int64_t plane = 1;
    for (int64_t i = 0; i < spatial; ++i)
      plane *= inputShape[2 + i];
    if (op.getStorageOrder() == 1) {
      for (int64_t i = 1; i < spatial; ++i)
        positionStrides[i] = positionStrides[i - 1] * inputShape[1 + i];
    } else {
      for (int64_t i = spatial - 2; i >= 0; --i)
        positionStrides[i] = positionStrides[i + 1] * inputShape[3 + i];
    }
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{type, indicesType},
        ValueRange{w.input, w.window},
        ValueRange{filledTensor(rewriter, loc, type, lowest),
                   zeroFilled(rewriter, loc, indicesType)},
        w.maps, w.iterators, [&](B &b, L loc, V args) {
          auto index = [&](int64_t v) -> Value {
            return arith::ConstantIndexOp::create(b, loc, v);
          };
          Value flat = arith::MulIOp::create(
              b, loc,
              arith::AddIOp::create(
                  b, loc,
                  arith::MulIOp::create(b, loc,
                                        linalg::IndexOp::create(b, loc, 0),
                                        index(inputShape[1])),
                  linalg::IndexOp::create(b, loc, 1)),
              index(plane));
          for (int64_t i = 0; i < spatial; ++i) {
            Value position = arith::SubIOp::create(
                b, loc,
                arith::AddIOp::create(
                    b, loc,
                    arith::MulIOp::create(
                        b, loc, linalg::IndexOp::create(b, loc, 2 + i),
                        index(strides[i])),
                    arith::MulIOp::create(
                        b, loc,
                        linalg::IndexOp::create(b, loc, 2 + spatial + i),
                        index(dilations[i]))),
                index(pads[i]));
            flat = arith::AddIOp::create(
                b, loc, flat,
                arith::MulIOp::create(b, loc, position,
                                      index(positionStrides[i])));
          }
          Value better = arith::CmpFOp::create(
              b, loc, arith::CmpFPredicate::OGT, args[0], args[2]);
          Value flatI64 =
              arith::IndexCastOp::create(b, loc, b.getI64Type(), flat);
          linalg::YieldOp::create(
              b, loc,
              ValueRange{
                  arith::SelectOp::create(b, loc, better, args[0], args[2]),
                  arith::SelectOp::create(b, loc, better, flatI64, args[3])});
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

/// Max and average pooling.
template <typename OpTy> class PoolLowering : public ResultTypedLowering<OpTy> {
public:
  using ResultTypedLowering<OpTy>::ResultTypedLowering;
  LogicalResult lower(OpTy op, typename OpTy::Adaptor adaptor,
                      RankedTensorType type,
                      ConversionPatternRewriter &rewriter) const override {
    constexpr bool isMax = std::is_same_v<OpTy, MaxPoolOp>;
    ArrayRef<int64_t> kernel = op.getKernelShape(), strides = op.getStrides(),
                      dilations = op.getDilations(), pads = op.getPads();
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto inputShape = cast<RankedTensorType>(input.getType()).getShape();
    Type element = type.getElementType();
    // Unsigned integers (MaxPool takes uint8 since opset 12) are signless
    // here: their order and their smallest value come from the op's type.
    bool unsignedElement = isUnsigned(op.getInput());
    Value padValue =
        isMax ? extremeValue(rewriter, loc, element, true, unsignedElement)
              : scalarConstant(rewriter, loc, element, 0);
    FailureOr<SmallVector<Value>> sizes =
        batchSizes(rewriter, loc, type, input);
    if (failed(sizes))
      return rewriter.notifyMatchFailure(
          op, "a size other than the batch known only at run time");
    PoolWindow w = buildPoolWindow(rewriter, loc, input, type, kernel, strides,
                                   dilations, pads, padValue, 1);
    Value result =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{type}, ValueRange{w.input, w.window},
            ValueRange{filledTensor(rewriter, loc, type, padValue, *sizes)},
            w.maps, w.iterators,
            [&](B &b, L loc, V args) {
              Value v =
                  isMax ? floatSignedOrUnsigned<arith::MaximumFOp,
                                                arith::MaxSIOp, arith::MaxUIOp>(
                              b, loc, unsignedElement, args[0], args[2])
                        : floatOrInt<arith::AddFOp, arith::AddIOp>(
                              b, loc, args[0], args[2]);
              linalg::YieldOp::create(b, loc, v);
            })
            .getResult(0);
    if constexpr (!isMax)
      result =
          divideByCount(rewriter, loc, op, result, inputShape.drop_front(2));
    rewriter.replaceOp(op, result);
    return success();
  }

private:
  /// Divides window sums by the number of positions each window counted:
  /// per axis, the taps o*s + t*d (t in [0, k)) that fall in the input (or,
  /// with count_include_pad, in the padded input); without dilation, the
  /// overlap of [o*s, o*s + k) with it.
  static Value divideByCount(B &rewriter, L loc, AvgPoolOp op, Value sums,
                             ArrayRef<int64_t> inputShape) {
    auto type = cast<RankedTensorType>(sums.getType());
    int64_t spatial = inputShape.size();
    ArrayRef<int64_t> kernel = op.getKernelShape(), strides = op.getStrides(),
                      dilations = op.getDilations(), pads = op.getPads();
    bool includePad = op.getCountIncludePad();
    return buildElementwise(
        rewriter, loc, type, ValueRange{sums}, [&](B &b, L loc, V x) -> Value {
          auto index = [&](int64_t v) -> Value {
            return arith::ConstantIndexOp::create(b, loc, v);
          };
          Value count = index(1);
          for (int64_t i = 0; i < spatial; ++i) {
            Value start = arith::MulIOp::create(
                b, loc, linalg::IndexOp::create(b, loc, 2 + i),
                index(strides[i]));
            int64_t lo = includePad ? 0 : pads[i];
            int64_t hi = includePad
                             ? inputShape[i] + pads[i] + pads[spatial + i]
                             : pads[i] + inputShape[i];
            Value taps;
            if (dilations[i] == 1) {
              Value end =
                  arith::AddIOp::create(b, loc, start, index(kernel[i]));
              Value clippedEnd = arith::MinSIOp::create(b, loc, end, index(hi));
              Value clippedStart =
                  arith::MaxSIOp::create(b, loc, start, index(lo));
              taps = arith::SubIOp::create(b, loc, clippedEnd, clippedStart);
            } else {
              // The taps t with lo <= start + t*d < hi: from
              // ceil((lo - start) / d) to floor((hi - 1 - start) / d),
              // clipped to [0, k).
              Value d = index(dilations[i]);
              Value first = arith::MaxSIOp::create(
                  b, loc, index(0),
                  arith::CeilDivSIOp::create(
                      b, loc, arith::SubIOp::create(b, loc, index(lo), start),
                      d));
              Value last = arith::MinSIOp::create(
                  b, loc, index(kernel[i] - 1),
                  arith::FloorDivSIOp::create(
                      b, loc,
                      arith::SubIOp::create(b, loc, index(hi - 1), start), d));
              taps = arith::MaxSIOp::create(
                  b, loc, index(0),
                  arith::AddIOp::create(
                      b, loc, arith::SubIOp::create(b, loc, last, first),
                      index(1)));
            }
            count = arith::MulIOp::create(b, loc, count, taps);
          }
          Type element = x[0].getType();
          Value asInt =
              arith::IndexCastOp::create(b, loc, b.getI64Type(), count);
          return floatOrInt<arith::DivFOp, arith::DivSIOp>(
              b, loc, x[0], castScalar(b, loc, asInt, element));
        });
  }
};

} // namespace

void populateLoomPoolingToLinalgPatterns(const TypeConverter &converter,
                                         RewritePatternSet &patterns) {
  patterns.add<PoolLowering<MaxPoolOp>, PoolLowering<AvgPoolOp>,
               MaxPoolWithIndicesLowering>(converter, patterns.getContext());
}

} // namespace loom
