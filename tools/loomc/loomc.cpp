//===- loomc.cpp - Compile a model ahead of time --------------------------===//

#include "loom/Compiler/Compiler.h"

#include "llvm/Support/InitLLVM.h"

#ifdef LOOM_INCLUDE_TESTS
#include "TestTarget.h"
#endif

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
#ifdef LOOM_INCLUDE_TESTS
  loom::test::registerTestTarget();
#endif
  return loom::loomcMain(argc, argv);
}
