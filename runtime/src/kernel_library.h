//===- kernel_library.h - The interface of kernel library plugins -*- C++
//-*-===//
//
// A kernel library plugin (libloom_runtime_onednn.so) is a shared object
// the runtime loads on first use with dlopen, so that neither the runtime
// nor code without library calls depends on the library. It exports these
// C functions; the runtime's loom_rt_* entry points (loom/abi/kernels.h)
// forward to them.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_SRC_KERNEL_LIBRARY_H
#define LOOM_RUNTIME_SRC_KERNEL_LIBRARY_H

#include <stddef.h>
#include <stdint.h>

extern "C" {

/// The library's name and version ("oneDNN 2.6.3"), for messages and
/// reports.
typedef const char *(*loom_kernel_library_version_fn)(void);

/// out (+)= conv2d(in, filter) (+ bias) (then ReLU) as `desc`
/// (loom/abi/kernels.h) says, with at most `threads` threads. What it
/// prepares (primitive, reordered constant filter) it keeps in `*slot`
/// (zero on the first call) for later calls. 0 on success; otherwise a
/// message in `error` (`error_size` bytes).
typedef int (*loom_kernel_conv2d_f32_fn)(const float *in, const float *filter,
                                         const float *bias, float *out,
                                         const int64_t *desc, int64_t *slot,
                                         int32_t threads, char *error,
                                         size_t error_size);

/// Frees what the library keeps for the slots in [begin, end): the code
/// that holds them is being unloaded.
typedef void (*loom_kernel_release_fn)(const void *begin, const void *end);

} // extern "C"

#endif // LOOM_RUNTIME_SRC_KERNEL_LIBRARY_H
