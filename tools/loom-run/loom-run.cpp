//===- loom-run.cpp - Run a model with Loom's reference executor ----------===//

#include "loom/Runner/Runner.h"

#include "llvm/Support/InitLLVM.h"

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  return loom::loomRunMain(argc, argv);
}
