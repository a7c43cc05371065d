/*===- engine_format.h - The on-disk layout of a Loom engine -----*- C -*-===*
 *
 * One header shared by the compiler (lib/Engine writes engines) and the
 * runtime (which loads them), so the two cannot disagree on the layout.
 *
 * An engine file is little-endian:
 *
 *   offset 0      loom_engine_header (fixed size, see below)
 *   ...           loom_engine_section[num_sections] (the section table)
 *   ...           the manifest (UTF-8 text, one record per line)
 *   page-aligned  the sections' payloads: per-rank code (a shared object)
 *                 and per-rank weights, each starting on a 4096-byte
 *                 boundary so that it can be memory-mapped in place
 *
 * Integrity: `sha256` is the SHA-256 of the whole file computed with the
 * `sha256` field itself set to zeros. A loader checks the file size and
 * this digest before it reads anything else from the file. Authenticity:
 * optionally an Ed25519 signature of that digest after the file
 * (loom_engine_signature below).
 *
 * The manifest, one record per line, fields separated by single spaces:
 *
 *   compiler <version>
 *   target <arch> <cpu features, comma-separated, or "-">
 *   grid <d0>x<d1>...          (the device grid; "1" for one device)
 *   rank <r> entry <symbol>    (rank r's code calls `symbol(void **)`)
 *   input <r> <name> <dtype> <d0>x<d1>...   ("scalar" for rank 0)
 *   output <r> <name> <dtype> <d0>x<d1>...
 *   weight <r> <offset> <bytes>  (a weight in rank r's weights section, at
 *                                 `offset` from its start, in parameter
 *                                 order)
 *
 * Format version 3 adds specialized programs (loomc --profile's OPT
 * shapes): a program of rank r compiled for one static shape of every
 * input, run instead of the rank's general code when a call's input shapes
 * are exactly those. Variants are numbered from 0 in manifest order:
 *
 *   variant <v> <r> entry <symbol>   (variant v belongs to rank r; its code
 *                                     is section LOOM_SECTION_VARIANT_CODE
 *                                     with `rank` = v)
 *   variant-input <v> <i> <d0>x<d1>...    (input i's static shape)
 *   variant-output <v> <i> <d0>x<d1>...   (output i's shape; "?" where the
 *                                          data decides it)
 *   variant-weight <v> <offset> <bytes>   (in rank r's weights section:
 *                                          the variants share it with the
 *                                          general code, identical weights
 *                                          stored once)
 *
 * A writer stores the lowest version that holds the engine: 2 without
 * variants, so engines without them load in runtimes that read only 2.
 *
 * Rank r's code is called with one pointer per input, then one per weight
 * (into the mapped weights section), then one per output.
 * Names are percent-encoded (%20 for a space, %25 for '%'). The dtypes are
 * those of loom_dtype below, by name ("f32", "i64", ...).
 *
 *===----------------------------------------------------------------------===*/

#ifndef LOOM_ABI_ENGINE_FORMAT_H
#define LOOM_ABI_ENGINE_FORMAT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* "LOOMENGN": the first 8 bytes of every engine. */
#define LOOM_ENGINE_MAGIC "LOOMENGN"
#define LOOM_ENGINE_MAGIC_SIZE 8
/* Bumped on any incompatible change of this header or the manifest. The
   runtime reads versions LOOM_ENGINE_MIN_FORMAT_VERSION to this one. */
#define LOOM_ENGINE_FORMAT_VERSION 3u
#define LOOM_ENGINE_MIN_FORMAT_VERSION 2u
/* Payload alignment: a page, so sections can be mapped in place. */
#define LOOM_ENGINE_ALIGNMENT 4096u

typedef enum loom_engine_section_kind {
  /* A shared object holding one rank's code (the entry named in the
     manifest). */
  LOOM_SECTION_CODE = 1,
  /* One rank's weights, read-only. */
  LOOM_SECTION_WEIGHTS = 2,
  /* A shared object holding a variant's code (format version 3; the
     section's `rank` field is the variant's number). */
  LOOM_SECTION_VARIANT_CODE = 3
} loom_engine_section_kind;

typedef struct loom_engine_header {
  char magic[LOOM_ENGINE_MAGIC_SIZE];
  uint32_t format_version;
  /* sizeof(loom_engine_header), so a reader can reject a header it does
     not know. */
  uint32_t header_size;
  /* The size of the whole file: a truncated file fails before hashing. */
  uint64_t file_size;
  uint8_t sha256[32];
  uint64_t section_table_offset;
  uint32_t num_sections;
  uint32_t num_ranks;
  uint64_t manifest_offset;
  uint64_t manifest_size;
  uint8_t reserved[40];
} loom_engine_header;

typedef struct loom_engine_section {
  uint32_t kind; /* loom_engine_section_kind */
  uint32_t rank;
  uint64_t offset; /* a multiple of LOOM_ENGINE_ALIGNMENT */
  uint64_t size;
} loom_engine_section;

/* The byte offset of the digest in the file (what is zeroed to hash). */
#define LOOM_ENGINE_SHA256_OFFSET 24u

/* A signed engine (loomc --sign) is the engine as written, `file_size`
   bytes, followed by this trailer. The signature is Ed25519 (RFC 8032) over
   the header's 32-byte SHA-256 digest, which covers every byte before the
   trailer; so a verified digest and a verified signature together vouch for
   the whole engine. `key_id` is the first 8 bytes of the SHA-256 of the
   signer's public key: it names the key in messages. An unsigned engine is
   exactly as before signing existed. */
#define LOOM_ENGINE_SIGNATURE_MAGIC "LOOMSIGN"

typedef struct loom_engine_signature {
  char magic[LOOM_ENGINE_MAGIC_SIZE];
  uint8_t key_id[8];
  uint8_t signature[64];
} loom_engine_signature;

#ifdef __cplusplus
}
#endif

#endif /* LOOM_ABI_ENGINE_FORMAT_H */
