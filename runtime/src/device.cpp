//===- device.cpp - Devices, found at run time ----------------------------===//
//
// Vendor libraries are opened with dlopen and their entry points looked up
// by name, so the runtime has no link-time dependency on CUDA or NCCL. The
// handles stay open for the life of the process (the drivers expect it).
//
//===----------------------------------------------------------------------===//

#include "loom/device.h"

#include "comm_internal.h"

#include <dlfcn.h>
#include <string>

using loom::runtime::setError;

namespace {

/// dlopen's reason for the last failure, or `fallback`.
std::string dlReason(const char *fallback) {
  const char *reason = dlerror();
  return reason ? reason : fallback;
}

loom_status countCudaDevices(int32_t *count) {
  void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!driver)
    return setError(LOOM_ERROR_NO_DEVICE,
                    "no CUDA driver: " + dlReason("libcuda.so.1 not found"));
  using InitFn = int (*)(unsigned);
  using CountFn = int (*)(int *);
  auto init = reinterpret_cast<InitFn>(dlsym(driver, "cuInit"));
  auto deviceCount =
      reinterpret_cast<CountFn>(dlsym(driver, "cuDeviceGetCount"));
  if (!init || !deviceCount)
    return setError(LOOM_ERROR_NO_DEVICE,
                    "the CUDA driver lacks cuInit or cuDeviceGetCount");
  if (int error = init(0))
    return setError(LOOM_ERROR_NO_DEVICE,
                    "cuInit failed with CUDA error " + std::to_string(error));
  int n = 0;
  if (int error = deviceCount(&n))
    return setError(LOOM_ERROR_NO_DEVICE, "cuDeviceGetCount failed with CUDA "
                                          "error " +
                                              std::to_string(error));
  if (n == 0)
    return setError(LOOM_ERROR_NO_DEVICE, "the CUDA driver sees no device");
  *count = n;
  return LOOM_OK;
}

} // namespace

extern "C" {

const char *loom_device_kind_name(loom_device_kind kind) {
  switch (kind) {
  case LOOM_DEVICE_CPU:
    return "cpu";
  case LOOM_DEVICE_CUDA:
    return "cuda";
  case LOOM_DEVICE_KIND_MAX_ENUM:
    break;
  }
  return "unknown";
}

loom_status loom_device_count(loom_device_kind kind, int32_t *count) {
  if (!count)
    return setError(LOOM_ERROR_INVALID_ARGUMENT, "null count");
  *count = 0;
  switch (kind) {
  case LOOM_DEVICE_CPU:
    *count = 1;
    return LOOM_OK;
  case LOOM_DEVICE_CUDA:
    return countCudaDevices(count);
  case LOOM_DEVICE_KIND_MAX_ENUM:
    break;
  }
  return setError(LOOM_ERROR_INVALID_ARGUMENT,
                  "unknown device kind " + std::to_string(int(kind)));
}

loom_status loom_nccl_version(int32_t *version) {
  if (!version)
    return setError(LOOM_ERROR_INVALID_ARGUMENT, "null version");
  *version = 0;
  void *nccl = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (!nccl)
    return setError(LOOM_ERROR_NO_DEVICE,
                    "no NCCL: " + dlReason("libnccl.so.2 not found"));
  using VersionFn = int (*)(int *);
  auto getVersion = reinterpret_cast<VersionFn>(dlsym(nccl, "ncclGetVersion"));
  int v = 0;
  if (!getVersion || getVersion(&v) != 0)
    return setError(LOOM_ERROR_NO_DEVICE, "ncclGetVersion failed");
  *version = v;
  return LOOM_OK;
}

} // extern "C"
