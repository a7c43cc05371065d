/*===- device.h - Devices the runtime can run on ------------------*- C -*-===*
 *
 * Engines run on the CPU today. The device seam is here so that the CUDA
 * backend and NCCL communicators plug in without changing the C API: the
 * runtime opens vendor libraries at run time (dlopen), never links them, so
 * it builds and loads on machines without them and reports their absence
 * as LOOM_ERROR_NO_DEVICE with the reason.
 *
 *===----------------------------------------------------------------------===*/

#ifndef LOOM_DEVICE_H
#define LOOM_DEVICE_H

#include "loom/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum loom_device_kind {
  LOOM_DEVICE_CPU = 0,
  /* NVIDIA GPUs through the CUDA driver (libcuda.so.1). */
  LOOM_DEVICE_CUDA = 1,
  /* Not a value: makes the type int-sized with every int representable,
     so that a caller's out-of-range value is refused with an error instead
     of being undefined behaviour in the C++ implementation. */
  LOOM_DEVICE_KIND_MAX_ENUM = 0x7fffffff
} loom_device_kind;

/* "cpu", "cuda"; "unknown" for anything else. */
const char *loom_device_kind_name(loom_device_kind kind);

/* How many devices of `kind` this process can use. The CPU is one device.
   CUDA: opens the driver library and asks it (cuInit, cuDeviceGetCount);
   LOOM_ERROR_NO_DEVICE (with the reason in loom_last_error()) when the
   library is missing, fails to initialize or sees no device. */
loom_status loom_device_count(loom_device_kind kind, int32_t *count);

/* Whether NCCL (libnccl.so.2) can be opened, for communicators between
   GPUs: LOOM_OK with its version (e.g. 22304 for 2.23.4), or
   LOOM_ERROR_NO_DEVICE with the reason. */
loom_status loom_nccl_version(int32_t *version);

/* Whether kernel library `name` ("onednn", the only one) can be loaded:
   its plugin libloom_runtime_onednn.so (next to the runtime library, or
   the path in the environment variable LOOM_ONEDNN_PLUGIN) and the library
   it links. LOOM_OK with `*version` (e.g. "oneDNN 2.6.3", owned by the
   runtime), or LOOM_ERROR_TARGET with the reason. Engines whose code calls
   the library check this when they load; loading happens once per process. */
loom_status loom_kernel_library(const char *name, const char **version);

#ifdef __cplusplus
}
#endif

#endif /* LOOM_DEVICE_H */
