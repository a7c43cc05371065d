//===- OpTable.cpp - (domain, op type, since-version) -> builder ----------===//

#include "OpTable.h"

namespace loom::onnx_import {

static std::string canonicalDomain(const std::string &domain) {
  return domain == "ai.onnx" ? std::string() : domain;
}

void OpTable::add(const std::string &domain, const std::string &opType,
                  int64_t sinceVersion, OpBuilderFn builder,
                  unsigned maxOutputs) {
  entries[{canonicalDomain(domain), opType}][sinceVersion] =
      Entry{std::move(builder), maxOutputs};
}

const OpTable::Entry *OpTable::find(const std::string &domain,
                                    const std::string &opType,
                                    int64_t opsetVersion) const {
  auto it = entries.find({canonicalDomain(domain), opType});
  if (it == entries.end())
    return nullptr;
  // The entry with the largest since-version not after the node's opset.
  auto entry = it->second.upper_bound(opsetVersion);
  if (entry == it->second.begin())
    return nullptr;
  return &std::prev(entry)->second;
}

const OpBuilderFn *OpTable::lookup(const std::string &domain,
                                   const std::string &opType,
                                   int64_t opsetVersion) const {
  const Entry *entry = find(domain, opType, opsetVersion);
  return entry ? &entry->build : nullptr;
}

const OpBuilderFn *OpTable::lookup(const onnx::NodeProto &node,
                                   int64_t opsetVersion) const {
  const Entry *entry = find(node.domain(), node.op_type(), opsetVersion);
  if (!entry)
    return nullptr;
  // Trailing outputs named "" are not produced.
  unsigned used = node.output_size();
  while (used > 0 && node.output(used - 1).empty())
    --used;
  return used <= entry->maxOutputs ? &entry->build : nullptr;
}

int64_t OpTable::oldestVersion(const std::string &domain,
                               const std::string &opType) const {
  auto it = entries.find({canonicalDomain(domain), opType});
  if (it == entries.end() || it->second.empty())
    return -1;
  return it->second.begin()->first;
}

const OpTable &OpTable::get() {
  static const OpTable table = [] {
    OpTable t;
    registerElementwiseBuilders(t);
    registerNNBuilders(t);
    registerReductionBuilders(t);
    registerShapeBuilders(t);
    registerQuantizationBuilders(t);
    registerSequenceModelBuilders(t);
    return t;
  }();
  return table;
}

} // namespace loom::onnx_import
