//===- BatchLoops.cpp - One batch element at a time on the CPU ------------===//

#include "loom/Target/CPU/Passes.h"

#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/PatternMatch.h"

namespace loom::cpu {
#define GEN_PASS_DEF_LOOMCPUBATCHLOOPSPASS
#include "loom/Target/CPU/Passes.h.inc"
} // namespace loom::cpu

using namespace mlir;

namespace loom::cpu {
namespace {

/// How `op` runs one batch element at a time: its batch loop, and per
/// operand the dimension that loop indexes (nullopt: it does not index the
/// operand).
struct BatchSplit {
  unsigned loop;
  SmallVector<std::optional<unsigned>> operandDims;
};

/// The dimension of an operand whose indexing `map` reads loop `loop`
/// alone, nullopt when `map` does not use the loop, or failure when it
/// uses it otherwise (with other loops, or in two dimensions).
FailureOr<std::optional<unsigned>> dimensionOfLoop(AffineMap map,
                                                   unsigned loop) {
  std::optional<unsigned> found;
  for (auto [i, expr] : llvm::enumerate(map.getResults())) {
    if (!expr.isFunctionOfDim(loop))
      continue;
    auto dim = dyn_cast<AffineDimExpr>(expr);
    if (found || !dim)
      return failure();
    found = i;
  }
  return found;
}

/// Whether slicing `type` to size 1 in dimension `dim` (if any) leaves every
/// size static, and whether that dimension was the run-time one.
bool staticOnceSliced(RankedTensorType type, std::optional<unsigned> dim,
                      bool &slicesRunTimeSize) {
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (!type.isDynamicDim(d))
      continue;
    if (!dim || d != static_cast<int64_t>(*dim))
      return false;
    slicesRunTimeSize = true;
  }
  return true;
}

/// The batch split of `op`, when it has one: a parallel loop every operand
/// either does not index or indexes alone in one dimension, such that one
/// batch element of every operand has static sizes, and some operand's
/// batch is a run-time size.
std::optional<BatchSplit> batchSplitOf(linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumReductionLoops() == 0 ||
      op.getNumDpsInits() == 0)
    return std::nullopt;
  // A body that reads its loop indices would see the slice's.
  if (op.hasIndexSemantics())
    return std::nullopt;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned loop = 0; loop < iterators.size(); ++loop) {
    if (iterators[loop] != utils::IteratorType::parallel)
      continue;
    BatchSplit split{loop, {}};
    bool fits = true, slicesRunTimeSize = false, initIndexed = true;
    for (OpOperand &operand : op->getOpOperands()) {
      auto type = dyn_cast<RankedTensorType>(operand.get().getType());
      FailureOr<std::optional<unsigned>> dim =
          dimensionOfLoop(op.getMatchingIndexingMap(&operand), loop);
      if (!type || failed(dim) ||
          !staticOnceSliced(type, *dim, slicesRunTimeSize)) {
        fits = false;
        break;
      }
      // Every result must be split along the loop: each iteration writes
      // its own slice.
      if (op.isDpsInit(&operand) && !dim->has_value())
        initIndexed = false;
      split.operandDims.push_back(*dim);
    }
    if (fits && slicesRunTimeSize && initIndexed)
      return split;
  }
  return std::nullopt;
}

/// One batch element of `value` (a tensor indexed by the batch in `dim`)
/// at `index`: offsets 0 but `index`, sizes static but 1 in `dim`.
SmallVector<OpFoldResult> sliceOffsets(OpBuilder &b, RankedTensorType type,
                                       unsigned dim, Value index) {
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
  offsets[dim] = index;
  return offsets;
}

SmallVector<OpFoldResult> sliceSizes(OpBuilder &b, RankedTensorType type,
                                     unsigned dim) {
  SmallVector<OpFoldResult> sizes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    sizes.push_back(b.getIndexAttr(
        d == static_cast<int64_t>(dim) ? 1 : type.getDimSize(d)));
  return sizes;
}

void runPerBatchElement(RewriterBase &rewriter, linalg::LinalgOp op,
                        const BatchSplit &split) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  // The batch size: a run-time size of some operand indexed by the loop.
  Value batch;
  for (auto [operand, dim] : llvm::zip(op->getOpOperands(), split.operandDims))
    if (dim &&
        cast<RankedTensorType>(operand.get().getType()).isDynamicDim(*dim)) {
      batch = tensor::DimOp::create(rewriter, loc, operand.get(), *dim);
      break;
    }
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  SmallVector<Value> inits = op.getDpsInits();
  auto loop = scf::ForOp::create(
      rewriter, loc, zero, batch, one, inits,
      [&](OpBuilder &b, Location loc, Value index, ValueRange iterArgs) {
        auto slice = [&](Value value, std::optional<unsigned> dim) -> Value {
          if (!dim)
            return value;
          auto type = cast<RankedTensorType>(value.getType());
          SmallVector<OpFoldResult> ones(type.getRank(), b.getIndexAttr(1));
          return tensor::ExtractSliceOp::create(
              b, loc, value, sliceOffsets(b, type, *dim, index),
              sliceSizes(b, type, *dim), ones);
        };
        SmallVector<Value> operands;
        unsigned numInputs = op.getNumDpsInputs();
        for (auto [i, operand] : llvm::enumerate(op->getOpOperands())) {
          Value value =
              op.isDpsInit(&operand) ? iterArgs[i - numInputs] : operand.get();
          operands.push_back(slice(value, split.operandDims[i]));
        }
        SmallVector<Type> resultTypes;
        for (Value init : ArrayRef<Value>(operands).drop_front(numInputs))
          resultTypes.push_back(init.getType());
        Operation *element = clone(b, op.getOperation(), resultTypes, operands);
        SmallVector<Value> inserted;
        for (auto [i, result] : llvm::enumerate(element->getResults())) {
          unsigned dim = *split.operandDims[numInputs + i];
          auto type = cast<RankedTensorType>(iterArgs[i].getType());
          SmallVector<OpFoldResult> ones(type.getRank(), b.getIndexAttr(1));
          inserted.push_back(tensor::InsertSliceOp::create(
              b, loc, result, iterArgs[i], sliceOffsets(b, type, dim, index),
              sliceSizes(b, type, dim), ones));
        }
        scf::YieldOp::create(b, loc, inserted);
      });
  rewriter.replaceOp(op, loop.getResults());
}

struct LoomCPUBatchLoopsPass
    : impl::LoomCPUBatchLoopsPassBase<LoomCPUBatchLoopsPass> {
  void runOnOperation() override {
    SmallVector<std::pair<linalg::LinalgOp, BatchSplit>> splits;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (std::optional<BatchSplit> split = batchSplitOf(op))
        splits.emplace_back(op, std::move(*split));
    });
    IRRewriter rewriter(&getContext());
    for (auto &[op, split] : splits)
      runPerBatchElement(rewriter, op, split);
  }
};

} // namespace
} // namespace loom::cpu
