//===- TrainingBuilders.cpp - ONNX preview-training optimizers ------------===//
//
// The optimizer update rules of the ai.onnx.preview.training domain
// (Adagrad, Momentum, Adam), decomposed into elementwise core ops. They let
// Loom compile a training step's parameter update; the gradients come from
// the model (Loom does not differentiate).
//
//===----------------------------------------------------------------------===//

#include "BuilderUtils.h"

using namespace mlir;

namespace loom::onnx_import {
namespace {

constexpr const char *kTrainingDomain = "ai.onnx.preview.training";

/// The shared inputs of the optimizers: learning rate R and the update
/// count T (converted to X's float type), and the number of optimized
/// tensors given `groups` tensor groups (X, G, plus state) after them.
struct OptimizerInputs {
  Value rate, count;
  size_t numTensors;
};

std::optional<OptimizerInputs> readOptimizerInputs(NodeBinder &b,
                                                   size_t groups) {
  if (b.numInputs() < 2 + groups || (b.numInputs() - 2) % groups != 0) {
    b.emitError() << "expects R, T and " << groups
                  << " equally long groups of tensors";
    return std::nullopt;
  }
  Value r = b.input(0), t = b.input(1), x = b.input(2);
  if (!r || !t || !x)
    return std::nullopt;
  auto floatType = cast<RankedTensorType>(x.getType()).getElementType();
  if (!isa<FloatType>(floatType)) {
    b.emitError() << "optimized tensors must be floating point";
    return std::nullopt;
  }
  auto scalarOf = [&](Value v) -> Value {
    auto type = cast<RankedTensorType>(v.getType());
    auto target = RankedTensorType::get({}, floatType);
    if (type.getRank() != 0) {
      b.emitError() << "R and T must be scalars";
      return {};
    }
    return type == target
               ? v
               : CastOp::create(b.builder(), b.loc(), target, v).getResult();
  };
  Value rate = scalarOf(r), count = scalarOf(t);
  if (!rate || !count)
    return std::nullopt;
  return OptimizerInputs{rate, count, (b.numInputs() - 2) / groups};
}

/// alpha * x for a float constant alpha, in x's element type.
Value scale(NodeBinder &b, Value x, double alpha) {
  Type elementType = cast<RankedTensorType>(x.getType()).getElementType();
  return createInferred<MulOp>(b, b.scalar(elementType, alpha), x);
}

/// norm_coefficient * X + G.
Value regularize(NodeBinder &b, Value x, Value g, double normCoefficient) {
  return createInferred<AddOp>(b, scale(b, x, normCoefficient), g);
}

/// Binds output `i` to `value`, refined to the inferred output type.
LogicalResult bind(NodeBinder &b, size_t i, Value value) {
  if (!b.hasOutput(i))
    return success();
  RankedTensorType type = b.outputType(i);
  if (!type || failed(refineTo(b, value, type)))
    return failure();
  b.setOutput(i, value);
  return success();
}

/// Adagrad:
///   r = R / (1 + T * decay_factor)
///   G_reg = norm_coefficient * X + G
///   H_new = H + G_reg * G_reg
///   X_new = X - r * G_reg / (sqrt(H_new) + epsilon)
LogicalResult buildAdagrad(NodeBinder &b) {
  std::optional<OptimizerInputs> in = readOptimizerInputs(b, 3);
  std::optional<float> decay = b.floatAttr("decay_factor", 0.0f);
  std::optional<float> epsilon = b.floatAttr("epsilon", 1e-6f);
  std::optional<float> norm = b.floatAttr("norm_coefficient", 0.0f);
  if (!in || !decay || !epsilon || !norm)
    return failure();
  Type ft = cast<RankedTensorType>(in->rate.getType()).getElementType();
  Value denominator =
      createInferred<AddOp>(b, b.scalar(ft, 1.0), scale(b, in->count, *decay));
  Value r = createInferred<DivOp>(b, in->rate, denominator);
  size_t n = in->numTensors;
  for (size_t i = 0; i < n; ++i) {
    Value x = b.input(2 + i), g = b.input(2 + n + i),
          h = b.input(2 + 2 * n + i);
    if (!x || !g || !h)
      return failure();
    Value greg = regularize(b, x, g, *norm);
    Value hNew =
        createInferred<AddOp>(b, h, createInferred<MulOp>(b, greg, greg));
    Value adaptive = createInferred<AddOp>(b, createInferred<SqrtOp>(b, hNew),
                                           b.scalar(ft, *epsilon));
    Value step =
        createInferred<DivOp>(b, createInferred<MulOp>(b, r, greg), adaptive);
    if (failed(bind(b, i, createInferred<SubOp>(b, x, step))) ||
        failed(bind(b, n + i, hNew)))
      return failure();
  }
  return success();
}

/// Momentum:
///   G_reg = norm_coefficient * X + G
///   beta' = T > 0 ? beta : 1
///   V_new = alpha * V + beta' * G_reg
///   standard: X_new = X - R * V_new
///   nesterov: X_new = X - R * (G_reg + alpha * V_new)
LogicalResult buildMomentum(NodeBinder &b) {
  std::optional<OptimizerInputs> in = readOptimizerInputs(b, 3);
  std::optional<float> alpha = b.floatAttr("alpha", 0.0f);
  std::optional<float> beta = b.floatAttr("beta", 0.0f);
  std::optional<float> norm = b.floatAttr("norm_coefficient", 0.0f);
  std::optional<std::string> mode = b.stringAttr("mode", "");
  if (!in || !alpha || !beta || !norm || !mode)
    return failure();
  if (!b.hasAttr("alpha") || !b.hasAttr("beta") || !b.hasAttr("mode") ||
      !b.hasAttr("norm_coefficient"))
    return b.fail("attributes alpha, beta, mode and norm_coefficient are "
                  "required");
  if (*mode != "standard" && *mode != "nesterov")
    return b.fail("mode must be \"standard\" or \"nesterov\", not \"" + *mode +
                  "\"");
  Type ft = cast<RankedTensorType>(in->rate.getType()).getElementType();
  Value positive = createInferred<GreaterOp>(b, in->count, b.scalar(ft, 0.0));
  Value betaAdjusted = createInferred<WhereOp>(b, positive, b.scalar(ft, *beta),
                                               b.scalar(ft, 1.0));
  size_t n = in->numTensors;
  for (size_t i = 0; i < n; ++i) {
    Value x = b.input(2 + i), g = b.input(2 + n + i),
          v = b.input(2 + 2 * n + i);
    if (!x || !g || !v)
      return failure();
    Value greg = regularize(b, x, g, *norm);
    Value vNew = createInferred<AddOp>(
        b, scale(b, v, *alpha), createInferred<MulOp>(b, betaAdjusted, greg));
    Value direction =
        *mode == "standard"
            ? vNew
            : createInferred<AddOp>(b, greg, scale(b, vNew, *alpha));
    Value xNew = createInferred<SubOp>(
        b, x, createInferred<MulOp>(b, in->rate, direction));
    if (failed(bind(b, i, xNew)) || failed(bind(b, n + i, vNew)))
      return failure();
  }
  return success();
}

/// Adam:
///   G_reg = norm_coefficient * X + G
///   V_new = alpha * V + (1 - alpha) * G_reg
///   H_new = beta * H + (1 - beta) * G_reg * G_reg
///   R' = T > 0 ? R * sqrt(1 - beta^T) / (1 - alpha^T) : R
///   X_new = (1 - norm_coefficient_post) *
///           (X - R' * V_new / (sqrt(H_new) + epsilon))
LogicalResult buildAdam(NodeBinder &b) {
  std::optional<OptimizerInputs> in = readOptimizerInputs(b, 4);
  std::optional<float> alpha = b.floatAttr("alpha", 0.9f);
  std::optional<float> beta = b.floatAttr("beta", 0.999f);
  std::optional<float> epsilon = b.floatAttr("epsilon", 1e-6f);
  std::optional<float> norm = b.floatAttr("norm_coefficient", 0.0f);
  std::optional<float> normPost = b.floatAttr("norm_coefficient_post", 0.0f);
  if (!in || !alpha || !beta || !epsilon || !norm || !normPost)
    return failure();
  Type ft = cast<RankedTensorType>(in->rate.getType()).getElementType();
  Value one = b.scalar(ft, 1.0);
  Value alphaT = createInferred<PowOp>(b, b.scalar(ft, *alpha), in->count);
  Value betaT = createInferred<PowOp>(b, b.scalar(ft, *beta), in->count);
  Value correction = createInferred<DivOp>(
      b, createInferred<SqrtOp>(b, createInferred<SubOp>(b, one, betaT)),
      createInferred<SubOp>(b, one, alphaT));
  Value positive = createInferred<GreaterOp>(b, in->count, b.scalar(ft, 0.0));
  Value rate = createInferred<WhereOp>(
      b, positive, createInferred<MulOp>(b, in->rate, correction), in->rate);
  size_t n = in->numTensors;
  for (size_t i = 0; i < n; ++i) {
    Value x = b.input(2 + i), g = b.input(2 + n + i),
          v = b.input(2 + 2 * n + i), h = b.input(2 + 3 * n + i);
    if (!x || !g || !v || !h)
      return failure();
    Value greg = regularize(b, x, g, *norm);
    Value vNew = createInferred<AddOp>(b, scale(b, v, *alpha),
                                       scale(b, greg, 1.0 - *alpha));
    Value hNew = createInferred<AddOp>(
        b, scale(b, h, *beta),
        scale(b, createInferred<MulOp>(b, greg, greg), 1.0 - *beta));
    Value denominator = createInferred<AddOp>(
        b, createInferred<SqrtOp>(b, hNew), b.scalar(ft, *epsilon));
    Value step = createInferred<MulOp>(
        b, rate, createInferred<DivOp>(b, vNew, denominator));
    Value xNew = scale(b, createInferred<SubOp>(b, x, step), 1.0 - *normPost);
    if (failed(bind(b, i, xNew)) || failed(bind(b, n + i, vNew)) ||
        failed(bind(b, 2 * n + i, hNew)))
      return failure();
  }
  return success();
}

} // namespace

void registerTrainingBuilders(OpTable &t) {
  t.add(kTrainingDomain, "Adagrad", 1, buildAdagrad);
  t.add(kTrainingDomain, "Momentum", 1, buildMomentum);
  t.add(kTrainingDomain, "Adam", 1, buildAdam);
}

} // namespace loom::onnx_import
