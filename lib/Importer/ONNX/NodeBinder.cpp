//===- NodeBinder.cpp - Typed access to one ONNX node ---------------------===//

#include "NodeBinder.h"

#include "GraphImporter.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/IR/Matchers.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/APSInt.h"

#include <cmath>

using namespace mlir;

namespace loom::onnx_import {

NodeBinder::NodeBinder(GraphImporter &graph, const onnx::NodeProto &node,
                       std::string displayName, int64_t opsetVersion,
                       Location loc)
    : graph(graph), nodeProto(node), displayName(std::move(displayName)),
      version(opsetVersion), location(loc) {}

OpBuilder &NodeBinder::builder() { return graph.builder(); }
MLIRContext *NodeBinder::context() { return graph.context(); }

InFlightDiagnostic NodeBinder::emitError() {
  InFlightDiagnostic diag = mlir::emitError(location);
  diag << "node '" << displayName << "' ("
       << (nodeProto.domain().empty() ? "" : nodeProto.domain() + ".")
       << nodeProto.op_type() << ", opset " << version << "): ";
  return diag;
}

LogicalResult NodeBinder::fail(const llvm::Twine &message) {
  return emitError() << message;
}

void NodeBinder::noteUninferable(const std::string &reason) {
  if (uninferable.empty())
    uninferable = reason;
}

bool NodeBinder::hasInput(size_t i) const {
  return i < static_cast<size_t>(nodeProto.input_size()) &&
         !nodeProto.input(i).empty();
}

Value NodeBinder::input(size_t i) {
  if (!hasInput(i)) {
    emitError() << "input " << i << " is required";
    return {};
  }
  return graph.lookup(nodeProto.input(i));
}

Value NodeBinder::optionalInput(size_t i) {
  return hasInput(i) ? graph.lookup(nodeProto.input(i)) : Value();
}

SmallVector<Value> NodeBinder::variadicInputs(size_t first) {
  SmallVector<Value> result;
  for (size_t i = first; i < numInputs(); ++i)
    if (Value v = optionalInput(i))
      result.push_back(v);
  return result;
}

RankedTensorType NodeBinder::inputType(size_t i) {
  Value v = optionalInput(i);
  return v ? cast<RankedTensorType>(v.getType()) : RankedTensorType();
}

DenseElementsAttr NodeBinder::constantInput(size_t i) {
  Value v = optionalInput(i);
  DenseElementsAttr attr;
  if (v && matchPattern(v, m_Constant(&attr)))
    return attr;
  // Large constants are resource blobs; shape-like inputs are always small.
  return {};
}

std::optional<SmallVector<int64_t>> NodeBinder::constantInts(size_t i) {
  auto attr = dyn_cast_or_null<DenseIntElementsAttr>(constantInput(i));
  if (!attr)
    return std::nullopt;
  SmallVector<int64_t> values;
  bool isUnsigned = attr.getElementType().isUnsignedInteger();
  for (const APInt &v : attr.getValues<APInt>())
    values.push_back(isUnsigned ? static_cast<int64_t>(v.getZExtValue())
                                : v.getSExtValue());
  return values;
}

std::optional<SmallVector<double>> NodeBinder::constantFloats(size_t i) {
  DenseElementsAttr attr = constantInput(i);
  if (!attr)
    return std::nullopt;
  SmallVector<double> values;
  if (isa<FloatType>(attr.getElementType())) {
    for (const APFloat &v : attr.getValues<APFloat>()) {
      APFloat d = v;
      bool lost;
      d.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
      values.push_back(d.convertToDouble());
    }
    return values;
  }
  if (auto ints = constantInts(i)) {
    for (int64_t v : *ints)
      values.push_back(static_cast<double>(v));
    return values;
  }
  return std::nullopt;
}

const onnx::AttributeProto *NodeBinder::findAttr(llvm::StringRef name) const {
  for (const onnx::AttributeProto &attr : nodeProto.attribute())
    if (attr.name() == name)
      return &attr;
  return nullptr;
}

bool NodeBinder::hasAttr(llvm::StringRef name) const {
  return findAttr(name) != nullptr;
}

bool NodeBinder::checkAttrType(const onnx::AttributeProto &attr,
                               onnx::AttributeProto::AttributeType expected) {
  // Old exporters leave `type` unset; then trust the field that is present.
  if (attr.type() == onnx::AttributeProto::UNDEFINED || attr.type() == expected)
    return true;
  emitError() << "attribute '" << attr.name() << "' must be "
              << onnx::AttributeProto_AttributeType_Name(expected) << ", not "
              << onnx::AttributeProto_AttributeType_Name(attr.type());
  return false;
}

std::optional<int64_t> NodeBinder::intAttr(llvm::StringRef name,
                                           int64_t fallback) {
  const onnx::AttributeProto *attr = findAttr(name);
  if (!attr)
    return fallback;
  if (!checkAttrType(*attr, onnx::AttributeProto::INT))
    return std::nullopt;
  return attr->i();
}

std::optional<float> NodeBinder::floatAttr(llvm::StringRef name,
                                           float fallback) {
  const onnx::AttributeProto *attr = findAttr(name);
  if (!attr)
    return fallback;
  if (!checkAttrType(*attr, onnx::AttributeProto::FLOAT))
    return std::nullopt;
  return attr->f();
}

std::optional<std::string> NodeBinder::stringAttr(llvm::StringRef name,
                                                  llvm::StringRef fallback) {
  const onnx::AttributeProto *attr = findAttr(name);
  if (!attr)
    return fallback.str();
  if (!checkAttrType(*attr, onnx::AttributeProto::STRING))
    return std::nullopt;
  return attr->s();
}

std::optional<SmallVector<int64_t>>
NodeBinder::intsAttr(llvm::StringRef name, ArrayRef<int64_t> fallback) {
  const onnx::AttributeProto *attr = findAttr(name);
  if (!attr)
    return SmallVector<int64_t>(fallback);
  if (!checkAttrType(*attr, onnx::AttributeProto::INTS))
    return std::nullopt;
  return SmallVector<int64_t>(attr->ints().begin(), attr->ints().end());
}

std::optional<SmallVector<float>>
NodeBinder::floatsAttr(llvm::StringRef name, ArrayRef<float> fallback) {
  const onnx::AttributeProto *attr = findAttr(name);
  if (!attr)
    return SmallVector<float>(fallback);
  if (!checkAttrType(*attr, onnx::AttributeProto::FLOATS))
    return std::nullopt;
  return SmallVector<float>(attr->floats().begin(), attr->floats().end());
}

const onnx::TensorProto *NodeBinder::tensorAttr(llvm::StringRef name) {
  const onnx::AttributeProto *attr = findAttr(name);
  if (!attr || !checkAttrType(*attr, onnx::AttributeProto::TENSOR))
    return nullptr;
  return &attr->t();
}

const onnx::GraphProto *NodeBinder::graphAttr(llvm::StringRef name) {
  const onnx::AttributeProto *attr = findAttr(name);
  if (!attr) {
    emitError() << "attribute '" << name << "' (a graph) is missing";
    return nullptr;
  }
  if (!checkAttrType(*attr, onnx::AttributeProto::GRAPH))
    return nullptr;
  return &attr->g();
}

LogicalResult NodeBinder::rejectUnknownAttrs(ArrayRef<llvm::StringRef> known) {
  for (const onnx::AttributeProto &attr : nodeProto.attribute())
    if (!llvm::is_contained(known, attr.name()))
      return fail("attribute '" + attr.name() + "' is not supported");
  return success();
}

LogicalResult NodeBinder::requireAttrValue(llvm::StringRef name,
                                           int64_t expected,
                                           const llvm::Twine &why) {
  std::optional<int64_t> v = intAttr(name, expected);
  if (!v)
    return failure();
  if (*v != expected)
    return fail("attribute '" + name + "' = " + std::to_string(*v) +
                " is not supported: " + why);
  return success();
}

bool NodeBinder::hasOutput(size_t i) const {
  return i < static_cast<size_t>(nodeProto.output_size()) &&
         !nodeProto.output(i).empty();
}

RankedTensorType NodeBinder::knownOutputType(size_t i) {
  if (!hasOutput(i))
    return {};
  RankedTensorType type = graph.typeOf(nodeProto.output(i));
  if (type && type.hasStaticShape())
    return type;
  // ONNX's whole-graph inference ran before anything was folded; ask the
  // op's inference again with what is known now.
  if (!locallyInferred)
    locallyInferred = graph.inferNodeTypes(nodeProto, version);
  return graph.refinedTypeOf(nodeProto.output(i), i < locallyInferred->size()
                                                      ? (*locallyInferred)[i]
                                                      : RankedTensorType());
}

RankedTensorType NodeBinder::outputType(size_t i) {
  RankedTensorType type = knownOutputType(i);
  if (!type)
    emitError() << "the type of output " << i << " ('"
                << (hasOutput(i) ? nodeProto.output(i) : std::string())
                << "') could not be inferred as a ranked tensor";
  return type;
}

void NodeBinder::setOutput(size_t i, Value value) {
  if (hasOutput(i))
    graph.bind(nodeProto.output(i), value);
}

void NodeBinder::setOutputs(ValueRange values) {
  for (auto [i, v] : llvm::enumerate(values))
    setOutput(i, v);
}

LogicalResult NodeBinder::rejectOutputsFrom(size_t first,
                                            const llvm::Twine &why) {
  for (size_t i = first; i < numOutputs(); ++i)
    if (hasOutput(i))
      return fail("output " + std::to_string(i) + " is not supported: " + why);
  return success();
}

static Attribute scalarAttr(Type elementType, double value) {
  if (auto f = dyn_cast<FloatType>(elementType))
    return FloatAttr::get(f, value);
  if (elementType.isInteger(1))
    return IntegerAttr::get(elementType, APInt(1, value != 0));
  // A float attribute (Gemm's alpha, Clip's bounds) applied to integers:
  // rounded toward zero and saturated to the type's range, NaN as 0. A
  // plain cast of a value outside the range is undefined behaviour, and a
  // model may hold any double there.
  auto integer = cast<IntegerType>(elementType);
  llvm::APSInt result(integer.getWidth(), integer.isUnsigned());
  bool exact = false;
  if (!std::isnan(value))
    llvm::APFloat(value).convertToInteger(result, llvm::APFloat::rmTowardZero,
                                          &exact);
  return IntegerAttr::get(elementType, result);
}

Value NodeBinder::splat(RankedTensorType type, double value) {
  return ConstantOp::create(
      builder(), location,
      DenseElementsAttr::get(type, scalarAttr(type.getElementType(), value)));
}

Value NodeBinder::scalar(Type elementType, double value) {
  return splat(RankedTensorType::get({}, elementType), value);
}

Value NodeBinder::i64Tensor(ArrayRef<int64_t> values) {
  auto type = RankedTensorType::get({static_cast<int64_t>(values.size())},
                                    builder().getI64Type());
  return ConstantOp::create(builder(), location,
                            DenseElementsAttr::get(type, values));
}

Value NodeBinder::tensorConstant(const onnx::TensorProto &tensor) {
  return graph.importTensor(tensor, location);
}

} // namespace loom::onnx_import
