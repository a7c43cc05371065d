//===- NormalizationToLinalg.cpp - Layer, instance, RMS and batch norms ---===//
//
// Normalizations are decomposed into reduction and elementwise generics:
// the statistics kept as size-1 dimensions, then one generic applies them
// with the scale and bias.
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

/// (x - mean) * rsqrt(var + eps) with statistics over `axes`, kept as
/// size-1 dimensions; `affine` then applies scale and bias.
Value normalize(B &b, L loc, Value x, ArrayRef<int64_t> axes, double epsilon,
                ValueRange params, ScalarBody affine) {
  auto type = cast<RankedTensorType>(x.getType());
  Value mean = buildMean(b, loc, x, axes, /*keepdims=*/true);
  Value squares = buildElementwise(
      b, loc, type, ValueRange{x, mean}, [](B &b, L loc, V v) -> Value {
        Value d = arith::SubFOp::create(b, loc, v[0], v[1]);
        return arith::MulFOp::create(b, loc, d, d);
      });
  Value variance = buildMean(b, loc, squares, axes, /*keepdims=*/true);
  SmallVector<Value> inputs{x, mean, variance};
  inputs.append(params.begin(), params.end());
  return buildElementwise(b, loc, type, inputs, [&](B &b, L loc, V v) -> Value {
    Value eps = scalarConstant(b, loc, v[0].getType(), epsilon);
    Value centered = arith::SubFOp::create(b, loc, v[0], v[1]);
    Value inv =
        math::RsqrtOp::create(b, loc, arith::AddFOp::create(b, loc, v[2], eps));
    Value normalized = arith::MulFOp::create(b, loc, centered, inv);
    SmallVector<Value> operands{normalized};
    operands.append(v.begin() + 3, v.end());
    return affine(b, loc, operands);
  });
}

/// v[0] * v[1] + v[2] (the bias is optional).
Value scaleAndShift(B &b, L loc, V v) {
  Value scaled = arith::MulFOp::create(b, loc, v[0], v[1]);
  if (v.size() < 3)
    return scaled;
  return arith::AddFOp::create(b, loc, scaled, v[2]);
}

class LayerNormLowering : public ResultTypedLowering<LayerNormOp> {
public:
  using ResultTypedLowering::ResultTypedLowering;
  LogicalResult lower(LayerNormOp op, OpAdaptor adaptor, RankedTensorType type,
                      ConversionPatternRewriter &rewriter) const override {
    SmallVector<Value> params{adaptor.getScale()};
    if (adaptor.getBias())
      params.push_back(adaptor.getBias());
    int64_t rank = type.getRank();
    rewriter.replaceOp(op,
                       normalize(rewriter, op.getLoc(), adaptor.getInput(),
                                 axesFrom(axisIndex(op.getAxis(), rank), rank),
                                 op.getEpsilon().convertToDouble(), params,
                                 scaleAndShift));
    return success();
  }
};

class InstanceNormLowering : public ResultTypedLowering<InstanceNormOp> {
public:
  using ResultTypedLowering::ResultTypedLowering;
  LogicalResult lower(InstanceNormOp op, OpAdaptor adaptor,
                      RankedTensorType type,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t rank = type.getRank();
    SmallVector<Value> params{
        channelVector(rewriter, loc, adaptor.getScale(), rank - 2),
        channelVector(rewriter, loc, adaptor.getBias(), rank - 2)};
    rewriter.replaceOp(op, normalize(rewriter, loc, adaptor.getInput(),
                                     axesFrom(2, rank),
                                     op.getEpsilon().convertToDouble(), params,
                                     scaleAndShift));
    return success();
  }
};

class RMSNormLowering : public ResultTypedLowering<RMSNormOp> {
public:
  using ResultTypedLowering::ResultTypedLowering;
  LogicalResult lower(RMSNormOp op, OpAdaptor adaptor, RankedTensorType type,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    Value squares = buildElementwise(
        rewriter, loc, type, ValueRange{x}, [](B &b, L loc, V v) -> Value {
          return arith::MulFOp::create(b, loc, v[0], v[0]);
        });
    int64_t rank = type.getRank();
    Value meanSquare = buildMean(rewriter, loc, squares,
                                 axesFrom(axisIndex(op.getAxis(), rank), rank),
                                 /*keepdims=*/true);
    double epsilon = op.getEpsilon().convertToDouble();
    rewriter.replaceOp(
        op,
        buildElementwise(
            rewriter, loc, type, ValueRange{x, meanSquare, adaptor.getScale()},
            [&](B &b, L loc, V v) -> Value {
              Value eps = scalarConstant(b, loc, v[0].getType(), epsilon);
              Value inv = math::RsqrtOp::create(
                  b, loc, arith::AddFOp::create(b, loc, v[1], eps));
              return arith::MulFOp::create(
                  b, loc, arith::MulFOp::create(b, loc, v[0], inv), v[2]);
            }));
    return success();
  }
};

class BatchNormLowering : public ResultTypedLowering<BatchNormOp> {
public:
  using ResultTypedLowering::ResultTypedLowering;
  LogicalResult lower(BatchNormOp op, OpAdaptor adaptor, RankedTensorType type,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t trailing = type.getRank() - 2;
    SmallVector<Value> inputs{adaptor.getInput()};
    for (Value v : {adaptor.getScale(), adaptor.getBias(), adaptor.getMean(),
                    adaptor.getVariance()})
      inputs.push_back(channelVector(rewriter, loc, v, trailing));
    double epsilon = op.getEpsilon().convertToDouble();
    rewriter.replaceOp(
        op, buildElementwise(
                rewriter, loc, type, inputs, [&](B &b, L loc, V v) -> Value {
                  Type t = v[0].getType();
                  Value eps = scalarConstant(b, loc, t, epsilon);
                  Value inv = math::RsqrtOp::create(
                      b, loc,
                      arith::AddFOp::create(b, loc, castScalar(b, loc, v[4], t),
                                            eps));
                  Value centered = arith::SubFOp::create(
                      b, loc, v[0], castScalar(b, loc, v[3], t));
                  Value scaled = arith::MulFOp::create(
                      b, loc, arith::MulFOp::create(b, loc, centered, inv),
                      castScalar(b, loc, v[1], t));
                  return arith::AddFOp::create(b, loc, scaled,
                                               castScalar(b, loc, v[2], t));
                }));
    return success();
  }
};

} // namespace

void populateLoomNormalizationToLinalgPatterns(const TypeConverter &converter,
                                               RewritePatternSet &patterns) {
  patterns.add<LayerNormLowering, InstanceNormLowering, RMSNormLowering,
               BatchNormLowering>(converter, patterns.getContext());
}

} // namespace loom
