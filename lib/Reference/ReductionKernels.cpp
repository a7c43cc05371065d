//===- ReductionKernels.cpp - Reference kernels -------------------------------===//

#include "KernelUtils.h"

using namespace mlir;

namespace loom::reference {

void registerReductionKernels(KernelRegistry &r) {}

} // namespace loom::reference
