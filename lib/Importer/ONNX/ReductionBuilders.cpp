//===- ReductionBuilders.cpp - Reductions, arg-reductions, scans, top-k ---===//

#include "BuilderUtils.h"

using namespace mlir;

namespace loom::onnx_import {

void registerReductionBuilders(OpTable &t) {}

} // namespace loom::onnx_import
