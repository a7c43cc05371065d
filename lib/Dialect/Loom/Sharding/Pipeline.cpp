//===- Pipeline.cpp - Pipeline parallelism --------------------------------===//
//
// Pipeline partitioning runs after the other axes have partitioned the
// program (their collectives then sit inside stages and involve only the
// ranks of one stage):
//
// 1. Micro-batches. Partitioning a copy with "dp=M" yields a program whose
//    body, on one rank, computes 1/M of the batch; that body becomes the
//    function, so everything the data-parallel rules know (reshapes that
//    name the batch, attention, embeddings) carries over unchanged.
// 2. Stages. The ops are kept in program order and cut into contiguous
//    stages. Values that depend only on the inputs and weights through data
//    movement and elementwise ops (slices of the inputs, masks, weight
//    pieces) are recomputed by every stage that reads them; the rest cross
//    a cut by shard.send / shard.recv. Cuts aim at equal FLOPs per stage and,
//    within a quarter of a stage's share of that aim, at the fewest bytes
//    crossing.
// 3. Schedule. For micro-batch 0, 1, ... the stages follow each other in
//    program order; a rank only runs its own stage's regions, so stage s
//    works on micro-batch m + 1 while stage s + 1 works on micro-batch m (the
//    forward half of GPipe). The last stage's results are concatenated over
//    micro-batches and broadcast along the pipeline axis, so that every rank
//    returns the whole results (the interface of the unpartitioned program).
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/Sharding/Pipeline.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/Sharding/Partition.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace loom;

namespace {

int64_t elementsOf(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped)
    return 1;
  return shaped.hasStaticShape() ? shaped.getNumElements() : 0;
}

/// Ops that only move data: no arithmetic to estimate.
bool movesDataOnly(Operation *op) {
  return isa<ConstantOp, ReshapeOp, TransposeOp, ConcatOp, SplitOp, SliceOp,
             GatherOp, GatherElementsOp, GatherNDOp, PadOp, ExpandOp, TileOp,
             SqueezeOp, UnsqueezeOp, ShapeOp, SizeOp, RangeOp,
             ConstantOfShapeOp, TriluOp, CastOp>(op) ||
         isa<shard::ShardDialect, tensor::TensorDialect, arith::ArithDialect>(
             op->getDialect());
}

/// Whether a value computed by `op` from values every stage has is cheaper
/// to recompute than to send: data movement and elementwise math, without
/// side effects or regions.
bool isRecomputable(Operation *op) {
  if (op->getNumRegions() != 0 || !isMemoryEffectFree(op))
    return false;
  return movesDataOnly(op) || op->hasTrait<OpTrait::Elementwise>();
}

/// The values of one stage boundary and their size.
struct Boundary {
  SmallVector<Value> values;
  int64_t bytes = 0;
};

/// One function being cut into stages.
class StageCutter {
public:
  StageCutter(func::FuncOp func, int64_t stages) : func(func), stages(stages) {}

  /// Splits the ops into recomputable ones and the ones stages own, and
  /// chooses the cuts.
  LogicalResult plan();

  /// Rewrites the function into its pipeline.
  LogicalResult build(int64_t axis, int64_t microBatches,
                      const MicroBatchPlan &batches);

private:
  /// The value `old` inside the stage region being built: received,
  /// computed there already, recomputed on demand, or (arguments and
  /// constants) passed in as an operand.
  Value materialize(Value old, OpBuilder &b, IRMapping &inside,
                    SmallVectorImpl<Value> &operands, Block &region,
                    ArrayRef<Value> microBatchArgs);

  func::FuncOp func;
  int64_t stages;
  /// Ops whose results cross stages by send/recv, in program order, and
  /// the stage each one runs in.
  SmallVector<Operation *> owned;
  llvm::DenseMap<Operation *, int64_t> stageOf;
  llvm::DenseSet<Value> recomputable;
  /// boundaries[s]: the values stage s sends to stage s + 1.
  SmallVector<Boundary> boundaries;
  SmallVector<double> stageFlops;
  /// Constants hoisted to the top of the new body, shared by all
  /// micro-batches.
  IRMapping hoisted;
  Block *newBody = nullptr;
};

LogicalResult StageCutter::plan() {
  Block &body = func.getBody().front();
  for (BlockArgument arg : body.getArguments())
    recomputable.insert(arg);
  for (Operation &op : body.without_terminator()) {
    if (isRecomputable(&op) && llvm::all_of(op.getOperands(), [&](Value v) {
          return recomputable.contains(v);
        }))
      recomputable.insert(op.result_begin(), op.result_end());
    else
      owned.push_back(&op);
  }
  int64_t n = owned.size();
  if (n < stages)
    return func.emitError() << "pp=" << stages << " needs at least " << stages
                            << " ops that compute on activations; '"
                            << func.getSymName() << "' has " << n;

  llvm::DenseMap<Operation *, int64_t> position;
  for (auto [i, op] : llvm::enumerate(owned))
    position[op] = i;
  // The last position that reads each owned value (n: the return).
  llvm::DenseMap<Value, int64_t> lastUse;
  for (Operation *op : owned)
    for (Value result : op->getResults())
      for (Operation *user : result.getUsers()) {
        Operation *top = body.findAncestorOpInBlock(*user);
        int64_t at = isa<func::ReturnOp>(top) ? n : position.lookup(top);
        lastUse[result] = std::max(lastUse.lookup(result), at);
      }
  // prefix[i]: FLOPs of owned ops 0..i; crossing[i]: bytes live across a
  // cut after op i.
  SmallVector<double> prefix(n);
  SmallVector<int64_t> crossing(n, 0);
  double total = 0;
  for (auto [i, op] : llvm::enumerate(owned)) {
    total += std::max(1.0, estimateFlops(op));
    prefix[i] = total;
  }
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j <= i; ++j)
      for (Value result : owned[j]->getResults())
        if (lastUse.lookup(result) > i)
          crossing[i] += staticTensorBytes(result.getType());

  SmallVector<int64_t> cuts;
  int64_t previous = -1;
  for (int64_t k = 1; k < stages; ++k) {
    double target = total * k / stages;
    double window = total / (4.0 * stages);
    int64_t best = -1, closest = -1;
    // Leave at least one op for each of the stages after this cut.
    for (int64_t i = previous + 1; i <= n - 1 - (stages - k); ++i) {
      double distance = std::abs(prefix[i] - target);
      if (closest < 0 || distance < std::abs(prefix[closest] - target))
        closest = i;
      if (distance > window)
        continue;
      if (best < 0 || crossing[i] < crossing[best] ||
          (crossing[i] == crossing[best] &&
           distance < std::abs(prefix[best] - target)))
        best = i;
    }
    cuts.push_back(best >= 0 ? best : closest);
    previous = cuts.back();
  }
  cuts.push_back(n - 1);

  int64_t stage = 0;
  stageFlops.assign(stages, 0);
  for (auto [i, op] : llvm::enumerate(owned)) {
    stageOf[op] = stage;
    stageFlops[stage] += std::max(1.0, estimateFlops(op));
    if (static_cast<int64_t>(i) == cuts[stage])
      ++stage;
  }
  boundaries.resize(stages - 1);
  for (int64_t s = 0; s + 1 < stages; ++s) {
    for (Operation *op : owned)
      for (Value result : op->getResults())
        if (stageOf[op] <= s && lastUse.lookup(result) > cuts[s]) {
          boundaries[s].values.push_back(result);
          boundaries[s].bytes += staticTensorBytes(result.getType());
        }
  }
  return success();
}

Value StageCutter::materialize(Value old, OpBuilder &b, IRMapping &inside,
                               SmallVectorImpl<Value> &operands, Block &region,
                               ArrayRef<Value> microBatchArgs) {
  if (Value known = inside.lookupOrNull(old))
    return known;
  auto passIn = [&](Value outer) {
    operands.push_back(outer);
    Value arg = region.addArgument(outer.getType(), old.getLoc());
    inside.map(old, arg);
    return arg;
  };
  if (auto arg = dyn_cast<BlockArgument>(old))
    return passIn(microBatchArgs[arg.getArgNumber()]);
  Operation *def = old.getDefiningOp();
  if (isa<ConstantOp>(def) || def->hasTrait<OpTrait::ConstantLike>()) {
    if (!hoisted.contains(old)) {
      OpBuilder top = OpBuilder::atBlockBegin(newBody);
      top.clone(*def, hoisted);
    }
    return passIn(hoisted.lookup(old));
  }
  // Recomputable (owned values are received or computed before use).
  assert(recomputable.contains(old) && "an owned value used before it exists");
  for (Value operand : def->getOperands())
    materialize(operand, b, inside, operands, region, microBatchArgs);
  b.clone(*def, inside);
  return inside.lookup(old);
}

LogicalResult StageCutter::build(int64_t axis, int64_t microBatches,
                                 const MicroBatchPlan &batches) {
  MLIRContext *ctx = func.getContext();
  Block &oldBody = func.getBody().front();
  auto ret = cast<func::ReturnOp>(oldBody.getTerminator());
  auto grid = FlatSymbolRefAttr::get(ctx, kGridName);
  auto axes = DenseI16ArrayAttr::get(ctx, {static_cast<int16_t>(axis)});
  Location loc = func.getLoc();

  newBody = new Block();
  func.getBody().push_back(newBody);
  for (auto [type, arg] :
       llvm::zip(batches.wholeBatchType.getInputs(), oldBody.getArguments()))
    newBody->addArgument(type, arg.getLoc());
  OpBuilder b = OpBuilder::atBlockEnd(newBody);

  // Each micro-batch's arguments.
  SmallVector<SmallVector<Value>> microBatchArgs(microBatches);
  for (auto [i, arg] : llvm::enumerate(newBody->getArguments())) {
    std::optional<int64_t> dim = batches.argumentAxes[i];
    if (microBatches == 1 || !dim) {
      for (auto &args : microBatchArgs)
        args.push_back(arg);
      continue;
    }
    int64_t size = cast<RankedTensorType>(arg.getType()).getDimSize(*dim);
    SmallVector<int64_t> sizes(microBatches, size / microBatches);
    auto split = SplitOp::create(b, arg.getLoc(), arg, *dim, sizes);
    for (auto [m, piece] : llvm::enumerate(split.getResults()))
      microBatchArgs[m].push_back(piece);
  }

  SmallVector<SmallVector<Value>> microBatchResults;
  for (int64_t m = 0; m < microBatches; ++m) {
    for (int64_t s = 0; s < stages; ++s) {
      bool last = s + 1 == stages;
      TypeRange resultTypes =
          last ? TypeRange(ret.getOperandTypes()) : TypeRange();
      auto stage = PipelineStageOp::create(
          b, loc, resultTypes, ValueRange(), grid, b.getI64IntegerAttr(axis),
          b.getI64IntegerAttr(s), b.getI64IntegerAttr(m));
      Block &region = stage.getBody().emplaceBlock();
      OpBuilder in = OpBuilder::atBlockEnd(&region);
      IRMapping inside;
      SmallVector<Value> operands;
      if (s > 0)
        for (Value value : boundaries[s - 1].values) {
          auto type = cast<RankedTensorType>(value.getType());
          Value buffer = tensor::EmptyOp::create(
              in, value.getLoc(), type.getShape(), type.getElementType());
          inside.map(value, shard::RecvOp::create(
                                in, value.getLoc(), type, grid, axes, buffer,
                                b.getDenseI64ArrayAttr({s - 1}), ValueRange())
                                .getResult());
        }
      for (Operation *op : owned) {
        if (stageOf[op] != s)
          continue;
        for (Value operand : op->getOperands())
          materialize(operand, in, inside, operands, region, microBatchArgs[m]);
        in.clone(*op, inside);
      }
      SmallVector<Value> yielded;
      if (!last)
        for (Value value : boundaries[s].values)
          shard::SendOp::create(in, value.getLoc(), value.getType(), grid, axes,
                                materialize(value, in, inside, operands, region,
                                            microBatchArgs[m]),
                                b.getDenseI64ArrayAttr({s + 1}), ValueRange());
      else
        for (Value value : ret.getOperands())
          yielded.push_back(materialize(value, in, inside, operands, region,
                                        microBatchArgs[m]));
      YieldOp::create(in, loc, yielded);
      stage->setOperands(operands);
      if (last)
        microBatchResults.push_back(SmallVector<Value>(
            stage.getResults().begin(), stage.getResults().end()));
    }
  }

  // The whole results, on every rank.
  SmallVector<Value> results;
  for (auto [i, type] : llvm::enumerate(batches.wholeBatchType.getResults())) {
    Value whole = microBatchResults.front()[i];
    if (microBatches > 1 && batches.resultAxes[i]) {
      SmallVector<Value> pieces;
      for (ArrayRef<Value> mb : microBatchResults)
        pieces.push_back(mb[i]);
      whole = ConcatOp::create(b, loc, type, pieces,
                               b.getI64IntegerAttr(*batches.resultAxes[i]));
    }
    if (isa<RankedTensorType>(whole.getType()))
      whole = shard::BroadcastOp::create(
          b, loc, whole.getType(), grid, axes, whole,
          b.getDenseI64ArrayAttr({stages - 1}), ValueRange());
    results.push_back(whole);
  }
  func::ReturnOp::create(b, ret.getLoc(), results);

  oldBody.dropAllReferences();
  oldBody.dropAllDefinedValueUses();
  oldBody.erase();
  func.setType(batches.wholeBatchType);

  InFlightDiagnostic remark = emitRemark(loc);
  remark << "pipeline for '" << func.getSymName() << "': " << stages
         << " stages x " << microBatches << " micro-batches (per micro-batch)";
  for (int64_t s = 0; s < stages; ++s) {
    remark << "\n  stage " << s << ": "
           << llvm::formatv("{0:F3}", stageFlops[s] / 1e6).str() << " MFLOP";
    if (s + 1 < stages)
      remark << "; sends " << boundaries[s].values.size() << " value(s), "
             << boundaries[s].bytes << " bytes";
  }
  return success();
}

} // namespace

int64_t loom::staticTensorBytes(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped)
    return 0;
  return elementsOf(type) *
         std::max<int64_t>(1, shaped.getElementTypeBitWidth() / 8);
}

double loom::estimateFlops(Operation *op) {
  if (auto matmul = dyn_cast<MatMulOp>(op)) {
    auto lhs = cast<RankedTensorType>(matmul.getLhs().getType());
    return 2.0 * elementsOf(matmul.getType()) * lhs.getShape().back();
  }
  if (auto attention = dyn_cast<AttentionOp>(op)) {
    auto key = cast<RankedTensorType>(attention.getKey().getType());
    // Q K^T and the weighted sum of V.
    return 4.0 * elementsOf(attention.getQuery().getType()) * key.getDimSize(2);
  }
  if (auto moe = dyn_cast<MoEOp>(op)) {
    // Each expert's two products on its capacity of token slots (every
    // token when nothing is dropped), as the layer is lowered.
    auto input = cast<RankedTensorType>(moe.getInput().getType());
    auto wIn = cast<RankedTensorType>(moe.getWIn().getType());
    int64_t tokens = input.getDimSize(0);
    return 4.0 * input.getDimSize(1) * wIn.getDimSize(2) * moe.getNumExperts() *
           moe.getCapacity(tokens);
  }
  if (auto conv = dyn_cast<ConvOp>(op)) {
    auto weight = cast<RankedTensorType>(conv.getWeight().getType());
    // Each output element: input channels per group times the kernel.
    return 2.0 * elementsOf(conv.getType()) * elementsOf(weight) /
           std::max<int64_t>(1, weight.getDimSize(0));
  }
  if (movesDataOnly(op))
    return 0;
  double flops = 0;
  for (Value result : op->getResults())
    flops += elementsOf(result.getType());
  for (Region &region : op->getRegions())
    region.walk([&](Operation *inner) { flops += estimateFlops(inner); });
  return flops;
}

FailureOr<llvm::StringMap<MicroBatchPlan>>
loom::splitIntoMicroBatches(ModuleOp module, int64_t microBatches,
                            function_ref<LogicalResult(ModuleOp)> splitBatch) {
  llvm::StringMap<MicroBatchPlan> plans;
  for (func::FuncOp func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    MicroBatchPlan &plan = plans[func.getSymName()];
    plan.wholeBatchType = func.getFunctionType();
    plan.argumentAxes.assign(func.getNumArguments(), std::nullopt);
    plan.resultAxes.assign(func.getNumResults(), std::nullopt);
  }
  if (microBatches == 1)
    return plans;
  for (func::FuncOp func : module.getOps<func::FuncOp>())
    for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
      auto tensor = dyn_cast<RankedTensorType>(type);
      if (!tensor || tensor.getRank() == 0)
        continue;
      int64_t batch = tensor.getDimSize(0);
      if (ShapedType::isDynamic(batch) || batch % microBatches != 0)
        return emitError(func.getLoc())
               << "micro-batches=" << microBatches
               << " does not divide the batch dimension ("
               << (ShapedType::isDynamic(batch) ? std::string("?")
                                                : std::to_string(batch))
               << ") of argument " << i << " of '" << func.getSymName() << "'";
    }
  OwningOpRef<ModuleOp> copy = module.clone();
  if (failed(splitBatch(*copy)))
    return emitError(module.getLoc())
           << "micro-batches=" << microBatches
           << " splits dimension 0 of every input like dp=" << microBatches
           << ", which failed (see above)";
  for (func::FuncOp split : copy->getOps<func::FuncOp>()) {
    if (split.isExternal())
      continue;
    MicroBatchPlan &plan = plans[split.getSymName()];
    Block &body = split.getBody().front();
    // One rank's slice of each argument becomes the argument.
    for (BlockArgument arg : body.getArguments()) {
      for (Operation *user : llvm::make_early_inc_range(arg.getUsers())) {
        auto slice = dyn_cast<shard::AllSliceOp>(user);
        if (!slice)
          continue;
        plan.argumentAxes[arg.getArgNumber()] =
            slice.getSliceAxis().getSExtValue();
        arg.setType(slice.getType());
        slice.replaceAllUsesWith(arg);
        slice.erase();
      }
    }
    // One rank's piece of each result becomes the result.
    Operation *ret = body.getTerminator();
    for (OpOperand &operand : ret->getOpOperands())
      if (auto gather = operand.get().getDefiningOp<shard::AllGatherOp>()) {
        plan.resultAxes[operand.getOperandNumber()] =
            gather.getGatherAxis().getSExtValue();
        operand.set(gather.getInput());
      }
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
      if (isOpTriviallyDead(&op))
        op.erase();
    WalkResult walk = split.walk([&](Operation *op) {
      if (isa<shard::ShardDialect>(op->getDialect())) {
        op->emitError() << "needs the whole batch, so the program cannot be "
                           "split into "
                        << microBatches << " micro-batches";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
    split.setType(FunctionType::get(
        module.getContext(), body.getArgumentTypes(), ret->getOperandTypes()));
    auto original = module.lookupSymbol<func::FuncOp>(split.getSymName());
    original.getBody().takeBody(split.getBody());
    original.setType(split.getFunctionType());
  }
  return plans;
}

LogicalResult
loom::buildPipeline(ModuleOp module, int64_t axis, int64_t stages,
                    int64_t microBatches,
                    const llvm::StringMap<MicroBatchPlan> &plans) {
  for (func::FuncOp func : llvm::to_vector(module.getOps<func::FuncOp>())) {
    if (func.isExternal())
      continue;
    StageCutter cutter(func, stages);
    if (failed(cutter.plan()) ||
        failed(
            cutter.build(axis, microBatches, plans.lookup(func.getSymName()))))
      return failure();
  }
  return success();
}
