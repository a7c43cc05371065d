/*===- runtime.h - Loom's runtime: the C API ---------------------*- C -*-===*
 *
 * Load an engine (verified before anything in it is trusted), inspect it,
 * and execute it: one rank at a time, or every rank of its grid at once on
 * threads of this process.
 *
 * Conventions:
 * - Every function that can fail returns a loom_status; LOOM_OK is 0.
 *   loom_last_error() then describes the failure (per thread, valid until
 *   the next call into the runtime on that thread).
 * - Options structs are initialized with their *_init function, which sets
 *   every field to its default; callers then change what they need.
 * - Ownership: an object returned through an out-parameter belongs to the
 *   caller and is released with the matching *_free function. Strings and
 *   descriptors returned by inspection functions belong to the engine and
 *   live as long as it does. Tensor buffers always belong to the caller
 *   (an output whose size the data decides is allocated by the runtime and
 *   handed to the caller: loom_dynamic_output).
 * - The runtime is thread-safe for distinct engines; one engine may be
 *   executed from several threads at once (the code keeps no state).
 *
 *===----------------------------------------------------------------------===*/

#ifndef LOOM_RUNTIME_H
#define LOOM_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum loom_status {
  LOOM_OK = 0,
  /* The file could not be opened, read or mapped. */
  LOOM_ERROR_IO = 1,
  /* Not an engine, truncated, or its SHA-256 does not match. */
  LOOM_ERROR_CORRUPT = 2,
  /* Written by an incompatible format version. */
  LOOM_ERROR_VERSION = 3,
  /* Compiled for another architecture or for CPU features this machine
     lacks. */
  LOOM_ERROR_TARGET = 4,
  /* A bad argument: null pointer, rank out of range, ... */
  LOOM_ERROR_INVALID_ARGUMENT = 5,
  /* The requested device is not available (e.g. no CUDA device). */
  LOOM_ERROR_NO_DEVICE = 6,
  /* A rank failed or timed out, so the others stopped. */
  LOOM_ERROR_RANK_FAILED = 7,
  LOOM_ERROR_INTERNAL = 8,
  /* A trusted key was given (loom_load_options::trusted_public_key) and the
     engine is not signed, or not by that key, or was changed after it was
     signed. */
  LOOM_ERROR_SIGNATURE = 9,
  /* Not a value: makes the type int-sized with every int representable,
     so that a caller's out-of-range value is refused with an error instead
     of being undefined behaviour in the C++ implementation. */
  LOOM_STATUS_MAX_ENUM = 0x7fffffff
} loom_status;

/* A short name of a status ("LOOM_ERROR_CORRUPT"). */
const char *loom_status_name(loom_status status);

/* The message of the last failure on this thread ("" when none). */
const char *loom_last_error(void);

typedef enum loom_dtype {
  LOOM_DTYPE_F16 = 1,
  LOOM_DTYPE_BF16 = 2,
  LOOM_DTYPE_F32 = 3,
  LOOM_DTYPE_F64 = 4,
  LOOM_DTYPE_BOOL = 5, /* one byte per element */
  LOOM_DTYPE_I8 = 6,
  LOOM_DTYPE_I16 = 7,
  LOOM_DTYPE_I32 = 8,
  LOOM_DTYPE_I64 = 9,
  LOOM_DTYPE_U8 = 10,
  LOOM_DTYPE_U16 = 11,
  LOOM_DTYPE_U32 = 12,
  LOOM_DTYPE_U64 = 13,
  /* The 8- and 4-bit floats and the 4- and 2-bit integers: one element per
     byte (a float's bits in the low bits; an integer's value, sign-extended
     for the signed ones), as the compiled code reads and writes them. */
  LOOM_DTYPE_F8E4M3FN = 14,
  LOOM_DTYPE_F8E4M3FNUZ = 15,
  LOOM_DTYPE_F8E5M2 = 16,
  LOOM_DTYPE_F8E5M2FNUZ = 17,
  LOOM_DTYPE_F4E2M1FN = 18,
  LOOM_DTYPE_I4 = 19,
  LOOM_DTYPE_U4 = 20,
  LOOM_DTYPE_I2 = 21,
  LOOM_DTYPE_U2 = 22,
  LOOM_DTYPE_F8E8M0FNU = 23,
  /* Not a value: makes the type int-sized with every int representable,
     so that a caller's out-of-range value is refused with an error instead
     of being undefined behaviour in the C++ implementation. */
  LOOM_DTYPE_MAX_ENUM = 0x7fffffff
} loom_dtype;

/* "f32", "i64", ...; the names the manifest uses. */
const char *loom_dtype_name(loom_dtype dtype);
/* Bytes per element. */
size_t loom_dtype_size(loom_dtype dtype);

#define LOOM_MAX_RANK 16

/* A dimension whose size is known only at run time. In an input, a
   symbolic dimension of the model (batch, sequence): the caller says its
   size at each execute (loom_shaped_input). In an output, a size the code
   computes: from the inputs' sizes, or from the data (the rows
   non_max_suppression selects, the coordinates non_zero finds). */
#define LOOM_DYNAMIC_DIM (-1)

/* An input or output of a rank: dense, row-major. An input or output may
   have LOOM_DYNAMIC_DIM dimensions (see loom_shaped_input and
   loom_dynamic_output). */
typedef struct loom_tensor_desc {
  const char *name;
  loom_dtype dtype;
  int32_t rank;
  int64_t dims[LOOM_MAX_RANK];
  /* Elements times the dtype's size: the buffer size execute expects; 0
     for an output with a LOOM_DYNAMIC_DIM dimension. */
  size_t byte_size;
} loom_tensor_desc;

/* What the caller passes for an input with a LOOM_DYNAMIC_DIM dimension,
   in that input's place: its data (dense, row-major, read only) and its
   shape. The rank and the static dimensions must be the descriptor's; each
   LOOM_DYNAMIC_DIM dimension may be any size from 0 to 2^31 - 1 that the
   model accepts (sizes that disagree within the model, such as two inputs
   added elementwise with different lengths, are reported as errors by the
   code). */
typedef struct loom_shaped_input {
  const void *data;
  int32_t rank;
  int64_t dims[LOOM_MAX_RANK];
} loom_shaped_input;

/* What execute fills for an output with a LOOM_DYNAMIC_DIM dimension: the
   caller passes a pointer to one of these in that output's place. On
   success `data` holds the output (dense, row-major), allocated by the
   runtime and owned by the caller, who releases it with loom_buffer_free;
   `dims` and `byte_size` say its shape. On failure `data` is null. */
typedef struct loom_dynamic_output {
  void *data;
  int32_t rank;
  int64_t dims[LOOM_MAX_RANK];
  size_t byte_size;
} loom_dynamic_output;

/* Releases a loom_dynamic_output's data (null is ignored). */
void loom_buffer_free(void *data);

/* Whether an output descriptor has a LOOM_DYNAMIC_DIM dimension. */
int loom_tensor_desc_is_dynamic(const loom_tensor_desc *desc);

typedef struct loom_engine loom_engine;

typedef struct loom_load_options {
  /* Verify the SHA-256 digest before parsing (default 1). Turning it off
     saves one read of the file; only for engines already verified. */
  int verify_digest;
  /* Check that this CPU has the features the code was compiled for
     (default 1). */
  int check_target;
  /* Threads for the parallel loops of the engine's code (default 1: the
     code runs on the calling thread only). Large contractions are compiled
     as OpenMP work-sharing loops; before each run the runtime sets the
     OpenMP thread count of the calling thread to this (omp_set_num_threads,
     which also applies to the caller's own OpenMP code on that thread).
     Engines without such loops ignore it. Each rank of a partitioned
     engine runs on its own thread and forks its own team: ranks x threads
     threads in all. */
  int32_t threads;
  /* An Ed25519 public key (32 bytes, loomc --generate-signing-key writes
     one as hex) that the engine must be signed with (loomc --sign); null,
     the default, requires no signature. With a key the digest is verified
     whatever verify_digest says, and an engine that is unsigned, signed with
     another key or changed after signing fails with LOOM_ERROR_SIGNATURE
     before anything in it is used. Loading an engine runs its native code:
     this is how a deployment refuses code it did not sign. */
  const uint8_t *trusted_public_key;
} loom_load_options;

void loom_load_options_init(loom_load_options *options);

/* Loads the engine at `path` (`options` may be null: the defaults). On
   success *engine is the caller's, to release with loom_engine_free. */
loom_status loom_engine_load(const char *path, const loom_load_options *options,
                             loom_engine **engine);
void loom_engine_free(loom_engine *engine);

/* Inspection. The strings and descriptors belong to the engine. */
const char *loom_engine_compiler_version(const loom_engine *engine);
const char *loom_engine_target(const loom_engine *engine);
int32_t loom_engine_num_ranks(const loom_engine *engine);
/* The grid's shape: *rank dimensions in dims (at most LOOM_MAX_RANK). */
void loom_engine_grid(const loom_engine *engine, int32_t *rank,
                      int64_t dims[LOOM_MAX_RANK]);
int32_t loom_engine_num_inputs(const loom_engine *engine, int32_t rank);
int32_t loom_engine_num_outputs(const loom_engine *engine, int32_t rank);
const loom_tensor_desc *loom_engine_input(const loom_engine *engine,
                                          int32_t rank, int32_t index);
const loom_tensor_desc *loom_engine_output(const loom_engine *engine,
                                           int32_t rank, int32_t index);
/* For a state input, the axis along which it holds positions; -1 for an
   ordinary input (read only) or a bad rank or index. State is a buffer the
   code writes in place and the caller keeps between calls: a decoder's
   key/value cache, compiled with loomc --kv-cache, whose size along that
   axis is its capacity; each call appends the new positions after the
   filled ones, whose count the caller passes as the input cache_length. */
int32_t loom_engine_input_state_axis(const loom_engine *engine, int32_t rank,
                                     int32_t index);

/* Specialized programs (loomc --profile's OPT shapes): rank `rank` holds
   loom_engine_num_variants programs besides its general code, each compiled
   for one static shape of every input; a call whose input shapes are
   exactly a variant's runs that variant, any other call the general code.
   The caller sees no difference but speed. -1 for a bad rank. */
int32_t loom_engine_num_variants(const loom_engine *engine, int32_t rank);
/* The shape variant `variant` of rank `rank` takes for input `index` (its
   name and dtype are the input's); null for a bad rank, variant or index. */
const loom_tensor_desc *loom_engine_variant_input(const loom_engine *engine,
                                                  int32_t rank, int32_t variant,
                                                  int32_t index);
/* Which program rank `rank`'s most recent call ran: a variant's number, or
   -1 for the general code (and before the first call, or a bad rank). */
int32_t loom_engine_last_variant(const loom_engine *engine, int32_t rank);

/* Runs rank `rank`'s program: `inputs` and `outputs` hold one buffer per
   input / output of that rank, each of the descriptor's byte_size (for an
   input with a LOOM_DYNAMIC_DIM dimension, a loom_shaped_input; for such an
   output, a loom_dynamic_output). Only for
   engines of one rank: the ranks of a partitioned engine communicate (see
   loom_engine_execute_ranks and loom_engine_execute_on). */
loom_status loom_engine_execute(loom_engine *engine, int32_t rank,
                                const void *const *inputs,
                                void *const *outputs);

/* A session keeps an engine's state inputs in the runtime between calls: a
   decoder's key/value cache (loomc --kv-cache) is allocated once when the
   session is created, zero-filled, with its symbolic dimensions (the batch)
   set to `batch`, and passed to every call, where the code appends to it in
   place. The caller passes only the other inputs (cache_length among them:
   the positions filled so far). A partitioned engine's session holds every
   rank's state, each rank's own shape (with tensor parallelism, a rank's
   cache holds its heads only); run it with loom_session_execute_ranks or
   loom_session_execute_on (below). The engine must outlive the session.
   Sessions of one engine are independent (one per sequence or batch being
   generated); one session runs one call at a time. */
typedef struct loom_session loom_session;

loom_status loom_session_create(loom_engine *engine, int64_t batch,
                                loom_session **session);
void loom_session_free(loom_session *session);
/* Runs the engine: `inputs` and `outputs` as for loom_engine_execute, the
   entries of state inputs ignored (they may be null). */
loom_status loom_session_execute(loom_session *session,
                                 const void *const *inputs,
                                 void *const *outputs);
/* Zero-fills every state input again (a new sequence), of every rank. */
void loom_session_reset(loom_session *session);
/* Input `index`'s state buffer and, in *shape (may be null), its shape and
   byte size with the batch filled in; null for an input that is not state
   or a bad index. The buffer stays at this address for the session's
   life. */
const void *loom_session_state(const loom_session *session, int32_t index,
                               loom_tensor_desc *shape);
/* The same for rank `rank` of a partitioned engine's session
   (loom_session_state is rank 0's). */
const void *loom_session_rank_state(const loom_session *session, int32_t rank,
                                    int32_t index, loom_tensor_desc *shape);

/* Kernel times, for engines compiled with loomc --kernel-timers (others
   have no kernels to report: *count is 0). Collection is off until
   loom_engine_collect_kernel_times(engine, 1), which clears the tables;
   (engine, 0) stops it and keeps them. */
typedef struct loom_kernel_time {
  /* The kernel's kind and the ONNX node it came from (with "(+N nodes)"
     when fused from more); owned by the engine. */
  const char *label;
  /* Runs, and their summed time, since collection started. */
  uint64_t calls;
  uint64_t nanoseconds;
  /* Per run, as the compiler counted them on static shapes: 2 per
     multiply-accumulate of products and convolutions, and the bytes the
     kernel's operands span; 0 when not counted. */
  int64_t flops;
  int64_t bytes;
} loom_kernel_time;

/* One kernel's run in the rank's most recent call, for a timeline: the
   kernel's index in loom_engine_kernel_times and its start relative to the
   call's start. */
typedef struct loom_kernel_event {
  int32_t kernel;
  uint64_t start_ns;
  uint64_t duration_ns;
} loom_kernel_event;

void loom_engine_collect_kernel_times(loom_engine *engine, int32_t enable);
/* Rank `rank`'s kernels in program order: at most `capacity` written to
   `times`, their number in *count. */
loom_status loom_engine_kernel_times(const loom_engine *engine, int32_t rank,
                                     loom_kernel_time *times, size_t capacity,
                                     size_t *count);
/* The kernels' runs in rank `rank`'s most recent call, in order. */
loom_status loom_engine_kernel_events(const loom_engine *engine, int32_t rank,
                                      loom_kernel_event *events,
                                      size_t capacity, size_t *count);

/* The collectives a rank's compiled code ran in its most recent call, per
   kind: how many, the bytes of their buffers (an all-reduce's buffer, a
   gather's or exchange's whole result, a broadcast's or send's data), and
   the bytes a ring algorithm sends from this rank for them, the convention
   planners predict in (2(n-1)/n of an all-reduced buffer, (n-1)/n of a
   gathered, exchanged or broadcast one (a pipelined ring: every member
   forwards), a send's data; a receive sends nothing). */
typedef enum loom_collective_kind {
  LOOM_COLLECTIVE_ALL_REDUCE = 0,
  LOOM_COLLECTIVE_ALL_GATHER = 1,
  LOOM_COLLECTIVE_ALL_TO_ALL = 2,
  LOOM_COLLECTIVE_BROADCAST = 3,
  LOOM_COLLECTIVE_SEND = 4,
  LOOM_COLLECTIVE_RECV = 5,
  LOOM_COLLECTIVE_KINDS = 6
} loom_collective_kind;

typedef struct loom_collective_stats {
  uint64_t calls;
  uint64_t buffer_bytes;
  uint64_t ring_bytes_sent;
} loom_collective_stats;

/* "all_reduce", "all_gather", ...; "unknown" for other values. */
const char *loom_collective_kind_name(loom_collective_kind kind);
/* Rank `rank`'s collectives in its most recent call: stats[k] for kind k,
   LOOM_COLLECTIVE_KINDS entries. */
loom_status loom_engine_collective_stats(const loom_engine *engine,
                                         int32_t rank,
                                         loom_collective_stats *stats);

typedef struct loom_execute_options {
  /* How long a rank may wait for its peers, in milliseconds (default
     30000); then every rank fails with LOOM_ERROR_RANK_FAILED. */
  int64_t timeout_ms;
} loom_execute_options;

void loom_execute_options_init(loom_execute_options *options);

/* Runs every rank of the grid at once, one thread per rank, in this
   process: inputs[r] and outputs[r] are rank r's buffers. `options` may be
   null. A failing rank makes the call fail; the message names the rank. */
loom_status loom_engine_execute_ranks(loom_engine *engine,
                                      const void *const *const *inputs,
                                      void *const *const *outputs,
                                      const loom_execute_options *options);

typedef struct loom_comm loom_comm;

/* Runs this process's rank of the engine (the communicator's rank) with its
   collectives on `comm` (loom/comm.h: in-process, or MPI under mpirun).
   On failure the communicator is aborted, so the peers fail too. */
loom_status loom_engine_execute_on(loom_engine *engine, loom_comm *comm,
                                   const void *const *inputs,
                                   void *const *outputs);

/* A session of a partitioned engine (several ranks), run like
   loom_engine_execute_ranks (every rank, in this process) or
   loom_engine_execute_on (this process's rank, with its state): the
   entries of state inputs are ignored, as for loom_session_execute. */
loom_status loom_session_execute_ranks(loom_session *session,
                                       const void *const *const *inputs,
                                       void *const *const *outputs,
                                       const loom_execute_options *options);
loom_status loom_session_execute_on(loom_session *session, loom_comm *comm,
                                    const void *const *inputs,
                                    void *const *outputs);
/* A session holding only the communicator's rank's state (one process per
   rank, e.g. under MPI: each process allocates its own share of the cache
   alone), run with loom_session_execute_on on the same communicator. */
loom_status loom_session_create_on(loom_engine *engine, loom_comm *comm,
                                   int64_t batch, loom_session **session);

#ifdef __cplusplus
}
#endif

#endif /* LOOM_RUNTIME_H */
