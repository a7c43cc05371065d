//===- NNBuilders.cpp - Contractions, convolutions, norms, softmax --------===//
//
// MatMul/Gemm, convolutions, pooling, normalizations, softmax and its
// relatives, resizing, the depth/space shuffles, Dropout, LRN and the vision
// ops (GridSample, RoiAlign, NonMaxSuppression).
//
// Ops that passes must see whole become one loom op (conv, conv_transpose,
// the pools, the norms, softmax, resize) with every window attribute made
// explicit: defaults are spelled out, `auto_pad` and `output_shape` become
// pads. Legacy forms (Softmax before opset 13, Upsample, Resize-10) and the
// long tail (Hardmax, LRN, DepthToSpace, Dropout, the integer contractions)
// are rewritten here into core ops.
//
//===----------------------------------------------------------------------===//

#include "BuilderUtils.h"
#include "ConvWindow.h"

#include <algorithm>
#include <cmath>
#include <string>

using namespace mlir;

namespace loom::onnx_import {
namespace {

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

RankedTensorType withShape(RankedTensorType t, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, t.getElementType());
}

/// Product of `dims`; dynamic when any of them is.
int64_t product(ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (ShapedType::isDynamic(d))
      return ShapedType::kDynamic;
    n *= d;
  }
  return n;
}

SmallVector<int64_t> iota(int64_t first, int64_t end) {
  SmallVector<int64_t> v;
  for (int64_t i = first; i < end; ++i)
    v.push_back(i);
  return v;
}

/// Reshapes `value` to `shape`, which may hold one dynamic dimension (the
/// reshape computes it, as -1; the result type has it when the input's size
/// is static).
Value reshapeTo(NodeBinder &b, Value value, ArrayRef<int64_t> shape) {
  RankedTensorType in = tensorType(value);
  SmallVector<int64_t> spec, resultShape(shape);
  int64_t known = 1;
  for (int64_t d : shape) {
    spec.push_back(ShapedType::isDynamic(d) ? -1 : d);
    if (!ShapedType::isDynamic(d))
      known *= d;
  }
  if (in.hasStaticShape() && known != 0)
    for (int64_t &d : resultShape)
      if (ShapedType::isDynamic(d))
        d = in.getNumElements() / known;
  return ReshapeOp::create(b.builder(), b.loc(), withShape(in, resultShape),
                           value, b.i64Tensor(spec), /*allowzero=*/false);
}

/// The shape of `value` as a 1-D i64 tensor (a constant when static).
Value shapeOf(NodeBinder &b, Value value) {
  RankedTensorType t = tensorType(value);
  if (t.hasStaticShape())
    return b.i64Tensor(t.getShape());
  auto type = RankedTensorType::get({t.getRank()}, b.builder().getI64Type());
  return ShapeOp::create(b.builder(), b.loc(), type, value,
                         b.builder().getI64IntegerAttr(0), IntegerAttr());
}

/// Reshapes `value` back to the (possibly dynamic) shape of `like`.
Value reshapeLike(NodeBinder &b, Value value, Value like,
                  RankedTensorType type) {
  return ReshapeOp::create(b.builder(), b.loc(), type, value, shapeOf(b, like),
                           /*allowzero=*/false);
}

/// Binds output `i` to `value` after refining it to the inferred type.
LogicalResult finish(NodeBinder &b, size_t i, Value value) {
  RankedTensorType type = b.outputType(i);
  if (!type || failed(refineTo(b, value, type)))
    return failure();
  b.setOutput(i, value);
  return success();
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

LogicalResult buildMatMul(NodeBinder &b) {
  Value lhs = b.input(0), rhs = b.input(1);
  if (!lhs || !rhs)
    return failure();
  // A left operand whose reduced size is known only at run time (an export
  // that reshapes attention heads back with -1) against a right operand
  // that states it: the left one viewed with that size, so that the
  // product gets the register-tiled code of a static reduction. The view
  // is a reshape keeping the other sizes (zeros), whose element count is
  // checked at run time -- a size that differs was an invalid MatMul.
  auto l = dyn_cast<RankedTensorType>(lhs.getType());
  auto r = dyn_cast<RankedTensorType>(rhs.getType());
  if (l && r && l.getRank() >= 2 && r.getRank() >= 2 &&
      l.isDynamicDim(l.getRank() - 1) && !r.isDynamicDim(r.getRank() - 2)) {
    int64_t reduced = r.getDimSize(r.getRank() - 2);
    SmallVector<int64_t> shape(l.getRank(), 0), dims(l.getShape());
    shape.back() = reduced;
    dims.back() = reduced;
    lhs = ReshapeOp::create(b.builder(), b.loc(),
                            RankedTensorType::get(dims, l.getElementType()),
                            lhs, b.i64Tensor(shape), /*allowzero=*/false);
  }
  return buildSimple<MatMulOp>(b, {lhs, rhs});
}

/// Gemm: alpha * op(A) @ op(B) + beta * C, as transposes, matmul, scaling
/// and a broadcasting add. C is skipped when beta is 0 (as onnxruntime does,
/// so that infinities in C do not turn into NaNs).
LogicalResult buildGemm(NodeBinder &b) {
  Value a = b.input(0), w = b.input(1);
  RankedTensorType type = b.outputType(0);
  std::optional<float> alpha = b.floatAttr("alpha", 1.0f);
  std::optional<float> beta = b.floatAttr("beta", 1.0f);
  std::optional<int64_t> transA = b.intAttr("transA", 0);
  std::optional<int64_t> transB = b.intAttr("transB", 0);
  std::optional<int64_t> broadcast = b.intAttr("broadcast", 0);
  if (!a || !w || !type || !alpha || !beta || !transA || !transB || !broadcast)
    return failure();
  Value c = *beta != 0.0f ? b.optionalInput(2) : Value();
  // Before opset 7, C broadcasts only with broadcast=1; without it C must
  // already have the result's shape, which makes the flag irrelevant.
  if (b.opset() < 7 && c && *broadcast == 0 &&
      !areShapesCompatible(tensorType(c).getShape(), type.getShape()))
    return b.emitError() << "C of type " << c.getType()
                         << " needs broadcasting, which attribute "
                            "'broadcast' = 0 forbids";
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
  if (c) {
    if (*beta != 1.0f)
      c = createInferred<MulOp>(b, c, b.scalar(elementType, *beta));
    result = createInferred<AddOp>(b, result, c);
  }
  return finish(b, 0, result);
}

//===----------------------------------------------------------------------===//
// Convolutions
//===----------------------------------------------------------------------===//

/// Builds loom.conv from the node's window attributes.
LogicalResult buildConvFrom(NodeBinder &b, Value x, Value w, Value bias,
                            RankedTensorType type) {
  RankedTensorType in = tensorType(x);
  std::optional<size_t> spatial = spatialRank(b, in);
  std::optional<int64_t> group = b.intAttr("group", 1);
  if (!spatial || !group)
    return failure();
  if (*group < 1)
    return b.emitError() << "attribute 'group' must be positive, got "
                         << *group;
  Window win;
  if (failed(readConvKernel(b, tensorType(w), *spatial, win)) ||
      failed(readStridesDilations(b, *spatial, win)) ||
      failed(resolveForwardPads(b, in, win)))
    return failure();
  b.setOutput(0, ConvOp::create(b.builder(), b.loc(), type, x, w, bias,
                                win.strides, win.pads, win.dilations,
                                static_cast<uint64_t>(*group)));
  return success();
}

LogicalResult buildConv(NodeBinder &b) {
  Value x = b.input(0), w = b.input(1);
  RankedTensorType type = b.outputType(0);
  if (!x || !w || !type)
    return failure();
  return buildConvFrom(b, x, w, b.optionalInput(2), type);
}

/// ConvTranspose. With `output_shape` (or SAME auto_pad, whose output is
/// in * stride) the pads come from
///   total = stride * (in - 1) + output_padding + (k - 1) * dilation + 1 - out
/// split as ONNX specifies: the odd pad goes to the end for SAME_UPPER and
/// to the beginning otherwise. An output larger than the natural size
/// (negative total) grows at the end, as extra output_padding (what
/// onnxruntime computes).
LogicalResult buildConvTranspose(NodeBinder &b) {
  Value x = b.input(0), w = b.input(1);
  RankedTensorType type = b.outputType(0);
  if (!x || !w || !type)
    return failure();
  RankedTensorType in = tensorType(x);
  std::optional<size_t> spatial = spatialRank(b, in);
  std::optional<int64_t> group = b.intAttr("group", 1);
  std::optional<std::string> autoPad = readAutoPad(b);
  if (!spatial || !group || !autoPad)
    return failure();
  size_t k = *spatial;
  if (*group < 1)
    return b.emitError() << "attribute 'group' must be positive, got "
                         << *group;
  Window win;
  if (failed(readConvKernel(b, tensorType(w), k, win)) ||
      failed(readStridesDilations(b, k, win)))
    return failure();
  auto outputPadding = countedInts(b, "output_padding", k, 0, 0);
  if (!outputPadding)
    return failure();

  bool hasOutputShape = b.hasAttr("output_shape");
  bool same = *autoPad == "SAME_UPPER" || *autoPad == "SAME_LOWER";
  win.pads.assign(2 * k, 0);
  if (hasOutputShape || same) {
    SmallVector<int64_t> target;
    if (hasOutputShape) {
      auto shape = b.intsAttr("output_shape");
      if (!shape)
        return failure();
      // Exporters write either the spatial sizes or the whole shape.
      if (shape->size() == k + 2)
        shape->erase(shape->begin(), shape->begin() + 2);
      if (shape->size() != k)
        return b.emitError() << "attribute 'output_shape' must hold " << k
                             << " spatial sizes, got " << shape->size();
      target = *shape;
    }
    for (size_t i = 0; i < k; ++i) {
      int64_t size = in.getDimSize(2 + i);
      if (ShapedType::isDynamic(size))
        return b.emitError() << (hasOutputShape ? "attribute 'output_shape'"
                                                : "auto_pad=" + *autoPad)
                             << " needs static spatial sizes, but spatial axis "
                             << i << " of " << in << " is dynamic";
      int64_t out = hasOutputShape ? target[i] : size * win.strides[i];
      int64_t total = win.strides[i] * (size - 1) + (*outputPadding)[i] +
                      (win.kernel[i] - 1) * win.dilations[i] + 1 - out;
      if (total < 0) {
        (*outputPadding)[i] -= total;
        continue;
      }
      int64_t half = total / 2;
      bool upper = *autoPad == "SAME_UPPER";
      win.pads[i] = upper ? half : total - half;
      win.pads[k + i] = upper ? total - half : half;
    }
  } else if (*autoPad == "NOTSET") {
    auto pads = countedInts(b, "pads", 2 * k, 0, 0);
    if (!pads)
      return failure();
    win.pads = *pads;
  }
  b.setOutput(0, ConvTransposeOp::create(
                     b.builder(), b.loc(), type, x, w, b.optionalInput(2),
                     win.strides, win.pads, win.dilations, *outputPadding,
                     static_cast<uint64_t>(*group)));
  return success();
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

/// The pooling window over `in`'s spatial axes: kernel_shape, strides,
/// dilations and pads (auto_pad resolved).
LogicalResult readPoolWindow(NodeBinder &b, RankedTensorType in, Window &win) {
  std::optional<size_t> spatial = spatialRank(b, in);
  return success(spatial && succeeded(readPoolKernel(b, *spatial, win)) &&
                 succeeded(readStridesDilations(b, *spatial, win)) &&
                 succeeded(resolveForwardPads(b, in, win)));
}

/// MaxPool. A used Indices output (opset 8+) selects
/// loom.max_pool_with_indices, which carries `storage_order`; without it
/// `storage_order` only orders those indices, so it is checked and dropped.
LogicalResult buildMaxPool(NodeBinder &b) {
  Value x = b.input(0);
  RankedTensorType type = b.outputType(0);
  if (!x || !type)
    return failure();
  if (failed(b.rejectOutputsFrom(2, "MaxPool has two outputs")))
    return failure();
  std::optional<int64_t> storageOrder = b.intAttr("storage_order", 0);
  std::optional<int64_t> ceilMode = b.intAttr("ceil_mode", 0);
  if (!storageOrder || !ceilMode)
    return failure();
  if (*storageOrder != 0 && *storageOrder != 1)
    return b.emitError() << "attribute 'storage_order' must be 0 or 1, got "
                         << *storageOrder;
  Window win;
  if (failed(readPoolWindow(b, tensorType(x), win)))
    return failure();
  if (!b.hasOutput(1)) {
    b.setOutput(0, MaxPoolOp::create(b.builder(), b.loc(), type, x, win.kernel,
                                     win.strides, win.pads, win.dilations,
                                     *ceilMode != 0));
    return success();
  }
  RankedTensorType indicesType = b.outputType(1);
  if (!indicesType)
    return failure();
  if (!indicesType.getElementType().isInteger(64))
    return b.emitError() << "output 1 (Indices) must be int64, got "
                         << indicesType;
  auto op = MaxPoolWithIndicesOp::create(
      b.builder(), b.loc(), type, indicesType, x, win.kernel, win.strides,
      win.pads, win.dilations, *ceilMode != 0,
      static_cast<uint64_t>(*storageOrder));
  b.setOutputs(op->getResults());
  return success();
}

/// AveragePool (`dilations` is read too, for the opset-19 form).
LogicalResult buildAveragePool(NodeBinder &b) {
  Value x = b.input(0);
  RankedTensorType type = b.outputType(0);
  std::optional<int64_t> ceilMode = b.intAttr("ceil_mode", 0);
  std::optional<int64_t> countIncludePad = b.intAttr("count_include_pad", 0);
  if (!x || !type || !ceilMode || !countIncludePad)
    return failure();
  Window win;
  if (failed(readPoolWindow(b, tensorType(x), win)))
    return failure();
  b.setOutput(0, AvgPoolOp::create(b.builder(), b.loc(), type, x, win.kernel,
                                   win.strides, win.pads, win.dilations,
                                   *ceilMode != 0, *countIncludePad != 0));
  return success();
}

/// LpPool: (sum of |x|^p over each window)^(1/p), the window sums being
/// average pools that count the zero pads, times the window's tap count.
/// `ceil_mode` (LpPool-18+) is refused: there the last window may hang past
/// the pads, and the average would count taps that do not exist.
LogicalResult buildLpPool(NodeBinder &b) {
  Value x = b.input(0);
  RankedTensorType type = b.outputType(0);
  std::optional<int64_t> p = b.intAttr("p", 2);
  std::optional<int64_t> ceilMode = b.intAttr("ceil_mode", 0);
  if (!x || !type || !p || !ceilMode)
    return failure();
  Type element = type.getElementType();
  if (!isa<FloatType>(element))
    return b.emitError() << "input 0 must be a float tensor, not "
                         << tensorType(x);
  if (*p <= 0)
    return b.emitError() << "attribute 'p' must be positive, got " << *p;
  if (*ceilMode != 0)
    return b.fail("ceil_mode = 1 is not supported");
  Window win;
  if (failed(readPoolWindow(b, tensorType(x), win)))
    return failure();
  Value powered = *p == 2 ? createInferred<MulOp>(b, x, x)
                  : *p == 1
                      ? createInferred<AbsOp>(b, x)
                      : createInferred<PowOp>(b, createInferred<AbsOp>(b, x),
                                              b.scalar(element, double(*p)));
  Value mean = AvgPoolOp::create(b.builder(), b.loc(), type, powered,
                                 win.kernel, win.strides, win.pads,
                                 win.dilations, /*ceil_mode=*/false,
                                 /*count_include_pad=*/true);
  int64_t taps = 1;
  for (int64_t size : win.kernel)
    taps *= size;
  Value sum = createInferred<MulOp>(b, mean, b.scalar(element, double(taps)));
  Value norm = *p == 1 ? sum
               : *p == 2
                   ? createInferred<SqrtOp>(b, sum)
                   : createInferred<PowOp>(b, sum, b.scalar(element, 1.0 / *p));
  return bindRefined(b, norm);
}

/// GlobalAveragePool / GlobalMaxPool: a reduction over the spatial axes
/// that keeps them as size-1 dimensions.
template <typename ReduceOpT> LogicalResult buildGlobalPool(NodeBinder &b) {
  Value x = b.input(0);
  RankedTensorType type = b.outputType(0);
  if (!x || !type || !spatialRank(b, tensorType(x)))
    return failure();
  auto &builder = b.builder();
  return buildSimple<ReduceOpT>(
      b, {x},
      {builder.getNamedAttr("axes", builder.getDenseI64ArrayAttr(
                                        iota(2, tensorType(x).getRank()))),
       builder.getNamedAttr("keepdims", builder.getBoolAttr(true))});
}

/// MaxUnpool: scatters X into zeros of the default output shape
/// (in - 1) * stride + kernel - pads at the flat indices I (which index the
/// whole tensor, batch and channels included, as MaxPool's Indices do). A
/// larger `output_shape` pads that result at the end of each axis, as
/// onnxruntime does. Needs static shapes.
LogicalResult buildMaxUnpool(NodeBinder &b) {
  Value x = b.input(0), indices = b.input(1);
  RankedTensorType type = b.outputType(0);
  if (!x || !indices || !type)
    return failure();
  RankedTensorType in = tensorType(x);
  std::optional<size_t> spatial = spatialRank(b, in);
  if (!spatial)
    return failure();
  Window win;
  if (failed(readPoolKernel(b, *spatial, win)) ||
      failed(readStridesDilations(b, *spatial, win, /*hasDilations=*/false)))
    return failure();
  auto pads = countedInts(b, "pads", 2 * *spatial, 0, 0);
  if (!pads)
    return failure();
  if (!in.hasStaticShape())
    return b.emitError() << "MaxUnpool needs a static input shape, got " << in;
  SmallVector<int64_t> shape(in.getShape().take_front(2));
  for (size_t i = 0; i < *spatial; ++i)
    shape.push_back((in.getDimSize(2 + i) - 1) * win.strides[i] +
                    win.kernel[i] - (*pads)[i] - (*pads)[*spatial + i]);
  SmallVector<int64_t> target = shape;
  if (b.hasInput(2)) {
    if (std::optional<SmallVector<int64_t>> given = b.constantInts(2))
      target = *given;
    else if (type.hasStaticShape())
      target = SmallVector<int64_t>(type.getShape());
    else
      return b.fail("input 2 ('output_shape') must be a constant, or the "
                    "output shape must be static");
    if (target.size() != shape.size())
      return b.emitError() << "'output_shape' must hold " << shape.size()
                           << " values, got " << target.size();
  }
  SmallVector<int64_t> growth(shape.size(), 0);
  for (size_t i = 0; i < shape.size(); ++i) {
    if (target[i] < shape[i] || (i < 2 && target[i] != shape[i]))
      return b.emitError() << "'output_shape' must keep N and C and not be "
                              "smaller than the default output shape";
    growth[i] = target[i] - shape[i];
  }
  int64_t total = product(shape);
  Value flatIndices = castTo(b, reshapeTo(b, indices, {ShapedType::kDynamic}),
                             b.builder().getI64Type());
  Value flatValues = reshapeTo(b, x, {ShapedType::kDynamic});
  auto flatType = RankedTensorType::get({total}, in.getElementType());
  Value scattered = ScatterElementsOp::create(
      b.builder(), b.loc(), flatType, b.splat(flatType, 0), flatIndices,
      flatValues, static_cast<uint64_t>(0), "none");
  Value result = reshapeTo(b, scattered, shape);
  if (llvm::any_of(growth, [](int64_t g) { return g != 0; })) {
    SmallVector<int64_t> padSpec(shape.size(), 0);
    llvm::append_range(padSpec, growth);
    result = PadOp::create(b.builder(), b.loc(), withShape(in, target), result,
                           b.i64Tensor(padSpec), Value(), "constant");
  }
  return finish(b, 0, result);
}

//===----------------------------------------------------------------------===//
// Normalizations
//===----------------------------------------------------------------------===//

/// BatchNormalization.
///
/// Inference (the common case) is loom.batch_norm. Legacy forms:
/// - opset < 7 `is_test`: the outputs decide the mode; a node with only Y is
///   the spec's test-mode case, whatever `is_test` says.
/// - opset < 9 `spatial` = 0: per-activation statistics of shape
///   [C, D1, ...], decomposed into broadcasting arithmetic.
/// - opset < 14 extra outputs (training statistics) are not supported.
/// Training mode (opset >= 14, training_mode = 1) is deterministic and
/// decomposed: batch statistics over all axes but 1 (population variance)
/// feed loom.batch_norm, and the running statistics are
/// `input * momentum + current * (1 - momentum)`.
LogicalResult buildBatchNorm(NodeBinder &b) {
  Value x = b.input(0), scale = b.input(1), bias = b.input(2),
        mean = b.input(3), var = b.input(4);
  RankedTensorType type = b.outputType(0);
  std::optional<float> epsilon = b.floatAttr("epsilon", 1e-5f);
  std::optional<float> momentum = b.floatAttr("momentum", 0.9f);
  std::optional<int64_t> spatial = b.intAttr("spatial", 1);
  std::optional<int64_t> training = b.intAttr("training_mode", 0);
  if (!x || !scale || !bias || !mean || !var || !type || !epsilon ||
      !momentum || !spatial || !training)
    return failure();
  RankedTensorType in = tensorType(x);
  if (in.getRank() < 2)
    return b.emitError() << "expects an input of rank >= 2 (N, C, ...), got "
                         << in;
  if (b.opset() < 14 &&
      failed(b.rejectOutputsFrom(1, "the training outputs of "
                                    "BatchNormalization before opset 14 are "
                                    "not supported")))
    return failure();
  Type elementType = in.getElementType();

  if (b.opset() < 9 && *spatial == 0 && tensorType(scale).getRank() > 1) {
    // (x - mean) / sqrt(var + eps) * scale + bias, parameters [C, D1, ...].
    auto cast = [&](Value v) { return castTo(b, v, elementType); };
    Value eps = b.scalar(elementType, *epsilon);
    Value centered = createInferred<SubOp>(b, x, cast(mean));
    Value stddev =
        createInferred<SqrtOp>(b, createInferred<AddOp>(b, cast(var), eps));
    Value y = createInferred<DivOp>(b, centered, stddev);
    y = createInferred<MulOp>(b, y, cast(scale));
    y = createInferred<AddOp>(b, y, cast(bias));
    return finish(b, 0, y);
  }

  if (*training == 0) {
    if (failed(b.rejectOutputsFrom(1, "running statistics are only produced "
                                      "in training mode")))
      return failure();
    b.setOutput(0, BatchNormOp::create(b.builder(), b.loc(), type, x, scale,
                                       bias, mean, var,
                                       b.builder().getF32FloatAttr(*epsilon)));
    return success();
  }

  SmallVector<int64_t> axes{0};
  llvm::append_range(axes, iota(2, in.getRank()));
  auto &builder = b.builder();
  DenseI64ArrayAttr axesAttr = builder.getDenseI64ArrayAttr(axes);
  Value meanKept =
      createInferred<ReduceMeanOp>(b, x, axesAttr, builder.getBoolAttr(true));
  Value centered = createInferred<SubOp>(b, x, meanKept);
  Value squares = createInferred<MulOp>(b, centered, centered);
  Value varKept = createInferred<ReduceMeanOp>(b, squares, axesAttr,
                                               builder.getBoolAttr(true));
  Value batchMean = createInferred<SqueezeOp>(b, meanKept, axesAttr);
  Value batchVar = createInferred<SqueezeOp>(b, varKept, axesAttr);
  b.setOutput(0, BatchNormOp::create(builder, b.loc(), type, x, scale, bias,
                                     batchMean, batchVar,
                                     builder.getF32FloatAttr(*epsilon)));
  // running = input * momentum + current * (1 - momentum)
  Value m, rest;
  auto running = [&](size_t output, Value input, Value current) {
    if (!b.hasOutput(output))
      return success();
    Type statType = tensorType(input).getElementType();
    if (!m || tensorType(m).getElementType() != statType) {
      m = b.scalar(statType, *momentum);
      rest = b.scalar(statType, 1.0 - static_cast<double>(*momentum));
    }
    Value value = createInferred<AddOp>(
        b, createInferred<MulOp>(b, input, m),
        createInferred<MulOp>(b, castTo(b, current, statType), rest));
    return finish(b, output, value);
  };
  if (failed(running(1, mean, batchMean)) || failed(running(2, var, batchVar)))
    return failure();
  return success();
}

LogicalResult buildInstanceNorm(NodeBinder &b) {
  Value x = b.input(0), scale = b.input(1), bias = b.input(2);
  RankedTensorType type = b.outputType(0);
  std::optional<float> epsilon = b.floatAttr("epsilon", 1e-5f);
  if (!x || !scale || !bias || !type || !epsilon)
    return failure();
  if (!spatialRank(b, tensorType(x)))
    return failure();
  b.setOutput(0,
              InstanceNormOp::create(b.builder(), b.loc(), type, x, scale, bias,
                                     b.builder().getF32FloatAttr(*epsilon)));
  return success();
}

/// LayerNormalization-17. Y is loom.layer_norm, which computes its
/// statistics in at least f32 whatever `stash_type` says (stash_type only
/// widens them for narrower inputs, so it is read and otherwise ignored).
/// When the Mean or InvStdDev outputs are used they are computed apart, in
/// their inferred element type (the stash type): reductions over
/// [axis, rank) with keepdims, and 1 / sqrt(var + epsilon).
LogicalResult buildLayerNorm(NodeBinder &b) {
  Value x = b.input(0), scale = b.input(1);
  Value bias = b.optionalInput(2);
  RankedTensorType type = b.outputType(0);
  std::optional<int64_t> axis = b.intAttr("axis", -1);
  std::optional<float> epsilon = b.floatAttr("epsilon", 1e-5f);
  std::optional<int64_t> stashType = b.intAttr("stash_type", 1);
  if (!x || !scale || !type || !axis || !epsilon || !stashType)
    return failure();
  RankedTensorType in = tensorType(x);
  std::optional<int64_t> a = normalizeAxisOrFail(b, *axis, in.getRank());
  if (!a)
    return failure();
  auto &builder = b.builder();
  b.setOutput(0, LayerNormOp::create(builder, b.loc(), type, x, scale, bias,
                                     builder.getI64IntegerAttr(*a),
                                     builder.getF32FloatAttr(*epsilon)));
  if (!b.hasOutput(1) && !b.hasOutput(2))
    return success();

  RankedTensorType statType = b.outputType(b.hasOutput(1) ? 1 : 2);
  if (!statType)
    return failure();
  Type stash = statType.getElementType();
  DenseI64ArrayAttr axes = builder.getDenseI64ArrayAttr(iota(*a, in.getRank()));
  Value xs = castTo(b, x, stash);
  Value mean =
      createInferred<ReduceMeanOp>(b, xs, axes, builder.getBoolAttr(true));
  if (b.hasOutput(1) && failed(finish(b, 1, mean)))
    return failure();
  if (!b.hasOutput(2))
    return success();
  Value centered = createInferred<SubOp>(b, xs, mean);
  Value var = createInferred<ReduceMeanOp>(
      b, createInferred<MulOp>(b, centered, centered), axes,
      builder.getBoolAttr(true));
  Value stddev = createInferred<SqrtOp>(
      b, createInferred<AddOp>(b, var, b.scalar(stash, *epsilon)));
  return finish(b, 2, createInferred<ReciprocalOp>(b, stddev));
}

//===----------------------------------------------------------------------===//
// Softmax, LogSoftmax, Hardmax
//===----------------------------------------------------------------------===//

/// Builds an op along `axis` of a value; null after an error.
using AlongAxisFn = function_ref<Value(Value, int64_t)>;

/// The opset < 13 form: the input is coerced to 2-D
/// [prod(dims[:axis]), prod(dims[axis:])], the op runs along axis 1 and the
/// result takes the input's shape again. When `axis` is the last axis this
/// is the op along that axis and no reshape is needed.
LogicalResult buildCoerced2D(NodeBinder &b, AlongAxisFn along) {
  Value x = b.input(0);
  RankedTensorType type = b.outputType(0);
  std::optional<int64_t> axis = b.intAttr("axis", 1);
  if (!x || !type || !axis)
    return failure();
  RankedTensorType in = tensorType(x);
  if (in.getRank() == 0)
    return b.fail("expects an input of rank >= 1");
  std::optional<int64_t> a = normalizeAxisOrFail(b, *axis, in.getRank());
  if (!a)
    return failure();
  if (*a == in.getRank() - 1) {
    Value y = along(x, *a);
    return y ? finish(b, 0, y) : failure();
  }
  int64_t rows = product(in.getShape().take_front(*a));
  int64_t cols = product(in.getShape().drop_front(*a));
  if (ShapedType::isDynamic(rows) && ShapedType::isDynamic(cols))
    return b.emitError() << "coercing " << in << " to 2-D at axis " << *a
                         << " needs static sizes before or from the axis";
  Value flat = reshapeTo(b, x, {rows, cols});
  Value y = along(flat, 1);
  if (!y)
    return failure();
  b.setOutput(0, reshapeLike(b, y, x, type));
  return success();
}

template <typename OpT> LogicalResult buildSoftmax(NodeBinder &b) {
  auto along = [&](Value v, int64_t axis) -> Value {
    return OpT::create(b.builder(), b.loc(), v.getType(), v,
                       b.builder().getI64IntegerAttr(axis));
  };
  if (b.opset() < 13)
    return buildCoerced2D(b, along);
  Value x = b.input(0);
  RankedTensorType type = b.outputType(0);
  std::optional<int64_t> axis = b.intAttr("axis", -1);
  if (!x || !type || !axis)
    return failure();
  std::optional<int64_t> a =
      normalizeAxisOrFail(b, *axis, tensorType(x).getRank());
  if (!a)
    return failure();
  return finish(b, 0, along(x, *a));
}

/// Hardmax along `axis`: 1 where the first maximum is, 0 elsewhere, as
/// equal(argmax(x, keepdims), iota along the axis) selecting 1 or 0.
Value hardmaxAlong(NodeBinder &b, Value x, int64_t axis) {
  RankedTensorType t = tensorType(x);
  int64_t size = t.getDimSize(axis);
  if (ShapedType::isDynamic(size)) {
    b.emitError() << "Hardmax needs a static size along axis " << axis << " of "
                  << t;
    return {};
  }
  auto &builder = b.builder();
  Type i64 = builder.getI64Type();
  SmallVector<int64_t> kept(t.getShape());
  kept[axis] = 1;
  Value argmax =
      ArgMaxOp::create(builder, b.loc(), RankedTensorType::get(kept, i64), x,
                       static_cast<uint64_t>(axis),
                       /*keepdims=*/true,
                       /*select_last_index=*/false);
  SmallVector<int64_t> positionsShape(t.getRank(), 1);
  positionsShape[axis] = size;
  SmallVector<int64_t> positions = iota(0, size);
  ElementsAttr positionsAttr = DenseElementsAttr::get(
      RankedTensorType::get(positionsShape, i64), ArrayRef<int64_t>(positions));
  Value range = ConstantOp::create(builder, b.loc(), positionsAttr);
  Value hit = createInferred<EqualOp>(b, argmax, range);
  Type elementType = t.getElementType();
  return createInferred<WhereOp>(b, hit, b.scalar(elementType, 1),
                                 b.scalar(elementType, 0));
}

LogicalResult buildHardmax(NodeBinder &b) {
  auto along = [&](Value v, int64_t axis) { return hardmaxAlong(b, v, axis); };
  if (b.opset() < 13)
    return buildCoerced2D(b, along);
  Value x = b.input(0);
  std::optional<int64_t> axis = b.intAttr("axis", -1);
  if (!x || !axis)
    return failure();
  std::optional<int64_t> a =
      normalizeAxisOrFail(b, *axis, tensorType(x).getRank());
  if (!a)
    return failure();
  Value y = hardmaxAlong(b, x, *a);
  return y ? finish(b, 0, y) : failure();
}

//===----------------------------------------------------------------------===//
// Resize and Upsample
//===----------------------------------------------------------------------===//

/// The operands and attributes of a loom.resize. `scales` and `roi` are
/// values; `knownScales` holds the scales when they are known at import.
struct ResizeConfig {
  Value scales, roi;
  /// The result type when the importer computed it (keep_aspect_ratio_policy
  /// rounds the sizes its own way); null: the node's inferred output type.
  RankedTensorType resultType;
  std::optional<SmallVector<float>> knownScales;
  std::string mode = "nearest";
  std::string coordinateMode = "half_pixel";
  std::string nearestMode = "round_prefer_floor";
  float cubicCoeffA = -0.75f;
  bool excludeOutside = false;
  float extrapolationValue = 0.0f;
};

/// A 1-D f32 constant.
Value f32Tensor(NodeBinder &b, ArrayRef<float> values) {
  auto type = RankedTensorType::get({static_cast<int64_t>(values.size())},
                                    b.builder().getF32Type());
  return ConstantOp::create(b.builder(), b.loc(),
                            DenseElementsAttr::get(type, values));
}

/// Input `i` (named `name` in errors) as the 1-D f32 tensor loom.resize
/// takes: the input itself when it is one, a converted constant when its
/// values are known, a cast otherwise (ONNX allows f16/f64 roi). Stores the
/// values in `known` when they are known. Null after an error.
Value f32VectorInput(NodeBinder &b, size_t i, StringRef name,
                     std::optional<SmallVector<float>> &known) {
  Value v = b.input(i);
  if (!v)
    return {};
  RankedTensorType t = tensorType(v);
  if (t.getRank() != 1 || !isa<FloatType>(t.getElementType())) {
    b.emitError() << "input " << i << " ('" << name
                  << "') must be a 1-D float tensor, got " << t;
    return {};
  }
  if (std::optional<SmallVector<double>> values = b.constantFloats(i)) {
    known = SmallVector<float>(values->begin(), values->end());
    if (!t.getElementType().isF32())
      return f32Tensor(b, *known);
    return v;
  }
  return castTo(b, v, b.builder().getF32Type());
}

/// `values` (1-D f32, one per listed position, `known` when constant)
/// spread over a vector of `size`: value i at `positions[i]`, the others
/// `other` (one value for all, or two: the first half and the second).
Value spreadOverAxes(NodeBinder &b, Value values,
                     const std::optional<SmallVector<float>> &known,
                     ArrayRef<int64_t> positions, int64_t size,
                     ArrayRef<float> other) {
  SmallVector<float> full(size, other.front());
  if (other.size() == 2)
    std::fill(full.begin() + size / 2, full.end(), other.back());
  if (known) {
    for (auto [i, position] : llvm::enumerate(positions))
      full[position] = (*known)[i];
    return f32Tensor(b, full);
  }
  auto count = static_cast<int64_t>(positions.size());
  auto f32Vector = [&](int64_t n) {
    return RankedTensorType::get({n}, b.builder().getF32Type());
  };
  if (tensorType(values).isDynamicDim(0))
    values =
        tensor::CastOp::create(b.builder(), b.loc(), f32Vector(count), values);
  return ScatterElementsOp::create(b.builder(), b.loc(), f32Vector(size),
                                   f32Tensor(b, full), b.i64Tensor(positions),
                                   values, static_cast<uint64_t>(0), "none");
}

/// The scales of keep_aspect_ratio_policy for sizes known only at run
/// time: sizes / input sizes on the listed axes, their minimum
/// (not_larger) or maximum (not_smaller) for every listed axis, 1 on the
/// others.
Value runTimeAspectScales(NodeBinder &b, Value sizes, RankedTensorType in,
                          ArrayRef<int64_t> axes, bool notLarger) {
  Type f32 = b.builder().getF32Type();
  SmallVector<float> inputSizes;
  for (int64_t axis : axes)
    inputSizes.push_back(static_cast<float>(in.getDimSize(axis)));
  auto count = static_cast<int64_t>(axes.size());
  auto vectorType = RankedTensorType::get({count}, f32);
  Value sizesF32 = castTo(b, sizes, f32);
  if (tensorType(sizesF32).isDynamicDim(0))
    sizesF32 =
        tensor::CastOp::create(b.builder(), b.loc(), vectorType, sizesF32);
  Value ratios = createInferred<DivOp>(b, sizesF32, f32Tensor(b, inputSizes));
  auto axis0 = b.builder().getDenseI64ArrayAttr({0});
  auto keep = b.builder().getBoolAttr(true);
  Value scale = notLarger ? createInferred<ReduceMinOp>(b, ratios, axis0, keep)
                          : createInferred<ReduceMaxOp>(b, ratios, axis0, keep);
  Value perAxis = createInferred<MulOp>(
      b, f32Tensor(b, SmallVector<float>(count, 1.0f)), scale);
  return spreadOverAxes(b, perAxis, std::nullopt, axes, in.getRank(),
                        /*other=*/{1.0f});
}

LogicalResult emitResize(NodeBinder &b, Value x, const ResizeConfig &config) {
  RankedTensorType type =
      config.resultType ? config.resultType : b.outputType(0);
  if (!type || !config.scales)
    return failure();
  int64_t rank = tensorType(x).getRank();
  RankedTensorType scalesType = tensorType(config.scales);
  if (!scalesType.isDynamicDim(0) && scalesType.getDimSize(0) != rank)
    return b.emitError() << "expects " << rank << " scales (one per axis), got "
                         << scalesType.getDimSize(0);
  if (config.knownScales)
    for (float s : *config.knownScales)
      if (!(s > 0.0f) || !std::isfinite(s))
        return b.emitError() << "scales must be positive, got " << s;
  if (config.roi) {
    RankedTensorType roiType = tensorType(config.roi);
    if (!roiType.isDynamicDim(0) && roiType.getDimSize(0) != 2 * rank)
      return b.emitError() << "'roi' must hold " << 2 * rank << " values, got "
                           << roiType.getDimSize(0);
  }
  if (!llvm::is_contained({"nearest", "linear", "cubic"}, config.mode))
    return b.emitError() << "attribute 'mode' must be \"nearest\", \"linear\" "
                            "or \"cubic\", got \""
                         << config.mode << "\"";
  if (!llvm::is_contained({"half_pixel", "half_pixel_symmetric",
                           "pytorch_half_pixel", "align_corners", "asymmetric",
                           "tf_half_pixel_for_nn", "tf_crop_and_resize"},
                          config.coordinateMode))
    return b.emitError() << "attribute 'coordinate_transformation_mode' = \""
                         << config.coordinateMode << "\" is not supported";
  if (!llvm::is_contained(
          {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"},
          config.nearestMode))
    return b.emitError() << "attribute 'nearest_mode' = \""
                         << config.nearestMode << "\" is not supported";
  auto &builder = b.builder();
  b.setOutput(
      0, ResizeOp::create(builder, b.loc(), type, x, config.scales, config.roi,
                          builder.getStringAttr(config.mode),
                          builder.getStringAttr(config.coordinateMode),
                          builder.getStringAttr(config.nearestMode),
                          builder.getF32FloatAttr(config.cubicCoeffA),
                          builder.getBoolAttr(config.excludeOutside),
                          builder.getF32FloatAttr(config.extrapolationValue)));
  return success();
}

/// Resize-10 and Upsample share one legacy sampling: source coordinates are
/// `out / scale` ("asymmetric"); nearest picks floor when upsampling and
/// ceil when downsampling (onnxruntime's rule; an axis can only have one).
/// Run-time scales are fine for linear; for nearest the direction comes from
/// the static input and output sizes (out < in exactly when scale < 1, and
/// at scale 1 floor and ceil agree).
LogicalResult emitLegacyResize(NodeBinder &b, Value x, ResizeConfig config) {
  std::optional<std::string> mode = b.stringAttr("mode", "nearest");
  if (!mode)
    return failure();
  if (*mode != "nearest" && *mode != "linear")
    return b.emitError() << "attribute 'mode' must be \"nearest\" or "
                            "\"linear\", got \""
                         << *mode << "\"";
  config.mode = *mode;
  config.coordinateMode = "asymmetric";
  if (config.mode != "nearest")
    return emitResize(b, x, config);
  bool down = false, up = false;
  if (config.knownScales) {
    down = llvm::any_of(*config.knownScales, [](float s) { return s < 1.0f; });
    up = llvm::any_of(*config.knownScales, [](float s) { return s > 1.0f; });
  } else {
    RankedTensorType in = tensorType(x), out = b.knownOutputType(0);
    if (!out || !in.hasStaticShape() || !out.hasStaticShape() ||
        in.getRank() != out.getRank())
      return b.fail("nearest resizing with run-time scales needs static input "
                    "and output shapes before opset 11 (to choose between "
                    "rounding down and up)");
    for (int64_t i = 0; i < in.getRank(); ++i) {
      down |= out.getDimSize(i) < in.getDimSize(i);
      up |= out.getDimSize(i) > in.getDimSize(i);
    }
  }
  if (down && up)
    return b.fail("nearest resizing that upsamples some axes and downsamples "
                  "others is not supported before opset 11");
  config.nearestMode = down ? "ceil" : "floor";
  return emitResize(b, x, config);
}

LogicalResult buildUpsample(NodeBinder &b) {
  Value x = b.input(0);
  if (!x)
    return failure();
  ResizeConfig config;
  if (b.opset() < 9) {
    if (!b.hasAttr("scales"))
      return b.fail("attribute 'scales' is required");
    config.knownScales = b.floatsAttr("scales");
    if (!config.knownScales)
      return failure();
    config.scales = f32Tensor(b, *config.knownScales);
  } else {
    config.scales = f32VectorInput(b, 1, "scales", config.knownScales);
    if (!config.scales)
      return failure();
  }
  return emitLegacyResize(b, x, config);
}

/// Resize-10/11/13. Scales may be computed at run time. Sizes become
/// per-axis scales out / in (ONNX's definition when sizes are given), from
/// the constant sizes or, failing that, from static input and output shapes.
/// `roi` is read only for tf_crop_and_resize, where it is required.
LogicalResult buildResize(NodeBinder &b) {
  Value x = b.input(0);
  if (!x)
    return failure();
  RankedTensorType in = tensorType(x);
  int64_t rank = in.getRank();
  ResizeConfig config;
  if (b.opset() < 11) {
    config.scales = f32VectorInput(b, 1, "scales", config.knownScales);
    if (!config.scales)
      return failure();
    return emitLegacyResize(b, x, config);
  }

  std::optional<std::string> mode = b.stringAttr("mode", "nearest");
  std::optional<std::string> coordinateMode =
      b.stringAttr("coordinate_transformation_mode", "half_pixel");
  std::optional<std::string> nearestMode =
      b.stringAttr("nearest_mode", "round_prefer_floor");
  std::optional<float> cubicCoeffA = b.floatAttr("cubic_coeff_a", -0.75f);
  std::optional<int64_t> excludeOutside = b.intAttr("exclude_outside", 0);
  std::optional<float> extrapolation = b.floatAttr("extrapolation_value", 0.0f);
  if (!mode || !coordinateMode || !nearestMode || !cubicCoeffA ||
      !excludeOutside || !extrapolation)
    return failure();
  // Resize-18's antialias changes the filter, which loom.resize does not
  // model: refuse it rather than resize differently.
  std::optional<int64_t> antialias = b.intAttr("antialias", 0);
  std::optional<std::string> aspect =
      b.stringAttr("keep_aspect_ratio_policy", "stretch");
  if (!antialias || !aspect)
    return failure();
  if (*antialias != 0)
    return b.fail("antialias = 1 is not supported");
  if (!llvm::is_contained({"stretch", "not_larger", "not_smaller"}, *aspect))
    return b.fail("keep_aspect_ratio_policy \"" + *aspect +
                  "\" is not one of \"stretch\", \"not_larger\" and "
                  "\"not_smaller\"");
  // Resize-18's axes: scales, sizes and roi then name only these axes, in
  // this order; the others keep their size (scale 1, roi [0, 1]).
  SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  bool allAxes = true;
  if (b.hasAttr("axes")) {
    std::optional<SmallVector<int64_t>> listed = b.intsAttr("axes");
    if (!listed)
      return failure();
    axes.clear();
    for (int64_t axis : *listed) {
      std::optional<int64_t> normalized = normalizeAxisOrFail(b, axis, rank);
      if (!normalized)
        return failure();
      if (llvm::is_contained(axes, *normalized))
        return b.emitError() << "axis " << axis << " is listed twice";
      axes.push_back(*normalized);
    }
    allAxes = false;
  }
  int64_t count = axes.size();
  config.mode = *mode;
  config.coordinateMode = *coordinateMode;
  config.nearestMode = *nearestMode;
  config.cubicCoeffA = *cubicCoeffA;
  config.excludeOutside = *excludeOutside != 0;
  config.extrapolationValue = *extrapolation;

  // An empty tensor stands for an absent scales or sizes (Resize-11 had to
  // pass one for scales when giving sizes).
  auto isEmpty = [&](size_t i) {
    RankedTensorType t = tensorType(b.optionalInput(i));
    return t.getRank() == 1 && t.getDimSize(0) == 0;
  };
  auto checkCount = [&](Value v, StringRef name,
                        int64_t perAxis) -> LogicalResult {
    RankedTensorType t = tensorType(v);
    if (t.getRank() == 1 &&
        (t.isDynamicDim(0) || t.getDimSize(0) == perAxis * count))
      return success();
    return b.emitError() << "'" << name << "' must hold " << perAxis * count
                         << " values ("
                         << (perAxis == 2 ? "2 per " : "one per ")
                         << (allAxes ? "axis" : "listed axis") << "), got "
                         << t;
  };
  bool hasScales = b.hasInput(2) && !isEmpty(2);
  bool hasSizes = b.hasInput(3) && !isEmpty(3);
  if (hasScales && hasSizes)
    return b.fail("only one of 'scales' and 'sizes' may be given");
  if (hasScales) {
    config.scales = f32VectorInput(b, 2, "scales", config.knownScales);
    if (!config.scales || failed(checkCount(config.scales, "scales", 1)))
      return failure();
    if (!allAxes) {
      config.scales = spreadOverAxes(b, config.scales, config.knownScales, axes,
                                     rank, /*other=*/{1.0f});
      if (config.knownScales) {
        SmallVector<float> full(rank, 1.0f);
        for (auto [i, axis] : llvm::enumerate(axes))
          full[axis] = (*config.knownScales)[i];
        config.knownScales = full;
      }
    }
  } else if (hasSizes) {
    RankedTensorType sizesType = b.inputType(3);
    if (!sizesType || failed(checkCount(b.input(3), "sizes", 1)))
      return failure();
    for (int64_t axis : axes)
      if (in.isDynamicDim(axis) || in.getDimSize(axis) == 0)
        return b.emitError() << "'sizes' needs static, non-zero input sizes, "
                                "but axis "
                             << axis << " of " << in << " is not";
    std::optional<SmallVector<int64_t>> sizes = b.constantInts(3);
    if (!sizes && *aspect == "stretch") {
      // A computed 'sizes' is fine when inference knows the output shape.
      RankedTensorType out = b.knownOutputType(0);
      if (!out || !out.hasStaticShape())
        return b.fail("input 3 ('sizes') must be a constant, or the output "
                      "shape must be static");
      sizes.emplace();
      for (int64_t axis : axes)
        sizes->push_back(out.getDimSize(axis));
    }
    if (sizes) {
      // Per-axis scales out / in, made one scale for the listed axes by
      // the policy; the sizes are then round-half-up(scale * in).
      SmallVector<float> scales(rank, 1.0f);
      for (auto [i, axis] : llvm::enumerate(axes))
        scales[axis] = static_cast<float>((*sizes)[i]) /
                       static_cast<float>(in.getDimSize(axis));
      if (*aspect != "stretch") {
        float scale = scales[axes.front()];
        for (int64_t axis : axes)
          scale = *aspect == "not_larger" ? std::min(scale, scales[axis])
                                          : std::max(scale, scales[axis]);
        SmallVector<int64_t> shape(in.getShape());
        for (int64_t axis : axes) {
          scales[axis] = scale;
          shape[axis] = static_cast<int64_t>(
              scale * static_cast<float>(in.getDimSize(axis)) + 0.5f);
        }
        config.resultType = RankedTensorType::get(shape, in.getElementType());
      }
      config.knownScales = scales;
      config.scales = f32Tensor(b, scales);
    } else {
      // keep_aspect_ratio_policy with sizes known only at run time: the
      // scale is computed then, and the sizes are the declared ones.
      RankedTensorType out = b.knownOutputType(0);
      if (!out || !out.hasStaticShape())
        return b.fail("with keep_aspect_ratio_policy, input 3 ('sizes') "
                      "must be a constant or the output shape static");
      config.scales =
          runTimeAspectScales(b, b.input(3), in, axes, *aspect == "not_larger");
    }
  } else {
    return b.fail("one of 'scales' and 'sizes' is required");
  }

  if (config.coordinateMode == "tf_crop_and_resize") {
    if (!b.hasInput(1))
      return b.fail("input 1 ('roi') is required for tf_crop_and_resize");
    std::optional<SmallVector<float>> knownRoi;
    config.roi = f32VectorInput(b, 1, "roi", knownRoi);
    if (!config.roi || failed(checkCount(config.roi, "roi", 2)))
      return failure();
    if (!allAxes) {
      // Begins, then ends: a listed axis's pair goes to `axis` and
      // `rank + axis`; the others keep [0, 1].
      SmallVector<int64_t> positions(axes);
      for (int64_t axis : axes)
        positions.push_back(rank + axis);
      config.roi = spreadOverAxes(b, config.roi, knownRoi, positions, 2 * rank,
                                  /*other=*/{0.0f, 1.0f});
    }
  }
  return emitResize(b, x, config);
}

//===----------------------------------------------------------------------===//
// DepthToSpace, SpaceToDepth
//===----------------------------------------------------------------------===//

/// Reads `blocksize` and checks the input is [N, C, H, W] with static C, H
/// and W (N may be dynamic).
std::optional<int64_t> readBlockSize(NodeBinder &b, RankedTensorType in) {
  if (!b.hasAttr("blocksize")) {
    b.emitError() << "attribute 'blocksize' is required";
    return std::nullopt;
  }
  std::optional<int64_t> block = b.intAttr("blocksize", 1);
  if (!block)
    return std::nullopt;
  if (*block < 1) {
    b.emitError() << "attribute 'blocksize' must be positive, got " << *block;
    return std::nullopt;
  }
  if (in.getRank() != 4) {
    b.emitError() << "expects a 4-D input [N, C, H, W], got " << in;
    return std::nullopt;
  }
  if (llvm::any_of(in.getShape().drop_front(), ShapedType::isDynamic)) {
    b.emitError() << "needs static C, H and W, got " << in;
    return std::nullopt;
  }
  return block;
}

/// DepthToSpace as reshape, transpose, reshape:
///   DCR: [N, b, b, C/b^2, H, W] -perm 0,3,4,1,5,2-> [N, C/b^2, H*b, W*b]
///   CRD: [N, C/b^2, b, b, H, W] -perm 0,1,4,2,5,3-> [N, C/b^2, H*b, W*b]
LogicalResult buildDepthToSpace(NodeBinder &b) {
  Value x = b.input(0);
  if (!x)
    return failure();
  RankedTensorType in = tensorType(x);
  std::optional<int64_t> block = readBlockSize(b, in);
  std::optional<std::string> mode =
      b.opset() >= 11 ? b.stringAttr("mode", "DCR") : std::string("DCR");
  if (!block || !mode)
    return failure();
  if (*mode != "DCR" && *mode != "CRD")
    return b.emitError()
           << "attribute 'mode' must be \"DCR\" or \"CRD\", got \"" << *mode
           << "\"";
  int64_t bs = *block;
  int64_t n = in.getDimSize(0), c = in.getDimSize(1), h = in.getDimSize(2),
          w = in.getDimSize(3);
  if (c % (bs * bs) != 0)
    return b.emitError() << "the channels (" << c
                         << ") must be a multiple of blocksize^2 (" << bs * bs
                         << ")";
  int64_t depth = c / (bs * bs);
  Value split;
  SmallVector<int64_t> perm;
  if (*mode == "DCR") {
    split = reshapeTo(b, x, {n, bs, bs, depth, h, w});
    perm = {0, 3, 4, 1, 5, 2};
  } else {
    split = reshapeTo(b, x, {n, depth, bs, bs, h, w});
    perm = {0, 1, 4, 2, 5, 3};
  }
  Value moved = createInferred<TransposeOp>(b, split, ArrayRef<int64_t>(perm));
  return finish(b, 0, reshapeTo(b, moved, {n, depth, h * bs, w * bs}));
}

/// SpaceToDepth: [N, C, H/b, b, W/b, b] -perm 0,3,5,1,2,4->
/// [N, C*b*b, H/b, W/b].
LogicalResult buildSpaceToDepth(NodeBinder &b) {
  Value x = b.input(0);
  if (!x)
    return failure();
  RankedTensorType in = tensorType(x);
  std::optional<int64_t> block = readBlockSize(b, in);
  // Opset 28 adds `mode`: output channels ordered depth-column-row (DCR,
  // the only order before) or column-row-depth (CRD).
  std::optional<std::string> mode =
      b.opset() >= 28 ? b.stringAttr("mode", "DCR") : std::string("DCR");
  if (!block || !mode)
    return failure();
  if (*mode != "DCR" && *mode != "CRD")
    return b.emitError()
           << "attribute 'mode' must be \"DCR\" or \"CRD\", got \"" << *mode
           << "\"";
  int64_t bs = *block;
  int64_t n = in.getDimSize(0), c = in.getDimSize(1), h = in.getDimSize(2),
          w = in.getDimSize(3);
  if (h % bs != 0 || w % bs != 0)
    return b.emitError() << "the spatial sizes " << h << "x" << w
                         << " must be multiples of blocksize " << bs;
  Value split = reshapeTo(b, x, {n, c, h / bs, bs, w / bs, bs});
  // [n, c, h/bs, by, w/bs, bx] -> DCR [n, by, bx, c, ...] or CRD
  // [n, c, by, bx, ...].
  SmallVector<int64_t> perm = *mode == "DCR"
                                  ? SmallVector<int64_t>{0, 3, 5, 1, 2, 4}
                                  : SmallVector<int64_t>{0, 1, 3, 5, 2, 4};
  Value moved = createInferred<TransposeOp>(b, split, ArrayRef<int64_t>(perm));
  return finish(b, 0, reshapeTo(b, moved, {n, c * bs * bs, h / bs, w / bs}));
}

//===----------------------------------------------------------------------===//
// Dropout, LRN
//===----------------------------------------------------------------------===//

/// Dropout at inference is the identity and its mask all true (ones before
/// opset 10, whose mask has the data type). Before opset 7 `is_test` is
/// ignored, as onnxruntime ignores it. From opset 12 `training_mode` must
/// be a constant; training with a ratio other than 0 is random and not
/// supported, training with ratio 0 is again the identity.
LogicalResult buildDropout(NodeBinder &b) {
  Value x = b.input(0);
  if (!x)
    return failure();
  if (b.opset() >= 12 && b.hasInput(2)) {
    std::optional<SmallVector<int64_t>> training = b.constantInts(2);
    if (!training || training->size() != 1)
      return b.fail("input 2 ('training_mode') must be a constant");
    if ((*training)[0] != 0) {
      std::optional<SmallVector<double>> ratio =
          b.hasInput(1)
              ? b.constantFloats(1)
              : std::optional<SmallVector<double>>(SmallVector<double>{0.5});
      if (!ratio || ratio->size() != 1)
        return b.fail("training-mode Dropout needs a constant 'ratio'");
      if ((*ratio)[0] != 0.0)
        return b.fail("training-mode Dropout with a non-zero ratio is random "
                      "and not supported");
    }
  }
  b.setOutput(0, x);
  if (!b.hasOutput(1))
    return success();
  RankedTensorType maskType = b.outputType(1);
  if (!maskType)
    return failure();
  if (maskType.hasStaticShape()) {
    b.setOutput(1, b.splat(maskType, 1));
    return success();
  }
  Attribute one;
  Type maskElement = maskType.getElementType();
  if (auto f = dyn_cast<FloatType>(maskElement))
    one = FloatAttr::get(f, 1.0);
  else
    one = IntegerAttr::get(maskElement, 1);
  b.setOutput(1,
              ConstantOfShapeOp::create(b.builder(), b.loc(), maskType,
                                        shapeOf(b, x), cast<TypedAttr>(one)));
  return success();
}

/// LRN: y = x / (bias + alpha / size * sum(x^2 over a window of channels))^beta
/// with the window [c - floor((size-1)/2), c + ceil((size-1)/2)]. The window
/// sum is an average pool: the squares get a unit channel axis in front of
/// C, so that C becomes the first spatial axis, and an avg_pool of kernel
/// [size, 1, ...] with zero pads on that axis and count_include_pad gives
/// sum / size.
LogicalResult buildLRN(NodeBinder &b) {
  Value x = b.input(0);
  RankedTensorType type = b.outputType(0);
  if (!x || !type)
    return failure();
  if (!b.hasAttr("size"))
    return b.fail("attribute 'size' is required");
  std::optional<int64_t> size = b.intAttr("size", 1);
  std::optional<float> alpha = b.floatAttr("alpha", 1e-4f);
  std::optional<float> beta = b.floatAttr("beta", 0.75f);
  std::optional<float> bias = b.floatAttr("bias", 1.0f);
  if (!size || !alpha || !beta || !bias)
    return failure();
  if (*size < 1)
    return b.emitError() << "attribute 'size' must be positive, got " << *size;
  RankedTensorType in = tensorType(x);
  if (in.getRank() < 2)
    return b.emitError() << "expects an input of rank >= 2 (N, C, ...), got "
                         << in;
  auto &builder = b.builder();
  Type elementType = in.getElementType();
  Value squares = createInferred<MulOp>(b, x, x);
  DenseI64ArrayAttr channelAxis = builder.getDenseI64ArrayAttr({1});
  Value lifted = createInferred<UnsqueezeOp>(b, squares, channelAxis);
  size_t spatial = in.getRank() - 1;
  SmallVector<int64_t> kernel(spatial, 1), ones(spatial, 1),
      pads(2 * spatial, 0);
  kernel[0] = *size;
  pads[0] = (*size - 1) / 2;
  pads[spatial] = (*size - 1) - pads[0];
  Value average = AvgPoolOp::create(builder, b.loc(), lifted.getType(), lifted,
                                    kernel, ones, pads, ones,
                                    /*ceil_mode=*/false,
                                    /*count_include_pad=*/true);
  Value windowMean = createInferred<SqueezeOp>(b, average, channelAxis);
  Value base = createInferred<AddOp>(
      b, createInferred<MulOp>(b, windowMean, b.scalar(elementType, *alpha)),
      b.scalar(elementType, *bias));
  Value denominator =
      createInferred<PowOp>(b, base, b.scalar(elementType, *beta));
  return finish(b, 0, createInferred<DivOp>(b, x, denominator));
}

//===----------------------------------------------------------------------===//
// Vision: GridSample, RoiAlign, NonMaxSuppression
//===----------------------------------------------------------------------===//

/// True when `dim` is dynamic, `expected` is, or they are equal.
bool isDynamicOrEqual(int64_t dim, int64_t expected) {
  return ShapedType::isDynamic(dim) || ShapedType::isDynamic(expected) ||
         dim == expected;
}

/// Reads string attribute `name` and checks it is one of `allowed`.
std::optional<std::string> oneOfAttr(NodeBinder &b, StringRef name,
                                     StringRef fallback,
                                     ArrayRef<StringRef> allowed) {
  std::optional<std::string> value = b.stringAttr(name, fallback);
  if (!value)
    return std::nullopt;
  if (!llvm::is_contained(allowed, *value)) {
    InFlightDiagnostic diag = b.emitError();
    diag << "attribute '" << name << "' must be one of ";
    llvm::interleaveComma(allowed, diag,
                          [&](StringRef s) { diag << '"' << s << '"'; });
    diag << ", got \"" << *value << "\"";
    return std::nullopt;
  }
  return value;
}

/// Reads the 0/1 int attribute `name` as a bool.
std::optional<bool> flagAttr(NodeBinder &b, StringRef name) {
  std::optional<int64_t> v = b.intAttr(name, 0);
  if (!v)
    return std::nullopt;
  if (*v != 0 && *v != 1) {
    b.emitError() << "attribute '" << name << "' must be 0 or 1, got " << *v;
    return std::nullopt;
  }
  return *v != 0;
}

/// AffineGrid-20: the sampling grid [N, (D,) H, W, K] of the affine maps
/// theta [N, K, K + 1] (K = 2 or 3). Each output point is theta applied to
/// the homogeneous base coordinates [x, y, (z,) 1] of its position, which
/// span [-1, 1] per axis (pixel centres without align_corners, the corner
/// pixels' centres with it). The base grid is a constant [P, K + 1] (P
/// output points), so the node is one batched MatMul with theta^T. The
/// spatial sizes come from `size` when it is a constant, else from the
/// declared output type.
LogicalResult buildAffineGrid(NodeBinder &b) {
  if (failed(b.rejectUnknownAttrs({"align_corners"})))
    return failure();
  Value theta = b.input(0);
  RankedTensorType sizeType = b.inputType(1);
  std::optional<int64_t> alignCorners = b.intAttr("align_corners", 0);
  if (!theta || !sizeType || !alignCorners)
    return failure();
  RankedTensorType thetaType = tensorType(theta);
  if (thetaType.getRank() != 3 || thetaType.isDynamicDim(1) ||
      thetaType.isDynamicDim(2) ||
      !llvm::is_contained({2, 3}, thetaType.getDimSize(1)) ||
      thetaType.getDimSize(2) != thetaType.getDimSize(1) + 1)
    return b.emitError() << "expects theta [N, 2, 3] or [N, 3, 4], got "
                         << thetaType;
  int64_t k = thetaType.getDimSize(1);
  std::optional<SmallVector<int64_t>> size = b.constantInts(1);
  SmallVector<int64_t> spatial;
  if (size) {
    if (static_cast<int64_t>(size->size()) != k + 2)
      return b.emitError() << "'size' must hold " << k + 2
                           << " values (N, C and the " << k
                           << " spatial sizes), got " << size->size();
    spatial.assign(size->begin() + 2, size->end());
  } else {
    RankedTensorType out = b.knownOutputType(0);
    if (!out || out.getRank() != k + 2 ||
        llvm::any_of(out.getShape().slice(1, k), ShapedType::isDynamic))
      return b.fail("input 1 ('size') must be a constant, or the output's "
                    "spatial sizes static");
    spatial.assign(out.getShape().begin() + 1, out.getShape().begin() + 1 + k);
  }
  if (llvm::any_of(spatial, [](int64_t d) { return d < 1; }))
    return b.fail("the spatial sizes must be positive");
  int64_t points = product(spatial);
  constexpr int64_t kMaxPoints = int64_t(1) << 26;
  if (points > kMaxPoints)
    return b.emitError() << "a grid of " << points
                         << " points is larger than supported (" << kMaxPoints
                         << ")";
  // Coordinate j of an axis of n points.
  auto coordinate = [&](int64_t j, int64_t n) {
    if (*alignCorners)
      return n == 1 ? -1.0 : -1.0 + 2.0 * double(j) / double(n - 1);
    return -1.0 + (2.0 * double(j) + 1.0) / double(n);
  };
  // Rows [x, y, (z,) 1]: x runs along the last spatial axis.
  SmallVector<double> base;
  base.reserve(points * (k + 1));
  SmallVector<int64_t> position(k, 0);
  for (int64_t p = 0; p < points; ++p) {
    for (int64_t axis = k - 1; axis >= 0; --axis)
      base.push_back(coordinate(position[axis], spatial[axis]));
    base.push_back(1.0);
    for (int64_t axis = k - 1; axis >= 0; --axis) {
      if (++position[axis] < spatial[axis])
        break;
      position[axis] = 0;
    }
  }
  auto elementType = dyn_cast<FloatType>(thetaType.getElementType());
  if (!elementType)
    return b.emitError() << "expects a floating-point theta, got " << thetaType;
  SmallVector<APFloat> values;
  values.reserve(base.size());
  for (double v : base) {
    APFloat value(v);
    bool losesInfo;
    value.convert(elementType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                  &losesInfo);
    values.push_back(value);
  }
  auto baseType = RankedTensorType::get({1, points, k + 1}, elementType);
  Value baseGrid = ConstantOp::create(b.builder(), b.loc(),
                                      DenseElementsAttr::get(baseType, values));
  Value thetaT =
      createInferred<TransposeOp>(b, theta, ArrayRef<int64_t>{0, 2, 1});
  Value flat = createInferred<MatMulOp>(b, baseGrid, thetaT);
  SmallVector<int64_t> shape = {thetaType.getDimSize(0)};
  llvm::append_range(shape, spatial);
  shape.push_back(k);
  return bindRefined(b, reshapeTo(b, flat, shape));
}

/// GridSample-16 (4-D). GridSample-20 generalized it to N-d and renamed the
/// modes "linear" and "cubic"; its 4-D form maps onto the same op.
LogicalResult buildGridSample(NodeBinder &b) {
  Value x = b.input(0), grid = b.input(1);
  RankedTensorType type = b.outputType(0);
  if (!x || !grid || !type)
    return failure();
  bool renamed = b.opset() >= 20;
  int64_t rank = tensorType(x).getRank();
  // GridSample-20 made the op N-d; loom samples 2 or 3 spatial axes.
  bool volume = renamed && rank == 5;
  if ((rank != 4 && !volume) || tensorType(grid).getRank() != rank)
    return b.emitError() << "expects a 4-D input [N, C, H, W] and grid "
                            "[N, Ho, Wo, 2]"
                         << (renamed ? ", or a 5-D input [N, C, D, H, W] and "
                                       "grid [N, Do, Ho, Wo, 3]"
                                     : "")
                         << ", got " << tensorType(x) << " and "
                         << tensorType(grid);
  RankedTensorType gridType = tensorType(grid);
  if (!isa<FloatType>(gridType.getElementType()) ||
      !isDynamicOrEqual(gridType.getDimSize(rank - 1), rank - 2))
    return b.emitError() << "grid must hold float "
                         << (volume ? "(x, y, z) triples" : "(x, y) pairs")
                         << ", got " << gridType;
  std::optional<std::string> mode =
      renamed ? oneOfAttr(b, "mode", "linear", {"linear", "nearest", "cubic"})
              : oneOfAttr(b, "mode", "bilinear",
                          {"bilinear", "nearest", "bicubic"});
  std::optional<std::string> padding =
      oneOfAttr(b, "padding_mode", "zeros", {"zeros", "border", "reflection"});
  std::optional<bool> alignCorners = flagAttr(b, "align_corners");
  if (!mode || !padding || !alignCorners)
    return failure();
  if (*mode == "linear")
    *mode = "bilinear";
  else if (*mode == "cubic")
    *mode = "bicubic";
  if (volume && *mode == "bicubic")
    return b.fail("cubic sampling takes a 4-D input (ONNX defines it for 2 "
                  "spatial axes)");
  b.setOutput(0, GridSampleOp::create(b.builder(), b.loc(), type, x, grid,
                                      *mode, *padding, *alignCorners));
  return success();
}

/// RoiAlign-10/16. Opset 10 had no coordinate_transformation_mode and did
/// not shift by half a pixel: "output_half_pixel".
LogicalResult buildRoiAlign(NodeBinder &b) {
  Value x = b.input(0), rois = b.input(1), indices = b.input(2);
  RankedTensorType type = b.outputType(0);
  if (!x || !rois || !indices || !type)
    return failure();
  RankedTensorType in = tensorType(x);
  if (in.getRank() != 4)
    return b.emitError() << "expects a 4-D input [N, C, H, W], got " << in;
  RankedTensorType roisType = tensorType(rois);
  if (roisType.getRank() != 2 || !isDynamicOrEqual(roisType.getDimSize(1), 4) ||
      roisType.getElementType() != in.getElementType())
    return b.emitError() << "rois must be [num_rois, 4] of the input's element "
                            "type, got "
                         << roisType;
  RankedTensorType indicesType = tensorType(indices);
  if (indicesType.getRank() != 1 ||
      !isa<IntegerType>(indicesType.getElementType()) ||
      !isDynamicOrEqual(indicesType.getDimSize(0), roisType.getDimSize(0)))
    return b.emitError() << "batch_indices must be a 1-D integer tensor with "
                            "one index per roi, got "
                         << indicesType;
  std::optional<std::string> mode = oneOfAttr(b, "mode", "avg", {"avg", "max"});
  std::optional<std::string> coordinateMode =
      b.opset() < 16
          ? std::optional<std::string>("output_half_pixel")
          : oneOfAttr(b, "coordinate_transformation_mode", "half_pixel",
                      {"half_pixel", "output_half_pixel"});
  std::optional<int64_t> height = b.intAttr("output_height", 1);
  std::optional<int64_t> width = b.intAttr("output_width", 1);
  std::optional<int64_t> samplingRatio = b.intAttr("sampling_ratio", 0);
  std::optional<float> spatialScale = b.floatAttr("spatial_scale", 1.0f);
  if (!mode || !coordinateMode || !height || !width || !samplingRatio ||
      !spatialScale)
    return failure();
  if (*height <= 0 || *width <= 0)
    return b.emitError() << "attributes 'output_height' and 'output_width' "
                            "must be positive, got "
                         << *height << " and " << *width;
  if (*samplingRatio < 0)
    return b.emitError() << "attribute 'sampling_ratio' must be >= 0, got "
                         << *samplingRatio;
  if (!(*spatialScale > 0.0f) || !std::isfinite(*spatialScale))
    return b.emitError() << "attribute 'spatial_scale' must be positive, got "
                         << *spatialScale;
  auto &builder = b.builder();
  b.setOutput(0, RoiAlignOp::create(builder, b.loc(), type, x, rois,
                                    castTo(b, indices, builder.getI64Type()),
                                    *mode, static_cast<uint64_t>(*height),
                                    static_cast<uint64_t>(*width),
                                    static_cast<uint64_t>(*samplingRatio),
                                    APFloat(*spatialScale), *coordinateMode));
  return success();
}

/// Optional scalar input `i` of NonMaxSuppression: null when absent, cast to
/// `elementType` when another type of its kind; an error when not a scalar.
FailureOr<Value> nmsScalarInput(NodeBinder &b, size_t i, StringRef name,
                                Type elementType) {
  Value v = b.optionalInput(i);
  if (!v)
    return Value();
  RankedTensorType t = tensorType(v);
  bool sameKind = isa<FloatType>(elementType)
                      ? isa<FloatType>(t.getElementType())
                      : isa<IntegerType>(t.getElementType());
  if (!sameKind || t.getRank() > 1 ||
      (t.getRank() == 1 && !t.isDynamicDim(0) && t.getDimSize(0) != 1))
    return b.emitError() << "input " << i << " ('" << name
                         << "') must be a scalar of type " << elementType
                         << ", got " << t;
  return castTo(b, v, elementType);
}

/// NonMaxSuppression-10/11. The number of selected boxes is data-dependent:
/// the op yields tensor<?x3xi64>, cast to the model's type when it states a
/// count.
LogicalResult buildNonMaxSuppression(NodeBinder &b) {
  Value boxes = b.input(0), scores = b.input(1);
  if (!boxes || !scores)
    return failure();
  RankedTensorType boxesType = tensorType(boxes),
                   scoresType = tensorType(scores);
  if (boxesType.getRank() != 3 || scoresType.getRank() != 3 ||
      !isDynamicOrEqual(boxesType.getDimSize(2), 4) ||
      !isDynamicOrEqual(scoresType.getDimSize(0), boxesType.getDimSize(0)) ||
      !isDynamicOrEqual(scoresType.getDimSize(2), boxesType.getDimSize(1)) ||
      boxesType.getElementType() != scoresType.getElementType() ||
      !isa<FloatType>(boxesType.getElementType()))
    return b.emitError() << "expects float boxes [B, N, 4] and scores "
                            "[B, C, N] of one element type, got "
                         << boxesType << " and " << scoresType;
  auto &builder = b.builder();
  FailureOr<Value> maxBoxes =
      nmsScalarInput(b, 2, "max_output_boxes_per_class", builder.getI64Type());
  FailureOr<Value> iou =
      nmsScalarInput(b, 3, "iou_threshold", builder.getF32Type());
  FailureOr<Value> minScore =
      nmsScalarInput(b, 4, "score_threshold", builder.getF32Type());
  std::optional<bool> centerPointBox = flagAttr(b, "center_point_box");
  if (failed(maxBoxes) || failed(iou) || failed(minScore) || !centerPointBox)
    return failure();
  auto resultType =
      RankedTensorType::get({ShapedType::kDynamic, 3}, builder.getI64Type());
  Value selected =
      NonMaxSuppressionOp::create(builder, b.loc(), resultType, boxes, scores,
                                  *maxBoxes, *iou, *minScore, *centerPointBox);
  // Without an inferred type (ONNX always infers [?, 3]) the op's own type
  // is the best there is.
  if (!b.knownOutputType(0)) {
    b.setOutput(0, selected);
    return success();
  }
  return finish(b, 0, selected);
}

} // namespace

void registerNNBuilders(OpTable &t) {
  // Contractions.
  t.add("", "MatMul", 1, buildMatMul);
  t.add("", "Gemm", 1, buildGemm);

  // Convolutions and pooling (all opsets share one builder; the attributes
  // that later opsets added default to the old behavior).
  t.add("", "Conv", 1, buildConv);
  t.add("", "ConvTranspose", 1, buildConvTranspose);
  t.add("", "MaxPool", 1, buildMaxPool);
  t.add("", "AveragePool", 1, buildAveragePool);
  t.add("", "LpPool", 2, buildLpPool);
  t.add("", "GlobalAveragePool", 1, buildGlobalPool<ReduceMeanOp>);
  t.add("", "GlobalMaxPool", 1, buildGlobalPool<ReduceMaxOp>);
  t.add("", "MaxUnpool", 9, buildMaxUnpool);

  // Normalizations.
  t.add("", "BatchNormalization", 1, buildBatchNorm);
  t.add("", "InstanceNormalization", 1, buildInstanceNorm);
  t.add("", "LayerNormalization", 17, buildLayerNorm);
  t.add("", "LRN", 1, buildLRN);

  // Softmax and relatives (opset < 13: the 2-D coercion).
  t.add("", "Softmax", 1, buildSoftmax<SoftmaxOp>);
  t.add("", "LogSoftmax", 1, buildSoftmax<LogSoftmaxOp>);
  t.add("", "Hardmax", 1, buildHardmax);

  // Resizing and rearrangement.
  t.add("", "Resize", 10, buildResize);
  t.add("", "Upsample", 7, buildUpsample);
  t.add("", "DepthToSpace", 1, buildDepthToSpace);
  t.add("", "SpaceToDepth", 1, buildSpaceToDepth);

  // Vision.
  t.add("", "GridSample", 16, buildGridSample);
  t.add("", "AffineGrid", 20, buildAffineGrid);
  t.add("", "RoiAlign", 10, buildRoiAlign);
  t.add("", "NonMaxSuppression", 10, buildNonMaxSuppression);

  t.add("", "Dropout", 1, buildDropout);
}

} // namespace loom::onnx_import
