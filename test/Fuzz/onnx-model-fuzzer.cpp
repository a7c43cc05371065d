//===- onnx-model-fuzzer.cpp - Fuzzing the ONNX model importer ------------===//
//
// Input: a model file as `loom-translate --import-onnx` reads it (binary
// protobuf, or the ONNX text syntax when it starts with '<' or '#'), read
// from memory, so external data is refused (external-data-fuzzer.cpp covers
// it). Everything after parsing runs: the bounds and validity checks,
// function expansion, ONNX shape inference and every op's builder.
//
//===----------------------------------------------------------------------===//

#include "FuzzImport.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  loom::fuzz::importModel(
      llvm::StringRef(reinterpret_cast<const char *>(data), size), "fuzz.onnx",
      /*baseDirectory=*/"");
  return 0;
}
