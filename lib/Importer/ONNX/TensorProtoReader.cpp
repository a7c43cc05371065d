//===- TensorProtoReader.cpp - Reading serialized ONNX tensors ------------===//

#include "loom/Importer/ONNX/TensorProtoReader.h"

#include "GraphImporter.h"
#include "ModelLoader.h"

#include "llvm/Support/MemoryBuffer.h"

namespace loom {

std::string readONNXTensorFile(llvm::StringRef path, mlir::MLIRContext *ctx,
                               ONNXTensorData &tensor) {
  auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                          /*RequiresNullTerminator=*/false);
  if (!file)
    return "cannot read '" + path.str() + "': " + file.getError().message();
  return readONNXTensorBuffer((*file)->getBuffer(), path, ctx, tensor);
}

std::string readONNXTensorBuffer(llvm::StringRef buffer,
                                 llvm::StringRef displayName,
                                 mlir::MLIRContext *ctx,
                                 ONNXTensorData &tensor) {
  onnx::TensorProto proto;
  if (buffer.size() > static_cast<size_t>(INT32_MAX) ||
      !proto.ParseFromArray(buffer.data(), static_cast<int>(buffer.size())))
    return "'" + displayName.str() + "' is not a valid ONNX TensorProto";
  mlir::Type elementType =
      onnx_import::convertElementType(ctx, proto.data_type());
  if (!elementType)
    return "'" + displayName.str() + "' holds an unsupported element type";
  ONNXImportOptions options;
  if (std::string error = onnx_import::readTensorBytes(
          proto, /*baseDirectory=*/"", options, tensor.bytes);
      !error.empty())
    return "'" + displayName.str() + "': " + error;
  tensor.name = proto.name();
  llvm::SmallVector<int64_t> shape(proto.dims().begin(), proto.dims().end());
  tensor.type = mlir::RankedTensorType::get(shape, elementType);
  return "";
}

} // namespace loom
