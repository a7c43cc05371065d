//===- ParallelizeLoops.cpp - Large linalg ops as parallel chunk loops ----===//

#include "loom/Target/CPU/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/CSE.h"

namespace loom::cpu {
#define GEN_PASS_DEF_LOOMCPUPARALLELIZELOOPSPASS
#include "loom/Target/CPU/Passes.h.inc"
} // namespace loom::cpu

using namespace mlir;

namespace loom::cpu {
namespace {

int64_t saturatingProduct(ArrayRef<int64_t> values) {
  int64_t product = 1;
  for (int64_t v : values) {
    if (v == 0)
      return 0;
    product = product > INT64_MAX / v ? INT64_MAX : product * v;
  }
  return product;
}

/// Whether every output of `op` is indexed by loop `dim` itself, so that
/// iterations of that loop write disjoint elements, and no input is an
/// output's buffer read at other elements than the ones written.
bool splitsOutputs(linalg::LinalgOp op, unsigned dim) {
  AffineExpr expr = getAffineDimExpr(dim, op.getContext());
  for (OpOperand &init : op.getDpsInitsMutable())
    if (!llvm::is_contained(op.getMatchingIndexingMap(&init).getResults(),
                            expr))
      return false;
  for (OpOperand *input : op.getDpsInputOperands())
    for (OpOperand &init : op.getDpsInitsMutable())
      if (input->get() == init.get() &&
          op.getMatchingIndexingMap(input) != op.getMatchingIndexingMap(&init))
        return false;
  return true;
}

/// The loop to split: the outermost parallel loop of two or more
/// iterations that splits the outputs. Never a reduction loop, so every
/// output element is computed as on one thread.
std::optional<unsigned> parallelLoop(linalg::LinalgOp op,
                                     ArrayRef<int64_t> ranges) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned dim = 0; dim < ranges.size(); ++dim)
    if (iterators[dim] == utils::IteratorType::parallel && ranges[dim] >= 2 &&
        splitsOutputs(op, dim))
      return dim;
  return std::nullopt;
}

class LoomCPUParallelizeLoopsPass
    : public impl::LoomCPUParallelizeLoopsPassBase<
          LoomCPUParallelizeLoopsPass> {
public:
  using LoomCPUParallelizeLoopsPassBase::LoomCPUParallelizeLoopsPassBase;

  void runOnOperation() override {
    if (parallelElements <= 0)
      return;
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) {
      // Nested parallel loops would only add forks.
      if (op.hasPureBufferSemantics() && op.getNumLoops() > 0 &&
          !op->getParentOfType<scf::ParallelOp>())
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    bool changed = false;
    for (linalg::LinalgOp op : ops) {
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      if (llvm::any_of(ranges, ShapedType::isDynamic))
        continue;
      int64_t points = saturatingProduct(ranges);
      if (points < parallelElements)
        continue;
      std::optional<unsigned> dim = parallelLoop(op, ranges);
      if (!dim)
        continue;
      // Chunks of whole rows of the split loop, at least chunk-elements
      // points each, two or more of them, as even as they can be.
      int64_t range = ranges[*dim];
      int64_t perRow = points / range;
      int64_t rows = llvm::divideCeil(std::max<int64_t>(chunkElements, 1),
                                      std::max<int64_t>(perRow, 1));
      rows = std::clamp<int64_t>(rows, 1, llvm::divideCeil(range, 2));
      int64_t chunks = llvm::divideCeil(range, rows);
      rows = llvm::divideCeil(range, chunks);
      SmallVector<int64_t> tileSizes(ranges.size(), 0);
      tileSizes[*dim] = rows;
      linalg::LinalgTilingOptions options;
      options.setTileSizes(tileSizes).setLoopType(
          linalg::LinalgTilingLoopType::ParallelLoops);
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::TiledLinalgOp> tiled =
          linalg::tileLinalgOp(rewriter, op, options);
      if (failed(tiled)) {
        op.emitError("could not split the loop for threads");
        return signalPassFailure();
      }
      rewriter.eraseOp(op);
      changed = true;
    }
    // Tiling creates its constants anew for each op.
    if (changed) {
      DominanceInfo dominance;
      eliminateCommonSubExpressions(rewriter, dominance, getOperation());
    }
  }
};

} // namespace
} // namespace loom::cpu
