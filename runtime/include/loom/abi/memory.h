/*===- memory.h - The allocator compiled code calls --------------*- C -*-===*
 *
 * Compiled code allocates its temporaries (one arena per function,
 * lib/Target/CPU/MemoryPlan.cpp, plus buffers whose sizes are known only
 * at run time) through these three functions, MLIR's "generic" allocation
 * entry points (finalize-memref-to-llvm's use-generic-functions), which
 * the runtime exports.
 *
 * Why not malloc: an engine runs the same code call after call, and its
 * arena is usually larger than glibc's mmap threshold, so malloc maps
 * fresh pages on every call and the kernel zero-fills them on first
 * touch: a quarter of a small transformer's time went to page faults.
 * Small blocks freed together at the end of a call let glibc trim its
 * heap, with the same cost on the next call. The runtime keeps each
 * thread's freed blocks (small ones by size class, the last few large
 * ones) and hands them back to the next allocation of a fitting size, so a
 * steady stream of calls touches the same pages; loom_memory_release
 * returns them.
 *
 *===----------------------------------------------------------------------===*/

#ifndef LOOM_ABI_MEMORY_H
#define LOOM_ABI_MEMORY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* `size` bytes, 64-byte aligned; null when memory ran out. */
void *_mlir_memref_to_llvm_alloc(size_t size);
/* `size` bytes aligned to `alignment` (a power of two). */
void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size);
/* Frees a block of either function (null is ignored). */
void _mlir_memref_to_llvm_free(void *block);

/* Frees the blocks the calling thread keeps for reuse
   (loom_engine_free calls it). */
void loom_memory_release(void);

/* Bytes the calling thread keeps for reuse (for tests and tools). */
size_t loom_memory_cached_bytes(void);

#ifdef __cplusplus
}
#endif

#endif /* LOOM_ABI_MEMORY_H */
