//===- GraphImporter.h - Building a function from an ONNX graph -*- C++ -*-===//

#ifndef LOOM_LIB_IMPORTER_ONNX_GRAPHIMPORTER_H
#define LOOM_LIB_IMPORTER_ONNX_GRAPHIMPORTER_H

#include "loom/Importer/ONNX/Importer.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include "onnx/onnx_pb.h"

namespace loom::onnx_import {

class NodeBinder;

/// Converts an ONNX element type to the builtin type Loom uses, or null.
mlir::Type convertElementType(mlir::MLIRContext *ctx, int32_t dataType);

/// Builds `func.func @main` from the main graph of a prepared model.
class GraphImporter {
public:
  GraphImporter(mlir::ModuleOp module, const onnx::ModelProto &model,
                std::string fileName, std::string baseDirectory,
                const ONNXImportOptions &options);

  mlir::LogicalResult importMainGraph();

  mlir::OpBuilder &builder() { return opBuilder; }
  mlir::MLIRContext *context() { return module.getContext(); }
  const std::string &fileName() const { return file; }

  /// The SSA value of an ONNX value name, or null.
  mlir::Value lookup(const std::string &name) const;
  void bind(const std::string &name, mlir::Value value);
  /// The ranked tensor type ONNX knows for a value name, or null.
  mlir::RankedTensorType typeOf(const std::string &name) const;
  /// The types ONNX's inference function for `node` gives its outputs when
  /// run on the types and constants Loom has built for its inputs (null
  /// where it gives none).
  llvm::SmallVector<mlir::RankedTensorType>
  inferNodeTypes(const onnx::NodeProto &node, int64_t opsetVersion) const;
  /// typeOf(name), with the static sizes of `inferred` filled in where
  /// ONNX's whole-graph inference left them unknown (or gave no type).
  mlir::RankedTensorType refinedTypeOf(const std::string &name,
                                       mlir::RankedTensorType inferred) const;
  /// The constant op for a tensor; null after an error at `loc`.
  mlir::Value importTensor(const onnx::TensorProto &tensor, mlir::Location loc);
  /// Folds the defining op of `value` (and, first, the ops before it that
  /// computed its operands, `depth` levels at most) into constants when
  /// their operands are constants: by the op's folder or its reference
  /// kernel, for small values. Float and small-integer values fold only
  /// where shape arithmetic reads them (`feedsShapes`). Returns the
  /// (possibly replaced) value, whose type may be more static than before.
  mlir::Value foldToConstant(mlir::Value value, int depth = 0,
                             bool feedsShapes = false);

  //===--- Subgraphs (If branches) ----------------------------------------===//

  /// The names `graph` (or a subgraph nested in it) reads from the graphs
  /// enclosing it, in order of first use.
  static llvm::SmallVector<std::string>
  outerNames(const onnx::GraphProto &graph);

  /// Imports the initializers and nodes of a subgraph at the builder's
  /// insertion point and returns the values of its outputs. `inputs` bind
  /// its formal inputs in order and `captures` bind names of enclosing
  /// graphs. With `isolated`, nothing else of the enclosing graphs is
  /// visible (the subgraph becomes a region isolated from above); without,
  /// every enclosing name is. Names the subgraph defines are forgotten
  /// afterwards, so they never leak into the enclosing graph.
  mlir::LogicalResult
  importSubgraph(const onnx::GraphProto &graph, mlir::ValueRange inputs,
                 const llvm::StringMap<mlir::Value> &captures, bool isolated,
                 llvm::SmallVectorImpl<mlir::Value> &outputs);

private:
  mlir::RankedTensorType convertType(const onnx::TypeProto &type) const;
  mlir::LogicalResult importNode(const onnx::NodeProto &node, size_t index);
  mlir::LogicalResult verifyBuiltOps(NodeBinder &binder, mlir::Block *block,
                                     mlir::Operation *before);
  /// Imports a graph's initializers, then its nodes, at the insertion point.
  mlir::LogicalResult importBody(const onnx::GraphProto &graph);

  mutable mlir::ModuleOp module;
  const onnx::ModelProto &model;
  std::string file;
  std::string baseDir;
  const ONNXImportOptions &options;
  mlir::OpBuilder opBuilder;
  llvm::StringMap<mlir::Value> values;
  /// The bindings of the enclosing graphs while a subgraph imports (they
  /// come back when it is done); folding keeps them current.
  llvm::SmallVector<llvm::StringMap<mlir::Value> *> enclosingScopes;
  llvm::StringMap<const onnx::TypeProto *> types;
};

} // namespace loom::onnx_import

#endif // LOOM_LIB_IMPORTER_ONNX_GRAPHIMPORTER_H
