/*===- comm.h - Loom's runtime: communicators --------------------*- C -*-===*
 *
 * The ranks of a partitioned program meet in a communicator: collectives
 * over all ranks and point-to-point messages. Two implementations share this
 * API:
 *   - in-process (loom_comm_create_local): N ranks as threads of one
 *     process, for tests and single-machine runs;
 *   - MPI (loom_comm_create_mpi, in libloom_runtime_mpi): one rank per
 *     process under `mpirun`, on one machine or several.
 *
 * No wait is unbounded: every call gives up after the options' timeout.
 * A rank that fails calls loom_comm_abort; in-process, every peer waiting
 * (or later calling) then fails with LOOM_ERROR_RANK_FAILED and the reason;
 * under MPI the job is aborted (MPI has no way to cancel a collective), so
 * every process exits with an error.
 *
 * Buffers belong to the caller. A communicator handle is used by one thread
 * (its rank) at a time.
 *
 *===----------------------------------------------------------------------===*/

#ifndef LOOM_COMM_H
#define LOOM_COMM_H

#include "loom/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum loom_reduce_op {
  LOOM_REDUCE_SUM = 0,
  LOOM_REDUCE_PROD = 1,
  LOOM_REDUCE_MAX = 2,
  LOOM_REDUCE_MIN = 3,
  /* Not a value: makes the type int-sized with every int representable,
     so that a caller's out-of-range value is refused with an error instead
     of being undefined behaviour in the C++ implementation. */
  LOOM_REDUCE_OP_MAX_ENUM = 0x7fffffff
} loom_reduce_op;

typedef struct loom_comm_options {
  /* How long one call may wait for its peers, in milliseconds (default
     30000). */
  int64_t timeout_ms;
} loom_comm_options;

void loom_comm_options_init(loom_comm_options *options);

/* `size` in-process ranks: comms[r] (an array the caller provides, of
   `size` entries) is rank r's handle, to be used by rank r's thread and
   released with loom_comm_free (the shared state goes with the last one).
   `options` may be null. */
loom_status loom_comm_create_local(int32_t size,
                                   const loom_comm_options *options,
                                   loom_comm **comms);

/* MPI_COMM_WORLD of this process (libloom_runtime_mpi): initializes MPI
   when the application has not, and finalizes it on loom_comm_free in
   that case. */
loom_status loom_comm_create_mpi(const loom_comm_options *options,
                                 loom_comm **comm);

int32_t loom_comm_rank(const loom_comm *comm);
int32_t loom_comm_size(const loom_comm *comm);

/* Element-wise reduction of `count` elements over all ranks; every rank
   gets the result in `recv` (which may equal `send`). Supported dtypes:
   f32, f64, i32, i64. */
loom_status loom_comm_all_reduce(loom_comm *comm, const void *send, void *recv,
                                 size_t count, loom_dtype dtype,
                                 loom_reduce_op op);

/* Every rank contributes `bytes` bytes; `recv` gets all contributions in
   rank order (size * bytes). */
loom_status loom_comm_all_gather(loom_comm *comm, const void *send, void *recv,
                                 size_t bytes);

/* Every rank's `send` holds size blocks of `bytes` bytes; block j goes to
   rank j, and `recv` gets the blocks sent to this rank in rank order
   (size * bytes). `recv` must not overlap `send`. */
loom_status loom_comm_all_to_all(loom_comm *comm, const void *send, void *recv,
                                 size_t bytes);

/* `bytes` bytes of `root`'s buffer into every rank's. */
loom_status loom_comm_broadcast(loom_comm *comm, void *buffer, size_t bytes,
                                int32_t root);

/* Point to point: send returns once the data is copied or on its way
   (buffered), so a ring of sends followed by receives does not deadlock;
   recv waits for `bytes` bytes from `source`. */
loom_status loom_comm_send(loom_comm *comm, const void *data, size_t bytes,
                           int32_t dest);
loom_status loom_comm_recv(loom_comm *comm, void *data, size_t bytes,
                           int32_t source);

loom_status loom_comm_barrier(loom_comm *comm);

/* This rank has failed for `reason`: see the file comment. */
void loom_comm_abort(loom_comm *comm, const char *reason);

void loom_comm_free(loom_comm *comm);

#ifdef __cplusplus
}
#endif

#endif /* LOOM_COMM_H */
