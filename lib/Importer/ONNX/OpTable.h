//===- OpTable.h - (domain, op type, since-version) -> builder --*- C++ -*-===//

#ifndef LOOM_LIB_IMPORTER_ONNX_OPTABLE_H
#define LOOM_LIB_IMPORTER_ONNX_OPTABLE_H

#include "NodeBinder.h"

#include "mlir/Support/LogicalResult.h"

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace loom::onnx_import {

/// Builds loom IR for one node; reports errors through the binder.
using OpBuilderFn = std::function<mlir::LogicalResult(NodeBinder &)>;

/// The importer's dispatch table. An entry serves its op from `sinceVersion`
/// up to the next entry's since-version; a node whose opset predates every
/// entry is reported as unsupported at that opset.
class OpTable {
public:
  void add(const std::string &domain, const std::string &opType,
           int64_t sinceVersion, OpBuilderFn builder);

  /// The builder for a node of `opType` in `domain` at `opsetVersion`.
  const OpBuilderFn *lookup(const std::string &domain,
                            const std::string &opType,
                            int64_t opsetVersion) const;

  /// The oldest opset the table serves for the op, or -1 when unknown.
  int64_t oldestVersion(const std::string &domain,
                        const std::string &opType) const;

  /// The table with every builder of the importer.
  static const OpTable &get();

private:
  std::map<std::pair<std::string, std::string>, std::map<int64_t, OpBuilderFn>>
      entries;
};

// Each family registers its builders (one file per family).
void registerElementwiseBuilders(OpTable &table);
void registerNNBuilders(OpTable &table);
void registerNormalizationBuilders(OpTable &table);
void registerReductionBuilders(OpTable &table);
void registerShapeBuilders(OpTable &table);
void registerQuantizationBuilders(OpTable &table);
void registerSequenceModelBuilders(OpTable &table);
void registerEinsumBuilders(OpTable &table);
void registerCompressBuilders(OpTable &table);
void registerControlFlowBuilders(OpTable &table);
void registerTrainingBuilders(OpTable &table);
void registerTransformerBuilders(OpTable &table);

} // namespace loom::onnx_import

#endif // LOOM_LIB_IMPORTER_ONNX_OPTABLE_H
