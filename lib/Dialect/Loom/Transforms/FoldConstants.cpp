//===- FoldConstants.cpp - Evaluate small ops on constants ----------------===//
//
// ONNX function bodies (the "expanded" node tests, exporters' shape code)
// compute shapes with small ops on constants: Shape, Slice, Neg,
// ConstantOfShape, Concat. The op folders cover a few of them; this pass
// covers every op the reference executor has a kernel for, by running that
// kernel, so folding and the oracle cannot disagree. Values are only
// computed when they are small: weights are never read and large results
// never materialized.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/Transforms/Passes.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Reference/Interpreter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace loom {
#define GEN_PASS_DEF_LOOMFOLDCONSTANTSPASS
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"
} // namespace loom

using namespace mlir;
using namespace loom;

namespace {

/// The value of a loom.constant or of a tensor arith.constant.
ElementsAttr constantValue(Value v) {
  Operation *def = v.getDefiningOp();
  if (auto constant = dyn_cast_if_present<ConstantOp>(def))
    return dyn_cast<ElementsAttr>(constant.getValue());
  if (auto constant = dyn_cast_if_present<arith::ConstantOp>(def))
    return dyn_cast<ElementsAttr>(constant.getValue());
  return {};
}

/// The integer elements of a small constant (shape, repeats).
std::optional<SmallVector<int64_t>> intValues(ElementsAttr attr) {
  auto dense = dyn_cast<DenseIntElementsAttr>(attr);
  if (!dense)
    return std::nullopt;
  SmallVector<int64_t> values;
  for (const APInt &v : dense.getValues<APInt>())
    values.push_back(v.getSExtValue());
  return values;
}

/// Saturating product of sizes (an upper bound, never overflowing).
int64_t boundedProduct(ArrayRef<int64_t> sizes) {
  constexpr int64_t kHuge = int64_t(1) << 62;
  int64_t n = 1;
  for (int64_t s : sizes) {
    if (s < 0)
      return kHuge;
    if (s != 0 && n > kHuge / s)
      return kHuge;
    n *= s;
  }
  return n;
}

/// An upper bound on the elements of `op`'s results computed before
/// running its kernel, so that ops that generate large values from small
/// operands (ConstantOfShape, Expand, Tile, Range) are never evaluated;
/// nullopt when it cannot be bounded. Ops with dynamic results not listed
/// here move, select or reduce their operands, whose size is bounded.
std::optional<int64_t> resultBound(Operation *op,
                                   ArrayRef<ElementsAttr> operands) {
  bool allStatic = llvm::all_of(op->getResultTypes(), [](Type t) {
    return cast<RankedTensorType>(t).hasStaticShape();
  });
  if (allStatic) {
    int64_t most = 0;
    for (Type t : op->getResultTypes())
      most = std::max(most, cast<RankedTensorType>(t).getNumElements());
    return most;
  }
  if (isa<ConstantOfShapeOp>(op)) {
    std::optional<SmallVector<int64_t>> shape = intValues(operands[0]);
    if (!shape)
      return std::nullopt;
    return boundedProduct(*shape);
  }
  if (auto expand = dyn_cast<ExpandOp>(op)) {
    std::optional<SmallVector<int64_t>> shape = intValues(operands[1]);
    if (!shape)
      return std::nullopt;
    ArrayRef<int64_t> in = operands[0].getShapedType().getShape();
    size_t rank = std::max(in.size(), shape->size());
    SmallVector<int64_t> dims(rank, 1);
    for (size_t i = 0; i < rank; ++i) {
      int64_t a = i + in.size() >= rank ? in[i + in.size() - rank] : 1;
      int64_t b =
          i + shape->size() >= rank ? (*shape)[i + shape->size() - rank] : 1;
      dims[i] = std::max(a, b);
    }
    return boundedProduct(dims);
  }
  if (isa<TileOp>(op)) {
    std::optional<SmallVector<int64_t>> repeats = intValues(operands[1]);
    if (!repeats)
      return std::nullopt;
    repeats->push_back(operands[0].getNumElements());
    return boundedProduct(*repeats);
  }
  if (isa<RangeOp>(op)) {
    auto scalar = [&](int i) -> std::optional<double> {
      auto dense = dyn_cast<DenseElementsAttr>(operands[i]);
      if (!dense || dense.getNumElements() != 1)
        return std::nullopt;
      if (auto f = dyn_cast<DenseFPElementsAttr>(dense))
        return (*f.getValues<APFloat>().begin()).convertToDouble();
      return double((*dense.getValues<APInt>().begin()).getSExtValue());
    };
    std::optional<double> start = scalar(0), limit = scalar(1),
                          delta = scalar(2);
    if (!start || !limit || !delta || *delta == 0)
      return std::nullopt;
    double count = std::ceil((*limit - *start) / *delta);
    if (!(count < 1e18))
      return std::nullopt;
    return std::max<int64_t>(0, static_cast<int64_t>(count));
  }
  // Sizes come from values (pads, scales, depth) without a cheap bound.
  if (isa<PadOp, ResizeOp, OneHotOp>(op))
    return std::nullopt;
  return 0;
}

/// Whether `op` is a loom op that folding may evaluate (before looking at
/// its operands).
bool isCandidate(Operation *op) {
  if (!isa_and_present<LoomDialect>(op->getDialect()) || isa<ConstantOp>(op) ||
      op->getNumRegions() != 0 || op->getNumOperands() == 0 ||
      !isMemoryEffectFree(op))
    return false;
  // Fused regions and pipeline stages are kernels: what they hold stays.
  if (op->getParentOfType<FusionOp>() || op->getParentOfType<PipelineStageOp>())
    return false;
  return llvm::all_of(op->getResultTypes(),
                      [](Type t) { return isa<RankedTensorType>(t); });
}

/// Whether `user` still verifies (quietly) with its current operands.
bool stillVerifies(Operation *user) {
  ScopedDiagnosticHandler quiet(user->getContext(),
                                [](Diagnostic &) { return success(); });
  return succeeded(verify(user, /*verifyRecursively=*/false));
}

/// Evaluates a loom op whose operands are all small constants with its
/// reference kernel and replaces it by constants.
class EvaluateOnConstants : public RewritePattern {
public:
  EvaluateOnConstants(MLIRContext *ctx, const ConstantFoldingLimits &limits)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx),
        limits(limits) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    FailureOr<SmallVector<DenseElementsAttr>> values =
        evaluateOnConstants(op, limits);
    if (failed(values))
      return rewriter.notifyMatchFailure(op, "not evaluable on constants");
    for (auto [result, value] : llvm::zip(op->getResults(), *values)) {
      Value constant = ConstantOp::create(rewriter, op->getLoc(), value);
      if (constant.getType() == result.getType()) {
        rewriter.replaceAllUsesWith(result, constant);
        continue;
      }
      // The static type flows into loom ops that accept it; other users
      // keep the old type through a cast.
      Value cast;
      for (OpOperand &use : llvm::make_early_inc_range(result.getUses())) {
        Operation *user = use.getOwner();
        bool direct = false;
        if (isa_and_present<LoomDialect>(user->getDialect()) &&
            user->getNumRegions() == 0) {
          use.set(constant);
          direct = stillVerifies(user);
          use.set(result);
        }
        if (!direct && !cast)
          cast = tensor::CastOp::create(rewriter, op->getLoc(),
                                        result.getType(), constant);
        rewriter.modifyOpInPlace(user,
                                 [&] { use.set(direct ? constant : cast); });
      }
    }
    rewriter.eraseOp(op);
    return success();
  }

private:
  ConstantFoldingLimits limits;
};

class LoomFoldConstantsPass
    : public loom::impl::LoomFoldConstantsPassBase<LoomFoldConstantsPass> {
public:
  using LoomFoldConstantsPassBase::LoomFoldConstantsPassBase;

  void runOnOperation() override {
    ConstantFoldingLimits limits;
    limits.maxElements = maxElements;
    limits.maxOperandElements = maxOperandElements;
    RewritePatternSet patterns(&getContext());
    populateConstantFoldingPatterns(patterns, limits);
    // Program order: a value is folded before its users are visited.
    GreedyRewriteConfig config;
    config.setUseTopDownTraversal(true);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      signalPassFailure();
  }
};

} // namespace

FailureOr<SmallVector<DenseElementsAttr>>
loom::evaluateOnConstants(Operation *op, const ConstantFoldingLimits &limits) {
  if (!isCandidate(op))
    return failure();
  SmallVector<ElementsAttr> attrs;
  for (Value operand : op->getOperands()) {
    ElementsAttr attr = constantValue(operand);
    if (!attr || !attr.getShapedType().hasStaticShape() ||
        attr.getNumElements() > limits.maxOperandElements)
      return failure();
    attrs.push_back(attr);
  }
  std::optional<int64_t> bound = resultBound(op, attrs);
  if (!bound || *bound > limits.maxElements)
    return failure();

  // Kernel errors (an out-of-range index, an unsupported element type)
  // leave the op to fail, or not, where it runs.
  FailureOr<SmallVector<reference::Tensor>> results;
  {
    ScopedDiagnosticHandler quiet(op->getContext(),
                                  [](Diagnostic &) { return success(); });
    SmallVector<reference::Tensor> operands;
    for (ElementsAttr attr : attrs) {
      FailureOr<reference::Tensor> t =
          reference::tensorFromAttr(attr, op->getLoc());
      if (failed(t))
        return failure();
      operands.push_back(std::move(*t));
    }
    results = reference::evaluateOp(op, operands);
  }
  if (failed(results))
    return failure();
  SmallVector<DenseElementsAttr> values;
  for (auto [result, t] : llvm::zip(op->getResults(), *results)) {
    if (t.numElements() > limits.maxElements)
      return failure();
    DenseElementsAttr value = reference::attrFromTensor(
        t, cast<RankedTensorType>(result.getType()).getElementType());
    if (!value)
      return failure();
    values.push_back(value);
  }
  return values;
}

void loom::populateConstantFoldingPatterns(
    RewritePatternSet &patterns, const ConstantFoldingLimits &limits) {
  patterns.add<EvaluateOnConstants>(patterns.getContext(), limits);
}
