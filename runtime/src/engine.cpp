//===- engine.cpp - Loading and running engines ---------------------------===//
//
// Load order (each step trusts only what the previous ones checked):
//   1. map the file; it must be at least a header long and start with the
//      magic, and the header's file size must be the file's;
//   2. the SHA-256 of the file (digest field zeroed) must match the digest;
//   3. the format version and header size must be this runtime's;
//   4. the section table and manifest must lie inside the file;
//   5. the manifest is parsed, its target checked against this machine;
//   6. each rank's code is handed to the dynamic loader from memory (a
//      memfd), so no file is written and no linker is needed at run time.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime.h"

#include "loom/abi/engine_format.h"
#include "loom/abi/memory.h"
#include "loom/abi/sha256.h"

#include "collectives_internal.h"
#include "drivers/cuda/cuda_driver.h"
#include "engine_internal.h"
#include "loom/comm.h"
#include "loom/device.h"
#include "profile_internal.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <csetjmp>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <condition_variable>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

static_assert(offsetof(loom_engine_header, sha256) == LOOM_ENGINE_SHA256_OFFSET,
              "the digest offset is part of the format");
static_assert(sizeof(loom_engine_header) == 128, "the header is 128 bytes");
static_assert(sizeof(loom_engine_section) == 24, "a section is 24 bytes");

namespace {

loom_status fail(loom_status status, const std::string &message) {
  return loom::runtime::setError(status, message);
}

struct DtypeInfo {
  loom_dtype dtype;
  const char *name;
  size_t size;
};

constexpr DtypeInfo kDtypes[] = {
    {LOOM_DTYPE_F16, "f16", 2},  {LOOM_DTYPE_BF16, "bf16", 2},
    {LOOM_DTYPE_F32, "f32", 4},  {LOOM_DTYPE_F64, "f64", 8},
    {LOOM_DTYPE_BOOL, "i1", 1},  {LOOM_DTYPE_I8, "i8", 1},
    {LOOM_DTYPE_I16, "i16", 2},  {LOOM_DTYPE_I32, "i32", 4},
    {LOOM_DTYPE_I64, "i64", 8},  {LOOM_DTYPE_U8, "ui8", 1},
    {LOOM_DTYPE_U16, "ui16", 2}, {LOOM_DTYPE_U32, "ui32", 4},
    {LOOM_DTYPE_U64, "ui64", 8}};

const DtypeInfo *findDtype(const std::string &name) {
  for (const DtypeInfo &d : kDtypes)
    if (name == d.name)
      return &d;
  return nullptr;
}

using EntryFn = void (*)(void **);

/// A weight's place in its rank's weights section (from the manifest).
struct WeightPlace {
  uint64_t offset = 0, size = 0;
};

/// One compiled program: a shared object's entry and the weights it reads.
struct Program {
  std::vector<WeightPlace> weightPlaces;
  /// Pointers into the mapped weights section, in parameter order (CUDA
  /// engines: their copies in device memory, made at load).
  std::vector<void *> weights;
  /// The device copies of `weights`, freed with the engine.
  std::vector<void *> deviceWeights;
  std::string entryName;
  EntryFn entry = nullptr;
  /// The OpenMP runtime's omp_set_num_threads, when the code has parallel
  /// loops (its library then depends on libomp).
  void (*setNumThreads)(int) = nullptr;
  /// Its omp_in_parallel: whether a failed allocation is inside a parallel
  /// loop, which the code cannot be left from (abandonCall).
  int (*inParallel)() = nullptr;
  void *library = nullptr;
  /// The memfd holding the code, open while the library is loaded: the
  /// dynamic loader knows a library by its path, and a closed descriptor's
  /// number (hence "/proc/self/fd/N") would be reused for the next rank,
  /// which would then get this rank's library back.
  int codeFd = -1;
  /// What code compiled with kernel timers reported (profile.cpp); each
  /// program numbers its own kernels.
  std::unique_ptr<loom::runtime::KernelTable> kernelTimes =
      std::make_unique<loom::runtime::KernelTable>();
};

/// A rank's program compiled for one static shape of every input (manifest
/// `variant`, loomc --profile's OPT): a call with exactly these input shapes
/// runs it instead of the general code.
struct Variant {
  Program program;
  /// Per input, its shape; per output, its shape (LOOM_DYNAMIC_DIM where
  /// the data decides it).
  std::vector<std::vector<int64_t>> inputShapes, outputShapes;
  /// The inputs' descriptors with these shapes (loom_engine_variant_input).
  std::vector<loom_tensor_desc> inputDescs;
};

/// A rank: its general program (any shape in its profiles) and signature.
struct Rank : Program {
  std::vector<loom_tensor_desc> inputs, outputs;
  /// Per input: the axis of a state input (written in place and kept by the
  /// caller, manifest `state`), -1 for the others.
  std::vector<int32_t> inputStateAxis;
  /// Per input: the optimization profile's range of each symbolic
  /// dimension (manifest `profile`), {dim, min, opt, max}.
  std::vector<std::vector<std::array<int64_t, 4>>> inputProfiles;
  bool hasWeightsSection = false;
  std::vector<Variant> variants;
  /// Which program the most recent call ran; atomics, behind a pointer so
  /// that ranks stay movable.
  struct LastCall {
    /// Its kernel times (what loom_engine_kernel_times reports): the
    /// general code's or a variant's.
    std::atomic<loom::runtime::KernelTable *> kernelTimes{nullptr};
    /// The variant, -1 for the general code.
    std::atomic<int32_t> variant{-1};
  };
  std::unique_ptr<LastCall> last = std::make_unique<LastCall>();
  /// The collectives of the rank's most recent call. Each call counts its
  /// own and publishes them here as it ends, under the lock, so that calls
  /// from several threads at once do not race (the last one to end wins).
  struct CollectiveRecord {
    std::mutex mutex;
    loom::runtime::CollectiveCounters last;
  };
  std::unique_ptr<CollectiveRecord> collectives =
      std::make_unique<CollectiveRecord>();

  loom::runtime::KernelTable &reportedKernelTimes() const {
    loom::runtime::KernelTable *times = last->kernelTimes.load();
    return times ? *times : *kernelTimes;
  }
};

/// A weight record's offset and size (unsigned decimal), or nullopt.
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

/// Whether this CPU has `feature` (LLVM's x86 feature names). Features the
/// runtime does not know are assumed present: they do not change which
/// instructions LLVM emits for the kernels Loom generates.
bool hostHasFeature(const std::string &feature) {
#if defined(__x86_64__)
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

namespace {
class RankPool;
} // namespace

struct loom_engine {
  void *mapping = nullptr;
  size_t mappedSize = 0;
  std::string compilerVersion, target;
  std::vector<int64_t> grid;
  /// Kernel libraries the code calls (manifest `library` records).
  std::vector<std::string> libraries;
  std::vector<Rank> ranks;
  /// Variant v (manifest numbering) is ranks[first].variants[second].
  std::vector<std::pair<size_t, size_t>> variantPlaces;
  /// loom_load_options::threads.
  int32_t threads = 1;
  // Names are kept here so that the descriptors' pointers stay valid.
  std::vector<std::unique_ptr<std::string>> names;
  /// The rank threads of loom_engine_execute_ranks, kept between calls
  /// (created on the first); `poolMutex` lets one call use them at a time.
  std::unique_ptr<RankPool> pool;
  std::mutex poolMutex;
  /// loom_engine_collect_kernel_times.
  std::atomic<bool> collectKernelTimes{false};
  /// How code sections become entries (loom::runtime::CodeSections).
  loom::runtime::CodeSections codeSections = loom::runtime::CodeSections::Load;

  ~loom_engine();

  loom_status parseManifest(const std::string &text, bool checkTarget);
  /// Loads `section`'s shared object as `program`'s code; `what` names the
  /// program in messages ("rank 0", "variant 1 (rank 0)").
  loom_status loadCode(const uint8_t *image, const loom_engine_section &section,
                       Program &program, const std::string &what);
  Variant *variantAt(const std::string &number);
  /// The code runs on a CUDA device (manifest `library cuda`): its weights
  /// live in device memory.
  bool usesCuda() const {
    return std::find(libraries.begin(), libraries.end(), "cuda") !=
           libraries.end();
  }
};

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

/// The engine's code resolves the runtime's entry points (the allocator, the
/// collectives, the kernel library calls) in the process's global scope. A
/// host that loads the runtime with RTLD_LOCAL -- a Python extension module,
/// or any plugin loaded with dlopen -- leaves them out of it, so the runtime
/// promotes itself to global scope once, before the first engine's code
/// loads.
/// The signature after an engine of `contentSize` bytes in a file of
/// `size` bytes, or nullopt when there is none.
static std::optional<loom_engine_signature>
signatureTrailer(const uint8_t *bytes, size_t size, uint64_t contentSize) {
  if (contentSize > size || size - contentSize != sizeof(loom_engine_signature))
    return std::nullopt;
  loom_engine_signature trailer;
  std::memcpy(&trailer, bytes + contentSize, sizeof(trailer));
  if (std::memcmp(trailer.magic, LOOM_ENGINE_SIGNATURE_MAGIC,
                  LOOM_ENGINE_MAGIC_SIZE))
    return std::nullopt;
  return trailer;
}

static std::string hexBytes(const uint8_t *bytes, size_t count) {
  static const char digits[] = "0123456789abcdef";
  std::string text;
  for (size_t i = 0; i < count; ++i) {
    text += digits[bytes[i] >> 4];
    text += digits[bytes[i] & 15];
  }
  return text;
}

/// libsodium's Ed25519 verification, loaded on first use: the runtime needs
/// it only to check signatures, and keeps no link-time dependency (a
/// deployment host copies libloom_runtime.so alone; docs/engines.md).
struct Sodium {
  int (*verify)(const unsigned char *signature, const unsigned char *message,
                unsigned long long length,
                const unsigned char *publicKey) = nullptr;
  std::string error;
};

static const Sodium &sodium() {
  static const Sodium loaded = [] {
    Sodium s;
    void *library = nullptr;
    for (const char *name : {"libsodium.so.23", "libsodium.so"})
      if ((library = dlopen(name, RTLD_NOW | RTLD_LOCAL)))
        break;
    if (!library) {
      s.error = "checking signatures needs libsodium (libsodium.so.23, "
                "Debian's libsodium23), which could not be loaded";
      return s;
    }
    auto init = reinterpret_cast<int (*)()>(dlsym(library, "sodium_init"));
    s.verify = reinterpret_cast<decltype(s.verify)>(
        dlsym(library, "crypto_sign_verify_detached"));
    if (!init || !s.verify || init() < 0) {
      s.verify = nullptr;
      s.error = "libsodium was loaded but could not be initialized";
    }
    return s;
  }();
  return loaded;
}

/// Why `signature` does not vouch for an engine whose (verified) digest is
/// `digest` under `trustedKey`; "" when it does.
static std::string
checkSignature(const std::optional<loom_engine_signature> &signature,
               const uint8_t digest[32], const uint8_t *trustedKey) {
  uint8_t keyHash[32];
  loom_sha256(trustedKey, 32, keyHash);
  std::string trusted = "the trusted key " + hexBytes(keyHash, 8);
  if (!signature)
    return "the engine is not signed, and a signature by " + trusted +
           " is required (loomc --sign)";
  const Sodium &library = sodium();
  if (!library.verify)
    return library.error;
  if (library.verify(signature->signature, digest, 32, trustedKey) != 0) {
    std::string signer = hexBytes(signature->key_id, 8);
    return std::memcmp(signature->key_id, keyHash, 8) == 0
               ? "the signature does not verify with " + trusted +
                     ": the engine was changed after it was signed"
               : "the engine is signed by key " + signer + ", not by " +
                     trusted;
  }
  return "";
}

static void exposeRuntimeSymbols() {
  static std::once_flag once;
  std::call_once(once, [] {
    Dl_info info;
    if (dladdr(reinterpret_cast<void *>(&loom_engine_load), &info) &&
        info.dli_fname)
      // Keeps a reference for the process's life: the runtime stays loaded
      // as long as any engine's code may call it.
      dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
  });
}

/// The entry of a code section parsed with CodeSections::Stub.
static void stubEntry(void **) {}

loom_status loom_engine::loadCode(const uint8_t *image,
                                  const loom_engine_section &section,
                                  Program &program, const std::string &what) {
  if (program.library || program.entry)
    return fail(LOOM_ERROR_CORRUPT, "two code sections for " + what);
  if (codeSections == loom::runtime::CodeSections::Stub) {
    program.entry = stubEntry;
    return LOOM_OK;
  }
  exposeRuntimeSymbols();
  const char *bytes = reinterpret_cast<const char *>(image) + section.offset;
  std::string label = "loom-" + what;
  std::replace(label.begin(), label.end(), ' ', '-');
  int fd = memfd_create(label.c_str(), MFD_CLOEXEC);
  if (fd < 0)
    return fail(LOOM_ERROR_IO, std::string("memfd_create: ") + strerror(errno));
  size_t written = 0;
  while (written < section.size) {
    ssize_t n = write(fd, bytes + written, section.size - written);
    if (n <= 0) {
      close(fd);
      return fail(LOOM_ERROR_IO,
                  std::string("writing code: ") + strerror(errno));
    }
    written += n;
  }
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  program.codeFd = fd;
  program.library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!program.library)
    return fail(LOOM_ERROR_CORRUPT,
                what + "'s code does not load: " + dlerror());
  // CUDA code loads its kernels in its constructors, which have nobody to
  // report to: the device layer keeps the first failure.
  if (usesCuda())
    if (std::string error = loom::runtime::cuda::takeModuleLoadError();
        !error.empty())
      return fail(LOOM_ERROR_TARGET, what + ": " + error);
  program.entry = reinterpret_cast<EntryFn>(
      dlsym(program.library, program.entryName.c_str()));
  if (!program.entry)
    return fail(LOOM_ERROR_CORRUPT,
                what + "'s code has no symbol '" + program.entryName + "'");
  // Found only through the library's own dependencies (RTLD_LOCAL): code
  // without parallel loops does not load the OpenMP runtime.
  program.setNumThreads = reinterpret_cast<void (*)(int)>(
      dlsym(program.library, "omp_set_num_threads"));
  program.inParallel =
      reinterpret_cast<int (*)()>(dlsym(program.library, "omp_in_parallel"));
  return LOOM_OK;
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

void loom_load_options_init(loom_load_options *options) {
  options->verify_digest = 1;
  options->check_target = 1;
  options->threads = 1;
  options->trusted_public_key = nullptr;
}

loom_status loom_engine_load(const char *path, const loom_load_options *options,
                             loom_engine **engine) {
  if (!path || !engine)
    return fail(LOOM_ERROR_INVALID_ARGUMENT, "null path or engine pointer");
  *engine = nullptr;
  // Bad options are the caller's mistake whatever the file holds.
  if (options && options->threads < 1)
    return fail(LOOM_ERROR_INVALID_ARGUMENT,
                "threads must be at least 1, got " +
                    std::to_string(options->threads));
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return fail(LOOM_ERROR_IO,
                std::string(path) + ": cannot open: " + strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    close(fd);
    return fail(LOOM_ERROR_IO, std::string(path) + ": " + strerror(errno));
  }
  size_t size = static_cast<size_t>(st.st_size);
  if (size < sizeof(loom_engine_header)) {
    close(fd);
    return fail(LOOM_ERROR_CORRUPT,
                std::string(path) +
                    ": not a Loom engine: " + std::to_string(size) +
                    " bytes, shorter than the header (truncated?)");
  }
  void *mapping = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (mapping == MAP_FAILED)
    return fail(LOOM_ERROR_IO,
                std::string(path) + ": cannot map: " + strerror(errno));
  loom_status status = loom::runtime::loadEngineImage(
      static_cast<const uint8_t *>(mapping), size, path, options,
      loom::runtime::CodeSections::Load, engine);
  if (status != LOOM_OK) {
    munmap(mapping, size);
    return status;
  }
  // The weights stay in the read-only mapping, which the engine now owns.
  (*engine)->mapping = mapping;
  (*engine)->mappedSize = size;
  return LOOM_OK;
}

} // extern "C"

loom_status loom::runtime::loadEngineImage(const uint8_t *bytes, size_t size,
                                           const std::string &name,
                                           const loom_load_options *options,
                                           CodeSections codeSections,
                                           loom_engine **engine) {
  if (!bytes || !engine)
    return fail(LOOM_ERROR_INVALID_ARGUMENT, "null image or engine pointer");
  *engine = nullptr;
  loom_load_options defaults;
  loom_load_options_init(&defaults);
  if (!options)
    options = &defaults;
  if (options->threads < 1)
    return fail(LOOM_ERROR_INVALID_ARGUMENT,
                "threads must be at least 1, got " +
                    std::to_string(options->threads));

  std::string where = name + ": ";
  if (size < sizeof(loom_engine_header))
    return fail(LOOM_ERROR_CORRUPT,
                where + "not a Loom engine: " + std::to_string(size) +
                    " bytes, shorter than the header (truncated?)");
  auto result = std::make_unique<loom_engine>();
  result->threads = options->threads;
  result->codeSections = codeSections;
  loom_engine_header header;
  std::memcpy(&header, bytes, sizeof(header));

  if (std::memcmp(header.magic, LOOM_ENGINE_MAGIC, LOOM_ENGINE_MAGIC_SIZE))
    return fail(LOOM_ERROR_CORRUPT, where + "not a Loom engine (bad magic)");
  // A signed engine carries its signature after the bytes the header
  // counts; everything below reads only those.
  std::optional<loom_engine_signature> signature =
      signatureTrailer(bytes, size, header.file_size);
  if (signature)
    size = header.file_size;
  if (header.file_size != size)
    return fail(LOOM_ERROR_CORRUPT,
                where + "truncated or extended: the header says " +
                    std::to_string(header.file_size) + " bytes, the file has " +
                    std::to_string(size));
  if (options->verify_digest || options->trusted_public_key) {
    static const uint8_t zeros[32] = {0};
    loom_sha256_context ctx;
    loom_sha256_init(&ctx);
    loom_sha256_update(&ctx, bytes, LOOM_ENGINE_SHA256_OFFSET);
    loom_sha256_update(&ctx, zeros, sizeof(zeros));
    loom_sha256_update(&ctx, bytes + LOOM_ENGINE_SHA256_OFFSET + 32,
                       size - LOOM_ENGINE_SHA256_OFFSET - 32);
    uint8_t digest[32];
    loom_sha256_final(&ctx, digest);
    if (std::memcmp(digest, header.sha256, sizeof(digest)))
      return fail(LOOM_ERROR_CORRUPT,
                  where + "SHA-256 mismatch: the file is corrupted");
  }
  if (options->trusted_public_key)
    if (std::string problem = checkSignature(signature, header.sha256,
                                             options->trusted_public_key);
        !problem.empty())
      return fail(LOOM_ERROR_SIGNATURE, where + problem);
  if (header.format_version < LOOM_ENGINE_MIN_FORMAT_VERSION ||
      header.format_version > LOOM_ENGINE_FORMAT_VERSION ||
      header.header_size != sizeof(loom_engine_header))
    return fail(LOOM_ERROR_VERSION,
                where + "engine format version " +
                    std::to_string(header.format_version) +
                    ", this runtime reads versions " +
                    std::to_string(LOOM_ENGINE_MIN_FORMAT_VERSION) + " to " +
                    std::to_string(LOOM_ENGINE_FORMAT_VERSION) +
                    ": recompile the model");

  auto inside = [&](uint64_t offset, uint64_t length) {
    return offset <= size && length <= size - offset;
  };
  // At most a code and a weights section per rank, and a code section per
  // variant (counted once the manifest is read).
  constexpr uint32_t kMaxVariants = 65536;
  if (header.num_ranks == 0 || header.num_ranks > 65536 ||
      header.num_sections > 2 * header.num_ranks + kMaxVariants ||
      !inside(header.section_table_offset,
              uint64_t(header.num_sections) * sizeof(loom_engine_section)) ||
      !inside(header.manifest_offset, header.manifest_size))
    return fail(LOOM_ERROR_CORRUPT,
                where + "the section table or manifest lies outside the file");
  result->ranks.resize(header.num_ranks);
  std::string manifest(
      reinterpret_cast<const char *>(bytes + header.manifest_offset),
      header.manifest_size);
  if (loom_status s = result->parseManifest(manifest, options->check_target))
    return fail(s, where + loom_last_error());
  size_t numVariants = result->variantPlaces.size();
  if (numVariants && header.format_version < 3)
    return fail(LOOM_ERROR_CORRUPT,
                where + "the manifest has variants, which format version " +
                    std::to_string(header.format_version) + " does not");
  if (header.num_sections > 2 * header.num_ranks + numVariants)
    return fail(LOOM_ERROR_CORRUPT,
                where + "more sections than ranks and variants need");

  for (uint32_t i = 0; i < header.num_sections; ++i) {
    loom_engine_section section;
    std::memcpy(&section,
                bytes + header.section_table_offset + i * sizeof(section),
                sizeof(section));
    uint64_t owners = section.kind == LOOM_SECTION_VARIANT_CODE
                          ? numVariants
                          : header.num_ranks;
    if (section.rank >= owners || section.offset % LOOM_ENGINE_ALIGNMENT != 0 ||
        !inside(section.offset, section.size))
      return fail(LOOM_ERROR_CORRUPT,
                  where + "section " + std::to_string(i) + " is malformed");
    if (section.kind == LOOM_SECTION_CODE) {
      if (loom_status s =
              result->loadCode(bytes, section, result->ranks[section.rank],
                               "rank " + std::to_string(section.rank)))
        return fail(s, where + loom_last_error());
    } else if (section.kind == LOOM_SECTION_VARIANT_CODE) {
      auto [rank, index] = result->variantPlaces[section.rank];
      if (loom_status s = result->loadCode(
              bytes, section, result->ranks[rank].variants[index].program,
              "variant " + std::to_string(section.rank) + " (rank " +
                  std::to_string(rank) + ")"))
        return fail(s, where + loom_last_error());
    } else if (section.kind == LOOM_SECTION_WEIGHTS) {
      // Used in place: the weights stay in the read-only mapping; the
      // rank's variants point into the same section.
      Rank &rank = result->ranks[section.rank];
      if (rank.hasWeightsSection)
        return fail(LOOM_ERROR_CORRUPT, where +
                                            "two weights sections for rank " +
                                            std::to_string(section.rank));
      rank.hasWeightsSection = true;
      auto place = [&](Program &program) {
        for (const WeightPlace &place : program.weightPlaces) {
          if (place.offset > section.size ||
              place.size > section.size - place.offset)
            return false;
          program.weights.push_back(
              const_cast<uint8_t *>(bytes + section.offset + place.offset));
        }
        return true;
      };
      bool inSection = place(rank);
      for (Variant &variant : rank.variants)
        inSection = inSection && place(variant.program);
      if (!inSection)
        return fail(LOOM_ERROR_CORRUPT,
                    where + "a weight of rank " + std::to_string(section.rank) +
                        " lies outside its weights section");
    } else {
      return fail(LOOM_ERROR_CORRUPT, where + "section " + std::to_string(i) +
                                          " has unknown kind " +
                                          std::to_string(section.kind));
    }
  }
  for (size_t r = 0; r < result->ranks.size(); ++r) {
    const Rank &rank = result->ranks[r];
    if (!rank.entry)
      return fail(LOOM_ERROR_CORRUPT,
                  where + "no code for rank " + std::to_string(r));
    bool weighed = rank.weights.size() == rank.weightPlaces.size();
    for (const Variant &variant : rank.variants) {
      if (!variant.program.entry)
        return fail(LOOM_ERROR_CORRUPT, where +
                                            "no code for a variant of rank " +
                                            std::to_string(r));
      weighed = weighed && variant.program.weights.size() ==
                               variant.program.weightPlaces.size();
    }
    if (!weighed)
      return fail(LOOM_ERROR_CORRUPT,
                  where + "the manifest lists weights of rank " +
                      std::to_string(r) +
                      " but the file has no weights "
                      "section for it");
  }
  // CUDA engines: the weights are uploaded once, here; the code receives
  // their device addresses.
  if (result->usesCuda() && !result->variantPlaces.empty())
    return fail(LOOM_ERROR_CORRUPT,
                where + "a CUDA engine with specialized variants (loomc "
                        "specializes CPU engines only)");
  if (result->usesCuda())
    for (size_t r = 0; r < result->ranks.size(); ++r) {
      Rank &rank = result->ranks[r];
      for (size_t w = 0; w < rank.weights.size(); ++w) {
        std::string error;
        void *device = loom::runtime::cuda::uploadToDevice(
            rank.weights[w], rank.weightPlaces[w].size, error);
        if (!device)
          return fail(LOOM_ERROR_NO_DEVICE,
                      where + "rank " + std::to_string(r) + ": " + error);
        rank.deviceWeights.push_back(device);
        rank.weights[w] = device;
      }
    }
  *engine = result.release();
  return LOOM_OK;
}

extern "C" {

void loom_engine_free(loom_engine *engine) {
  delete engine;
  // The blocks this thread kept for the engine's next call.
  loom_memory_release();
}

const char *loom_engine_compiler_version(const loom_engine *engine) {
  return engine->compilerVersion.c_str();
}

const char *loom_engine_target(const loom_engine *engine) {
  return engine->target.c_str();
}

int32_t loom_engine_num_ranks(const loom_engine *engine) {
  return static_cast<int32_t>(engine->ranks.size());
}

void loom_engine_grid(const loom_engine *engine, int32_t *rank,
                      int64_t dims[LOOM_MAX_RANK]) {
  *rank = static_cast<int32_t>(engine->grid.size());
  for (size_t i = 0; i < engine->grid.size() && i < LOOM_MAX_RANK; ++i)
    dims[i] = engine->grid[i];
}

static const Rank *rankOf(const loom_engine *engine, int32_t rank) {
  if (!engine || rank < 0 || rank >= (int32_t)engine->ranks.size())
    return nullptr;
  return &engine->ranks[rank];
}

void loom_engine_collect_kernel_times(loom_engine *engine, int32_t enable) {
  if (!engine)
    return;
  if (enable)
    for (Rank &r : engine->ranks) {
      r.kernelTimes->clear();
      for (Variant &variant : r.variants)
        variant.program.kernelTimes->clear();
    }
  engine->collectKernelTimes = enable != 0;
}

loom_status loom_engine_kernel_times(const loom_engine *engine, int32_t rank,
                                     loom_kernel_time *times, size_t capacity,
                                     size_t *count) {
  const Rank *r = rankOf(engine, rank);
  if (!r || !count || (capacity && !times))
    return fail(LOOM_ERROR_INVALID_ARGUMENT,
                "null engine, times or count, or a bad rank");
  loom::runtime::KernelTable &table = r->reportedKernelTimes();
  std::lock_guard<std::mutex> lock(table.mutex);
  const std::vector<loom_kernel_time> &kernels = table.kernels;
  *count = kernels.size();
  std::copy_n(kernels.begin(), std::min(capacity, kernels.size()), times);
  return LOOM_OK;
}

loom_status loom_engine_kernel_events(const loom_engine *engine, int32_t rank,
                                      loom_kernel_event *events,
                                      size_t capacity, size_t *count) {
  const Rank *r = rankOf(engine, rank);
  if (!r || !count || (capacity && !events))
    return fail(LOOM_ERROR_INVALID_ARGUMENT,
                "null engine, events or count, or a bad rank");
  loom::runtime::KernelTable &table = r->reportedKernelTimes();
  std::lock_guard<std::mutex> lock(table.mutex);
  const std::vector<loom_kernel_event> &recent = table.events;
  *count = recent.size();
  std::copy_n(recent.begin(), std::min(capacity, recent.size()), events);
  return LOOM_OK;
}

const char *loom_collective_kind_name(loom_collective_kind kind) {
  switch (kind) {
  case LOOM_COLLECTIVE_ALL_REDUCE:
    return "all_reduce";
  case LOOM_COLLECTIVE_ALL_GATHER:
    return "all_gather";
  case LOOM_COLLECTIVE_ALL_TO_ALL:
    return "all_to_all";
  case LOOM_COLLECTIVE_BROADCAST:
    return "broadcast";
  case LOOM_COLLECTIVE_SEND:
    return "send";
  case LOOM_COLLECTIVE_RECV:
    return "recv";
  default:
    return "unknown";
  }
}

loom_status loom_engine_collective_stats(const loom_engine *engine,
                                         int32_t rank,
                                         loom_collective_stats *stats) {
  const Rank *r = rankOf(engine, rank);
  if (!r || !stats)
    return fail(LOOM_ERROR_INVALID_ARGUMENT,
                "null engine or stats, or a bad rank");
  std::lock_guard<std::mutex> lock(r->collectives->mutex);
  std::copy_n(r->collectives->last.kinds, LOOM_COLLECTIVE_KINDS, stats);
  return LOOM_OK;
}

int32_t loom_engine_num_inputs(const loom_engine *engine, int32_t rank) {
  const Rank *r = rankOf(engine, rank);
  return r ? static_cast<int32_t>(r->inputs.size()) : -1;
}

int32_t loom_engine_num_outputs(const loom_engine *engine, int32_t rank) {
  const Rank *r = rankOf(engine, rank);
  return r ? static_cast<int32_t>(r->outputs.size()) : -1;
}

const loom_tensor_desc *loom_engine_input(const loom_engine *engine,
                                          int32_t rank, int32_t index) {
  const Rank *r = rankOf(engine, rank);
  if (!r || index < 0 || index >= (int32_t)r->inputs.size())
    return nullptr;
  return &r->inputs[index];
}

int32_t loom_engine_input_state_axis(const loom_engine *engine, int32_t rank,
                                     int32_t index) {
  const Rank *r = rankOf(engine, rank);
  if (!r || index < 0 || index >= (int32_t)r->inputs.size() ||
      index >= (int32_t)r->inputStateAxis.size())
    return -1;
  return r->inputStateAxis[index];
}

int32_t loom_engine_num_variants(const loom_engine *engine, int32_t rank) {
  const Rank *r = rankOf(engine, rank);
  return r ? static_cast<int32_t>(r->variants.size()) : -1;
}

const loom_tensor_desc *loom_engine_variant_input(const loom_engine *engine,
                                                  int32_t rank, int32_t variant,
                                                  int32_t index) {
  const Rank *r = rankOf(engine, rank);
  if (!r || variant < 0 || variant >= (int32_t)r->variants.size() ||
      index < 0 || index >= (int32_t)r->inputs.size())
    return nullptr;
  return &r->variants[variant].inputDescs[index];
}

int32_t loom_engine_last_variant(const loom_engine *engine, int32_t rank) {
  const Rank *r = rankOf(engine, rank);
  return r ? r->last->variant.load() : -1;
}

const loom_tensor_desc *loom_engine_output(const loom_engine *engine,
                                           int32_t rank, int32_t index) {
  const Rank *r = rankOf(engine, rank);
  if (!r || index < 0 || index >= (int32_t)r->outputs.size())
    return nullptr;
  return &r->outputs[index];
}

} // extern "C"

/// Why `shaped` cannot be the input `desc` describes ("" when it can):
/// its rank and static dimensions must be the descriptor's, its symbolic
/// ones in [0, 2^31).
static std::string checkInputShape(const loom_tensor_desc &desc,
                                   const loom_shaped_input &shaped) {
  auto shapeString = [](const int64_t *dims, int32_t rank) {
    std::string s = "[";
    for (int32_t d = 0; d < rank; ++d)
      s += (d ? "," : "") + (dims[d] == LOOM_DYNAMIC_DIM
                                 ? std::string("?")
                                 : std::to_string(dims[d]));
    return s + "]";
  };
  if (shaped.rank != desc.rank || shaped.rank < 0 ||
      shaped.rank > LOOM_MAX_RANK)
    return "the engine takes rank " + std::to_string(desc.rank) + " " +
           shapeString(desc.dims, desc.rank) + ", given rank " +
           std::to_string(shaped.rank);
  constexpr int64_t kMaxSize = (int64_t(1) << 31) - 1;
  for (int32_t d = 0; d < desc.rank; ++d) {
    int64_t size = shaped.dims[d];
    if (desc.dims[d] != LOOM_DYNAMIC_DIM && size != desc.dims[d])
      return "dimension " + std::to_string(d) + " is " + std::to_string(size) +
             " but the engine takes " + shapeString(desc.dims, desc.rank);
    if (size < 0 || size > kMaxSize)
      return "dimension " + std::to_string(d) + " has size " +
             std::to_string(size) + " (0 to 2^31 - 1 allowed)";
  }
  if (!shaped.data) {
    for (int32_t d = 0; d < desc.rank; ++d)
      if (shaped.dims[d] == 0)
        return "";
    return "its data is null";
  }
  return "";
}

/// Runs rank `rank`'s code with `comm` (null: no collectives) installed
/// for its collectives.
/// The variant of `r` compiled for exactly `shapes` (one per input), or
/// null: then the general code runs.
static const Variant *
findVariant(const Rank &r, const std::vector<std::vector<int64_t>> &shapes) {
  for (const Variant &variant : r.variants)
    if (variant.inputShapes == shapes)
      return &variant;
  return nullptr;
}

/// Runs rank `rank`'s code with `comm` (null: no collectives) installed
/// for its collectives: the variant compiled for the inputs' shapes when
/// there is one, else the general code.
static loom_status runRank(loom_engine *engine, int32_t rank,
                           const void *const *inputs, void *const *outputs,
                           loom_comm *comm) {
  const Rank *r = rankOf(engine, rank);
  if (!r)
    return fail(LOOM_ERROR_INVALID_ARGUMENT,
                "rank " + std::to_string(rank) + " is out of range");
  if ((!inputs && !r->inputs.empty()) || (!outputs && !r->outputs.empty()))
    return fail(LOOM_ERROR_INVALID_ARGUMENT, "null buffer array");
  std::vector<void *> buffers;
  // The symbolic dimensions of the inputs that have them, in input order:
  // the general code's trailing argument
  // (loom-cpu-run-time-sized-arguments).
  std::vector<int64_t> inputSizes;
  // Every input's shape, to choose a variant by.
  std::vector<std::vector<int64_t>> inputShapes;
  for (size_t i = 0; i < r->inputs.size(); ++i) {
    const loom_tensor_desc &desc = r->inputs[i];
    if (!inputs[i] && (desc.byte_size || loom_tensor_desc_is_dynamic(&desc)))
      return fail(LOOM_ERROR_INVALID_ARGUMENT,
                  "input " + std::to_string(i) + " is null");
    if (!loom_tensor_desc_is_dynamic(&desc)) {
      buffers.push_back(const_cast<void *>(inputs[i]));
      inputShapes.emplace_back(desc.dims, desc.dims + desc.rank);
      continue;
    }
    const auto *shaped = static_cast<const loom_shaped_input *>(inputs[i]);
    std::string error = checkInputShape(desc, *shaped);
    if (error.empty() && i < r->inputProfiles.size())
      for (const auto &[dim, min, opt, max] : r->inputProfiles[i])
        if (shaped->dims[dim] < min || shaped->dims[dim] > max) {
          error = "dimension " + std::to_string(dim) + " is " +
                  std::to_string(shaped->dims[dim]) +
                  ", outside the engine's profile: " + std::to_string(min) +
                  " to " + std::to_string(max);
          break;
        }
    if (!error.empty())
      return fail(LOOM_ERROR_INVALID_ARGUMENT, "input " + std::to_string(i) +
                                                   " ('" + desc.name +
                                                   "'): " + error);
    for (int32_t d = 0; d < desc.rank; ++d)
      if (desc.dims[d] == LOOM_DYNAMIC_DIM)
        inputSizes.push_back(shaped->dims[d]);
    inputShapes.emplace_back(shaped->dims, shaped->dims + desc.rank);
    // An empty input's data may be null; the code reads nothing.
    static const int64_t kNoData = 0;
    buffers.push_back(
        const_cast<void *>(shaped->data ? shaped->data : &kNoData));
  }
  const Variant *variant =
      r->variants.empty() ? nullptr : findVariant(*r, inputShapes);
  const Program &program = variant ? variant->program : *r;
  r->last->variant =
      variant ? static_cast<int32_t>(variant - r->variants.data()) : -1;
  // The code only reads its weights; the mapping is read-only.
  buffers.insert(buffers.end(), program.weights.begin(), program.weights.end());
  // Outputs whose sizes the data decides: the code fills a record (the
  // address of its copy, then the sizes; loom/abi/outputs.h). A variant
  // whose output is static where the general code's is not writes into a
  // buffer allocated here, described by the same record.
  std::vector<std::vector<int64_t>> records(r->outputs.size());
  for (size_t i = 0; i < r->outputs.size(); ++i) {
    const loom_tensor_desc &desc = r->outputs[i];
    if (!outputs[i] && (desc.byte_size || loom_tensor_desc_is_dynamic(&desc)))
      return fail(LOOM_ERROR_INVALID_ARGUMENT,
                  "output " + std::to_string(i) + " is null");
    if (!loom_tensor_desc_is_dynamic(&desc)) {
      buffers.push_back(outputs[i]);
      continue;
    }
    auto *dynamic = static_cast<loom_dynamic_output *>(outputs[i]);
    dynamic->data = nullptr;
    records[i].assign(1 + desc.rank, 0);
    const std::vector<int64_t> *fixed =
        variant ? &variant->outputShapes[i] : nullptr;
    if (fixed && std::find(fixed->begin(), fixed->end(), LOOM_DYNAMIC_DIM) ==
                     fixed->end()) {
      size_t bytes = loom_dtype_size(desc.dtype);
      for (int64_t size : *fixed)
        bytes *= static_cast<size_t>(size);
      void *data = std::aligned_alloc(64, (bytes + 64) / 64 * 64);
      if (!data) {
        for (size_t j = 0; j < i; ++j)
          if (!records[j].empty())
            std::free(reinterpret_cast<void *>(records[j][0]));
        return fail(LOOM_ERROR_INTERNAL, "out of memory: could not allocate " +
                                             std::to_string(bytes) +
                                             " bytes for output " +
                                             std::to_string(i));
      }
      records[i][0] = reinterpret_cast<int64_t>(data);
      std::copy(fixed->begin(), fixed->end(), records[i].begin() + 1);
      buffers.push_back(data);
      continue;
    }
    buffers.push_back(records[i].data());
  }
  if (!inputSizes.empty() && !variant)
    buffers.push_back(inputSizes.data());
  loom_status status;
  loom::runtime::CollectiveCounters collectives;
  {
    loom::runtime::CollectiveScope scope(comm, engine->threads, &collectives);
    loom::runtime::KernelTimerScope timers(*program.kernelTimes,
                                           engine->collectKernelTimes);
    if (engine->collectKernelTimes)
      r->last->kernelTimes = program.kernelTimes.get();
    // Per calling thread in OpenMP: set on every run, since runs (and the
    // ranks' threads) may come from any thread.
    if (program.setNumThreads)
      program.setNumThreads(engine->threads);
    // Code that cannot allocate what it needs comes back here
    // (abandonCall), with the failure recorded; what it had allocated
    // before is not freed.
    std::jmp_buf escape;
    if (setjmp(escape) == 0) {
      loom::runtime::setCallEscape(&escape, program.inParallel);
      program.entry(buffers.data());
    }
    loom::runtime::setCallEscape(nullptr, nullptr);
    status = scope.status();
  }
  {
    std::lock_guard<std::mutex> lock(r->collectives->mutex);
    r->collectives->last = collectives;
  }
  for (size_t i = 0; i < r->outputs.size(); ++i) {
    if (records[i].empty())
      continue;
    const loom_tensor_desc &desc = r->outputs[i];
    void *data = reinterpret_cast<void *>(records[i][0]);
    if (status != LOOM_OK) {
      std::free(data);
      continue;
    }
    auto *dynamic = static_cast<loom_dynamic_output *>(outputs[i]);
    size_t bytes = loom_dtype_size(desc.dtype);
    dynamic->rank = desc.rank;
    for (int32_t d = 0; d < desc.rank; ++d) {
      dynamic->dims[d] = records[i][1 + d];
      bytes *= static_cast<size_t>(records[i][1 + d]);
    }
    dynamic->byte_size = bytes;
    dynamic->data = data;
  }
  return status;
}

extern "C" {

void loom_buffer_free(void *data) { std::free(data); }

int loom_tensor_desc_is_dynamic(const loom_tensor_desc *desc) {
  if (!desc)
    return 0;
  for (int32_t d = 0; d < desc->rank; ++d)
    if (desc->dims[d] == LOOM_DYNAMIC_DIM)
      return 1;
  return 0;
}

loom_status loom_engine_execute(loom_engine *engine, int32_t rank,
                                const void *const *inputs,
                                void *const *outputs) {
  if (engine && engine->ranks.size() > 1)
    return fail(LOOM_ERROR_INVALID_ARGUMENT,
                "the engine has " + std::to_string(engine->ranks.size()) +
                    " ranks, which communicate: run them with "
                    "loom_engine_execute_ranks or loom_engine_execute_on");
  return runRank(engine, rank, inputs, outputs, nullptr);
}

loom_status loom_engine_execute_on(loom_engine *engine, loom_comm *comm,
                                   const void *const *inputs,
                                   void *const *outputs) {
  if (!engine || !comm)
    return fail(LOOM_ERROR_INVALID_ARGUMENT, "null engine or communicator");
  if (loom_comm_size(comm) != (int32_t)engine->ranks.size())
    return fail(LOOM_ERROR_INVALID_ARGUMENT,
                "the communicator has " + std::to_string(loom_comm_size(comm)) +
                    " ranks, the engine " +
                    std::to_string(engine->ranks.size()));
  int32_t rank = loom_comm_rank(comm);
  loom_status status = runRank(engine, rank, inputs, outputs, comm);
  if (status != LOOM_OK)
    loom_comm_abort(comm, loom_last_error());
  return status;
}

void loom_execute_options_init(loom_execute_options *options) {
  options->timeout_ms = 30000;
}

} // extern "C"

namespace {

/// One thread and one in-process communicator per rank, kept between
/// loom_engine_execute_ranks calls: creating them on every call cost more
/// than running the fixtures' models. Each call hands the ranks their
/// buffers, wakes them and waits until all have run. A failed call leaves
/// the communicators aborted, so the engine drops the pool after one.
class RankPool {
public:
  static std::unique_ptr<RankPool>
  create(loom_engine *engine, int64_t timeoutMs, loom_status &status) {
    int32_t n = static_cast<int32_t>(engine->ranks.size());
    std::unique_ptr<RankPool> pool(new RankPool(engine, timeoutMs, n));
    loom_comm_options commOptions;
    loom_comm_options_init(&commOptions);
    commOptions.timeout_ms = timeoutMs;
    status = loom_comm_create_local(n, &commOptions, pool->comms.data());
    if (status != LOOM_OK)
      return nullptr;
    for (int32_t r = 0; r < n; ++r)
      pool->threads.emplace_back([p = pool.get(), r] { p->serve(r); });
    return pool;
  }

  ~RankPool() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    wake.notify_all();
    for (std::thread &t : threads)
      t.join();
    for (loom_comm *c : comms)
      if (c)
        loom_comm_free(c);
  }

  int64_t timeoutMs() const { return timeout; }

  /// Runs every rank once; a failing rank fails the call, naming it.
  loom_status run(const void *const *const *inputs,
                  void *const *const *outputs) {
    std::unique_lock<std::mutex> lock(mutex);
    this->inputs = inputs;
    this->outputs = outputs;
    running = static_cast<int32_t>(threads.size());
    ++generation;
    wake.notify_all();
    done.wait(lock, [&] { return running == 0; });
    for (size_t r = 0; r < status.size(); ++r)
      if (status[r] != LOOM_OK)
        return fail(LOOM_ERROR_RANK_FAILED,
                    "rank " + std::to_string(r) + ": " + messages[r]);
    return LOOM_OK;
  }

private:
  RankPool(loom_engine *engine, int64_t timeoutMs, int32_t n)
      : engine(engine), timeout(timeoutMs), comms(n, nullptr), status(n),
        messages(n) {}

  void serve(int32_t rank) {
    uint64_t seen = 0;
    while (true) {
      const void *const *in;
      void *const *out;
      {
        std::unique_lock<std::mutex> lock(mutex);
        wake.wait(lock, [&] { return stopping || generation != seen; });
        if (stopping)
          return;
        seen = generation;
        in = inputs[rank];
        out = outputs[rank];
      }
      loom_status s = loom_engine_execute_on(engine, comms[rank], in, out);
      std::string message = s == LOOM_OK ? "" : loom_last_error();
      {
        std::lock_guard<std::mutex> lock(mutex);
        status[rank] = s;
        messages[rank] = std::move(message);
        if (--running == 0)
          done.notify_all();
      }
    }
  }

  loom_engine *engine;
  int64_t timeout;
  std::vector<loom_comm *> comms;
  std::vector<std::thread> threads;
  std::mutex mutex;
  std::condition_variable wake, done;
  bool stopping = false;
  uint64_t generation = 0;
  int32_t running = 0;
  const void *const *const *inputs = nullptr;
  void *const *const *outputs = nullptr;
  std::vector<loom_status> status;
  std::vector<std::string> messages;
};

} // namespace

loom_engine::~loom_engine() {
  pool.reset();
  auto release = [](Program &program) {
    for (void *device : program.deviceWeights)
      loom::runtime::cuda::freeDeviceBuffer(device);
    if (program.library) {
      loom::runtime::releaseLibraryKernels(program.library);
      dlclose(program.library);
    }
    if (program.codeFd >= 0)
      close(program.codeFd);
  };
  for (Rank &r : ranks) {
    release(r);
    for (Variant &variant : r.variants)
      release(variant.program);
  }
  if (mapping)
    munmap(mapping, mappedSize);
}

extern "C" {

loom_status loom_engine_execute_ranks(loom_engine *engine,
                                      const void *const *const *inputs,
                                      void *const *const *outputs,
                                      const loom_execute_options *options) {
  if (!engine || !inputs || !outputs)
    return fail(LOOM_ERROR_INVALID_ARGUMENT, "null engine or buffer arrays");
  loom_execute_options defaults;
  loom_execute_options_init(&defaults);
  if (!options)
    options = &defaults;
  // One call at a time uses the engine's rank threads; a concurrent call
  // gets threads of its own for the duration.
  std::unique_lock<std::mutex> owner(engine->poolMutex, std::try_to_lock);
  std::unique_ptr<RankPool> own;
  RankPool *pool = nullptr;
  loom_status status = LOOM_OK;
  if (owner.owns_lock()) {
    if (engine->pool && engine->pool->timeoutMs() != options->timeout_ms)
      engine->pool.reset();
    if (!engine->pool)
      engine->pool = RankPool::create(engine, options->timeout_ms, status);
    pool = engine->pool.get();
  } else {
    own = RankPool::create(engine, options->timeout_ms, status);
    pool = own.get();
  }
  if (!pool)
    return status;
  status = pool->run(inputs, outputs);
  // The communicators of a failed call are aborted: start afresh next time.
  if (status != LOOM_OK && owner.owns_lock())
    engine->pool.reset();
  return status;
}

} // extern "C"
