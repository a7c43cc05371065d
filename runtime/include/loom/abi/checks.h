/*===- checks.h - Run-time checks that compiled code reports -----*- C -*-===*
 *
 * Compiled code checks what only the data can tell - an index of a gather
 * or scatter outside its dimension, a size computed from data that differs
 * from the one the model states - before it is used, and reports a
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

/* Dimension `dim` of a tensor whose size the data decides (range,
   non_zero, ...) has `actual` elements where the model states `stated`;
   `site` describes the op as above. The code goes on with zeros of the
   stated shape. */
void loom_rt_shape_error(int64_t actual, int64_t stated, int64_t dim,
                         int64_t site);

/* Any other check: `message` is the address of a NUL-terminated text naming
   the op and the problem ("node 'Range_0' (loom.range): range delta is
   zero"). */
void loom_rt_check_failed(int64_t message);

/* A check of code compiled with `loomc --runtime-checks` failed: an access
   outside a buffer, or operands whose shapes disagree, is about to happen.
   There is no safe way on: the message (the op, its location, the check)
   goes to standard error and the process aborts. */
void loom_rt_check_fatal(int64_t message);

/* The same check with its outcome as an argument: aborts as
   loom_rt_check_fatal does when `ok` is 0, returns otherwise. Checked
   code calls it straight, without a branch around the call: a large model
   has tens of thousands of checks, and one branch each makes lowering
   and LLVM's optimizer take minutes and gigabytes. */
void loom_rt_check_or_abort(int32_t ok, int64_t message);

#ifdef __cplusplus
}
#endif

#endif /* LOOM_ABI_CHECKS_H */
