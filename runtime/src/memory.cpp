//===- memory.cpp - The allocator compiled code calls ---------------------===//
//
// Every block carries a 64-byte header in front of it: where the
// underlying allocation starts and how many bytes it can hold. Freed
// blocks go back to a per-thread cache, and the next allocation on that
// thread that fits one takes it back:
// - small blocks (under kSmallestLargeBlock bytes) in size classes of
//   powers of two, one free list per class;
// - large blocks (page multiples) in one list, an allocation taking the
//   smallest that holds it without wasting more than half of it; the
//   list keeps at most kMaxCachedBlocks blocks (256: a symbolic engine
//   frees dozens per call, and a block dropped is faulted in again, page
//   by page, the next call), the oldest going first.
// What the cache keeps is what the thread just used, so a steady stream of
// calls holds no more memory than one call needs at its peak, within
// kMaxCachedBytes (small blocks within kMaxCachedSmallBytes).
//
// Small blocks are not left to malloc's bins: code with sizes known only
// at run time allocates many of them per call, and when they are freed
// together at the end of the call, glibc returns the top of its heap to
// the system (its trim threshold, 128 KiB) and the next call faults the
// same pages in again, zero-filled — two thirds of a symbolic GPT-2's
// time (275 us a call instead of 91).
//
//===----------------------------------------------------------------------===//

#include "loom/abi/memory.h"

#include "collectives_internal.h"
#include "memory_internal.h"

#include <array>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

constexpr size_t kHeaderBytes = 64;
constexpr size_t kPage = 4096;
/// Small blocks: size classes of powers of two from kSmallestClass bytes.
constexpr size_t kSmallestClass = 256;
constexpr size_t kSmallestLargeBlock = 64 * 1024;
/// 256 B to 64 KiB: a request under 64 KiB rounds up to at most 64 KiB.
constexpr size_t kNumSmallClasses = 9;
static_assert(kSmallestClass << (kNumSmallClasses - 1) == kSmallestLargeBlock,
              "the largest small class holds any request under a large "
              "block's size");
constexpr size_t kMaxCachedBlocks = 256;
constexpr size_t kMaxCachedBytes = size_t(4) << 30;
/// Of which small blocks: a block freed on another thread than the one that
/// allocated it joins the freeing thread's cache, so a steady stream of
/// such calls would grow that cache without this bound.
constexpr size_t kMaxCachedSmallBytes = size_t(64) << 20;

struct BlockHeader {
  /// The address that malloc/aligned_alloc returned.
  void *base;
  /// Usable bytes after the header; 0 for blocks that are never cached.
  size_t capacity;
};
static_assert(sizeof(BlockHeader) <= kHeaderBytes, "header too large");

BlockHeader *headerOf(void *block) {
  return reinterpret_cast<BlockHeader *>(static_cast<char *>(block) -
                                         kHeaderBytes);
}

/// The size class that holds `capacity` bytes (at most
/// kSmallestLargeBlock): the smallest power of two from kSmallestClass up.
size_t smallClassOf(size_t capacity) {
  size_t sizeClass = 0;
  while ((kSmallestClass << sizeClass) < capacity)
    ++sizeClass;
  return sizeClass;
}

struct ThreadCache {
  /// Small blocks by size class.
  std::array<std::vector<void *>, kNumSmallClasses> small;
  /// Large blocks, oldest first.
  std::vector<void *> blocks;
  /// Bytes of all kept blocks, and of the small ones.
  size_t bytes = 0, smallBytes = 0;

  void release() {
    for (std::vector<void *> &list : small) {
      for (void *block : list)
        std::free(headerOf(block)->base);
      list.clear();
    }
    for (void *block : blocks)
      std::free(headerOf(block)->base);
    blocks.clear();
    bytes = 0;
    smallBytes = 0;
  }
  ~ThreadCache() { release(); }
};

ThreadCache &threadCache() {
  thread_local ThreadCache cache;
  return cache;
}

/// A fresh block of `capacity` usable bytes aligned to `alignment`
/// (at least 64); null when there is no memory for it.
void *tryAllocateBlock(size_t alignment, size_t capacity, bool cacheable) {
  // The payload starts `offset` bytes into the allocation: room for the
  // header, and the payload keeps the allocation's alignment.
  size_t offset = alignment > kHeaderBytes ? alignment : kHeaderBytes;
  size_t total = (offset + capacity + alignment - 1) & ~(alignment - 1);
  void *base = std::aligned_alloc(alignment, total);
  if (!base)
    return nullptr;
  void *block = static_cast<char *>(base) + offset;
  *headerOf(block) = BlockHeader{base, cacheable ? capacity : 0};
  return block;
}

/// tryAllocateBlock for compiled code, which has no error path: without
/// memory, the call is abandoned (it would write through the null
/// pointer).
void *allocateBlock(size_t alignment, size_t capacity, bool cacheable) {
  if (void *block = tryAllocateBlock(alignment, capacity, cacheable))
    return block;
  loom::runtime::abandonCall("out of memory: could not allocate " +
                             std::to_string(capacity) +
                             " bytes for the code's tensors");
}

/// A cached block that holds `size` bytes, or a fresh one from `allocate`.
template <typename AllocateFn>
void *takeBlock(size_t size, AllocateFn allocate) {
  ThreadCache &cache = threadCache();
  if (size < kSmallestLargeBlock) {
    size_t sizeClass = smallClassOf(size);
    size_t capacity = kSmallestClass << sizeClass;
    std::vector<void *> &list = cache.small[sizeClass];
    if (list.empty())
      return allocate(kHeaderBytes, capacity, /*cacheable=*/true);
    void *block = list.back();
    list.pop_back();
    cache.bytes -= capacity;
    cache.smallBytes -= capacity;
    return block;
  }
  size_t capacity = (size + kPage - 1) & ~(kPage - 1);
  // The smallest kept block that holds `size` without wasting half of it.
  size_t best = cache.blocks.size();
  for (size_t i = 0; i < cache.blocks.size(); ++i) {
    size_t held = headerOf(cache.blocks[i])->capacity;
    if (held >= size && held / 2 <= capacity &&
        (best == cache.blocks.size() ||
         held < headerOf(cache.blocks[best])->capacity))
      best = i;
  }
  if (best != cache.blocks.size()) {
    void *block = cache.blocks[best];
    cache.bytes -= headerOf(block)->capacity;
    cache.blocks.erase(cache.blocks.begin() + best);
    return block;
  }
  return allocate(kHeaderBytes, capacity, /*cacheable=*/true);
}

} // namespace

extern "C" {

void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size) {
  if (alignment < kHeaderBytes)
    alignment = kHeaderBytes;
  if (alignment > kHeaderBytes)
    return allocateBlock(alignment, size, /*cacheable=*/false);
  return takeBlock(size, allocateBlock);
}

void *_mlir_memref_to_llvm_alloc(size_t size) {
  return _mlir_memref_to_llvm_aligned_alloc(kHeaderBytes, size);
}

void _mlir_memref_to_llvm_free(void *block) {
  if (!block)
    return;
  BlockHeader *header = headerOf(block);
  if (header->capacity == 0 || header->capacity > kMaxCachedBytes) {
    std::free(header->base);
    return;
  }
  ThreadCache &cache = threadCache();
  // A large block of exactly kSmallestLargeBlock bytes joins the largest
  // small class, which it fits.
  if (header->capacity <= kSmallestLargeBlock) {
    if (cache.bytes + header->capacity > kMaxCachedBytes ||
        cache.smallBytes + header->capacity > kMaxCachedSmallBytes) {
      std::free(header->base);
      return;
    }
    cache.bytes += header->capacity;
    cache.smallBytes += header->capacity;
    cache.small[smallClassOf(header->capacity)].push_back(block);
    return;
  }
  cache.blocks.push_back(block);
  cache.bytes += header->capacity;
  // The oldest blocks go first.
  while (!cache.blocks.empty() && (cache.blocks.size() > kMaxCachedBlocks ||
                                   cache.bytes > kMaxCachedBytes)) {
    void *oldest = cache.blocks.front();
    cache.bytes -= headerOf(oldest)->capacity;
    cache.blocks.erase(cache.blocks.begin());
    std::free(headerOf(oldest)->base);
  }
}

void loom_memory_release(void) { threadCache().release(); }

size_t loom_memory_cached_bytes(void) { return threadCache().bytes; }

} // extern "C"

void *loom::runtime::allocateOutputBuffer(size_t size) {
  return takeBlock(size, tryAllocateBlock);
}

void *loom::runtime::allocateUncachedOutputBuffer(size_t size) {
  return tryAllocateBlock(kHeaderBytes, size, /*cacheable=*/false);
}

void loom::runtime::freeOutputBuffer(void *buffer) {
  _mlir_memref_to_llvm_free(buffer);
}
