//===- ControlFlowBuilders.cpp - If and Loop ------------------------------===//
//
// If becomes loom.if and Loop loom.loop, whose regions are isolated from
// above: the values a subgraph reads from the enclosing graphs become
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

/// The type both branches' values fit: their sizes where they agree, `?`
/// where they do not. Null when the element types or ranks differ.
RankedTensorType joinBranchTypes(RankedTensorType a, RankedTensorType b) {
  if (a.getElementType() != b.getElementType() || a.getRank() != b.getRank())
    return {};
  SmallVector<int64_t> shape;
  for (auto [x, y] : llvm::zip(a.getShape(), b.getShape()))
    shape.push_back(x == y ? x : ShapedType::kDynamic);
  return RankedTensorType::get(shape, a.getElementType());
}

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
    for (auto [name, constant] : constants)
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
}

} // namespace loom::onnx_import
