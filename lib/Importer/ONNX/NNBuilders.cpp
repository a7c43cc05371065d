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

/// Kernel window attributes shared by Conv, ConvTranspose and pooling, with
/// ONNX's `auto_pad` resolved to explicit pads.
struct WindowAttrs {
  SmallVector<int64_t> kernel, strides, pads, dilations;
};

std::optional<WindowAttrs> readWindow(NodeBinder &b, RankedTensorType input,
                                      ArrayRef<int64_t> kernel,
                                      bool transposed = false) {
  size_t spatial = input.getRank() - 2;
  WindowAttrs w;
  w.kernel.assign(kernel.begin(), kernel.end());
  SmallVector<int64_t> ones(spatial, 1), zeros(2 * spatial, 0);
  auto strides = b.intsAttr("strides", ones);
  auto dilations = b.intsAttr("dilations", ones);
  auto pads = b.intsAttr("pads", zeros);
  auto autoPad = b.stringAttr("auto_pad", "NOTSET");
  if (!strides || !dilations || !pads || !autoPad)
    return std::nullopt;
  if (strides->size() != spatial || dilations->size() != spatial ||
      pads->size() != 2 * spatial || w.kernel.size() != spatial) {
    b.emitError() << "kernel, strides, dilations and pads must match the "
                  << spatial << " spatial axes";
    return std::nullopt;
  }
  w.strides = *strides;
  w.dilations = *dilations;
  w.pads = *pads;
  if (*autoPad == "VALID") {
    w.pads = zeros;
  } else if (*autoPad == "SAME_UPPER" || *autoPad == "SAME_LOWER") {
    if (transposed) {
      b.emitError() << "auto_pad " << *autoPad
                    << " on ConvTranspose is not supported";
      return std::nullopt;
    }
    for (size_t i = 0; i < spatial; ++i) {
      int64_t in = input.getDimSize(2 + i);
      if (ShapedType::isDynamic(in)) {
        b.emitError() << "auto_pad " << *autoPad
                      << " needs static spatial sizes";
        return std::nullopt;
      }
      int64_t out = (in + w.strides[i] - 1) / w.strides[i];
      int64_t effective = (w.kernel[i] - 1) * w.dilations[i] + 1;
      int64_t total =
          std::max<int64_t>((out - 1) * w.strides[i] + effective - in, 0);
      int64_t small = total / 2, large = total - small;
      w.pads[i] = *autoPad == "SAME_UPPER" ? small : large;
      w.pads[spatial + i] = *autoPad == "SAME_UPPER" ? large : small;
    }
  } else if (*autoPad != "NOTSET") {
    b.emitError() << "auto_pad '" << *autoPad << "' is not supported";
    return std::nullopt;
  }
  return w;
}

LogicalResult buildConv(NodeBinder &b) {
  Value x = b.input(0), weight = b.input(1);
  RankedTensorType type = b.outputType(0);
  if (!x || !weight || !type)
    return failure();
  RankedTensorType in = b.inputType(0), wt = b.inputType(1);
  if (in.getRank() < 3)
    return b.fail("expects an input of rank >= 3 (N, C, spatial...)");
  auto kernel = b.intsAttr("kernel_shape", wt.getShape().drop_front(2));
  std::optional<int64_t> group = b.intAttr("group", 1);
  if (!kernel || !group)
    return failure();
  std::optional<WindowAttrs> w = readWindow(b, in, *kernel);
  if (!w)
    return failure();
  auto &builder = b.builder();
  b.setOutput(0, ConvOp::create(builder, b.loc(), type, x, weight,
                                b.optionalInput(2), w->strides, w->pads,
                                w->dilations, *group));
  return success();
}

LogicalResult buildConvTranspose(NodeBinder &b) {
  Value x = b.input(0), weight = b.input(1);
  RankedTensorType type = b.outputType(0);
  if (!x || !weight || !type)
    return failure();
  RankedTensorType in = b.inputType(0), wt = b.inputType(1);
  if (in.getRank() < 3)
    return b.fail("expects an input of rank >= 3 (N, C, spatial...)");
  size_t spatial = in.getRank() - 2;
  auto kernel = b.intsAttr("kernel_shape", wt.getShape().drop_front(2));
  std::optional<int64_t> group = b.intAttr("group", 1);
  auto outputPadding =
      b.intsAttr("output_padding", SmallVector<int64_t>(spatial, 0));
  if (!kernel || !group || !outputPadding)
    return failure();
  std::optional<WindowAttrs> w = readWindow(b, in, *kernel, true);
  if (!w)
    return failure();
  if (b.hasAttr("output_shape")) {
    // Pads follow from the requested output size (SAME_UPPER split).
    for (size_t i = 0; i < spatial; ++i) {
      int64_t inSize = in.getDimSize(2 + i), out = type.getDimSize(2 + i);
      if (ShapedType::isDynamic(inSize) || ShapedType::isDynamic(out))
        return b.fail("output_shape needs static spatial sizes");
      int64_t total = w->strides[i] * (inSize - 1) + (*outputPadding)[i] +
                      ((*kernel)[i] - 1) * w->dilations[i] + 1 - out;
      if (total < 0)
        return b.fail("output_shape is larger than the convolution produces");
      w->pads[i] = total / 2;
      w->pads[spatial + i] = total - total / 2;
    }
  }
  b.setOutput(0, ConvTransposeOp::create(
                     b.builder(), b.loc(), type, x, weight, b.optionalInput(2),
                     w->strides, w->pads, w->dilations, *outputPadding,
                     *group));
  return success();
}

template <typename PoolOp>
LogicalResult buildPool(NodeBinder &b) {
  Value x = b.input(0);
  RankedTensorType type = b.outputType(0);
  if (!x || !type)
    return failure();
  if (failed(b.rejectOutputsFrom(1, "MaxPool's Indices output")))
    return failure();
  RankedTensorType in = b.inputType(0);
  if (in.getRank() < 3)
    return b.fail("expects an input of rank >= 3 (N, C, spatial...)");
  auto kernel = b.intsAttr("kernel_shape");
  std::optional<int64_t> ceil = b.intAttr("ceil_mode", 0);
  std::optional<int64_t> storage = b.intAttr("storage_order", 0);
  if (!kernel || !ceil || !storage)
    return failure();
  if (*storage != 0)
    return b.fail("storage_order = 1 is not supported");
  std::optional<WindowAttrs> w = readWindow(b, in, *kernel);
  if (!w)
    return failure();
  auto &builder = b.builder();
  if constexpr (std::is_same_v<PoolOp, AvgPoolOp>) {
    std::optional<int64_t> includePad = b.intAttr("count_include_pad", 0);
    if (!includePad)
      return failure();
    b.setOutput(0, AvgPoolOp::create(builder, b.loc(), type, x, w->kernel,
                                     w->strides, w->pads, w->dilations,
                                     *ceil != 0, *includePad != 0));
  } else {
    b.setOutput(0, MaxPoolOp::create(builder, b.loc(), type, x, w->kernel,
                                     w->strides, w->pads, w->dilations,
                                     *ceil != 0));
  }
  return success();
}

/// GlobalAveragePool / GlobalMaxPool: a reduction over the spatial axes.
template <typename ReduceOp>
LogicalResult buildGlobalPool(NodeBinder &b) {
  Value x = b.input(0);
  RankedTensorType type = b.outputType(0);
  if (!x || !type)
    return failure();
  SmallVector<int64_t> axes;
  for (int64_t i = 2; i < b.inputType(0).getRank(); ++i)
    axes.push_back(i);
  b.setOutput(0, ReduceOp::create(b.builder(), b.loc(), type, x, axes, true));
  return success();
}

LogicalResult buildBatchNorm(NodeBinder &b) {
  if (failed(b.rejectOutputsFrom(1, "training-mode statistics")))
    return failure();
  std::optional<int64_t> training = b.intAttr("training_mode", 0);
  std::optional<float> epsilon = b.floatAttr("epsilon", 1e-5f);
  if (!training || !epsilon)
    return failure();
  if (*training)
    return b.fail("training_mode = 1 is not supported (inference only)");
  if (b.opset() < 7 && b.intAttr("is_test", 0).value_or(0) == 0 &&
      b.hasAttr("is_test"))
    return b.fail("is_test = 0 (training) is not supported");
  RankedTensorType type = b.outputType(0);
  Value x = b.input(0), scale = b.input(1), bias = b.input(2),
        mean = b.input(3), var = b.input(4);
  if (!type || !x || !scale || !bias || !mean || !var)
    return failure();
  b.setOutput(0, BatchNormOp::create(b.builder(), b.loc(), type, x, scale,
                                     bias, mean, var,
                                     b.builder().getF32FloatAttr(*epsilon)));
  return success();
}

LogicalResult buildInstanceNorm(NodeBinder &b) {
  std::optional<float> epsilon = b.floatAttr("epsilon", 1e-5f);
  RankedTensorType type = b.outputType(0);
  Value x = b.input(0), scale = b.input(1), bias = b.input(2);
  if (!epsilon || !type || !x || !scale || !bias)
    return failure();
  b.setOutput(0, InstanceNormOp::create(b.builder(), b.loc(), type, x, scale,
                                        bias, b.builder().getF32FloatAttr(*epsilon)));
  return success();
}

LogicalResult buildLayerNorm(NodeBinder &b) {
  if (failed(b.rejectOutputsFrom(1, "the Mean and InvStdDev outputs")))
    return failure();
  std::optional<int64_t> axis = b.intAttr("axis", -1);
  std::optional<float> epsilon = b.floatAttr("epsilon", 1e-5f);
  RankedTensorType type = b.outputType(0);
  Value x = b.input(0), scale = b.input(1);
  if (!axis || !epsilon || !type || !x || !scale)
    return failure();
  if (!normalizeAxisOrFail(b, *axis, type.getRank()))
    return failure();
  b.setOutput(0, LayerNormOp::create(b.builder(), b.loc(), type, x, scale,
                                     b.optionalInput(2), b.builder().getI64IntegerAttr(*axis),
                                     b.builder().getF32FloatAttr(*epsilon)));
  return success();
}

/// Softmax and LogSoftmax. From opset 13 they work along one axis; before,
/// the input is coerced to 2-D at `axis` and normalized over the second
/// dimension, which Loom expresses with reshapes around an axis-1 softmax.
template <typename OpT>
LogicalResult buildSoftmax(NodeBinder &b) {
  Value x = b.input(0);
  RankedTensorType type = b.outputType(0);
  std::optional<int64_t> axis = b.intAttr("axis", b.opset() < 13 ? 1 : -1);
  if (!x || !type || !axis)
    return failure();
  std::optional<int64_t> a = normalizeAxisOrFail(b, *axis, type.getRank());
  if (!a)
    return failure();
  auto &builder = b.builder();
  if (b.opset() >= 13 || *a == type.getRank() - 1) {
    b.setOutput(0, OpT::create(builder, b.loc(), type, x, *a));
    return success();
  }
  if (!type.hasStaticShape())
    return b.fail("the opset < 13 form on a dynamic shape is not supported");
  int64_t rows = 1, cols = 1;
  for (int64_t i = 0; i < type.getRank(); ++i)
    (i < *a ? rows : cols) *= type.getDimSize(i);
  auto flatType = RankedTensorType::get({rows, cols}, type.getElementType());
  Value flat = ReshapeOp::create(builder, b.loc(), flatType, x,
                                 b.i64Tensor({rows, cols}), false);
  Value normalized = OpT::create(builder, b.loc(), flatType, flat, 1);
  b.setOutput(0, ReshapeOp::create(builder, b.loc(), type, normalized,
                                   b.i64Tensor(type.getShape()), false));
  return success();
}

/// Dropout at inference is the identity; its mask, when used, is all true.
LogicalResult buildDropout(NodeBinder &b) {
  Value x = b.input(0);
  if (!x)
    return failure();
  if (b.opset() >= 12)
    if (DenseElementsAttr training = b.constantInput(2);
        training && training.getSplatValue<bool>())
      return b.fail("training_mode = true is not supported (inference only)");
  if (!b.constantInput(2) && b.hasInput(2))
    return b.fail("input 'training_mode' must be a constant");
  b.setOutput(0, x);
  if (b.hasOutput(1)) {
    RankedTensorType maskType = b.outputType(1);
    if (!maskType)
      return failure();
    if (!maskType.hasStaticShape())
      return b.fail("the mask output of a dynamic shape is not supported");
    b.setOutput(1, b.splat(maskType, 1));
  }
  return success();
}

} // namespace

void registerNNBuilders(OpTable &t) {
  t.add("", "MatMul", 1, buildMatMul);
  t.add("", "Gemm", 1, buildGemm);
  t.add("", "Conv", 1, buildConv);
  t.add("", "ConvTranspose", 1, buildConvTranspose);
  t.add("", "MaxPool", 1, buildPool<MaxPoolOp>);
  t.add("", "AveragePool", 1, buildPool<AvgPoolOp>);
  t.add("", "GlobalAveragePool", 1, buildGlobalPool<ReduceMeanOp>);
  t.add("", "GlobalMaxPool", 1, buildGlobalPool<ReduceMaxOp>);
  t.add("", "BatchNormalization", 6, buildBatchNorm);
  t.add("", "InstanceNormalization", 6, buildInstanceNorm);
  // With its Mean/InvStdDev outputs used, LayerNormalization is expanded
  // from its ONNX function body instead.
  t.add("", "LayerNormalization", 17, buildLayerNorm, /*maxOutputs=*/1);
  t.add("", "Softmax", 1, buildSoftmax<SoftmaxOp>);
  t.add("", "LogSoftmax", 1, buildSoftmax<LogSoftmaxOp>);
  t.add("", "Dropout", 1, buildDropout);
}

} // namespace loom::onnx_import
