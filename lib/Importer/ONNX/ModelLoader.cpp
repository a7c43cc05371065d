//===- ModelLoader.cpp - Reading and preparing ONNX protobufs -------------===//
//
// Built with exceptions: the ONNX library throws on malformed input. Every
// entry point catches and returns the message as a string.
//
//===----------------------------------------------------------------------===//

#include "ModelLoader.h"

#include "ModelValidity.h"

#include <set>

#include "onnx/defs/parser.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <climits>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <sys/stat.h>
#include <unordered_map>
#include <unordered_set>

namespace loom::onnx_import {

namespace {

bool isStandardDomain(const std::string &domain) {
  return domain.empty() || domain == "ai.onnx";
}

/// a * b with overflow detection.
bool checkedMul(uint64_t a, uint64_t b, uint64_t &out) {
  return !__builtin_mul_overflow(a, b, &out);
}

/// Recursively checks node count, subgraph depth and ranks.
std::string checkGraph(const onnx::GraphProto &graph,
                       const ONNXImportOptions &options, int64_t depth,
                       int64_t &nodeCount) {
  if (depth > options.maxSubgraphDepth)
    return "subgraphs are nested deeper than " +
           std::to_string(options.maxSubgraphDepth) + " levels";
  auto checkValueInfo = [&](const onnx::ValueInfoProto &vi) -> std::string {
    if (vi.type().has_tensor_type() && vi.type().tensor_type().has_shape() &&
        vi.type().tensor_type().shape().dim_size() > options.maxRank)
      return "value '" + vi.name() + "' has rank " +
             std::to_string(vi.type().tensor_type().shape().dim_size()) +
             ", more than the limit of " + std::to_string(options.maxRank);
    return "";
  };
  for (const auto *list :
       {&graph.input(), &graph.output(), &graph.value_info()})
    for (const onnx::ValueInfoProto &vi : *list)
      if (std::string e = checkValueInfo(vi); !e.empty())
        return e;
  for (const onnx::TensorProto &t : graph.initializer()) {
    if (t.dims_size() > options.maxRank)
      return "initializer '" + t.name() + "' has rank " +
             std::to_string(t.dims_size()) + ", more than the limit of " +
             std::to_string(options.maxRank);
    for (int64_t d : t.dims())
      if (d < 0)
        return "initializer '" + t.name() + "' has a negative dimension";
  }
  // ONNX's own shape inference divides by these without checking them.
  for (const onnx::NodeProto &node : graph.node())
    for (const onnx::AttributeProto &attr : node.attribute())
      if (attr.name() == "strides" || attr.name() == "dilations" ||
          attr.name() == "kernel_shape")
        for (int64_t v : attr.ints())
          if (v <= 0)
            return "node '" + node.name() + "' (" + node.op_type() +
                   "): attribute '" + attr.name() +
                   "' must hold positive values, not " + std::to_string(v);
  nodeCount += graph.node_size();
  if (nodeCount > options.maxNodes)
    return "the model has more than " + std::to_string(options.maxNodes) +
           " nodes";
  for (const onnx::NodeProto &node : graph.node())
    for (const onnx::AttributeProto &attr : node.attribute()) {
      if (attr.has_g())
        if (std::string e = checkGraph(attr.g(), options, depth + 1, nodeCount);
            !e.empty())
          return e;
      for (const onnx::GraphProto &g : attr.graphs())
        if (std::string e = checkGraph(g, options, depth + 1, nodeCount);
            !e.empty())
          return e;
    }
  return "";
}

/// Types of every named value we know: graph inputs/outputs, value_info and
/// initializers. Used to build context-dependent function bodies.
std::unordered_map<std::string, onnx::TypeProto>
collectValueTypes(const onnx::GraphProto &graph) {
  std::unordered_map<std::string, onnx::TypeProto> types;
  for (const onnx::TensorProto &t : graph.initializer()) {
    onnx::TypeProto type;
    auto *tensor = type.mutable_tensor_type();
    tensor->set_elem_type(t.data_type());
    auto *shape = tensor->mutable_shape();
    for (int64_t d : t.dims())
      shape->add_dim()->set_dim_value(d);
    types[t.name()] = type;
  }
  for (const auto *list :
       {&graph.input(), &graph.value_info(), &graph.output()})
    for (const onnx::ValueInfoProto &vi : *list)
      if (vi.has_type())
        types[vi.name()] = vi.type();
  return types;
}

/// Replaces `node` by the nodes of `body`, renaming formal parameters to the
/// node's actual values, internal values to fresh names, and attribute
/// references to the node's attribute values.
void inlineFunction(const onnx::NodeProto &node,
                    const onnx::FunctionProto &body,
                    const onnx::OpSchema &schema, int &uniqueCounter,
                    google::protobuf::RepeatedPtrField<onnx::NodeProto> &out) {
  std::unordered_map<std::string, std::string> rename;
  for (int i = 0; i < body.input_size(); ++i)
    rename[body.input(i)] = i < node.input_size() ? node.input(i) : "";
  for (int i = 0; i < body.output_size(); ++i)
    rename[body.output(i)] = i < node.output_size() ? node.output(i) : "";
  std::string prefix =
      (node.name().empty() ? node.op_type() : node.name()) + "/";
  int id = uniqueCounter++;
  auto mapName = [&](const std::string &name) -> std::string {
    if (name.empty())
      return name;
    auto it = rename.find(name);
    if (it != rename.end())
      return it->second;
    std::string fresh = "__loom_fn" + std::to_string(id) + "_" + name;
    rename[name] = fresh;
    return fresh;
  };
  std::unordered_map<std::string, const onnx::AttributeProto *> callerAttrs;
  for (const onnx::AttributeProto &a : node.attribute())
    callerAttrs[a.name()] = &a;
  int index = 0;
  for (const onnx::NodeProto &bodyNode : body.node()) {
    onnx::NodeProto *copy = out.Add();
    *copy = bodyNode;
    copy->set_name(prefix + bodyNode.op_type() + "_" + std::to_string(index++));
    for (int i = 0; i < copy->input_size(); ++i)
      copy->set_input(i, mapName(bodyNode.input(i)));
    for (int i = 0; i < copy->output_size(); ++i)
      copy->set_output(i, mapName(bodyNode.output(i)));
    google::protobuf::RepeatedPtrField<onnx::AttributeProto> attrs;
    for (const onnx::AttributeProto &a : bodyNode.attribute()) {
      if (a.ref_attr_name().empty()) {
        *attrs.Add() = a;
        continue;
      }
      const onnx::AttributeProto *value = nullptr;
      auto it = callerAttrs.find(a.ref_attr_name());
      if (it != callerAttrs.end()) {
        value = it->second;
      } else {
        // The caller left it unset: the op schema's default applies, and
        // without one the body op's own default.
        auto schemaAttr = schema.attributes().find(a.ref_attr_name());
        if (schemaAttr != schema.attributes().end() &&
            schemaAttr->second.default_value.type() !=
                onnx::AttributeProto::UNDEFINED)
          value = &schemaAttr->second.default_value;
      }
      if (!value)
        continue;
      onnx::AttributeProto *bound = attrs.Add();
      *bound = *value;
      bound->set_name(a.name());
    }
    *copy->mutable_attribute() = attrs;
  }
}

/// One round of function expansion over the main graph. Returns how many
/// nodes were expanded.
int expandFunctions(onnx::ModelProto &model, const HasBuilderFn &hasBuilder,
                    int &uniqueCounter) {
  onnx::GraphProto *graph = model.mutable_graph();
  auto types = collectValueTypes(*graph);
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  std::map<std::string, int64_t> bodyOpsets;
  int expanded = 0;
  for (const onnx::NodeProto &node : graph->node()) {
    int64_t version = opsetVersion(model, node.domain());
    const onnx::OpSchema *schema =
        version < 0 ? nullptr
                    : onnx::OpSchemaRegistry::Schema(node.op_type(), version,
                                                     node.domain());
    if (!schema || hasBuilder(node, version)) {
      *nodes.Add() = node;
      continue;
    }
    onnx::FunctionProto body;
    bool haveBody = false;
    if (schema->HasFunction() && schema->GetFunction()) {
      body = *schema->GetFunction();
      haveBody = true;
    } else if (schema->HasContextDependentFunction()) {
      std::vector<onnx::TypeProto> inputTypes;
      for (const std::string &in : node.input()) {
        auto it = types.find(in);
        inputTypes.push_back(it == types.end() ? onnx::TypeProto()
                                               : it->second);
      }
      onnx::FunctionBodyBuildContextImpl ctx(node, inputTypes);
      haveBody = schema->BuildContextDependentFunction(ctx, body);
    }
    if (!haveBody) {
      *nodes.Add() = node;
      continue;
    }
    for (const onnx::OperatorSetIdProto &opset : body.opset_import())
      bodyOpsets.emplace(isStandardDomain(opset.domain()) ? "" : opset.domain(),
                         opset.version());
    inlineFunction(node, body, *schema, uniqueCounter, nodes);
    ++expanded;
  }
  *graph->mutable_node() = nodes;
  // A body may use a domain the model does not import yet.
  for (auto &[domain, version] : bodyOpsets)
    if (opsetVersion(model, domain) < 0) {
      onnx::OperatorSetIdProto *opset = model.add_opset_import();
      opset->set_domain(domain);
      opset->set_version(version);
    }
  return expanded;
}

} // namespace

int64_t opsetVersion(const onnx::ModelProto &model, const std::string &domain) {
  for (const onnx::OperatorSetIdProto &opset : model.opset_import()) {
    bool same = isStandardDomain(domain) ? isStandardDomain(opset.domain())
                                         : opset.domain() == domain;
    if (same)
      return opset.version();
  }
  return -1;
}

size_t elementByteSize(int32_t dataType) {
  switch (dataType) {
  case onnx::TensorProto::FLOAT:
  case onnx::TensorProto::INT32:
  case onnx::TensorProto::UINT32:
    return 4;
  case onnx::TensorProto::DOUBLE:
  case onnx::TensorProto::INT64:
  case onnx::TensorProto::UINT64:
  case onnx::TensorProto::COMPLEX64:
    return 8;
  case onnx::TensorProto::COMPLEX128:
    return 16;
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16:
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::UINT16:
    return 2;
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT8:
  case onnx::TensorProto::BOOL:
  case kFloat8E4M3FN:
  case kFloat8E4M3FNUZ:
  case kFloat8E5M2:
  case kFloat8E5M2FNUZ:
  case kFloat8E8M0:
  case kUInt4:
  case kInt4:
  case kFloat4E2M1:
  case kUInt2:
  case kInt2:
    return 1;
  default:
    return 0;
  }
}

unsigned packedElementBits(int32_t dataType) {
  switch (dataType) {
  case kUInt4:
  case kInt4:
  case kFloat4E2M1:
    return 4;
  case kUInt2:
  case kInt2:
    return 2;
  default:
    return 0;
  }
}

std::string parseModel(const std::string &buffer, onnx::ModelProto &model,
                       const ONNXImportOptions &options) {
  if (buffer.size() > options.maxModelBytes)
    return "the model is " + std::to_string(buffer.size()) +
           " bytes, more than the limit of " +
           std::to_string(options.maxModelBytes);
  size_t first = buffer.find_first_not_of(" \t\r\n");
  bool isText = first != std::string::npos &&
                (buffer[first] == '<' || buffer[first] == '#');
  try {
    if (isText) {
      onnx::OnnxParser parser(buffer.c_str());
      onnx::Common::Status status = parser.Parse(model);
      if (!status.IsOK())
        return "cannot parse the ONNX text: " + status.ErrorMessage();
      if (!parser.EndOfInput())
        return "cannot parse the ONNX text: unexpected text after the graph";
      return "";
    }
    if (buffer.size() > static_cast<size_t>(INT_MAX))
      return "binary protobufs larger than 2 GiB are not supported; store "
             "weights as external data";
    google::protobuf::io::ArrayInputStream raw(buffer.data(),
                                               static_cast<int>(buffer.size()));
    google::protobuf::io::CodedInputStream coded(&raw);
    coded.SetTotalBytesLimit(static_cast<int>(buffer.size()));
    coded.SetRecursionLimit(
        static_cast<int>(4 * options.maxSubgraphDepth + 16));
    if (!model.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage())
      return "not a valid ONNX model: the protobuf is malformed or truncated";
    if (!model.has_graph())
      return "not a valid ONNX model: it has no graph";
    return "";
  } catch (const std::exception &e) {
    return std::string("cannot parse the model: ") + e.what();
  } catch (...) {
    return "cannot parse the model";
  }
}

std::string checkModelBounds(const onnx::ModelProto &model,
                             const ONNXImportOptions &options) {
  if (model.opset_import_size() == 0)
    return "the model imports no opset";
  int64_t nodeCount = 0;
  return checkGraph(model.graph(), options, 0, nodeCount);
}

/// Gives the graph inputs named in `options.inputShapes` those shapes.
static std::string bindInputShapes(onnx::ModelProto &model,
                                   const ONNXImportOptions &options) {
  onnx::GraphProto *graph = model.mutable_graph();
  std::set<std::string> initializers;
  for (const onnx::TensorProto &t : graph->initializer())
    initializers.insert(t.name());
  std::map<std::string, int64_t> namedSizes;
  for (const auto &[name, sizes] : options.inputShapes) {
    onnx::ValueInfoProto *input = nullptr;
    for (onnx::ValueInfoProto &candidate : *graph->mutable_input())
      if (candidate.name() == name && !initializers.count(name))
        input = &candidate;
    if (!input) {
      std::string known;
      for (const onnx::ValueInfoProto &candidate : graph->input())
        if (!initializers.count(candidate.name()))
          known += (known.empty() ? "'" : ", '") + candidate.name() + "'";
      return "--input-shape names '" + name +
             "', which is not a graph input (the inputs: " + known + ")";
    }
    if (!input->type().has_tensor_type() ||
        !input->type().tensor_type().has_shape())
      return "--input-shape: graph input '" + name +
             "' is not a tensor of known rank";
    onnx::TensorShapeProto *shape =
        input->mutable_type()->mutable_tensor_type()->mutable_shape();
    if (static_cast<size_t>(shape->dim_size()) != sizes.size())
      return "--input-shape gives graph input '" + name + "' " +
             std::to_string(sizes.size()) + " dimensions, but it has " +
             std::to_string(shape->dim_size());
    for (int i = 0; i < shape->dim_size(); ++i) {
      onnx::TensorShapeProto_Dimension *dim = shape->mutable_dim(i);
      if (dim->has_dim_value() && dim->dim_value() != sizes[i])
        return "--input-shape gives dimension " + std::to_string(i) +
               " of graph input '" + name + "' the size " +
               std::to_string(sizes[i]) + ", but the model states " +
               std::to_string(dim->dim_value());
      if (dim->has_dim_param())
        namedSizes[dim->dim_param()] = sizes[i];
      dim->set_dim_value(sizes[i]);
    }
  }
  // A symbolic dimension means one size wherever its name appears: the
  // outputs and annotated values that share a bound input's names get its
  // sizes too (onnxruntime's free-dimension overrides do the same).
  auto substitute = [&](onnx::ValueInfoProto &value) {
    if (!value.type().has_tensor_type() ||
        !value.type().tensor_type().has_shape())
      return;
    for (onnx::TensorShapeProto_Dimension &dim : *value.mutable_type()
                                                      ->mutable_tensor_type()
                                                      ->mutable_shape()
                                                      ->mutable_dim())
      if (dim.has_dim_param())
        if (auto it = namedSizes.find(dim.dim_param()); it != namedSizes.end())
          dim.set_dim_value(it->second);
  };
  for (onnx::ValueInfoProto &value : *graph->mutable_input())
    substitute(value);
  for (onnx::ValueInfoProto &value : *graph->mutable_output())
    substitute(value);
  for (onnx::ValueInfoProto &value : *graph->mutable_value_info())
    substitute(value);
  return "";
}

/// Wraps the inference function that `op`'s schema `version` registered
/// (when the library has that exact version) so that `check` runs first.
/// A check either calls fail_shape_inference (an ordinary inference error)
/// or returns false to skip the library's inference, leaving the outputs
/// untyped for the node's builder, whose own check names the node.
static void
guardInference(const onnx::OpSchema &schema,
               std::function<bool(onnx::InferenceContext &)> check) {
  onnx::InferenceFunction original = schema.GetTypeAndShapeInferenceFunction();
  if (!original)
    return;
  const_cast<onnx::OpSchema &>(schema).TypeAndShapeInferenceFunction(
      [original, check = std::move(check)](onnx::InferenceContext &ctx) {
        if (check(ctx))
          original(ctx);
      });
}

static void
guardInference(const char *op, int version,
               std::function<bool(onnx::InferenceContext &)> check) {
  const onnx::OpSchema *schema =
      onnx::OpSchemaRegistry::Schema(op, version, "");
  if (!schema || schema->SinceVersion() != version)
    return;
  guardInference(*schema, std::move(check));
}

/// Whether every input that `schema` requires has a type in `ctx`. A
/// required input can be untyped when it comes from a node that inference
/// could not type (an op of a domain the library does not know, or a node
/// the lenient second pass left untyped); absent optional inputs are untyped
/// too, and every inference function checks those.
static bool requiredInputsTyped(const onnx::OpSchema &schema,
                                onnx::InferenceContext &ctx) {
  const std::vector<onnx::OpSchema::FormalParameter> &formals = schema.inputs();
  if (formals.empty())
    return true;
  for (size_t i = 0, e = ctx.getNumInputs(); i < e; ++i) {
    const onnx::OpSchema::FormalParameter &formal =
        formals[std::min(i, formals.size() - 1)];
    if (formal.GetOption() != onnx::OpSchema::Optional && !ctx.getInputType(i))
      return false;
  }
  return true;
}

/// Debian's ONNX 1.12 shape inference trusts some attributes and ranks that
/// it never checks, and dereferences past them (each found by the onnx-text
/// or onnx-model fuzzer as a crash inside libonnx):
/// - a convolution (Conv, ConvTranspose, ConvInteger, QLinearConv) whose
///   weight has fewer dimensions than its input;
/// - a LayerNormalization whose `axis` is outside [-rank, rank) and whose
///   Mean / InvStdDev outputs are wanted (their shape is built from it).
/// - MaxUnpool reading the type of its indices when they have none;
/// - Gemm reading two dimensions of an operand that has one.
/// Those inference functions are wrapped, once per process, in the checks
/// that they lack; and every inference function is skipped, leaving the
/// node's outputs to its builder, while a required input is untyped, since
/// not all of them check.
static void guardLibraryShapeInference() {
  static std::once_flag once;
  std::call_once(once, [] {
    // The registry hands out copies; the registered schema is found again
    // by (name, version, domain).
    for (const onnx::OpSchema &copy :
         onnx::OpSchemaRegistry::get_all_schemas_with_history()) {
      const onnx::OpSchema *schema = onnx::OpSchemaRegistry::Schema(
          copy.Name(), copy.SinceVersion(), copy.domain());
      if (!schema || schema->SinceVersion() != copy.SinceVersion())
        continue;
      guardInference(*schema, [schema](onnx::InferenceContext &ctx) {
        return requiredInputsTyped(*schema, ctx);
      });
    }
    // (op, version, the weight's input): the convolutions whose inference
    // (onnx::convPoolShapeInference, convTransposeShapeInference) reads the
    // weight's dimensions by the input's rank.
    struct Convolution {
      const char *op;
      int version;
      int weight;
    };
    for (Convolution conv :
         {Convolution{"Conv", 1, 1}, Convolution{"Conv", 11, 1},
          Convolution{"ConvTranspose", 1, 1},
          Convolution{"ConvTranspose", 11, 1},
          Convolution{"ConvInteger", 10, 1},
          Convolution{"QLinearConv", 10, 3}}) {
      std::string op = conv.op;
      int weightIndex = conv.weight;
      guardInference(
          conv.op, conv.version,
          [op, weightIndex](onnx::InferenceContext &ctx) {
            if (int(ctx.getNumInputs()) <= weightIndex ||
                !onnx::hasInputShape(ctx, 0) ||
                !onnx::hasInputShape(ctx, weightIndex))
              return true;
            int input = onnx::getInputShape(ctx, 0).dim_size();
            int weight = onnx::getInputShape(ctx, weightIndex).dim_size();
            if (input != weight || input < 3)
              fail_shape_inference(op, ": the weight has ", weight,
                                   " dimensions and the input ", input,
                                   "; both need the same rank, at least 3");
            return true;
          });
    }
    // Gemm's inference (every version) reads both operands' dimensions 0
    // and 1: a 1-D operand made it read past the shape (onnx-text fuzzer).
    for (int version : {1, 6, 7, 9, 11, 13})
      guardInference("Gemm", version, [](onnx::InferenceContext &ctx) {
        for (size_t i = 0; i < 2 && i < ctx.getNumInputs(); ++i)
          if (onnx::hasInputShape(ctx, i) &&
              onnx::getInputShape(ctx, i).dim_size() != 2)
            fail_shape_inference("Gemm: input ", i, " has ",
                                 onnx::getInputShape(ctx, i).dim_size(),
                                 " dimensions; A and B are matrices");
        return true;
      });
    // The importer's LayerNormalization builder reports the axis.
    guardInference("LayerNormalization", 17, [](onnx::InferenceContext &ctx) {
      if (ctx.getNumInputs() < 1 || !onnx::hasInputShape(ctx, 0))
        return true;
      int64_t rank = onnx::getInputShape(ctx, 0).dim_size();
      int64_t axis = onnx::getAttribute(ctx, "axis", int64_t(-1));
      return axis >= -rank && axis < rank;
    });
  });
}

/// Whether `model` imports an opset newer than the linked ONNX library has
/// schemas for: its inference then checks the nodes against older versions
/// of their ops, which may have gained types and attributes since.
static bool newerThanLibrary(const onnx::ModelProto &model) {
  for (const onnx::OperatorSetIdProto &opset : model.opset_import()) {
    int64_t newest = newestLibraryOpset(opset.domain());
    if (newest >= 0 && opset.version() > newest)
      return true;
  }
  return false;
}

std::string prepareModel(onnx::ModelProto &model,
                         const HasBuilderFn &hasBuilder,
                         const ONNXImportOptions &options) {
  if (std::string error = bindInputShapes(model, options); !error.empty())
    return error;
  guardLibraryShapeInference();
  // Inference and function expansion alternate until no function is left.
  // `errorMode` 1 stops at the first node whose inference fails; 0 leaves
  // that node's outputs untyped and goes on.
  // One counter for both passes: names of functions expanded by a failed
  // first pass must not be made again by the second.
  int uniqueCounter = 0;
  auto infer = [&](int errorMode) -> std::string {
    try {
      onnx::ShapeInferenceOptions inference(/*check_type=*/errorMode > 0,
                                            errorMode,
                                            /*enable_data_propagation=*/false);
      for (int64_t round = 0;; ++round) {
        onnx::shape_inference::InferShapes(
            model, onnx::OpSchemaRegistry::Instance(), inference);
        if (round >= options.maxSubgraphDepth)
          break;
        if (expandFunctions(model, hasBuilder, uniqueCounter) == 0)
          break;
        if (model.graph().node_size() > options.maxNodes)
          return "the model has more than " + std::to_string(options.maxNodes) +
                 " nodes after function expansion";
      }
      return "";
    } catch (const std::exception &e) {
      return std::string("ONNX shape inference failed: ") + e.what();
    } catch (...) {
      return "ONNX shape inference failed";
    }
  };
  std::string error = infer(1);
  if (error.empty() || !newerThanLibrary(model))
    return error;
  // A model newer than the library: its inference errors may be the
  // library's ignorance (types, attributes and inputs added since), so the
  // pass is run again leaving the nodes it cannot type to their builders,
  // which check what they read. Value infos the failed pass wrote are its
  // own inferences, consistent with the second pass (no copy of the model:
  // its initializers may be large).
  if (infer(0).empty())
    return "";
  // Even so the library throws on what it cannot know: the element types
  // added since (float8, int4, ...: "Invalid tensor data type") and
  // attributes that change a result's type (QuantizeLinear-21's
  // output_dtype against its older inference). Such a model is imported on
  // the builders' own inference, which each builder does for the values it
  // makes, with the model's functions expanded without ONNX's.
  try {
    for (int64_t round = 0; round < options.maxSubgraphDepth; ++round) {
      if (expandFunctions(model, hasBuilder, uniqueCounter) == 0)
        break;
      if (model.graph().node_size() > options.maxNodes)
        return "the model has more than " + std::to_string(options.maxNodes) +
               " nodes after function expansion";
    }
  } catch (const std::exception &e) {
    return error;
  }
  return "";
}

namespace {

std::string readExternalData(const onnx::TensorProto &tensor,
                             const std::string &baseDirectory, uint64_t bytes,
                             std::vector<char> &out) {
  std::string location;
  uint64_t offset = 0;
  bool hasLength = false;
  uint64_t length = 0;
  auto parseNumber = [](const std::string &text, uint64_t &value) {
    if (text.empty() || text.size() > 20 ||
        text.find_first_not_of("0123456789") != std::string::npos)
      return false;
    errno = 0;
    unsigned long long v = std::strtoull(text.c_str(), nullptr, 10);
    if (errno == ERANGE)
      return false;
    value = v;
    return true;
  };
  for (const onnx::StringStringEntryProto &entry : tensor.external_data()) {
    if (entry.key() == "location") {
      location = entry.value();
    } else if (entry.key() == "offset") {
      if (!parseNumber(entry.value(), offset))
        return "external data offset '" + entry.value() + "' is not a number";
    } else if (entry.key() == "length") {
      if (!parseNumber(entry.value(), length))
        return "external data length '" + entry.value() + "' is not a number";
      hasLength = true;
    }
  }
  if (location.empty())
    return "external data has no location";
  if (baseDirectory.empty())
    return "external data is not allowed for a model read from memory";
  if (location.find('\0') != std::string::npos || location[0] == '/' ||
      location[0] == '\\')
    return "external data location '" + location +
           "' must be relative to the model's directory";
  // Reject any '..' component, whatever the separator.
  size_t start = 0;
  while (start <= location.size()) {
    size_t end = location.find_first_of("/\\", start);
    if (end == std::string::npos)
      end = location.size();
    if (location.compare(start, end - start, "..") == 0)
      return "external data location '" + location +
             "' leaves the model's directory";
    start = end + 1;
  }
  // Resolve symlinks and check that the file is still inside the directory.
  char resolvedBase[PATH_MAX], resolvedFile[PATH_MAX];
  std::string joined = baseDirectory + "/" + location;
  if (!realpath(baseDirectory.c_str(), resolvedBase))
    return "cannot resolve the model's directory '" + baseDirectory + "'";
  if (!realpath(joined.c_str(), resolvedFile))
    return "external data file '" + location + "' does not exist";
  std::string baseStr(resolvedBase), fileStr(resolvedFile);
  if (fileStr.compare(0, baseStr.size(), baseStr) != 0 ||
      fileStr.size() <= baseStr.size() || fileStr[baseStr.size()] != '/')
    return "external data location '" + location +
           "' resolves outside the model's directory";
  struct stat info;
  if (stat(resolvedFile, &info) != 0 || !S_ISREG(info.st_mode))
    return "external data location '" + location + "' is not a regular file";
  uint64_t fileSize = static_cast<uint64_t>(info.st_size);
  if (offset > fileSize)
    return "external data offset " + std::to_string(offset) +
           " is past the end of '" + location + "' (" +
           std::to_string(fileSize) + " bytes)";
  if (!hasLength)
    length = fileSize - offset;
  if (length > fileSize - offset)
    return "external data range [" + std::to_string(offset) + ", +" +
           std::to_string(length) + ") is outside '" + location + "' (" +
           std::to_string(fileSize) + " bytes)";
  if (length != bytes)
    return "external data for tensor '" + tensor.name() + "' has " +
           std::to_string(length) + " bytes but its shape needs " +
           std::to_string(bytes);
  std::ifstream file(resolvedFile, std::ios::binary);
  if (!file)
    return "cannot open external data file '" + location + "'";
  out.resize(bytes);
  file.seekg(static_cast<std::streamoff>(offset));
  file.read(out.data(), static_cast<std::streamsize>(bytes));
  if (!file)
    return "cannot read external data file '" + location + "'";
  return "";
}

template <typename T, typename Field>
void appendAs(const Field &field, std::vector<char> &out) {
  // Sized by the values present, which the caller has checked against the
  // shape: never by the shape alone, which a few bytes of input can make
  // claim any size up to the tensor limit.
  out.reserve(out.size() + field.size() * sizeof(T));
  for (auto v : field) {
    T value = static_cast<T>(v);
    const char *p = reinterpret_cast<const char *>(&value);
    out.insert(out.end(), p, p + sizeof(T));
  }
}

} // namespace

/// Spreads `count` elements of `bits` bits each, packed from the least
/// significant bits of each byte on, to one byte each (sign-extended when
/// `isSigned`).
static void unpackElements(const std::vector<char> &packed, uint64_t count,
                           unsigned bits, bool isSigned,
                           std::vector<char> &bytes) {
  bytes.resize(count);
  unsigned perByte = 8 / bits;
  unsigned mask = (1u << bits) - 1;
  for (uint64_t i = 0; i < count; ++i) {
    unsigned byte = static_cast<unsigned char>(packed[i / perByte]);
    unsigned value = (byte >> (bits * (i % perByte))) & mask;
    if (isSigned && (value >> (bits - 1)))
      value |= ~mask;
    bytes[i] = static_cast<char>(value);
  }
}

std::string readTensorBytes(const onnx::TensorProto &tensor,
                            const std::string &baseDirectory,
                            const ONNXImportOptions &options,
                            std::vector<char> &bytes) {
  if (unsigned bits = packedElementBits(tensor.data_type())) {
    // The file's bytes are read as a tensor of ceil(count * bits / 8) bytes
    // (raw, external or one int32 per byte), then spread one per byte.
    uint64_t count = 1;
    for (int64_t d : tensor.dims())
      if (d < 0 || !checkedMul(count, static_cast<uint64_t>(d), count))
        return "tensor '" + tensor.name() +
               "' has a negative dimension or too many elements";
    uint64_t perByte = 8 / bits;
    onnx::TensorProto packed;
    packed.set_name(tensor.name());
    packed.set_data_type(onnx::TensorProto::UINT8);
    packed.add_dims(static_cast<int64_t>((count + perByte - 1) / perByte));
    if (tensor.has_raw_data())
      packed.set_raw_data(tensor.raw_data());
    packed.mutable_int32_data()->CopyFrom(tensor.int32_data());
    packed.set_data_location(tensor.data_location());
    packed.mutable_external_data()->CopyFrom(tensor.external_data());
    std::vector<char> packedBytes;
    if (std::string error =
            readTensorBytes(packed, baseDirectory, options, packedBytes);
        !error.empty())
      return error;
    bool isSigned = tensor.data_type() == kInt4 || tensor.data_type() == kInt2;
    unpackElements(packedBytes, count, bits, isSigned, bytes);
    return "";
  }
  try {
    size_t elementSize = elementByteSize(tensor.data_type());
    if (elementSize == 0 ||
        tensor.data_type() == onnx::TensorProto::COMPLEX64 ||
        tensor.data_type() == onnx::TensorProto::COMPLEX128)
      return "tensor '" + tensor.name() +
             "' has an unsupported element type (" +
             onnx::TensorProto_DataType_Name(
                 static_cast<onnx::TensorProto_DataType>(tensor.data_type())) +
             ")";
    if (tensor.has_segment())
      return "tensor '" + tensor.name() +
             "' is segmented, which is not supported";
    uint64_t count = 1;
    for (int64_t d : tensor.dims()) {
      if (d < 0)
        return "tensor '" + tensor.name() + "' has a negative dimension";
      if (!checkedMul(count, static_cast<uint64_t>(d), count))
        return "tensor '" + tensor.name() + "' has too many elements";
    }
    uint64_t byteCount;
    if (!checkedMul(count, elementSize, byteCount) ||
        byteCount > options.maxTensorBytes)
      return "tensor '" + tensor.name() + "' needs more than the limit of " +
             std::to_string(options.maxTensorBytes) + " bytes";
    if (tensor.data_location() == onnx::TensorProto::EXTERNAL)
      return readExternalData(tensor, baseDirectory, byteCount, bytes);
    if (tensor.has_raw_data()) {
      if (tensor.raw_data().size() != byteCount)
        return "tensor '" + tensor.name() + "' has " +
               std::to_string(tensor.raw_data().size()) +
               " bytes of raw data but its shape needs " +
               std::to_string(byteCount);
      bytes.assign(tensor.raw_data().begin(), tensor.raw_data().end());
      return "";
    }
    auto checkCount = [&](int size) -> std::string {
      if (static_cast<uint64_t>(size) != count)
        return "tensor '" + tensor.name() + "' holds " + std::to_string(size) +
               " values but its shape needs " + std::to_string(count);
      return "";
    };
    bytes.clear();
    std::string error;
    switch (tensor.data_type()) {
    case onnx::TensorProto::FLOAT:
      if ((error = checkCount(tensor.float_data_size())).empty())
        appendAs<float>(tensor.float_data(), bytes);
      break;
    case onnx::TensorProto::DOUBLE:
      if ((error = checkCount(tensor.double_data_size())).empty())
        appendAs<double>(tensor.double_data(), bytes);
      break;
    case onnx::TensorProto::INT64:
      if ((error = checkCount(tensor.int64_data_size())).empty())
        appendAs<int64_t>(tensor.int64_data(), bytes);
      break;
    case onnx::TensorProto::UINT32:
      if ((error = checkCount(tensor.uint64_data_size())).empty())
        appendAs<uint32_t>(tensor.uint64_data(), bytes);
      break;
    case onnx::TensorProto::UINT64:
      if ((error = checkCount(tensor.uint64_data_size())).empty())
        appendAs<uint64_t>(tensor.uint64_data(), bytes);
      break;
    case onnx::TensorProto::INT32:
      if ((error = checkCount(tensor.int32_data_size())).empty())
        appendAs<int32_t>(tensor.int32_data(), bytes);
      break;
    case onnx::TensorProto::INT16:
      if ((error = checkCount(tensor.int32_data_size())).empty())
        appendAs<int16_t>(tensor.int32_data(), bytes);
      break;
    case onnx::TensorProto::UINT16:
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16:
      if ((error = checkCount(tensor.int32_data_size())).empty())
        appendAs<uint16_t>(tensor.int32_data(), bytes);
      break;
    case onnx::TensorProto::INT8:
      if ((error = checkCount(tensor.int32_data_size())).empty())
        appendAs<int8_t>(tensor.int32_data(), bytes);
      break;
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::BOOL:
    case kFloat8E4M3FN:
    case kFloat8E4M3FNUZ:
    case kFloat8E5M2:
    case kFloat8E5M2FNUZ:
    case kFloat8E8M0:
      if ((error = checkCount(tensor.int32_data_size())).empty())
        appendAs<uint8_t>(tensor.int32_data(), bytes);
      break;
    default:
      error = "tensor '" + tensor.name() + "' has an unsupported element type";
    }
    return error;
  } catch (const std::exception &e) {
    return std::string("cannot read tensor '") + tensor.name() +
           "': " + e.what();
  }
}

} // namespace loom::onnx_import
