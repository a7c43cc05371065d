//===- external-data-fuzzer.cpp - Fuzzing external-data resolution --------===//
//
// Input: a model file, imported with its external data anchored at a fixture
// directory made once per process:
//
//   weights.bin         4096 bytes
//   nested/weights.bin  64 bytes
//   empty.bin           0 bytes
//   directory/          (not a regular file)
//   escape -> /etc/passwd, up -> ..   (symlinks that leave the directory)
//
// The seeds (scripts/fuzz.py) are models whose initializers name these
// files with offsets and lengths; mutations reach the location, offset and
// length checks, the symlink and `..` confinement, and the size checks.
//
//===----------------------------------------------------------------------===//

#include "FuzzImport.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <unistd.h>

#include <sys/stat.h>

namespace {

std::string fixtureDirectory;

void writeFile(const std::string &path, size_t bytes) {
  std::ofstream file(path, std::ios::binary);
  for (size_t i = 0; i < bytes; ++i)
    file.put(static_cast<char>(i * 7 + 1));
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  const char *tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp ? tmp : "/tmp") + "/loom-fuzz-XXXXXX";
  if (!mkdtemp(pattern.data())) {
    std::perror("mkdtemp");
    std::abort();
  }
  fixtureDirectory = pattern;
  mkdir((fixtureDirectory + "/nested").c_str(), 0755);
  mkdir((fixtureDirectory + "/directory").c_str(), 0755);
  writeFile(fixtureDirectory + "/weights.bin", 4096);
  writeFile(fixtureDirectory + "/nested/weights.bin", 64);
  writeFile(fixtureDirectory + "/empty.bin", 0);
  if (symlink("/etc/passwd", (fixtureDirectory + "/escape").c_str()) ||
      symlink("..", (fixtureDirectory + "/up").c_str())) {
    std::perror("symlink");
    std::abort();
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  loom::fuzz::importModel(
      llvm::StringRef(reinterpret_cast<const char *>(data), size),
      fixtureDirectory + "/model.onnx", fixtureDirectory);
  return 0;
}
