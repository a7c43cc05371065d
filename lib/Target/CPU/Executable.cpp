//===- Executable.cpp - Loading compiled CPU code in-process --------------===//

#include "loom/Target/CPU/Executable.h"

#include "loom/Target/CPU/CPUTarget.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <dlfcn.h>

namespace loom::cpu {

namespace {

/// LLVM 22's lld: Debian's plain `ld.lld` may be an older release.
std::string findLinker() {
  for (const char *name : {"ld.lld-22", "ld.lld"}) {
    if (auto path = llvm::sys::findProgramByName(
            name, {"/usr/lib/llvm-22/bin", "/usr/bin"}))
      return *path;
  }
  return "";
}

} // namespace

std::unique_ptr<Executable> Executable::load(llvm::ArrayRef<char> object,
                                             std::string &error) {
  std::unique_ptr<Executable> exe(new Executable());
  llvm::SmallString<128> dir;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueDirectory("loom-cpu", dir)) {
    error = "cannot create a temporary directory: " + ec.message();
    return nullptr;
  }
  exe->directory = dir.str().str();
  std::string objectPath = exe->directory + "/program.o";
  std::string libraryPath = exe->directory + "/program.so";
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(objectPath, ec);
    if (ec) {
      error = "cannot write " + objectPath + ": " + ec.message();
      return nullptr;
    }
    os.write(object.data(), object.size());
  }
  std::string linker = findLinker();
  if (linker.empty()) {
    error = "ld.lld (LLVM 22) not found";
    return nullptr;
  }
  std::string message;
  int status = llvm::sys::ExecuteAndWait(
      linker, {linker, "-shared", "-o", libraryPath, objectPath}, std::nullopt,
      {}, 0, 0, &message);
  if (status != 0) {
    error = "linking the object failed: " +
            (message.empty() ? "status " + std::to_string(status) : message);
    return nullptr;
  }
  exe->handle = dlopen(libraryPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!exe->handle) {
    error = std::string("dlopen failed: ") + dlerror();
    return nullptr;
  }
  exe->entry =
      reinterpret_cast<void (*)(void **)>(dlsym(exe->handle, kEntrySymbol));
  if (!exe->entry) {
    error = std::string("the object has no ") + kEntrySymbol;
    return nullptr;
  }
  return exe;
}

Executable::~Executable() {
  if (handle)
    dlclose(handle);
  if (!directory.empty()) {
    llvm::sys::fs::remove(directory + "/program.o");
    llvm::sys::fs::remove(directory + "/program.so");
    llvm::sys::fs::remove(directory);
  }
}

void Executable::run(void **buffers) const { entry(buffers); }

} // namespace loom::cpu
