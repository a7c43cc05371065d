//===- DenseExperts.cpp - Experts' products without gathered weights ------===//
//
// Mixture-of-experts layers exported by torch.export (dynamo) pick each
// token's expert weights with a GatherND and multiply them in a batched
// matrix-vector product:
//
//   %w = loom.gather_nd %W, %e   -> tensor<BxNxK>   (W: ExNxK, e: Bx1)
//   %y = loom.matmul %w, %x      -> tensor<BxNx1>   (x: BxKx1)
//
// The gather copies one N x K matrix per (token, expert) pair, B of them,
// and the product then reads each copy once: both move B*N*K elements
// through memory for 2*B*N*K flops. With few experts it is cheaper to
// multiply every token by every expert in one matrix product whose weight
// is the constant W laid out as [K, E*N] (packed once, at compile time)
// and keep each token's own expert's column block:
//
//   %p = loom.matmul (x as [B, K]), (W as [K, E*N])  -> tensor<Bx(E*N)>
//   %y = loom.gather_nd (%p as [B, E, N]), %e {batch_dims = 1} -> tensor<BxN>
//
// E times the flops, but at matrix-product speed and without the copies.
// Each output element is the same sum over K of the same products, so the
// values change only by the order of the additions.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/Transforms/Passes.h"
#include "loom/Dialect/Loom/Transforms/RewriteUtils.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace loom;

namespace {

/// Most experts for which the dense product is taken: at E experts it does
/// 2*E flops where the gathered form moves one element through memory
/// twice (a copy, then a read), and at ~100 GFLOP/s against ~25 GB/s on
/// one core that is cheaper up to some 24 experts; 16 leaves room for
/// slower products.
constexpr int64_t kMaxDenseExperts = 16;

/// The matrix-vector products of gathered expert weights, on either side
/// of the matmul: `gather_nd(W [E,N,K]) @ x [B,K,1]` or
/// `x [B,1,K] @ gather_nd(W [E,K,N])`.
struct MultiplyExpertsDensely : OpRewritePattern<MatMulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MatMulOp op,
                                PatternRewriter &rewriter) const override {
    auto resultType = dyn_cast<RankedTensorType>(op.getType());
    if (!resultType || !resultType.hasStaticShape() ||
        resultType.getRank() != 3)
      return rewriter.notifyMatchFailure(op, "not a static batched product");
    // The gathered weight is the left operand (tokens on the right, in
    // columns) or the right one (tokens on the left, in rows).
    bool weightOnLeft = true;
    auto gather = op.getLhs().getDefiningOp<GatherNDOp>();
    if (!gather) {
      gather = op.getRhs().getDefiningOp<GatherNDOp>();
      weightOnLeft = false;
    }
    if (!gather || gather.getBatchDims() != 0 || !gather->hasOneUse() ||
        !matchPattern(gather.getData(), m_Constant()))
      return rewriter.notifyMatchFailure(op, "no gathered constant weight");
    auto weightType = cast<RankedTensorType>(gather.getData().getType());
    auto indicesType =
        dyn_cast<RankedTensorType>(gather.getIndices().getType());
    Value tokens = weightOnLeft ? op.getRhs() : op.getLhs();
    auto tokensType = dyn_cast<RankedTensorType>(tokens.getType());
    if (!weightType.hasStaticShape() || weightType.getRank() != 3 ||
        !isa<FloatType>(weightType.getElementType()) || !indicesType ||
        !indicesType.hasStaticShape() || indicesType.getRank() != 2 ||
        indicesType.getDimSize(1) != 1 || !tokensType ||
        !tokensType.hasStaticShape() || tokensType.getRank() != 3 ||
        tokensType.getElementType() != weightType.getElementType())
      return rewriter.notifyMatchFailure(op, "not [E,.,.] weights gathered "
                                             "by one index per token");
    int64_t experts = weightType.getDimSize(0);
    int64_t batch = indicesType.getDimSize(0);
    // [E, N, K] on the left, [E, K, N] on the right.
    int64_t k = weightType.getDimSize(weightOnLeft ? 2 : 1);
    int64_t n = weightType.getDimSize(weightOnLeft ? 1 : 2);
    ArrayRef<int64_t> tokenShape = tokensType.getShape();
    bool oneColumn = weightOnLeft
                         ? tokenShape == ArrayRef<int64_t>{batch, k, 1}
                         : tokenShape == ArrayRef<int64_t>{batch, 1, k};
    if (!oneColumn)
      return rewriter.notifyMatchFailure(op, "not one vector per token");
    // The gathered copies outweigh the weights only when tokens are at
    // least as many as experts.
    if (experts > kMaxDenseExperts || batch < experts)
      return rewriter.notifyMatchFailure(op, "too many experts for the "
                                             "tokens");

    Location loc = op.getLoc();
    Type element = weightType.getElementType();
    // W as [K, E, N]: a transpose of a constant, folded at compile time.
    SmallVector<int64_t> perm = weightOnLeft ? SmallVector<int64_t>{2, 0, 1}
                                             : SmallVector<int64_t>{1, 0, 2};
    Value transposed = TransposeOp::create(
        rewriter, loc, RankedTensorType::get({k, experts, n}, element),
        gather.getData(), rewriter.getDenseI64ArrayAttr(perm));
    Value weight = reshapeTo(rewriter, loc, transposed, {k, experts * n});
    Value rows = reshapeTo(rewriter, loc, tokens, {batch, k});
    Value products = MatMulOp::create(
        rewriter, loc, RankedTensorType::get({batch, experts * n}, element),
        rows, weight);
    Value perExpert = reshapeTo(rewriter, loc, products, {batch, experts, n});
    Value chosen = GatherNDOp::create(
        rewriter, loc, RankedTensorType::get({batch, n}, element), perExpert,
        gather.getIndices(), rewriter.getI64IntegerAttr(1));
    rewriter.replaceOp(op,
                       reshapeTo(rewriter, loc, chosen, resultType.getShape()));
    return success();
  }
};

} // namespace

void loom::populateDenseExpertPatterns(RewritePatternSet &patterns) {
  patterns.add<MultiplyExpertsDensely>(patterns.getContext());
}
