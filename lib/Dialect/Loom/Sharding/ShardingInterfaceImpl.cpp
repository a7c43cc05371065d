//===- ShardingInterfaceImpl.cpp - loom ops in the shard dialect ----------===//
//
// Every loom op describes itself to the sharding framework as a loop nest:
// one loop per independent dimension, and for each operand and result the
// loop each of its dimensions runs over (upstream's indexing maps, restricted
// to plain dimensions). Propagation splits loops; partitioning clones the op
// on the local pieces, fixes what spells out a shape, and all-reduces
// contractions and reductions whose reduced loop was split.
//
// Dimensions that must stay whole (a softmax axis, normalized axes, the keys
// of attention, broadcast dimensions, ...) get a loop of their own that is
// "pinned": it is never split, so an operand split there is gathered first.
// An op without a rule pins every dimension and runs replicated.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/Sharding/ShardingInterfaceImpl.h"

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/IR/ShapeValues.h"
#include "loom/Dialect/Loom/Sharding/ExpertParallel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterface.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterfaceImpl.h"
#include "mlir/Dialect/Shard/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/TypeSwitch.h"

#include <functional>
#include <numeric>

using namespace mlir;
using namespace loom;
using shard::GridAxis;
using shard::ReductionKind;
using shard::Sharding;
using shard::ShardingOption;
using utils::IteratorType;

namespace {

/// The loop nest an op presents to the sharding framework.
struct LoopNest {
  SmallVector<IteratorType> iterators;
  /// The combiner of each loop (meaningful for reduction loops).
  SmallVector<ReductionKind> kinds;
  /// Loops that are never split.
  SmallVector<bool> pinned;
  /// For each operand, then each result: the loop of each dimension.
  SmallVector<SmallVector<int64_t>> tensors;
  /// (tensor, dimension) pairs that follow their loop's split only where it
  /// divides them, and otherwise stay whole (the op's partitioning adapts),
  /// as long as `acceptsWhole(device count)` holds.
  SmallVector<std::pair<int64_t, int64_t>> optional;
  std::function<bool(int64_t)> acceptsWhole;

  bool isOptional(int64_t tensor, int64_t dim) const {
    return llvm::is_contained(optional, std::make_pair(tensor, dim));
  }

  int64_t addLoop(IteratorType type = IteratorType::parallel, bool pin = false,
                  ReductionKind kind = ReductionKind::Sum) {
    iterators.push_back(type);
    kinds.push_back(kind);
    pinned.push_back(pin);
    return iterators.size() - 1;
  }
  int64_t addPinnedLoop() { return addLoop(IteratorType::parallel, true); }

  /// Gives every dimension of `value` a pinned loop of its own.
  void addPinnedTensor(Value value) {
    SmallVector<int64_t> loops;
    for (int64_t i = 0, e = rankOf(value); i < e; ++i)
      loops.push_back(addPinnedLoop());
    tensors.push_back(loops);
  }

  static int64_t rankOf(Value value) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    return type ? type.getRank() : 0;
  }

  SmallVector<AffineMap> maps(MLIRContext *ctx) const {
    SmallVector<AffineMap> result;
    for (ArrayRef<int64_t> loops : tensors) {
      SmallVector<AffineExpr> exprs;
      for (int64_t loop : loops)
        exprs.push_back(getAffineDimExpr(loop, ctx));
      result.push_back(AffineMap::get(iterators.size(), 0, exprs, ctx));
    }
    return result;
  }
};

ArrayRef<int64_t> shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

/// Every operand and result dimension on a pinned loop of its own: the op
/// runs replicated.
LoopNest replicated(Operation *op) {
  LoopNest nest;
  for (Value operand : op->getOperands())
    nest.addPinnedTensor(operand);
  for (Value result : op->getResults())
    nest.addPinnedTensor(result);
  return nest;
}

/// The loop of dimension `dim` of a tensor of shape `own` broadcast (numpy
/// style, aligned to the right) against `shape`, whose dimensions run over
/// `loops`: the shared loop when the sizes are the same static size, else a
/// pinned loop.
int64_t broadcastLoop(LoopNest &nest, ArrayRef<int64_t> own, int64_t dim,
                      ArrayRef<int64_t> shape, ArrayRef<int64_t> loops) {
  int64_t target = dim + static_cast<int64_t>(shape.size()) -
                   static_cast<int64_t>(own.size());
  if (target < 0 || ShapedType::isDynamic(own[dim]) ||
      own[dim] != shape[target])
    return nest.addPinnedLoop();
  return loops[target];
}

/// Appends `value` broadcast against `shape` (running over `loops`).
void addBroadcastTensor(LoopNest &nest, Value value, ArrayRef<int64_t> shape,
                        ArrayRef<int64_t> loops) {
  SmallVector<int64_t> dims;
  for (int64_t i = 0, e = LoopNest::rankOf(value); i < e; ++i)
    dims.push_back(broadcastLoop(nest, shapeOf(value), i, shape, loops));
  nest.tensors.push_back(dims);
}

/// Elementwise ops, with or without broadcasting: one loop per result
/// dimension, `pinnedDim` (if any) kept whole.
LoopNest elementwise(Operation *op, std::optional<int64_t> pinnedDim = {}) {
  LoopNest nest;
  ArrayRef<int64_t> shape = shapeOf(op->getResult(0));
  SmallVector<int64_t> loops;
  for (int64_t i = 0, e = shape.size(); i < e; ++i)
    loops.push_back(nest.addLoop(IteratorType::parallel, pinnedDim == i));
  for (Value operand : op->getOperands())
    addBroadcastTensor(nest, operand, shape, loops);
  for (size_t i = 0; i < op->getNumResults(); ++i)
    nest.tensors.push_back(loops);
  return nest;
}

/// Normalizations over the trailing dimensions from `axis`: those are kept
/// whole; the per-feature operands broadcast against the input.
LoopNest normalization(Operation *op, int64_t axis) {
  LoopNest nest;
  ArrayRef<int64_t> shape = shapeOf(op->getOperand(0));
  int64_t rank = shape.size();
  if (axis < 0)
    axis += rank;
  SmallVector<int64_t> loops;
  for (int64_t i = 0; i < rank; ++i)
    loops.push_back(nest.addLoop(IteratorType::parallel, i >= axis));
  nest.tensors.push_back(loops);
  for (Value operand : op->getOperands().drop_front())
    addBroadcastTensor(nest, operand, shape, loops);
  nest.tensors.push_back(loops);
  return nest;
}

/// Per-channel normalizations on `[N, C, spatial...]`: channel operands run
/// over the channel loop; with `pinSpatial` the spatial axes stay whole.
LoopNest channelNormalization(Operation *op, bool pinSpatial) {
  LoopNest nest;
  int64_t rank = LoopNest::rankOf(op->getOperand(0));
  SmallVector<int64_t> loops;
  for (int64_t i = 0; i < rank; ++i)
    loops.push_back(nest.addLoop(IteratorType::parallel, pinSpatial && i >= 2));
  nest.tensors.push_back(loops);
  for (Value operand : op->getOperands().drop_front()) {
    if (LoopNest::rankOf(operand) == 1 && rank >= 2 &&
        shapeOf(operand)[0] == shapeOf(op->getOperand(0))[1])
      nest.tensors.push_back({loops[1]});
    else
      nest.addPinnedTensor(operand);
  }
  nest.tensors.push_back(loops);
  return nest;
}

/// numpy matmul with both operands at least 2-D: batch loops, M, N and the
/// contraction K, whose split leaves partial sums.
std::optional<LoopNest> matmul(MatMulOp op) {
  Value lhs = op.getLhs(), rhs = op.getRhs();
  int64_t lhsRank = LoopNest::rankOf(lhs), rhsRank = LoopNest::rankOf(rhs);
  if (lhsRank < 2 || rhsRank < 2)
    return std::nullopt;
  ArrayRef<int64_t> shape = shapeOf(op.getResult());
  int64_t rank = shape.size();
  LoopNest nest;
  SmallVector<int64_t> loops;
  for (int64_t i = 0; i < rank; ++i)
    loops.push_back(nest.addLoop());
  int64_t k = nest.addLoop(IteratorType::reduction, false, ReductionKind::Sum);
  auto batch = [&](Value value, int64_t dim) {
    return broadcastLoop(nest, shapeOf(value).drop_back(2), dim,
                         shape.drop_back(2),
                         ArrayRef<int64_t>(loops).drop_back(2));
  };
  SmallVector<int64_t> lhsLoops, rhsLoops;
  for (int64_t i = 0; i < lhsRank - 2; ++i)
    lhsLoops.push_back(batch(lhs, i));
  lhsLoops.append({loops[rank - 2], k});
  for (int64_t i = 0; i < rhsRank - 2; ++i)
    rhsLoops.push_back(batch(rhs, i));
  rhsLoops.append({k, loops[rank - 1]});
  nest.tensors = {lhsLoops, rhsLoops, loops};
  return nest;
}

/// Reductions over `axes` (all when empty), combined with `kind` when split.
LoopNest reduction(Operation *op, ArrayRef<int64_t> axes, bool keepdims,
                   ReductionKind kind, bool splittable) {
  LoopNest nest;
  int64_t rank = LoopNest::rankOf(op->getOperand(0));
  SmallVector<int64_t> loops, resultLoops;
  for (int64_t i = 0; i < rank; ++i) {
    bool reduced = axes.empty() || llvm::is_contained(axes, i);
    if (!reduced) {
      loops.push_back(nest.addLoop());
      resultLoops.push_back(loops.back());
      continue;
    }
    loops.push_back(nest.addLoop(IteratorType::reduction, !splittable, kind));
    if (keepdims)
      resultLoops.push_back(nest.addPinnedLoop());
  }
  nest.tensors.push_back(loops);
  for (Value operand : op->getOperands().drop_front())
    nest.addPinnedTensor(operand);
  for (size_t i = 0; i < op->getNumResults(); ++i)
    nest.tensors.push_back(resultLoops);
  return nest;
}

/// Ops that only regroup dimensions (reshape, squeeze, unsqueeze, expand
/// without broadcasting): dimensions are grouped where the products of
/// sizes agree, and a group can be split on its leading non-unit dimension
/// on both sides (splitting the leading dimension of a row-major group into
/// contiguous blocks splits the flattened group the same way). Other
/// dimensions and the extra operands (a shape) are pinned.
/// The number of leading dimensions known only at run time (in the input
/// or the result) that `reshape` provably keeps: its target names the
/// input's own size there (ShapeValues.h), or 0 (copy it); -1 when such a
/// dimension is not provably kept or the target's length is not known.
int64_t keptRunTimeSizes(ReshapeOp reshape) {
  auto inType = cast<RankedTensorType>(reshape.getInput().getType());
  auto outType = cast<RankedTensorType>(reshape.getType());
  std::optional<SmallVector<ShapeElement>> target =
      shapeElements(reshape.getShape());
  if (!target || static_cast<int64_t>(target->size()) != outType.getRank())
    return -1;
  int64_t kept = 0;
  while (kept < inType.getRank() && kept < outType.getRank() &&
         (inType.isDynamicDim(kept) || outType.isDynamicDim(kept))) {
    const ShapeElement &size = (*target)[kept];
    bool copied =
        size.constant && *size.constant == 0 && !reshape.getAllowzero();
    if (!copied &&
        !(size.isSizeOf() &&
          sameRunTimeSize(size.of, size.dim, reshape.getInput(), kept)))
      return -1;
    ++kept;
  }
  return kept;
}

std::optional<LoopNest> regroup(Operation *op) {
  auto inType = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  auto outType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!inType || !outType)
    return std::nullopt;
  ArrayRef<int64_t> in = inType.getShape();
  SmallVector<int64_t> out(outType.getShape());
  // Leading sizes known only at run time that a reshape provably keeps
  // (its target names the input's own size there, or 0: copy it) are one
  // loop each; the static rest regroups. `[?, ?, 64] -> [?, ?, 4, 16]`
  // splits the heads of a symbolic batch and sequence.
  int64_t kept = 0;
  if (!inType.hasStaticShape() || !outType.hasStaticShape()) {
    auto reshape = dyn_cast<ReshapeOp>(op);
    if (!reshape)
      return std::nullopt;
    std::optional<SmallVector<ShapeElement>> target =
        shapeElements(reshape.getShape());
    kept = keptRunTimeSizes(reshape);
    if (!target || kept < 0)
      return std::nullopt;
    // One size the reshape infers (-1) past the kept ones, with every other
    // size static: it is what the static sizes leave (`[?, ?, 4, 16] ->
    // [B, S, -1]`).
    for (int64_t d = kept; d < outType.getRank(); ++d) {
      const ShapeElement &size = (*target)[d];
      if (!outType.isDynamicDim(d) || !size.constant || *size.constant != -1)
        continue;
      bool allStatic =
          llvm::none_of(in.drop_front(kept), ShapedType::isDynamic);
      int64_t rest = 1, inRest = 1;
      for (int64_t k = kept; k < outType.getRank(); ++k)
        if (k != d) {
          allStatic &= !ShapedType::isDynamic(out[k]);
          rest *= out[k];
        }
      for (int64_t size : in.drop_front(kept))
        inRest *= size;
      if (allStatic && rest > 0 && inRest % rest == 0)
        out[d] = inRest / rest;
      break;
    }
    if (llvm::any_of(in.drop_front(kept), ShapedType::isDynamic) ||
        llvm::any_of(ArrayRef<int64_t>(out).drop_front(kept),
                     ShapedType::isDynamic))
      return std::nullopt;
  }
  auto product = [](ArrayRef<int64_t> sizes) {
    int64_t n = 1;
    for (int64_t size : sizes)
      n *= size;
    return n;
  };
  if (product(in.drop_front(kept)) !=
          product(ArrayRef<int64_t>(out).drop_front(kept)) ||
      product(in.drop_front(kept)) == 0)
    return std::nullopt;
  SmallVector<int64_t> inDims, outDims;
  for (auto [i, size] : llvm::enumerate(in))
    if (static_cast<int64_t>(i) >= kept && size != 1)
      inDims.push_back(i);
  for (auto [i, size] : llvm::enumerate(out))
    if (static_cast<int64_t>(i) >= kept && size != 1)
      outDims.push_back(i);

  LoopNest nest;
  SmallVector<int64_t> inLoops(in.size(), -1), outLoops(out.size(), -1);
  for (int64_t d = 0; d < kept; ++d)
    inLoops[d] = outLoops[d] = nest.addLoop();
  size_t i = 0, j = 0;
  while (i < inDims.size() && j < outDims.size()) {
    int64_t loop = nest.addLoop();
    inLoops[inDims[i]] = loop;
    outLoops[outDims[j]] = loop;
    int64_t inProduct = in[inDims[i++]], outProduct = out[outDims[j++]];
    while (inProduct != outProduct) {
      if (inProduct < outProduct) {
        if (i == inDims.size())
          return std::nullopt;
        inProduct *= in[inDims[i++]];
      } else {
        if (j == outDims.size())
          return std::nullopt;
        outProduct *= out[outDims[j++]];
      }
    }
  }
  if (i != inDims.size() || j != outDims.size())
    return std::nullopt;
  for (int64_t &loop : inLoops)
    if (loop < 0)
      loop = nest.addPinnedLoop();
  for (int64_t &loop : outLoops)
    if (loop < 0)
      loop = nest.addPinnedLoop();
  nest.tensors.push_back(inLoops);
  for (Value operand : op->getOperands().drop_front())
    nest.addPinnedTensor(operand);
  nest.tensors.push_back(outLoops);
  return nest;
}

/// expand: a broadcast of the input to the result shape; the shape operand
/// is pinned (partitioning rewrites it).
LoopNest expand(ExpandOp op) {
  LoopNest nest;
  ArrayRef<int64_t> shape = shapeOf(op.getResult());
  SmallVector<int64_t> loops;
  for (size_t i = 0; i < shape.size(); ++i)
    loops.push_back(nest.addLoop());
  addBroadcastTensor(nest, op.getInput(), shape, loops);
  nest.addPinnedTensor(op.getShape());
  nest.tensors.push_back(loops);
  return nest;
}

LoopNest transpose(TransposeOp op) {
  LoopNest nest;
  SmallVector<int64_t> loops, resultLoops;
  for (int64_t i = 0, e = LoopNest::rankOf(op.getInput()); i < e; ++i)
    loops.push_back(nest.addLoop());
  for (int64_t p : op.getPerm())
    resultLoops.push_back(loops[p]);
  nest.tensors = {loops, resultLoops};
  return nest;
}

/// split and concat along `axis`: the other dimensions of every operand and
/// result run over shared loops (a data-parallel batch stays split through
/// a fused projection's split into q, k and v); each tensor's `axis`
/// dimension, whose sizes differ, stays whole on a loop of its own.
LoopNest alongAxis(Operation *op, int64_t axis) {
  LoopNest nest;
  int64_t rank = LoopNest::rankOf(op->getOperand(0));
  if (axis < 0)
    axis += rank;
  SmallVector<int64_t> shared;
  for (int64_t i = 0; i < rank; ++i)
    shared.push_back(i == axis ? -1 : nest.addLoop());
  for (size_t i = 0; i < op->getNumOperands() + op->getNumResults(); ++i) {
    SmallVector<int64_t> loops(shared);
    loops[axis] = nest.addPinnedLoop();
    nest.tensors.push_back(loops);
  }
  return nest;
}

/// gather: the result is data's shape with `axis` replaced by the indices'
/// shape. Data's gathered axis stays whole, except axis 0 (an embedding
/// table's rows): split, each device looks up the rows it holds, zeroes the
/// others, and the pieces are summed (vocabulary parallelism).
LoopNest gather(GatherOp op) {
  LoopNest nest;
  int64_t rank = LoopNest::rankOf(op.getResult());
  int64_t dataRank = LoopNest::rankOf(op.getData());
  int64_t indicesRank = LoopNest::rankOf(op.getIndices());
  int64_t axis = static_cast<int64_t>(op.getAxis());
  if (axis < 0)
    axis += dataRank;
  SmallVector<int64_t> loops;
  for (int64_t i = 0; i < rank; ++i)
    loops.push_back(nest.addLoop());
  SmallVector<int64_t> dataLoops, indexLoops;
  for (int64_t i = 0; i < dataRank; ++i) {
    if (i < axis)
      dataLoops.push_back(loops[i]);
    else if (i == axis)
      dataLoops.push_back(axis == 0 ? nest.addLoop(IteratorType::reduction,
                                                   false, ReductionKind::Sum)
                                    : nest.addPinnedLoop());
    else
      dataLoops.push_back(loops[i - 1 + indicesRank]);
  }
  for (int64_t i = 0; i < indicesRank; ++i)
    indexLoops.push_back(loops[axis + i]);
  nest.tensors = {dataLoops, indexLoops, loops};
  return nest;
}

/// attention on `[B, H, S, D]` queries and `[B, Hkv, T, D]` keys/values:
/// batch, heads, query positions and the value features split; keys and the
/// query-key features stay whole. Causal attention with split query
/// positions gets an explicit mask of the global positions when
/// partitioned, so query positions stay whole only for causal (or
/// windowed) attention that already has a mask.
/// Key/value heads run over the head loop too: splitting H and Hkv by the
/// same count keeps each query head with its key/value head.
std::optional<LoopNest> attention(AttentionOp op) {
  if (LoopNest::rankOf(op.getQuery()) != 4 ||
      LoopNest::rankOf(op.getKey()) != 4 ||
      LoopNest::rankOf(op.getValue()) != 4)
    return std::nullopt;
  LoopNest nest;
  int64_t b = nest.addLoop(), h = nest.addLoop();
  int64_t s = nest.addLoop(IteratorType::parallel,
                           op.hasPositionalMask() && op.getMask());
  int64_t dv = nest.addLoop();
  int64_t t =
      nest.addLoop(IteratorType::reduction, true, ReductionKind::Generic);
  int64_t dqk =
      nest.addLoop(IteratorType::reduction, true, ReductionKind::Generic);
  ArrayRef<int64_t> q = shapeOf(op.getQuery()), k = shapeOf(op.getKey());
  auto same = [&](int64_t a, int64_t c, int64_t loop) {
    return !ShapedType::isDynamic(a) && a == c ? loop : nest.addPinnedLoop();
  };
  int64_t kvBatch = same(k[0], q[0], b);
  nest.tensors.push_back({b, h, s, dqk});
  nest.tensors.push_back({kvBatch, h, t, dqk});
  nest.tensors.push_back({kvBatch, h, t, dv});
  if (Value mask = op.getMask()) {
    SmallVector<int64_t> full = {q[0], q[1], q[2], k[2]};
    addBroadcastTensor(nest, mask, full, {b, h, s, t});
  }
  nest.tensors.push_back({b, h, s, dv});
  // Grouped-query attention on more devices than key/value heads: each
  // device takes whole query groups and the key/value heads they read.
  int64_t heads = q[1], kvHeads = k[1];
  if (heads != kvHeads && !ShapedType::isDynamic(heads) &&
      !ShapedType::isDynamic(kvHeads)) {
    nest.optional = {{1, 1}, {2, 1}};
    nest.acceptsWhole = [heads, kvHeads](int64_t count) {
      return heads % std::lcm(kvHeads, count) == 0;
    };
  }
  return nest;
}

/// rotary_embedding on `[B, H, S, D]` with `[S, D/2]` angles: the features
/// rotate in pairs and stay whole.
std::optional<LoopNest> rotary(RotaryEmbeddingOp op) {
  if (LoopNest::rankOf(op.getInput()) != 4)
    return std::nullopt;
  LoopNest nest;
  ArrayRef<int64_t> shape = shapeOf(op.getInput());
  SmallVector<int64_t> loops = {nest.addLoop(), nest.addLoop(), nest.addLoop(),
                                nest.addPinnedLoop()};
  nest.tensors.push_back(loops);
  // The tables' rows are the positions: [S, D/2], or [1, 1, S, D/2]. Rows
  // known only at run time are the input's there (the op requires it).
  for (Value angles : {op.getCos(), op.getSin()}) {
    ArrayRef<int64_t> a = shapeOf(angles);
    int64_t r = a.size();
    bool rows = r >= 2 && r <= 4 && a[r - 2] == shape[2] &&
                llvm::all_of(a.drop_back(2), [](int64_t s) { return s == 1; });
    if (!rows) {
      nest.addPinnedTensor(angles);
      continue;
    }
    SmallVector<int64_t> dims;
    for (int64_t i = 0; i < r - 2; ++i)
      dims.push_back(nest.addPinnedLoop());
    dims.push_back(loops[2]);
    dims.push_back(nest.addPinnedLoop());
    nest.tensors.push_back(dims);
  }
  nest.tensors.push_back(loops);
  return nest;
}

/// The `axis` attribute of `op`, counted from the front.
template <typename OpT> int64_t normalizedAxis(OpT op) {
  int64_t axis = op.getAxis();
  return axis < 0 ? axis + LoopNest::rankOf(op.getInput()) : axis;
}

/// How partial results of each reduction combine.
ReductionKind combinerOf(ReduceSumOp) { return ReductionKind::Sum; }
ReductionKind combinerOf(ReduceMeanOp) { return ReductionKind::Average; }
ReductionKind combinerOf(ReduceMaxOp) { return ReductionKind::Max; }
ReductionKind combinerOf(ReduceMinOp) { return ReductionKind::Min; }
ReductionKind combinerOf(ReduceProdOp) { return ReductionKind::Product; }

/// The loop nest of `op`; ops without a rule run replicated.
/// Mixture of experts: tokens and experts may be split (by one grid axis at
/// once for expert parallelism; see ExpertParallel.h), the rest stays whole.
LoopNest mixtureOfExperts(MoEOp op) {
  LoopNest nest;
  nest.addLoop();       // kMoETokens
  nest.addPinnedLoop(); // kMoEModel
  nest.addPinnedLoop(); // kMoEScoreExperts
  nest.addLoop();       // kMoEExperts
  nest.addPinnedLoop(); // kMoEHidden
  nest.tensors = {{kMoETokens, kMoEModel},
                  {kMoETokens, kMoEScoreExperts},
                  {kMoEExperts, kMoEModel, kMoEHidden},
                  {kMoEExperts, kMoEHidden, kMoEModel}};
  if (op.getWGate())
    nest.tensors.push_back({kMoEExperts, kMoEModel, kMoEHidden});
  nest.tensors.push_back({kMoETokens, kMoEModel});
  return nest;
}

LoopNest describe(Operation *op) {
  std::optional<LoopNest> nest =
      llvm::TypeSwitch<Operation *, std::optional<LoopNest>>(op)
          .Case<AddOp, SubOp, MulOp, DivOp, PowOp, MaxOp, MinOp, ModOp,
                BitShiftOp, AndOp, OrOp, XorOp, EqualOp, LessOp, LessEqualOp,
                GreaterOp, GreaterEqualOp, WhereOp, SwigluOp>(
              [](Operation *op) { return elementwise(op); })
          .Case<SoftmaxOp, LogSoftmaxOp, CumSumOp, CumProdOp>(
              [](auto op) { return elementwise(op, normalizedAxis(op)); })
          .Case([](MatMulOp op) { return matmul(op); })
          .Case<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp,
                ReduceProdOp>([](auto op) {
            return reduction(op, op.getAxes(), op.getKeepdims(), combinerOf(op),
                             true);
          })
          .Case<ArgMaxOp, ArgMinOp>([](auto op) {
            return reduction(op, {normalizedAxis(op)}, op.getKeepdims(),
                             ReductionKind::Generic, false);
          })
          .Case([](LayerNormOp op) { return normalization(op, op.getAxis()); })
          .Case([](RMSNormOp op) { return normalization(op, op.getAxis()); })
          .Case([](BatchNormOp op) { return channelNormalization(op, false); })
          .Case(
              [](InstanceNormOp op) { return channelNormalization(op, true); })
          .Case([](TransposeOp op) { return transpose(op); })
          .Case<ReshapeOp, SqueezeOp, UnsqueezeOp>(
              [](Operation *op) { return regroup(op); })
          .Case([](ExpandOp op) { return expand(op); })
          .Case([](GatherOp op) { return gather(op); })
          .Case([](SplitOp op) { return alongAxis(op, op.getAxis()); })
          .Case([](ConcatOp op) { return alongAxis(op, op.getAxis()); })
          .Case([](AttentionOp op) { return attention(op); })
          .Case([](RotaryEmbeddingOp op) { return rotary(op); })
          .Case([](MoEOp op) { return mixtureOfExperts(op); })
          .Default([](Operation *op) -> std::optional<LoopNest> {
            if (op->hasTrait<OpTrait::Elementwise>() &&
                op->getNumOperands() == 1 && op->getNumResults() == 1)
              return elementwise(op);
            return std::nullopt;
          });
  return nest ? std::move(*nest) : replicated(op);
}

/// The number of devices along `axes` of `grid`, or nullopt if dynamic.
std::optional<int64_t> deviceCount(shard::GridOp grid,
                                   ArrayRef<GridAxis> axes) {
  int64_t count = 1;
  for (GridAxis axis : axes) {
    int64_t size = grid.getShape()[axis];
    if (ShapedType::isDynamic(size))
      return std::nullopt;
    count *= size;
  }
  return count;
}

/// Which loops the given shardings split: results first, then operands from
/// the last (weights come after activations: a weight's split wins over an
/// activation's). A split that conflicts with one already taken (another
/// split of the loop, or its grid axis on another loop) is dropped, and so
/// are splits of pinned loops and splits that do not divide every dimension
/// on the loop: the operand is resharded for the op.
FailureOr<ShardingOption>
chooseLoopSharding(Operation *op, const LoopNest &nest,
                   ArrayRef<Sharding> operandShardings,
                   ArrayRef<Sharding> resultShardings) {
  ShardingOption option;
  option.shardingArray.resize(nest.iterators.size());
  FlatSymbolRefAttr grid;
  auto visit = [&](const Sharding &sharding,
                   ArrayRef<int64_t> loops) -> LogicalResult {
    if (!sharding)
      return success();
    if (grid && grid != sharding.getGridAttr())
      return failure();
    grid = sharding.getGridAttr();
    for (auto [dim, axes] : llvm::enumerate(sharding.getSplitAxes())) {
      if (axes.empty() || dim >= loops.size() || nest.pinned[loops[dim]])
        continue;
      SmallVector<GridAxis> &slot = option.shardingArray[loops[dim]];
      if (!slot.empty())
        continue;
      ArrayRef<GridAxis> wanted = axes.asArrayRef();
      bool taken = llvm::any_of(option.shardingArray, [&](auto &other) {
        return llvm::any_of(wanted, [&](GridAxis axis) {
          return llvm::is_contained(other, axis);
        });
      });
      if (!taken)
        slot.assign(wanted.begin(), wanted.end());
    }
    return success();
  };
  size_t numOperands = op->getNumOperands();
  for (auto [i, sharding] : llvm::enumerate(resultShardings))
    if (failed(visit(sharding, nest.tensors[numOperands + i])))
      return failure();
  for (int64_t i = static_cast<int64_t>(operandShardings.size()) - 1; i >= 0;
       --i)
    if (failed(visit(operandShardings[i], nest.tensors[i])))
      return failure();
  if (!grid)
    return ShardingOption::makeEmpty();

  auto gridOp = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(op, grid);
  if (!gridOp)
    return failure();
  SmallVector<Value> values(op->getOperands());
  llvm::append_range(values, op->getResults());
  for (auto [loop, axes] : llvm::enumerate(option.shardingArray)) {
    if (axes.empty())
      continue;
    std::optional<int64_t> count = deviceCount(gridOp, axes);
    bool divides = count.has_value();
    for (auto [tensor, loops] : llvm::enumerate(nest.tensors))
      for (auto [dim, dimLoop] : llvm::enumerate(loops)) {
        if (!divides || dimLoop != static_cast<int64_t>(loop))
          continue;
        // A loop of a size known only at run time is not split (the ops'
        // rules match such sizes only where they can prove them equal).
        int64_t size = shapeOf(values[tensor])[dim];
        divides = !ShapedType::isDynamic(size) && size % *count == 0;
        if (!divides && nest.isOptional(tensor, dim))
          divides = nest.acceptsWhole && nest.acceptsWhole(*count);
      }
    if (!divides)
      axes.clear();
  }
  option.grid = grid;
  return option;
}

/// The shardings of `op`'s operands and results for `option`: upstream's,
/// except that optional dimensions the split does not divide stay whole.
FailureOr<std::vector<Sharding>> annotationsFor(Operation *op,
                                                const LoopNest &nest,
                                                const ShardingOption &option) {
  FailureOr<std::vector<Sharding>> shardings =
      shard::detail::defaultGetShardingAnnotations(op, option);
  if (failed(shardings) || nest.optional.empty())
    return shardings;
  auto grid =
      SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(op, option.grid);
  if (!grid)
    return failure();
  for (auto [tensor, dim] : nest.optional) {
    Sharding &sharding = (*shardings)[tensor];
    if (!sharding ||
        static_cast<int64_t>(sharding.getSplitAxes().size()) <= dim)
      continue;
    SmallVector<shard::GridAxesAttr> axes(sharding.getSplitAxes());
    std::optional<int64_t> count = deviceCount(grid, axes[dim].asArrayRef());
    int64_t size = shapeOf(op->getOperand(tensor))[dim];
    if (count && size % *count == 0)
      continue;
    axes[dim] = shard::GridAxesAttr::get(op->getContext(), {});
    sharding = Sharding::get(sharding.getGridAttr(), axes);
  }
  return shardings;
}

/// Repeats each key/value head of the local `kv` (`[B, Hkv, T, D]`, whole
/// heads) as often as the `count` devices of `axes` need to each take the
/// heads of their query groups, and slices this device's.
Value localKeyValueHeads(OpBuilder &builder, Location loc, Value kv,
                         shard::GridOp grid, ArrayRef<GridAxis> axes,
                         int64_t count) {
  auto type = cast<RankedTensorType>(kv.getType());
  ArrayRef<int64_t> shape = type.getShape();
  int64_t heads = shape[1];
  int64_t repeat = count / std::gcd(heads, count);
  auto shapeConstant = [&](ArrayRef<int64_t> dims) -> Value {
    auto shapeType = RankedTensorType::get({static_cast<int64_t>(dims.size())},
                                           builder.getI64Type());
    return ConstantOp::create(builder, loc,
                              DenseIntElementsAttr::get(shapeType, dims));
  };
  if (repeat > 1) {
    SmallVector<int64_t> single = {shape[0], heads, 1, shape[2], shape[3]};
    SmallVector<int64_t> repeated = {shape[0], heads, repeat, shape[2],
                                     shape[3]};
    SmallVector<int64_t> merged = {shape[0], heads * repeat, shape[2],
                                   shape[3]};
    Type elementType = type.getElementType();
    kv = ReshapeOp::create(builder, loc,
                           RankedTensorType::get(single, elementType), kv,
                           shapeConstant(single), builder.getBoolAttr(false));
    kv = ExpandOp::create(builder, loc,
                          RankedTensorType::get(repeated, elementType), kv,
                          shapeConstant(repeated));
    kv = ReshapeOp::create(builder, loc,
                           RankedTensorType::get(merged, elementType), kv,
                           shapeConstant(merged), builder.getBoolAttr(false));
  }
  return shard::AllSliceOp::create(builder, loc, kv, grid, axes, 1);
}

/// A 0-d constant `value` of element type `type`.
Value scalarConstant(OpBuilder &builder, Location loc, Type type,
                     double value) {
  auto tensorType = RankedTensorType::get({}, type);
  if (isa<FloatType>(type))
    return ConstantOp::create(
        builder, loc,
        DenseElementsAttr::get(tensorType, FloatAttr::get(type, value)));
  return ConstantOp::create(
      builder, loc,
      DenseElementsAttr::get(
          tensorType, IntegerAttr::get(type, static_cast<int64_t>(value))));
}

/// Vocabulary parallelism for a gather from rows split over `axes`: the
/// global `indices` become this device's local rows (`rows` per device),
/// clamped to row 0 where they fall elsewhere. Returns the local indices and
/// where they are valid.
std::pair<Value, Value> localRowIndices(OpBuilder &builder, Location loc,
                                        Value indices, int64_t globalRows,
                                        int64_t rows, StringRef grid,
                                        ArrayRef<GridAxis> axes) {
  ImplicitLocOpBuilder b(loc, builder);
  Type type = cast<RankedTensorType>(indices.getType()).getElementType();
  Value index = shard::createProcessLinearIndex(grid, axes, b);
  Value first = arith::MulIOp::create(
      b, arith::IndexCastOp::create(b, type, index),
      arith::ConstantOp::create(b, IntegerAttr::get(type, rows)));
  Value offset =
      tensor::FromElementsOp::create(b, RankedTensorType::get({}, type), first);
  Value zero = scalarConstant(b, loc, type, 0);
  // Negative indices count from the end of the whole table.
  Value negative = LessOp::create(b, indices, zero);
  indices = WhereOp::create(
      b, negative,
      AddOp::create(b, indices, scalarConstant(b, loc, type, globalRows)),
      indices);
  Value local = SubOp::create(b, indices.getType(), indices, offset);
  Value valid = AndOp::create(
      b, GreaterEqualOp::create(b, local, zero),
      LessOp::create(b, local, scalarConstant(b, loc, type, rows)));
  return {WhereOp::create(b, valid, local, zero), valid};
}

/// The positional mask (causal, sliding windows) of the local queries of
/// `attention` (partitioned, its query positions split over `axes`): query
/// i of this device is global query `index * S_local + i`, standing at key
/// position `index * S_local + i + (T - S)` (or without `T - S` when the
/// attention is start-aligned); it keeps the keys
/// AttentionOp::keyVisible keeps.
Value localCausalMask(OpBuilder &builder, AttentionOp attention,
                      int64_t globalQueries, StringRef grid,
                      ArrayRef<GridAxis> axes) {
  Location loc = attention.getLoc();
  ImplicitLocOpBuilder b(loc, builder);
  int64_t queries = attention.getQuery().getType().getDimSize(2);
  int64_t keys = attention.getKey().getType().getDimSize(2);
  Value index = shard::createProcessLinearIndex(grid, axes, b);
  Value offset = arith::IndexCastOp::create(b, b.getI64Type(), index);
  offset = arith::MulIOp::create(b, offset,
                                 arith::ConstantIntOp::create(b, queries, 64));
  if (!attention.getStartAligned())
    offset = arith::AddIOp::create(
        b, offset, arith::ConstantIntOp::create(b, keys - globalQueries, 64));
  auto scalarType = RankedTensorType::get({}, b.getI64Type());
  Value shift = tensor::FromElementsOp::create(b, scalarType, offset);
  auto iota = [&](int64_t n, ArrayRef<int64_t> shape) -> Value {
    SmallVector<int64_t> values(n);
    std::iota(values.begin(), values.end(), 0);
    return ConstantOp::create(
        b, DenseIntElementsAttr::get(
               RankedTensorType::get(shape, b.getI64Type()), values));
  };
  auto columnType = RankedTensorType::get({queries, 1}, b.getI64Type());
  Value positions =
      AddOp::create(b, columnType, iota(queries, {queries, 1}), shift);
  auto maskType = RankedTensorType::get({queries, keys}, b.getI1Type());
  Value columns = iota(keys, {keys}), visible;
  auto require = [&](Value condition) {
    visible =
        visible ? AndOp::create(b, maskType, visible, condition) : condition;
  };
  // The positions `reach` keys after (or before) each query's.
  auto shifted = [&](int64_t reach) -> Value {
    Value by = ConstantOp::create(
        b, DenseIntElementsAttr::get(RankedTensorType::get({}, b.getI64Type()),
                                     ArrayRef<int64_t>{reach}));
    return AddOp::create(b, columnType, positions, by);
  };
  if (attention.getIsCausal())
    require(LessEqualOp::create(b, maskType, columns, positions));
  else if (attention.rightWindowSize() >= 0)
    require(LessEqualOp::create(b, maskType, columns,
                                shifted(attention.rightWindowSize())));
  if (attention.leftWindowSize() >= 0)
    require(GreaterEqualOp::create(b, maskType, columns,
                                   shifted(-attention.leftWindowSize())));
  return visible;
}

/// Replaces the shape operand `index` of the partitioned `op` with its
/// local result shape: a constant where that is static; where it is known
/// only at run time, the element the program computes (from the local
/// tensors' sizes, so already local), kept as `shape * keep + local`.
///
/// The first `copied` dimensions (a reshape's provably kept sizes, see
/// keptRunTimeSizes) become 0: the local input's size. Their computed
/// element may read a tensor that is split differently from the input
/// (the hidden state's sequence while the input's is split by cp).
void setLocalShapeOperand(Operation *op, unsigned index, OpBuilder &builder,
                          int64_t copied = 0) {
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPoint(op);
  Location loc = op->getLoc();
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  auto shapeType =
      RankedTensorType::get({type.getRank()}, builder.getI64Type());
  SmallVector<int64_t> local, keep;
  for (auto [d, size] : llvm::enumerate(type.getShape())) {
    bool copy = static_cast<int64_t>(d) < copied;
    local.push_back(ShapedType::isDynamic(size) || copy ? 0 : size);
    keep.push_back(ShapedType::isDynamic(size) && !copy ? 1 : 0);
  }
  Value shape = ConstantOp::create(builder, loc,
                                   DenseIntElementsAttr::get(shapeType, local));
  Value computed = op->getOperand(index);
  if (!type.hasStaticShape() && computed.getType() == shapeType) {
    Value kept = MulOp::create(
        builder, loc, shapeType, computed,
        ConstantOp::create(builder, loc,
                           DenseIntElementsAttr::get(shapeType, keep)));
    shape = AddOp::create(builder, loc, shapeType, kept, shape);
  }
  op->setOperand(index, shape);
}

/// Clones `op` on the local pieces. A split reduction loop leaves partial
/// results, combined with one all-reduce per result over its grid axes.
LogicalResult partitionLoopNest(Operation *op, const LoopNest &nest,
                                ArrayRef<Value> partitionedOperands,
                                ArrayRef<Sharding> operandShardings,
                                ArrayRef<Sharding> resultShardings,
                                IRMapping &partitionMap,
                                SymbolTableCollection &symbolTable,
                                OpBuilder &builder) {
  SmallVector<GridAxis> reductionAxes;
  std::optional<ReductionKind> kind;
  FlatSymbolRefAttr grid;
  for (auto [sharding, loops] : llvm::zip(operandShardings, nest.tensors)) {
    if (!sharding)
      continue;
    grid = sharding.getGridAttr();
    for (auto [dim, axes] : llvm::enumerate(sharding.getSplitAxes())) {
      int64_t loop = loops[dim];
      if (axes.empty() || nest.iterators[loop] != IteratorType::reduction)
        continue;
      if (nest.pinned[loop] || (kind && *kind != nest.kinds[loop]))
        return op->emitOpError("cannot partition a split reduction here");
      kind = nest.kinds[loop];
      for (GridAxis axis : axes.asArrayRef())
        if (!llvm::is_contained(reductionAxes, axis))
          reductionAxes.push_back(axis);
    }
  }

  for (const Sharding &sharding : resultShardings)
    if (!grid && sharding)
      grid = sharding.getGridAttr();

  // Grouped-query attention with query heads split and key/value heads
  // whole: each device picks the key/value heads of its query groups.
  SmallVector<Value> operands(partitionedOperands);
  if (isa<AttentionOp>(op) && operandShardings[0] && operandShardings[1] &&
      operandShardings[0].getSplitAxes().size() > 1 &&
      !operandShardings[0].getSplitAxes()[1].empty() &&
      (operandShardings[1].getSplitAxes().size() <= 1 ||
       operandShardings[1].getSplitAxes()[1].empty())) {
    ArrayRef<GridAxis> axes =
        operandShardings[0].getSplitAxes()[1].asArrayRef();
    shard::GridOp gridOp =
        shard::getGrid(op, operandShardings[0].getGridAttr(), symbolTable);
    std::optional<int64_t> count = deviceCount(gridOp, axes);
    if (!count)
      return op->emitOpError("needs a static grid to split heads");
    for (unsigned i : {1u, 2u})
      operands[i] = localKeyValueHeads(builder, op->getLoc(), operands[i],
                                       gridOp, axes, *count);
  }
  // Vocabulary-parallel gather: look up local rows only.
  Value validRows;
  auto gatherOp = dyn_cast<GatherOp>(op);
  if (gatherOp && operandShardings[0] &&
      !operandShardings[0].getSplitAxes().empty() &&
      !operandShardings[0].getSplitAxes()[0].empty()) {
    int64_t globalRows = gatherOp.getData().getType().getDimSize(0);
    int64_t rows = cast<RankedTensorType>(operands[0].getType()).getDimSize(0);
    std::tie(operands[1], validRows) =
        localRowIndices(builder, op->getLoc(), operands[1], globalRows, rows,
                        operandShardings[0].getGridAttr().getValue(),
                        operandShardings[0].getSplitAxes()[0].asArrayRef());
  }
  // A result nothing uses has no annotation; it is computed whole.
  SmallVector<Sharding, 2> results(resultShardings);
  for (Sharding &sharding : results)
    if (!sharding && grid)
      sharding = Sharding(grid);
  IRMapping localMap;
  for (auto [operand, partitioned] : llvm::zip(op->getOperands(), operands))
    localMap.map(operand, partitioned);
  if (llvm::any_of(results, [](const Sharding &s) { return !s; }))
    builder.clone(*op, localMap);
  else
    shard::partitionTriviallyShardableOperation(*op, operands, operandShardings,
                                                results, localMap, symbolTable,
                                                builder);
  for (Value result : op->getResults())
    partitionMap.map(result, localMap.lookup(result));
  if (op->getNumResults() == 0)
    return success();
  Operation *clone = partitionMap.lookup(op->getResult(0)).getDefiningOp();
  if (auto reshape = dyn_cast<ReshapeOp>(op);
      reshape && !reshape.getType().hasStaticShape()) {
    // Sizes known only at run time that the reshape keeps are the local
    // input's (see setLocalShapeOperand); with allowzero a 0 is a size,
    // so the computed ones stay.
    int64_t copied = reshape.getAllowzero() ? 0 : keptRunTimeSizes(reshape);
    setLocalShapeOperand(clone, 1, builder, std::max<int64_t>(copied, 0));
  } else if (isa<ReshapeOp, ExpandOp>(op) &&
             clone->getResult(0).getType() != op->getResult(0).getType()) {
    setLocalShapeOperand(clone, 1, builder);
  }
  // Causal or windowed attention on a slice of the queries: the positions
  // are global.
  if (auto attention = dyn_cast<AttentionOp>(clone);
      attention && attention.hasPositionalMask() && operandShardings[0] &&
      operandShardings[0].getSplitAxes().size() > 2 &&
      !operandShardings[0].getSplitAxes()[2].empty()) {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPoint(attention);
    int64_t globalQueries =
        cast<AttentionOp>(op).getQuery().getType().getDimSize(2);
    Value mask =
        localCausalMask(builder, attention, globalQueries,
                        operandShardings[0].getGridAttr().getValue(),
                        operandShardings[0].getSplitAxes()[2].asArrayRef());
    attention->insertOperands(attention->getNumOperands(), mask);
    attention.setIsCausal(false);
    attention.setStartAligned(false);
    attention.setLeftWindow(-1);
    attention.setRightWindow(-1);
  }
  if (validRows) {
    // Rows held elsewhere contribute zeros to the sum.
    Value looked = partitionMap.lookup(op->getResult(0));
    auto lookedType = cast<RankedTensorType>(looked.getType());
    auto validType = cast<RankedTensorType>(validRows.getType());
    // Trailing unit dimensions broadcast the mask over the looked-up rows.
    SmallVector<int64_t> shape(validType.getShape());
    SmallVector<int64_t> axes;
    for (int64_t i = shape.size(); i < lookedType.getRank(); ++i)
      axes.push_back(i);
    shape.resize(lookedType.getRank(), 1);
    Value mask = validRows;
    if (!axes.empty())
      mask =
          UnsqueezeOp::create(builder, op->getLoc(),
                              RankedTensorType::get(shape, builder.getI1Type()),
                              validRows, builder.getDenseI64ArrayAttr(axes));
    Value masked = WhereOp::create(
        builder, op->getLoc(), mask, looked,
        scalarConstant(builder, op->getLoc(), lookedType.getElementType(), 0));
    partitionMap.map(op->getResult(0), masked);
  }
  if (reductionAxes.empty())
    return success();
  for (Value result : op->getResults()) {
    Value partial = partitionMap.lookup(result);
    Value reduced = shard::AllReduceOp::create(
        builder, op->getLoc(), partial, grid.getValue(), reductionAxes, *kind);
    partitionMap.map(result, reduced);
  }
  return success();
}

template <typename OpT>
struct LoomShardingModel
    : public shard::ShardingInterface::ExternalModel<LoomShardingModel<OpT>,
                                                     OpT> {
  SmallVector<IteratorType> getLoopIteratorTypes(Operation *op) const {
    return describe(op).iterators;
  }

  SmallVector<ReductionKind>
  getReductionLoopIteratorKinds(Operation *op) const {
    LoopNest nest = describe(op);
    SmallVector<ReductionKind> kinds;
    for (auto [type, kind] : llvm::zip(nest.iterators, nest.kinds))
      if (type == IteratorType::reduction)
        kinds.push_back(kind);
    return kinds;
  }

  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    return describe(op).maps(op->getContext());
  }

  FailureOr<ShardingOption>
  getShardingOption(Operation *op, ArrayRef<Sharding> operandShardings,
                    ArrayRef<Sharding> resultShardings) const {
    if (auto moe = dyn_cast<MoEOp>(op))
      return chooseMoESharding(moe, operandShardings, resultShardings);
    return chooseLoopSharding(op, describe(op), operandShardings,
                              resultShardings);
  }

  FailureOr<std::vector<Sharding>>
  getShardingAnnotations(Operation *op, const ShardingOption &option) const {
    return annotationsFor(op, describe(op), option);
  }

  LogicalResult addShardingAnnotations(Operation *op, OpBuilder &builder,
                                       const ShardingOption &option) const {
    FailureOr<std::vector<Sharding>> shardings =
        annotationsFor(op, describe(op), option);
    if (failed(shardings))
      return failure();
    size_t numOperands = op->getNumOperands();
    for (OpResult result : op->getResults())
      shard::maybeInsertTargetShardingAnnotation(
          (*shardings)[numOperands + result.getResultNumber()], result,
          builder);
    for (OpOperand &operand : op->getOpOperands())
      shard::maybeInsertSourceShardingAnnotation(
          (*shardings)[operand.getOperandNumber()], operand, builder);
    return success();
  }

  LogicalResult partition(Operation *op, ArrayRef<Value> partitionedOperands,
                          ArrayRef<Sharding> operandShardings,
                          ArrayRef<Sharding> resultShardings,
                          IRMapping &partitionMap,
                          SymbolTableCollection &symbolTable,
                          OpBuilder &builder) const {
    if (auto moe = dyn_cast<MoEOp>(op))
      return partitionMoE(moe, partitionedOperands, operandShardings,
                          resultShardings, partitionMap, symbolTable, builder);
    return partitionLoopNest(op, describe(op), partitionedOperands,
                             operandShardings, resultShardings, partitionMap,
                             symbolTable, builder);
  }
};

template <typename... OpTs> void attachModels(MLIRContext *ctx) {
  (OpTs::template attachInterface<LoomShardingModel<OpTs>>(*ctx), ...);
}

} // namespace

void loom::registerShardingInterfaceExternalModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, LoomDialect *) {
    ctx->getOrLoadDialect<shard::ShardDialect>();
    ctx->getOrLoadDialect<arith::ArithDialect>();
    ctx->getOrLoadDialect<tensor::TensorDialect>();
    attachModels<
#define GET_OP_LIST
#include "loom/Dialect/Loom/IR/LoomOps.cpp.inc"
        >(ctx);
  });
  // The importer spells some dynamic results with tensor.cast: it runs
  // replicated.
  registry.addExtension(+[](MLIRContext *ctx, tensor::TensorDialect *) {
    attachModels<tensor::CastOp>(ctx);
  });
}
