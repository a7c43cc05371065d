//===- QDQFolding.cpp - Quantized contractions from QDQ patterns ----------===//
//
// Quantized models (ONNX's QDQ format, and what -loom-quantize writes) carry
// their int8 arithmetic as float compute between loom.dequantize and
// loom.quantize. This pattern library turns
//
//   loom.matmul(loom.dequantize(qa, sa, za), loom.dequantize(qw, sw, zw))
//   loom.conv(loom.dequantize(qx, sx, zx), loom.dequantize(qw, sw, zw), b)
//
// into loom.qmatmul / loom.qconv, which take the 8-bit values and their
// parameters directly (an activation per tensor, a weight per tensor or per
// output channel). The result is the same f32 value up to the order of the
// float additions: the quantized op sums exact integer products and scales
// once, where the float op rounds each dequantized value first.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/Transforms/Passes.h"
#include "loom/Dialect/Loom/Transforms/RewriteUtils.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace loom {
#define GEN_PASS_DEF_LOOMFOLDQDQPASS
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"
} // namespace loom

using namespace mlir;
using namespace loom;

namespace {

RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// Whether `type` is a contraction operand type of the quantized ops.
bool isQuant8(Type type) {
  Type e = getElementTypeOrSelf(type);
  if (isa<Float8E4M3FNType>(e))
    return true;
  auto i = dyn_cast<IntegerType>(e);
  return i && i.getWidth() == 8 && !i.isSigned();
}

/// A dequantized operand: the 8-bit value, its scale and zero point (null
/// when absent) reshaped to what the quantized op expects, 0-D or
/// [channels].
struct QuantOperand {
  Value value, scale, zeroPoint;
};

/// A loom.dequantize that a quantized op can consume, and the shape its
/// parameters take there ({} or {channels}).
struct DequantizedMatch {
  DequantizeOp op;
  SmallVector<int64_t> paramShape;
  bool isFloat8;
};

/// Matches `v = loom.dequantize(q, s, z)` with f32 result and 8-bit `q`
/// whose parameters vary at most along `channelAxis` (-1: per tensor only).
/// Creates nothing, so a pattern can match both operands before it
/// rewrites.
std::optional<DequantizedMatch> matchDequantized(Value v, int64_t channelAxis) {
  auto dq = v.getDefiningOp<DequantizeOp>();
  if (!dq || !tensorType(dq.getResult()).getElementType().isF32() ||
      !isQuant8(dq.getInput().getType()))
    return std::nullopt;
  RankedTensorType scaleType = tensorType(dq.getScale());
  if (!scaleType.hasStaticShape())
    return std::nullopt;
  // The single dimension (if any) along which the parameters vary.
  std::optional<int64_t> variesAlong;
  int64_t rank = scaleType.getRank();
  int64_t dataRank = tensorType(dq.getInput()).getRank();
  for (int64_t d = 0; d < rank; ++d) {
    if (scaleType.getDimSize(d) == 1)
      continue;
    if (variesAlong)
      return std::nullopt;
    // Broadcasting aligns trailing dimensions.
    variesAlong = d + (dataRank - rank);
  }
  DequantizedMatch match{
      dq,
      {},
      isa<Float8E4M3FNType>(getElementTypeOrSelf(dq.getInput().getType()))};
  if (variesAlong) {
    if (*variesAlong != channelAxis)
      return std::nullopt;
    match.paramShape.push_back(scaleType.getNumElements());
  }
  return match;
}

/// Whether two matched operands can feed one quantized op: both 8-bit
/// integers or both f8E4M3FN.
bool areCompatible(const DequantizedMatch &a, const DequantizedMatch &b) {
  return a.isFloat8 == b.isFloat8;
}

/// A zero zero point of `like`'s shape and `quant`'s element type, for an
/// operand whose partner has one (the quantized ops take both or neither).
Value zeroPointLike(PatternRewriter &rewriter, Location loc, Value like,
                    Value quant) {
  auto type = tensorType(like).clone(getElementTypeOrSelf(quant.getType()));
  return ConstantOp::create(
      rewriter, loc,
      DenseElementsAttr::get(
          type, rewriter.getIntegerAttr(type.getElementType(), 0)));
}

/// The operands of a quantized op from two compatible matches: parameters
/// reshaped, and a zero zero point added where only the partner has one.
std::pair<QuantOperand, QuantOperand>
materialize(PatternRewriter &rewriter, DequantizedMatch a, DequantizedMatch b) {
  auto build = [&](DequantizedMatch &m) {
    Location loc = m.op.getLoc();
    QuantOperand q{m.op.getInput(),
                   reshapeTo(rewriter, loc, m.op.getScale(), m.paramShape),
                   nullptr};
    if (Value zp = m.op.getZeroPoint())
      q.zeroPoint = reshapeTo(rewriter, loc, zp, m.paramShape);
    return q;
  };
  QuantOperand qa = build(a), qb = build(b);
  if (bool(qa.zeroPoint) != bool(qb.zeroPoint)) {
    if (!qa.zeroPoint)
      qa.zeroPoint = zeroPointLike(rewriter, a.op.getLoc(), qa.scale, qa.value);
    else
      qb.zeroPoint = zeroPointLike(rewriter, b.op.getLoc(), qb.scale, qb.value);
  }
  return {qa, qb};
}

/// matmul(dequantize(a), dequantize(w)) -> qmatmul, for a 2-D weight
/// quantized per tensor or per column.
struct FoldQDQMatMul : OpRewritePattern<MatMulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MatMulOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType resultType = tensorType(op.getResult());
    if (!resultType.getElementType().isF32() ||
        tensorType(op.getLhs()).getRank() < 2 ||
        tensorType(op.getRhs()).getRank() != 2)
      return rewriter.notifyMatchFailure(op, "not an f32 [.., M, K] x [K, N]");
    std::optional<DequantizedMatch> a = matchDequantized(op.getLhs(), -1);
    if (!a)
      return rewriter.notifyMatchFailure(op, "lhs is not per-tensor 8-bit");
    std::optional<DequantizedMatch> w = matchDequantized(op.getRhs(), 1);
    if (!w || !areCompatible(*a, *w))
      return rewriter.notifyMatchFailure(op, "rhs does not fit lhs");
    auto [qa, qw] = materialize(rewriter, *a, *w);
    rewriter.replaceOpWithNewOp<QMatMulOp>(op, resultType, qa.value, qw.value,
                                           qa.scale, qw.scale, qa.zeroPoint,
                                           qw.zeroPoint);
    return success();
  }
};

/// conv(dequantize(x), dequantize(w), bias) -> qconv, for a weight
/// quantized per tensor or per output channel.
struct FoldQDQConv : OpRewritePattern<ConvOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConvOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType resultType = tensorType(op.getResult());
    if (!resultType.getElementType().isF32())
      return rewriter.notifyMatchFailure(op, "not an f32 convolution");
    std::optional<DequantizedMatch> x = matchDequantized(op.getInput(), -1);
    if (!x)
      return rewriter.notifyMatchFailure(op, "input is not per-tensor 8-bit");
    std::optional<DequantizedMatch> w = matchDequantized(op.getWeight(), 0);
    if (!w || !areCompatible(*x, *w))
      return rewriter.notifyMatchFailure(op, "weight does not fit input");
    auto [qx, qw] = materialize(rewriter, *x, *w);
    rewriter.replaceOpWithNewOp<QConvOp>(
        op, resultType, qx.value, qw.value, qx.scale, qw.scale, qx.zeroPoint,
        qw.zeroPoint, op.getBias(), op.getStridesAttr(), op.getPadsAttr(),
        op.getDilationsAttr(), op.getGroupAttr());
    return success();
  }
};

/// transpose(dequantize(q, s, z)) -> dequantize(transpose(q), s', z'), so
/// that Gemm's transposed weights (transB) reach the contraction
/// dequantized. Parameters of the data's rank are transposed alike; 0-D
/// ones stay.
struct SinkTransposeIntoDequantize : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto dq = op.getInput().getDefiningOp<DequantizeOp>();
    if (!dq || !dq.getResult().hasOneUse())
      return rewriter.notifyMatchFailure(op, "input is not a lone dequantize");
    int64_t rank = tensorType(dq.getInput()).getRank();
    auto transposed = [&](Value v) -> Value {
      if (!v)
        return v;
      RankedTensorType type = tensorType(v);
      if (type.getRank() == 0)
        return v;
      SmallVector<int64_t> shape;
      for (int64_t p : op.getPerm())
        shape.push_back(type.getDimSize(p));
      return TransposeOp::create(rewriter, op.getLoc(), type.clone(shape), v,
                                 op.getPermAttr());
    };
    for (Value param : {dq.getScale(), dq.getZeroPoint()})
      if (param && tensorType(param).getRank() != 0 &&
          tensorType(param).getRank() != rank)
        return rewriter.notifyMatchFailure(op, "parameter rank differs");
    Value q = transposed(dq.getInput());
    Value scale = transposed(dq.getScale());
    Value zp = transposed(dq.getZeroPoint());
    rewriter.replaceOpWithNewOp<DequantizeOp>(op, op.getType(), q, scale, zp);
    return success();
  }
};

/// Whether `a` and `b` are the same value: one SSA value, or constants with
/// equal elements.
bool sameValue(Value a, Value b) {
  if (a == b)
    return true;
  Attribute x, y;
  return a && b && matchPattern(a, m_Constant(&x)) &&
         matchPattern(b, m_Constant(&y)) && x == y;
}

/// quantize(reshape*(dequantize(q, s, z)), s, z) -> reshape*(q): a value
/// quantized again with the parameters it was quantized with (exporters
/// write a QuantizeLinear/DequantizeLinear pair on each side of a Reshape)
/// is itself. Exact for 8-bit integers: (q - z) * s / s is within an ulp of
/// the integer q - z, so rounding gives q - z back, unless s is so small or
/// large that the product under- or overflows (such scales are left alone).
struct ElideRequantize : OpRewritePattern<QuantizeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(QuantizeOp op,
                                PatternRewriter &rewriter) const override {
    SmallVector<ReshapeOp> reshapes;
    Value v = op.getInput();
    while (auto reshape = v.getDefiningOp<ReshapeOp>()) {
      reshapes.push_back(reshape);
      v = reshape.getInput();
    }
    auto dq = v.getDefiningOp<DequantizeOp>();
    Type quantized = getElementTypeOrSelf(op.getType());
    if (!dq || getElementTypeOrSelf(dq.getInput().getType()) != quantized ||
        !isa<IntegerType>(quantized) ||
        !sameValue(dq.getScale(), op.getScale()) ||
        !sameValue(dq.getZeroPoint(), op.getZeroPoint()))
      return rewriter.notifyMatchFailure(op, "not a requantize to the same");
    DenseElementsAttr scales;
    if (!matchPattern(op.getScale(), m_Constant(&scales)) ||
        !isa<FloatType>(scales.getElementType()) ||
        llvm::any_of(scales.getValues<APFloat>(), [](const APFloat &s) {
          double d = s.convertToDouble();
          bool moderate = d >= 1e-30 && d <= 1e30; // false for NaN too
          return !moderate;
        }))
      return rewriter.notifyMatchFailure(op, "scale not a moderate constant");
    Value q = dq.getInput();
    for (ReshapeOp reshape : llvm::reverse(reshapes))
      q = ReshapeOp::create(rewriter, reshape.getLoc(),
                            tensorType(reshape.getResult()).clone(quantized), q,
                            reshape.getShape(), reshape.getAllowzero());
    rewriter.replaceOp(op, q);
    return success();
  }
};

/// dequantize(constant) -> a float constant, whatever its size. Run after
/// the contraction patterns: what they did not take (a weight whose
/// activation is not quantized, a bias, a residual's constant) would
/// otherwise be dequantized on every call.
struct EvaluateConstantDequantize : OpRewritePattern<DequantizeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(DequantizeOp op,
                                PatternRewriter &rewriter) const override {
    ElementsAttr input, zeroPoint;
    DenseElementsAttr scale;
    if (!matchPattern(op.getInput(), m_Constant(&input)) ||
        !matchPattern(op.getScale(), m_Constant(&scale)) ||
        (op.getZeroPoint() &&
         !matchPattern(op.getZeroPoint(), m_Constant(&zeroPoint))))
      return rewriter.notifyMatchFailure(op, "operands are not constants");
    auto type = dyn_cast<RankedTensorType>(op.getType());
    if (!type || !type.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "result shape not static");
    DenseElementsAttr value =
        DequantizeOp::evaluate(input, scale, zeroPoint, type);
    if (!value)
      return rewriter.notifyMatchFailure(op, "not an integer input");
    rewriter.replaceOpWithNewOp<ConstantOp>(op, value);
    return success();
  }
};

struct LoomFoldQDQPass : loom::impl::LoomFoldQDQPassBase<LoomFoldQDQPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateQDQFoldingPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    RewritePatternSet constants(&getContext());
    constants.add<EvaluateConstantDequantize>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(constants))))
      signalPassFailure();
  }
};

} // namespace

void loom::populateQDQFoldingPatterns(RewritePatternSet &patterns) {
  patterns.add<FoldQDQMatMul, FoldQDQConv, SinkTransposeIntoDequantize,
               ElideRequantize>(patterns.getContext());
}
