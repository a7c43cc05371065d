//===- engine_load.cpp - Loading engines ----------------------------------===//
//
// Load order (each step trusts only what the previous ones checked):
//   1. map the file; it must be at least a header long and start with the
//      magic, and the header's file size must be the file's;
//   2. the SHA-256 of the file (digest field zeroed) must match the digest;
//   3. the format version and header size must be this runtime's;
//   4. the section table and manifest must lie inside the file;
//   5. the manifest is parsed (engine_manifest.cpp), its target checked
//      against this machine;
//   6. each rank's code is handed to the dynamic loader from memory (a
//      memfd), so no file is written and no linker is needed at run time.
//
//===----------------------------------------------------------------------===//

#include "engine_state.h"

#include "loom/abi/sha256.h"

#include "drivers/cuda/cuda_driver.h"
#include "loom/device.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <optional>

using namespace loom::runtime;

static_assert(offsetof(loom_engine_header, sha256) == LOOM_ENGINE_SHA256_OFFSET,
              "the digest offset is part of the format");
static_assert(sizeof(loom_engine_header) == 128, "the header is 128 bytes");
static_assert(sizeof(loom_engine_section) == 24, "a section is 24 bytes");

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

/// The engine's code resolves the runtime's entry points (the allocator, the
/// collectives, the kernel library calls) in the process's global scope. A
/// host that loads the runtime with RTLD_LOCAL -- a Python extension module,
/// or any plugin loaded with dlopen -- leaves them out of it, so the runtime
/// promotes itself to global scope once, before the first engine's code
/// loads.
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
