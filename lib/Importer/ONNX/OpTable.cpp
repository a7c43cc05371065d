//===- OpTable.cpp - (domain, op type, since-version) -> builder ----------===//

#include "OpTable.h"

namespace loom::onnx_import {

static std::string canonicalDomain(const std::string &domain) {
  return domain == "ai.onnx" ? std::string() : domain;
}

void OpTable::add(const std::string &domain, const std::string &opType,
                  int64_t sinceVersion, OpBuilderFn builder) {
  entries[{canonicalDomain(domain), opType}][sinceVersion] = std::move(builder);
}

const OpBuilderFn *OpTable::lookup(const std::string &domain,
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
    registerNormalizationBuilders(t);
    registerReductionBuilders(t);
    registerShapeBuilders(t);
    registerQuantizationBuilders(t);
    registerSequenceModelBuilders(t);
    registerEinsumBuilders(t);
    registerCompressBuilders(t);
    registerControlFlowBuilders(t);
    registerTrainingBuilders(t);
    registerTransformerBuilders(t);
    return t;
  }();
  return table;
}

} // namespace loom::onnx_import
