//===- AttentionToLinalg.cpp - Attention ----------------------------------===//
//
// loom.attention with enough scores, or sizes known only at run time,
// runs in tiles with an online softmax (flash attention,
// AttentionTilesToLinalg.cpp) and never materializes its scores;
// otherwise it is decomposed into matrix products, a softmax and
// elementwise generics.
//
//===----------------------------------------------------------------------===//

#include "loom/Conversion/LoomToLinalg/LoomToLinalg.h"

#include "Attention.h"
#include "Utils.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>

using namespace mlir;
using namespace loom::lowering;

Value loom::lowering::maskByPosition(OpBuilder &b, Location loc, AttentionOp op,
                                     Value row, Value col, Value positionOffset,
                                     Value score, Value minusInf) {
  Value position = arith::AddIOp::create(b, loc, row, positionOffset);
  auto maskBeyond = [&](int64_t reach, bool before) {
    Value frontier =
        reach == 0 ? position
                   : arith::AddIOp::create(b, loc, position,
                                           arith::ConstantIndexOp::create(
                                               b, loc, before ? -reach : reach))
                         .getResult();
    Value outside = arith::CmpIOp::create(
        b, loc, before ? arith::CmpIPredicate::slt : arith::CmpIPredicate::sgt,
        col, frontier);
    score = arith::SelectOp::create(b, loc, outside, minusInf, score);
  };
  if (op.getIsCausal())
    maskBeyond(0, /*before=*/false);
  else if (op.rightWindowSize() >= 0)
    maskBeyond(op.rightWindowSize(), /*before=*/false);
  if (op.leftWindowSize() >= 0)
    maskBeyond(op.leftWindowSize(), /*before=*/true);
  return score;
}

namespace loom {
namespace {

/// Keys and values whose batch known only at run time differs from the
/// queries', or whose lengths differ from each other, are reported; the
/// code goes on with zeros of the queries' batch and the keys' length in
/// their place (where their types leave those sizes to run time), so that
/// no read reaches past them.
static void checkKeyValueSizes(OpBuilder &b, Location loc, Operation *op,
                               Value q, Value &k, Value &v) {
  auto isDynamic = [](Value x, int64_t d) {
    return cast<RankedTensorType>(x.getType()).isDynamicDim(d);
  };
  if (!isDynamic(q, 0) && !isDynamic(k, 0) && !isDynamic(v, 0) &&
      !isDynamic(k, 2) && !isDynamic(v, 2))
    return;
  auto size = [&](Value x, int64_t d) -> Value {
    return tensor::DimOp::create(b, loc, x, d);
  };
  Value batch = size(q, 0), length = size(k, 2);
  auto differs = [&](Value x, Value y) -> Value {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, x, y);
  };
  Value bad = arith::OrIOp::create(
      b, loc,
      arith::OrIOp::create(b, loc, differs(batch, size(k, 0)),
                           differs(batch, size(v, 0))),
      differs(length, size(v, 2)));
  checkCondition(b, loc, op, bad,
                 "the keys' or values' batch differs from the queries', or "
                 "the keys' and values' lengths differ");
  auto orZeros = [&](Value x) -> Value {
    auto type = cast<RankedTensorType>(x.getType());
    if (!type.isDynamicDim(0) || !type.isDynamicDim(2))
      return x;
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (type.isDynamicDim(d))
        sizes.push_back(d == 0 ? batch : d == 2 ? length : size(x, d));
    return zerosWhere(b, loc, bad, x, sizes);
  };
  k = orZeros(k);
  v = orZeros(v);
}

/// softmax(Q K^T * scale + mask) V as two batched contractions around a
/// masked softmax; grouped-query heads index K and V with h floordiv group.
/// 16-bit floats are accumulated, and the softmax computed, in f32; the
/// result is rounded to the element type once.
class AttentionLowering : public LoomLowering<AttentionOp> {
public:
  using LoomLowering::LoomLowering;
  LogicalResult
  matchAndRewrite(AttentionOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = resultType(op);
    if (!type || type.getRank() != 4)
      return failure();
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value q = adaptor.getQuery(), k = adaptor.getKey(), v = adaptor.getValue();
    auto qShape = cast<RankedTensorType>(q.getType()).getShape();
    auto kShape = cast<RankedTensorType>(k.getType()).getShape();
    int64_t batch = qShape[0], heads = qShape[1], s = qShape[2], d = qShape[3];
    int64_t t = kShape[2];
    // Batch and sequence lengths may be known only at run time; heads and
    // the head size are what the maps and the scale are built from.
    if (ShapedType::isDynamic(heads) || ShapedType::isDynamic(kShape[1]) ||
        (ShapedType::isDynamic(d) && !op.getScale()))
      return rewriter.notifyMatchFailure(op, "heads known only at run time");
    int64_t group = heads / kShape[1];
    checkKeyValueSizes(rewriter, loc, op, q, k, v);
    // The sizes of a [batch, heads, rows, cols] result whose rows are
    // `rows`'s dimension 2 and columns `cols`'s dimension `colDim`.
    auto sizesOf = [&](RankedTensorType resultType, Value rows, Value cols,
                       int64_t colDim) {
      SmallVector<Value> sizes;
      if (resultType.isDynamicDim(0))
        sizes.push_back(tensor::DimOp::create(rewriter, loc, q, 0));
      if (resultType.isDynamicDim(2))
        sizes.push_back(tensor::DimOp::create(rewriter, loc, rows, 2));
      if (resultType.isDynamicDim(3))
        sizes.push_back(tensor::DimOp::create(rewriter, loc, cols, colDim));
      return sizes;
    };
    Type resultElement = type.getElementType();
    Type element = resultElement.getIntOrFloatBitWidth() < 32
                       ? Type(rewriter.getF32Type())
                       : resultElement;
    auto dim = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
    AffineExpr kvHead = group == 1 ? dim(1) : dim(1).floorDiv(group);
    SmallVector<utils::IteratorType> iterators(4,
                                               utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    auto contract = [&](Value lhs, Value rhs, RankedTensorType resultType,
                        ArrayRef<AffineExpr> lhsExprs,
                        ArrayRef<AffineExpr> rhsExprs, ValueRange sizes) {
      SmallVector<AffineMap> maps{
          AffineMap::get(5, 0, lhsExprs, ctx),
          AffineMap::get(5, 0, rhsExprs, ctx),
          AffineMap::get(5, 0, {dim(0), dim(1), dim(2), dim(3)}, ctx)};
      return linalg::GenericOp::create(
                 rewriter, loc, TypeRange{resultType}, ValueRange{lhs, rhs},
                 ValueRange{zeroFilled(rewriter, loc, resultType, sizes)}, maps,
                 iterators,
                 [](B &b, L loc, V args) {
                   linalg::YieldOp::create(
                       b, loc,
                       multiplyAccumulate(b, loc, args[0], args[1], args[2]));
                 })
          .getResult(0);
    };
    double scale = op.getScale() ? op.getScale()->convertToDouble()
                                 : 1.0 / std::sqrt(static_cast<double>(d));
    // Attention never materializes its scores when they would be large,
    // or when their size is known only at run time.
    Value mask = adaptor.getMask();
    auto isStatic = [](Value value) {
      return cast<RankedTensorType>(value.getType()).hasStaticShape();
    };
    bool staticShapes =
        isStatic(q) && isStatic(k) && isStatic(v) && (!mask || isStatic(mask));
    int64_t dv = cast<RankedTensorType>(v.getType()).getDimSize(3);
    bool tileable = !ShapedType::isDynamic(d) && !ShapedType::isDynamic(dv) &&
                    attentionFitsTiles(mask, group, {batch, heads, s, t});
    if (tileable && (!staticShapes ||
                     batch * heads * s * t >= kTiledAttentionScoreElements)) {
      rewriter.replaceOp(op, lowerAttentionInTiles(rewriter, loc, op, q, k, v,
                                                   mask, type, element, scale));
      return success();
    }
    // scores[b, h, s, t] = sum_d q[b, h, s, d] * k[b, h/g, t, d], taken as
    // a batched product with K transposed ([B, Hkv, D, T], contiguous
    // along the scores' columns) and, with grouped query heads, the g
    // heads sharing a key head stacked as rows ([B, Hkv, g*S, D]): both
    // products are then plain batched matrix products, which the CPU
    // target register-tiles (with K read along D they were loops at a
    // few GFLOP/s). Stacking needs S known at compile time.
    auto scoreType = RankedTensorType::get({batch, heads, s, t}, element);
    bool stackHeads =
        group > 1 && !ShapedType::isDynamic(s) && !type.isDynamicDim(3);
    int64_t kvHeads = kShape[1];
    Value keysT;
    {
      SmallVector<Value> sizes;
      if (ShapedType::isDynamic(batch))
        sizes.push_back(tensor::DimOp::create(rewriter, loc, k, 0));
      if (ShapedType::isDynamic(d))
        sizes.push_back(tensor::DimOp::create(rewriter, loc, k, 3));
      if (ShapedType::isDynamic(t))
        sizes.push_back(tensor::DimOp::create(rewriter, loc, k, 2));
      auto kType = cast<RankedTensorType>(k.getType());
      Value init = tensor::EmptyOp::create(
          rewriter, loc,
          RankedTensorType::get({batch, kvHeads, d, t}, kType.getElementType()),
          sizes);
      keysT = linalg::TransposeOp::create(rewriter, loc, k, init,
                                          ArrayRef<int64_t>{0, 1, 3, 2})
                  .getResult()[0];
    }
    // [B, H, R, C] <-> [B, Hkv, g*R, C] (R static).
    auto stacked = [&](Value x) {
      auto xType = cast<RankedTensorType>(x.getType());
      ArrayRef<int64_t> shape = xType.getShape();
      auto split =
          RankedTensorType::get({shape[0], kvHeads, group, shape[2], shape[3]},
                                xType.getElementType());
      Value five = tensor::ExpandShapeOp::create(
          rewriter, loc, split, x,
          SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});
      return tensor::CollapseShapeOp::create(
                 rewriter, loc, five,
                 SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}, {4}})
          .getResult();
    };
    auto unstacked = [&](Value x, int64_t rows) {
      auto xType = cast<RankedTensorType>(x.getType());
      ArrayRef<int64_t> shape = xType.getShape();
      auto split = RankedTensorType::get(
          {shape[0], kvHeads, group, rows, shape[3]}, xType.getElementType());
      Value five = tensor::ExpandShapeOp::create(
          rewriter, loc, split, x,
          SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}, {4}});
      return tensor::CollapseShapeOp::create(
                 rewriter, loc, five,
                 SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}})
          .getResult();
    };
    Value scores;
    if (stackHeads) {
      auto stackedType =
          RankedTensorType::get({batch, kvHeads, group * s, t}, element);
      SmallVector<Value> sizes;
      if (ShapedType::isDynamic(batch))
        sizes.push_back(tensor::DimOp::create(rewriter, loc, q, 0));
      if (ShapedType::isDynamic(t))
        sizes.push_back(tensor::DimOp::create(rewriter, loc, k, 2));
      scores = unstacked(contract(stacked(q), keysT, stackedType,
                                  {dim(0), dim(1), dim(2), dim(4)},
                                  {dim(0), dim(1), dim(4), dim(3)}, sizes),
                         s);
    } else {
      scores = contract(q, keysT, scoreType, {dim(0), dim(1), dim(2), dim(4)},
                        {dim(0), kvHead, dim(4), dim(3)},
                        sizesOf(scoreType, q, k, 2));
    }
    bool positional = op.hasPositionalMask();
    SmallVector<Value> maskInputs{scores};
    if (adaptor.getMask())
      maskInputs.push_back(adaptor.getMask());
    // A mask with sizes known only at run time broadcasts against the
    // scores there (checked, stretched when it is 1).
    SmallVector<Value> scoreSizes;
    if (!scoreType.hasStaticShape())
      scoreSizes = alignRunTimeSizes(rewriter, loc, op, scoreType, maskInputs);
    // Query row i stands at key position i + offset: t - s aligned to the
    // end, 0 to the start.
    Value offset;
    if (positional)
      offset = op.getStartAligned()
                   ? Value(arith::ConstantIndexOp::create(rewriter, loc, 0))
                   : Value(arith::SubIOp::create(
                         rewriter, loc, indexDim(rewriter, loc, k, 2),
                         indexDim(rewriter, loc, q, 2)));
    scores = buildElementwise(
        rewriter, loc, scoreType, maskInputs,
        [&](B &b, L loc, V x) -> Value {
          Value score = arith::MulFOp::create(
              b, loc, x[0], scalarConstant(b, loc, element, scale));
          Value minusInf = extremeValue(b, loc, element, /*lowest=*/true);
          if (x.size() > 1) {
            if (x[1].getType().isInteger(1))
              score = arith::SelectOp::create(b, loc, x[1], score, minusInf);
            else
              score = arith::AddFOp::create(b, loc, score,
                                            castScalar(b, loc, x[1], element));
          }
          if (positional)
            score = maskByPosition(
                b, loc, op, linalg::IndexOp::create(b, loc, 2),
                linalg::IndexOp::create(b, loc, 3), offset, score, minusInf);
          return score;
        },
        scoreSizes);
    // A row with every key masked gives zeros, not softmax's 0 / 0 (also
    // causal rows before the first key when S > T, and rows whose window
    // holds no key).
    bool rowsBeforeFirstKey =
        (op.getIsCausal() &&
         (ShapedType::isDynamic(s) || ShapedType::isDynamic(t) || t < s)) ||
        op.leftWindowSize() >= 0 || op.rightWindowSize() >= 0;
    Value probabilities =
        buildSoftmax(rewriter, loc, scores, 3, /*logarithm=*/false,
                     /*zeroEmptyRows=*/adaptor.getMask() || rowsBeforeFirstKey);
    // out[b, h, s, e] = sum_t p[b, h, s, t] * v[b, h/g, t, e]
    auto accumulatedType = RankedTensorType::get(type.getShape(), element);
    SmallVector<Value> outSizes = sizesOf(type, q, v, 3);
    Value out;
    if (stackHeads) {
      int64_t dv = type.getDimSize(3);
      auto stackedType =
          RankedTensorType::get({batch, kvHeads, group * s, dv}, element);
      SmallVector<Value> sizes;
      if (ShapedType::isDynamic(batch))
        sizes.push_back(tensor::DimOp::create(rewriter, loc, q, 0));
      out = unstacked(contract(stacked(probabilities), v, stackedType,
                               {dim(0), dim(1), dim(2), dim(4)},
                               {dim(0), dim(1), dim(4), dim(3)}, sizes),
                      s);
    } else {
      out = contract(probabilities, v, accumulatedType,
                     {dim(0), dim(1), dim(2), dim(4)},
                     {dim(0), kvHead, dim(4), dim(3)}, outSizes);
    }
    if (element != resultElement)
      out = buildElementwise(
          rewriter, loc, type, ValueRange{out},
          [&](B &b, L loc, V x) -> Value {
            return castScalar(b, loc, x[0], resultElement);
          },
          outSizes);
    rewriter.replaceOp(op, out);
    return success();
  }
};

} // namespace

void populateLoomAttentionToLinalgPatterns(const TypeConverter &converter,
                                           RewritePatternSet &patterns) {
  patterns.add<AttentionLowering>(converter, patterns.getContext());
}

} // namespace loom
