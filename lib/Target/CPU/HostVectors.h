//===- HostVectors.h - The host's vector registers --------------*- C++ -*-===//
//
// The one target-specific input of the CPU target's vector code: the width
// and number of the vector registers, from the host's CPU features.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_TARGET_CPU_HOSTVECTORS_H
#define LOOM_LIB_TARGET_CPU_HOSTVECTORS_H

#include "llvm/ADT/StringMap.h"
#include "llvm/TargetParser/Host.h"

#include <utility>

namespace loom::cpu {

/// {width in bits, number} of the host's vector registers.
inline std::pair<unsigned, unsigned> hostVectorRegisters() {
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  auto has = [&](llvm::StringRef name) {
    auto it = features.find(name);
    return it != features.end() && it->second;
  };
  if (has("avx512f"))
    return {512, 32};
  if (has("avx"))
    return {256, 16};
  if (has("neon") || has("sve"))
    return {128, 32};
  return {128, 16};
}

} // namespace loom::cpu

#endif // LOOM_LIB_TARGET_CPU_HOSTVECTORS_H
