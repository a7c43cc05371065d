//===- Importer.h - ONNX to loom importer -----------------------*- C++ -*-===//
//
// Reads an ONNX model (binary protobuf or the ONNX text syntax, with
// external-data files) and builds a module with one `func.func @main` in the
// loom dialect. Every failure is a diagnostic naming the file, and where it
// applies the node, op type and opset; the importer never aborts on input.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_IMPORTER_ONNX_IMPORTER_H
#define LOOM_IMPORTER_ONNX_IMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace loom {

/// Bounds on what the importer accepts; a model beyond them is rejected with
/// a diagnostic before anything large is allocated.
struct ONNXImportOptions {
  /// Largest model file (protobuf or text) in bytes. Protobuf itself stops at
  /// 2 GiB; larger weights must be external data.
  uint64_t maxModelBytes = uint64_t(2) << 30;
  /// Largest single tensor (initializer or external-data blob) in bytes.
  uint64_t maxTensorBytes = uint64_t(64) << 30;
  /// Most nodes in the main graph after function expansion.
  int64_t maxNodes = 1 << 20;
  /// Highest tensor rank.
  int64_t maxRank = 32;
  /// Deepest nesting of subgraphs (If/Loop bodies) and protobuf messages.
  int64_t maxSubgraphDepth = 16;
  /// Constants with at most this many elements are inline `dense<...>`
  /// attributes (they take part in folding); larger ones become
  /// `dense_resource` blobs.
  int64_t maxInlineElements = 64;
  /// Name of the function the graph becomes.
  std::string functionName = "main";
  /// Concrete shapes for graph inputs, by input name: symbolic dimensions
  /// become these sizes before inference, so everything computed from them
  /// can fold (`--input-shape input_ids=2x64`). Static dimensions must agree.
  std::map<std::string, std::vector<int64_t>> inputShapes;
};

/// Parses `name=2x64` (one input's shape) into `shapes`. Returns an empty
/// string on success, else what is wrong, for the caller to prefix with
/// the flag it came from (`--input-shape`, `--specialize`, `--profile`).
std::string
parseInputShape(llvm::StringRef spec,
                std::map<std::string, std::vector<int64_t>> &shapes);

/// Imports the model at `path`. The format is detected from the content:
/// text when it starts with `<` or `#` after white space, binary otherwise.
/// Returns null after emitting diagnostics on failure.
mlir::OwningOpRef<mlir::ModuleOp>
importONNXModelFile(llvm::StringRef path, mlir::MLIRContext *context,
                    const ONNXImportOptions &options = {});

/// Imports a model held in memory. `displayName` names it in diagnostics and
/// `baseDirectory` anchors external-data locations (empty: none allowed).
mlir::OwningOpRef<mlir::ModuleOp>
importONNXModelBuffer(llvm::StringRef buffer, llvm::StringRef displayName,
                      llvm::StringRef baseDirectory, mlir::MLIRContext *context,
                      const ONNXImportOptions &options = {});

/// Registers `--import-onnx` with mlir-translate style drivers.
void registerImportONNXTranslation();

} // namespace loom

#endif // LOOM_IMPORTER_ONNX_IMPORTER_H
