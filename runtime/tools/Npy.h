//===- Npy.h - .npy files for loom-exec -------------------------*- C++ -*-===//
//
// loom-exec links the runtime library and nothing else, so it reads and
// writes tensors as .npy files with this small reader rather than the
// compiler's TensorIO. The files come from another machine: every length
// is checked before it is used (fuzzed by test/Fuzz/npy-exec-fuzzer).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_TOOLS_NPY_H
#define LOOM_RUNTIME_TOOLS_NPY_H

#include "loom/runtime.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace loom::exec {

/// A dense, row-major tensor held in memory.
struct Tensor {
  loom_dtype dtype = LOOM_DTYPE_F32;
  std::vector<int64_t> shape;
  std::vector<char> data;
};

/// "f32[2, ?, 4]": the spelling loom-run uses, '?' for symbolic sizes.
std::string typeString(loom_dtype dtype, const int64_t *dims, size_t rank);
std::string typeString(const Tensor &t);
std::string typeString(const loom_tensor_desc &desc);

/// Elements times the dtype's size, or false when that overflows.
bool byteSize(loom_dtype dtype, const std::vector<int64_t> &shape,
              size_t &bytes);

/// Parses the bytes of a .npy file (versions 1 to 3, little-endian, C
/// order) named `path` in messages; "" on success, else why not.
std::string parseNpy(const char *data, size_t size, const std::string &path,
                     Tensor &tensor);

/// Reads and parses the .npy file at `path`; "" on success.
std::string readNpy(const std::string &path, Tensor &tensor);

/// Writes `tensor` as a version 1 .npy file; "" on success.
std::string writeNpy(const std::string &path, const Tensor &tensor);

} // namespace loom::exec

#endif // LOOM_RUNTIME_TOOLS_NPY_H
