//===- Partition.cpp - Plans for partitioning loom programs ---------------===//
//
// A plan is a handful of sharding annotations: the grid, the inputs, and the
// weights of the projections that Megatron-style tensor parallelism splits.
// Upstream propagation carries them through the rest of the program (each
// loom op describes how through its ShardingInterface model), and upstream
// partitioning turns the annotated program into SPMD form with collectives.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/Sharding/Partition.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/Sharding/ExpertParallel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/CSE.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

#include <numeric>

using namespace mlir;
using namespace loom;
using shard::GridAxesAttr;
using shard::GridAxis;
using shard::Sharding;

ArrayRef<StringRef> loom::knownGridAxisNames() {
  static const StringRef names[] = {"dp", "cp", "tp", "pp", "ep"};
  return names;
}

FailureOr<SmallVector<GridAxisSpec>>
loom::parseGridSpec(StringRef spec,
                    function_ref<InFlightDiagnostic()> emitError) {
  SmallVector<GridAxisSpec> axes;
  if (spec.trim().empty()) {
    emitError() << "empty grid: expected name=degree pairs such as "
                   "\"dp=2,tp=2\"";
    return failure();
  }
  SmallVector<StringRef> items;
  spec.split(items, ',');
  for (StringRef item : items) {
    StringRef name = item.split('=').first.trim();
    StringRef degree = item.split('=').second.trim();
    GridAxisSpec axis;
    axis.name = name.str();
    if (!llvm::is_contained(knownGridAxisNames(), name)) {
      InFlightDiagnostic diag = emitError();
      diag << "unknown grid axis '" << name << "' in \"" << spec
           << "\"; known:";
      for (StringRef known : knownGridAxisNames())
        diag << " " << known;
      return failure();
    }
    if (degree.getAsInteger(10, axis.size) || axis.size < 1) {
      emitError() << "grid axis '" << name
                  << "' needs a positive integer degree, got '" << degree
                  << "'";
      return failure();
    }
    if (llvm::any_of(axes,
                     [&](const GridAxisSpec &a) { return a.name == name; })) {
      emitError() << "grid axis '" << name << "' given twice in \"" << spec
                  << "\"";
      return failure();
    }
    axes.push_back(axis);
  }
  return axes;
}

namespace {

/// A dimension size for a diagnostic ("?" when dynamic).
std::string sizeString(int64_t size) {
  return ShapedType::isDynamic(size) ? "?" : std::to_string(size);
}

/// Whether `value` is computed from constants alone (a weight).
bool isWeight(Value value) {
  Operation *def = value.getDefiningOp();
  if (!def || def->getNumRegions() != 0)
    return false;
  if (isa<ConstantOp>(def))
    return true;
  return def->getNumOperands() > 0 &&
         llvm::all_of(def->getOperands(), [](Value v) { return isWeight(v); });
}

int64_t rankOf(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type ? type.getRank() : -1;
}

/// `op` as a projection: a matmul of an activation with a 2-D weight.
MatMulOp asProjection(Operation *op) {
  auto matmul = dyn_cast_or_null<MatMulOp>(op);
  if (!matmul || rankOf(matmul.getRhs()) != 2 || !isWeight(matmul.getRhs()) ||
      isWeight(matmul.getLhs()))
    return nullptr;
  return matmul;
}

/// The operand of a binary op that is not a weight, if the other one is.
Value activationOperand(Operation *op) {
  if (!isa<AddOp, SubOp, MulOp, DivOp>(op))
    return nullptr;
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  if (isWeight(rhs) && !isWeight(lhs))
    return lhs;
  if (isWeight(lhs) && !isWeight(rhs))
    return rhs;
  return nullptr;
}

/// The projection that `value` (an attention query, key or value) comes
/// from, through head reshapes, transposes, casts, rotary embeddings and
/// bias or scale by weights.
MatMulOp traceInputProjection(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (MatMulOp projection = asProjection(def))
      return projection;
    if (isa<TransposeOp, ReshapeOp, CastOp, RotaryEmbeddingOp>(def)) {
      value = def->getOperand(0);
    } else if (auto concat = dyn_cast<ConcatOp>(def);
               concat && concat.getInputs().size() == 2 &&
               isa<BlockArgument>(concat.getInputs()[0])) {
      // A key/value cache: the past (an input) and the new positions.
      value = concat.getInputs()[1];
    } else if (Value activation = activationOperand(def))
      value = activation;
    else
      return nullptr;
  }
  return nullptr;
}

/// The projection that consumes `value` (an attention result) through head
/// transposes, reshapes and casts.
MatMulOp traceOutputProjection(Value value) {
  while (value.hasOneUse()) {
    Operation *user = *value.getUsers().begin();
    if (MatMulOp projection = asProjection(user))
      return projection.getLhs() == value ? projection : nullptr;
    if (!isa<TransposeOp, ReshapeOp, CastOp>(user))
      return nullptr;
    value = user->getResult(0);
  }
  return nullptr;
}

/// Collects the projections that produce the hidden activation `value` of an
/// MLP through elementwise ops (activations, gating products, biases).
/// `visited` holds the values already traced (a DAG such as x * sigmoid(x)
/// reaches a value twice; walking it as a tree is exponential), and the
/// walk gives up beyond `depth` ops: an MLP's hidden activation is a few
/// elementwise ops from its projections, never a whole residual stream.
bool traceHidden(Value value, SmallVectorImpl<MatMulOp> &projections,
                 llvm::DenseSet<Value> &visited, int depth = 0) {
  constexpr int kMaxDepth = 32;
  if (!visited.insert(value).second)
    return true;
  Operation *def = value.getDefiningOp();
  if (!def || depth > kMaxDepth)
    return false;
  auto trace = [&](Value v) {
    return traceHidden(v, projections, visited, depth + 1);
  };
  if (MatMulOp projection = asProjection(def)) {
    projections.push_back(projection);
    return true;
  }
  if (def->hasTrait<OpTrait::Elementwise>() && def->getNumOperands() == 1)
    return trace(def->getOperand(0));
  // SwiGLU gates one projection with another.
  if (isa<SwigluOp>(def))
    return trace(def->getOperand(0)) && trace(def->getOperand(1));
  if (!isa<AddOp, SubOp, MulOp, DivOp>(def))
    return false;
  if (Value activation = activationOperand(def)) {
    // Only a bias or scale broadcast along the hidden dimension.
    Value weight = def->getOperand(0) == activation ? def->getOperand(1)
                                                    : def->getOperand(0);
    // (A 0-D scalar, such as quick GELU's 1.702, broadcasts everywhere.)
    auto type = cast<RankedTensorType>(weight.getType());
    if (type.getRank() > 0 &&
        llvm::any_of(type.getShape().drop_back(),
                     [](int64_t size) { return size != 1; }))
      return false;
    return trace(activation);
  }
  return trace(def->getOperand(0)) && trace(def->getOperand(1));
}

bool traceHidden(Value value, SmallVectorImpl<MatMulOp> &projections) {
  llvm::DenseSet<Value> visited;
  return traceHidden(value, projections, visited);
}

/// The projections that tensor parallelism splits by columns (their outputs
/// are split) and by rows (their contraction is split, then all-reduced),
/// and the embedding lookups split by vocabulary rows.
struct TensorParallelPlan {
  llvm::SetVector<Operation *> columns, rows, embeddings;
};

/// Whether `value` only reaches the function's results, directly or through
/// unary elementwise ops.
bool onlyReturned(Value value) {
  return !value.use_empty() &&
         llvm::all_of(value.getUsers(), [](Operation *user) {
           if (isa<func::ReturnOp>(user))
             return true;
           return user->hasTrait<OpTrait::Elementwise>() &&
                  user->getNumOperands() == 1 &&
                  onlyReturned(user->getResult(0));
         });
}

/// Finds attention and MLP blocks and checks that `degree` divides the heads
/// and hidden sizes they split.
FailureOr<TensorParallelPlan> planTensorParallel(func::FuncOp func,
                                                 int64_t degree) {
  TensorParallelPlan plan;
  auto taken = [&](Operation *op) {
    return plan.columns.contains(op) || plan.rows.contains(op);
  };
  WalkResult walk = func.walk([&](AttentionOp attention) -> WalkResult {
    SmallVector<Operation *> inputs;
    for (Value operand :
         {attention.getQuery(), attention.getKey(), attention.getValue()}) {
      MatMulOp projection = traceInputProjection(operand);
      // A fused QKV projection is not split by heads here.
      if (!projection || llvm::is_contained(inputs, projection.getOperation()))
        return WalkResult::advance();
      inputs.push_back(projection);
    }
    MatMulOp output = traceOutputProjection(attention.getResult());
    if (!output || llvm::any_of(inputs, taken) || taken(output))
      return WalkResult::advance();
    int64_t heads =
        cast<RankedTensorType>(attention.getQuery().getType()).getDimSize(1);
    int64_t kvHeads =
        cast<RankedTensorType>(attention.getKey().getType()).getDimSize(1);
    // More devices than key/value heads: keys and values stay whole and
    // each device takes the heads of its query groups (grouped-query aware).
    bool splitKeyValues = kvHeads % degree == 0;
    if (ShapedType::isDynamic(heads) || ShapedType::isDynamic(kvHeads) ||
        heads % degree != 0 ||
        (!splitKeyValues && heads % std::lcm(kvHeads, degree) != 0)) {
      attention.emitError()
          << "tp=" << degree << " does not divide the attention's "
          << sizeString(heads) << " query heads and " << sizeString(kvHeads)
          << " key/value heads";
      return WalkResult::interrupt();
    }
    plan.columns.insert(inputs.front());
    if (splitKeyValues)
      plan.columns.insert(inputs.begin() + 1, inputs.end());
    plan.rows.insert(output);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();

  walk = func.walk([&](MatMulOp matmul) -> WalkResult {
    if (!asProjection(matmul) || taken(matmul))
      return WalkResult::advance();
    SmallVector<MatMulOp> inputs;
    if (!traceHidden(matmul.getLhs(), inputs) ||
        llvm::any_of(inputs, [&](MatMulOp m) { return taken(m); }))
      return WalkResult::advance();
    int64_t hidden =
        cast<RankedTensorType>(matmul.getRhs().getType()).getDimSize(0);
    if (ShapedType::isDynamic(hidden) || hidden % degree != 0) {
      matmul.emitError() << "tp=" << degree
                         << " does not divide the MLP's hidden size "
                         << sizeString(hidden);
      return WalkResult::interrupt();
    }
    for (MatMulOp input : inputs)
      plan.columns.insert(input);
    plan.rows.insert(matmul);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();

  // Vocabulary parallelism, where the vocabulary divides: the LM head (a
  // projection whose logits are the result) is column-parallel, and an
  // embedding lookup (a gather of rows of a 2-D weight) is split by rows.
  func.walk([&](MatMulOp matmul) {
    int64_t vocabulary =
        cast<RankedTensorType>(matmul.getRhs().getType()).getDimSize(1);
    if (asProjection(matmul) && !taken(matmul) &&
        onlyReturned(matmul.getResult()) &&
        !ShapedType::isDynamic(vocabulary) && vocabulary % degree == 0)
      plan.columns.insert(matmul);
  });
  func.walk([&](GatherOp gather) {
    auto table = cast<RankedTensorType>(gather.getData().getType());
    if (table.getRank() == 2 && gather.getAxis() == 0 &&
        isWeight(gather.getData()) && !isWeight(gather.getIndices()) &&
        !ShapedType::isDynamic(table.getDimSize(0)) &&
        table.getDimSize(0) % degree == 0)
      plan.embeddings.insert(gather);
  });
  return plan;
}

/// Builds `shard.shard %value to sharding`.
shard::ShardOp createShard(OpBuilder &builder, Location loc, Value value,
                           const Sharding &sharding, bool forUsers) {
  Value shardingValue = shard::ShardingOp::create(
      builder, loc, sharding.getGridAttr(), sharding.getSplitAxes());
  return shard::ShardOp::create(builder, loc, value, shardingValue, forUsers);
}

/// A sharding of `grid` that splits each given dimension over its axis.
Sharding splitSharding(FlatSymbolRefAttr grid,
                       ArrayRef<std::pair<int64_t, GridAxis>> splits) {
  MLIRContext *ctx = grid.getContext();
  SmallVector<SmallVector<GridAxis>> axes;
  for (auto [dim, axis] : splits) {
    if (static_cast<int64_t>(axes.size()) <= dim)
      axes.resize(dim + 1);
    axes[dim].push_back(axis);
  }
  SmallVector<GridAxesAttr> split;
  for (ArrayRef<GridAxis> dimAxes : axes)
    split.push_back(GridAxesAttr::get(ctx, dimAxes));
  return Sharding::get(grid, split);
}

Sharding splitSharding(FlatSymbolRefAttr grid, int64_t dim, GridAxis axis) {
  return splitSharding(grid, {{dim, axis}});
}

/// Annotates `value` (an argument or a constant) as replicated for all its
/// users.
shard::ShardOp annotateReplicated(OpBuilder &builder, Value value,
                                  FlatSymbolRefAttr grid) {
  shard::ShardOp shardOp =
      createShard(builder, value.getLoc(), value, Sharding(grid), false);
  value.replaceAllUsesExcept(shardOp.getResult(), shardOp);
  return shardOp;
}

/// Makes `use` see its value with `sharding`. A value that is annotated
/// (arguments, constants) is resharded for this use; an op result whose only
/// use this is is produced with the sharding.
void annotateUse(OpOperand &use, const Sharding &sharding, OpBuilder &builder) {
  Value value = use.get();
  Operation *user = use.getOwner();
  builder.setInsertionPoint(user);
  auto source = value.getDefiningOp<shard::ShardOp>();
  if (!source || source.getAnnotateForUsers()) {
    bool single = value.hasOneUse();
    builder.setInsertionPointAfterValue(value);
    source = createShard(builder, value.getLoc(), value,
                         single ? sharding : Sharding(sharding.getGridAttr()),
                         false);
    value.replaceAllUsesExcept(source.getResult(), source);
    builder.setInsertionPoint(user);
  }
  use.set(
      createShard(builder, value.getLoc(), source.getResult(), sharding, true));
}

/// Sequence parallelism: the output of each row-parallel projection leaves
/// split along the sequence (dimension 1 of `[B, S, D]`), so that what runs
/// between blocks (bias, residual, norms) runs on sequence shards and the
/// block's all-reduce becomes a reduce-scatter (the next column-parallel
/// projections all-gather their input).
LogicalResult annotateSequenceParallel(const TensorParallelPlan &plan,
                                       FlatSymbolRefAttr grid,
                                       std::optional<GridAxis> dpAxis,
                                       GridAxis tpAxis, int64_t tp,
                                       OpBuilder &builder) {
  for (Operation *op : plan.rows) {
    Value result = op->getResult(0);
    auto type = cast<RankedTensorType>(result.getType());
    if (type.getRank() != 3)
      continue;
    int64_t sequence = type.getDimSize(1);
    if (ShapedType::isDynamic(sequence) || sequence % tp != 0)
      return op->emitError()
             << "tp=" << tp << " does not divide the sequence length "
             << sizeString(sequence) << " (sequence parallelism)";
    SmallVector<std::pair<int64_t, GridAxis>> batch;
    if (dpAxis)
      batch.push_back({0, *dpAxis});
    SmallVector<std::pair<int64_t, GridAxis>> split(batch);
    split.push_back({1, tpAxis});
    builder.setInsertionPointAfter(op);
    shard::ShardOp produced = createShard(builder, op->getLoc(), result,
                                          splitSharding(grid, batch), false);
    result.replaceAllUsesExcept(produced.getResult(), produced);
    shard::ShardOp used =
        createShard(builder, op->getLoc(), produced.getResult(),
                    splitSharding(grid, split), true);
    produced.getResult().replaceAllUsesExcept(used.getResult(), used);
  }
  return success();
}

LogicalResult annotateFunction(func::FuncOp func, FlatSymbolRefAttr grid,
                               const PartitionOptions &options) {
  std::optional<GridAxis> dpAxis, cpAxis, tpAxis, epAxis;
  int64_t dp = 1, cp = 1, tp = 1, ep = 1;
  for (auto [i, axis] : llvm::enumerate(options.axes)) {
    if (axis.name == "dp")
      dpAxis = i, dp = axis.size;
    else if (axis.name == "cp")
      cpAxis = i, cp = axis.size;
    else if (axis.name == "tp")
      tpAxis = i, tp = axis.size;
    else if (axis.name == "ep")
      epAxis = i, ep = axis.size;
  }
  // Plan on the program as it is, before annotations sit between ops.
  TensorParallelPlan plan;
  if (tpAxis) {
    FailureOr<TensorParallelPlan> found = planTensorParallel(func, tp);
    if (failed(found))
      return failure();
    plan = std::move(*found);
  }

  OpBuilder builder(func.getContext());
  Block &body = func.getBody().front();
  // Dead values would stay unannotated.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
    if (isOpTriviallyDead(&op))
      op.erase();
  builder.setInsertionPointToStart(&body);
  for (BlockArgument arg : body.getArguments()) {
    // Unused arguments too: partitioning expects each to have a shard.shard.
    if (!isa<RankedTensorType>(arg.getType()))
      continue;
    shard::ShardOp replicated = annotateReplicated(builder, arg, grid);
    // dp splits dimension 0 (the batch), cp dimension 1 (the sequence);
    // ep splits dimension 0 further (the tokens; see ExpertParallel.h).
    SmallVector<std::pair<int64_t, GridAxis>> splits;
    for (auto [axis, degree, dim, what] :
         {std::make_tuple(dpAxis, dp, 0, "batch"),
          std::make_tuple(cpAxis, cp, 1, "sequence"),
          std::make_tuple(epAxis, ep, 0, "token")}) {
      if (!axis || rankOf(arg) <= dim)
        continue;
      int64_t size = cast<RankedTensorType>(arg.getType()).getDimSize(dim);
      // A size known only at run time is split there; the per-rank code
      // checks that it divides.
      if (!ShapedType::isDynamic(size) && size % degree != 0)
        return emitError(arg.getLoc())
               << options.axes[*axis].name << "=" << degree
               << " does not divide the " << what << " dimension ("
               << sizeString(size) << ") of argument " << arg.getArgNumber();
      splits.push_back({dim, *axis});
    }
    if (dpAxis && epAxis && rankOf(arg) > 0 &&
        !cast<RankedTensorType>(arg.getType()).isDynamicDim(0) &&
        cast<RankedTensorType>(arg.getType()).getDimSize(0) % (dp * ep) != 0)
      return emitError(arg.getLoc())
             << "dp=" << dp << " x ep=" << ep
             << " does not divide dimension 0 ("
             << cast<RankedTensorType>(arg.getType()).getDimSize(0)
             << ") of argument " << arg.getArgNumber();
    if (splits.empty())
      continue;
    shard::ShardOp split =
        createShard(builder, arg.getLoc(), replicated.getResult(),
                    splitSharding(grid, splits), true);
    replicated.getResult().replaceAllUsesExcept(split.getResult(), split);
  }
  for (ConstantOp constant : llvm::to_vector(body.getOps<ConstantOp>())) {
    builder.setInsertionPointAfter(constant);
    annotateReplicated(builder, constant.getResult(), grid);
  }

  for (Operation *op : plan.columns)
    annotateUse(op->getOpOperand(1), splitSharding(grid, 1, *tpAxis), builder);
  for (Operation *op : plan.rows)
    annotateUse(op->getOpOperand(1), splitSharding(grid, 0, *tpAxis), builder);
  for (Operation *op : plan.embeddings)
    annotateUse(op->getOpOperand(0), splitSharding(grid, 0, *tpAxis), builder);
  if (options.capacityFactor != 0 && !epAxis)
    return emitError(func.getLoc())
           << "capacity-factor needs an expert-parallel (ep) grid axis";
  if (epAxis && failed(annotateExpertParallel(func, grid, *epAxis, ep,
                                              options.capacityFactor)))
    return failure();
  if (options.sequenceParallel) {
    if (!tpAxis)
      return emitError(func.getLoc())
             << "sequence parallelism needs a tensor-parallel (tp) grid axis";
    if (failed(
            annotateSequenceParallel(plan, grid, dpAxis, *tpAxis, tp, builder)))
      return failure();
  }

  // Results leave replicated.
  Operation *terminator = body.getTerminator();
  builder.setInsertionPoint(terminator);
  for (OpOperand &operand : terminator->getOpOperands())
    if (isa<RankedTensorType>(operand.get().getType()))
      operand.set(createShard(builder, operand.get().getLoc(), operand.get(),
                              Sharding(grid), true));
  return success();
}

/// Whether propagation annotated every tensor operand and result of `op`.
bool isFullyAnnotated(Operation *op) {
  for (Value operand : op->getOperands()) {
    auto shardOp = operand.getDefiningOp<shard::ShardOp>();
    if (rankOf(operand) > 0 && (!shardOp || !shardOp.getAnnotateForUsers()))
      return false;
  }
  for (Value result : op->getResults()) {
    if (!result.hasOneUse())
      return false;
    auto shardOp = dyn_cast<shard::ShardOp>(*result.getUsers().begin());
    if (!shardOp || shardOp.getAnnotateForUsers())
      return false;
  }
  return true;
}

} // namespace

LogicalResult loom::annotateForGrid(ModuleOp module,
                                    const PartitionOptions &options) {
  if (!module.getOps<shard::GridOp>().empty())
    return emitError(module.getLoc())
           << "the module already has a device grid; it is partitioned once";
  OpBuilder builder(module.getBodyRegion());
  SmallVector<int64_t> shape;
  for (const GridAxisSpec &axis : options.axes)
    shape.push_back(axis.size);
  shard::GridOp::create(builder, module.getLoc(), kGridName, shape);
  auto grid = FlatSymbolRefAttr::get(module.getContext(), kGridName);
  for (func::FuncOp func : module.getOps<func::FuncOp>())
    if (!func.isExternal() && failed(annotateFunction(func, grid, options)))
      return failure();
  return success();
}

void loom::cleanUpPartitioned(ModuleOp module) {
  module.walk([](tensor::CastOp cast) {
    if (cast.getSource().getType() == cast.getType()) {
      cast.replaceAllUsesWith(cast.getSource());
      cast.erase();
    }
  });
  // One collective per value, not one per use.
  IRRewriter rewriter(module.getContext());
  DominanceInfo dominance(module);
  eliminateCommonSubExpressions(rewriter, dominance, module);
  // Reducing everywhere and then keeping one slice is a reduce-scatter.
  module.walk([](shard::AllSliceOp slice) {
    auto reduce = slice.getInput().getDefiningOp<shard::AllReduceOp>();
    if (!reduce || !reduce->hasOneUse() ||
        reduce.getGridAttr() != slice.getGridAttr() ||
        reduce.getGridAxes() != slice.getGridAxes())
      return;
    OpBuilder builder(slice);
    Value scattered = shard::ReduceScatterOp::create(
        builder, slice.getLoc(), slice.getType(), reduce.getGridAttr(),
        reduce.getGridAxesAttr(), reduce.getInput(), reduce.getReductionAttr(),
        slice.getSliceAxisAttr());
    slice.replaceAllUsesWith(scattered);
    slice.erase();
    reduce.erase();
  });
  // Shape constants that partitioning replaced, and whatever fed only them.
  for (func::FuncOp func : module.getOps<func::FuncOp>())
    for (Block &block : func.getBody())
      for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
        if (isOpTriviallyDead(&op))
          op.erase();
}

void loom::splitReshardings(ModuleOp module) {
  SmallVector<shard::ShardOp> targets;
  module.walk([&](shard::ShardOp target) {
    if (target.getSrc().getDefiningOp<shard::ShardOp>())
      targets.push_back(target);
  });
  for (shard::ShardOp target : targets) {
    auto source = target.getSrc().getDefiningOp<shard::ShardOp>();
    Sharding from(source.getSharding()), to(target.getSharding());
    auto type = dyn_cast<RankedTensorType>(target.getType());
    if (!type || !from.getStaticHaloSizes().empty() ||
        !to.getStaticHaloSizes().empty() ||
        !from.getStaticShardedDimsOffsets().empty() ||
        !to.getStaticShardedDimsOffsets().empty())
      continue;
    auto axesOf = [&](const Sharding &sharding) {
      SmallVector<SmallVector<GridAxis>> axes(type.getRank());
      for (auto [dim, dimAxes] : llvm::enumerate(sharding.getSplitAxes()))
        if (dim < axes.size())
          axes[dim].assign(dimAxes.asArrayRef().begin(),
                           dimAxes.asArrayRef().end());
      return axes;
    };
    SmallVector<SmallVector<GridAxis>> current = axesOf(from),
                                       wanted = axesOf(to);
    // Unsplit down to the common prefix of each dimension, then split up.
    SmallVector<SmallVector<SmallVector<GridAxis>>> steps;
    SmallVector<GridAxis> removed, added;
    for (auto [have, want] : llvm::zip(current, wanted)) {
      size_t prefix = 0;
      while (prefix < have.size() && prefix < want.size() &&
             have[prefix] == want[prefix])
        ++prefix;
      while (have.size() > prefix) {
        removed.push_back(have.back());
        have.pop_back();
        steps.push_back(current);
      }
    }
    for (auto [have, want] : llvm::zip(current, wanted))
      while (have.size() < want.size()) {
        added.push_back(want[have.size()]);
        have.push_back(want[have.size()]);
        steps.push_back(current);
      }
    // One step, or one axis moving between dimensions (an all-to-all):
    // upstream handles it directly.
    if (steps.size() <= 1 || (steps.size() == 2 && removed == added))
      continue;
    OpBuilder builder(target);
    Value value = source.getResult();
    for (ArrayRef<SmallVector<GridAxis>> step : ArrayRef(steps).drop_back()) {
      SmallVector<GridAxesAttr> split;
      for (ArrayRef<GridAxis> dimAxes : step)
        split.push_back(GridAxesAttr::get(module.getContext(), dimAxes));
      value = createShard(builder, target.getLoc(), value,
                          Sharding::get(from.getGridAttr(), split), true)
                  .getResult();
    }
    target.getSrcMutable().assign(value);
  }
}

LogicalResult loom::shardWeightStorage(ModuleOp module,
                                       const PartitionOptions &options) {
  std::optional<GridAxis> dpAxis;
  int64_t dp = 1;
  for (auto [i, axis] : llvm::enumerate(options.axes))
    if (axis.name == "dp")
      dpAxis = i, dp = axis.size;
  if (!dpAxis)
    return emitError(module.getLoc())
           << "weight sharding (zero) needs a data-parallel (dp) grid axis";
  auto gridOp = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(
      module, FlatSymbolRefAttr::get(module.getContext(), kGridName));
  MLIRContext *ctx = module.getContext();
  module.walk([&](ConstantOp constant) {
    auto type = dyn_cast<RankedTensorType>(constant.getType());
    if (!type || type.getRank() == 0 || !type.hasStaticShape() ||
        !isa<FloatType>(type.getElementType()) || !constant->hasOneUse())
      return;
    auto stored = dyn_cast<shard::ShardOp>(*constant->getUsers().begin());
    if (!stored || stored.getAnnotateForUsers())
      return;
    for (OpOperand &use : llvm::make_early_inc_range(stored->getUses())) {
      auto user = dyn_cast<shard::ShardOp>(use.getOwner());
      if (!user || !user.getAnnotateForUsers())
        continue;
      // Store the piece this use needs, further split over dp on the first
      // dimension that divides; gather over dp just before the use.
      Sharding used(user.getSharding());
      SmallVector<SmallVector<GridAxis>> axes(type.getRank());
      for (auto [dim, dimAxes] : llvm::enumerate(used.getSplitAxes()))
        axes[dim].assign(dimAxes.asArrayRef().begin(),
                         dimAxes.asArrayRef().end());
      bool placed = false;
      for (auto [dim, dimAxes] : llvm::enumerate(axes)) {
        int64_t pieces = dp;
        for (GridAxis axis : dimAxes)
          pieces *= gridOp.getShape()[axis];
        if (llvm::is_contained(dimAxes, *dpAxis) ||
            type.getDimSize(dim) % pieces != 0)
          continue;
        dimAxes.push_back(*dpAxis);
        placed = true;
        break;
      }
      if (!placed)
        continue;
      SmallVector<GridAxesAttr> split;
      for (ArrayRef<GridAxis> dimAxes : axes)
        split.push_back(GridAxesAttr::get(ctx, dimAxes));
      OpBuilder builder(user);
      shard::ShardOp piece =
          createShard(builder, user.getLoc(), stored.getResult(),
                      Sharding::get(used.getGridAttr(), split), true);
      use.set(piece.getResult());
    }
  });
  return success();
}

void loom::completeShardings(ModuleOp module) {
  auto grid = FlatSymbolRefAttr::get(module.getContext(), kGridName);
  OpBuilder builder(module.getContext());
  for (func::FuncOp func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    for (Operation &op : llvm::make_early_inc_range(func.getBody().front())) {
      auto shardingOp = dyn_cast<shard::ShardingInterface>(&op);
      if (!shardingOp || op.hasTrait<OpTrait::IsTerminator>() ||
          isFullyAnnotated(&op))
        continue;
      builder.setInsertionPoint(&op);
      (void)shardingOp.addShardingAnnotations(builder,
                                              shard::ShardingOption({}, grid));
    }
  }
}
