//===- tensor-file-fuzzer.cpp - Fuzzing the tensor file readers -----------===//
//
// Input: a tensor file as `loom-run --inputs DIR` and calibration read it:
// NumPy `.npy` when it starts with the NumPy magic, else a serialized ONNX
// TensorProto (`.pb`). A tensor that reads is then used the way the runner
// uses one (every element read), so a shape that does not match its data
// shows up as an out-of-bounds read.
//
//===----------------------------------------------------------------------===//

#include "loom/TensorIO/TensorIO.h"

#include "mlir/IR/MLIRContext.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef buffer(reinterpret_cast<const char *>(data), size);
  loom::TensorFileFormat format = buffer.starts_with("\x93NUMPY")
                                      ? loom::TensorFileFormat::Npy
                                      : loom::TensorFileFormat::ONNXTensorProto;
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  loom::reference::Tensor tensor;
  if (!loom::readTensorBuffer(buffer, format, "fuzz", &context, tensor).empty())
    return 0;
  double sum = 0;
  for (int64_t i = 0, e = tensor.numElements(); i < e; ++i)
    sum += tensor.getDouble(i);
  volatile double sink = sum;
  (void)sink;
  return 0;
}
