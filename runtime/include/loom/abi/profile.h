/*===- profile.h - Kernel timers that compiled code calls --------*- C -*-===*
 *
 * Code compiled with `loomc --kernel-timers` calls these around each of
 * its kernels (lib/Target/CPU/KernelTimers.cpp). While the engine's caller
 * collects times (loom_engine_collect_kernel_times), the runtime adds each
 * kernel's time to its rank's table; otherwise the calls return at once.
 *
 *===----------------------------------------------------------------------===*/

#ifndef LOOM_ABI_PROFILE_H
#define LOOM_ABI_PROFILE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Kernel `index` (0, 1, ... in program order) starts. */
void loom_rt_kernel_begin(int64_t index);
/* Kernel `index` ended. `label` is the address of a constant NUL-terminated
   string in the code (the kind and the ONNX node it came from); `flops`
   and `bytes` what one run computes and moves (0 when not counted). */
void loom_rt_kernel_end(int64_t index, int64_t label, int64_t flops,
                        int64_t bytes);

#ifdef __cplusplus
}
#endif

#endif /* LOOM_ABI_PROFILE_H */
