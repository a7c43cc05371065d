//===- ContractionOrder.cpp - Loop order of contractions on the CPU -------===//

#include "loom/Target/CPU/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace loom::cpu {
#define GEN_PASS_DEF_LOOMCPUCONTRACTIONORDERPASS
#include "loom/Target/CPU/Passes.h.inc"
} // namespace loom::cpu

using namespace mlir;

namespace loom::cpu {
namespace {

/// The new loop order of `op` (old loop numbers, outermost first), or an
/// empty vector when the order should stay.
SmallVector<unsigned> contractionOrder(linalg::GenericOp op) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  unsigned numLoops = iterators.size();
  if (numLoops < 2 || iterators.back() != utils::IteratorType::reduction)
    return {};
  // The output's innermost dimension, when it is a plain parallel loop.
  AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (out.getNumResults() == 0)
    return {};
  auto inner = dyn_cast<AffineDimExpr>(out.getResults().back());
  if (!inner || iterators[inner.getPosition()] != utils::IteratorType::parallel)
    return {};
  unsigned innerLoop = inner.getPosition();
  // Some input must walk along it too, or the new innermost loop would
  // only stride through the inputs.
  bool walked = llvm::any_of(op.getDpsInputOperands(), [&](OpOperand *input) {
    AffineMap map = op.getMatchingIndexingMap(input);
    return map.getNumResults() > 0 &&
           map.getResults().back().isFunctionOfDim(innerLoop);
  });
  if (!walked)
    return {};
  SmallVector<unsigned> order;
  for (unsigned loop = 0; loop < numLoops; ++loop)
    if (loop != innerLoop && iterators[loop] == utils::IteratorType::parallel)
      order.push_back(loop);
  for (unsigned loop = 0; loop < numLoops; ++loop)
    if (iterators[loop] == utils::IteratorType::reduction)
      order.push_back(loop);
  order.push_back(innerLoop);
  return order;
}

class LoomCPUContractionOrderPass
    : public impl::LoomCPUContractionOrderPassBase<
          LoomCPUContractionOrderPass> {
public:
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<linalg::LinalgOp> named;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (isa<linalg::ContractionOpInterface, linalg::ConvolutionOpInterface>(
              op.getOperation()) &&
          !isa<linalg::GenericOp>(op) &&
          // Stays named for loom-cpu-library-convolutions.
          !op->hasAttr(kLibraryAttr))
        named.push_back(op);
    });
    for (linalg::LinalgOp op : named) {
      rewriter.setInsertionPoint(op);
      (void)linalg::generalizeNamedOp(rewriter, op);
    }
    SmallVector<linalg::GenericOp> generics;
    getOperation().walk([&](linalg::GenericOp op) {
      if (!op->hasAttr(kLibraryAttr))
        generics.push_back(op);
    });
    for (linalg::GenericOp op : generics) {
      SmallVector<unsigned> order = contractionOrder(op);
      if (order.empty())
        continue;
      rewriter.setInsertionPoint(op);
      (void)linalg::interchangeGenericOp(rewriter, op, order);
    }
  }
};

} // namespace
} // namespace loom::cpu
