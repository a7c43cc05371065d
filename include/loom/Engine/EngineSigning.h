//===- EngineSigning.h - Ed25519 signatures of engines ---------*- C++ -*-===//
//
// Loading an engine runs its native code, so a deployment may accept only
// engines it signed: `loomc --sign=KEY` appends an Ed25519 signature of the
// engine's SHA-256 digest (runtime/include/loom/abi/engine_format.h), and
// the runtime refuses engines that a trusted public key did not sign
// (loom_load_options::trusted_public_key, `loom-run --trusted-key`).
//
// Keys are files of hexadecimal text, one line: a secret key (128 digits,
// libsodium's 64-byte form: the seed and the public key) and a public key
// (64 digits). `loomc --generate-signing-key=NAME` writes NAME.key (mode
// 0600) and NAME.pub.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_ENGINE_ENGINESIGNING_H
#define LOOM_ENGINE_ENGINESIGNING_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace loom {

using PublicKey = std::array<uint8_t, 32>;

struct SigningKey {
  std::array<uint8_t, 64> secret;
  PublicKey publicKey;
};

/// Reads a secret key file (128 hex digits).
llvm::Expected<SigningKey> readSigningKey(llvm::StringRef path);
/// Reads a public key file (64 hex digits).
llvm::Expected<PublicKey> readPublicKey(llvm::StringRef path);

/// Writes a new key pair to `name`.key and `name`.pub.
llvm::Error generateSigningKey(llvm::StringRef name);

/// The key's id in messages: the first 8 bytes of its SHA-256, as hex.
std::string keyId(const PublicKey &key);

/// Appends the signature trailer to a serialized (unsigned) engine.
llvm::Error signEngine(std::vector<char> &engine, const SigningKey &key);

} // namespace loom

#endif // LOOM_ENGINE_ENGINESIGNING_H
