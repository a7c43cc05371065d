/*===- sha256.h - SHA-256 (FIPS 180-4) ---------------------------*- C -*-===*
 *
 * The digest of engine files, shared by the writer and the loader.
 *
 *===----------------------------------------------------------------------===*/

#ifndef LOOM_ABI_SHA256_H
#define LOOM_ABI_SHA256_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct loom_sha256_context {
  uint32_t state[8];
  uint64_t length; /* bytes hashed so far */
  uint8_t block[64];
  size_t used; /* bytes in `block` */
} loom_sha256_context;

void loom_sha256_init(loom_sha256_context *ctx);
void loom_sha256_update(loom_sha256_context *ctx, const void *data,
                        size_t size);
void loom_sha256_final(loom_sha256_context *ctx, uint8_t digest[32]);

/* The digest of `size` bytes at `data`. */
void loom_sha256(const void *data, size_t size, uint8_t digest[32]);

#ifdef __cplusplus
}
#endif

#endif /* LOOM_ABI_SHA256_H */
