//===- BatchLoops.cpp - One batch element at a time on the CPU ------------===//

#include "loom/Target/CPU/Passes.h"

#include "TargetUtils.h"

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

/// Whether `loop` is a matrix product's row loop and the only one: `op`
/// multiplies and accumulates, the loop indexes the left operand and the
/// result but not the right one, and no other parallel loop of more than
/// one iteration does so. One batch element of such a loop is one row, a
/// matrix-vector product; the register tiles take rows known only at run
/// time as they are (VectorizeContractions), so the op is better left
/// whole. A convolution's batch keeps its image rows (the output's
/// spatial loops) and is split.
bool isOnlyRowLoop(linalg::LinalgOp op, unsigned loop) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !isMultiplyAccumulate(op))
    return false;
  AffineMap left = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  AffineMap right = op.getMatchingIndexingMap(op.getDpsInputOperand(1));
  AffineMap result = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  auto isRowLoop = [&](unsigned d) {
    return left.isFunctionOfDim(d) && result.isFunctionOfDim(d) &&
           !right.isFunctionOfDim(d);
  };
  if (!isRowLoop(loop))
    return false;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned d = 0; d < ranges.size(); ++d)
    if (d != loop && iterators[d] == utils::IteratorType::parallel &&
        !ShapedType::isDynamic(ranges[d]) && ranges[d] > 1 && isRowLoop(d))
      return false;
  return true;
}

/// The batch split of `op`, when it has one: a parallel loop every operand
/// either does not index or indexes alone in one dimension, such that one
/// batch element of every operand has static sizes, and some operand's
/// batch is a run-time size, and that is not a product's only row loop.
/// Only ops with a reduction loop unless `needsReduction` is false.
std::optional<BatchSplit> batchSplitOf(linalg::LinalgOp op,
                                       bool needsReduction = true) {
  if (!op.hasPureTensorSemantics() ||
      (needsReduction && op.getNumReductionLoops() == 0) ||
      op.getNumDpsInits() == 0)
    return std::nullopt;
  // A body that reads its loop indices would see the slice's.
  if (op.hasIndexSemantics())
    return std::nullopt;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned loop = 0; loop < iterators.size(); ++loop) {
    if (iterators[loop] != utils::IteratorType::parallel ||
        isOnlyRowLoop(op, loop))
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

/// Where one batch element of a tensor of `type` (indexed by the batch in
/// `dim`) lies, at `index`: offsets 0 but `index`, sizes static but 1 in
/// `dim`, unit strides. The same for the slice read and the slice written.
struct ElementSlice {
  SmallVector<OpFoldResult> offsets, sizes, strides;
};

ElementSlice elementSlice(OpBuilder &b, RankedTensorType type, unsigned dim,
                          Value index) {
  ElementSlice slice;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    bool batch = d == static_cast<int64_t>(dim);
    slice.offsets.push_back(batch ? OpFoldResult(index) : b.getIndexAttr(0));
    slice.sizes.push_back(b.getIndexAttr(batch ? 1 : type.getDimSize(d)));
    slice.strides.push_back(b.getIndexAttr(1));
  }
  return slice;
}

/// An op run one batch element at a time, and how.
struct Link {
  linalg::LinalgOp op;
  BatchSplit split;
};

/// Runs `chain` one batch element at a time in one loop at the last op's
/// place: each op on its slices, an op after the first reading the previous
/// one's slice where it read its result (the previous op's only use). The
/// last op's results are the loop's.
void runPerBatchElement(RewriterBase &rewriter, ArrayRef<Link> chain) {
  linalg::LinalgOp first = chain.front().op, last = chain.back().op;
  Location loc = first.getLoc();
  rewriter.setInsertionPoint(last);
  // The batch size: a run-time size of some operand indexed by the loop.
  Value batch;
  for (auto [operand, dim] :
       llvm::zip(first->getOpOperands(), chain.front().split.operandDims))
    if (dim &&
        cast<RankedTensorType>(operand.get().getType()).isDynamicDim(*dim)) {
      batch = tensor::DimOp::create(rewriter, loc, operand.get(), *dim);
      break;
    }
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  // An init that is a fill (a convolution's zeros) is filled one slice at a
  // time, just before the op: no pass over the whole tensor first, and a
  // library call sees the fill it may drop (it then overwrites).
  auto fillOf = [](Value value) {
    auto fill = value.getDefiningOp<linalg::FillOp>();
    return fill && fill->getResult(0).hasOneUse() ? fill : linalg::FillOp();
  };
  SmallVector<Value> inits;
  SmallVector<linalg::FillOp> fills;
  for (Value init : last.getDpsInits()) {
    linalg::FillOp fill = fillOf(init);
    inits.push_back(fill ? fill.getOutputs()[0] : init);
    fills.push_back(fill);
  }
  auto loop = scf::ForOp::create(
      rewriter, loc, zero, batch, one, inits,
      [&](OpBuilder &b, Location loc, Value index, ValueRange iterArgs) {
        auto slice = [&](Value value, std::optional<unsigned> dim) -> Value {
          if (!dim)
            return value;
          ElementSlice at = elementSlice(
              b, cast<RankedTensorType>(value.getType()), *dim, index);
          return tensor::ExtractSliceOp::create(b, loc, value, at.offsets,
                                                at.sizes, at.strides);
        };
        Operation *element = nullptr;
        for (auto [k, link] : llvm::enumerate(chain)) {
          linalg::LinalgOp op = link.op;
          bool isLast = k + 1 == chain.size();
          SmallVector<Value> operands;
          unsigned numInputs = op.getNumDpsInputs();
          for (auto [i, operand] : llvm::enumerate(op->getOpOperands())) {
            if (element && operand.get() == chain[k - 1].op->getResult(0)) {
              operands.push_back(element->getResult(0));
              continue;
            }
            std::optional<unsigned> dim = link.split.operandDims[i];
            if (!op.isDpsInit(&operand)) {
              operands.push_back(slice(operand.get(), dim));
              continue;
            }
            linalg::FillOp fill =
                isLast ? fills[i - numInputs] : fillOf(operand.get());
            Value target;
            if (isLast) {
              target = slice(iterArgs[i - numInputs], dim);
            } else if (fill) {
              auto type = cast<RankedTensorType>(operand.get().getType());
              SmallVector<int64_t> shape(type.getShape());
              shape[*dim] = 1;
              target =
                  tensor::EmptyOp::create(b, loc, shape, type.getElementType());
            } else {
              target = slice(operand.get(), dim);
            }
            if (fill)
              target = linalg::FillOp::create(b, loc, fill.getInputs(),
                                              ValueRange{target})
                           .getResult(0);
            operands.push_back(target);
          }
          SmallVector<Type> resultTypes;
          for (Value init : ArrayRef<Value>(operands).drop_front(numInputs))
            resultTypes.push_back(init.getType());
          element = clone(b, op.getOperation(), resultTypes, operands);
        }
        unsigned numInputs = last.getNumDpsInputs();
        SmallVector<Value> inserted;
        for (auto [i, result] : llvm::enumerate(element->getResults())) {
          unsigned dim = *chain.back().split.operandDims[numInputs + i];
          ElementSlice at = elementSlice(
              b, cast<RankedTensorType>(iterArgs[i].getType()), dim, index);
          inserted.push_back(tensor::InsertSliceOp::create(
              b, loc, result, iterArgs[i], at.offsets, at.sizes, at.strides));
        }
        scf::YieldOp::create(b, loc, inserted);
      });
  SmallVector<Operation *> replaced;
  for (Link link : chain)
    for (Value init : link.op.getDpsInits())
      if (linalg::FillOp fill = fillOf(init))
        replaced.push_back(fill);
  rewriter.replaceOp(last, loop.getResults());
  for (const Link &link : llvm::reverse(chain.drop_back()))
    rewriter.eraseOp(link.op);
  for (Operation *fill : replaced)
    rewriter.eraseOp(fill);
}

/// The elementwise op that is the only user of `op`'s only result and can
/// run one batch element at a time with it (in the same loop, slicing the
/// result where `op` writes it): a convolution's bias and activation.
std::optional<Link> batchedConsumer(const Link &producer) {
  linalg::LinalgOp op = producer.op;
  if (op->getNumResults() != 1 || !op->getResult(0).hasOneUse())
    return std::nullopt;
  OpOperand &use = *op->getResult(0).getUses().begin();
  auto consumer = dyn_cast<linalg::GenericOp>(use.getOwner());
  if (!consumer || consumer.isDpsInit(&use) ||
      consumer.getNumParallelLoops() != consumer.getNumLoops() ||
      consumer.getNumDpsInits() != 1 || consumer.hasIndexSemantics())
    return std::nullopt;
  std::optional<BatchSplit> split =
      batchSplitOf(consumer, /*needsReduction=*/false);
  unsigned producedDim =
      *producer.split.operandDims[op.getDpsInitOperand(0)->getOperandNumber()];
  if (!split || split->operandDims[use.getOperandNumber()] != producedDim)
    return std::nullopt;
  return Link{consumer, std::move(*split)};
}
struct LoomCPUBatchLoopsPass
    : impl::LoomCPUBatchLoopsPassBase<LoomCPUBatchLoopsPass> {
  void runOnOperation() override {
    SmallVector<SmallVector<Link, 2>> chains;
    DenseSet<Operation *> taken;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (taken.count(op))
        return;
      std::optional<BatchSplit> split = batchSplitOf(op);
      if (!split)
        return;
      SmallVector<Link, 2> &chain = chains.emplace_back();
      chain.push_back(Link{op, std::move(*split)});
      if (std::optional<Link> consumer = batchedConsumer(chain.back())) {
        taken.insert(consumer->op);
        chain.push_back(std::move(*consumer));
      }
    });
    IRRewriter rewriter(&getContext());
    for (const SmallVector<Link, 2> &chain : chains)
      runPerBatchElement(rewriter, chain);
  }
};

} // namespace
} // namespace loom::cpu
