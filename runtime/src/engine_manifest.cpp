//===- engine_manifest.cpp - An engine's manifest -------------------------===//
//
// The manifest is the engine's text section: one record per line, each a
// keyword and space-separated fields (docs/engines.md lists them). Every
// record is checked as it is read -- its fields, its order, what it refers
// to -- so that the loader and the executor only see ranks, programs and
// variants that fit together.
//
//===----------------------------------------------------------------------===//

#include "engine_state.h"

#include "loom/device.h"

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>

#if defined(__x86_64__)
#include <cpuid.h>
#endif
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

using namespace loom::runtime;

namespace {

struct DtypeInfo {
  loom_dtype dtype;
  const char *name;
  size_t size;
};

constexpr DtypeInfo kDtypes[] = {{LOOM_DTYPE_F16, "f16", 2},
                                 {LOOM_DTYPE_BF16, "bf16", 2},
                                 {LOOM_DTYPE_F32, "f32", 4},
                                 {LOOM_DTYPE_F64, "f64", 8},
                                 {LOOM_DTYPE_BOOL, "i1", 1},
                                 {LOOM_DTYPE_I8, "i8", 1},
                                 {LOOM_DTYPE_I16, "i16", 2},
                                 {LOOM_DTYPE_I32, "i32", 4},
                                 {LOOM_DTYPE_I64, "i64", 8},
                                 {LOOM_DTYPE_U8, "ui8", 1},
                                 {LOOM_DTYPE_U16, "ui16", 2},
                                 {LOOM_DTYPE_U32, "ui32", 4},
                                 {LOOM_DTYPE_U64, "ui64", 8},
                                 {LOOM_DTYPE_F8E4M3FN, "f8E4M3FN", 1},
                                 {LOOM_DTYPE_F8E4M3FNUZ, "f8E4M3FNUZ", 1},
                                 {LOOM_DTYPE_F8E5M2, "f8E5M2", 1},
                                 {LOOM_DTYPE_F8E5M2FNUZ, "f8E5M2FNUZ", 1},
                                 {LOOM_DTYPE_F4E2M1FN, "f4E2M1FN", 1},
                                 {LOOM_DTYPE_I4, "i4", 1},
                                 {LOOM_DTYPE_U4, "ui4", 1},
                                 {LOOM_DTYPE_I2, "i2", 1},
                                 {LOOM_DTYPE_U2, "ui2", 1},
                                 {LOOM_DTYPE_F8E8M0FNU, "f8E8M0FNU", 1}};

const DtypeInfo *findDtype(const std::string &name) {
  for (const DtypeInfo &d : kDtypes)
    if (name == d.name)
      return &d;
  return nullptr;
}

std::optional<WeightPlace> parseWeightPlace(const std::string &offset,
                                            const std::string &size) {
  auto parse = [](const std::string &s, uint64_t &value) {
    char *end = nullptr;
    value = std::strtoull(s.c_str(), &end, 10);
    return !s.empty() && !*end && s[0] != '-';
  };
  WeightPlace place;
  if (!parse(offset, place.offset) || !parse(size, place.size))
    return std::nullopt;
  return place;
}

/// The architecture this runtime was built for, as the manifest names it.
const char *hostArch() {
#if defined(__x86_64__)
  return "x86_64";
#elif defined(__aarch64__)
  return "aarch64";
#else
  return "unknown";
#endif
}

#if defined(__x86_64__)
bool hostCanUseAMX(const std::string &feature) {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx))
    return false;
  // CPUID.(EAX=7, ECX=0):EDX: AMX-BF16 is bit 22, AMX-TILE 24, AMX-INT8 25.
  int bit = feature == "amx-bf16" ? 22 : feature == "amx-tile" ? 24 : 25;
  if (!(edx & (1u << bit)) || !(edx & (1u << 24)))
    return false;
#if defined(__linux__)
  constexpr long kRequestPermission = 0x1023, kTileData = 18;
  static const bool permitted =
      syscall(SYS_arch_prctl, kRequestPermission, kTileData) == 0;
  return permitted;
#else
  return false;
#endif
}
#endif

/// Whether this CPU has `feature` (LLVM's x86 feature names). Features the
/// runtime does not know are assumed present: they do not change which
/// instructions LLVM emits for the kernels Loom generates.
bool hostHasFeature(const std::string &feature) {
#if defined(__x86_64__)
  // AMX: the CPU's tiles, and Linux's permission for this process to use
  // them (asked for here, once for the process; code using tiles without
  // it dies of SIGILL).
  if (feature == "amx-tile" || feature == "amx-bf16" || feature == "amx-int8")
    return hostCanUseAMX(feature);
#define LOOM_FEATURE(name)                                                     \
  if (feature == (name))                                                       \
    return __builtin_cpu_supports(name);
  LOOM_FEATURE("sse4.2")
  LOOM_FEATURE("avx")
  LOOM_FEATURE("avx2")
  LOOM_FEATURE("fma")
  LOOM_FEATURE("f16c")
  LOOM_FEATURE("bmi2")
  LOOM_FEATURE("avx512f")
  LOOM_FEATURE("avx512bw")
  LOOM_FEATURE("avx512dq")
  LOOM_FEATURE("avx512vl")
  LOOM_FEATURE("avx512bf16")
  LOOM_FEATURE("avx512fp16")
  LOOM_FEATURE("avx512vnni")
#undef LOOM_FEATURE
#endif
  (void)feature;
  return true;
}

std::vector<std::string> split(const std::string &s, char separator) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, separator))
    parts.push_back(part);
  return parts;
}

std::string percentDecode(const std::string &s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      unsigned value = 0;
      if (std::sscanf(s.c_str() + i + 1, "%2x", &value) == 1) {
        out.push_back(static_cast<char>(value));
        i += 2;
        continue;
      }
    }
    out.push_back(s[i]);
  }
  return out;
}

/// "2x3x4" -> {2, 3, 4}; "scalar" -> {}; false when malformed.
bool parseShape(const std::string &s, std::vector<int64_t> &dims) {
  dims.clear();
  if (s == "scalar")
    return true;
  for (const std::string &d : split(s, 'x')) {
    if (d == "?") {
      dims.push_back(LOOM_DYNAMIC_DIM);
      continue;
    }
    char *end = nullptr;
    long long v = std::strtoll(d.c_str(), &end, 10);
    if (d.empty() || *end || v < 0)
      return false;
    dims.push_back(v);
  }
  return !dims.empty();
}

} // namespace

loom_status loom_engine::parseManifest(const std::string &text,
                                       bool checkTarget) {
  int lineNumber = 0;
  for (const std::string &line : split(text, '\n')) {
    ++lineNumber;
    if (line.empty())
      continue;
    std::vector<std::string> f = split(line, ' ');
    auto bad = [&](const std::string &why) {
      return fail(LOOM_ERROR_CORRUPT, "manifest line " +
                                          std::to_string(lineNumber) + " ('" +
                                          line + "'): " + why);
    };
    auto rankAt = [&](const std::string &s) -> Rank * {
      char *end = nullptr;
      long r = std::strtol(s.c_str(), &end, 10);
      if (s.empty() || *end || r < 0 || r >= (long)ranks.size())
        return nullptr;
      return &ranks[r];
    };
    if (f[0] == "compiler" && f.size() == 2) {
      compilerVersion = percentDecode(f[1]);
    } else if (f[0] == "target" && f.size() == 3) {
      target = f[1] + " " + f[2];
      if (!checkTarget)
        continue;
      if (f[1] != hostArch())
        return fail(LOOM_ERROR_TARGET, "the engine was compiled for " + f[1] +
                                           ", this machine is " + hostArch());
      if (f[2] != "-")
        for (const std::string &feature : split(f[2], ','))
          if (!hostHasFeature(feature))
            return fail(LOOM_ERROR_TARGET,
                        "the engine needs the CPU feature '" + feature +
                            "', which this machine lacks");
    } else if (f[0] == "grid" && f.size() == 2) {
      if (!parseShape(f[1], grid))
        return bad("bad grid");
      int64_t devices = 1;
      for (int64_t d : grid)
        devices *= d;
      if (devices != (int64_t)ranks.size())
        return bad("the grid holds " + std::to_string(devices) +
                   " devices but the engine has " +
                   std::to_string(ranks.size()) + " ranks");
    } else if (f[0] == "library" && f.size() == 2) {
      // Checked now, so that an engine that cannot run here fails to load
      // rather than on its first call.
      const char *version = nullptr;
      if (loom_kernel_library(f[1].c_str(), &version) != LOOM_OK)
        return fail(LOOM_ERROR_TARGET,
                    "the engine's code calls the kernel library '" + f[1] +
                        "', which cannot be used here: " + loom_last_error());
      libraries.push_back(f[1]);
    } else if (f[0] == "rank" && f.size() == 4 && f[2] == "entry") {
      Rank *r = rankAt(f[1]);
      if (!r)
        return bad("rank out of range");
      r->entryName = f[3];
    } else if ((f[0] == "input" || f[0] == "output") && f.size() == 5) {
      Rank *r = rankAt(f[1]);
      const DtypeInfo *dtype = findDtype(f[3]);
      std::vector<int64_t> dims;
      if (!r || !dtype || !parseShape(f[4], dims) ||
          dims.size() > LOOM_MAX_RANK)
        return bad("bad rank, dtype or shape");
      loom_tensor_desc desc{};
      names.push_back(std::make_unique<std::string>(percentDecode(f[2])));
      desc.name = names.back()->c_str();
      desc.dtype = dtype->dtype;
      desc.rank = static_cast<int32_t>(dims.size());
      size_t bytes = dtype->size;
      bool dynamic = false;
      for (size_t i = 0; i < dims.size(); ++i) {
        desc.dims[i] = dims[i];
        if (dims[i] == LOOM_DYNAMIC_DIM) {
          dynamic = true;
          continue;
        }
        if (dims[i] != 0 && bytes > SIZE_MAX / (size_t)dims[i])
          return bad("the tensor is too large");
        bytes *= dims[i];
      }
      desc.byte_size = dynamic ? 0 : bytes;
      (f[0] == "input" ? r->inputs : r->outputs).push_back(desc);
    } else if (f[0] == "state" && f.size() == 4) {
      Rank *r = rankAt(f[1]);
      char *end = nullptr, *axisEnd = nullptr;
      unsigned long long index = std::strtoull(f[2].c_str(), &end, 10);
      unsigned long long axis = std::strtoull(f[3].c_str(), &axisEnd, 10);
      if (!r || f[2].empty() || *end != '\0' || index >= r->inputs.size() ||
          f[3].empty() || *axisEnd != '\0' ||
          axis >= static_cast<unsigned long long>(r->inputs[index].rank))
        return bad("state names no input or axis");
      r->inputStateAxis.resize(r->inputs.size(), -1);
      r->inputStateAxis[index] = static_cast<int32_t>(axis);
    } else if (f[0] == "profile" && f.size() == 7) {
      Rank *r = rankAt(f[1]);
      long long values[5];
      for (int v = 0; v < 5; ++v) {
        char *end = nullptr;
        values[v] = std::strtoll(f[2 + v].c_str(), &end, 10);
        if (f[2 + v].empty() || *end != '\0' || values[v] < 0)
          return bad("bad profile");
      }
      long long index = values[0], dim = values[1];
      if (!r || index >= (long long)r->inputs.size() ||
          dim >= r->inputs[index].rank ||
          r->inputs[index].dims[dim] != LOOM_DYNAMIC_DIM ||
          values[2] > values[3] || values[3] > values[4])
        return bad("profile names no symbolic dimension, or min > opt > max");
      r->inputProfiles.resize(r->inputs.size());
      r->inputProfiles[index].push_back({dim, values[2], values[3], values[4]});
    } else if (f[0] == "weight" && f.size() == 4) {
      Rank *r = rankAt(f[1]);
      std::optional<WeightPlace> place = parseWeightPlace(f[2], f[3]);
      if (!r || !place)
        return bad("bad rank, offset or size");
      r->weightPlaces.push_back(*place);
    } else if (f[0] == "variant" && f.size() == 5 && f[3] == "entry") {
      Rank *r = rankAt(f[2]);
      if (!r || f[1] != std::to_string(variantPlaces.size()))
        return bad("variants must be numbered in order, of an existing rank");
      Variant variant;
      variant.program.entryName = f[4];
      variantPlaces.emplace_back(r - ranks.data(), r->variants.size());
      r->variants.push_back(std::move(variant));
    } else if ((f[0] == "variant-input" || f[0] == "variant-output") &&
               f.size() == 4) {
      Variant *variant = variantAt(f[1]);
      if (!variant)
        return bad("no such variant");
      const Rank &r = ranks[variantPlaces[std::stoul(f[1])].first];
      bool isInput = f[0] == "variant-input";
      const std::vector<loom_tensor_desc> &descs =
          isInput ? r.inputs : r.outputs;
      std::vector<std::vector<int64_t>> &shapes =
          isInput ? variant->inputShapes : variant->outputShapes;
      std::vector<int64_t> dims;
      if (f[2] != std::to_string(shapes.size()) ||
          shapes.size() >= descs.size() || !parseShape(f[3], dims))
        return bad("the variant's shapes must follow the rank's " +
                   std::string(isInput ? "inputs" : "outputs") + " in order");
      // The variant's shape refines the rank's: the same rank, the same
      // static sizes; an input's every size static.
      const loom_tensor_desc &desc = descs[shapes.size()];
      bool fits = static_cast<int32_t>(dims.size()) == desc.rank;
      for (size_t d = 0; fits && d < dims.size(); ++d)
        fits = (desc.dims[d] == LOOM_DYNAMIC_DIM || desc.dims[d] == dims[d]) &&
               (!isInput || dims[d] != LOOM_DYNAMIC_DIM);
      if (!fits)
        return bad("the shape does not refine the rank's");
      shapes.push_back(std::move(dims));
    } else if (f[0] == "variant-weight" && f.size() == 4) {
      Variant *variant = variantAt(f[1]);
      std::optional<WeightPlace> place = parseWeightPlace(f[2], f[3]);
      if (!variant || !place)
        return bad("bad variant, offset or size");
      variant->program.weightPlaces.push_back(*place);
    } else {
      return bad("unknown record");
    }
  }
  for (size_t i = 0; i < ranks.size(); ++i)
    if (ranks[i].entryName.empty())
      return fail(LOOM_ERROR_CORRUPT,
                  "the manifest names no entry for rank " + std::to_string(i));
  for (size_t v = 0; v < variantPlaces.size(); ++v) {
    const Rank &r = ranks[variantPlaces[v].first];
    const Variant &variant = r.variants[variantPlaces[v].second];
    if (variant.inputShapes.size() != r.inputs.size() ||
        variant.outputShapes.size() != r.outputs.size())
      return fail(LOOM_ERROR_CORRUPT,
                  "the manifest gives variant " + std::to_string(v) +
                      " fewer shapes than its rank has inputs and outputs");
  }
  for (Rank &r : ranks)
    for (Variant &variant : r.variants)
      for (size_t i = 0; i < r.inputs.size(); ++i) {
        loom_tensor_desc desc = r.inputs[i];
        desc.byte_size = loom_dtype_size(desc.dtype);
        for (int32_t d = 0; d < desc.rank; ++d) {
          desc.dims[d] = variant.inputShapes[i][d];
          desc.byte_size *= static_cast<size_t>(desc.dims[d]);
        }
        variant.inputDescs.push_back(desc);
      }
  return LOOM_OK;
}

Variant *loom_engine::variantAt(const std::string &number) {
  char *end = nullptr;
  unsigned long v = std::strtoul(number.c_str(), &end, 10);
  if (number.empty() || *end || number[0] == '-' || v >= variantPlaces.size())
    return nullptr;
  auto [rank, index] = variantPlaces[v];
  return &ranks[rank].variants[index];
}

extern "C" {

const char *loom_dtype_name(loom_dtype dtype) {
  for (const DtypeInfo &d : kDtypes)
    if (d.dtype == dtype)
      return d.name;
  return "?";
}

size_t loom_dtype_size(loom_dtype dtype) {
  for (const DtypeInfo &d : kDtypes)
    if (d.dtype == dtype)
      return d.size;
  return 0;
}

} // extern "C"
