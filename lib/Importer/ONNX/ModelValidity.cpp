//===- ModelValidity.cpp - The ONNX checker's rules at import -------------===//
//
// Follows onnx::checker::check_model (ONNX 1.23) where it decides meaning:
// the lexical scopes of check_graph (a subgraph sees the names its
// enclosing graphs define before the node that holds it, and may redefine
// none of them with a node output) and the arity and attribute rules of
// OpSchema::Verify. Messages are Loom's: they name the node or graph, then
// the rule.
//
//===----------------------------------------------------------------------===//

#include "ModelValidity.h"

#include "onnx/defs/schema.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <limits>
#include <map>
#include <vector>

namespace loom::onnx_import {

namespace {

std::string canonicalDomain(const std::string &domain) {
  return domain == "ai.onnx" ? std::string() : domain;
}

struct DomainRange {
  const char *domain;
  int64_t newest;
};

/// The domains ONNX defines, at the newest opsets of onnx 1.23.2 (the release
/// of the newer node suite; onnxruntime 1.32 accepts the same): Loom's
/// builders serve the default domain up to opset 28 (SpaceToDepth-28,
/// Attention-25, ...), while Debian's libonnx knows only up to 17. And
/// onnxruntime's contrib domain, which it accepts only at opset 1.
constexpr DomainRange kDomainRanges[] = {
    {"", 28},
    {"ai.onnx.ml", 5},
    {"ai.onnx.training", 1},
    {"ai.onnx.preview.training", 1},
    {"ai.onnx.preview", 1},
    {"com.microsoft", 1},
};

std::string domainName(const std::string &domain) {
  return domain.empty() ? "the default domain" : "domain '" + domain + "'";
}

/// The names defined so far in one graph, and what defined each, for the
/// messages.
struct Scope {
  const Scope *parent;
  std::string graph;
  llvm::StringMap<std::string> definitions;
};

/// The scope (this one or an enclosing one) that defines `name`, or null.
const Scope *findDefinition(const Scope *scope, const std::string &name) {
  for (; scope; scope = scope->parent)
    if (scope->definitions.count(name))
      return scope;
  return nullptr;
}

/// "1", "1 to 3" or "at least 1".
std::string countRange(int min, int max) {
  if (min == max)
    return std::to_string(min);
  if (max == std::numeric_limits<int>::max())
    return "at least " + std::to_string(min);
  return std::to_string(min) + " to " + std::to_string(max);
}

std::string typeName(onnx::AttributeProto::AttributeType type) {
  return onnx::AttributeProto_AttributeType_Name(type);
}

class ValidityChecker {
public:
  explicit ValidityChecker(const onnx::ModelProto &model) {
    for (const onnx::OperatorSetIdProto &opset : model.opset_import())
      versions.emplace(canonicalDomain(opset.domain()), opset.version());
  }

  /// `graphName` describes the graph in messages: "the main graph", or
  /// "subgraph 'body' of node 'Loop_0' (Loop)".
  std::string checkGraph(const onnx::GraphProto &graph, const Scope *parent,
                         const std::string &graphName);

private:
  std::string checkSchema(const onnx::NodeProto &node, int64_t version,
                          const std::string &where);

  std::map<std::string, int64_t> versions;
};

std::string ValidityChecker::checkGraph(const onnx::GraphProto &graph,
                                        const Scope *parent,
                                        const std::string &graphName) {
  Scope scope{parent, graphName, {}};
  bool isMain = parent == nullptr;
  const char *onceRule = "; ONNX requires every name to be defined once";
  auto graphValue = [&](const char *kind, const std::string &name) {
    return isMain ? std::string("graph ") + kind + " '" + name + "'"
                  : std::string(kind) + " '" + name + "' of " + graphName;
  };

  // Like the checker, a subgraph's own inputs and initializers may reuse an
  // enclosing graph's names (they are the subgraph's parameters); only node
  // outputs may not.
  for (const onnx::ValueInfoProto &input : graph.input())
    if (!scope.definitions.try_emplace(input.name(), "a graph input").second)
      return graphValue("input", input.name()) + " is declared twice" +
             onceRule;

  // Like the checker, the main graph's inputs and outputs are typed (a
  // subgraph's may be left to inference from the node that holds it).
  if (isMain) {
    auto untyped = [&](const char *kind,
                       const onnx::ValueInfoProto &value) -> std::string {
      const onnx::TypeProto &type = value.type();
      if (!value.has_type() ||
          type.value_case() == onnx::TypeProto::VALUE_NOT_SET)
        return graphValue(kind, value.name()) +
               " has no type; ONNX requires the main graph's inputs and "
               "outputs to have one";
      if (type.has_tensor_type() &&
          type.tensor_type().elem_type() == onnx::TensorProto::UNDEFINED)
        return graphValue(kind, value.name()) +
               " is a tensor without an element type; ONNX requires the "
               "main graph's inputs and outputs to have one";
      return "";
    };
    for (const onnx::ValueInfoProto &input : graph.input())
      if (std::string error = untyped("input", input); !error.empty())
        return error;
    for (const onnx::ValueInfoProto &output : graph.output())
      if (std::string error = untyped("output", output); !error.empty())
        return error;
  }

  // An initializer may share a graph input's name: it is then the input's
  // default value. Two initializers of one name leave the value undefined.
  llvm::StringSet<> initializers;
  auto addInitializer = [&](const std::string &name) -> std::string {
    if (name.empty())
      return (isMain ? std::string("an initializer of the graph")
                     : "an initializer of " + graphName) +
             " has no name";
    if (!initializers.insert(name).second)
      return graphValue("initializer", name) + " is given twice" + onceRule;
    scope.definitions.try_emplace(name, "an initializer");
    return "";
  };
  for (const onnx::TensorProto &tensor : graph.initializer())
    if (std::string error = addInitializer(tensor.name()); !error.empty())
      return error;
  for (const onnx::SparseTensorProto &tensor : graph.sparse_initializer())
    if (std::string error = addInitializer(tensor.values().name());
        !error.empty())
      return error;

  for (const auto &[index, node] : llvm::enumerate(graph.node())) {
    std::string name = node.name().empty()
                           ? node.op_type() + "_" + std::to_string(index)
                           : node.name();
    std::string opName =
        (node.domain().empty() ? "" : node.domain() + ".") + node.op_type();
    auto version = versions.find(canonicalDomain(node.domain()));
    std::string where = "node '" + name + "' (" + opName;
    if (version != versions.end())
      where += ", opset " + std::to_string(version->second);
    where += ")";
    if (!isMain)
      where += " in " + graphName;

    // Nodes come in topological order: an input is a name defined before
    // the node, in its graph or (from a subgraph) an enclosing one. A cycle
    // always breaks this order.
    for (const std::string &input : node.input()) {
      if (input.empty() || findDefinition(&scope, input))
        continue;
      if (isMain)
        return where + ": input '" + input +
               "' is not defined before this node; ONNX requires nodes in "
               "topological order, without cycles";
      return where + ": input '" + input +
             "' is not defined before this node, in its graph or an "
             "enclosing one; a subgraph may refer only to names its "
             "enclosing graphs define before the node that holds it";
    }

    if (version == versions.end())
      return where + ": the model imports no opset for domain '" +
             node.domain() + "'";

    llvm::StringSet<> attributeNames;
    for (const onnx::AttributeProto &attr : node.attribute())
      if (!attributeNames.insert(attr.name()).second)
        return where + ": attribute '" + attr.name() + "' is given twice";

    // A subgraph sees the names defined before its node, not the node's own
    // outputs (the checker's order).
    std::string holder = "node '" + name + "' (" + opName + ")" +
                         (isMain ? "" : " in " + graphName);
    for (const onnx::AttributeProto &attr : node.attribute()) {
      if (attr.has_g())
        if (std::string error =
                checkGraph(attr.g(), &scope,
                           "subgraph '" + attr.name() + "' of " + holder);
            !error.empty())
          return error;
      for (const auto &[i, subgraph] : llvm::enumerate(attr.graphs()))
        if (std::string error =
                checkGraph(subgraph, &scope,
                           "subgraph '" + attr.name() + "[" +
                               std::to_string(i) + "]' of " + holder);
            !error.empty())
          return error;
    }

    if (std::string error = checkSchema(node, version->second, where);
        !error.empty())
      return error;

    // Single static assignment: "" is an omitted optional output, not a
    // definition.
    for (const std::string &output : node.output()) {
      if (output.empty())
        continue;
      if (const Scope *definer = findDefinition(&scope, output)) {
        std::string by = definer->definitions.lookup(output);
        if (definer != &scope)
          return where + ": output '" + output + "' is already defined by " +
                 by + " in " + definer->graph + onceRule +
                 ", and a subgraph may not redefine a name of an enclosing "
                 "graph";
        return where + ": output '" + output + "' is already defined by " + by +
               onceRule;
      }
      scope.definitions.try_emplace(output,
                                    "node '" + name + "' (" + opName + ")");
    }
  }

  // Outputs are values of this graph: a subgraph may not return an
  // enclosing graph's value directly (onnxruntime refuses that too).
  for (const onnx::ValueInfoProto &output : graph.output())
    if (!scope.definitions.count(output.name()))
      return graphValue("output", output.name()) +
             " is not an input, initializer or node output of " +
             (isMain ? std::string("the graph") : "that subgraph");
  return "";
}

std::string ValidityChecker::checkSchema(const onnx::NodeProto &node,
                                         int64_t version,
                                         const std::string &where) {
  // The linked library's schemas only decide for the opsets it knows: at a
  // newer opset the op may have changed (new attributes, inputs), and the
  // builders check what they read.
  std::string domain = canonicalDomain(node.domain());
  if (version > newestLibraryOpset(domain) ||
      version > std::numeric_limits<int>::max())
    return "";
  const onnx::OpSchema *schema = onnx::OpSchemaRegistry::Schema(
      node.op_type(), static_cast<int>(version), domain);
  // Ops without a schema fail later as unsupported; deprecated ones are left
  // to the builders (the checker refuses them, but older runtimes did not).
  if (!schema || schema->deprecated())
    return "";
  std::string schemaName =
      node.op_type() + "-" + std::to_string(schema->since_version());

  // Like OpSchema::Verify, trailing "" count: they are inputs given as
  // absent.
  if (node.input_size() < schema->min_input() ||
      node.input_size() > schema->max_input())
    return where + ": it has " + std::to_string(node.input_size()) +
           " inputs, but " + schemaName + " takes " +
           countRange(schema->min_input(), schema->max_input());
  if (node.output_size() < schema->min_output() ||
      node.output_size() > schema->max_output())
    return where + ": it has " + std::to_string(node.output_size()) +
           " outputs, but " + schemaName + " has " +
           countRange(schema->min_output(), schema->max_output());

  std::vector<std::string> unknown;
  for (const onnx::AttributeProto &attr : node.attribute()) {
    auto it = schema->attributes().find(attr.name());
    if (it == schema->attributes().end()) {
      // Names starting with "__" are implementation details by convention.
      if (attr.name().rfind("__", 0) != 0)
        unknown.push_back(attr.name());
      continue;
    }
    // Old exporters leave `type` unset; the builders then trust the field
    // that is present.
    if (attr.type() != onnx::AttributeProto::UNDEFINED &&
        attr.type() != it->second.type)
      return where + ": attribute '" + attr.name() + "' must be " +
             typeName(it->second.type) + ", not " + typeName(attr.type());
  }
  for (const auto &[name, attr] : schema->attributes()) {
    if (!attr.required)
      continue;
    bool present = false;
    for (const onnx::AttributeProto &given : node.attribute())
      present |= given.name() == name;
    if (!present)
      return where + ": attribute '" + name + "', which " + schemaName +
             " requires, is missing";
  }
  if (!unknown.empty()) {
    // A few schemas accept any attribute (LayerNormalization-17), and the
    // schema keeps that private: Verify decides.
    try {
      schema->Verify(node);
    } catch (const std::exception &) {
      return where + ": attribute '" + unknown.front() +
             "' is not an attribute of " + schemaName;
    }
  }
  return "";
}

} // namespace

int64_t newestLibraryOpset(const std::string &domain) {
  const auto &map =
      onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto it = map.find(canonicalDomain(domain));
  return it == map.end() ? -1 : it->second.second;
}

int64_t newestSupportedOpset(const std::string &domain) {
  std::string canonical = canonicalDomain(domain);
  int64_t newest = newestLibraryOpset(canonical);
  for (const DomainRange &range : kDomainRanges)
    if (canonical == range.domain)
      newest = std::max(newest, range.newest);
  return newest;
}

std::string checkModelValidity(const onnx::ModelProto &model) {
  std::string irRange = "Loom reads IR versions " +
                        std::to_string(kOldestIRVersion) + " to " +
                        std::to_string(kNewestIRVersion);
  if (model.ir_version() == 0)
    return "the model does not set its IR version, which ONNX requires; " +
           irRange;
  if (model.ir_version() < kOldestIRVersion ||
      model.ir_version() > kNewestIRVersion)
    return "the model has IR version " + std::to_string(model.ir_version()) +
           "; " + irRange;

  std::map<std::string, int64_t> imported;
  for (const onnx::OperatorSetIdProto &opset : model.opset_import()) {
    std::string domain = canonicalDomain(opset.domain());
    auto [it, inserted] = imported.emplace(domain, opset.version());
    // Which of two versions applies is undefined (Loom would read the first,
    // onnxruntime the last).
    if (!inserted && it->second != opset.version())
      return "the model imports " + domainName(domain) + " twice, at opsets " +
             std::to_string(it->second) + " and " +
             std::to_string(opset.version()) +
             "; which of them applies is undefined";
    int64_t newest = newestSupportedOpset(domain);
    if (newest < 0)
      continue;
    if (opset.version() < 1 || opset.version() > newest)
      return "the model imports opset " + std::to_string(opset.version()) +
             " of " + domainName(domain) + "; Loom supports " +
             (newest == 1 ? std::string("only opset 1")
                          : "opsets 1 to " + std::to_string(newest));
  }

  try {
    ValidityChecker checker(model);
    return checker.checkGraph(model.graph(), nullptr, "the main graph");
  } catch (const std::exception &e) {
    return std::string("cannot check the model: ") + e.what();
  }
}

} // namespace loom::onnx_import
