/*===- gpu.h - The device calls compiled CUDA code makes ---------*- C -*-===*
 *
 * The host side of code compiled by the CUDA target (lib/Target/CUDA) is
 * CPU code that allocates device buffers, copies and launches kernels
 * through these functions: the names and signatures MLIR's gpu-to-llvm
 * lowering and its `gpu.binary` translation call (its "mgpu" runtime
 * wrappers). The runtime exports them (runtime/src/drivers/cuda), on top of
 * the CUDA driver it opens at run time, so engines need no MLIR runtime
 * library and no link-time CUDA dependency.
 *
 * Semantics the code relies on:
 * - Modules are loaded by the code's constructors when the runtime loads
 *   the engine; a failure there is reported by loom_engine_load.
 * - Every copy and launch of a call goes to the calling thread's stream, in
 *   order: `stream` arguments are ignored, stream creation returns that
 *   stream and synchronization waits on it. Copies that involve host memory
 *   return when the copy is done.
 * - Device buffers come from a cache per thread (freed blocks are reused by
 *   later allocations of the same size on the same stream, hence safely).
 * - A driver error inside a call ends the call with LOOM_ERROR_INTERNAL and
 *   the driver's message.
 *
 *===----------------------------------------------------------------------===*/

#ifndef LOOM_ABI_GPU_H
#define LOOM_ABI_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

void *mgpuModuleLoad(void *data, size_t size);
void mgpuModuleUnload(void *module);
void *mgpuModuleGetFunction(void *module, const char *name);
void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t sharedMemoryBytes, void *stream,
                      void **params, void **extra, size_t paramsCount);
void *mgpuStreamCreate(void);
void mgpuStreamDestroy(void *stream);
void mgpuStreamSynchronize(void *stream);
void *mgpuMemAlloc(uint64_t bytes, void *stream, bool hostShared);
void mgpuMemFree(void *pointer, void *stream);
void mgpuMemcpy(void *dst, void *src, size_t bytes, void *stream);
void mgpuMemset32(void *dst, unsigned value, size_t count, void *stream);
void mgpuMemset16(void *dst, unsigned short value, size_t count, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* LOOM_ABI_GPU_H */
