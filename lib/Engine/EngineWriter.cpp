//===- EngineWriter.cpp - Writing engine files ----------------------------===//

#include "loom/Engine/EngineWriter.h"

#include "loom/Engine/EngineSigning.h"

#include "loom/abi/engine_format.h"
#include "loom/abi/sha256.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <cstring>
#include <optional>
#include <unordered_map>

using namespace llvm;

namespace loom {
namespace {

/// Names go in the manifest's space-separated records percent-encoded.
std::string percentEncode(StringRef s) {
  std::string out;
  for (char c : s) {
    if (c == '%' || c == ' ' || c == '\n' || c == '\r' || c == '\t' ||
        static_cast<unsigned char>(c) < 0x20) {
      out += '%';
      out += hexdigit((c >> 4) & 0xf, /*LowerCase=*/true);
      out += hexdigit(c & 0xf, /*LowerCase=*/true);
    } else {
      out += c;
    }
  }
  return out.empty() ? "%00" : out;
}

std::string shapeString(ArrayRef<int64_t> shape) {
  if (shape.empty())
    return "scalar";
  std::string s;
  // "?": a size the caller gives (inputs: a symbolic dimension) or the
  // code computes (outputs); LOOM_DYNAMIC_DIM.
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? "x" : "") + (d < 0 ? std::string("?") : std::to_string(d));
  return s;
}

uint64_t alignUp(uint64_t v) {
  return (v + LOOM_ENGINE_ALIGNMENT - 1) / LOOM_ENGINE_ALIGNMENT *
         LOOM_ENGINE_ALIGNMENT;
}

} // namespace

void appendWeight(EngineRank &rank, ArrayRef<char> bytes) {
  constexpr uint64_t kWeightAlignment = 64;
  uint64_t offset = (rank.weights.size() + kWeightAlignment - 1) /
                    kWeightAlignment * kWeightAlignment;
  rank.weights.resize(offset, 0);
  rank.weights.insert(rank.weights.end(), bytes.begin(), bytes.end());
  rank.weightPlaces.push_back({offset, bytes.size()});
}

Error addVariant(EngineRank &rank, EngineRank &&specialized) {
  auto refines = [](const EngineTensor &general, const EngineTensor &fixed,
                    bool isInput) {
    if (general.dtype != fixed.dtype ||
        general.shape.size() != fixed.shape.size())
      return false;
    for (auto [g, f] : llvm::zip(general.shape, fixed.shape))
      if ((g >= 0 && g != f) || (isInput && f < 0))
        return false;
    return true;
  };
  if (specialized.inputs.size() != rank.inputs.size() ||
      specialized.outputs.size() != rank.outputs.size())
    return createStringError(
        "the specialized program has " +
        std::to_string(specialized.inputs.size()) + " inputs and " +
        std::to_string(specialized.outputs.size()) +
        " outputs, the general one " + std::to_string(rank.inputs.size()) +
        " and " + std::to_string(rank.outputs.size()));
  EngineVariant variant;
  for (bool isInput : {true, false}) {
    const std::vector<EngineTensor> &generals =
        isInput ? rank.inputs : rank.outputs;
    const std::vector<EngineTensor> &fixeds =
        isInput ? specialized.inputs : specialized.outputs;
    for (auto [general, fixed] : llvm::zip(generals, fixeds)) {
      if (!refines(general, fixed, isInput))
        return createStringError(
            std::string("the specialized ") + (isInput ? "input" : "output") +
            " '" + fixed.name + "' (" + fixed.dtype + " " +
            shapeString(fixed.shape) + ") does not refine the general one (" +
            general.dtype + " " + shapeString(general.shape) + ")");
      (isInput ? variant.inputShapes : variant.outputShapes)
          .push_back(fixed.shape);
    }
  }
  // Weights the general code already stores (packed the same way) are
  // shared: found by their hash, then compared byte for byte.
  std::unordered_multimap<uint64_t, EngineWeight> stored;
  auto bytesAt = [](const std::vector<char> &section, EngineWeight w) {
    return ArrayRef<char>(section.data() + w.offset, w.size);
  };
  auto hashOf = [](ArrayRef<char> bytes) {
    return xxh3_64bits(ArrayRef<uint8_t>(
        reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size()));
  };
  for (const EngineWeight &w : rank.weightPlaces)
    stored.emplace(hashOf(bytesAt(rank.weights, w)), w);
  for (const EngineWeight &w : specialized.weightPlaces) {
    ArrayRef<char> bytes = bytesAt(specialized.weights, w);
    std::optional<EngineWeight> same;
    auto [begin, end] = stored.equal_range(hashOf(bytes));
    for (auto it = begin; it != end && !same; ++it)
      if (bytesAt(rank.weights, it->second) == bytes)
        same = it->second;
    if (!same) {
      appendWeight(rank, bytes);
      same = rank.weightPlaces.back();
      rank.weightPlaces.pop_back();
      stored.emplace(hashOf(bytes), *same);
    }
    variant.weightPlaces.push_back(*same);
  }
  variant.code = std::move(specialized.code);
  variant.entry = std::move(specialized.entry);
  rank.variants.push_back(std::move(variant));
  return Error::success();
}

Expected<std::vector<char>> serializeEngine(const EngineDescription &engine) {
  int64_t devices = 1;
  for (int64_t d : engine.grid)
    devices *= d;
  if (engine.ranks.empty() || devices != (int64_t)engine.ranks.size())
    return createStringError("the grid " + shapeString(engine.grid) +
                             " does not hold the engine's " +
                             std::to_string(engine.ranks.size()) + " ranks");

  std::string manifest;
  raw_string_ostream os(manifest);
  os << "compiler " << percentEncode(engine.compilerVersion) << "\n";
  os << "target " << engine.arch << " "
     << (engine.cpuFeatures.empty() ? "-" : join(engine.cpuFeatures, ","))
     << "\n";
  os << "grid " << shapeString(engine.grid) << "\n";
  for (const std::string &library : engine.libraries)
    os << "library " << library << "\n";
  for (auto [r, rank] : llvm::enumerate(engine.ranks)) {
    os << "rank " << r << " entry " << rank.entry << "\n";
    for (const EngineTensor &t : rank.inputs)
      os << "input " << r << " " << percentEncode(t.name) << " " << t.dtype
         << " " << shapeString(t.shape) << "\n";
    for (auto [i, t] : llvm::enumerate(rank.inputs))
      if (t.stateAxis >= 0)
        os << "state " << r << " " << i << " " << t.stateAxis << "\n";
    for (auto [i, t] : llvm::enumerate(rank.inputs))
      for (const auto &[dim, min, opt, max] : t.profile)
        os << "profile " << r << " " << i << " " << dim << " " << min << " "
           << opt << " " << max << "\n";
    for (const EngineTensor &t : rank.outputs)
      os << "output " << r << " " << percentEncode(t.name) << " " << t.dtype
         << " " << shapeString(t.shape) << "\n";
    for (const EngineWeight &w : rank.weightPlaces)
      os << "weight " << r << " " << w.offset << " " << w.size << "\n";
  }
  size_t numVariants = 0;
  for (auto [r, rank] : llvm::enumerate(engine.ranks))
    for (const EngineVariant &variant : rank.variants) {
      size_t v = numVariants++;
      os << "variant " << v << " " << r << " entry " << variant.entry << "\n";
      for (auto [i, shape] : llvm::enumerate(variant.inputShapes))
        os << "variant-input " << v << " " << i << " " << shapeString(shape)
           << "\n";
      for (auto [i, shape] : llvm::enumerate(variant.outputShapes))
        os << "variant-output " << v << " " << i << " " << shapeString(shape)
           << "\n";
      for (const EngineWeight &w : variant.weightPlaces)
        os << "variant-weight " << v << " " << w.offset << " " << w.size
           << "\n";
    }

  // Layout: header, section table, manifest, then page-aligned payloads.
  struct Payload {
    uint32_t kind, rank;
    const std::vector<char> *bytes;
  };
  std::vector<Payload> payloads;
  for (auto [r, rank] : llvm::enumerate(engine.ranks)) {
    payloads.push_back({LOOM_SECTION_CODE, (uint32_t)r, &rank.code});
    if (!rank.weights.empty())
      payloads.push_back({LOOM_SECTION_WEIGHTS, (uint32_t)r, &rank.weights});
  }
  uint32_t variantNumber = 0;
  for (const EngineRank &rank : engine.ranks)
    for (const EngineVariant &variant : rank.variants)
      payloads.push_back(
          {LOOM_SECTION_VARIANT_CODE, variantNumber++, &variant.code});
  loom_engine_header header{};
  std::memcpy(header.magic, LOOM_ENGINE_MAGIC, LOOM_ENGINE_MAGIC_SIZE);
  // The lowest version that holds the engine (engine_format.h).
  header.format_version =
      numVariants ? LOOM_ENGINE_FORMAT_VERSION : LOOM_ENGINE_MIN_FORMAT_VERSION;
  header.header_size = sizeof(loom_engine_header);
  header.section_table_offset = sizeof(loom_engine_header);
  header.num_sections = payloads.size();
  header.num_ranks = engine.ranks.size();
  header.manifest_offset = header.section_table_offset +
                           payloads.size() * sizeof(loom_engine_section);
  header.manifest_size = manifest.size();

  std::vector<loom_engine_section> sections;
  uint64_t offset = alignUp(header.manifest_offset + manifest.size());
  for (const Payload &p : payloads) {
    sections.push_back({p.kind, p.rank, offset, p.bytes->size()});
    offset = alignUp(offset + p.bytes->size());
  }
  uint64_t size = sections.empty()
                      ? header.manifest_offset + manifest.size()
                      : sections.back().offset + sections.back().size;
  header.file_size = size;

  std::vector<char> file(size, 0);
  std::memcpy(file.data(), &header, sizeof(header));
  std::memcpy(file.data() + header.section_table_offset, sections.data(),
              sections.size() * sizeof(loom_engine_section));
  std::memcpy(file.data() + header.manifest_offset, manifest.data(),
              manifest.size());
  for (auto [p, s] : llvm::zip(payloads, sections))
    std::memcpy(file.data() + s.offset, p.bytes->data(), p.bytes->size());
  // The digest covers the file with the digest field zeroed (it is).
  uint8_t digest[32];
  loom_sha256(file.data(), file.size(), digest);
  std::memcpy(file.data() + LOOM_ENGINE_SHA256_OFFSET, digest, sizeof(digest));
  return file;
}

Error writeEngine(StringRef path, const EngineDescription &engine,
                  const SigningKey *key) {
  Expected<std::vector<char>> bytes = serializeEngine(engine);
  if (!bytes)
    return bytes.takeError();
  if (key)
    if (Error error = signEngine(*bytes, *key))
      return error;
  SmallString<256> model(path);
  sys::path::remove_filename(model);
  sys::path::append(model, sys::path::filename(path) + ".tmp-%%%%%%");
  int fd;
  SmallString<256> temporary;
  if (std::error_code ec = sys::fs::createUniqueFile(model, fd, temporary))
    return createStringError(ec, "cannot create a file next to '" + path +
                                     "': " + ec.message());
  {
    raw_fd_ostream out(fd, /*shouldClose=*/true);
    out.write(bytes->data(), bytes->size());
    out.close();
    if (out.has_error()) {
      std::string message = out.error().message();
      out.clear_error();
      sys::fs::remove(temporary);
      return createStringError("cannot write '" + temporary + "': " + message);
    }
  }
  if (std::error_code ec = sys::fs::rename(temporary, path)) {
    sys::fs::remove(temporary);
    return createStringError(ec, "cannot rename '" + temporary + "' to '" +
                                     path + "': " + ec.message());
  }
  return Error::success();
}

void describeHost(EngineDescription &engine) {
  Triple host(sys::getProcessTriple());
  engine.arch = host.getArchName().str();
  // The features the runtime can check (see hostHasFeature in the
  // runtime), when the host has them: code compiled for this host may use
  // them.
  static const char *const checkable[] = {
      "sse4.2",     "avx",      "avx2",       "fma",
      "f16c",       "bmi2",     "avx512f",    "avx512bw",
      "avx512dq",   "avx512vl", "avx512bf16", "avx512fp16",
      "avx512vnni", "amx-tile", "amx-bf16",   "amx-int8"};
  StringMap<bool> features = sys::getHostCPUFeatures();
  for (const char *f : checkable)
    if (features.lookup(f))
      engine.cpuFeatures.push_back(f);
}

} // namespace loom
