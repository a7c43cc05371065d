//===- cuda_driver.cpp - The CUDA driver and the code's device calls ------===//
//
// The driver table (cuda_driver.h) and the device functions compiled CUDA
// code calls (loom/abi/gpu.h): one primary context, one stream per thread,
// a per-thread cache of device buffers.
//
//===----------------------------------------------------------------------===//

#include "cuda_driver.h"

#include "../../collectives_internal.h"
#include "loom/abi/gpu.h"

#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace loom::runtime::cuda {
namespace {

Driver openDriver() {
  Driver d;
  void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *reason = dlerror();
    d.error = std::string("no CUDA driver: ") +
              (reason ? reason : "libcuda.so.1 not found");
    return d;
  }
#define LOOM_CUDA_LOOKUP(name, symbol, ret, params)                            \
  d.name = reinterpret_cast<ret(*) params>(dlsym(library, symbol));            \
  if (!d.name) {                                                               \
    d.error = "the CUDA driver lacks " symbol " (too old a driver?)";          \
    return d;                                                                  \
  }
  LOOM_CUDA_DRIVER_FUNCTIONS(LOOM_CUDA_LOOKUP)
#undef LOOM_CUDA_LOOKUP
  if (CUresult r = d.init(0)) {
    d.error = "cuInit failed: " + describe(r);
    return d;
  }
  int count = 0;
  if (CUresult r = d.deviceGetCount(&count)) {
    d.error = "cuDeviceGetCount failed: " + describe(r);
    return d;
  }
  if (count == 0) {
    d.error = "the CUDA driver sees no device";
    return d;
  }
  if (CUresult r = d.deviceGet(&d.device, 0)) {
    d.error = "cuDeviceGet failed: " + describe(r);
    return d;
  }
  if (CUresult r = d.primaryCtxRetain(&d.context, d.device)) {
    d.error = "cuDevicePrimaryCtxRetain failed: " + describe(r);
    return d;
  }
  int version = 0, major = 0, minor = 0;
  char name[256] = {0};
  d.driverGetVersion(&version);
  d.deviceGetName(name, sizeof(name) - 1, d.device);
  d.deviceGetAttribute(&major, kAttributeComputeCapabilityMajor, d.device);
  d.deviceGetAttribute(&minor, kAttributeComputeCapabilityMinor, d.device);
  d.description = "CUDA driver " + std::to_string(version / 1000) + "." +
                  std::to_string(version % 1000 / 10) + ", " + name + " (sm_" +
                  std::to_string(major) + std::to_string(minor) + ")";
  return d;
}

/// A driver failure inside a call ends the call (the code has no error
/// path); elsewhere it is printed and the process stops (abandonCall).
void check(CUresult result, const char *what) {
  if (result != kSuccess)
    abandonCall(std::string(what) + " failed: " + describe(result));
}

/// Freed device buffers of this thread, by size, for reuse. Work on the
/// thread's one stream is ordered, so a block freed by one kernel's last
/// use is safe to hand to a later allocation on the same thread.
struct BufferCache {
  std::multimap<size_t, CUdeviceptr> free;
  std::unordered_map<CUdeviceptr, size_t> sizes;
  ~BufferCache() {
    // The driver may be shut down already when threads end with the
    // process; blocks not returned then go with the context.
  }
};

thread_local BufferCache bufferCache;
thread_local CUstream stream = nullptr;
thread_local bool contextEntered = false;

std::mutex moduleErrorMutex;
std::string moduleLoadError;

/// LOOM_CUDA_KERNEL_TIMES=1: every launch is timed with events (and waited
/// for), and a table of kernel times goes to stderr when the process ends.
/// For measuring kernels apart from the copies to and from the host; it
/// serializes the launches, so end-to-end figures are taken without it.
struct KernelTimes {
  bool enabled = false;
  std::mutex mutex;
  std::unordered_map<CUfunction, std::string> names;
  /// name -> (calls, milliseconds)
  std::map<std::string, std::pair<long, double>> totals;

  KernelTimes() {
    const char *value = std::getenv("LOOM_CUDA_KERNEL_TIMES");
    enabled = value && *value && std::string(value) != "0";
  }
  ~KernelTimes() {
    if (!enabled || totals.empty())
      return;
    std::fprintf(stderr, "loom cuda kernel times (events around each "
                         "launch):\n");
    double all = 0;
    for (auto &[name, total] : totals)
      all += total.second;
    for (auto &[name, total] : totals)
      std::fprintf(stderr,
                   "  %-40s calls %6ld  total %10.4f ms  mean %9.2f us\n",
                   name.c_str(), total.first, total.second,
                   1000.0 * total.second / double(total.first));
    std::fprintf(stderr, "  all kernels: %.4f ms\n", all);
  }
};

KernelTimes &kernelTimes() {
  static KernelTimes times;
  return times;
}

} // namespace

const Driver &driver() {
  static const Driver d = openDriver();
  return d;
}

std::string describe(CUresult result) {
  const Driver &d = driver();
  const char *name = nullptr, *text = nullptr;
  if (d.getErrorName)
    d.getErrorName(result, &name);
  if (d.getErrorString)
    d.getErrorString(result, &text);
  std::string out = name ? name : "CUDA error " + std::to_string(result);
  if (text)
    out += std::string(" (") + text + ")";
  return out;
}

void enterContext() {
  if (contextEntered)
    return;
  const Driver &d = driver();
  if (!d.error.empty())
    abandonCall(d.error);
  check(d.ctxSetCurrent(d.context), "cuCtxSetCurrent");
  contextEntered = true;
}

CUstream threadStream() {
  enterContext();
  if (!stream)
    check(driver().streamCreate(&stream, 0), "cuStreamCreate");
  return stream;
}

void *uploadToDevice(const void *data, size_t bytes, std::string &error) {
  const Driver &d = driver();
  if (!d.error.empty()) {
    error = d.error;
    return nullptr;
  }
  if (CUresult r = d.ctxSetCurrent(d.context)) {
    error = "cuCtxSetCurrent failed: " + describe(r);
    return nullptr;
  }
  CUdeviceptr device = 0;
  if (CUresult r = d.memAlloc(&device, bytes ? bytes : 1)) {
    error = "cannot allocate " + std::to_string(bytes) +
            " bytes on the device for a weight: " + describe(r);
    return nullptr;
  }
  if (bytes)
    if (CUresult r = d.memcpyHtoD(device, data, bytes)) {
      d.memFree(device);
      error = "copying a weight to the device failed: " + describe(r);
      return nullptr;
    }
  return reinterpret_cast<void *>(device);
}

void freeDeviceBuffer(void *device) {
  const Driver &d = driver();
  if (device && d.error.empty())
    d.memFree(reinterpret_cast<CUdeviceptr>(device));
}

std::string takeModuleLoadError() {
  std::lock_guard<std::mutex> lock(moduleErrorMutex);
  return std::move(moduleLoadError);
}

} // namespace loom::runtime::cuda

using namespace loom::runtime::cuda;
using loom::runtime::abandonCall;

extern "C" {

void *mgpuModuleLoad(void *data, size_t size) {
  (void)size;
  const Driver &d = driver();
  std::string error;
  CUmodule module = nullptr;
  if (!d.error.empty()) {
    error = d.error;
  } else if (CUresult r = d.ctxSetCurrent(d.context)) {
    error = "cuCtxSetCurrent failed: " + describe(r);
  } else if (CUresult r = d.moduleLoadData(&module, data)) {
    error = "the engine's kernels do not load on this GPU (" + d.description +
            "): " + describe(r);
  }
  if (!error.empty()) {
    std::lock_guard<std::mutex> lock(moduleErrorMutex);
    if (moduleLoadError.empty())
      moduleLoadError = error;
    return nullptr;
  }
  return module;
}

void mgpuModuleUnload(void *module) {
  const Driver &d = driver();
  // Runs when the engine's code is unloaded; the driver may be gone at
  // process exit, and there is nobody to report to.
  if (module && d.error.empty())
    d.moduleUnload(static_cast<CUmodule>(module));
}

void *mgpuModuleGetFunction(void *module, const char *name) {
  enterContext();
  if (!module)
    abandonCall(std::string("kernel '") + name +
                "': the engine's kernels were not loaded");
  CUfunction function = nullptr;
  check(driver().moduleGetFunction(&function, static_cast<CUmodule>(module),
                                   name),
        "cuModuleGetFunction");
  KernelTimes &times = kernelTimes();
  if (times.enabled) {
    std::lock_guard<std::mutex> lock(times.mutex);
    times.names.emplace(function, name);
  }
  return function;
}

void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t sharedMemoryBytes, void *,
                      void **params, void **extra, size_t) {
  // A launch over nothing (an empty tensor) is no launch; the driver would
  // reject it.
  if (gridX <= 0 || gridY <= 0 || gridZ <= 0)
    return;
  KernelTimes &times = kernelTimes();
  CUevent start = nullptr, end = nullptr;
  if (times.enabled) {
    check(driver().eventCreate(&start, 0), "cuEventCreate");
    check(driver().eventCreate(&end, 0), "cuEventCreate");
    check(driver().eventRecord(start, threadStream()), "cuEventRecord");
  }
  check(driver().launchKernel(static_cast<CUfunction>(function),
                              unsigned(gridX), unsigned(gridY), unsigned(gridZ),
                              unsigned(blockX), unsigned(blockY),
                              unsigned(blockZ), unsigned(sharedMemoryBytes),
                              threadStream(), params, extra),
        "cuLaunchKernel");
  if (times.enabled) {
    check(driver().eventRecord(end, threadStream()), "cuEventRecord");
    check(driver().eventSynchronize(end), "cuEventSynchronize");
    float ms = 0;
    check(driver().eventElapsedTime(&ms, start, end), "cuEventElapsedTime");
    driver().eventDestroy(start);
    driver().eventDestroy(end);
    std::lock_guard<std::mutex> lock(times.mutex);
    auto &total = times.totals[times.names[static_cast<CUfunction>(function)]];
    total.first += 1;
    total.second += ms;
  }
}

void *mgpuStreamCreate(void) { return threadStream(); }

void mgpuStreamDestroy(void *) {}

void mgpuStreamSynchronize(void *) {
  // Launches are ordered on the thread's stream; the copies back to the
  // host wait. Waiting after every launch would only add latency.
}

void *mgpuMemAlloc(uint64_t bytes, void *, bool hostShared) {
  if (hostShared)
    abandonCall("host-shared device memory is not supported");
  enterContext();
  size_t size = bytes ? bytes : 1;
  auto it = bufferCache.free.find(size);
  if (it != bufferCache.free.end()) {
    CUdeviceptr device = it->second;
    bufferCache.free.erase(it);
    return reinterpret_cast<void *>(device);
  }
  CUdeviceptr device = 0;
  CUresult r = driver().memAlloc(&device, size);
  if (r != kSuccess) {
    // Give the cached blocks back to the driver and try once more.
    threadStream();
    check(driver().streamSynchronize(stream), "cuStreamSynchronize");
    for (auto &[blockSize, block] : bufferCache.free) {
      driver().memFree(block);
      bufferCache.sizes.erase(block);
    }
    bufferCache.free.clear();
    r = driver().memAlloc(&device, size);
  }
  if (r != kSuccess)
    abandonCall("out of device memory: could not allocate " +
                std::to_string(bytes) + " bytes: " + describe(r));
  bufferCache.sizes[device] = size;
  return reinterpret_cast<void *>(device);
}

void mgpuMemFree(void *pointer, void *) {
  if (!pointer)
    return;
  auto device = reinterpret_cast<CUdeviceptr>(pointer);
  auto it = bufferCache.sizes.find(device);
  if (it == bufferCache.sizes.end())
    abandonCall("freeing a device buffer this thread did not allocate");
  bufferCache.free.emplace(it->second, device);
}

void mgpuMemcpy(void *dst, void *src, size_t bytes, void *) {
  if (!bytes)
    return;
  CUstream s = threadStream();
  check(driver().memcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                             reinterpret_cast<CUdeviceptr>(src), bytes, s),
        "cuMemcpyAsync");
  // The source or destination may be the caller's host memory, which it
  // may reuse as soon as the code returns.
  check(driver().streamSynchronize(s), "cuStreamSynchronize");
}

void mgpuMemset32(void *dst, unsigned value, size_t count, void *) {
  check(driver().memsetD32Async(reinterpret_cast<CUdeviceptr>(dst), value,
                                count, threadStream()),
        "cuMemsetD32Async");
}

void mgpuMemset16(void *dst, unsigned short value, size_t count, void *) {
  check(driver().memsetD16Async(reinterpret_cast<CUdeviceptr>(dst), value,
                                count, threadStream()),
        "cuMemsetD16Async");
}

} // extern "C"
