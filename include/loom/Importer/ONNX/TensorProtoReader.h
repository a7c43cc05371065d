//===- TensorProtoReader.h - Reading serialized ONNX tensors ----*- C++ -*-===//
//
// Reads a serialized onnx.TensorProto (the `.pb` files of the ONNX backend
// test layout) with the importer's checks: the payload size must match
// shape x element size, and external data is not allowed.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_IMPORTER_ONNX_TENSORPROTOREADER_H
#define LOOM_IMPORTER_ONNX_TENSORPROTOREADER_H

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace loom {

/// A tensor read from a TensorProto: its name, type and little-endian
/// row-major bytes (one byte per element for booleans).
struct ONNXTensorData {
  std::string name;
  mlir::RankedTensorType type;
  std::vector<char> bytes;
};

/// Reads the TensorProto in `path`. Returns an empty string on success, else
/// what is wrong.
std::string readONNXTensorFile(llvm::StringRef path, mlir::MLIRContext *ctx,
                               ONNXTensorData &tensor);

/// Reads a TensorProto held in memory; `displayName` names it in messages.
std::string readONNXTensorBuffer(llvm::StringRef buffer,
                                 llvm::StringRef displayName,
                                 mlir::MLIRContext *ctx,
                                 ONNXTensorData &tensor);

} // namespace loom

#endif // LOOM_IMPORTER_ONNX_TENSORPROTOREADER_H
