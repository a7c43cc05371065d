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

/// ONNX data types newer than the linked library's onnx.proto (ONNX 1.12
/// stops at BFLOAT16 = 16), by their numbers in the current one.
enum NewerDataType : int32_t {
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  kUInt4 = 21,
  kInt4 = 22,
  kFloat4E2M1 = 23,
  kFloat8E8M0 = 24,
  kUInt2 = 25,
  kInt2 = 26,
};

/// Size in bytes of one element of an ONNX data type in memory (one byte
/// for the 4- and 2-bit types, which files pack), or 0 when the type has no
/// fixed-size binary form (string, undefined, unknown).
size_t elementByteSize(int32_t dataType);

/// Bits per element of the types ONNX files pack several to a byte (4 for
/// INT4/UINT4/FLOAT4E2M1, 2 for INT2/UINT2), 0 for every other type.
unsigned packedElementBits(int32_t dataType);

/// Reads the payload of `tensor` as little-endian bytes in row-major order,
/// from raw_data, the typed fields, or external data confined to
/// `baseDirectory`. The byte count is checked against shape x element size
/// (overflow-checked) before anything is allocated. Packed 4- and 2-bit
/// elements come out one per byte, sign-extended for INT4/INT2.
std::string readTensorBytes(const onnx::TensorProto &tensor,
                            const std::string &baseDirectory,
                            const ONNXImportOptions &options,
                            std::vector<char> &bytes);

} // namespace loom::onnx_import

#endif // LOOM_LIB_IMPORTER_ONNX_MODELLOADER_H
