//===- EngineWriter.h - Writing engine files --------------------*- C++ -*-===//
//
// The compiler's side of runtime/include/loom/abi/engine_format.h: an
// engine described in memory, written as one file with page-aligned
// per-rank sections and a SHA-256 digest.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_ENGINE_ENGINEWRITER_H
#define LOOM_ENGINE_ENGINEWRITER_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace loom {

struct SigningKey;

/// An input or output of a rank: its name, dtype name ("f32", "i64", ...,
/// as loom_dtype_name gives them) and static shape.
struct EngineTensor {
  std::string name;
  std::string dtype;
  llvm::SmallVector<int64_t> shape;
  /// For an input the code writes in place and the caller keeps between
  /// calls (a key/value cache, `loom.state`): the axis of its positions;
  /// -1 otherwise. Manifest record `state RANK INPUT AXIS`.
  int64_t stateAxis = -1;
  /// An input's optimization profile (loomc --profile): per symbolic
  /// dimension d, {d, min, opt, max}; the runtime rejects sizes outside
  /// [min, max]. Manifest record `profile RANK INPUT DIM MIN OPT MAX`.
  llvm::SmallVector<std::array<int64_t, 4>> profile;
};

/// Where one weight lies in its rank's weights section.
struct EngineWeight {
  uint64_t offset = 0, size = 0;
};

/// A rank's program compiled for one static shape of every input (loomc
/// --profile's OPT), run instead of the rank's general code when a call's
/// input shapes are exactly `inputShapes`. Its weights lie in the rank's
/// weights section. Manifest records `variant`, `variant-input`,
/// `variant-output`, `variant-weight` (format version 3).
struct EngineVariant {
  std::vector<char> code;
  std::string entry = "loom_entry";
  std::vector<EngineWeight> weightPlaces;
  /// Per input and per output, its shape (kDynamic where the data decides
  /// an output's size).
  std::vector<llvm::SmallVector<int64_t>> inputShapes, outputShapes;
};

/// One rank's program: a shared object exporting `entry`
/// (`void entry(void **buffers)`: inputs, then weights, then outputs), its
/// signature, and its weights (the section's bytes and each weight's place
/// in it, in parameter order).
struct EngineRank {
  std::vector<char> code;
  std::string entry = "loom_entry";
  std::vector<char> weights;
  std::vector<EngineWeight> weightPlaces;
  std::vector<EngineTensor> inputs, outputs;
  std::vector<EngineVariant> variants;
};

/// Appends `bytes` to `rank`'s weights section at the next 64-byte boundary
/// (what vector loads want) and records its place.
void appendWeight(EngineRank &rank, llvm::ArrayRef<char> bytes);

/// Adds `specialized` (the same rank compiled for static input shapes) to
/// `rank` as a variant: its code, and its weights moved into `rank`'s
/// weights section, each stored once when the general code has the same
/// bytes. Fails when the signatures differ in anything but sizes the
/// general code leaves symbolic.
llvm::Error addVariant(EngineRank &rank, EngineRank &&specialized);

struct EngineDescription {
  std::string compilerVersion;
  /// "x86_64", "aarch64", ...
  std::string arch;
  /// The CPU features the code needs (LLVM names, e.g. "avx2").
  std::vector<std::string> cpuFeatures;
  /// The device grid; the product of its sizes is the number of ranks.
  llvm::SmallVector<int64_t> grid{1};
  /// Kernel libraries the code calls ("onednn"); the runtime checks that
  /// they load before it accepts the engine.
  std::vector<std::string> libraries;
  std::vector<EngineRank> ranks;
};

/// The engine as bytes (what writeEngine stores).
llvm::Expected<std::vector<char>>
serializeEngine(const EngineDescription &engine);

/// Writes the engine to `path` atomically: to a temporary file in the same
/// directory, then renamed over `path`.
/// With `key`, the engine is signed (EngineSigning.h).
llvm::Error writeEngine(llvm::StringRef path, const EngineDescription &engine,
                        const SigningKey *key = nullptr);

/// The architecture and CPU features of the machine the compiler runs on,
/// as an engine compiled for it records them.
void describeHost(EngineDescription &engine);

} // namespace loom

#endif // LOOM_ENGINE_ENGINEWRITER_H
