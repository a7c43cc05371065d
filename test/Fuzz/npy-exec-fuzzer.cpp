//===- npy-exec-fuzzer.cpp - Fuzzing loom-exec's .npy reader --------------===//
//
// Input: a .npy file as `loom-exec --inputs DIR --expected DIR` reads it,
// with its own reader (runtime/tools/Npy.h: loom-exec links the runtime
// alone, not the compiler's TensorIO). A tensor that parses is then read
// whole and written back and parsed again, so a shape that does not match
// its data shows up as an out-of-bounds access and the writer's output must
// be one its reader accepts with the same type and bytes.
//
//===----------------------------------------------------------------------===//

#include "Npy.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  loom::exec::Tensor tensor;
  if (!loom::exec::parseNpy(reinterpret_cast<const char *>(data), size, "fuzz",
                            tensor)
           .empty())
    return 0;
  size_t bytes = 0;
  if (!loom::exec::byteSize(tensor.dtype, tensor.shape, bytes) ||
      bytes != tensor.data.size())
    std::abort();
  // Written as loom-exec writes outputs, then read back: the same tensor.
  static const std::string path =
      "/tmp/npy-exec-fuzzer-" + std::to_string(getpid()) + ".npy";
  if (!loom::exec::writeNpy(path, tensor).empty())
    std::abort();
  loom::exec::Tensor back;
  if (!loom::exec::readNpy(path, back).empty() || back.dtype != tensor.dtype ||
      back.shape != tensor.shape || back.data != tensor.data)
    std::abort();
  return 0;
}
