//===- GridSampleToLinalg.cpp - Grid sampling -----------------------------===//
//
// loom.grid_sample (2 or 3 spatial axes) becomes one generic over the
// output and the sampling taps whose body reads the grid and the image with
// tensor.extract; the arithmetic of each axis is in f64, as the reference
// executor's.
//
//===----------------------------------------------------------------------===//

#include "loom/Conversion/LoomToLinalg/LoomToLinalg.h"

#include "Utils.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace loom::lowering;

namespace loom {
namespace {

/// The arithmetic of one spatial axis of grid_sample, in f64, as the
/// reference executor's GridAxis (ONNX's reference algorithm).
class GridAxisBuilder {
public:
  GridAxisBuilder(OpBuilder &b, Location loc, int64_t size, bool alignCorners,
                  StringRef padding)
      : b(b), loc(loc), size(size), alignCorners(alignCorners),
        padding(padding) {}

  Value f64(double v) { return scalarConstant(b, loc, b.getF64Type(), v); }
  double lo() const { return alignCorners ? 0.0 : -0.5; }
  double hi() const {
    return alignCorners ? static_cast<double>(size - 1) : size - 0.5;
  }

  /// Normalized [-1, 1] to pixel coordinates.
  Value denormalize(Value n) {
    Value plusOne = arith::AddFOp::create(b, loc, n, f64(1));
    if (alignCorners)
      return arith::MulFOp::create(b, loc, plusOne, f64((size - 1) / 2.0));
    return arith::DivFOp::create(
        b, loc,
        arith::SubFOp::create(
            b, loc, arith::MulFOp::create(b, loc, plusOne, f64(size)), f64(1)),
        f64(2));
  }

  /// Mirrors `x` into [lo, hi] as often as needed.
  Value reflect(Value x) {
    double range = hi() - lo();
    if (range <= 0)
      return f64(lo());
    auto mirror = [&](Value distance, double from, double to) -> Value {
      Value n = math::TruncOp::create(
          b, loc, arith::DivFOp::create(b, loc, distance, f64(range)));
      Value r = arith::SubFOp::create(
          b, loc, distance, arith::MulFOp::create(b, loc, n, f64(range)));
      Value even = arith::CmpFOp::create(
          b, loc, arith::CmpFPredicate::OEQ,
          arith::RemFOp::create(b, loc, n, f64(2)), f64(0));
      double sign = to > from ? 1 : -1;
      return arith::SelectOp::create(
          b, loc, even,
          arith::AddFOp::create(b, loc, f64(from),
                                arith::MulFOp::create(b, loc, f64(sign), r)),
          arith::SubFOp::create(b, loc, f64(to),
                                arith::MulFOp::create(b, loc, f64(sign), r)));
    };
    Value below =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, f64(lo()));
    Value above =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, f64(hi()));
    Value fromLow =
        mirror(arith::SubFOp::create(b, loc, f64(lo()), x), lo(), hi());
    Value fromHigh =
        mirror(arith::SubFOp::create(b, loc, x, f64(hi())), hi(), lo());
    return arith::SelectOp::create(
        b, loc, below, fromLow,
        arith::SelectOp::create(b, loc, above, fromHigh, x));
  }

  /// A coordinate moved inside the borders by the padding mode.
  Value pad(Value v) {
    if (padding == "border")
      return arith::MaximumFOp::create(
          b, loc, arith::MinimumFOp::create(b, loc, v, f64(size - 1)), f64(0));
    if (padding == "reflection")
      return reflect(v);
    return v;
  }

  /// The index neighbour `i` (an f64 holding an integer) reads, and whether
  /// it reads the image at all ("zeros" outside).
  std::pair<Value, Value> index(Value i) {
    Value valid = arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
    if (padding == "reflection")
      i = reflect(i);
    Value clamped = arith::MaximumFOp::create(
        b, loc, arith::MinimumFOp::create(b, loc, i, f64(size - 1)), f64(0));
    if (padding == "zeros")
      valid =
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, i, clamped);
    Value asIndex = arith::IndexCastOp::create(
        b, loc, b.getIndexType(),
        arith::FPToSIOp::create(b, loc, b.getI64Type(), clamped));
    return {asIndex, valid};
  }

private:
  OpBuilder &b;
  Location loc;
  int64_t size;
  bool alignCorners;
  StringRef padding;
};

/// Keys' cubic convolution weight (a = -0.75) of neighbour `tap` (0..3,
/// at floor - 1 .. floor + 2) for the fraction `t`.
Value cubicWeight(OpBuilder &b, Location loc, Value t, int64_t tap) {
  auto c = [&](double v) { return scalarConstant(b, loc, b.getF64Type(), v); };
  const double a = -0.75;
  // Distance from the neighbour: 1 + t, t, 1 - t, 2 - t.
  Value d = tap == 0   ? arith::AddFOp::create(b, loc, t, c(1)).getResult()
            : tap == 1 ? t
            : tap == 2 ? arith::SubFOp::create(b, loc, c(1), t).getResult()
                       : arith::SubFOp::create(b, loc, c(2), t).getResult();
  auto mul = [&](Value x, Value y) -> Value {
    return arith::MulFOp::create(b, loc, x, y);
  };
  auto add = [&](Value x, Value y) -> Value {
    return arith::AddFOp::create(b, loc, x, y);
  };
  if (tap == 1 || tap == 2) // ((a + 2) d - (a + 3)) d^2 + 1
    return add(mul(add(mul(c(a + 2), d), c(-(a + 3))), mul(d, d)), c(1));
  // ((a d - 5 a) d + 8 a) d - 4 a
  return add(mul(add(mul(add(mul(c(a), d), c(-5 * a)), d), c(8 * a)), d),
             c(-4 * a));
}

/// Samples [N, C, S_1..S_k] (k = 2 or 3) at the grid's [N, O_1..O_k, k]
/// normalized positions, (x, y) or (x, y, z): a generic over (n, c, o_1..
/// o_k, tap_1..tap_k) with 1, 2 or 4 taps per axis (nearest, linear,
/// bicubic) that reads the grid and the image with tensor.extract and sums
/// weighted neighbours.
class GridSampleLowering : public LoomLowering<GridSampleOp> {
public:
  using LoomLowering::LoomLowering;
  LogicalResult
  matchAndRewrite(GridSampleOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = resultType(op);
    if (!type || (type.getRank() != 4 && type.getRank() != 5) ||
        !isa<FloatType>(type.getElementType()))
      return failure();
    int64_t k = type.getRank() - 2;
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value input = adaptor.getInput(), grid = adaptor.getGrid();
    auto inputShape = cast<RankedTensorType>(input.getType()).getShape();
    StringRef mode = op.getMode(), padding = op.getPaddingMode();
    bool alignCorners = op.getAlignCorners();
    int64_t taps = mode == "nearest" ? 1 : mode == "bicubic" ? 4 : 2;
    Type element = type.getElementType();
    // Loop dims: n, c, the k output positions, then the k taps.
    int64_t loops = 2 + 2 * k;
    auto tapDim = [&](int64_t axis) { return 2 + k + axis; };
    Value window = tensor::EmptyOp::create(
        rewriter, loc, SmallVector<int64_t>(k, taps), element);
    SmallVector<AffineExpr> windowExprs, outputExprs;
    for (int64_t axis = 0; axis < k; ++axis)
      windowExprs.push_back(getAffineDimExpr(tapDim(axis), ctx));
    for (int64_t d = 0; d < 2 + k; ++d)
      outputExprs.push_back(getAffineDimExpr(d, ctx));
    SmallVector<AffineMap> maps{AffineMap::get(loops, 0, windowExprs, ctx),
                                AffineMap::get(loops, 0, outputExprs, ctx)};
    SmallVector<utils::IteratorType> iterators(2 + k,
                                               utils::IteratorType::parallel);
    iterators.append(k, utils::IteratorType::reduction);
    Value result =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{type}, ValueRange{window},
            ValueRange{zeroFilled(rewriter, loc, type)}, maps, iterators,
            [&](B &b, L loc, V args) {
              Value n = linalg::IndexOp::create(b, loc, 0);
              Value ch = linalg::IndexOp::create(b, loc, 1);
              SmallVector<Value> gridIndices = {n};
              for (int64_t axis = 0; axis < k; ++axis)
                gridIndices.push_back(
                    linalg::IndexOp::create(b, loc, 2 + axis));
              gridIndices.push_back(Value());
              SmallVector<Value> imageIndices = {n, ch};
              Value weight, valid;
              for (int64_t axis = 0; axis < k; ++axis) {
                GridAxisBuilder ab(b, loc, inputShape[2 + axis], alignCorners,
                                   padding);
                // Spatial axis `axis` is component k - 1 - axis of the
                // grid's last dimension: (x, y, z) run from the innermost.
                gridIndices.back() =
                    arith::ConstantIndexOp::create(b, loc, k - 1 - axis);
                Value p = ab.denormalize(castScalar(
                    b, loc,
                    tensor::ExtractOp::create(b, loc, grid, gridIndices),
                    b.getF64Type()));
                Value position, axisWeight;
                if (mode == "nearest") {
                  // The padded position is truncated to an integer first.
                  position = math::TruncOp::create(
                      b, loc, ab.pad(math::RoundEvenOp::create(b, loc, p)));
                  axisWeight = ab.f64(1);
                } else {
                  p = ab.pad(p);
                  Value floor = math::FloorOp::create(b, loc, p);
                  Value t = arith::SubFOp::create(b, loc, p, floor);
                  // Tap j reads floor + j (- 1 for bicubic).
                  Value j = linalg::IndexOp::create(b, loc, tapDim(axis));
                  Value offset = arith::SIToFPOp::create(
                      b, loc, b.getF64Type(),
                      arith::IndexCastOp::create(b, loc, b.getI64Type(), j));
                  if (taps == 4)
                    offset = arith::SubFOp::create(b, loc, offset, ab.f64(1));
                  position = arith::AddFOp::create(b, loc, floor, offset);
                  // The weight of this tap, selected among the taps.
                  axisWeight = taps == 4 ? cubicWeight(b, loc, t, 3) : t;
                  for (int64_t tap = taps - 2; tap >= 0; --tap) {
                    Value wt = taps == 4
                                   ? cubicWeight(b, loc, t, tap)
                                   : arith::SubFOp::create(b, loc, ab.f64(1), t)
                                         .getResult();
                    Value here = arith::CmpIOp::create(
                        b, loc, arith::CmpIPredicate::eq, j,
                        arith::ConstantIndexOp::create(b, loc, tap));
                    axisWeight =
                        arith::SelectOp::create(b, loc, here, wt, axisWeight);
                  }
                }
                auto [index, inside] = ab.index(position);
                imageIndices.push_back(index);
                weight = weight
                             ? arith::MulFOp::create(b, loc, weight, axisWeight)
                                   .getResult()
                             : axisWeight;
                valid = valid ? arith::AndIOp::create(b, loc, valid, inside)
                                    .getResult()
                              : inside;
              }
              Value x = castScalar(
                  b, loc,
                  tensor::ExtractOp::create(b, loc, input, imageIndices),
                  b.getF64Type());
              Value zero = scalarConstant(b, loc, b.getF64Type(), 0);
              Value term = arith::SelectOp::create(
                  b, loc, valid, arith::MulFOp::create(b, loc, weight, x),
                  zero);
              Value sum = arith::AddFOp::create(
                  b, loc, castScalar(b, loc, args[1], b.getF64Type()), term);
              linalg::YieldOp::create(b, loc, castScalar(b, loc, sum, element));
            })
            .getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateLoomGridSampleToLinalgPatterns(const TypeConverter &converter,
                                            RewritePatternSet &patterns) {
  patterns.add<GridSampleLowering>(converter, patterns.getContext());
}

} // namespace loom
