//===- NodeBinder.h - Typed access to one ONNX node -------------*- C++ -*-===//
//
// Op builders see a node only through a NodeBinder: inputs as SSA values,
// attributes with their ONNX types checked, constant inputs as attributes,
// the inferred result types, and errors that name the file, node, op type
// and opset. A builder returns failure() after reporting through it.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_IMPORTER_ONNX_NODEBINDER_H
#define LOOM_LIB_IMPORTER_ONNX_NODEBINDER_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/SmallVector.h"

#include "onnx/onnx_pb.h"

#include <optional>
#include <string>

namespace loom::onnx_import {

class GraphImporter;

class NodeBinder {
public:
  /// `displayName` is the node's name, or "<OpType>_<index>" when unnamed.
  NodeBinder(GraphImporter &graph, const onnx::NodeProto &node,
             std::string displayName, int64_t opsetVersion, mlir::Location loc);

  mlir::OpBuilder &builder();
  /// The importer of the graph the node is in (for ops with subgraphs).
  GraphImporter &importer() { return graph; }
  mlir::Location loc() const { return location; }
  mlir::MLIRContext *context();
  const onnx::NodeProto &node() const { return nodeProto; }
  const std::string &opType() const { return nodeProto.op_type(); }
  int64_t opset() const { return version; }

  //===--- Errors ---------------------------------------------------------===//

  /// An error about this node: "node 'n' (Op, opset V): <message>".
  mlir::InFlightDiagnostic emitError();
  mlir::LogicalResult fail(const llvm::Twine &message);
  /// Records that an op the builder made could not infer its result type
  /// from the values it was given (createInferred). The builder goes on
  /// with a placeholder type, and the node fails once it returns; the
  /// first reason is the one reported.
  void noteUninferable(const std::string &reason);
  /// The first reason noted by noteUninferable; empty when none.
  const std::string &uninferableReason() const { return uninferable; }

  //===--- Inputs ---------------------------------------------------------===//

  /// Number of inputs, trailing empty names included.
  size_t numInputs() const { return nodeProto.input_size(); }
  /// True when input `i` is given (ONNX marks skipped optional inputs "").
  bool hasInput(size_t i) const;
  /// Input `i`; reports an error and returns null when it is missing.
  mlir::Value input(size_t i);
  /// Input `i`, or null when it is absent.
  mlir::Value optionalInput(size_t i);
  /// Inputs from `first` on (variadic operands), skipping absent ones.
  llvm::SmallVector<mlir::Value> variadicInputs(size_t first = 0);
  mlir::RankedTensorType inputType(size_t i);

  /// The value of input `i` when it is a constant known at import time
  /// (initializer, Constant node or folded shape arithmetic).
  mlir::DenseElementsAttr constantInput(size_t i);
  /// Constant integer input `i` as int64 values; nullopt when not constant.
  std::optional<llvm::SmallVector<int64_t>> constantInts(size_t i);
  /// Constant float input `i`; nullopt when not constant.
  std::optional<llvm::SmallVector<double>> constantFloats(size_t i);

  //===--- Attributes -----------------------------------------------------===//

  bool hasAttr(llvm::StringRef name) const;
  /// Typed attribute readers: `fallback` when absent; an error (and nullopt)
  /// when present with another type.
  std::optional<int64_t> intAttr(llvm::StringRef name, int64_t fallback);
  std::optional<float> floatAttr(llvm::StringRef name, float fallback);
  std::optional<std::string> stringAttr(llvm::StringRef name,
                                        llvm::StringRef fallback);
  std::optional<llvm::SmallVector<int64_t>>
  intsAttr(llvm::StringRef name, llvm::ArrayRef<int64_t> fallback = {});
  std::optional<llvm::SmallVector<float>>
  floatsAttr(llvm::StringRef name, llvm::ArrayRef<float> fallback = {});
  /// A tensor attribute as an elements attribute (null + error if invalid).
  const onnx::TensorProto *tensorAttr(llvm::StringRef name);
  /// A required graph attribute (a subgraph); null + error when absent or
  /// of another type.
  const onnx::GraphProto *graphAttr(llvm::StringRef name);
  /// Reports every attribute not in `known` as unsupported.
  mlir::LogicalResult rejectUnknownAttrs(llvm::ArrayRef<llvm::StringRef> known);
  /// Reports an error when attribute `name` is present and not `expected`.
  mlir::LogicalResult requireAttrValue(llvm::StringRef name, int64_t expected,
                                       const llvm::Twine &why);

  //===--- Outputs --------------------------------------------------------===//

  size_t numOutputs() const { return nodeProto.output_size(); }
  bool hasOutput(size_t i) const;
  /// The ranked type ONNX inference gave output `i`; null + error if none.
  mlir::RankedTensorType outputType(size_t i);
  /// The type if inference knows it, else null without an error.
  mlir::RankedTensorType knownOutputType(size_t i);
  /// Binds output `i` to `value`.
  void setOutput(size_t i, mlir::Value value);
  /// Binds outputs in order.
  void setOutputs(mlir::ValueRange values);
  /// Errors if any output from `first` on is used (e.g. MaxPool's Indices).
  mlir::LogicalResult rejectOutputsFrom(size_t first, const llvm::Twine &why);

  //===--- Small helpers for decompositions -------------------------------===//

  /// A constant tensor of `type` filled with `value`.
  mlir::Value splat(mlir::RankedTensorType type, double value);
  /// A 0-D constant of `elementType`.
  mlir::Value scalar(mlir::Type elementType, double value);
  /// A 1-D i64 constant.
  mlir::Value i64Tensor(llvm::ArrayRef<int64_t> values);
  /// A constant holding `tensor` (inline, or a resource blob when large);
  /// null after an error.
  mlir::Value tensorConstant(const onnx::TensorProto &tensor);

private:
  const onnx::AttributeProto *findAttr(llvm::StringRef name) const;
  bool checkAttrType(const onnx::AttributeProto &attr,
                     onnx::AttributeProto::AttributeType expected);

  GraphImporter &graph;
  const onnx::NodeProto &nodeProto;
  /// The node's output types from ONNX's per-node inference on the inputs
  /// Loom built, computed on first need.
  std::optional<llvm::SmallVector<mlir::RankedTensorType>> locallyInferred;
  std::string displayName;
  int64_t version;
  mlir::Location location;
  std::string uninferable;
};

} // namespace loom::onnx_import

#endif // LOOM_LIB_IMPORTER_ONNX_NODEBINDER_H
