//===- engine_internal.h - Loading engine images from memory ----*- C++ -*-===//
//
// The loader's steps after the file is mapped (runtime/src/engine_load.cpp):
// the header, digest, signature, manifest and section table of an engine image
// held in memory. loom_engine_load maps a file and calls it; the loader's
// fuzz harness (test/Fuzz) calls it on images whose code must never run.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_ENGINE_INTERNAL_H
#define LOOM_RUNTIME_ENGINE_INTERNAL_H

#include "loom/runtime.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace loom::runtime {

/// What becomes of an image's code sections.
enum class CodeSections {
  /// Each rank's code is handed to the dynamic loader (the normal case).
  Load,
  /// Every check on the sections is made, but no code is loaded: each rank
  /// gets an entry that does nothing. For parsing untrusted images in
  /// tests, where running their code would be running the fuzzer's bytes.
  Stub,
};

/// Loads the engine image `bytes[0, size)`; `name` starts every message.
/// The image must outlive the engine (its weights are used in place), and
/// `options` may be null (the defaults).
loom_status loadEngineImage(const uint8_t *bytes, size_t size,
                            const std::string &name,
                            const loom_load_options *options,
                            CodeSections codeSections, loom_engine **engine);

} // namespace loom::runtime

#endif // LOOM_RUNTIME_ENGINE_INTERNAL_H
