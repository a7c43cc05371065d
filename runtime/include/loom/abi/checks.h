/*===- checks.h - Run-time checks that compiled code reports -----*- C -*-===*
 *
 * Compiled code checks what only the data can tell - an index of a gather
 * or scatter outside its dimension - before the op runs, and reports a
 * failure here. Like a collective's failure (collectives.h), it does not
 * return into the code with an error (the code has no error path, and
 * goes on with clamped indices, never outside its tensors): the runtime
 * reports LOOM_ERROR_INVALID_ARGUMENT when the code returns. Code run
 * outside the runtime (an in-process object) prints the message and exits
 * with status 70.
 *
 *===----------------------------------------------------------------------===*/

#ifndef LOOM_ABI_CHECKS_H
#define LOOM_ABI_CHECKS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* `index` is outside [-size, size) for a dimension of `size`; `site` is the
   address of a NUL-terminated description of the op ("node 'Gather_0'
   (loom.gather)"). */
void loom_rt_index_error(int64_t index, int64_t size, int64_t site);

#ifdef __cplusplus
}
#endif

#endif /* LOOM_ABI_CHECKS_H */
