//===- Executable.cpp - Loading compiled CPU code in-process --------------===//

#include "loom/Target/CPU/Executable.h"

#include "loom/Target/CPU/CPUTarget.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
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

/// The C math library, recorded as a dependency of the shared object so
/// that any process can load it (the code calls erff, tanhf, ...).
std::string findLibm() {
  for (const char *dir :
       {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
        "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/lib64",
        "/usr/lib64"}) {
    std::string path = std::string(dir) + "/libm.so.6";
    if (llvm::sys::fs::exists(path))
      return path;
  }
  return "";
}

/// The OpenMP runtime (LLVM's libomp) that parallel loops call into.
std::string findLibomp() {
  for (const char *dir :
       {"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64",
        "/usr/lib/llvm-22/lib", "/usr/lib/llvm-14/lib"}) {
    std::string path = std::string(dir) + "/libomp.so.5";
    if (llvm::sys::fs::exists(path))
      return path;
  }
  return "";
}

/// Whether the object calls into the OpenMP runtime (has a parallel
/// loop): the fork entry point is then named in its symbol table, so its
/// bytes contain the name.
bool usesOpenMP(llvm::ArrayRef<char> object) {
  return llvm::StringRef(object.data(), object.size())
      .contains("__kmpc_fork_call");
}

} // namespace

bool callsKernelLibrary(llvm::ArrayRef<char> object) {
  return llvm::StringRef(object.data(), object.size())
      .contains("loom_rt_conv2d_f32");
}

std::string linkSharedObject(llvm::ArrayRef<char> object,
                             llvm::SmallVectorImpl<char> &sharedObject) {
  llvm::SmallString<128> dir;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueDirectory("loom-link", dir))
    return "cannot create a temporary directory: " + ec.message();
  std::string objectPath = (dir + "/program.o").str();
  std::string libraryPath = (dir + "/program.so").str();
  llvm::scope_exit cleanup([&] {
    llvm::sys::fs::remove(objectPath);
    llvm::sys::fs::remove(libraryPath);
    llvm::sys::fs::remove(dir);
  });
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(objectPath, ec);
    if (ec)
      return "cannot write " + objectPath + ": " + ec.message();
    os.write(object.data(), object.size());
  }
  std::string linker = findLinker();
  if (linker.empty())
    return "ld.lld (LLVM 22) not found";
  llvm::SmallVector<llvm::StringRef> args = {linker, "-shared", "-o",
                                             libraryPath, objectPath};
  std::string libm = findLibm();
  if (!libm.empty())
    args.push_back(libm);
  // Code without parallel loops does not load the OpenMP runtime.
  std::string libomp;
  if (usesOpenMP(object)) {
    libomp = findLibomp();
    if (libomp.empty())
      return "the code has parallel loops but the OpenMP runtime "
             "(libomp.so.5, Debian's libomp5) was not found";
    args.push_back(libomp);
  }
  std::string message;
  int status =
      llvm::sys::ExecuteAndWait(linker, args, std::nullopt, {}, 0, 0, &message);
  if (status != 0)
    return "linking the object failed: " +
           (message.empty() ? "status " + std::to_string(status) : message);
  auto buffer = llvm::MemoryBuffer::getFile(libraryPath);
  if (!buffer)
    return "cannot read " + libraryPath + ": " + buffer.getError().message();
  sharedObject.assign((*buffer)->getBufferStart(), (*buffer)->getBufferEnd());
  return "";
}

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
  std::string libraryPath = exe->directory + "/program.so";
  llvm::SmallVector<char> sharedObject;
  if (std::string message = linkSharedObject(object, sharedObject);
      !message.empty()) {
    error = message;
    return nullptr;
  }
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(libraryPath, ec);
    if (ec) {
      error = "cannot write " + libraryPath + ": " + ec.message();
      return nullptr;
    }
    os.write(sharedObject.data(), sharedObject.size());
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
  exe->setNumThreads = reinterpret_cast<void (*)(int)>(
      dlsym(exe->handle, "omp_set_num_threads"));
  return exe;
}

Executable::~Executable() {
  if (handle)
    dlclose(handle);
  if (!directory.empty()) {
    llvm::sys::fs::remove(directory + "/program.so");
    llvm::sys::fs::remove(directory);
  }
}

void Executable::run(void **buffers, int threads) const {
  if (setNumThreads)
    setNumThreads(threads);
  entry(buffers);
}

} // namespace loom::cpu
