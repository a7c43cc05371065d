//===- FuseElementwise.cpp - Elementwise fusion without recomputation -----===//

#include "loom/Target/CPU/Passes.h"

#include "loom/Conversion/LoomToLinalg/LoomToLinalg.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace loom::cpu {
#define GEN_PASS_DEF_LOOMCPUFUSEELEMENTWISEPASS
#include "loom/Target/CPU/Passes.h.inc"
} // namespace loom::cpu

using namespace mlir;

namespace loom::cpu {
namespace {

/// Whether computing `producer`'s body once per consumer iteration instead
/// of once per element costs next to nothing: no math functions and no
/// division.
bool hasCheapBody(linalg::GenericOp producer) {
  return producer.getBody()
             ->walk([](Operation *op) {
               if (isa<math::MathDialect>(op->getDialect()) ||
                   isa<arith::DivFOp, arith::DivSIOp, arith::DivUIOp,
                       arith::RemFOp, arith::RemSIOp, arith::RemUIOp,
                       arith::CeilDivSIOp, arith::CeilDivUIOp,
                       arith::FloorDivSIOp>(op))
                 return WalkResult::interrupt();
               return WalkResult::advance();
             })
             .wasInterrupted() == false;
}

/// The fusion rule (see the pass description).
bool fusesWithoutRecomputation(OpOperand *fused) {
  Operation *producer = fused->get().getDefiningOp();
  if (!producer || !producer->hasOneUse())
    return false;
  auto consumer = dyn_cast<linalg::LinalgOp>(fused->getOwner());
  if (!consumer)
    return true;
  if (consumer.getMatchingIndexingMap(fused).isPermutation())
    return true;
  if (consumer.getNumReductionLoops() > 0)
    return false;
  auto generic = dyn_cast<linalg::GenericOp>(producer);
  return generic && hasCheapBody(generic);
}

class LoomCPUFuseElementwisePass
    : public impl::LoomCPUFuseElementwisePassBase<LoomCPUFuseElementwisePass> {
public:
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    bubbleUpRunTimeBoundViews();
    RewritePatternSet patterns(context);
    linalg::ControlFusionFn singleUse = [](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      return producer && producer->hasOneUse();
    };
    // Reshapes are not propagated through contractions: a matrix product
    // expanded into heads would be tiled per head, in narrow tiles.
    linalg::ControlFusionFn reshapes = [](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      if (!producer || !producer->hasOneUse())
        return false;
      for (Operation *op : {producer, fused->getOwner()})
        if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
          if (linalgOp.getNumReductionLoops() > 0)
            return false;
      return true;
    };
    linalg::populateElementwiseOpsFusionPatterns(patterns,
                                                 fusesWithoutRecomputation);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, reshapes);
    tensor::populateBubbleUpExpandShapePatterns(patterns);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, context);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
    context->getLoadedDialect<linalg::LinalgDialect>()
        ->getCanonicalizationPatterns(patterns);
    linalg::populateConstantFoldLinalgOperations(patterns, singleUse);
    (void)applyPatternsGreedily(getOperation(), std::move(patterns),
                                GreedyRewriteConfig().setUseTopDownTraversal());
  }

private:
  /// The views that keep an elementwise op's reads inside inputs of
  /// disagreeing run-time sizes (kRunTimeBoundView) sit between the op and
  /// its inputs' producers and would stop them fusing: each is moved above
  /// its producer (which then computes only the viewed part), and so on up
  /// the chain. Other slices are left where they are.
  void bubbleUpRunTimeBoundViews() {
    SmallVector<Operation *> views;
    getOperation()->walk([&](tensor::ExtractSliceOp slice) {
      if (slice->hasAttr(kRunTimeBoundView))
        views.push_back(slice);
    });
    if (views.empty())
      return;
    RewritePatternSet patterns(&getContext());
    linalg::populateBubbleUpExtractSliceOpPatterns(patterns);
    (void)applyOpPatternsGreedily(
        views, std::move(patterns),
        GreedyRewriteConfig().setStrictness(
            GreedyRewriteStrictness::ExistingAndNewOps));
  }
};

} // namespace
} // namespace loom::cpu
