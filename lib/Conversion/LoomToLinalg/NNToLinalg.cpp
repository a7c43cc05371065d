//===- NNToLinalg.cpp - Contractions, convolutions, rotary, experts -------===//
//
// Matrix products become linalg.matmul when the right operand is a matrix
// (the case tiling and vectorization recipes target) and a batched
// linalg.generic otherwise; 2-D ungrouped convolutions become
// linalg.conv_2d_nchw_fchw, other convolutions a generic with window
// dimensions (pooling is in PoolingToLinalg.cpp, normalizations in
// NormalizationToLinalg.cpp, reductions, softmax, cumsum and top-k in
// ReductionsToLinalg.cpp).
//
//===----------------------------------------------------------------------===//

#include "loom/Conversion/LoomToLinalg/LoomToLinalg.h"

#include "Utils.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/Sharding/ExpertParallel.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/TypeUtilities.h"

#include <cmath>

using namespace mlir;
using namespace loom::lowering;

namespace loom {
namespace {

/// `result` [N, M, ...] plus a per-channel `bias` [M].
Value addChannelBias(B &b, L loc, Value result, Value bias) {
  auto type = cast<RankedTensorType>(result.getType());
  Type element = type.getElementType();
  return buildElementwise(
      b, loc, type,
      ValueRange{result, channelVector(b, loc, bias, type.getRank() - 2)},
      [&](B &b, L loc, V x) {
        return floatOrInt<arith::AddFOp, arith::AddIOp>(
            b, loc, x[0], castScalar(b, loc, x[1], element));
      });
}

/// The type a product of `type` accumulates in: f32 for 16-bit floats
/// (rounded once at the end, roundedTo), else `type` itself.
RankedTensorType accumulatorType(B &b, RankedTensorType type) {
  Type element = type.getElementType();
  return isa<FloatType>(element) && element.getIntOrFloatBitWidth() < 32
             ? type.clone(b.getF32Type())
             : type;
}

/// `accumulated` (of accumulatorType(type)) rounded to `type`.
Value roundedTo(B &b, L loc, Value accumulated, RankedTensorType type) {
  if (accumulated.getType() == type)
    return accumulated;
  Type element = type.getElementType();
  return buildElementwise(
      b, loc, type, ValueRange{accumulated},
      [&](B &b, L loc, V x) -> Value {
        return castScalar(b, loc, x[0], element);
      },
      sizesFrom(b, loc, type, ValueRange{accumulated}));
}

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

class MatMulLowering : public ResultTypedLowering<MatMulOp> {
public:
  using ResultTypedLowering::ResultTypedLowering;
  LogicalResult lower(MatMulOp op, OpAdaptor adaptor, RankedTensorType type,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value lhs = adaptor.getLhs(), rhs = adaptor.getRhs();
    auto lhsType = cast<RankedTensorType>(lhs.getType());
    auto rhsType = cast<RankedTensorType>(rhs.getType());
    if (!lhsType.hasStaticShape() || !rhsType.hasStaticShape())
      matchRunTimeSizes(rewriter, loc, op, lhs, rhs);
    // 16-bit floats accumulate in f32 and are rounded once at the end.
    RankedTensorType accumulated = accumulatorType(rewriter, type);
    Value product =
        lhsType.getRank() >= 2 && rhsType.getRank() == 2 &&
                !isColumn(rhsType, type)
            ? buildMatrixProduct(rewriter, loc, lhs, rhs, accumulated)
            : buildBatched(rewriter, loc, lhs, rhs, accumulated);
    rewriter.replaceOp(op, roundedTo(rewriter, loc, product, type));
    return success();
  }

private:
  /// The contracted size and the batch sizes that both operands have, one
  /// of them known only at run time, must agree: a difference is reported
  /// (broadcasting a run-time 1 in a matrix product is not supported) and
  /// both operands are cut to the smaller size there, so that the code,
  /// which goes on after the report, reads inside them.
  static void matchRunTimeSizes(B &b, L loc, MatMulOp op, Value &lhs,
                                Value &rhs) {
    auto lhsType = cast<RankedTensorType>(lhs.getType());
    auto rhsType = cast<RankedTensorType>(rhs.getType());
    int64_t lhsRank = lhsType.getRank(), rhsRank = rhsType.getRank();
    // Pairs of (lhs dimension, rhs dimension) that must be equal.
    SmallVector<std::pair<int64_t, int64_t>> pairs;
    pairs.emplace_back(lhsRank - 1, rhsRank >= 2 ? rhsRank - 2 : 0);
    int64_t lhsBatch = lhsRank - 2, rhsBatch = rhsRank - 2;
    for (int64_t i = 1; i <= std::min(lhsBatch, rhsBatch); ++i)
      pairs.emplace_back(lhsBatch - i, rhsBatch - i);
    SmallVector<OpFoldResult> lhsSizes, rhsSizes;
    for (int64_t d = 0; d < lhsRank; ++d)
      lhsSizes.push_back(tensor::getMixedSize(b, loc, lhs, d));
    for (int64_t d = 0; d < rhsRank; ++d)
      rhsSizes.push_back(tensor::getMixedSize(b, loc, rhs, d));
    bool cut = false;
    for (auto [l, r] : pairs) {
      if (!lhsType.isDynamicDim(l) && !rhsType.isDynamicDim(r))
        continue;
      // A static 1 broadcasts through the indexing maps.
      if (lhsType.getDimSize(l) == 1 || rhsType.getDimSize(r) == 1)
        continue;
      Value x = getValueOrCreateConstantIndexOp(b, loc, lhsSizes[l]);
      Value y = getValueOrCreateConstantIndexOp(b, loc, rhsSizes[r]);
      checkCondition(
          b, loc, op,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, x, y),
          "operands have sizes known only at run time that do "
          "not match");
      Value smaller = arith::MinUIOp::create(b, loc, x, y);
      if (lhsType.isDynamicDim(l))
        lhsSizes[l] = smaller;
      if (rhsType.isDynamicDim(r))
        rhsSizes[r] = smaller;
      cut = true;
    }
    if (!cut)
      return;
    auto cutTo = [&](Value value, ArrayRef<OpFoldResult> sizes) -> Value {
      auto type = cast<RankedTensorType>(value.getType());
      SmallVector<OpFoldResult> zeros(type.getRank(), b.getIndexAttr(0)),
          ones(type.getRank(), b.getIndexAttr(1));
      Value slice =
          tensor::ExtractSliceOp::create(b, loc, value, zeros, sizes, ones);
      return slice.getType() == type
                 ? slice
                 : tensor::CastOp::create(b, loc, type, slice).getResult();
    };
    lhs = cutTo(lhs, lhsSizes);
    rhs = cutTo(rhs, rhsSizes);
  }

  /// numpy.matmul as one generic: result dimensions, then K.
  /// Whether the right operand is one column ([..., K, 1]): a
  /// matrix-vector product per batch, A's rows dotted with it.
  static bool isColumn(RankedTensorType rhsType, RankedTensorType type) {
    return rhsType.getRank() >= 2 && rhsType.getShape().back() == 1 &&
           type.getShape().back() == 1;
  }

  static Value buildBatched(B &b, L loc, Value lhs, Value rhs,
                            RankedTensorType type) {
    MLIRContext *ctx = b.getContext();
    auto lhsShape = cast<RankedTensorType>(lhs.getType()).getShape();
    auto rhsType = cast<RankedTensorType>(rhs.getType());
    auto rhsShape = rhsType.getShape();
    int64_t rank = type.getRank(), kDim = rank;
    bool hasM = lhsShape.size() >= 2, hasN = rhsShape.size() >= 2;
    int64_t batch = rank - hasM - hasN;
    // A single column is read as a vector along K: the generic's innermost
    // loop (K) then walks both operands contiguously, and the product is
    // a row-dot reduction that the elementwise vectorizer takes, instead of
    // a register-tiled contraction whose N tiles would be one column wide.
    bool column = isColumn(rhsType, type);
    Value rhsOperand = rhs;
    if (column) {
      SmallVector<ReassociationIndices> groups;
      int64_t rhsRank = rhsShape.size();
      for (int64_t d = 0; d < rhsRank - 2; ++d)
        groups.push_back({d});
      groups.push_back({rhsRank - 2, rhsRank - 1});
      rhsOperand = tensor::CollapseShapeOp::create(b, loc, rhs, groups);
    }
    auto batchExprs = [&](ArrayRef<int64_t> shape) {
      SmallVector<AffineExpr> exprs;
      int64_t operandBatch = shape.size() - 2;
      for (int64_t i = 0; i < operandBatch; ++i) {
        int64_t j = batch - operandBatch + i;
        exprs.push_back(shape[i] == 1 && type.getDimSize(j) != 1
                            ? getAffineConstantExpr(0, ctx)
                            : getAffineDimExpr(j, ctx));
      }
      return exprs;
    };
    SmallVector<AffineExpr> lhsExprs, rhsExprs, outExprs;
    if (hasM) {
      lhsExprs = batchExprs(lhsShape);
      lhsExprs.push_back(getAffineDimExpr(batch, ctx));
    }
    lhsExprs.push_back(getAffineDimExpr(kDim, ctx));
    if (hasN)
      rhsExprs = batchExprs(rhsShape);
    rhsExprs.push_back(getAffineDimExpr(kDim, ctx));
    if (hasN && !column)
      rhsExprs.push_back(getAffineDimExpr(batch + hasM, ctx));
    for (int64_t d = 0; d < rank; ++d)
      outExprs.push_back(getAffineDimExpr(d, ctx));
    SmallVector<AffineMap> maps{AffineMap::get(rank + 1, 0, lhsExprs, ctx),
                                AffineMap::get(rank + 1, 0, rhsExprs, ctx),
                                AffineMap::get(rank + 1, 0, outExprs, ctx)};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    // Sizes known only at run time: a batch dimension from the operand
    // that has it dynamic, M from the left, N from the right.
    SmallVector<Value> sizes;
    for (int64_t j = 0; j < rank; ++j) {
      if (!type.isDynamicDim(j))
        continue;
      if (hasN && j == rank - 1) {
        sizes.push_back(
            tensor::DimOp::create(b, loc, rhs, rhsShape.size() - 1));
        continue;
      }
      if (hasM && j == batch) {
        sizes.push_back(
            tensor::DimOp::create(b, loc, lhs, lhsShape.size() - 2));
        continue;
      }
      Value size;
      int64_t broadcast = 1;
      for (auto [operand, shape] :
           {std::pair(lhs, lhsShape), std::pair(rhs, rhsShape)}) {
        int64_t d = j - (batch - (int64_t(shape.size()) - 2));
        if (shape.size() < 2 || d < 0)
          continue;
        if (ShapedType::isDynamic(shape[d])) {
          size = tensor::DimOp::create(b, loc, operand, d);
          break;
        }
        if (shape[d] != 1)
          broadcast = shape[d];
      }
      sizes.push_back(
          size ? size
               : arith::ConstantIndexOp::create(b, loc, broadcast).getResult());
    }
    return linalg::GenericOp::create(
               b, loc, TypeRange{type}, ValueRange{lhs, rhsOperand},
               ValueRange{zeroFilled(b, loc, type, sizes)}, maps, iterators,
               [](B &b, L loc, V args) {
                 linalg::YieldOp::create(
                     b, loc,
                     multiplyAccumulate(b, loc, args[0], args[1], args[2]));
               })
        .getResult(0);
  }
};

//===----------------------------------------------------------------------===//
// Convolutions
//===----------------------------------------------------------------------===//

class ConvLowering : public ResultTypedLowering<ConvOp> {
public:
  using ResultTypedLowering::ResultTypedLowering;
  LogicalResult lower(ConvOp op, OpAdaptor adaptor, RankedTensorType type,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput(), weight = adaptor.getWeight();
    int64_t spatial = type.getRank() - 2;
    ArrayRef<int64_t> pads = op.getPads();
    SmallVector<int64_t> low{0, 0}, high{0, 0};
    low.append(pads.begin(), pads.begin() + spatial);
    high.append(pads.begin() + spatial, pads.end());
    if (failed(batchSizes(rewriter, loc, type, input)))
      return rewriter.notifyMatchFailure(
          op, "a size other than the batch known only at run time");
    if (llvm::any_of(pads, [](int64_t p) { return p != 0; }))
      input = padStatic(rewriter, loc, input, low, high,
                        scalarConstant(rewriter, loc, elementType(input), 0));
    // 16-bit floats accumulate in f32, the bias included, and are rounded
    // once at the end (as matrix products; the reference executor rounds
    // the exact sum once).
    Value result = buildConvolution(
        rewriter, loc, input, weight, accumulatorType(rewriter, type),
        op.getStrides(), op.getDilations(), op.getGroup());
    if (Value bias = adaptor.getBias())
      result = addChannelBias(rewriter, loc, result, bias);
    rewriter.replaceOp(op, roundedTo(rewriter, loc, result, type));
    return success();
  }
};

/// Transposed convolution, output-stationary: out[n, m, o] sums
/// x[n, c, i] * w[c, m mod M/group, k] over the group's channels c and the
/// kernel positions k with o + pad = i * stride + k * dilation, i.e. where
/// t = o + pad - k * dilation is a non-negative multiple of the stride
/// below stride * size. The input is read with tensor.extract at a clamped
/// i, and the product counts only where t is such a multiple.
class ConvTransposeLowering : public ResultTypedLowering<ConvTransposeOp> {
public:
  using ResultTypedLowering::ResultTypedLowering;
  LogicalResult lower(ConvTransposeOp op, OpAdaptor adaptor,
                      RankedTensorType type,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value input = adaptor.getInput(), weight = adaptor.getWeight();
    auto inputShape = cast<RankedTensorType>(input.getType()).getShape();
    auto weightShape = cast<RankedTensorType>(weight.getType()).getShape();
    int64_t spatial = type.getRank() - 2;
    int64_t group = op.getGroup();
    int64_t inPerGroup = inputShape[1] / group, outPerGroup = weightShape[1];
    ArrayRef<int64_t> strides = op.getStrides(), dilations = op.getDilations(),
                      pads = op.getPads();
    // Dimensions (n, m, o..., c, k...).
    int64_t numDims = 3 + 2 * spatial, cDim = 2 + spatial;
    auto dim = [&](int64_t d) { return getAffineDimExpr(d, ctx); };
    SmallVector<AffineExpr> weightExprs{
        dim(1).floorDiv(outPerGroup) * inPerGroup + dim(cDim),
        dim(1) % outPerGroup};
    SmallVector<AffineExpr> windowExprs{dim(cDim)}, outExprs{dim(0), dim(1)};
    SmallVector<int64_t> windowShape{inPerGroup};
    for (int64_t i = 0; i < spatial; ++i) {
      weightExprs.push_back(dim(cDim + 1 + i));
      windowExprs.push_back(dim(cDim + 1 + i));
      windowShape.push_back(weightShape[2 + i]);
      outExprs.push_back(dim(2 + i));
    }
    Type element = type.getElementType();
    // The window operand only gives the loops over c and k their bounds.
    Value window = tensor::EmptyOp::create(rewriter, loc, windowShape, element);
    SmallVector<AffineMap> maps{AffineMap::get(numDims, 0, weightExprs, ctx),
                                AffineMap::get(numDims, 0, windowExprs, ctx),
                                AffineMap::get(numDims, 0, outExprs, ctx)};
    SmallVector<utils::IteratorType> iterators(2 + spatial,
                                               utils::IteratorType::parallel);
    iterators.append(1 + spatial, utils::IteratorType::reduction);
    Value result =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{type}, ValueRange{weight, window},
            ValueRange{zeroFilled(rewriter, loc, type)}, maps, iterators,
            [&](B &b, L loc, V args) {
              auto index = [&](int64_t v) -> Value {
                return arith::ConstantIndexOp::create(b, loc, v);
              };
              Value m = linalg::IndexOp::create(b, loc, 1);
              Value channel = arith::AddIOp::create(
                  b, loc,
                  arith::MulIOp::create(
                      b, loc,
                      arith::DivUIOp::create(b, loc, m, index(outPerGroup)),
                      index(inPerGroup)),
                  linalg::IndexOp::create(b, loc, cDim));
              SmallVector<Value> coords{linalg::IndexOp::create(b, loc, 0),
                                        channel};
              Value valid =
                  arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
              for (int64_t i = 0; i < spatial; ++i) {
                Value t = arith::SubIOp::create(
                    b, loc,
                    arith::AddIOp::create(
                        b, loc, linalg::IndexOp::create(b, loc, 2 + i),
                        index(pads[i])),
                    arith::MulIOp::create(
                        b, loc, linalg::IndexOp::create(b, loc, cDim + 1 + i),
                        index(dilations[i])));
                Value nonNegative = arith::CmpIOp::create(
                    b, loc, arith::CmpIPredicate::sge, t, index(0));
                Value aligned = arith::CmpIOp::create(
                    b, loc, arith::CmpIPredicate::eq,
                    arith::RemSIOp::create(b, loc, t, index(strides[i])),
                    index(0));
                Value within = arith::CmpIOp::create(
                    b, loc, arith::CmpIPredicate::slt, t,
                    index(strides[i] * inputShape[2 + i]));
                valid = arith::AndIOp::create(
                    b, loc, valid,
                    arith::AndIOp::create(
                        b, loc, nonNegative,
                        arith::AndIOp::create(b, loc, aligned, within)));
                Value position =
                    arith::DivSIOp::create(b, loc, t, index(strides[i]));
                coords.push_back(arith::SelectOp::create(
                    b, loc, arith::AndIOp::create(b, loc, nonNegative, within),
                    position, index(0)));
              }
              Value x = tensor::ExtractOp::create(b, loc, input, coords);
              Value sum = multiplyAccumulate(b, loc, x, args[0], args[2]);
              linalg::YieldOp::create(
                  b, loc,
                  Value(arith::SelectOp::create(b, loc, valid, sum, args[2])));
            })
            .getResult(0);
    if (Value bias = adaptor.getBias())
      result = addChannelBias(rewriter, loc, result, bias);
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Rotary embeddings
//===----------------------------------------------------------------------===//

/// out[j] = x[j] * cos[i] -/+ x[partner(j)] * sin[i] over pairs (j,
/// partner(j)): halves (i, i + D/2) or, interleaved, (2i, 2i + 1). The
/// partner is a second affine view of x, so one generic does it all.
class RotaryEmbeddingLowering : public LoomLowering<RotaryEmbeddingOp> {
public:
  using LoomLowering::LoomLowering;
  LogicalResult
  matchAndRewrite(RotaryEmbeddingOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = resultType(op);
    if (!type || type.getShape().back() % 2 != 0)
      return failure();
    MLIRContext *ctx = rewriter.getContext();
    int64_t rank = type.getRank(), dim = type.getShape().back(), half = dim / 2;
    bool interleaved = op.getInterleaved();
    AffineExpr j = getAffineDimExpr(rank - 1, ctx);
    AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
    AffineExpr partner = interleaved ? j + 1 - (j % 2) * 2 : (j + half) % dim;
    AffineExpr pair = interleaved ? j.floorDiv(2) : j % half;
    SmallVector<int64_t> tableShape(type.getShape());
    tableShape.back() = half;
    auto tableMap = [&](Value table) {
      auto shape = cast<RankedTensorType>(table.getType()).getShape();
      AffineMap map = broadcastMap(ctx, shape, tableShape);
      if (shape.back() == 1)
        return map;
      return map.replace(j, pair, rank, 0);
    };
    SmallVector<AffineMap> maps{identity, identity.replace(j, partner, rank, 0),
                                tableMap(adaptor.getCos()),
                                tableMap(adaptor.getSin()), identity};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    Value x = adaptor.getInput();
    Location opLoc = op.getLoc();
    // Tables with sizes known only at run time must match the input's
    // there (broadcasting a run-time 1 is not supported: reported).
    for (Value table : {adaptor.getCos(), adaptor.getSin()}) {
      auto tableType = cast<RankedTensorType>(table.getType());
      int64_t offset = rank - tableType.getRank();
      for (int64_t d = 0; d + 1 < tableType.getRank(); ++d) {
        if (!tableType.isDynamicDim(d))
          continue;
        Value differs = arith::CmpIOp::create(
            rewriter, opLoc, arith::CmpIPredicate::ne,
            tensor::DimOp::create(rewriter, opLoc, table, d),
            indexDim(rewriter, opLoc, x, d + offset));
        checkCondition(rewriter, opLoc, op, differs,
                       "the cos/sin tables' sizes known only at run time "
                       "differ from the input's (broadcasting them is not "
                       "supported)");
      }
    }
    auto generic = linalg::GenericOp::create(
        rewriter, opLoc, TypeRange{type},
        ValueRange{x, x, adaptor.getCos(), adaptor.getSin()},
        ValueRange{
            emptyTensor(rewriter, opLoc, type,
                        sizesFrom(rewriter, opLoc, type, ValueRange{x}))},
        maps, iterators, [&](B &b, L loc, V args) {
          Value index = linalg::IndexOp::create(b, loc, rank - 1);
          Value first;
          if (interleaved) {
            Value odd = arith::RemUIOp::create(
                b, loc, index, arith::ConstantIndexOp::create(b, loc, 2));
            first = arith::CmpIOp::create(
                b, loc, arith::CmpIPredicate::eq, odd,
                arith::ConstantIndexOp::create(b, loc, 0));
          } else {
            first = arith::CmpIOp::create(
                b, loc, arith::CmpIPredicate::ult, index,
                arith::ConstantIndexOp::create(b, loc, half));
          }
          Type t = args[0].getType();
          Value cos = castScalar(b, loc, args[2], t);
          Value sin = castScalar(b, loc, args[3], t);
          Value direct = arith::MulFOp::create(b, loc, args[0], cos);
          Value cross = arith::MulFOp::create(b, loc, args[1], sin);
          Value result = arith::SelectOp::create(
              b, loc, first, arith::SubFOp::create(b, loc, direct, cross),
              arith::AddFOp::create(b, loc, direct, cross));
          linalg::YieldOp::create(b, loc, result);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Mixture of experts
//===----------------------------------------------------------------------===//

/// A mixture-of-experts layer becomes loom ops (see ExpertParallel.h),
/// which the other patterns lower in turn: the dense form (every expert on
/// every token) when no token is dropped, else the dispatch/combine form
/// with its fixed-capacity slots.
struct MoELowering : public LoomLowering<MoEOp> {
  using LoomLowering::LoomLowering;

  LogicalResult
  matchAndRewrite(MoEOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<Value> result =
        op.getCapacityFactorAttr()
            ? buildMoEDispatchCombine(rewriter, op, adaptor.getInput(),
                                      adaptor.getScores(), adaptor.getWIn(),
                                      adaptor.getWOut(), adaptor.getWGate())
            : buildMoEDense(rewriter, op, adaptor.getInput(),
                            adaptor.getScores(), adaptor.getWIn(),
                            adaptor.getWOut(), adaptor.getWGate());
    if (failed(result))
      return failure();
    rewriter.replaceOp(op, *result);
    return success();
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// Contraction builders shared with the quantized lowerings
//===----------------------------------------------------------------------===//

namespace lowering {

/// buildMatrixProduct with sizes known only at run time: the rows of
/// `lhs` collapse into one dimension and expand back after the product.
static Value buildRunTimeMatrixProduct(OpBuilder &b, Location loc, Value lhs,
                                       Value rhs, RankedTensorType type) {
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  int64_t rank = lhsType.getRank();
  Value lhs2 = lhs;
  if (rank > 2) {
    ReassociationIndices rows, cols{rank - 1};
    // The rows' count is static when every row dimension is (only the
    // contracted size may be known at run time alone).
    int64_t rowCount = 1;
    for (int64_t d = 0; d + 1 < rank; ++d) {
      rows.push_back(d);
      rowCount = lhsType.isDynamicDim(d) || rowCount == ShapedType::kDynamic
                     ? ShapedType::kDynamic
                     : rowCount * lhsType.getDimSize(d);
    }
    lhs2 = tensor::CollapseShapeOp::create(
        b, loc,
        RankedTensorType::get({rowCount, lhsType.getShape().back()},
                              lhsType.getElementType()),
        lhs, ArrayRef<ReassociationIndices>{rows, cols});
  }
  auto flatType = RankedTensorType::get(
      {cast<RankedTensorType>(lhs2.getType()).getDimSize(0),
       rhsType.getDimSize(1)},
      type.getElementType());
  SmallVector<Value> sizes;
  if (flatType.isDynamicDim(0))
    sizes.push_back(tensor::DimOp::create(b, loc, lhs2, 0));
  if (flatType.isDynamicDim(1))
    sizes.push_back(tensor::DimOp::create(b, loc, rhs, 1));
  Value product = linalg::MatmulOp::create(
                      b, loc, TypeRange{flatType}, ValueRange{lhs2, rhs},
                      ValueRange{zeroFilled(b, loc, flatType, sizes)})
                      ->getResult(0);
  if (rank == 2)
    return tensor::CastOp::create(b, loc, type, product);
  ReassociationIndices rows, cols{rank - 1};
  SmallVector<OpFoldResult> shape;
  SmallVector<int64_t> staticShape;
  for (int64_t d = 0; d + 1 < rank; ++d) {
    rows.push_back(d);
    shape.push_back(tensor::getMixedSize(b, loc, lhs, d));
    staticShape.push_back(lhsType.getDimSize(d));
  }
  shape.push_back(tensor::getMixedSize(b, loc, rhs, 1));
  staticShape.push_back(rhsType.getDimSize(1));
  Value expanded = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(staticShape, type.getElementType()),
      product, ArrayRef<ReassociationIndices>{rows, cols}, shape);
  return tensor::CastOp::create(b, loc, type, expanded);
}

Value buildMatrixProduct(OpBuilder &b, Location loc, Value lhs, Value rhs,
                         RankedTensorType type) {
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  if (!lhsType.hasStaticShape() || !rhsType.hasStaticShape())
    return buildRunTimeMatrixProduct(b, loc, lhs, rhs, type);
  int64_t k = lhsType.getShape().back();
  int64_t rows = lhsType.getNumElements() / std::max<int64_t>(k, 1);
  Value lhs2 = reshapeTo(
      b, loc, lhs, RankedTensorType::get({rows, k}, lhsType.getElementType()));
  auto flatType = RankedTensorType::get({rows, rhsType.getDimSize(1)},
                                        type.getElementType());
  auto matmul = linalg::MatmulOp::create(
      b, loc, TypeRange{flatType}, ValueRange{lhs2, rhs},
      ValueRange{zeroFilled(b, loc, flatType)});
  return reshapeTo(b, loc, matmul->getResult(0), type);
}

Value buildConvolution(OpBuilder &b, Location loc, Value input, Value weight,
                       RankedTensorType type, ArrayRef<int64_t> strides,
                       ArrayRef<int64_t> dilations, int64_t group) {
  int64_t spatial = type.getRank() - 2;
  // A batch known only at run time is the input's.
  SmallVector<Value> sizes;
  if (type.isDynamicDim(0))
    sizes.push_back(tensor::DimOp::create(b, loc, input, 0));
  // A 1-D convolution (audio, sequence models) is the 2-D one over a
  // height of one, so that the CPU target's convolution paths (im2col,
  // the kernel library, and with a batch known only at run time its batch
  // loop) take it too. Lengths known only at run time stay a generic.
  auto staticButBatch = [](Type shapedType) {
    auto shaped = cast<RankedTensorType>(shapedType);
    for (int64_t d = 1; d < shaped.getRank(); ++d)
      if (shaped.isDynamicDim(d))
        return false;
    return true;
  };
  if (spatial == 1 && group == 1 && staticButBatch(input.getType()) &&
      staticButBatch(weight.getType()) && staticButBatch(type)) {
    auto withUnitHeight = [&](Value value) {
      auto shaped = cast<RankedTensorType>(value.getType());
      SmallVector<int64_t> shape(shaped.getShape());
      shape.insert(shape.begin() + 2, 1);
      return tensor::ExpandShapeOp::create(
          b, loc, RankedTensorType::get(shape, shaped.getElementType()), value,
          SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
    };
    SmallVector<int64_t> shape2d(type.getShape());
    shape2d.insert(shape2d.begin() + 2, 1);
    auto type2d = RankedTensorType::get(shape2d, type.getElementType());
    Value conv = linalg::Conv2DNchwFchwOp::create(
                     b, loc, TypeRange{type2d},
                     ValueRange{withUnitHeight(input), withUnitHeight(weight)},
                     ValueRange{zeroFilled(b, loc, type2d, sizes)},
                     b.getI64TensorAttr({1, strides[0]}),
                     b.getI64TensorAttr({1, dilations[0]}))
                     ->getResult(0);
    return tensor::CollapseShapeOp::create(
        b, loc, type, conv,
        SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
  }
  if (spatial == 2 && group == 1)
    return linalg::Conv2DNchwFchwOp::create(
               b, loc, TypeRange{type}, ValueRange{input, weight},
               ValueRange{zeroFilled(b, loc, type, sizes)},
               b.getI64TensorAttr(strides), b.getI64TensorAttr(dilations))
        ->getResult(0);
  // Dimensions (n, m, o..., c, k...); with groups, the input channel is
  // (m floordiv M/group) * C/group + c.
  MLIRContext *ctx = b.getContext();
  auto weightShape = cast<RankedTensorType>(weight.getType()).getShape();
  int64_t outPerGroup = type.getDimSize(1) / group;
  int64_t inPerGroup = weightShape[1];
  int64_t numDims = 3 + 2 * spatial;
  int64_t cDim = 2 + spatial;
  auto dim = [&](int64_t d) { return getAffineDimExpr(d, ctx); };
  AffineExpr channel = dim(cDim);
  if (group > 1)
    channel = dim(1).floorDiv(outPerGroup) * inPerGroup + channel;
  SmallVector<AffineExpr> inputExprs{dim(0), channel},
      weightExprs{dim(1), dim(cDim)}, outExprs{dim(0), dim(1)};
  for (int64_t i = 0; i < spatial; ++i) {
    inputExprs.push_back(
        windowExpr(ctx, 2 + i, cDim + 1 + i, strides[i], dilations[i]));
    weightExprs.push_back(dim(cDim + 1 + i));
    outExprs.push_back(dim(2 + i));
  }
  SmallVector<AffineMap> maps{AffineMap::get(numDims, 0, inputExprs, ctx),
                              AffineMap::get(numDims, 0, weightExprs, ctx),
                              AffineMap::get(numDims, 0, outExprs, ctx)};
  SmallVector<utils::IteratorType> iterators(2 + spatial,
                                             utils::IteratorType::parallel);
  iterators.append(1 + spatial, utils::IteratorType::reduction);
  return linalg::GenericOp::create(
             b, loc, TypeRange{type}, ValueRange{input, weight},
             ValueRange{zeroFilled(b, loc, type, sizes)}, maps, iterators,
             [](B &b, L loc, V args) {
               linalg::YieldOp::create(
                   b, loc,
                   multiplyAccumulate(b, loc, args[0], args[1], args[2]));
             })
      .getResult(0);
}

} // namespace lowering

void populateLoomNNToLinalgPatterns(const TypeConverter &converter,
                                    RewritePatternSet &patterns) {
  patterns.add<MatMulLowering, ConvLowering, ConvTransposeLowering,
               RotaryEmbeddingLowering, MoELowering>(converter,
                                                     patterns.getContext());
}

} // namespace loom
