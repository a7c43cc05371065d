//===- ControlFlowBuilders.cpp - If ---------------------------------------===//
//
// If becomes loom.if, whose branches are regions isolated from above: the
// values a branch reads from the enclosing graphs become operands of the op
// (constants are copied into the branch instead, so that folding inside it
// still sees them). A condition known at import time makes no op: the
// branch it selects is imported in place.
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
  SmallVector<std::string> inputNames;
  SmallVector<Value> inputs;
  SmallVector<std::pair<std::string, Operation *>> constants;
  llvm::StringSet<> seen;
  for (const onnx::GraphProto *graph : {thenGraph, elseGraph})
    for (const std::string &name : GraphImporter::outerNames(*graph)) {
      if (!seen.insert(name).second)
        continue;
      Value value = importer.lookup(name);
      if (!value)
        return b.fail("a branch reads '" + name +
                      "', which is not defined before this node");
      if (Operation *constant = value.getDefiningOp<ConstantOp>()) {
        constants.push_back({name, constant});
        continue;
      }
      inputNames.push_back(name);
      inputs.push_back(value);
    }

  OpBuilder &builder = b.builder();
  auto importBranch = [&](const onnx::GraphProto &graph, Block &block,
                          SmallVectorImpl<Value> &outputs) -> LogicalResult {
    for (Value input : inputs)
      block.addArgument(input.getType(), b.loc());
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(&block);
    llvm::StringMap<Value> captures;
    for (auto [name, argument] : llvm::zip(inputNames, block.getArguments()))
      captures[name] = argument;
    for (auto [name, constant] : constants)
      captures[name] = builder.clone(*constant)->getResult(0);
    return importer.importSubgraph(graph, {}, captures, /*isolated=*/true,
                                   outputs);
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
  auto ifOp = IfOp::create(builder, b.loc(), resultTypes, condition, inputs);
  ifOp.getThenRegion().push_back(thenBlock.release());
  ifOp.getElseRegion().push_back(elseBlock.release());
  for (auto [i, result] : llvm::enumerate(ifOp.getResults()))
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
}

} // namespace loom::onnx_import
