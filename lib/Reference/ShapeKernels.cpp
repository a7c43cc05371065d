//===- ShapeKernels.cpp - Reference kernels -------------------------------===//

#include "KernelUtils.h"

using namespace mlir;

namespace loom::reference {

void registerShapeKernels(KernelRegistry &r) {}

} // namespace loom::reference
