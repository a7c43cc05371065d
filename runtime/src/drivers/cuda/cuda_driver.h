//===- cuda_driver.h - The CUDA driver API, loaded at run time ------------===//
//
// The runtime has no link-time dependency on CUDA: libcuda.so.1 is opened
// with dlopen the first time a CUDA engine (or loom_kernel_library("cuda"))
// asks for it, and its entry points are looked up by name into one table.
// The types are the driver's, declared here as the ABI defines them, so the
// runtime builds without the toolkit's headers.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_SRC_DRIVERS_CUDA_CUDA_DRIVER_H
#define LOOM_RUNTIME_SRC_DRIVERS_CUDA_CUDA_DRIVER_H

#include <cstddef>
#include <string>

namespace loom::runtime::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;

constexpr CUresult kSuccess = 0;
constexpr int kAttributeComputeCapabilityMajor = 75;
constexpr int kAttributeComputeCapabilityMinor = 76;

/// X(name, symbol, return, parameters): the driver functions the runtime
/// uses. `symbol` is the versioned name the driver exports.
#define LOOM_CUDA_DRIVER_FUNCTIONS(X)                                          \
  X(init, "cuInit", CUresult, (unsigned))                                      \
  X(driverGetVersion, "cuDriverGetVersion", CUresult, (int *))                 \
  X(getErrorName, "cuGetErrorName", CUresult, (CUresult, const char **))       \
  X(getErrorString, "cuGetErrorString", CUresult, (CUresult, const char **))   \
  X(deviceGetCount, "cuDeviceGetCount", CUresult, (int *))                     \
  X(deviceGet, "cuDeviceGet", CUresult, (CUdevice *, int))                     \
  X(deviceGetName, "cuDeviceGetName", CUresult, (char *, int, CUdevice))       \
  X(deviceGetAttribute, "cuDeviceGetAttribute", CUresult,                      \
    (int *, int, CUdevice))                                                    \
  X(primaryCtxRetain, "cuDevicePrimaryCtxRetain", CUresult,                    \
    (CUcontext *, CUdevice))                                                   \
  X(ctxSetCurrent, "cuCtxSetCurrent", CUresult, (CUcontext))                   \
  X(moduleLoadData, "cuModuleLoadData", CUresult, (CUmodule *, const void *))  \
  X(moduleUnload, "cuModuleUnload", CUresult, (CUmodule))                      \
  X(moduleGetFunction, "cuModuleGetFunction", CUresult,                        \
    (CUfunction *, CUmodule, const char *))                                    \
  X(launchKernel, "cuLaunchKernel", CUresult,                                  \
    (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,   \
     unsigned, CUstream, void **, void **))                                    \
  X(streamCreate, "cuStreamCreate", CUresult, (CUstream *, unsigned))          \
  X(streamSynchronize, "cuStreamSynchronize", CUresult, (CUstream))            \
  X(memAlloc, "cuMemAlloc_v2", CUresult, (CUdeviceptr *, size_t))              \
  X(memFree, "cuMemFree_v2", CUresult, (CUdeviceptr))                          \
  X(memcpyAsync, "cuMemcpyAsync", CUresult,                                    \
    (CUdeviceptr, CUdeviceptr, size_t, CUstream))                              \
  X(memcpyHtoD, "cuMemcpyHtoD_v2", CUresult,                                   \
    (CUdeviceptr, const void *, size_t))                                       \
  X(memsetD32Async, "cuMemsetD32Async", CUresult,                              \
    (CUdeviceptr, unsigned, size_t, CUstream))                                 \
  X(memsetD16Async, "cuMemsetD16Async", CUresult,                              \
    (CUdeviceptr, unsigned short, size_t, CUstream))                           \
  X(eventCreate, "cuEventCreate", CUresult, (CUevent *, unsigned))             \
  X(eventRecord, "cuEventRecord", CUresult, (CUevent, CUstream))               \
  X(eventSynchronize, "cuEventSynchronize", CUresult, (CUevent))               \
  X(eventDestroy, "cuEventDestroy_v2", CUresult, (CUevent))                    \
  X(eventElapsedTime, "cuEventElapsedTime_v2", CUresult,                       \
    (float *, CUevent, CUevent))

struct Driver {
// A declarator cannot be parenthesized as the check asks.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define LOOM_CUDA_DECLARE(name, symbol, ret, params)                           \
  ret(*name) params = nullptr;
  // NOLINTEND(bugprone-macro-parentheses)
  LOOM_CUDA_DRIVER_FUNCTIONS(LOOM_CUDA_DECLARE)
#undef LOOM_CUDA_DECLARE
  /// Device 0's primary context, current on every thread that calls into
  /// the driver through this layer.
  CUcontext context = nullptr;
  CUdevice device = 0;
  /// "CUDA driver 13.0, NVIDIA H200 (sm_90)".
  std::string description;
  /// Empty when the driver is usable; else why not.
  std::string error;
};

/// The driver, opened and initialized on first use (thread-safe). Check
/// `error` before using it.
const Driver &driver();

/// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
std::string describe(CUresult result);

/// Makes the primary context current on the calling thread.
void enterContext();

/// The calling thread's stream: every copy and launch of a call goes to it,
/// in order, so the code needs no other synchronization.
CUstream threadStream();

/// Copies `bytes` of host memory to a new device buffer (weights, at load).
/// Returns null with `error` set on failure.
void *uploadToDevice(const void *data, size_t bytes, std::string &error);
void freeDeviceBuffer(void *device);

/// The first error of loading the kernels of code that was just loaded
/// (module loads run in the code's constructors, outside any call), and
/// clears it. Empty when there was none.
std::string takeModuleLoadError();

} // namespace loom::runtime::cuda

#endif // LOOM_RUNTIME_SRC_DRIVERS_CUDA_CUDA_DRIVER_H
