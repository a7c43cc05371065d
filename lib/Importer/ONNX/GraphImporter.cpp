//===- GraphImporter.cpp - Building a function from an ONNX graph ---------===//

#include "GraphImporter.h"

#include "BuilderUtils.h"

#include "ModelLoader.h"
#include "OpTable.h"
#include "loom/Dialect/Loom/IR/ShapeValues.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/ScopeExit.h"

#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"

#include <iterator>

using namespace mlir;

namespace loom::onnx_import {

Type convertElementType(MLIRContext *ctx, int32_t dataType) {
  switch (dataType) {
  case onnx::TensorProto::FLOAT:
    return Float32Type::get(ctx);
  case onnx::TensorProto::DOUBLE:
    return Float64Type::get(ctx);
  case onnx::TensorProto::FLOAT16:
    return Float16Type::get(ctx);
  case onnx::TensorProto::BFLOAT16:
    return BFloat16Type::get(ctx);
  case onnx::TensorProto::BOOL:
    return IntegerType::get(ctx, 1);
  case onnx::TensorProto::INT8:
    return IntegerType::get(ctx, 8);
  case onnx::TensorProto::INT16:
    return IntegerType::get(ctx, 16);
  case onnx::TensorProto::INT32:
    return IntegerType::get(ctx, 32);
  case onnx::TensorProto::INT64:
    return IntegerType::get(ctx, 64);
  case onnx::TensorProto::UINT8:
    return IntegerType::get(ctx, 8, IntegerType::Unsigned);
  case onnx::TensorProto::UINT16:
    return IntegerType::get(ctx, 16, IntegerType::Unsigned);
  case onnx::TensorProto::UINT32:
    return IntegerType::get(ctx, 32, IntegerType::Unsigned);
  case onnx::TensorProto::UINT64:
    return IntegerType::get(ctx, 64, IntegerType::Unsigned);
  // Added after the linked library's onnx.proto (ONNX 1.12 stops at
  // BFLOAT16 = 16): by their numbers in the current one.
  case kFloat8E4M3FN:
    return Float8E4M3FNType::get(ctx);
  case kFloat8E4M3FNUZ:
    return Float8E4M3FNUZType::get(ctx);
  case kFloat8E5M2:
    return Float8E5M2Type::get(ctx);
  case kFloat8E5M2FNUZ:
    return Float8E5M2FNUZType::get(ctx);
  case kUInt4:
    return IntegerType::get(ctx, 4, IntegerType::Unsigned);
  case kInt4:
    return IntegerType::get(ctx, 4);
  case kFloat4E2M1:
    return Float4E2M1FNType::get(ctx);
  case kFloat8E8M0:
    return Float8E8M0FNUType::get(ctx);
  case kUInt2:
    return IntegerType::get(ctx, 2, IntegerType::Unsigned);
  case kInt2:
    return IntegerType::get(ctx, 2);
  default:
    return {};
  }
}

static std::string dataTypeName(int32_t dataType) {
  if (onnx::TensorProto_DataType_IsValid(dataType))
    return onnx::TensorProto_DataType_Name(
        static_cast<onnx::TensorProto_DataType>(dataType));
  // The types added after the linked library's onnx.proto (ONNX 1.12 stops
  // at BFLOAT16 = 16), by their numbers in onnx 1.23's.
  static const char *const newer[] = {
      "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "UINT4",
      "INT4",         "FLOAT4E2M1",     "FLOAT8E8M0", "UINT2",          "INT2"};
  if (dataType >= 17 && dataType < 17 + int32_t(std::size(newer)))
    return newer[dataType - 17];
  return "type " + std::to_string(dataType);
}

/// Why a graph input or output is not a ranked tensor Loom can type.
static std::string describeUnsupportedType(const onnx::ValueInfoProto &vi) {
  if (!vi.has_type())
    return "untyped";
  const onnx::TypeProto &type = vi.type();
  if (type.has_sequence_type())
    return "a sequence";
  if (type.has_optional_type())
    return "an optional";
  if (type.has_map_type())
    return "a map";
  if (type.has_sparse_tensor_type())
    return "a sparse tensor";
  if (!type.has_tensor_type())
    return "not a tensor";
  if (!type.tensor_type().has_shape())
    return "a tensor of unknown rank";
  return "a tensor of element type " +
         dataTypeName(type.tensor_type().elem_type());
}

GraphImporter::GraphImporter(ModuleOp module, const onnx::ModelProto &model,
                             std::string fileName, std::string baseDirectory,
                             const ONNXImportOptions &options)
    : module(module), model(model), file(std::move(fileName)),
      baseDir(std::move(baseDirectory)), options(options),
      opBuilder(module.getContext()) {
  const onnx::GraphProto &graph = model.graph();
  for (const auto *list :
       {&graph.input(), &graph.value_info(), &graph.output()})
    for (const onnx::ValueInfoProto &vi : *list)
      if (vi.has_type())
        types[vi.name()] = &vi.type();
}

Value GraphImporter::lookup(const std::string &name) const {
  auto it = values.find(name);
  return it == values.end() ? Value() : it->second;
}

void GraphImporter::bind(const std::string &name, Value value) {
  values[name] = value;
}

RankedTensorType GraphImporter::convertType(const onnx::TypeProto &type) const {
  if (!type.has_tensor_type() || !type.tensor_type().has_shape())
    return {};
  Type elementType =
      convertElementType(module.getContext(), type.tensor_type().elem_type());
  if (!elementType)
    return {};
  SmallVector<int64_t> shape;
  for (const auto &dim : type.tensor_type().shape().dim())
    shape.push_back(dim.has_dim_value() && dim.dim_value() >= 0
                        ? dim.dim_value()
                        : ShapedType::kDynamic);
  return RankedTensorType::get(shape, elementType);
}

RankedTensorType GraphImporter::typeOf(const std::string &name) const {
  auto it = types.find(name);
  return it == types.end() ? RankedTensorType() : convertType(*it->second);
}

/// ONNX's element type number for a builtin element type (0, UNDEFINED, when
/// ONNX has none).
static int32_t onnxElementType(Type type) {
  if (type.isF32())
    return onnx::TensorProto::FLOAT;
  if (type.isF64())
    return onnx::TensorProto::DOUBLE;
  if (type.isF16())
    return onnx::TensorProto::FLOAT16;
  if (type.isBF16())
    return onnx::TensorProto::BFLOAT16;
  if (isa<Float8E4M3FNType>(type))
    return kFloat8E4M3FN;
  if (isa<Float8E4M3FNUZType>(type))
    return kFloat8E4M3FNUZ;
  if (isa<Float8E5M2Type>(type))
    return kFloat8E5M2;
  if (isa<Float8E5M2FNUZType>(type))
    return kFloat8E5M2FNUZ;
  if (isa<Float4E2M1FNType>(type))
    return kFloat4E2M1;
  if (isa<Float8E8M0FNUType>(type))
    return kFloat8E8M0;
  auto integer = dyn_cast<IntegerType>(type);
  if (!integer)
    return onnx::TensorProto::UNDEFINED;
  bool isUnsigned = integer.isUnsigned();
  switch (integer.getWidth()) {
  case 1:
    return onnx::TensorProto::BOOL;
  case 2:
    return isUnsigned ? kUInt2 : kInt2;
  case 4:
    return isUnsigned ? kUInt4 : kInt4;
  case 8:
    return isUnsigned ? onnx::TensorProto::UINT8 : onnx::TensorProto::INT8;
  case 16:
    return isUnsigned ? onnx::TensorProto::UINT16 : onnx::TensorProto::INT16;
  case 32:
    return isUnsigned ? onnx::TensorProto::UINT32 : onnx::TensorProto::INT32;
  case 64:
    return isUnsigned ? onnx::TensorProto::UINT64 : onnx::TensorProto::INT64;
  default:
    return onnx::TensorProto::UNDEFINED;
  }
}

/// Writes the ONNX spelling of a value's type; false when ONNX has none.
static bool toTypeProto(Type type, onnx::TypeProto &proto) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked)
    return false;
  int32_t elementType = onnxElementType(ranked.getElementType());
  if (elementType == onnx::TensorProto::UNDEFINED)
    return false;
  onnx::TypeProto_Tensor *tensor = proto.mutable_tensor_type();
  tensor->set_elem_type(elementType);
  onnx::TensorShapeProto *shape = tensor->mutable_shape();
  for (int64_t size : ranked.getShape()) {
    onnx::TensorShapeProto_Dimension *dim = shape->add_dim();
    if (!ShapedType::isDynamic(size))
      dim->set_dim_value(size);
  }
  return true;
}

/// Constants at most this large are handed to ONNX's per-node inference as
/// data: shapes, axes, pads and the like are always small.
static constexpr int64_t kMaxInferenceDataElements = 4096;

/// Writes a small constant as a TensorProto; false when `value` is not one.
static bool toTensorProto(Value value, const std::string &name,
                          onnx::TensorProto &proto) {
  DenseElementsAttr attr;
  if (!matchPattern(value, m_Constant(&attr)) ||
      attr.getNumElements() > kMaxInferenceDataElements)
    return false;
  auto type = cast<RankedTensorType>(attr.getType());
  int32_t elementType = onnxElementType(type.getElementType());
  if (elementType == onnx::TensorProto::UNDEFINED)
    return false;
  proto.set_name(name);
  proto.set_data_type(elementType);
  for (int64_t size : type.getShape())
    proto.add_dims(size);
  if (type.getElementType().isInteger(1)) {
    for (bool bit : attr.getValues<bool>())
      proto.add_int32_data(bit);
    return true;
  }
  if (attr.isSplat()) {
    // A splat's raw data holds one element; ONNX wants all of them.
    ArrayRef<char> one = attr.getRawData();
    std::string bytes;
    for (int64_t i = 0, e = type.getNumElements(); i < e; ++i)
      bytes.append(one.data(), one.size());
    proto.set_raw_data(std::move(bytes));
    return true;
  }
  ArrayRef<char> raw = attr.getRawData();
  proto.set_raw_data(std::string(raw.data(), raw.size()));
  return true;
}

SmallVector<RankedTensorType>
GraphImporter::inferNodeTypes(const onnx::NodeProto &node,
                              int64_t opsetVersion) const {
  SmallVector<RankedTensorType> result(node.output_size());
  const onnx::OpSchema *schema = onnx::OpSchemaRegistry::Schema(
      node.op_type(), static_cast<int>(opsetVersion), node.domain());
  if (!schema || !schema->has_type_and_shape_inference_function())
    return result;
  // The schema's inference sees the types Loom built and the constants it
  // folded: exporters' shape arithmetic (Shape -> Gather -> Concat -> ...)
  // has become constants here even where ONNX's whole-graph inference,
  // which runs before any folding, lost track.
  std::vector<onnx::TypeProto> inputTypes(node.input_size());
  std::vector<onnx::TensorProto> inputData(node.input_size());
  std::unordered_map<std::string, onnx::TypeProto *> typesByName;
  std::unordered_map<std::string, const onnx::TensorProto *> dataByName;
  for (int i = 0; i < node.input_size(); ++i) {
    const std::string &name = node.input(i);
    Value value = name.empty() ? Value() : lookup(name);
    if (!value)
      continue;
    if (toTypeProto(value.getType(), inputTypes[i]))
      typesByName[name] = &inputTypes[i];
    if (toTensorProto(value, name, inputData[i]))
      dataByName[name] = &inputData[i];
  }
  onnx::NodeProto copy = node;
  try {
    onnx::shape_inference::InferenceContextImpl context(copy, typesByName,
                                                        dataByName, {});
    schema->GetTypeAndShapeInferenceFunction()(context);
    for (int i = 0; i < node.output_size(); ++i)
      if (const onnx::TypeProto *type = context.getOutputType(i))
        result[i] = convertType(*type);
  } catch (...) {
    // Inference that fails here leaves the types as ONNX's graph inference
    // gave them; the builder reports what is missing.
  }
  return result;
}

RankedTensorType GraphImporter::refinedTypeOf(const std::string &name,
                                              RankedTensorType inferred) const {
  return mergeStaticSizes(typeOf(name), inferred);
}

/// Resource keys must print as identifiers; keep names readable.
static std::string resourceKey(const std::string &name) {
  std::string key = name.empty() ? "tensor" : name;
  for (char &c : key)
    if (!isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.')
      c = '_';
  if (isdigit(static_cast<unsigned char>(key[0])))
    key = "t" + key;
  return key;
}

Value GraphImporter::importTensor(const onnx::TensorProto &tensor,
                                  Location loc) {
  MLIRContext *ctx = module.getContext();
  Type elementType = convertElementType(ctx, tensor.data_type());
  if (!elementType) {
    emitError(loc) << "tensor '" << tensor.name()
                   << "' has unsupported element type "
                   << dataTypeName(tensor.data_type());
    return {};
  }
  std::vector<char> bytes;
  if (std::string error = readTensorBytes(tensor, baseDir, options, bytes);
      !error.empty()) {
    emitError(loc) << error;
    return {};
  }
  SmallVector<int64_t> shape(tensor.dims().begin(), tensor.dims().end());
  auto type = RankedTensorType::get(shape, elementType);
  ElementsAttr value;
  if (elementType.isInteger(1)) {
    // i1 has no byte-per-element raw form in MLIR attributes.
    SmallVector<bool> bits;
    for (char c : bytes)
      bits.push_back(c != 0);
    value = DenseElementsAttr::get(type, ArrayRef<bool>(bits));
  } else if (type.getNumElements() <= options.maxInlineElements) {
    bool isSplat = false;
    if (!DenseElementsAttr::isValidRawBuffer(type, bytes, isSplat)) {
      emitError(loc) << "tensor '" << tensor.name()
                     << "' has a payload that does not match its type";
      return {};
    }
    value = DenseElementsAttr::getFromRawBuffer(type, bytes);
  } else {
    AsmResourceBlob blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(
        ArrayRef<char>(bytes), alignof(uint64_t));
    value = DenseResourceElementsAttr::get(type, resourceKey(tensor.name()),
                                           std::move(blob));
  }
  return ConstantOp::create(opBuilder, loc, value);
}

/// Sizes of what import-time evaluation computes: shape arithmetic, never
/// weights.
static constexpr ConstantFoldingLimits kImportFoldingLimits = {
    /*maxElements=*/1024, /*maxOperandElements=*/1024};

/// Whether import-time evaluation may replace `op` by constants: exporters'
/// shape arithmetic computes int64 sizes and boolean masks of them. Float
/// and small-integer values (weights, quantized weights, function bodies)
/// stay ops for the graph passes to see, as the model wrote them.
static bool isShapeArithmetic(Operation *op) {
  return llvm::all_of(op->getResultTypes(), [](Type type) {
    Type element = cast<RankedTensorType>(type).getElementType();
    return element.isInteger(64) || element.isInteger(1);
  });
}

/// The constants `op`'s results fold to: its folder, else its reference
/// kernel on constant operands (for shape arithmetic, or any small value
/// that shape arithmetic reads: `feedsShapes`). Each has the static type of
/// its value, which may refine the result's type.
static FailureOr<SmallVector<ElementsAttr>> foldOp(Operation *op,
                                                   bool feedsShapes) {
  SmallVector<Attribute> operands;
  bool allConstant = true;
  for (Value operand : op->getOperands()) {
    Attribute attr;
    allConstant &= matchPattern(operand, m_Constant(&attr));
    operands.push_back(attr);
  }
  if (!allConstant)
    return failure();
  SmallVector<OpFoldResult> folded;
  if (succeeded(op->fold(operands, folded)) &&
      folded.size() == op->getNumResults()) {
    SmallVector<ElementsAttr> attrs;
    for (OpFoldResult result : folded)
      if (auto attr = dyn_cast_if_present<ElementsAttr>(
              dyn_cast_if_present<Attribute>(result)))
        attrs.push_back(attr);
    if (attrs.size() == op->getNumResults())
      return attrs;
  }
  if (!feedsShapes && !isShapeArithmetic(op))
    return failure();
  FailureOr<SmallVector<DenseElementsAttr>> evaluated =
      evaluateOnConstants(op, kImportFoldingLimits);
  if (failed(evaluated))
    return failure();
  return SmallVector<ElementsAttr>(evaluated->begin(), evaluated->end());
}

/// The value of a 0-D or 1-D integer tensor when every element is known at
/// import time (ShapeValues), or nullopt.
static std::optional<ElementsAttr> knownShapeValue(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || type.getRank() > 1 || !type.hasStaticShape() ||
      !type.getElementType().isInteger())
    return std::nullopt;
  std::optional<SmallVector<ShapeElement>> elements = shapeElements(value);
  if (!elements ||
      static_cast<int64_t>(elements->size()) != type.getNumElements())
    return std::nullopt;
  SmallVector<APInt> values;
  unsigned width = type.getElementTypeBitWidth();
  for (const ShapeElement &e : *elements) {
    if (!e.constant)
      return std::nullopt;
    values.push_back(APInt(width, *e.constant, /*isSigned=*/true));
  }
  return cast<ElementsAttr>(DenseIntElementsAttr::get(type, values));
}

Value GraphImporter::foldToConstant(Value value, int depth, bool feedsShapes) {
  Operation *op = value.getDefiningOp();
  if (!op || op->hasTrait<OpTrait::ConstantLike>() || depth > 8)
    return value;
  // A decomposition's intermediate ops fold first (in operand order), so
  // that its last op sees constants. What shape arithmetic reads is shape
  // arithmetic too, whatever its type: exporters compute sizes in floats
  // (torchvision's image batching takes the ceiling of a float division
  // and casts it back), and those values stay small.
  bool operandsFeedShapes = feedsShapes || isShapeArithmetic(op);
  for (Value operand : op->getOperands())
    foldToConstant(operand, depth + 1, operandsFeedShapes);
  FailureOr<SmallVector<ElementsAttr>> attrs = foldOp(op, feedsShapes);
  if (failed(attrs)) {
    // Shape arithmetic that reads only static sizes of tensors whose other
    // sizes are known only at run time (`x.shape[-1] // 2` of a
    // [?, 4, ?, 16] tensor) does not fold, but its value is known.
    std::optional<ElementsAttr> known = knownShapeValue(value);
    if (!known || op->getNumResults() != 1)
      return value;
    attrs = SmallVector<ElementsAttr>{*known};
  }
  for (auto [result, attr] : llvm::zip(op->getResults(), *attrs))
    if (!areRefinedTypesCompatible(TypeRange{attr.getType()},
                                   TypeRange{result.getType()}))
      return value;
  OpBuilder::InsertionGuard guard(opBuilder);
  opBuilder.setInsertionPoint(op);
  Value replacement;
  for (auto [result, attr] : llvm::zip(op->getResults(), *attrs)) {
    auto type = cast<RankedTensorType>(result.getType());
    Value constant = ConstantOp::create(opBuilder, op->getLoc(), attr);
    if (result == value)
      replacement = constant;
    // Names bound to the result (an operand folded for its user, another
    // result of the same node) take the constant: the op is erased below.
    // The scopes of enclosing graphs, saved while a subgraph imports, too.
    SmallVector<llvm::StringMap<Value> *> scopes(enclosingScopes);
    scopes.push_back(&values);
    for (llvm::StringMap<Value> *scope : scopes)
      for (auto &binding : *scope)
        if (binding.second == result)
          binding.second = constant;
    // Users built with the old type keep it through a cast.
    if (!result.use_empty())
      result.replaceAllUsesWith(
          constant.getType() == type
              ? constant
              : tensor::CastOp::create(opBuilder, op->getLoc(), type, constant)
                    .getResult());
  }
  op->erase();
  // The value the node binds takes the refined static type.
  return replacement;
}

/// Verifies the ops a node's builder appended to `block` after `before`
/// (null: from the start). A builder checks what it reads, but an input it
/// did not expect (ONNX shape inference lets some through, e.g. labels of
/// the wrong rank inside an expanded SoftmaxCrossEntropyLoss) can still
/// give an op its verifier rejects; the node is then named here, with the
/// verifier's reason, rather than the whole program failing to verify.
LogicalResult GraphImporter::verifyBuiltOps(NodeBinder &binder, Block *block,
                                            Operation *before) {
  auto begin = before ? std::next(before->getIterator()) : block->begin();
  for (Operation &op : llvm::make_range(begin, block->end())) {
    std::string reason;
    LogicalResult verified = success();
    {
      ScopedDiagnosticHandler capture(module.getContext(), [&](Diagnostic &d) {
        if (reason.empty() && d.getSeverity() == DiagnosticSeverity::Error)
          reason = d.str();
        return success();
      });
      verified = verify(&op);
    }
    if (failed(verified))
      return binder.fail("the inputs do not fit the op it becomes ('" +
                         op.getName().getStringRef() + "': " + reason + ")");
  }
  return success();
}

LogicalResult GraphImporter::importNode(const onnx::NodeProto &node,
                                        size_t index) {
  MLIRContext *ctx = module.getContext();
  std::string name = node.name().empty()
                         ? node.op_type() + "_" + std::to_string(index)
                         : node.name();
  Location loc = NameLoc::get(StringAttr::get(ctx, name),
                              FileLineColLoc::get(ctx, file, 0, 0));
  int64_t version = opsetVersion(model, node.domain());
  NodeBinder binder(*this, node, name, version, loc);
  if (version < 0)
    return binder.fail("the model imports no opset for domain '" +
                       node.domain() + "'");
  for (const std::string &in : node.input())
    if (!in.empty() && !lookup(in))
      return binder.fail("input '" + in + "' is not defined before this node");
  const OpBuilderFn *build =
      OpTable::get().lookup(node.domain(), node.op_type(), version);
  if (!build) {
    int64_t oldest =
        OpTable::get().oldestVersion(node.domain(), node.op_type());
    if (oldest > version)
      return binder.fail("opset " + std::to_string(version) +
                         " of this op is not supported (supported from opset " +
                         std::to_string(oldest) + ")");
    return binder.fail("unsupported op");
  }
  Block *block = opBuilder.getInsertionBlock();
  Operation *before = block->empty() ? nullptr : &block->back();
  if (failed((*build)(binder)))
    return failure();
  if (!binder.uninferableReason().empty())
    return binder.fail("the inputs do not fit the op it becomes (" +
                       binder.uninferableReason() + ")");
  if (failed(verifyBuiltOps(binder, block, before)))
    return failure();
  for (int i = 0; i < node.output_size(); ++i) {
    if (node.output(i).empty())
      continue;
    Value v = lookup(node.output(i));
    if (!v)
      return binder.fail("the importer produced no value for output '" +
                         node.output(i) + "'");
    bind(node.output(i), foldToConstant(v));
  }
  return success();
}

/// Adds the names `graph` reads but does not define to `outer` (once each,
/// in order), `defined` holding the names visible as its own.
static void collectOuterNames(const onnx::GraphProto &graph,
                              llvm::StringSet<> defined,
                              llvm::StringSet<> &seen,
                              SmallVectorImpl<std::string> &outer) {
  auto use = [&](const std::string &name) {
    if (!name.empty() && !defined.contains(name) && seen.insert(name).second)
      outer.push_back(name);
  };
  for (const onnx::ValueInfoProto &in : graph.input())
    defined.insert(in.name());
  for (const onnx::TensorProto &t : graph.initializer())
    defined.insert(t.name());
  for (const onnx::NodeProto &node : graph.node()) {
    for (const std::string &in : node.input())
      use(in);
    // A nested subgraph sees what is defined so far; what it reads from
    // further out is read from further out by this graph too.
    for (const onnx::AttributeProto &attr : node.attribute()) {
      SmallVector<const onnx::GraphProto *> nested;
      if (attr.has_g())
        nested.push_back(&attr.g());
      for (const onnx::GraphProto &g : attr.graphs())
        nested.push_back(&g);
      for (const onnx::GraphProto *g : nested) {
        SmallVector<std::string> inner;
        llvm::StringSet<> innerSeen;
        collectOuterNames(*g, llvm::StringSet<>(), innerSeen, inner);
        for (const std::string &name : inner)
          use(name);
      }
    }
    for (const std::string &out : node.output())
      defined.insert(out);
  }
  for (const onnx::ValueInfoProto &out : graph.output())
    use(out.name());
}

LogicalResult GraphImporter::importBody(const onnx::GraphProto &graph) {
  MLIRContext *ctx = module.getContext();
  Location fileLoc = FileLineColLoc::get(ctx, file, 0, 0);
  for (const onnx::TensorProto &t : graph.initializer()) {
    Location loc = NameLoc::get(StringAttr::get(ctx, t.name()), fileLoc);
    Value v = importTensor(t, loc);
    if (!v)
      return failure();
    bind(t.name(), v);
  }
  for (auto [index, node] : llvm::enumerate(graph.node()))
    if (failed(importNode(node, index)))
      return failure();
  return success();
}

SmallVector<std::string>
GraphImporter::outerNames(const onnx::GraphProto &graph) {
  SmallVector<std::string> outer;
  llvm::StringSet<> seen;
  collectOuterNames(graph, llvm::StringSet<>(), seen, outer);
  return outer;
}

LogicalResult
GraphImporter::importSubgraph(const onnx::GraphProto &graph, ValueRange inputs,
                              const llvm::StringMap<Value> &captures,
                              bool isolated, SmallVectorImpl<Value> &outputs) {
  MLIRContext *ctx = module.getContext();
  Location fileLoc = FileLineColLoc::get(ctx, file, 0, 0);
  if (static_cast<int64_t>(inputs.size()) != graph.input_size())
    return emitError(fileLoc)
           << "subgraph '" << graph.name() << "' has " << graph.input_size()
           << " inputs, given " << inputs.size();
  // The enclosing scope comes back when the subgraph is done.
  llvm::StringMap<Value> enclosingValues = values;
  llvm::StringMap<const onnx::TypeProto *> enclosingTypes = types;
  enclosingScopes.push_back(&enclosingValues);
  llvm::scope_exit restore([&] {
    enclosingScopes.pop_back();
    values = std::move(enclosingValues);
    types = std::move(enclosingTypes);
  });
  if (isolated)
    values.clear();
  for (const auto &[name, value] : captures)
    values[name] = value;
  for (const auto *list :
       {&graph.input(), &graph.value_info(), &graph.output()})
    for (const onnx::ValueInfoProto &vi : *list)
      if (vi.has_type())
        types[vi.name()] = &vi.type();
  for (auto [in, value] : llvm::zip(graph.input(), inputs))
    bind(in.name(), value);
  if (failed(importBody(graph)))
    return failure();
  for (const onnx::ValueInfoProto &out : graph.output()) {
    Value v = lookup(out.name());
    if (!v)
      return emitError(fileLoc)
             << "output '" << out.name() << "' of subgraph '" << graph.name()
             << "' is not produced by any node";
    outputs.push_back(v);
  }
  return success();
}

LogicalResult GraphImporter::importMainGraph() {
  MLIRContext *ctx = module.getContext();
  const onnx::GraphProto &graph = model.graph();
  Location fileLoc = FileLineColLoc::get(ctx, file, 0, 0);

  llvm::StringSet<> initializerNames;
  for (const onnx::TensorProto &t : graph.initializer())
    initializerNames.insert(t.name());

  // Graph inputs that are not initializers become function arguments.
  SmallVector<Type> argTypes;
  SmallVector<const onnx::ValueInfoProto *> args;
  for (const onnx::ValueInfoProto &in : graph.input()) {
    if (initializerNames.contains(in.name()))
      continue;
    RankedTensorType type = in.has_type() ? convertType(in.type()) : nullptr;
    if (!type)
      return emitError(fileLoc)
             << "graph input '" << in.name() << "' is "
             << describeUnsupportedType(in) << ", which is not supported";
    argTypes.push_back(type);
    args.push_back(&in);
  }
  SmallVector<Type> resultTypes;
  for (const onnx::ValueInfoProto &out : graph.output()) {
    RankedTensorType type = out.has_type() ? convertType(out.type()) : nullptr;
    if (!type)
      return emitError(fileLoc)
             << "graph output '" << out.name() << "' is "
             << describeUnsupportedType(out) << ", which is not supported";
    resultTypes.push_back(type);
  }

  opBuilder.setInsertionPointToEnd(module.getBody());
  auto func =
      func::FuncOp::create(opBuilder, fileLoc, options.functionName,
                           FunctionType::get(ctx, argTypes, resultTypes));
  Block *entry = func.addEntryBlock();
  for (auto [i, vi] : llvm::enumerate(args)) {
    func.setArgAttr(i, "onnx.name", StringAttr::get(ctx, vi->name()));
    bind(vi->name(), entry->getArgument(i));
  }
  for (auto [i, out] : llvm::enumerate(graph.output()))
    func.setResultAttr(i, "onnx.name", StringAttr::get(ctx, out.name()));

  opBuilder.setInsertionPointToEnd(entry);
  if (failed(importBody(graph)))
    return failure();

  SmallVector<Value> results;
  for (auto [i, out] : llvm::enumerate(graph.output())) {
    Value v = lookup(out.name());
    if (!v)
      return emitError(fileLoc) << "graph output '" << out.name()
                                << "' is not produced by any node";
    if (v.getType() != resultTypes[i]) {
      // ONNX may know more (or less) about an output than inference did.
      auto have = cast<RankedTensorType>(v.getType());
      if (!areRefinedTypesCompatible(TypeRange{have},
                                     TypeRange{resultTypes[i]}))
        return emitError(fileLoc)
               << "graph output '" << out.name() << "' is declared "
               << resultTypes[i] << " but computed as " << have;
      // The result takes every size either side knows: a dimension the
      // model declares symbolic but the program computes is static.
      RankedTensorType refined =
          mergeStaticSizes(cast<RankedTensorType>(resultTypes[i]), have);
      resultTypes[i] = refined;
      if (refined != have)
        v = tensor::CastOp::create(opBuilder, fileLoc, refined, v);
    }
    results.push_back(v);
  }
  func::ReturnOp::create(opBuilder, fileLoc, results);
  func.setFunctionType(FunctionType::get(ctx, argTypes, resultTypes));
  return success();
}

} // namespace loom::onnx_import
