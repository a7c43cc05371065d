//===- kernels.cpp - Library kernels and checks called by compiled code ---===//
//
// loom_rt_conv2d_f32 (loom/abi/kernels.h) forwards to the oneDNN plugin,
// which is loaded with dlopen on first use: the runtime links no kernel
// library, and a process that runs no library call never loads one.
// loom_rt_index_error, loom_rt_shape_error and loom_rt_check_failed
// (loom/abi/checks.h) record a failed run-time check.
//
//===----------------------------------------------------------------------===//

#include "collectives_internal.h"
#include "drivers/cuda/cuda_driver.h"
#include "kernel_library.h"
#include "memory_internal.h"

#include "loom/abi/checks.h"
#include "loom/abi/kernels.h"
#include "loom/abi/outputs.h"
#include "loom/device.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <link.h>
#include <string>

using loom::runtime::setError;

namespace {

constexpr const char *kOneDNNPlugin = "libloom_runtime_onednn.so";

struct KernelLibrary {
  void *handle = nullptr;
  loom_kernel_conv2d_f32_fn conv2d = nullptr;
  loom_kernel_release_fn release = nullptr;
  std::string version;
  /// Why it did not load (empty when it did).
  std::string error;
};

/// The directory of the runtime library itself, where its plugins live.
std::string runtimeDirectory() {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void *>(&loom_kernel_library), &info) ||
      !info.dli_fname)
    return "";
  std::string path = info.dli_fname;
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

KernelLibrary loadOneDNN() {
  KernelLibrary library;
  std::string path;
  if (const char *override = std::getenv("LOOM_ONEDNN_PLUGIN"))
    path = override;
  else
    path = runtimeDirectory() + kOneDNNPlugin;
  library.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library.handle) {
    const char *reason = dlerror();
    library.error = "the oneDNN kernel library does not load (" + path +
                    "): " + (reason ? reason : "unknown reason");
    return library;
  }
  auto version = reinterpret_cast<loom_kernel_library_version_fn>(
      dlsym(library.handle, "loom_onednn_version"));
  library.conv2d = reinterpret_cast<loom_kernel_conv2d_f32_fn>(
      dlsym(library.handle, "loom_onednn_conv2d_f32"));
  library.release = reinterpret_cast<loom_kernel_release_fn>(
      dlsym(library.handle, "loom_onednn_release"));
  if (!version || !library.conv2d || !library.release) {
    library.error = path + " is not Loom's oneDNN kernel library (it lacks "
                           "loom_onednn_version, loom_onednn_conv2d_f32 or "
                           "loom_onednn_release)";
    library.conv2d = nullptr;
    return library;
  }
  library.version = version();
  return library;
}

/// Set once the library was first asked for.
std::atomic<const KernelLibrary *> loadedOneDNN{nullptr};

/// Loaded once per process; stays loaded (code may keep prepared kernels).
const KernelLibrary &oneDNN() {
  static const KernelLibrary library = loadOneDNN();
  loadedOneDNN.store(&library, std::memory_order_release);
  return library;
}

/// A failure in code the runtime did not enter (an in-process object run
/// by a tool) has nobody to report to: say so and stop, rather than let
/// the code go on with an output that was never written.
[[noreturn]] void failOutsideRuntime(const std::string &message) {
  std::fprintf(stderr, "loom runtime: error: %s\n", message.c_str());
  std::fflush(stderr);
  std::_Exit(70);
}

void kernelFailed(loom_status status, const std::string &message) {
  if (!loom::runtime::inCallScope())
    failOutsideRuntime(message);
  loom::runtime::recordKernelFailure(status, message);
}

} // namespace

namespace loom::runtime {

void releaseLibraryKernels(void *code) {
  // Only a library that was loaded can hold anything.
  const KernelLibrary *library = loadedOneDNN.load(std::memory_order_acquire);
  if (!library || !library->release)
    return;
  // The slots are in the code's writable data: pass the address range of
  // its loaded segments.
  struct link_map *map = nullptr;
  if (dlinfo(code, RTLD_DI_LINKMAP, &map) != 0 || !map)
    return;
  struct Range {
    ElfW(Addr) base;
    uintptr_t begin = UINTPTR_MAX, end = 0;
  } range{map->l_addr};
  dl_iterate_phdr(
      [](struct dl_phdr_info *info, size_t, void *data) {
        auto *range = static_cast<Range *>(data);
        if (info->dlpi_addr != range->base)
          return 0;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr) &segment = info->dlpi_phdr[i];
          if (segment.p_type != PT_LOAD)
            continue;
          uintptr_t begin = info->dlpi_addr + segment.p_vaddr;
          range->begin = std::min(range->begin, begin);
          range->end = std::max(range->end, begin + segment.p_memsz);
        }
        return 1;
      },
      &range);
  if (range.begin < range.end)
    library->release(reinterpret_cast<const void *>(range.begin),
                     reinterpret_cast<const void *>(range.end));
}

} // namespace loom::runtime

extern "C" {

loom_status loom_kernel_library(const char *name, const char **version) {
  if (name && std::strcmp(name, "cuda") == 0) {
    // The device layer of CUDA engines: the driver and a device.
    const loom::runtime::cuda::Driver &driver = loom::runtime::cuda::driver();
    if (!driver.error.empty())
      return setError(LOOM_ERROR_NO_DEVICE, driver.error);
    if (version)
      *version = driver.description.c_str();
    return LOOM_OK;
  }
  if (!name || std::strcmp(name, "onednn") != 0)
    return setError(LOOM_ERROR_TARGET, std::string("unknown kernel library '") +
                                           (name ? name : "(null)") +
                                           "' (known: onednn, cuda)");
  const KernelLibrary &library = oneDNN();
  if (!library.conv2d)
    return setError(LOOM_ERROR_TARGET, library.error);
  if (version)
    *version = library.version.c_str();
  return LOOM_OK;
}

void loom_rt_conv2d_f32(int64_t in, int64_t filter, int64_t bias, int64_t out,
                        int64_t desc, int64_t slot) {
  if (loom::runtime::callFailed())
    return;
  const KernelLibrary &library = oneDNN();
  if (!library.conv2d)
    return kernelFailed(LOOM_ERROR_TARGET, library.error);
  char error[512] = "";
  int32_t threads = loom::runtime::callThreads();
  if (library.conv2d(reinterpret_cast<const float *>(in),
                     reinterpret_cast<const float *>(filter),
                     reinterpret_cast<const float *>(bias),
                     reinterpret_cast<float *>(out),
                     reinterpret_cast<const int64_t *>(desc),
                     reinterpret_cast<int64_t *>(slot), threads, error,
                     sizeof(error)) != 0)
    kernelFailed(LOOM_ERROR_INTERNAL,
                 std::string("oneDNN convolution failed: ") + error);
}

void loom_rt_index_error(int64_t index, int64_t size, int64_t site) {
  if (loom::runtime::callFailed())
    return;
  const char *where = reinterpret_cast<const char *>(site);
  kernelFailed(LOOM_ERROR_INVALID_ARGUMENT,
               std::string(where ? where : "an op") + ": index " +
                   std::to_string(index) +
                   " is out of range for a dimension of size " +
                   std::to_string(size));
}

void loom_rt_shape_error(int64_t actual, int64_t stated, int64_t dim,
                         int64_t site) {
  if (loom::runtime::callFailed())
    return;
  const char *where = reinterpret_cast<const char *>(site);
  kernelFailed(LOOM_ERROR_INVALID_ARGUMENT,
               std::string(where ? where : "an op") + ": dimension " +
                   std::to_string(dim) + " has " + std::to_string(actual) +
                   " elements at run time, but the model states " +
                   std::to_string(stated));
}

int64_t loom_rt_copy_output(int64_t data, int64_t bytes) {
  size_t size = bytes > 0 ? static_cast<size_t>(bytes) : 1;
  void *copy = loom::runtime::allocateOutputBuffer(size);
  if (!copy) {
    if (!loom::runtime::callFailed())
      kernelFailed(LOOM_ERROR_INTERNAL, "out of memory for an output of " +
                                            std::to_string(bytes) + " bytes");
    return 0;
  }
  if (bytes > 0)
    std::memcpy(copy, reinterpret_cast<const void *>(data),
                static_cast<size_t>(bytes));
  return reinterpret_cast<int64_t>(copy);
}

void loom_rt_check_failed(int64_t message) {
  if (loom::runtime::callFailed())
    return;
  const char *text = reinterpret_cast<const char *>(message);
  kernelFailed(LOOM_ERROR_INVALID_ARGUMENT,
               text ? text : "a run-time check failed");
}

void loom_rt_check_fatal(int64_t message) {
  const char *text = reinterpret_cast<const char *>(message);
  std::fprintf(stderr, "loom runtime: error: a run-time check failed\n%s\n",
               text ? text : "");
  std::fflush(stderr);
  std::abort();
}

void loom_rt_check_or_abort(int32_t ok, int64_t message) {
  if (!ok)
    loom_rt_check_fatal(message);
}

} // extern "C"
