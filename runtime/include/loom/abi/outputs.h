/*===- outputs.h - Outputs whose sizes the data decides ----------*- C -*-===*
 *
 * An output of compiled code whose shape has a dimension the data decides
 * (the rows non_max_suppression selects, the coordinates non_zero finds)
 * is not a buffer the caller allocates: its out-parameter is a record of
 * 1 + rank int64_t values. Before the code returns it stores the sizes in
 * slots 1.. and, in slot 0, the address that loom_rt_copy_output returned
 * for a copy of the data. The caller then owns that copy and releases it
 * with loom_buffer_free (the runtime's API hands it over as
 * loom_dynamic_output.data). The copy comes from the runtime's block
 * cache, not malloc, so that a stream of calls reuses its pages.
 *
 *===----------------------------------------------------------------------===*/

#ifndef LOOM_ABI_OUTPUTS_H
#define LOOM_ABI_OUTPUTS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A copy of the `bytes` bytes at `data`, as an address (0 when memory ran
   out, which the runtime reports when the code returns); released with
   loom_buffer_free. */
int64_t loom_rt_copy_output(int64_t data, int64_t bytes);

#ifdef __cplusplus
}
#endif

#endif /* LOOM_ABI_OUTPUTS_H */
