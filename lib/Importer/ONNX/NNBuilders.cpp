//===- NNBuilders.cpp - Contractions, convolutions, norms, softmax --------===//

#include "BuilderUtils.h"

using namespace mlir;

namespace loom::onnx_import {
namespace {

LogicalResult buildMatMul(NodeBinder &b) {
  return buildSimple<MatMulOp>(b, {b.input(0), b.input(1)});
}

/// Gemm: alpha * op(A) @ op(B) + beta * C, as transposes, matmul, scaling
/// and a broadcasting add.
LogicalResult buildGemm(NodeBinder &b) {
  Value a = b.input(0), w = b.input(1);
  RankedTensorType type = b.outputType(0);
  std::optional<float> alpha = b.floatAttr("alpha", 1.0f);
  std::optional<float> beta = b.floatAttr("beta", 1.0f);
  std::optional<int64_t> transA = b.intAttr("transA", 0);
  std::optional<int64_t> transB = b.intAttr("transB", 0);
  if (!a || !w || !type || !alpha || !beta || !transA || !transB)
    return failure();
  if (b.opset() < 7 && b.hasAttr("broadcast") && *b.intAttr("broadcast", 0) == 0)
    return b.fail("Gemm without broadcasting (opset < 7) is not supported");
  auto transpose = [&](Value v) -> Value {
    return createInferred<TransposeOp>(b, v, ArrayRef<int64_t>{1, 0});
  };
  if (*transA)
    a = transpose(a);
  if (*transB)
    w = transpose(w);
  Type elementType = type.getElementType();
  Value result = createInferred<MatMulOp>(b, a, w);
  if (*alpha != 1.0f)
    result = createInferred<MulOp>(b, result, b.scalar(elementType, *alpha));
  if (Value c = b.optionalInput(2)) {
    if (*beta != 1.0f)
      c = createInferred<MulOp>(b, c, b.scalar(elementType, *beta));
    result = createInferred<AddOp>(b, result, c);
  }
  if (failed(refineTo(b, result, type)))
    return failure();
  b.setOutput(0, result);
  return success();
}

} // namespace

void registerNNBuilders(OpTable &t) {
  t.add("", "MatMul", 1, buildMatMul);
  t.add("", "Gemm", 1, buildGemm);
}

} // namespace loom::onnx_import
