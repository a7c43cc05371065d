//===- NNKernels.cpp - Reference kernels -------------------------------===//

#include "KernelUtils.h"

using namespace mlir;

namespace loom::reference {

void registerNNKernels(KernelRegistry &r) {}

} // namespace loom::reference
