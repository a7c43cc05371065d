//===- SequenceModelBuilders.cpp - Recurrent cells and Einsum -------------===//

#include "BuilderUtils.h"

using namespace mlir;

namespace loom::onnx_import {

void registerSequenceModelBuilders(OpTable &t) {}

} // namespace loom::onnx_import
