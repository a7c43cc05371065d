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

/// The largest step between the input elements of neighbouring output
/// elements that a copy reads as one contiguous piece and compacts with a
/// shuffle (a strided convolution's window: 2; rarely more than 4).
constexpr int64_t kMaxShuffledStride = 4;

/// When `op` only copies its input into its output along loops that are
/// the output's dimensions, the innermost walking the output contiguously
/// and the input's innermost dimension with a constant step of at most
/// kMaxShuffledStride: that step (1 for a contiguous row).
std::optional<int64_t> rowCopyStride(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 1 ||
      op.getNumDpsInits() != 1 || op.getNumReductionLoops() != 0)
    return std::nullopt;
  if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation())) {
    Block *body = generic.getBody();
    if (!llvm::hasSingleElement(*body) ||
        body->getTerminator()->getOperand(0) != body->getArgument(0))
      return std::nullopt;
  } else if (!isa<linalg::CopyOp>(op.getOperation())) {
    return std::nullopt;
  }
  Value in = op.getDpsInputs()[0], out = op.getDpsInits()[0];
  if (getElementTypeOrSelf(in.getType()) != getElementTypeOrSelf(out.getType()))
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ranges.empty() || llvm::any_of(ranges, ShapedType::isDynamic) ||
      ranges.back() < 4)
    return std::nullopt;
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  AffineMap inMap = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  if (!outMap.isIdentity() || inMap.getNumResults() == 0)
    return std::nullopt;
  if (!innermostContiguous(in.getType()) || !innermostContiguous(out.getType()))
    return std::nullopt;
  // The innermost loop appears in the input's innermost index only, with a
  // constant coefficient: the stride.
  unsigned inner = ranges.size() - 1;
  MLIRContext *ctx = op.getContext();
  for (AffineExpr expr : inMap.getResults().drop_back())
    if (expr.isFunctionOfDim(inner))
      return std::nullopt;
  AffineExpr last = inMap.getResults().back();
  if (!last.isFunctionOfDim(inner))
    return std::nullopt;
  for (int64_t stride = 1; stride <= kMaxShuffledStride; ++stride) {
    AffineExpr rest = simplifyAffineExpr(
        last - getAffineDimExpr(inner, ctx) * stride, inMap.getNumDims(), 0);
    if (!rest.isFunctionOfDim(inner))
      return stride;
  }
  return std::nullopt;
}

class LoomCPUVectorizeCopiesPass
    : public impl::LoomCPUVectorizeCopiesPassBase<LoomCPUVectorizeCopiesPass> {
public:
  using LoomCPUVectorizeCopiesPassBase::LoomCPUVectorizeCopiesPassBase;

  void runOnOperation() override {
    unsigned bits =
        vectorBits ? unsigned(vectorBits) : hostVectorRegisters().first;
    SmallVector<std::pair<linalg::LinalgOp, int64_t>> copies;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (std::optional<int64_t> stride = rowCopyStride(op))
        copies.emplace_back(op, *stride);
    });
    IRRewriter rewriter(&getContext());
    for (auto [op, stride] : copies) {
      rewriter.setInsertionPoint(op);
      emit(rewriter, op, bits, stride);
      rewriter.eraseOp(op);
    }
  }

private:
  /// `stride`: the step between the input elements of neighbouring output
  /// elements in the innermost loop.
  void emit(OpBuilder &b, linalg::LinalgOp op, unsigned bits, int64_t stride) {
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
      bytes = saturatingMultiply(bytes, std::max<int64_t>(range, 1));
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
      // A strided row is read as the contiguous run from its first
      // element to its last and compacted by a shuffle: LLVM lowers it to
      // a few permutes, where element-wise loads would be scalar moves or
      // a gather.
      Value row;
      if (stride == 1)
        row = vector::TransferReadOp::create(
            b, loc, VectorType::get({w}, element), in, inIndices,
            /*padding=*/std::nullopt,
            AffineMap::getMinorIdentityMap(inMap.getNumResults(), 1,
                                           b.getContext()),
            ArrayRef<bool>{true});
      else
        row = readStridedRow(b, loc, in, inIndices, w, stride);
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
