//===- VectorizeCopies.cpp - Row copies as vector transfers ---------------===//

#include "loom/Target/CPU/Passes.h"

#include "HostVectors.h"
#include "TargetUtils.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"

namespace loom::cpu {
#define GEN_PASS_DEF_LOOMCPUVECTORIZECOPIESPASS
#include "loom/Target/CPU/Passes.h.inc"
} // namespace loom::cpu

using namespace mlir;

namespace loom::cpu {
namespace {

/// Whether `op` only copies its input into its output along loops that are
/// the output's dimensions, the innermost walking both contiguously.
bool isRowCopy(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 1 ||
      op.getNumDpsInits() != 1 || op.getNumReductionLoops() != 0)
    return false;
  if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation())) {
    Block *body = generic.getBody();
    if (!llvm::hasSingleElement(*body) ||
        body->getTerminator()->getOperand(0) != body->getArgument(0))
      return false;
  } else if (!isa<linalg::CopyOp>(op.getOperation())) {
    return false;
  }
  Value in = op.getDpsInputs()[0], out = op.getDpsInits()[0];
  if (getElementTypeOrSelf(in.getType()) != getElementTypeOrSelf(out.getType()))
    return false;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ranges.empty() || llvm::any_of(ranges, ShapedType::isDynamic) ||
      ranges.back() < 4)
    return false;
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  AffineMap inMap = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  if (!outMap.isIdentity() || inMap.getNumResults() == 0)
    return false;
  if (!innermostContiguous(in.getType()) || !innermostContiguous(out.getType()))
    return false;
  // The innermost loop appears in the input's innermost index only, with a
  // coefficient of one.
  unsigned inner = ranges.size() - 1;
  MLIRContext *ctx = op.getContext();
  for (AffineExpr expr : inMap.getResults().drop_back())
    if (expr.isFunctionOfDim(inner))
      return false;
  AffineExpr last = inMap.getResults().back();
  AffineExpr rest = simplifyAffineExpr(last - getAffineDimExpr(inner, ctx),
                                       inMap.getNumDims(), 0);
  return last.isFunctionOfDim(inner) && !rest.isFunctionOfDim(inner);
}

class LoomCPUVectorizeCopiesPass
    : public impl::LoomCPUVectorizeCopiesPassBase<LoomCPUVectorizeCopiesPass> {
public:
  using LoomCPUVectorizeCopiesPassBase::LoomCPUVectorizeCopiesPassBase;

  void runOnOperation() override {
    unsigned bits =
        vectorBits ? unsigned(vectorBits) : hostVectorRegisters().first;
    SmallVector<linalg::LinalgOp> copies;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (isRowCopy(op))
        copies.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : copies) {
      rewriter.setInsertionPoint(op);
      emit(rewriter, op, bits);
      rewriter.eraseOp(op);
    }
  }

private:
  void emit(OpBuilder &b, linalg::LinalgOp op, unsigned bits) {
    Location loc = op.getLoc();
    Value in = op.getDpsInputs()[0], out = op.getDpsInits()[0];
    AffineMap inMap = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
    Type element = getElementTypeOrSelf(out.getType());
    int64_t width =
        std::max<int64_t>(1, 2 * bits / element.getIntOrFloatBitWidth());
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    SmallVector<Value> ivs(ranges.size());
    int64_t bytes = element.getIntOrFloatBitWidth() / 8;
    for (int64_t range : ranges)
      bytes = bytes > INT64_MAX / std::max<int64_t>(range, 1) ? INT64_MAX
                                                              : bytes * range;
    // Nested parallel loops would only add forks: the copies of
    // loom-cpu-vectorize-contractions' panels may be inside one.
    bool parallelPending = parallelBytes > 0 && bytes >= parallelBytes &&
                           !op->getParentOfType<scf::ParallelOp>();
    auto index = [&](OpBuilder &b, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    auto forRange = [&](OpBuilder &b, int64_t lo, int64_t hi, int64_t step,
                        llvm::function_ref<void(OpBuilder &, Value)> body) {
      if (hi <= lo)
        return;
      if (hi - lo <= step)
        return body(b, index(b, lo));
      auto loop = scf::ForOp::create(b, loc, index(b, lo), index(b, hi),
                                     index(b, step));
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(loop.getBody()->getTerminator());
      body(b, loop.getInductionVar());
    };
    auto piece = [&](OpBuilder &b, int64_t w) {
      SmallVector<Value> inIndices;
      for (unsigned i = 0; i < inMap.getNumResults(); ++i)
        inIndices.push_back(
            affine::AffineApplyOp::create(b, loc, inMap.getSubMap({i}), ivs));
      auto type = VectorType::get({w}, element);
      Value row = vector::TransferReadOp::create(
          b, loc, type, in, inIndices, /*padding=*/std::nullopt,
          AffineMap::getMinorIdentityMap(inMap.getNumResults(), 1,
                                         b.getContext()),
          ArrayRef<bool>{true});
      vector::TransferWriteOp::create(b, loc, row, out, ivs,
                                      ArrayRef<bool>{true});
    };
    std::function<void(OpBuilder &, unsigned)> loops = [&](OpBuilder &b,
                                                           unsigned dim) {
      if (dim + 1 < ranges.size()) {
        // The output is indexed by the loops themselves: iterations of an
        // outer loop write disjoint rows and may run on several threads.
        if (parallelPending && ranges[dim] >= 2) {
          parallelPending = false;
          auto loop = scf::ParallelOp::create(b, loc, ValueRange{index(b, 0)},
                                              ValueRange{index(b, ranges[dim])},
                                              ValueRange{index(b, 1)});
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(loop.getBody()->getTerminator());
          ivs[dim] = loop.getInductionVars()[0];
          loops(b, dim + 1);
          return;
        }
        forRange(b, 0, ranges[dim], 1, [&](OpBuilder &b, Value iv) {
          ivs[dim] = iv;
          loops(b, dim + 1);
        });
        return;
      }
      int64_t start = 0, length = ranges[dim];
      for (int64_t w = width; w >= 1; w /= 2) {
        int64_t end = start + (length - start) / w * w;
        forRange(b, start, end, w, [&](OpBuilder &b, Value iv) {
          ivs[dim] = iv;
          piece(b, w);
        });
        start = end;
      }
    };
    loops(b, 0);
  }
};

} // namespace
} // namespace loom::cpu
