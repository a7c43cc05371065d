//===- onnx-text-fuzzer.cpp - Fuzzing the ONNX text syntax's import -------===//
//
// Input: a model in the ONNX text syntax (`<ir_version: 8, ...> graph (...)
// {...}`). A leading comment line makes every input text, whatever its first
// byte, so that no mutation is spent on the binary reader.
//
//===----------------------------------------------------------------------===//

#include "FuzzImport.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text = "#\n";
  text.append(reinterpret_cast<const char *>(data), size);
  loom::fuzz::importModel(text, "fuzz.onnxtxt", /*baseDirectory=*/"");
  return 0;
}
