//===- Executable.h - Loading compiled CPU code in-process ------*- C++ -*-===//

#ifndef LOOM_TARGET_CPU_EXECUTABLE_H
#define LOOM_TARGET_CPU_EXECUTABLE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <memory>
#include <string>

namespace loom::cpu {

/// An object file produced by `compileToObject`, linked into a shared
/// object (ld.lld from LLVM 22) in a private temporary directory and
/// loaded with dlopen. The object's undefined symbols (malloc, free, libm)
/// resolve against the loading process.
/// Whether the object calls the runtime's kernel library (oneDNN
/// convolutions, loom/abi/kernels.h): it is then named in the object's
/// symbol table.
bool callsKernelLibrary(llvm::ArrayRef<char> object);

/// Links a relocatable object of compiled code into a shared object (with
/// LLD 22, depending on libm) and returns its bytes in `sharedObject`: what
/// an engine stores and the runtime loads. An error message, or "" on
/// success.
std::string linkSharedObject(llvm::ArrayRef<char> object,
                             llvm::SmallVectorImpl<char> &sharedObject);

class Executable {
public:
  /// Links and loads `object`; null with `error` set on failure.
  static std::unique_ptr<Executable> load(llvm::ArrayRef<char> object,
                                          std::string &error);
  ~Executable();
  Executable(const Executable &) = delete;
  Executable &operator=(const Executable &) = delete;

  /// Calls the entry: `buffers` holds one pointer per input, then one per
  /// output, each to a dense row-major buffer of the signature's type.
  /// Parallel loops in the code run on `threads` threads (the OpenMP
  /// thread count of the calling thread is set to it first).
  void run(void **buffers, int threads = 1) const;

private:
  Executable() = default;
  std::string directory;
  void *handle = nullptr;
  void (*entry)(void **) = nullptr;
  /// omp_set_num_threads when the code has parallel loops.
  void (*setNumThreads)(int) = nullptr;
};

} // namespace loom::cpu

#endif // LOOM_TARGET_CPU_EXECUTABLE_H
