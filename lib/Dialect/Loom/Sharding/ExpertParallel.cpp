//===- ExpertParallel.cpp - Expert parallelism for loom.moe ---------------===//
//
// The dispatch/combine form of a mixture-of-experts layer (GShard's): each
// (token, choice) assignment gets a slot `c < C` in its expert's queue,
// a dispatch mask `[T, E*C]` gathers the tokens into a buffer `[E, C, D]`
// (one matmul), the experts run on their rows of the buffer, and the
// routing weights placed the same way combine the results (one matmul).
// Everything is built from loom ops, so it runs wherever they run.
//
// Over an "ep" grid axis of n ranks, rank r owns experts
// [r*E/n, (r+1)*E/n): dimension 0 of the buffer is cut into n blocks of
// E/n experts and `shard.all_to_all` sends block j to rank j (dispatch);
// each rank runs its experts on the slots of all ranks, and a second
// all-to-all returns them (combine).
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/Sharding/ExpertParallel.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace loom;
using shard::GridAxis;
using shard::Sharding;
using shard::ShardingOption;

namespace {

/// Builds loom ops from their generic form (result type, operands,
/// attributes), which every op has.
class MoEBuilder {
public:
  MoEBuilder(OpBuilder &builder, Location loc) : b(builder), loc(loc) {}

  template <typename OpT>
  Value make(Type type, ValueRange operands,
             ArrayRef<NamedAttribute> attrs = {}) {
    return OpT::create(b, loc, TypeRange{type}, operands, attrs)->getResult(0);
  }

  RankedTensorType type(ArrayRef<int64_t> shape, Type element) {
    return RankedTensorType::get(shape, element);
  }

  Value i64Constant(ArrayRef<int64_t> shape, ArrayRef<int64_t> values) {
    return ConstantOp::create(
        b, loc, DenseIntElementsAttr::get(type(shape, b.getI64Type()), values));
  }

  /// Routing: each token's `k` best experts by `scores` ([T, E]) and
  /// their weights ([T, k] each), normalized if the layer says so and in
  /// `element`.
  std::pair<Value, Value> route(MoEOp moe, Value scores, Type element) {
    auto scoreType = cast<RankedTensorType>(scores.getType());
    int64_t tokens = scoreType.getDimSize(0), k = moe.getKAttr().getInt();
    auto topk =
        TopKOp::create(b, loc,
                       TypeRange{type({tokens, k}, scoreType.getElementType()),
                                 type({tokens, k}, b.getI64Type())},
                       ValueRange{scores, i64Constant({1}, {k})},
                       {b.getNamedAttr("axis", b.getI64IntegerAttr(1))});
    Value weights = topk.getValues();
    if (moe.getNormalize())
      weights = make<DivOp>(weights.getType(),
                            {weights, reduceSum(weights, 1, true)});
    if (scoreType.getElementType() != element)
      weights = make<CastOp>(type({tokens, k}, element), {weights});
    return {topk.getIndices(), weights};
  }

  Value reshape(Value value, ArrayRef<int64_t> shape) {
    auto source = cast<RankedTensorType>(value.getType());
    return make<ReshapeOp>(
        type(shape, source.getElementType()),
        {value, i64Constant({static_cast<int64_t>(shape.size())}, shape)});
  }

  Value transpose(Value value, ArrayRef<int64_t> perm) {
    auto source = cast<RankedTensorType>(value.getType());
    SmallVector<int64_t> shape;
    for (int64_t p : perm)
      shape.push_back(source.getDimSize(p));
    return make<TransposeOp>(
        type(shape, source.getElementType()), {value},
        {b.getNamedAttr("perm", b.getDenseI64ArrayAttr(perm))});
  }

  Value reduceSum(Value value, int64_t axis, bool keepdims) {
    auto source = cast<RankedTensorType>(value.getType());
    SmallVector<int64_t> shape(source.getShape());
    if (keepdims)
      shape[axis] = 1;
    else
      shape.erase(shape.begin() + axis);
    return make<ReduceSumOp>(
        type(shape, source.getElementType()), {value},
        {b.getNamedAttr("axes", b.getDenseI64ArrayAttr({axis})),
         b.getNamedAttr("keepdims", b.getBoolAttr(keepdims))});
  }

  /// `indices` [N] one-hot over `depth` as 0/1 floats [N, depth]; indices
  /// outside [0, depth) give a row of zeros.
  Value oneHot(Value indices, int64_t depth, Type element) {
    int64_t n = cast<RankedTensorType>(indices.getType()).getDimSize(0);
    Value depthValue = i64Constant({}, {depth});
    Value values = ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(
            type({2}, element),
            ArrayRef<Attribute>{b.getFloatAttr(element, 0),
                                b.getFloatAttr(element, 1)}));
    return make<OneHotOp>(type({n, depth}, element),
                          {indices, depthValue, values},
                          {b.getNamedAttr("axis", b.getI64IntegerAttr(-1))});
  }

  /// A matmul of operands with equal batch dimensions, or of a matrix by a
  /// batch of matrices (numpy broadcasting of the matrix).
  Value matmul(Value lhs, Value rhs) {
    auto l = cast<RankedTensorType>(lhs.getType());
    auto r = cast<RankedTensorType>(rhs.getType());
    SmallVector<int64_t> shape(r.getShape().drop_back(2));
    if (l.getRank() > r.getRank())
      shape.assign(l.getShape().begin(), l.getShape().end() - 2);
    shape.push_back(l.getDimSize(l.getRank() - 2));
    shape.push_back(r.getShape().back());
    return make<MatMulOp>(type(shape, l.getElementType()), {lhs, rhs});
  }

  Value activate(Value value, StringRef activation) {
    if (activation == "relu")
      return make<ReluOp>(value.getType(), {value});
    if (activation == "gelu")
      return make<GeluOp>(value.getType(), {value});
    if (activation == "silu")
      return make<SiluOp>(value.getType(), {value});
    return value;
  }

  /// The experts' hidden activations on `x`: activation(x @ w_in), or
  /// gated, activation(x @ w_gate) * (x @ w_in).
  Value expertHidden(Value x, Value wIn, Value wGate, StringRef activation) {
    Value up = matmul(x, wIn);
    if (!wGate)
      return activate(up, activation);
    Value gate = activate(matmul(x, wGate), activation);
    return make<MulOp>(up.getType(), {gate, up});
  }

  OpBuilder &b;
  Location loc;
};

int64_t dimOf(Value value, int64_t dim) {
  return cast<RankedTensorType>(value.getType()).getDimSize(dim);
}

/// The grid axes splitting dimension `dim` of a value with `sharding`.
ArrayRef<GridAxis> splitAxesOf(const Sharding &sharding, int64_t dim) {
  if (!sharding || static_cast<int64_t>(sharding.getSplitAxes().size()) <= dim)
    return {};
  return sharding.getSplitAxes()[dim].asArrayRef();
}

} // namespace

FailureOr<Value>
loom::buildMoEDispatchCombine(OpBuilder &builder, MoEOp moe, Value input,
                              Value scores, Value wIn, Value wOut, Value wGate,
                              const ExpertPlacement *placement) {
  for (Value value : {input, scores, wIn, wOut})
    if (!cast<RankedTensorType>(value.getType()).hasStaticShape())
      return moe.emitOpError("needs static shapes for the dispatch/combine "
                             "form, got ")
             << value.getType();
  MoEBuilder m(builder, moe.getLoc());
  Type element = cast<RankedTensorType>(input.getType()).getElementType();
  Type i64 = builder.getI64Type();
  int64_t tokens = dimOf(input, 0), model = dimOf(input, 1),
          experts = dimOf(scores, 1), localExperts = dimOf(wIn, 0),
          k = moe.getKAttr().getInt();
  int64_t ranks = placement ? placement->ranks : 1;
  if (localExperts * ranks != experts)
    return moe.emitOpError("holds ")
           << localExperts << " experts on each of " << ranks
           << " ranks, expected " << experts << " in all";
  int64_t capacity = moe.getCapacity(tokens);
  int64_t assignments = k * tokens;

  // Routing: the k best experts of each token and their weights.
  auto [chosenExperts, weights] = m.route(moe, scores, element);

  // Assignments in priority order: every token's first choice, then every
  // token's second choice, ... ([k * T], choice-major).
  Value chosen = m.reshape(m.transpose(chosenExperts, {1, 0}), {assignments});
  Value chosenWeights = m.reshape(m.transpose(weights, {1, 0}), {k, tokens, 1});
  Value expertMask = m.oneHot(chosen, experts, element); // [kT, E]
  // Slot of each assignment in its expert's queue: how many assignments
  // before it chose the same expert.
  Value before = m.make<CumSumOp>(
      expertMask.getType(), {expertMask},
      {builder.getNamedAttr("axis", builder.getI64IntegerAttr(0)),
       builder.getNamedAttr("exclusive", builder.getBoolAttr(true))});
  Value slot = m.reduceSum(
      m.make<MulOp>(expertMask.getType(), {expertMask, before}), 1, false);
  Value slotIndex = m.make<CastOp>(m.type({assignments}, i64), {slot});
  // Slots at or past the capacity one-hot to zeros: the assignment is
  // dropped.
  Value slotMask = m.oneHot(slotIndex, capacity, element); // [kT, C]
  Value placed =
      m.make<MulOp>(m.type({assignments, experts, capacity}, element),
                    {m.reshape(expertMask, {assignments, experts, 1}),
                     m.reshape(slotMask, {assignments, 1, capacity})});
  Value perChoice = m.reshape(placed, {k, tokens, experts * capacity});
  // A token chooses an expert at most once, so each (token, slot) pair has
  // at most one assignment: summing over choices keeps 0/1 entries.
  Value dispatch = m.reduceSum(perChoice, 0, false); // [T, E*C]
  Value combine = m.reduceSum(
      m.make<MulOp>(perChoice.getType(), {perChoice, chosenWeights}), 0,
      false); // [T, E*C]

  // Dispatch: the tokens in their slots, [E, C, D].
  Value buffer = m.reshape(m.matmul(m.transpose(dispatch, {1, 0}), input),
                           {experts, capacity, model});
  Value slots = buffer; // [local experts, slots from all ranks, D]
  if (placement) {
    // Block j of E/n experts goes to rank j; what comes back from rank j
    // is rank j's slots for this rank's experts.
    Value received = shard::AllToAllOp::create(
        builder, moe.getLoc(), buffer.getType(), placement->grid,
        builder.getDenseI16ArrayAttr(placement->axes), buffer,
        builder.getIndexAttr(0), builder.getIndexAttr(0));
    slots = m.reshape(
        m.transpose(m.reshape(received, {ranks, localExperts, capacity, model}),
                    {1, 0, 2, 3}),
        {localExperts, ranks * capacity, model});
  }

  // The local experts on their slots.
  Value expertOut =
      m.matmul(m.expertHidden(slots, wIn, wGate, moe.getActivation()), wOut);

  Value results = expertOut; // [E, C, D] in this rank's slot order
  if (placement) {
    Value outgoing =
        m.reshape(m.transpose(m.reshape(expertOut,
                                        {localExperts, ranks, capacity, model}),
                              {1, 0, 2, 3}),
                  {experts, capacity, model});
    results = shard::AllToAllOp::create(
        builder, moe.getLoc(), outgoing.getType(), placement->grid,
        builder.getDenseI16ArrayAttr(placement->axes), outgoing,
        builder.getIndexAttr(0), builder.getIndexAttr(0));
  }
  // Combine: each token's slots weighted by its routing weights.
  return m.matmul(combine, m.reshape(results, {experts * capacity, model}));
}

FailureOr<Value> loom::buildMoEDense(OpBuilder &builder, MoEOp moe, Value input,
                                     Value scores, Value wIn, Value wOut,
                                     Value wGate) {
  if (moe.getCapacityFactorAttr())
    return moe.emitOpError("drops tokens over capacity: the dense form does "
                           "not apply");
  for (Value value : {input, scores, wIn, wOut})
    if (!cast<RankedTensorType>(value.getType()).hasStaticShape())
      return moe.emitOpError("needs static shapes for the dense form, got ")
             << value.getType();
  MoEBuilder m(builder, moe.getLoc());
  Type element = cast<RankedTensorType>(input.getType()).getElementType();
  int64_t tokens = dimOf(input, 0), model = dimOf(input, 1),
          experts = dimOf(scores, 1), k = moe.getKAttr().getInt();
  auto [chosenExperts, weights] = m.route(moe, scores, element);
  // Combine weights [E, T, 1]: each token's weight for every expert (zero
  // for the experts it did not choose).
  Value chosen = m.reshape(chosenExperts, {tokens * k});
  Value mask =
      m.reshape(m.oneHot(chosen, experts, element), {tokens, k, experts});
  Value combine = m.reduceSum(
      m.make<MulOp>(mask.getType(), {mask, m.reshape(weights, {tokens, k, 1})}),
      1, false);
  Value perExpert =
      m.reshape(m.transpose(combine, {1, 0}), {experts, tokens, 1});
  // Every expert on every token ([T, D] broadcast against [E, D, H]).
  Value expertOut =
      m.matmul(m.expertHidden(input, wIn, wGate, moe.getActivation()), wOut);
  return m.reduceSum(m.make<MulOp>(m.type({experts, tokens, model}, element),
                                   {expertOut, perExpert}),
                     0, false);
}

LogicalResult loom::annotateExpertParallel(func::FuncOp func,
                                           FlatSymbolRefAttr grid,
                                           GridAxis epAxis, int64_t ep,
                                           double capacityFactor) {
  if (capacityFactor < 0)
    return func.emitError() << "capacity-factor must be positive (or 0 for "
                               "no capacity), got "
                            << capacityFactor;
  OpBuilder builder(func.getContext());
  WalkResult walk = func.walk([&](MoEOp moe) -> WalkResult {
    int64_t experts = moe.getNumExperts();
    if (ShapedType::isDynamic(experts) || experts % ep != 0) {
      moe.emitError() << "ep=" << ep << " does not divide the "
                      << (ShapedType::isDynamic(experts)
                              ? std::string("?")
                              : std::to_string(experts))
                      << " experts of this mixture-of-experts layer";
      return WalkResult::interrupt();
    }
    if (capacityFactor > 0 && !moe.getCapacityFactorAttr())
      moe.setCapacityFactorAttr(builder.getF64FloatAttr(capacityFactor));
    // Each rank stores its own experts: the expert weights are used split
    // by experts over the ep axis.
    Sharding split = Sharding::get(
        grid, {shard::GridAxesAttr::get(func.getContext(), {epAxis})});
    auto shardOf = [&](Value value, const Sharding &sharding, bool forUsers) {
      Value shardingValue = shard::ShardingOp::create(
          builder, moe.getLoc(), grid, sharding.getSplitAxes());
      return shard::ShardOp::create(builder, moe.getLoc(), value, shardingValue,
                                    forUsers);
    };
    SmallVector<OpOperand *> weights = {&moe.getWInMutable(),
                                        &moe.getWOutMutable()};
    if (moe.getWGate())
      weights.push_back(&moe->getOpOperand(4));
    for (OpOperand *weight : weights) {
      Value value = weight->get();
      auto source = value.getDefiningOp<shard::ShardOp>();
      if (!source || source.getAnnotateForUsers()) {
        // A weight computed in the program: annotate where it is made.
        builder.setInsertionPointAfterValue(value);
        source =
            shardOf(value, value.hasOneUse() ? split : Sharding(grid), false);
        value.replaceAllUsesExcept(source.getResult(), source);
      }
      builder.setInsertionPoint(moe);
      weight->set(shardOf(source.getResult(), split, true).getResult());
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

FailureOr<ShardingOption>
loom::chooseMoESharding(MoEOp moe, ArrayRef<Sharding> operandShardings,
                        ArrayRef<Sharding> resultShardings) {
  FlatSymbolRefAttr grid;
  for (const Sharding &sharding :
       llvm::concat<const Sharding>(operandShardings, resultShardings))
    if (sharding) {
      if (grid && grid != sharding.getGridAttr())
        return failure();
      grid = sharding.getGridAttr();
    }
  if (!grid)
    return ShardingOption::makeEmpty();
  auto gridOp = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(moe, grid);
  if (!gridOp)
    return failure();
  // The first split that divides: tokens from the result, the input or the
  // scores; experts from w_in or w_out.
  auto pick = [&](ArrayRef<std::pair<const Sharding *, int64_t>> candidates,
                  int64_t size) -> SmallVector<GridAxis> {
    for (auto [sharding, dim] : candidates) {
      ArrayRef<GridAxis> axes = splitAxesOf(*sharding, dim);
      if (axes.empty())
        continue;
      int64_t count = 1;
      for (GridAxis axis : axes)
        count *= gridOp.getShape()[axis];
      if (!ShapedType::isDynamic(size) && !ShapedType::isDynamic(count) &&
          size % count == 0)
        return SmallVector<GridAxis>(axes);
    }
    return {};
  };
  Sharding none;
  const Sharding &result = resultShardings.empty() ? none : resultShardings[0];
  ShardingOption option;
  option.grid = grid;
  option.shardingArray.resize(kMoENumLoops);
  option.shardingArray[kMoETokens] =
      pick({{&result, 0}, {&operandShardings[0], 0}, {&operandShardings[1], 0}},
           dimOf(moe.getInput(), 0));
  SmallVector<std::pair<const Sharding *, int64_t>> expertWeights = {
      {&operandShardings[2], 0}, {&operandShardings[3], 0}};
  if (operandShardings.size() > 4)
    expertWeights.push_back({&operandShardings[4], 0});
  option.shardingArray[kMoEExperts] = pick(expertWeights, moe.getNumExperts());
  return option;
}

LogicalResult loom::partitionMoE(MoEOp moe, ArrayRef<Value> partitionedOperands,
                                 ArrayRef<Sharding> operandShardings,
                                 ArrayRef<Sharding> resultShardings,
                                 IRMapping &partitionMap,
                                 SymbolTableCollection &symbolTable,
                                 OpBuilder &builder) {
  ArrayRef<GridAxis> expertAxes = splitAxesOf(operandShardings[2], 0);
  if (expertAxes != splitAxesOf(operandShardings[3], 0) ||
      (operandShardings.size() > 4 &&
       expertAxes != splitAxesOf(operandShardings[4], 0)))
    return moe.emitOpError("needs its expert weights split alike by experts");
  if (!splitAxesOf(operandShardings[1], 1).empty())
    return moe.emitOpError("cannot route with the scores split by experts");
  Value result;
  if (expertAxes.empty()) {
    // Every expert here: the same layer on this rank's tokens (a capacity
    // applies to them).
    auto type = cast<RankedTensorType>(partitionedOperands[0].getType());
    Operation *clone = builder.clone(*moe);
    clone->setOperands(partitionedOperands);
    clone->getResult(0).setType(type);
    result = clone->getResult(0);
  } else {
    ExpertPlacement placement;
    placement.grid = operandShardings[2].getGridAttr();
    placement.axes.assign(expertAxes.begin(), expertAxes.end());
    shard::GridOp gridOp = shard::getGrid(moe, placement.grid, symbolTable);
    if (!gridOp)
      return moe.emitOpError("has no grid ") << placement.grid;
    for (GridAxis axis : expertAxes)
      placement.ranks *= gridOp.getShape()[axis];
    FailureOr<Value> built = buildMoEDispatchCombine(
        builder, moe, partitionedOperands[0], partitionedOperands[1],
        partitionedOperands[2], partitionedOperands[3],
        partitionedOperands.size() > 4 ? partitionedOperands[4] : Value(),
        &placement);
    if (failed(built))
      return failure();
    result = *built;
  }
  partitionMap.map(moe.getResult(), result);
  return success();
}
