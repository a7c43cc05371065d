//===- Precision.cpp - Automatic mixed precision (fp16 / bf16) ----------===//
//
// Runs the contractions of an f32 program (matmul, conv, conv_transpose,
// attention) on fp16 or bf16 operands, the policy of automatic mixed
// precision: these ops dominate the work and tolerate narrow inputs because
// they accumulate wide, while softmax, normalizations and their statistics,
// reductions, exp/log/pow and elementwise ops lose too much in 16 bits and
// stay f32.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/Transforms/Passes.h"

#include "loom/Dialect/Loom/Transforms/FloatConstants.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace loom {
#define GEN_PASS_DEF_LOOMPRECISIONPASS
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"
} // namespace loom

using namespace mlir;
using namespace loom;

namespace {

/// Whether `value` is a ranked tensor of f32.
bool isF32Tensor(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.getElementType().isF32();
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

/// Whether `operand` of a contraction is cast to the low type. The additive
/// mask of attention is not: it is added to the scores, which are
/// accumulated wide, and the large negative values exporters use for
/// "masked" (f32's lowest, -1e9) overflow f16 to -inf, which turns a fully
/// masked row into NaN where f32 gives a uniform row.
bool takesLowPrecision(Operation *op, OpOperand &operand) {
  // query, key, value, then the optional mask.
  return !isa<AttentionOp>(op) || operand.getOperandNumber() < 3;
}

/// Computes an f32 contraction in the low type:
///
///   %y = loom.matmul %a, %b : tensor<..xf32>, tensor<..xf32> -> ..xf32
/// ->
///   %a16 = loom.cast %a : tensor<..xf32> to tensor<..xf16>
///   %b16 = loom.cast %b : tensor<..xf32> to tensor<..xf16>
///   %y16 = loom.matmul %a16, %b16 : ... -> tensor<..xf16>
///   %y = loom.cast %y16 : tensor<..xf16> to tensor<..xf32>
///
/// This models what fp16/bf16 hardware does: inputs and outputs are
/// rounded to the low type, the products are accumulated wide (f32 on
/// tensor cores). The reference executor computes each op in double and
/// rounds its result to the result type, so the rewritten program has
/// exactly the rounding of the operands and of the result, and none
/// inside the accumulation. Users that are themselves contractions see the
/// cast back to f32 cancel against their own cast (the exact cast-chain
/// folding shared with loom-simplify, populateCastChainPatterns).
template <typename OpTy> struct ComputeInLowPrecision : OpRewritePattern<OpTy> {
  ComputeInLowPrecision(MLIRContext *context, Type lowType)
      : OpRewritePattern<OpTy>(context), lowType(lowType) {}

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Value result = op->getResult(0);
    if (!isF32Tensor(result))
      return rewriter.notifyMatchFailure(op, "result is not an f32 tensor");
    // Every operand that changes type must be f32 now, so that integer or
    // already-narrow programs are left alone.
    for (OpOperand &operand : op->getOpOperands())
      if (takesLowPrecision(op, operand) && !isF32Tensor(operand.get()))
        return rewriter.notifyMatchFailure(op, "an operand is not f32");

    Location loc = op.getLoc();
    IRMapping mapping;
    for (OpOperand &operand : op->getOpOperands()) {
      Value value = operand.get();
      // One cast serves an operand used twice (matmul %a, %a).
      if (!takesLowPrecision(op, operand) || mapping.contains(value))
        continue;
      auto type = cast<RankedTensorType>(value.getType());
      mapping.map(value,
                  CastOp::create(rewriter, loc, type.clone(lowType), value));
    }
    // Cloning keeps every attribute; the contractions infer their result
    // element type from the operands, so only the element type changes.
    Operation *low = rewriter.clone(*op, mapping);
    auto resultType = cast<RankedTensorType>(result.getType());
    low->getResult(0).setType(resultType.clone(lowType));
    rewriter.replaceOpWithNewOp<CastOp>(op, resultType, low->getResult(0));
    return success();
  }

  Type lowType;
};

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

/// The constant `attr` of float elements converted to `type`'s float element
/// type, or null when it cannot be read (an elided resource, elements that
/// are not whole bytes). Resources stay resources, with a new blob of the
/// narrower elements named after the old one plus the type, so that
/// converted weights print small and can be traced to their initializer.
ElementsAttr convertFloatConstant(ElementsAttr attr, RankedTensorType type) {
  if (!type.hasStaticShape() || !isFoldableFloat(type))
    return {};
  std::optional<SmallVector<double>> values = readFloatConstant(attr);
  if (!values)
    return {};
  std::string typeName;
  llvm::raw_string_ostream os(typeName);
  type.getElementType().print(os);
  return makeFloatConstant(type, *values, attr, "_" + typeName);
}

/// Converts weights once, at compile time:
///
///   %w = loom.constant dense_resource<w> : tensor<64x64xf32>
///   %w16 = loom.cast %w : tensor<64x64xf32> to tensor<64x64xf16>
/// ->
///   %w16 = loom.constant dense_resource<w_f16> : tensor<64x64xf16>
///
/// The cast folder only folds small dense constants (it must stay cheap for
/// every canonicalization); this pattern takes weights of any size. Only
/// casts to the low type are folded, so that the pass changes nothing but
/// what its policy asks for.
struct FoldConstantCast : OpRewritePattern<CastOp> {
  FoldConstantCast(MLIRContext *context, Type lowType)
      : OpRewritePattern<CastOp>(context), lowType(lowType) {}

  LogicalResult matchAndRewrite(CastOp cast,
                                PatternRewriter &rewriter) const override {
    auto type = cast.getType();
    if (type.getElementType() != lowType ||
        !isa<FloatType>(cast.getInput().getType().getElementType()))
      return rewriter.notifyMatchFailure(cast, "not a float to low cast");
    ElementsAttr attr;
    if (!matchPattern(cast.getInput(), m_Constant(&attr)))
      return rewriter.notifyMatchFailure(cast, "input is not a constant");
    ElementsAttr converted = convertFloatConstant(attr, type);
    if (!converted)
      return rewriter.notifyMatchFailure(cast, "constant has no readable data");
    rewriter.replaceOpWithNewOp<ConstantOp>(cast, converted);
    return success();
  }

  Type lowType;
};

//===----------------------------------------------------------------------===//
// Casts
//===----------------------------------------------------------------------===//

struct LoomPrecisionPass
    : loom::impl::LoomPrecisionPassBase<LoomPrecisionPass> {
  using LoomPrecisionPassBase::LoomPrecisionPassBase;

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    Type lowType = precision == Precision::BF16
                       ? Type(BFloat16Type::get(context))
                       : Type(Float16Type::get(context));
    RewritePatternSet patterns(context);
    populatePrecisionPatterns(patterns, lowType);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void loom::populatePrecisionPatterns(RewritePatternSet &patterns,
                                     Type lowType) {
  MLIRContext *context = patterns.getContext();
  patterns.add<ComputeInLowPrecision<MatMulOp>, ComputeInLowPrecision<ConvOp>,
               ComputeInLowPrecision<ConvTransposeOp>,
               ComputeInLowPrecision<AttentionOp>>(context, lowType);
  patterns.add<FoldConstantCast>(context, lowType);
  populateCastChainPatterns(patterns);
}
