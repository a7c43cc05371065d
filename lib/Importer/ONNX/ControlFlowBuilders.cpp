//===- ControlFlowBuilders.cpp - If, Loop and Scan ------------------------===//
//
// If becomes loom.if, Loop and Scan loom.loop, whose regions are isolated
// from above: the values a subgraph reads from the enclosing graphs become
// operands of the op (constants are copied into the region instead, so
// that folding inside it still sees them). An If whose condition is known
// at import time makes no op: the branch it selects is imported in place.
//
//===----------------------------------------------------------------------===//

#include "BuilderUtils.h"
#include "GraphImporter.h"

#include "llvm/ADT/StringSet.h"

#include <memory>

using namespace mlir;

namespace loom::onnx_import {
namespace {

/// What a subgraph reads from the enclosing graphs: the names and values
/// that become operands, and the constants copied into the region.
struct Captures {
  SmallVector<std::string> names;
  SmallVector<Value> values;
  SmallVector<std::pair<std::string, Operation *>> constants;

  /// Collects what `graphs` read; fails (reported) on a name that is not
  /// defined.
  LogicalResult collect(NodeBinder &b,
                        ArrayRef<const onnx::GraphProto *> graphs) {
    llvm::StringSet<> seen;
    for (const onnx::GraphProto *graph : graphs)
      for (const std::string &name : GraphImporter::outerNames(*graph)) {
        if (!seen.insert(name).second)
          continue;
        Value value = b.importer().lookup(name);
        if (!value)
          return b.fail("a subgraph reads '" + name +
                        "', which is not defined before this node");
        if (Operation *constant = value.getDefiningOp<ConstantOp>()) {
          constants.push_back({name, constant});
          continue;
        }
        names.push_back(name);
        values.push_back(value);
      }
    return success();
  }

  /// Binds the captures in a region whose block arguments from
  /// `firstArgument` on stand for `values`, copying the constants in at the
  /// builder's insertion point.
  llvm::StringMap<Value> bind(OpBuilder &builder, Block &block,
                              unsigned firstArgument) const {
    llvm::StringMap<Value> bound;
    for (auto [i, name] : llvm::enumerate(names))
      bound[name] = block.getArgument(firstArgument + i);
    for (const auto &[name, constant] : constants)
      bound[name] = builder.clone(*constant)->getResult(0);
    return bound;
  }
};

LogicalResult buildIf(NodeBinder &b) {
  if (failed(b.rejectUnknownAttrs({"then_branch", "else_branch"})))
    return failure();
  const onnx::GraphProto *thenGraph = b.graphAttr("then_branch");
  const onnx::GraphProto *elseGraph = b.graphAttr("else_branch");
  Value condition = b.input(0);
  if (!thenGraph || !elseGraph || !condition)
    return failure();
  RankedTensorType conditionType = b.inputType(0);
  if (!conditionType.getElementType().isInteger(1))
    return b.emitError() << "the condition must be a bool tensor, not "
                         << conditionType;
  if (conditionType.hasStaticShape() && conditionType.getNumElements() != 1)
    return b.fail("the condition must hold one element, not " +
                  Twine(conditionType.getNumElements()));
  for (auto [what, graph] : {std::pair<StringRef, const onnx::GraphProto *>{
                                 "then_branch", thenGraph},
                             {"else_branch", elseGraph}})
    if (graph->input_size() != 0 ||
        graph->output_size() != static_cast<int>(b.numOutputs()))
      return b.fail(what +
                    " must take no inputs and give one output per "
                    "output of the node (it takes " +
                    Twine(graph->input_size()) + " and gives " +
                    Twine(graph->output_size()) + " for " +
                    Twine(b.numOutputs()) + ")");
  GraphImporter &importer = b.importer();

  // Exporters test sizes that are often known by now.
  if (DenseElementsAttr known = b.constantInput(0)) {
    bool taken = *known.getValues<bool>().begin();
    SmallVector<Value> outputs;
    if (failed(importer.importSubgraph(taken ? *thenGraph : *elseGraph, {}, {},
                                       /*isolated=*/false, outputs)))
      return failure();
    for (auto [i, value] : llvm::enumerate(outputs))
      if (b.hasOutput(i))
        b.setOutput(i, value);
    return success();
  }

  // What the branches read from the enclosing graphs: operands of the op,
  // or constants copied into each branch.
  Captures captures;
  if (failed(captures.collect(b, {thenGraph, elseGraph})))
    return failure();

  OpBuilder &builder = b.builder();
  auto importBranch = [&](const onnx::GraphProto &graph, Block &block,
                          SmallVectorImpl<Value> &outputs) -> LogicalResult {
    for (Value input : captures.values)
      block.addArgument(input.getType(), b.loc());
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(&block);
    return importer.importSubgraph(graph, {}, captures.bind(builder, block, 0),
                                   /*isolated=*/true, outputs);
  };
  auto thenBlock = std::make_unique<Block>();
  auto elseBlock = std::make_unique<Block>();
  SmallVector<Value> thenOutputs, elseOutputs;
  if (failed(importBranch(*thenGraph, *thenBlock, thenOutputs)) ||
      failed(importBranch(*elseGraph, *elseBlock, elseOutputs)))
    return failure();

  SmallVector<Type> resultTypes;
  for (auto [i, thenValue, elseValue] :
       llvm::enumerate(thenOutputs, elseOutputs)) {
    auto thenType = dyn_cast<RankedTensorType>(thenValue.getType());
    auto elseType = dyn_cast<RankedTensorType>(elseValue.getType());
    RankedTensorType joined =
        thenType && elseType ? joinBranchTypes(thenType, elseType) : nullptr;
    if (!joined)
      return b.emitError()
             << "output " << i << " is " << thenValue.getType()
             << " in then_branch but " << elseValue.getType()
             << " in else_branch; the branches must agree on the element "
                "type and the rank";
    resultTypes.push_back(joined);
  }
  for (auto [block, outputs] :
       {std::pair<Block *, SmallVector<Value> *>{thenBlock.get(), &thenOutputs},
        {elseBlock.get(), &elseOutputs}}) {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(block);
    SmallVector<Value> yielded;
    for (auto [value, type] : llvm::zip(*outputs, resultTypes))
      yielded.push_back(
          value.getType() == type
              ? value
              : tensor::CastOp::create(builder, b.loc(), type, value)
                    .getResult());
    YieldOp::create(builder, b.loc(), yielded);
  }
  auto ifOp =
      IfOp::create(builder, b.loc(), resultTypes, condition, captures.values);
  ifOp.getThenRegion().push_back(thenBlock.release());
  ifOp.getElseRegion().push_back(elseBlock.release());
  for (auto [i, result] : llvm::enumerate(ifOp.getResults()))
    if (b.hasOutput(i))
      b.setOutput(i, result);
  return success();
}

/// Whether a value of type `from` may be cast to `to`: the same element
/// type and rank, and every static size of `to` equal in `from`.
bool castsTo(RankedTensorType from, RankedTensorType to) {
  if (from.getElementType() != to.getElementType() ||
      from.getRank() != to.getRank())
    return false;
  for (auto [f, t] : llvm::zip(from.getShape(), to.getShape()))
    if (!ShapedType::isDynamic(t) && f != t)
      return false;
  return true;
}

/// `value` with type `type` (a tensor.cast when it differs).
Value castTo(OpBuilder &builder, Location loc, Value value, Type type) {
  if (value.getType() == type)
    return value;
  return tensor::CastOp::create(builder, loc, type, value);
}

/// Loop(M, cond, v_initial...) with body(iteration, cond, v...) ->
/// (cond, v..., scan...). A carried value keeps one type across the
/// iterations: the initial value's, with `?` where the body yields
/// another size (found by importing the body again with the wider type).
LogicalResult buildLoop(NodeBinder &b) {
  if (failed(b.rejectUnknownAttrs({"body"})))
    return failure();
  const onnx::GraphProto *body = b.graphAttr("body");
  if (!body)
    return failure();
  if (b.numInputs() < 2)
    return b.fail("takes a trip count and a condition (each may be empty), "
                  "then the initial carried values");
  size_t numCarried = b.numInputs() - 2;
  if (body->input_size() != static_cast<int>(2 + numCarried) ||
      body->output_size() < static_cast<int>(1 + numCarried) ||
      static_cast<size_t>(body->output_size()) != 1 + b.numOutputs())
    return b.fail("the body must take the iteration number, the condition "
                  "and the " +
                  Twine(numCarried) +
                  " carried values, and give the condition, the carried "
                  "values and one value per scan output (it takes " +
                  Twine(body->input_size()) + " and gives " +
                  Twine(body->output_size()) + " for " + Twine(b.numOutputs()) +
                  " node outputs)");
  OpBuilder &builder = b.builder();
  Type i64 = builder.getI64Type(), i1 = builder.getI1Type();
  auto scalarType = [](Type element) {
    return RankedTensorType::get({}, element);
  };

  // Absent inputs: no limit, and a condition that starts true.
  Value tripCount = b.optionalInput(0);
  if (!tripCount)
    tripCount = ConstantOp::create(
        builder, b.loc(),
        DenseElementsAttr::get(scalarType(i64), APInt(64, INT64_MAX)));
  Value condition = b.optionalInput(1);
  if (!condition)
    condition = ConstantOp::create(
        builder, b.loc(), DenseElementsAttr::get(scalarType(i1), true));
  auto tripType = cast<RankedTensorType>(tripCount.getType());
  auto conditionType = cast<RankedTensorType>(condition.getType());
  if (!tripType.getElementType().isInteger(64) ||
      (tripType.hasStaticShape() && tripType.getNumElements() != 1))
    return b.emitError() << "the trip count must be one int64, not "
                         << tripType;
  if (!conditionType.getElementType().isInteger(1) ||
      (conditionType.hasStaticShape() && conditionType.getNumElements() != 1))
    return b.emitError() << "the condition must be one bool, not "
                         << conditionType;
  SmallVector<Value> initial;
  SmallVector<RankedTensorType> carriedTypes;
  for (size_t i = 0; i < numCarried; ++i) {
    Value value = b.input(2 + i);
    if (!value)
      return failure();
    initial.push_back(value);
    carriedTypes.push_back(cast<RankedTensorType>(value.getType()));
  }
  Captures captures;
  if (failed(captures.collect(b, {body})))
    return failure();

  // Import the body; while it yields a carried value that its current type
  // cannot hold, widen the type and import again (each round makes at
  // least one size `?`, so this ends).
  std::unique_ptr<Block> block;
  SmallVector<Value> outputs;
  for (bool settled = false; !settled;) {
    block = std::make_unique<Block>();
    block->addArgument(scalarType(i64), b.loc());
    block->addArgument(scalarType(i1), b.loc());
    for (RankedTensorType type : carriedTypes)
      block->addArgument(type, b.loc());
    for (Value input : captures.values)
      block->addArgument(input.getType(), b.loc());
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(block.get());
    outputs.clear();
    SmallVector<Value> bodyInputs(
        block->getArguments().take_front(2 + numCarried));
    if (failed(b.importer().importSubgraph(
            *body, bodyInputs, captures.bind(builder, *block, 2 + numCarried),
            /*isolated=*/true, outputs)))
      return failure();
    settled = true;
    for (auto [i, type] : llvm::enumerate(carriedTypes)) {
      auto yielded = dyn_cast<RankedTensorType>(outputs[1 + i].getType());
      if (yielded && castsTo(yielded, type))
        continue;
      RankedTensorType wider =
          yielded ? joinBranchTypes(type, yielded) : nullptr;
      if (!wider)
        return b.emitError()
               << "carried value " << i << " is " << type
               << " before the loop but the body gives "
               << outputs[1 + i].getType()
               << "; a carried value must keep its element type and rank";
      type = wider;
      settled = false;
    }
  }

  auto bodyCondition = dyn_cast<RankedTensorType>(outputs[0].getType());
  if (!bodyCondition || !bodyCondition.getElementType().isInteger(1) ||
      (bodyCondition.hasStaticShape() && bodyCondition.getNumElements() != 1))
    return b.emitError() << "the body must give the condition (one bool) "
                            "first, not "
                         << outputs[0].getType();

  // The body's yield: the condition, the carried values in their loop
  // types, the scan outputs.
  SmallVector<Type> resultTypes(carriedTypes.begin(), carriedTypes.end());
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(block.get());
    SmallVector<Value> yielded{outputs[0]};
    for (auto [i, type] : llvm::enumerate(carriedTypes))
      yielded.push_back(castTo(builder, b.loc(), outputs[1 + i], type));
    for (Value scan : ArrayRef<Value>(outputs).drop_front(1 + numCarried)) {
      auto type = dyn_cast<RankedTensorType>(scan.getType());
      if (!type)
        return b.emitError() << "a scan output is " << scan.getType()
                             << ", not a ranked tensor";
      SmallVector<int64_t> shape{ShapedType::kDynamic};
      llvm::append_range(shape, type.getShape());
      resultTypes.push_back(
          RankedTensorType::get(shape, type.getElementType()));
      yielded.push_back(scan);
    }
    YieldOp::create(builder, b.loc(), yielded);
  }
  SmallVector<Value> carried;
  for (auto [value, type] : llvm::zip(initial, carriedTypes))
    carried.push_back(castTo(builder, b.loc(), value, type));
  auto loop = LoopOp::create(builder, b.loc(), resultTypes, tripCount,
                             condition, carried, captures.values);
  loop.getBody().push_back(block.release());
  for (auto [i, result] : llvm::enumerate(loop.getResults()))
    if (b.hasOutput(i))
      b.setOutput(i, result);
  return success();
}

/// Scan (opset 9 and later) as a loom.loop: one iteration per element of
/// the scan axis, the states carried, each scan input captured whole and
/// the iteration's slice gathered in the body (from the end when its
/// direction is 1); the scan outputs the loop stacks along a first axis,
/// then reversed and moved to their axes as the attributes ask.
LogicalResult buildScan(NodeBinder &b) {
  if (failed(b.rejectUnknownAttrs({"body", "num_scan_inputs", "scan_input_axes",
                                   "scan_input_directions", "scan_output_axes",
                                   "scan_output_directions"})))
    return failure();
  const onnx::GraphProto *body = b.graphAttr("body");
  std::optional<int64_t> numScanInputs = b.intAttr("num_scan_inputs", -1);
  if (!body || !numScanInputs)
    return failure();
  int64_t numInputs = static_cast<int64_t>(b.numInputs());
  if (*numScanInputs < 1 || *numScanInputs > numInputs)
    return b.fail("num_scan_inputs must be between 1 and the number of "
                  "inputs (" +
                  Twine(numInputs) + "), not " + Twine(*numScanInputs));
  int64_t numStates = numInputs - *numScanInputs;
  int64_t numScanOutputs = static_cast<int64_t>(b.numOutputs()) - numStates;
  if (body->input_size() != numInputs || numScanOutputs < 0 ||
      body->output_size() != static_cast<int>(b.numOutputs()))
    return b.fail("the body must take the " + Twine(numStates) +
                  " states and one slice per scan input, and give the states "
                  "and one slice per scan output (it takes " +
                  Twine(body->input_size()) + " and gives " +
                  Twine(body->output_size()) + ")");
  auto readAxes = [&](StringRef name, int64_t count,
                      bool isDirection) -> std::optional<SmallVector<int64_t>> {
    std::optional<SmallVector<int64_t>> values =
        b.intsAttr(name, SmallVector<int64_t>(count, 0));
    if (!values)
      return std::nullopt;
    if (static_cast<int64_t>(values->size()) != count) {
      (void)b.fail("attribute '" + name + "' must have " + Twine(count) +
                   " values");
      return std::nullopt;
    }
    if (isDirection &&
        llvm::any_of(*values, [](int64_t d) { return d != 0 && d != 1; })) {
      (void)b.fail("attribute '" + name +
                   "' holds 0 (forward) or 1 "
                   "(reverse) per value");
      return std::nullopt;
    }
    return values;
  };
  std::optional<SmallVector<int64_t>> inputAxes =
      readAxes("scan_input_axes", *numScanInputs, false);
  std::optional<SmallVector<int64_t>> inputDirections =
      readAxes("scan_input_directions", *numScanInputs, true);
  std::optional<SmallVector<int64_t>> outputAxes =
      readAxes("scan_output_axes", numScanOutputs, false);
  std::optional<SmallVector<int64_t>> outputDirections =
      readAxes("scan_output_directions", numScanOutputs, true);
  if (!inputAxes || !inputDirections || !outputAxes || !outputDirections)
    return failure();

  OpBuilder &builder = b.builder();
  Location loc = b.loc();
  Type i64 = builder.getI64Type(), i1 = builder.getI1Type();
  auto scalarType = [](Type element) {
    return RankedTensorType::get({}, element);
  };
  auto i64Scalar = [&](int64_t v) -> Value {
    return ConstantOp::create(
        builder, loc, DenseElementsAttr::get(scalarType(i64), APInt(64, v)));
  };
  SmallVector<Value> states, scanInputs;
  for (int64_t i = 0; i < numInputs; ++i) {
    Value value = b.input(i);
    if (!value)
      return failure();
    (i < numStates ? states : scanInputs).push_back(value);
  }
  // Every scan input's axis, normalized; their common length.
  int64_t staticLength = ShapedType::kDynamic;
  for (auto [j, input] : llvm::enumerate(scanInputs)) {
    auto type = cast<RankedTensorType>(input.getType());
    std::optional<int64_t> axis =
        normalizeAxisOrFail(b, (*inputAxes)[j], type.getRank());
    if (!axis)
      return failure();
    (*inputAxes)[j] = *axis;
    int64_t length = type.getDimSize(*axis);
    if (!ShapedType::isDynamic(length)) {
      if (!ShapedType::isDynamic(staticLength) && staticLength != length)
        return b.fail("scan input " + Twine(j) + " has " + Twine(length) +
                      " elements along its scan axis, but scan input 0 has " +
                      Twine(staticLength));
      staticLength = length;
    }
  }
  // The length of scan input `j` along its axis, as a tensor<i64>.
  auto lengthOf = [&](Value input, int64_t axis) -> Value {
    auto type = cast<RankedTensorType>(input.getType());
    if (!type.isDynamicDim(axis))
      return i64Scalar(type.getDimSize(axis));
    Value dims = ShapeOp::create(builder, loc, RankedTensorType::get({1}, i64),
                                 input, builder.getI64IntegerAttr(axis),
                                 builder.getI64IntegerAttr(axis + 1));
    return ReshapeOp::create(builder, loc, scalarType(i64), dims,
                             b.i64Tensor({}), false);
  };
  Value tripCount = lengthOf(scanInputs[0], (*inputAxes)[0]);
  Value always = ConstantOp::create(
      builder, loc, DenseElementsAttr::get(scalarType(i1), true));

  Captures captures;
  if (failed(captures.collect(b, {body})))
    return failure();
  // The loop's inputs: the scan inputs, then what the body reads.
  SmallVector<Value> loopInputs(scanInputs);
  llvm::append_range(loopInputs, captures.values);

  auto block = std::make_unique<Block>();
  block->addArgument(scalarType(i64), loc);
  block->addArgument(scalarType(i1), loc);
  for (Value state : states)
    block->addArgument(state.getType(), loc);
  for (Value input : loopInputs)
    block->addArgument(input.getType(), loc);
  SmallVector<Value> outputs;
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(block.get());
    Value iteration = block->getArgument(0);
    SmallVector<Value> bodyInputs(block->getArguments().slice(2, numStates));
    for (int64_t j = 0; j < *numScanInputs; ++j) {
      Value whole = block->getArgument(2 + numStates + j);
      auto type = cast<RankedTensorType>(whole.getType());
      int64_t axis = (*inputAxes)[j];
      Value index = iteration;
      if ((*inputDirections)[j] == 1) {
        // From the end: length - 1 - iteration.
        Value last = SubOp::create(builder, loc, scalarType(i64),
                                   lengthOf(whole, axis), i64Scalar(1));
        index = SubOp::create(builder, loc, scalarType(i64), last, iteration);
      }
      SmallVector<int64_t> sliceShape(type.getShape());
      sliceShape.erase(sliceShape.begin() + axis);
      bodyInputs.push_back(GatherOp::create(
          builder, loc,
          RankedTensorType::get(sliceShape, type.getElementType()), whole,
          index, builder.getI64IntegerAttr(axis)));
    }
    if (failed(b.importer().importSubgraph(
            *body, bodyInputs,
            captures.bind(builder, *block,
                          2 + numStates +
                              static_cast<unsigned>(*numScanInputs)),
            /*isolated=*/true, outputs)))
      return failure();
    SmallVector<Value> yielded{block->getArgument(1)};
    for (auto [i, state] : llvm::enumerate(states)) {
      auto want = cast<RankedTensorType>(state.getType());
      auto have = dyn_cast<RankedTensorType>(outputs[i].getType());
      if (!have || !castsTo(have, want))
        return b.emitError() << "state " << i << " is " << want
                             << " before the scan but the body gives "
                             << outputs[i].getType();
      yielded.push_back(castTo(builder, loc, outputs[i], want));
    }
    for (Value slice : ArrayRef<Value>(outputs).drop_front(numStates)) {
      if (!isa<RankedTensorType>(slice.getType()))
        return b.emitError() << "a scan output is " << slice.getType()
                             << ", not a ranked tensor";
      yielded.push_back(slice);
    }
    YieldOp::create(builder, loc, yielded);
  }

  SmallVector<Type> resultTypes =
      llvm::to_vector(ValueRange(states).getTypes());
  for (Value slice : ArrayRef<Value>(outputs).drop_front(numStates)) {
    auto type = cast<RankedTensorType>(slice.getType());
    SmallVector<int64_t> shape{ShapedType::kDynamic};
    llvm::append_range(shape, type.getShape());
    resultTypes.push_back(RankedTensorType::get(shape, type.getElementType()));
  }
  auto loop = LoopOp::create(builder, loc, resultTypes, tripCount, always,
                             states, loopInputs);
  loop.getBody().push_back(block.release());

  for (int64_t i = 0; i < numStates; ++i)
    if (b.hasOutput(i))
      b.setOutput(i, loop.getResult(i));
  for (int64_t k = 0; k < numScanOutputs; ++k) {
    Value stacked = loop.getResult(numStates + k);
    auto type = cast<RankedTensorType>(stacked.getType());
    if (!ShapedType::isDynamic(staticLength)) {
      SmallVector<int64_t> shape(type.getShape());
      shape[0] = staticLength;
      type = RankedTensorType::get(shape, type.getElementType());
      stacked = tensor::CastOp::create(builder, loc, type, stacked);
    }
    if ((*outputDirections)[k] == 1) {
      // The rows in reverse order: gather at length - 1 - r.
      if (ShapedType::isDynamic(staticLength))
        return b.fail("scan output " + Twine(k) +
                      " runs in reverse over a scan axis whose length is "
                      "known only at run time, which is not supported yet");
      SmallVector<int64_t> reversed;
      for (int64_t r = staticLength - 1; r >= 0; --r)
        reversed.push_back(r);
      stacked =
          GatherOp::create(builder, loc, type, stacked, b.i64Tensor(reversed),
                           builder.getI64IntegerAttr(0));
    }
    std::optional<int64_t> axis =
        normalizeAxisOrFail(b, (*outputAxes)[k], type.getRank());
    if (!axis)
      return failure();
    if (*axis != 0) {
      // Move the stacking axis to `axis`.
      SmallVector<int64_t> perm, shape;
      for (int64_t d = 1; d <= *axis; ++d)
        perm.push_back(d);
      perm.push_back(0);
      for (int64_t d = *axis + 1; d < type.getRank(); ++d)
        perm.push_back(d);
      for (int64_t d : perm)
        shape.push_back(type.getDimSize(d));
      stacked = TransposeOp::create(
          builder, loc, RankedTensorType::get(shape, type.getElementType()),
          stacked, builder.getDenseI64ArrayAttr(perm));
    }
    if (b.hasOutput(numStates + k))
      b.setOutput(numStates + k, stacked);
  }
  return success();
}

} // namespace

void registerControlFlowBuilders(OpTable &t) {
  // If-11 lets the branches' shapes differ, If-13 and later widen the
  // types to sequences and optionals (tensors only here); the tensor
  // semantics are the same in every version.
  for (int64_t version : {1, 11, 13, 16, 19, 21, 23, 24})
    t.add("", "If", version, buildIf);
  // Loop-11 made the trip count and condition optional inputs, Loop-13 and
  // later widen the types to sequences and optionals (tensors only here).
  for (int64_t version : {1, 11, 13, 16, 19, 21, 23, 24})
    t.add("", "Loop", version, buildLoop);
  // Scan-8 has a batch axis and sequence lengths, which Scan-9 dropped;
  // only Scan-9 and later are served.
  for (int64_t version : {9, 11, 16, 19, 21, 23, 24})
    t.add("", "Scan", version, buildScan);
}

} // namespace loom::onnx_import
