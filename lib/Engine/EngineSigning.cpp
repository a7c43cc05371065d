//===- EngineSigning.cpp - Ed25519 signatures of engines ------------------===//

#include "loom/Engine/EngineSigning.h"

#include "loom/abi/engine_format.h"
#include "loom/abi/sha256.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <sodium.h>

#include <cstring>

using namespace llvm;

namespace loom {
namespace {

Error initSodium() {
  if (sodium_init() < 0)
    return createStringError("libsodium could not be initialized");
  return Error::success();
}

/// The bytes of a one-line hex key file of exactly `size` bytes.
Expected<std::vector<uint8_t>> readHexKey(StringRef path, size_t size,
                                          StringRef what) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> file =
      MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!file)
    return createStringError(file.getError(), "cannot read the %s '%s': %s",
                             what.str().c_str(), path.str().c_str(),
                             file.getError().message().c_str());
  StringRef text = (*file)->getBuffer().trim();
  std::vector<uint8_t> bytes;
  std::string decoded;
  if (text.size() != 2 * size || !tryGetFromHex(text, decoded))
    return createStringError(
        "'%s' is not a %s: expected one line of %zu hexadecimal digits "
        "(loomc --generate-signing-key writes one)",
        path.str().c_str(), what.str().c_str(), 2 * size);
  bytes.assign(decoded.begin(), decoded.end());
  return bytes;
}

Error writeText(StringRef path, StringRef text, bool secret) {
  int fd;
  if (std::error_code ec =
          sys::fs::openFileForWrite(path, fd, sys::fs::CD_CreateNew,
                                    sys::fs::OF_Text, secret ? 0600 : 0644))
    return createStringError(ec, "cannot create '%s': %s", path.str().c_str(),
                             ec.message().c_str());
  raw_fd_ostream out(fd, /*shouldClose=*/true);
  out << text << "\n";
  out.close();
  if (out.has_error()) {
    std::string message = out.error().message();
    out.clear_error();
    return createStringError("cannot write '%s': %s", path.str().c_str(),
                             message.c_str());
  }
  return Error::success();
}

} // namespace

std::string keyId(const PublicKey &key) {
  uint8_t digest[32];
  loom_sha256(key.data(), key.size(), digest);
  return toHex(ArrayRef<uint8_t>(digest, 8), /*LowerCase=*/true);
}

Expected<SigningKey> readSigningKey(StringRef path) {
  Expected<std::vector<uint8_t>> bytes = readHexKey(path, 64, "secret key");
  if (!bytes)
    return bytes.takeError();
  SigningKey key;
  std::memcpy(key.secret.data(), bytes->data(), 64);
  // libsodium's secret key is the seed followed by the public key.
  std::memcpy(key.publicKey.data(), bytes->data() + 32, 32);
  return key;
}

Expected<PublicKey> readPublicKey(StringRef path) {
  Expected<std::vector<uint8_t>> bytes = readHexKey(path, 32, "public key");
  if (!bytes)
    return bytes.takeError();
  PublicKey key;
  std::memcpy(key.data(), bytes->data(), 32);
  return key;
}

Error generateSigningKey(StringRef name) {
  if (Error error = initSodium())
    return error;
  SigningKey key;
  crypto_sign_keypair(key.publicKey.data(), key.secret.data());
  std::string secretHex = toHex(key.secret, /*LowerCase=*/true);
  sodium_memzero(key.secret.data(), key.secret.size());
  if (Error error = writeText((name + ".key").str(), secretHex, true))
    return error;
  sodium_memzero(secretHex.data(), secretHex.size());
  return writeText((name + ".pub").str(),
                   toHex(key.publicKey, /*LowerCase=*/true), false);
}

Error signEngine(std::vector<char> &engine, const SigningKey &key) {
  if (Error error = initSodium())
    return error;
  loom_engine_header header;
  if (engine.size() < sizeof(header))
    return createStringError("not an engine: too short to sign");
  std::memcpy(&header, engine.data(), sizeof(header));
  if (header.file_size != engine.size())
    return createStringError("the engine is already signed or damaged");
  loom_engine_signature trailer;
  std::memcpy(trailer.magic, LOOM_ENGINE_SIGNATURE_MAGIC,
              LOOM_ENGINE_MAGIC_SIZE);
  uint8_t keyHash[32];
  loom_sha256(key.publicKey.data(), key.publicKey.size(), keyHash);
  std::memcpy(trailer.key_id, keyHash, sizeof(trailer.key_id));
  // The digest in the header covers every byte of the engine.
  crypto_sign_detached(trailer.signature, nullptr, header.sha256,
                       sizeof(header.sha256), key.secret.data());
  const char *bytes = reinterpret_cast<const char *>(&trailer);
  engine.insert(engine.end(), bytes, bytes + sizeof(trailer));
  return Error::success();
}

} // namespace loom
