//===- ParallelizeLoops.cpp - Large linalg ops as parallel chunk loops ----===//

#include "TargetUtils.h"
#include "loom/Target/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
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

/// The loops to split when some loop's range is known only at run time:
/// the outermost two parallel loops that split the outputs and have a
/// run-time range or a static one of two or more. Two, so that one of
/// them has rows to share when the other has one at run time (a batch of
/// one in a prompt, one position per sequence in a decoding step).
SmallVector<unsigned> runTimeParallelLoops(linalg::LinalgOp op,
                                           ArrayRef<int64_t> ranges) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<unsigned> dims;
  for (unsigned dim = 0; dim < ranges.size() && dims.size() < 2; ++dim)
    if (iterators[dim] == utils::IteratorType::parallel &&
        (ShapedType::isDynamic(ranges[dim]) || ranges[dim] >= 2) &&
        splitsOutputs(op, dim))
      dims.push_back(dim);
  return dims;
}

/// `op`, some of whose loop ranges are known only at run time, as
///   if (points >= parallelElements && rows >= 2) { chunks in parallel }
///   else { op }
/// where the chunks are tiles of the loops `dims`, sized at run time as
/// the static case sizes them at compile time: whole rows of the loops
/// taken together (the second loop's rows inside the first's), at least
/// `chunkElements` points each, two or more chunks.
LogicalResult splitAtRunTime(IRRewriter &rewriter, linalg::LinalgOp op,
                             ArrayRef<unsigned> dims, int64_t parallelElements,
                             int64_t chunkElements) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  auto index = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(rewriter, loc, value);
  };
  auto mul = [&](Value a, Value b) -> Value {
    return arith::MulIOp::create(rewriter, loc, a, b);
  };
  auto ceilDiv = [&](Value a, Value b) -> Value {
    return arith::CeilDivUIOp::create(rewriter, loc, a, b);
  };
  auto atLeast = [&](Value a, Value b) -> Value {
    return arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::uge, a,
                                 b);
  };
  SmallVector<Value> sizes;
  for (Range range : op.createLoopRanges(rewriter, loc))
    sizes.push_back(getValueOrCreateConstantIndexOp(rewriter, loc, range.size));
  Value points = index(1);
  for (Value size : sizes)
    points = mul(points, size);
  // Rows: the split loops' iterations taken together.
  Value inner = dims.size() == 2 ? sizes[dims[1]] : index(1);
  Value rows = mul(sizes[dims[0]], inner);
  Value split = arith::AndIOp::create(rewriter, loc,
                                      atLeast(points, index(parallelElements)),
                                      atLeast(rows, index(2)));
  auto ifOp = scf::IfOp::create(rewriter, loc, split, /*withElseRegion=*/true);
  rewriter.setInsertionPoint(ifOp.elseBlock()->getTerminator());
  rewriter.clone(*op);
  rewriter.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  // Rows per chunk, as in the static case.
  Value perRow = arith::MaxUIOp::create(
      rewriter, loc, arith::DivUIOp::create(rewriter, loc, points, rows),
      index(1));
  Value chunkRows = arith::MinUIOp::create(
      rewriter, loc,
      arith::MaxUIOp::create(
          rewriter, loc,
          ceilDiv(index(std::max<int64_t>(chunkElements, 1)), perRow),
          index(1)),
      ceilDiv(rows, index(2)));
  chunkRows = ceilDiv(rows, ceilDiv(rows, chunkRows));
  SmallVector<Value> tileSizes(sizes.size(), index(0));
  if (dims.size() == 1) {
    tileSizes[dims[0]] = chunkRows;
  } else {
    // Whole rows of the inner loop where a chunk holds as many, else part
    // of one row of the outer loop.
    Value wholeInner = atLeast(chunkRows, inner);
    tileSizes[dims[0]] = arith::SelectOp::create(
        rewriter, loc, wholeInner,
        arith::DivUIOp::create(rewriter, loc, chunkRows, inner), index(1));
    tileSizes[dims[1]] =
        arith::SelectOp::create(rewriter, loc, wholeInner, inner, chunkRows);
  }
  auto chunked = cast<linalg::LinalgOp>(rewriter.clone(*op));
  linalg::LinalgTilingOptions options;
  options
      .setTileSizeComputationFunction(
          [&](OpBuilder &, Operation *) { return tileSizes; })
      .setLoopType(linalg::LinalgTilingLoopType::ParallelLoops);
  rewriter.setInsertionPoint(chunked);
  FailureOr<linalg::TiledLinalgOp> tiled =
      linalg::tileLinalgOp(rewriter, chunked, options);
  if (failed(tiled))
    return failure();
  rewriter.eraseOp(chunked);
  rewriter.eraseOp(op);
  return success();
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
      if (llvm::any_of(ranges, ShapedType::isDynamic)) {
        SmallVector<unsigned> dims = runTimeParallelLoops(op, ranges);
        if (dims.empty())
          continue;
        if (failed(splitAtRunTime(rewriter, op, dims, parallelElements,
                                  chunkElements))) {
          op.emitError("could not split the loop for threads");
          return signalPassFailure();
        }
        changed = true;
        continue;
      }
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
