//===- memory_internal.h - Buffers the runtime hands to callers -*- C++ -*-===//
//
// Outputs whose sizes are known only when the code has run are allocated
// by the runtime and released by the caller with loom_buffer_free. They
// come from the same per-thread block cache as the code's own tensors
// (memory.cpp), so that a steady stream of calls reuses their pages: a
// symbolic GPT-2's 512 KiB logits, malloc'd and freed per call, faulted
// 128 fresh zero-filled pages in each time (170 us of a 2.3 ms call).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_SRC_MEMORY_INTERNAL_H
#define LOOM_RUNTIME_SRC_MEMORY_INTERNAL_H

#include <cstddef>

namespace loom::runtime {

/// A buffer of at least `size` bytes, 64-byte aligned, for a caller to
/// own; null when there is no memory. Safe outside a call.
void *allocateOutputBuffer(size_t size);

/// allocateOutputBuffer without the calling thread's cache: a block that
/// freeOutputBuffer hands straight back to the system. For the runtime's
/// own threads outside compiled code (a rank thread allocating a variant's
/// static output), which would otherwise each register a thread-local
/// cache, and its destructor, for one buffer per call.
void *allocateUncachedOutputBuffer(size_t size);

/// Releases a buffer from either allocator (null is ignored), on any
/// thread: a cached one joins that thread's cache.
void freeOutputBuffer(void *buffer);

} // namespace loom::runtime

#endif // LOOM_RUNTIME_SRC_MEMORY_INTERNAL_H
