//===- ModelLoader.h - Reading and preparing ONNX protobufs -----*- C++ -*-===//
//
// The part of the importer that talks to protobuf and the ONNX library:
// parsing (binary and text), bounds checks, function expansion, ONNX shape
// inference and tensor payloads (inline or external data). The ONNX library
// reports errors by throwing, so this code is built with exceptions and
// turns every exception into an error string; nothing escapes into MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_IMPORTER_ONNX_MODELLOADER_H
#define LOOM_LIB_IMPORTER_ONNX_MODELLOADER_H

#include "loom/Importer/ONNX/Importer.h"

#include "onnx/onnx_pb.h"

#include <functional>
#include <string>
#include <vector>

namespace loom::onnx_import {

/// Tells whether the importer has a builder for (domain, op type, opset);
/// nodes without one are expanded when ONNX defines them as a function.
using HasBuilderFn =
    std::function<bool(const onnx::NodeProto &node, int64_t opsetVersion)>;

/// Parses `buffer` (binary protobuf or ONNX text) into `model`. Returns an
/// empty string on success, else what is wrong.
std::string parseModel(const std::string &buffer, onnx::ModelProto &model,
                       const ONNXImportOptions &options);

/// Checks structural bounds: node count, ranks, subgraph depth, opset
/// imports, and that every tensor's declared size is representable.
std::string checkModelBounds(const onnx::ModelProto &model,
                             const ONNXImportOptions &options);

/// Expands function-defined ops without a builder into their bodies and runs
/// ONNX shape inference (with data propagation) so that every value has a
/// type. Repeats until no expandable node remains (bounded depth).
std::string prepareModel(onnx::ModelProto &model,
                         const HasBuilderFn &hasBuilder,
                         const ONNXImportOptions &options);

/// The opset version the model imports for `domain` ("" and "ai.onnx" are
/// one domain), or -1 when it imports none.
int64_t opsetVersion(const onnx::ModelProto &model, const std::string &domain);

/// Size in bytes of one element of an ONNX data type, or 0 when the type
/// has no fixed-size binary form (string, undefined, unknown).
size_t elementByteSize(int32_t dataType);

/// Reads the payload of `tensor` as little-endian bytes in row-major order,
/// from raw_data, the typed fields, or external data confined to
/// `baseDirectory`. The byte count is checked against shape x element size
/// (overflow-checked) before anything is allocated.
std::string readTensorBytes(const onnx::TensorProto &tensor,
                            const std::string &baseDirectory,
                            const ONNXImportOptions &options,
                            std::vector<char> &bytes);

} // namespace loom::onnx_import

#endif // LOOM_LIB_IMPORTER_ONNX_MODELLOADER_H
