//===- Simplify.cpp - Conv+BN folding and data-movement cleanup ---------===//
//
// Inference-time simplifications that the importer leaves to a pass:
// folding batch normalization into the preceding convolution, and removing
// data movement (transposes, reshapes, squeezes) and casts that exporters
// chain without need. Dead code and common subexpressions are left to the
// upstream -canonicalize and -cse passes.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/Transforms/Passes.h"

#include "loom/Dialect/Loom/Transforms/FloatConstants.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/Support/Endian.h"

#include <cmath>

namespace loom {
#define GEN_PASS_DEF_LOOMSIMPLIFYPASS
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"
} // namespace loom

using namespace mlir;
using namespace loom;

namespace {

//===----------------------------------------------------------------------===//
// Float constants as doubles
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// Conv + BatchNorm
//===----------------------------------------------------------------------===//

/// Folds inference batch normalization into the convolution it follows:
///
///   %y = loom.conv %x, %W, %b
///   %z = loom.batch_norm %y, %scale, %bias, %mean, %var {epsilon = e}
/// ->
///   %z = loom.conv %x, %W', %b'
///
/// with s = scale / sqrt(var + e) per output channel m,
///   W'[m, ...] = W[m, ...] * s[m],  b'[m] = (b[m] - mean[m]) * s[m] + bias[m]
/// (b = 0 when the convolution has no bias). Everything is computed in
/// double and rounded once to the constants' own element types. The conv
/// must have no other user: folding would otherwise duplicate its weights.
struct FoldConvBatchNorm : OpRewritePattern<BatchNormOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(BatchNormOp bn,
                                PatternRewriter &rewriter) const override {
    auto conv = bn.getInput().getDefiningOp<ConvOp>();
    if (!conv)
      return rewriter.notifyMatchFailure(bn, "input is not a loom.conv");
    if (!conv.getResult().hasOneUse())
      return rewriter.notifyMatchFailure(bn, "the conv has other users");
    if (conv.getResult().getType() != bn.getResult().getType())
      return rewriter.notifyMatchFailure(bn, "conv and result types differ");

    // Every value the fold reads must be a readable float constant.
    Value weight = conv.getWeight(), convBias = conv.getBias();
    SmallVector<Value> operands = {weight, bn.getScale(), bn.getBias(),
                                   bn.getMean(), bn.getVariance()};
    if (convBias)
      operands.push_back(convBias);
    for (Value v : operands)
      if (!isFoldableFloat(v.getType()))
        return rewriter.notifyMatchFailure(bn, "operand is not a float");
    std::optional<SmallVector<double>> w = readFloatConstant(weight);
    std::optional<SmallVector<double>> scale = readFloatConstant(bn.getScale());
    std::optional<SmallVector<double>> bias = readFloatConstant(bn.getBias());
    std::optional<SmallVector<double>> mean = readFloatConstant(bn.getMean());
    std::optional<SmallVector<double>> var =
        readFloatConstant(bn.getVariance());
    std::optional<SmallVector<double>> b;
    if (convBias)
      b = readFloatConstant(convBias);
    if (!w || !scale || !bias || !mean || !var || (convBias && !b))
      return rewriter.notifyMatchFailure(bn, "an operand is not constant");

    // The verifiers allow dynamic sizes; constants are static, so check the
    // per-channel counts here before indexing with them.
    auto weightType = cast<RankedTensorType>(weight.getType());
    if (weightType.getRank() < 1 || !weightType.hasStaticShape())
      return rewriter.notifyMatchFailure(bn, "weight shape is not static");
    size_t channels = weightType.getDimSize(0);
    if (channels == 0 || scale->size() != channels ||
        bias->size() != channels || mean->size() != channels ||
        var->size() != channels || (b && b->size() != channels))
      return rewriter.notifyMatchFailure(bn, "per-channel sizes differ");
    size_t perChannel = w->size() / channels;

    double epsilon = bn.getEpsilon().convertToDouble();
    SmallVector<double> newW(w->size()), newB(channels);
    for (size_t m = 0; m < channels; ++m) {
      double denominator = (*var)[m] + epsilon;
      // A non-positive variance has no inverse square root: leave the
      // batch-norm to produce what it produces at run time.
      if (!(denominator > 0.0))
        return rewriter.notifyMatchFailure(bn, "variance + epsilon <= 0");
      double s = (*scale)[m] / std::sqrt(denominator);
      for (size_t i = 0; i < perChannel; ++i)
        newW[m * perChannel + i] = (*w)[m * perChannel + i] * s;
      newB[m] = ((b ? (*b)[m] : 0.0) - (*mean)[m]) * s + (*bias)[m];
    }

    ElementsAttr weightAttr, biasAttr;
    matchPattern(weight, m_Constant(&weightAttr));
    auto biasType =
        convBias ? cast<RankedTensorType>(convBias.getType())
                 : RankedTensorType::get({static_cast<int64_t>(channels)},
                                         weightType.getElementType());
    if (convBias)
      matchPattern(convBias, m_Constant(&biasAttr));
    Location loc = rewriter.getFusedLoc({conv.getLoc(), bn.getLoc()});
    Value foldedWeight = ConstantOp::create(
        rewriter, weight.getLoc(),
        makeFloatConstant(weightType, newW, weightAttr, "_bn"));
    Value foldedBias =
        ConstantOp::create(rewriter, convBias ? convBias.getLoc() : loc,
                           makeFloatConstant(biasType, newB, biasAttr, "_bn"));
    // The generic builder keeps every attribute of the conv, discardable
    // ones included.
    auto folded =
        ConvOp::create(rewriter, loc, TypeRange{bn.getResult().getType()},
                       ValueRange{conv.getInput(), foldedWeight, foldedBias},
                       conv->getAttrs());
    rewriter.replaceOp(bn, folded.getResult());
    rewriter.eraseOp(conv);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Transposes
//===----------------------------------------------------------------------===//

/// Whether `perm` is a permutation of [0, rank).
bool isPermutation(ArrayRef<int64_t> perm, int64_t rank) {
  if (static_cast<int64_t>(perm.size()) != rank)
    return false;
  llvm::SmallBitVector seen(rank);
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen.test(p))
      return false;
    seen.set(p);
  }
  return true;
}

/// Composes two transposes into one:
///
///   %a = loom.transpose %x {perm = p1}
///   %b = loom.transpose %a {perm = p2}
/// ->
///   %b = loom.transpose %x {perm = q}   with q[i] = p1[p2[i]]
///
/// or %x itself when q is the identity and the types agree. The inner
/// transpose stays while it has other users; the chain still loses a step.
struct ComposeTransposes : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TransposeOp outer,
                                PatternRewriter &rewriter) const override {
    auto inner = outer.getInput().getDefiningOp<TransposeOp>();
    if (!inner)
      return rewriter.notifyMatchFailure(outer, "input is not a transpose");
    Value x = inner.getInput();
    int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
    ArrayRef<int64_t> p1 = inner.getPerm(), p2 = outer.getPerm();
    if (!isPermutation(p1, rank) || !isPermutation(p2, rank))
      return rewriter.notifyMatchFailure(outer, "perm is not a permutation");

    SmallVector<int64_t> composed;
    bool identity = true;
    for (int64_t i = 0; i < rank; ++i) {
      composed.push_back(p1[p2[i]]);
      identity &= composed.back() == i;
    }
    if (identity && x.getType() == outer.getType()) {
      rewriter.replaceOp(outer, x);
      return success();
    }
    rewriter.replaceOpWithNewOp<TransposeOp>(
        outer, outer.getType(), x, rewriter.getDenseI64ArrayAttr(composed));
    return success();
  }
};

/// Transposes a float constant at compile time, whatever its size (the
/// folder only handles small dense tensors), so that weights stored
/// transposed (Gemm's transB, PyTorch's Linear) reach the contraction as
/// plain constants. The result keeps the constant's storage kind.
struct FoldConstantTranspose : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    ElementsAttr attr;
    if (!matchPattern(op.getInput(), m_Constant(&attr)))
      return rewriter.notifyMatchFailure(op, "input is not a constant");
    auto inType = cast<RankedTensorType>(op.getInput().getType());
    auto outType = cast<RankedTensorType>(op.getType());
    if (!isFoldableFloat(inType) || !inType.hasStaticShape() ||
        !outType.hasStaticShape() ||
        !isPermutation(op.getPerm(), inType.getRank()))
      return rewriter.notifyMatchFailure(op, "not a static float transpose");
    std::optional<SmallVector<double>> in = readFloatConstant(attr);
    if (!in)
      return rewriter.notifyMatchFailure(op, "constant has no readable data");
    ArrayRef<int64_t> perm = op.getPerm();
    ArrayRef<int64_t> inShape = inType.getShape();
    int64_t rank = inType.getRank();
    SmallVector<int64_t> inStrides(rank, 1);
    for (int64_t d = rank - 2; d >= 0; --d)
      inStrides[d] = inStrides[d + 1] * inShape[d + 1];
    SmallVector<double> out(in->size());
    SmallVector<int64_t> index(rank, 0);
    for (size_t linear = 0; linear < out.size(); ++linear) {
      int64_t source = 0;
      for (int64_t d = 0; d < rank; ++d)
        source += index[d] * inStrides[perm[d]];
      out[linear] = (*in)[source];
      // Advance the output multi-index in row-major order.
      for (int64_t d = rank - 1; d >= 0; --d) {
        if (++index[d] < outType.getDimSize(d))
          break;
        index[d] = 0;
      }
    }
    rewriter.replaceOpWithNewOp<ConstantOp>(
        op, makeFloatConstant(outType, out, attr, "_t"));
    return success();
  }
};

/// Moves a transpose of one slice of a constant onto the constant:
///
///   %s = loom.gather %C, %i {axis = a} : ..., tensor<i64> -> (C without a)
///   %t = loom.transpose %s {perm = p}
/// ->
///   %t = loom.gather (loom.transpose %C {perm = q}), %i {axis = 0}
///
/// with q = [a] followed by p's dimensions as dimensions of C, so that
/// FoldConstantTranspose transposes the constant once, at compile time,
/// instead of the slice on every call. Mixture-of-experts exports pick an
/// expert's weight from the stacked ones by a run-time index and transpose
/// it for the product (x @ W[e].T).
struct SinkTransposeIntoConstantGather : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto gather = op.getInput().getDefiningOp<GatherOp>();
    if (!gather || !gather->hasOneUse() ||
        !matchPattern(gather.getData(), m_Constant()))
      return rewriter.notifyMatchFailure(op, "not a gather of a constant");
    auto dataType = cast<RankedTensorType>(gather.getData().getType());
    auto indicesType = cast<RankedTensorType>(gather.getIndices().getType());
    int64_t rank = dataType.getRank();
    std::optional<int64_t> axis = normalizeAxis(gather.getAxis(), rank);
    if (!axis || indicesType.getRank() != 0 || !dataType.hasStaticShape() ||
        !isPermutation(op.getPerm(), rank - 1))
      return rewriter.notifyMatchFailure(op, "not one slice of a static "
                                             "constant");
    auto dataDim = [&](int64_t resultDim) {
      return resultDim < *axis ? resultDim : resultDim + 1;
    };
    SmallVector<int64_t> perm{*axis};
    SmallVector<int64_t> shape{dataType.getDimSize(*axis)};
    for (int64_t d : op.getPerm()) {
      perm.push_back(dataDim(d));
      shape.push_back(dataType.getDimSize(dataDim(d)));
    }
    Location loc = op.getLoc();
    Value transposed = TransposeOp::create(rewriter, loc, dataType.clone(shape),
                                           gather.getData(),
                                           rewriter.getDenseI64ArrayAttr(perm));
    rewriter.replaceOpWithNewOp<GatherOp>(op, op.getType(), transposed,
                                          gather.getIndices(),
                                          rewriter.getI64IntegerAttr(0));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Reshapes, squeezes and unsqueezes
//===----------------------------------------------------------------------===//

/// The input of `op` when it is a loom.reshape, loom.squeeze or
/// loom.unsqueeze: ops that only reinterpret the shape.
Value reshapeLikeInput(Operation *op) {
  if (auto reshape = dyn_cast_or_null<ReshapeOp>(op))
    return reshape.getInput();
  if (auto squeeze = dyn_cast_or_null<SqueezeOp>(op))
    return squeeze.getInput();
  if (auto unsqueeze = dyn_cast_or_null<UnsqueezeOp>(op))
    return unsqueeze.getInput();
  return {};
}

/// Collapses two shape reinterpretations, one of them a loom.reshape, into
/// one reshape to the outer, static, result type:
///
///   %a = loom.reshape %x, %s1      (or loom.squeeze / loom.unsqueeze)
///   %b = loom.reshape %a, %s2      (or loom.squeeze / loom.unsqueeze)
/// ->
///   %c = loom.constant dense<shape of %b> : tensor<Rxi64>
///   %b = loom.reshape %x, %c
///
/// The shape is a new constant rather than %s2 because %s2 may hold 0 (copy
/// the input dimension) and -1, which would read other dimensions of %x than
/// of %a. Chains of squeezes and unsqueezes alone are left to
/// CancelSqueezeUnsqueeze, which keeps them readable.
template <typename OuterOp>
struct CollapseReshapes : OpRewritePattern<OuterOp> {
  using OpRewritePattern<OuterOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(OuterOp outer,
                                PatternRewriter &rewriter) const override {
    Operation *inner = outer.getInput().getDefiningOp();
    Value x = reshapeLikeInput(inner);
    if (!x)
      return rewriter.notifyMatchFailure(outer, "input is not reshaped");
    if (!isa<ReshapeOp>(outer.getOperation()) && !isa<ReshapeOp>(inner))
      return rewriter.notifyMatchFailure(outer, "no loom.reshape in the chain");
    auto type = cast<RankedTensorType>(outer.getType());
    if (!type.hasStaticShape())
      return rewriter.notifyMatchFailure(outer, "result shape is not static");
    if (getElementTypeOrSelf(x.getType()) != type.getElementType())
      return rewriter.notifyMatchFailure(outer, "element types differ");

    ArrayRef<int64_t> shape = type.getShape();
    auto shapeType =
        RankedTensorType::get({type.getRank()}, rewriter.getI64Type());
    Value shapeValue = ConstantOp::create(
        rewriter, outer.getLoc(), DenseIntElementsAttr::get(shapeType, shape));
    // Without allowzero a 0 would copy the input dimension instead of
    // meaning an empty one.
    bool allowzero = llvm::is_contained(shape, 0);
    rewriter.replaceOpWithNewOp<ReshapeOp>(outer, type, x, shapeValue,
                                           allowzero);
    return success();
  }
};

/// Removes a reshape that cannot change anything:
///
///   %y = loom.reshape %x, %s : (tensor<?x4xf32>, ...) -> tensor<?x4xf32>
/// ->
///   %x
///
/// Equal types alone are not enough with dynamic sizes (tensor<?x?xf32> can
/// be reshaped to its transposed sizes): the result must be static, or have
/// one dynamic dimension that the element count then fixes (which a zero
/// static size would not). The folder covers only the static case.
/// loom.squeeze and loom.unsqueeze need no pattern: with axes they change
/// the rank, and without their folders already remove them.
struct RemoveIdentityReshape : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    if (op.getInput().getType() != type)
      return rewriter.notifyMatchFailure(op, "types differ");
    int64_t dynamic = 0, staticProduct = 1;
    for (int64_t size : type.getShape()) {
      if (ShapedType::isDynamic(size))
        ++dynamic;
      else
        staticProduct *= size;
    }
    if (dynamic > 1 || (dynamic == 1 && staticProduct == 0))
      return rewriter.notifyMatchFailure(op, "sizes are not determined");
    rewriter.replaceOp(op, op.getInput());
    return success();
  }
};

/// The dimensions of `op`'s input that a loom.squeeze removes, or nullopt
/// when they are not known from the types (no axes and a dynamic input,
/// whose size-1 dimensions only show at run time).
std::optional<llvm::SmallBitVector> squeezedDims(SqueezeOp op) {
  auto in = cast<RankedTensorType>(op.getInput().getType());
  llvm::SmallBitVector dims(in.getRank());
  if (op.getAxes().empty()) {
    if (!in.hasStaticShape())
      return std::nullopt;
    for (int64_t i = 0; i < in.getRank(); ++i)
      if (in.getDimSize(i) == 1)
        dims.set(i);
    return dims;
  }
  for (int64_t axis : op.getAxes()) {
    if (axis < 0 || axis >= in.getRank())
      return std::nullopt;
    dims.set(axis);
  }
  return dims;
}

/// The result dimensions that a loom.unsqueeze inserts, or nullopt on axes
/// out of range.
std::optional<llvm::SmallBitVector> unsqueezedDims(UnsqueezeOp op) {
  auto out = cast<RankedTensorType>(op.getType());
  llvm::SmallBitVector dims(out.getRank());
  for (int64_t axis : op.getAxes()) {
    if (axis < 0 || axis >= out.getRank())
      return std::nullopt;
    dims.set(axis);
  }
  return dims;
}

/// Cancels a squeeze and an unsqueeze of the same dimensions, in either
/// order:
///
///   %a = loom.unsqueeze %x {axes = A}       %a = loom.squeeze %x {axes = A}
///   %b = loom.squeeze %a {axes = A}         %b = loom.unsqueeze %a {axes = A}
/// ->                                     ->
///   %x                                      %x
///
/// Both forms hold with dynamic sizes: squeezing only removes dimensions of
/// size 1, so re-inserting them at the same places restores the input.
/// Partial overlaps are left alone.
template <typename OuterOp, typename InnerOp>
struct CancelSqueezeUnsqueeze : OpRewritePattern<OuterOp> {
  using OpRewritePattern<OuterOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(OuterOp outer,
                                PatternRewriter &rewriter) const override {
    auto inner = outer.getInput().template getDefiningOp<InnerOp>();
    if (!inner)
      return rewriter.notifyMatchFailure(outer, "no inverse input");
    Value x = inner.getInput();
    // A refined result type could not replace its uses with %x.
    if (x.getType() != outer.getType())
      return rewriter.notifyMatchFailure(outer, "types differ");
    std::optional<llvm::SmallBitVector> removed, inserted;
    if constexpr (std::is_same_v<OuterOp, SqueezeOp>) {
      removed = squeezedDims(outer);
      inserted = unsqueezedDims(inner);
    } else {
      removed = squeezedDims(inner);
      inserted = unsqueezedDims(outer);
    }
    if (!removed || !inserted || *removed != *inserted)
      return rewriter.notifyMatchFailure(outer, "dimensions differ");
    rewriter.replaceOp(outer, x);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Casts
//===----------------------------------------------------------------------===//

/// Whether converting every value of `from` to `to` is exact and of the same
/// kind: a float to a float that represents all of its values (f16 -> f32,
/// bf16 -> f64, not f16 <-> bf16), or an integer to a wider-or-equal integer
/// of the same signedness. i1 is a boolean (casts to it test for non-zero)
/// and is not treated as an integer here.
bool isExactWidening(Type from, Type to) {
  if (auto fromFloat = dyn_cast<FloatType>(from)) {
    auto toFloat = dyn_cast<FloatType>(to);
    return toFloat && APFloat::isRepresentableBy(fromFloat.getFloatSemantics(),
                                                 toFloat.getFloatSemantics());
  }
  auto fromInt = dyn_cast<IntegerType>(from), toInt = dyn_cast<IntegerType>(to);
  return fromInt && toInt && fromInt.getWidth() > 1 &&
         fromInt.getSignedness() == toInt.getSignedness() &&
         toInt.getWidth() >= fromInt.getWidth();
}

/// Drops an intermediate cast that loses nothing:
///
///   %a = loom.cast %x : tensor<4xf32> to tensor<4xf64>
///   %b = loom.cast %a : tensor<4xf64> to tensor<4xT>
/// ->
///   %b = loom.cast %x : tensor<4xf32> to tensor<4xT>   (or %x when T = f32)
///
/// Since the first cast is exact, the second sees the values of %x
/// unchanged, so a direct cast gives the same results. f32 -> f16 -> f32
/// stays: the first cast rounds.
struct FoldCastChain : OpRewritePattern<CastOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(CastOp outer,
                                PatternRewriter &rewriter) const override {
    auto inner = outer.getInput().getDefiningOp<CastOp>();
    if (!inner)
      return rewriter.notifyMatchFailure(outer, "input is not a cast");
    Value x = inner.getInput();
    if (!isExactWidening(getElementTypeOrSelf(x.getType()),
                         getElementTypeOrSelf(inner.getType())))
      return rewriter.notifyMatchFailure(outer, "the inner cast is lossy");
    if (x.getType() == outer.getType()) {
      rewriter.replaceOp(outer, x);
      return success();
    }
    // The outer cast's rounding (its `saturate`) is the one that stays.
    auto direct =
        rewriter.replaceOpWithNewOp<CastOp>(outer, outer.getType(), x);
    direct.setSaturate(outer.getSaturate());
    return success();
  }
};

struct LoomSimplifyPass : loom::impl::LoomSimplifyPassBase<LoomSimplifyPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateSimplificationPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void loom::populateSimplificationPatterns(RewritePatternSet &patterns) {
  patterns.add<FoldConvBatchNorm, ComposeTransposes, FoldConstantTranspose,
               SinkTransposeIntoConstantGather, RemoveIdentityReshape,
               CollapseReshapes<ReshapeOp>, CollapseReshapes<SqueezeOp>,
               CollapseReshapes<UnsqueezeOp>,
               CancelSqueezeUnsqueeze<SqueezeOp, UnsqueezeOp>,
               CancelSqueezeUnsqueeze<UnsqueezeOp, SqueezeOp>>(
      patterns.getContext());
  populateCastChainPatterns(patterns);
  populateDenseExpertPatterns(patterns);
}

void loom::populateCastChainPatterns(RewritePatternSet &patterns) {
  patterns.add<FoldCastChain>(patterns.getContext());
}
