//===- QuantizationBuilders.cpp - QDQ and integer-arithmetic ONNX ops -----===//

#include "BuilderUtils.h"

using namespace mlir;

namespace loom::onnx_import {

void registerQuantizationBuilders(OpTable &t) {}

} // namespace loom::onnx_import
