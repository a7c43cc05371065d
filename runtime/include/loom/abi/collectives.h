/*===- collectives.h - What compiled code calls for collectives --*- C -*-===*
 *
 * Compiled per-rank code (lib/Target/CPU/Collectives.cpp) calls these
 * functions, which the runtime exports; they act on the communicator the
 * runtime installed for the calling thread before it entered the code. A
 * failure does not return into the code (which has no error path): it is
 * recorded, the remaining collectives of the call return at once, and the
 * runtime reports the failure when the code returns.
 *
 * Buffers are passed as addresses (uintptr_t as int64_t), so that one
 * declaration serves every shape and element type.
 *
 *===----------------------------------------------------------------------===*/

#ifndef LOOM_ABI_COLLECTIVES_H
#define LOOM_ABI_COLLECTIVES_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* `count` elements of dtype `dtype` (a loom_dtype), reduced with `op` (a
   loom_reduce_op) over all ranks into `out`. */
void loom_rt_all_reduce(int64_t in, int64_t out, int64_t count, int32_t dtype,
                        int32_t op);

/* `bytes` bytes from every rank, concatenated in rank order into `out`. */
void loom_rt_all_gather(int64_t in, int64_t out, int64_t bytes);

/* `bytes` bytes of rank `root`'s `in` into every rank's `out` (`in` is read
   on the root only). */
void loom_rt_broadcast(int64_t in, int64_t out, int64_t bytes, int64_t root);

/* Point to point between pipeline stages: `bytes` bytes at `in` to rank
   `destination`, and `bytes` bytes from rank `source` into `out`. */
void loom_rt_send(int64_t in, int64_t bytes, int64_t destination);
void loom_rt_recv(int64_t out, int64_t bytes, int64_t source);

/* Collectives over a group of the communicator's ranks (a sub-grid of a
   multi-axis grid): `ranks` is the address of `n` int64 global ranks, the
   group in order; every member passes the same list. They run through the
   group's first member with point-to-point messages. */
void loom_rt_group_all_reduce(int64_t in, int64_t out, int64_t count,
                              int32_t dtype, int32_t op, int64_t ranks,
                              int64_t n);
void loom_rt_group_all_gather(int64_t in, int64_t out, int64_t bytes,
                              int64_t ranks, int64_t n);
/* `root` is a global rank, one of the group's. */
void loom_rt_group_broadcast(int64_t in, int64_t out, int64_t bytes,
                             int64_t root, int64_t ranks, int64_t n);

/* Block j (`bytes` bytes) of `in` to rank j; `out` gets the blocks sent to
   this rank, in rank order. */
void loom_rt_all_to_all(int64_t in, int64_t out, int64_t bytes);
/* The same within a group (see loom_rt_group_all_reduce): block j goes to
   the group's member j. */
void loom_rt_group_all_to_all(int64_t in, int64_t out, int64_t bytes,
                              int64_t ranks, int64_t n);

#ifdef __cplusplus
}
#endif

#endif /* LOOM_ABI_COLLECTIVES_H */
