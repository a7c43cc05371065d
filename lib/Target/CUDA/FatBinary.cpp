//===- FatBinary.cpp - The cubins of every architecture in one binary -----===//

#include "loom/Target/CUDA/Passes.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

namespace loom::cuda {
#define GEN_PASS_DEF_LOOMCUDAFATBINARYPASS
#include "loom/Target/CUDA/Passes.h.inc"
} // namespace loom::cuda

using namespace mlir;

namespace loom::cuda {
namespace {

/// Removes the files it was given when it goes out of scope.
struct TemporaryFiles {
  llvm::SmallVector<std::string> paths;
  ~TemporaryFiles() {
    for (const std::string &path : paths)
      llvm::sys::fs::remove(path);
  }
  FailureOr<std::string> create(StringRef suffix, std::string &error) {
    llvm::SmallString<128> path;
    if (std::error_code ec =
            llvm::sys::fs::createTemporaryFile("loom-cuda", suffix, path)) {
      error = "cannot create a temporary file: " + ec.message();
      return failure();
    }
    paths.push_back(path.str().str());
    return paths.back();
  }
};

/// Packs the cubins of `objects` into one fat binary; the bytes, or an
/// error message.
FailureOr<std::string> packCubins(ArrayRef<gpu::ObjectAttr> objects,
                                  StringRef fatbinary, std::string &error) {
  TemporaryFiles files;
  SmallVector<std::string> arguments = {fatbinary.str(), "-64"};
  for (gpu::ObjectAttr object : objects) {
    auto target = dyn_cast<NVVM::NVVMTargetAttr>(object.getTarget());
    if (!target || object.getFormat() != gpu::CompilationTarget::Binary) {
      error = "a kernel binary that is not an NVVM cubin";
      return failure();
    }
    FailureOr<std::string> path = files.create("cubin", error);
    if (failed(path))
      return failure();
    std::error_code ec;
    llvm::raw_fd_ostream os(*path, ec);
    if (ec) {
      error = "cannot write " + *path + ": " + ec.message();
      return failure();
    }
    os << object.getObject().getValue();
    os.close();
    // "sm_90a" -> "90a"
    StringRef chip = target.getChip();
    chip.consume_front("sm_");
    arguments.push_back(
        ("--image3=kind=elf,sm=" + chip + ",file=" + *path).str());
  }
  FailureOr<std::string> output = files.create("fatbin", error);
  if (failed(output))
    return failure();
  arguments.push_back("--create=" + *output);
  SmallVector<StringRef> argv(arguments.begin(), arguments.end());
  std::string message;
  int code = llvm::sys::ExecuteAndWait(fatbinary, argv, std::nullopt, {}, 0, 0,
                                       &message);
  if (code != 0) {
    error = "fatbinary failed (exit " + std::to_string(code) + ")" +
            (message.empty() ? "" : ": " + message);
    return failure();
  }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> bytes =
      llvm::MemoryBuffer::getFile(*output);
  if (!bytes) {
    error = "cannot read " + *output + ": " + bytes.getError().message();
    return failure();
  }
  return (*bytes)->getBuffer().str();
}

class LoomCUDAFatBinaryPass
    : public impl::LoomCUDAFatBinaryPassBase<LoomCUDAFatBinaryPass> {
public:
  using LoomCUDAFatBinaryPassBase::LoomCUDAFatBinaryPassBase;

  void runOnOperation() override {
    llvm::SmallString<128> fatbinary(toolkit);
    llvm::sys::path::append(fatbinary, "bin", "fatbinary");
    WalkResult result = getOperation().walk([&](gpu::BinaryOp binary) {
      auto objects =
          llvm::to_vector(binary.getObjects().getAsRange<gpu::ObjectAttr>());
      if (objects.size() < 2)
        return WalkResult::advance();
      std::string error;
      FailureOr<std::string> packed = packCubins(objects, fatbinary, error);
      if (failed(packed)) {
        binary.emitError("packing the kernels' cubins: ") << error;
        return WalkResult::interrupt();
      }
      // The first target names the object; the driver reads the
      // architectures from the fat binary itself.
      auto fat = gpu::ObjectAttr::get(
          &getContext(), objects.front().getTarget(),
          gpu::CompilationTarget::Fatbin,
          StringAttr::get(&getContext(), *packed), nullptr, nullptr);
      binary.setObjectsAttr(ArrayAttr::get(&getContext(), {fat}));
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
} // namespace loom::cuda
