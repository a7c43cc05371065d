//===- TensorIO.h - Reading and writing tensor files ------------*- C++ -*-===//
//
// ONNX TensorProto files (`.pb`, the ONNX backend-test layout) and NumPy
// `.npy` files, to and from reference-executor tensors.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TENSORIO_TENSORIO_H
#define LOOM_TENSORIO_TENSORIO_H

#include "loom/Reference/Tensor.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace loom {

/// Reads a `.pb` (TensorProto) or `.npy` file by its extension. Returns an
/// empty string on success, else what is wrong.
std::string readTensorFile(llvm::StringRef path, mlir::MLIRContext *ctx,
                           reference::Tensor &tensor);

/// The two tensor file formats.
enum class TensorFileFormat { ONNXTensorProto, Npy };

/// Reads a tensor file's content held in memory; `displayName` names it in
/// messages.
std::string readTensorBuffer(llvm::StringRef buffer, TensorFileFormat format,
                             llvm::StringRef displayName,
                             mlir::MLIRContext *ctx, reference::Tensor &tensor);

/// Writes a tensor as `.npy` (bf16 is written as f32: NumPy has no bf16).
std::string writeNpyFile(llvm::StringRef path, const reference::Tensor &tensor);

/// The tensor files of a directory in order: `input_N.pb` / `output_N.pb`
/// (by N) when `prefix` files exist, else every `.npy` file by name.
std::string listTensorFiles(llvm::StringRef directory, llvm::StringRef prefix,
                            std::vector<std::string> &files);

} // namespace loom

#endif // LOOM_TENSORIO_TENSORIO_H
