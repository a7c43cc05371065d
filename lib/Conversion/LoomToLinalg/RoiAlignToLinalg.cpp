//===- RoiAlignToLinalg.cpp - RoI Align -----------------------------------===//
//
// loom.roi_align becomes one generic over the pooled result whose body
// walks each bin's sampling grid with an scf.for nest.
//
//===----------------------------------------------------------------------===//

#include "loom/Conversion/LoomToLinalg/LoomToLinalg.h"

#include "Utils.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace loom::lowering;

namespace loom {
namespace {

/// Pools each box of `rois` into [output_height, output_width] bins: one
/// generic over the result [R, C, Ho, Wo] whose body reads the box and its
/// batch index with tensor.extract and walks the bin's sampling grid with
/// an scf.for nest (bounds from the box when sampling_ratio is 0), reading
/// the four bilinear neighbours at clamped positions. The arithmetic is the
/// reference executor's (roiAlignKernel), in f64 and in its order; a sample
/// outside the map has zero weights on pixel (0, 0), as there.
class RoiAlignLowering : public LoomLowering<RoiAlignOp> {
public:
  using LoomLowering::LoomLowering;
  LogicalResult
  matchAndRewrite(RoiAlignOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = resultType(op);
    if (!type || type.getRank() != 4 || !isa<FloatType>(type.getElementType()))
      return failure();
    Value input = adaptor.getInput(), rois = adaptor.getRois(),
          batchIndices = adaptor.getBatchIndices();
    auto inputShape = cast<RankedTensorType>(input.getType()).getShape();
    if (inputShape.size() != 4)
      return failure();
    int64_t n = inputShape[0], h = inputShape[2], w = inputShape[3];
    // Batch indices count from 0 only; the body clamps them as well.
    checkIndices(rewriter, op.getLoc(), op, batchIndices, {n},
                 /*fromEnd=*/false);
    bool isMax = op.getMode() == "max";
    bool halfPixel = op.getCoordinateTransformationMode() == "half_pixel";
    int64_t pooledH = type.getDimSize(2), pooledW = type.getDimSize(3);
    int64_t samplingRatio = op.getSamplingRatio();
    // The attribute is f32; the reference widens it to double.
    auto scaleAttr = op->getAttrOfType<FloatAttr>("spatial_scale");
    double spatialScale = scaleAttr ? scaleAttr.getValueAsDouble() : 1.0;
    double offset = halfPixel ? 0.5 : 0.0;
    Type element = type.getElementType();
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value init =
        tensor::EmptyOp::create(rewriter, loc, type.getShape(), element);
    SmallVector<AffineMap> maps{AffineMap::getMultiDimIdentityMap(4, ctx)};
    SmallVector<utils::IteratorType> iterators(4,
                                               utils::IteratorType::parallel);
    Value result =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{type}, ValueRange{}, ValueRange{init},
            maps, iterators,
            [&](B &b, L loc, V) {
              Type f64 = b.getF64Type(), i64 = b.getI64Type();
              Type indexType = b.getIndexType();
              auto c = [&](double v) { return scalarConstant(b, loc, f64, v); };
              auto ci = [&](int64_t v) -> Value {
                return arith::ConstantIndexOp::create(b, loc, v);
              };
              auto ci64 = [&](int64_t v) -> Value {
                return arith::ConstantIntOp::create(b, loc, i64, v);
              };
              FloatArith f(b, loc);
              // std::max(x, y) = x < y ? y : x.
              auto stdMax = [&](Value x, Value y) -> Value {
                return f.select(f.lt(x, y), y, x);
              };
              auto indexToF64 = [&](Value i) -> Value {
                return arith::SIToFPOp::create(
                    b, loc, f64, arith::IndexCastOp::create(b, loc, i64, i));
              };
              Value r = linalg::IndexOp::create(b, loc, 0);
              Value ch = linalg::IndexOp::create(b, loc, 1);
              Value ph = linalg::IndexOp::create(b, loc, 2);
              Value pw = linalg::IndexOp::create(b, loc, 3);
              // The batch index, kept inside the input (the reference
              // rejects others).
              Value batch = tensor::ExtractOp::create(b, loc, batchIndices,
                                                      ValueRange{r});
              batch = arith::MinSIOp::create(
                  b, loc, arith::MaxSIOp::create(b, loc, batch, ci64(0)),
                  ci64(n - 1));
              batch = arith::IndexCastOp::create(b, loc, indexType, batch);
              auto coordinate = [&](int64_t k) -> Value {
                Value v = castScalar(b, loc,
                                     tensor::ExtractOp::create(
                                         b, loc, rois, ValueRange{r, ci(k)}),
                                     f64);
                return f.sub(f.mul(v, c(spatialScale)), c(offset));
              };
              Value startW = coordinate(0), startH = coordinate(1);
              Value endW = coordinate(2), endH = coordinate(3);
              Value roiW = f.sub(endW, startW), roiH = f.sub(endH, startH);
              if (!halfPixel) {
                roiW = stdMax(roiW, c(1));
                roiH = stdMax(roiH, c(1));
              }
              Value binH = f.div(roiH, c(static_cast<double>(pooledH)));
              Value binW = f.div(roiW, c(static_cast<double>(pooledW)));
              // Samples per bin along an axis from the box's size, as i64
              // (sampling_ratio 0).
              auto gridSize = [&](Value roiSize, int64_t pooled) -> Value {
                if (samplingRatio > 0)
                  return Value();
                Value g = arith::FPToSIOp::create(
                    b, loc, i64,
                    math::CeilOp::create(
                        b, loc,
                        f.div(roiSize, c(static_cast<double>(pooled)))));
                return arith::MaxSIOp::create(b, loc, g, ci64(0));
              };
              Value gridH = gridSize(roiH, pooledH);
              Value gridW = gridSize(roiW, pooledW);
              Value gridHF, gridWF, count, gridHI, gridWI;
              if (samplingRatio > 0) {
                // Static bounds.
                gridHF = gridWF = c(static_cast<double>(samplingRatio));
                count = c(static_cast<double>(samplingRatio * samplingRatio));
                gridHI = gridWI = ci(samplingRatio);
              } else {
                gridHF = arith::SIToFPOp::create(b, loc, f64, gridH);
                gridWF = arith::SIToFPOp::create(b, loc, f64, gridW);
                count = arith::SIToFPOp::create(
                    b, loc, f64,
                    arith::MaxSIOp::create(
                        b, loc, arith::MulIOp::create(b, loc, gridH, gridW),
                        ci64(1)));
                gridHI = arith::IndexCastOp::create(b, loc, indexType, gridH);
                gridWI = arith::IndexCastOp::create(b, loc, indexType, gridW);
              }
              Value yBase = f.add(startH, f.mul(indexToF64(ph), binH));
              Value xBase = f.add(startW, f.mul(indexToF64(pw), binW));
              // One axis of a sample: the low and high neighbours and the
              // low fraction, clamped as the reference clamps.
              struct Axis {
                Value low, high, l;
              };
              auto axis = [&](Value v, int64_t size) -> Axis {
                Value s = f.select(f.lt(v, c(0)), c(0), v);
                Value low = arith::FPToSIOp::create(b, loc, i64, s);
                Value atEnd = arith::CmpIOp::create(
                    b, loc, arith::CmpIPredicate::sge, low, ci64(size - 1));
                Value last = ci64(size - 1);
                Value high = f.select(
                    atEnd, last, arith::AddIOp::create(b, loc, low, ci64(1)));
                low = f.select(atEnd, last, low);
                s = f.select(atEnd, c(static_cast<double>(size - 1)), s);
                Value l = f.sub(s, arith::SIToFPOp::create(b, loc, f64, low));
                return {low, high, l};
              };
              Value zero = c(0);
              auto outer = scf::ForOp::create(
                  b, loc, ci(0), gridHI, ci(1), ValueRange{zero},
                  [&](OpBuilder &b, Location loc, Value iy, ValueRange acc) {
                    Value yy = f.add(
                        yBase, f.div(f.mul(f.add(indexToF64(iy), c(0.5)), binH),
                                     gridHF));
                    auto inner = scf::ForOp::create(
                        b, loc, ci(0), gridWI, ci(1), ValueRange{acc[0]},
                        [&](OpBuilder &b, Location loc, Value ix,
                            ValueRange acc) {
                          Value xx = f.add(
                              xBase,
                              f.div(f.mul(f.add(indexToF64(ix), c(0.5)), binW),
                                    gridWF));
                          // Inside [-1, H] x [-1, W] (NaN is outside).
                          auto inRange = [&](Value v, int64_t size) -> Value {
                            Value lo = arith::CmpFOp::create(
                                b, loc, arith::CmpFPredicate::OGE, v, c(-1));
                            Value hi = arith::CmpFOp::create(
                                b, loc, arith::CmpFPredicate::OLE, v,
                                c(static_cast<double>(size)));
                            return arith::AndIOp::create(b, loc, lo, hi);
                          };
                          Value valid = arith::AndIOp::create(
                              b, loc, inRange(yy, h), inRange(xx, w));
                          Value sy = f.select(valid, yy, zero);
                          Value sx = f.select(valid, xx, zero);
                          Axis ay = axis(sy, h), ax = axis(sx, w);
                          Value ly = ay.l, lx = ax.l;
                          Value hy = f.sub(c(1), ly), hx = f.sub(c(1), lx);
                          Value weights[4] = {f.mul(hy, hx), f.mul(hy, lx),
                                              f.mul(ly, hx), f.mul(ly, lx)};
                          Value rows[4] = {ay.low, ay.low, ay.high, ay.high};
                          Value cols[4] = {ax.low, ax.high, ax.low, ax.high};
                          Value products[4];
                          for (int corner = 0; corner < 4; ++corner) {
                            Value weight =
                                f.select(valid, weights[corner], zero);
                            Value row = arith::IndexCastOp::create(
                                b, loc, indexType,
                                f.select(valid, rows[corner], ci64(0)));
                            Value col = arith::IndexCastOp::create(
                                b, loc, indexType,
                                f.select(valid, cols[corner], ci64(0)));
                            Value x =
                                castScalar(b, loc,
                                           tensor::ExtractOp::create(
                                               b, loc, input,
                                               ValueRange{batch, ch, row, col}),
                                           f64);
                            products[corner] = f.mul(weight, x);
                          }
                          Value v = acc[0];
                          if (isMax) {
                            // The largest weighted corner, maximized over
                            // the samples from the first one on.
                            Value m = products[0];
                            for (int corner = 1; corner < 4; ++corner)
                              m = stdMax(m, products[corner]);
                            Value first = arith::AndIOp::create(
                                b, loc,
                                arith::CmpIOp::create(b, loc,
                                                      arith::CmpIPredicate::eq,
                                                      iy, ci(0)),
                                arith::CmpIOp::create(b, loc,
                                                      arith::CmpIPredicate::eq,
                                                      ix, ci(0)));
                            v = f.select(first, m, stdMax(v, m));
                          } else {
                            for (int corner = 0; corner < 4; ++corner)
                              v = f.add(v, products[corner]);
                          }
                          scf::YieldOp::create(b, loc, v);
                        });
                    scf::YieldOp::create(b, loc, inner.getResult(0));
                  });
              Value v = outer.getResult(0);
              if (!isMax)
                v = f.div(v, count);
              linalg::YieldOp::create(b, loc, castScalar(b, loc, v, element));
            })
            .getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateLoomRoiAlignToLinalgPatterns(const TypeConverter &converter,
                                          RewritePatternSet &patterns) {
  patterns.add<RoiAlignLowering>(converter, patterns.getContext());
}

} // namespace loom
