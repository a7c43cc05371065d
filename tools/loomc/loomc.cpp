//===- loomc.cpp - Compile a model ahead of time --------------------------===//

#include "loom/Compiler/Compiler.h"

#include "llvm/Support/InitLLVM.h"

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  return loom::loomcMain(argc, argv);
}
