//===- ConvWindow.cpp - Window attributes of convolutions and pools -------===//

#include "ConvWindow.h"

using namespace mlir;

namespace loom::onnx_import {

/// Reads the ints attribute `name` with exactly `count` values, each at
/// least `minValue`; `fallback` repeated when the attribute is absent.
std::optional<SmallVector<int64_t>> countedInts(NodeBinder &b, StringRef name,
                                                size_t count, int64_t fallback,
                                                int64_t minValue) {
  std::optional<SmallVector<int64_t>> v =
      b.intsAttr(name, SmallVector<int64_t>(count, fallback));
  if (!v)
    return std::nullopt;
  if (v->size() != count) {
    b.emitError() << "attribute '" << name << "' must hold " << count
                  << " values, got " << v->size();
    return std::nullopt;
  }
  for (int64_t x : *v)
    if (x < minValue) {
      b.emitError() << "attribute '" << name
                    << "' must hold values >= " << minValue << ", got " << x;
      return std::nullopt;
    }
  return v;
}

/// Checks that `in` is `[N, C, D1..Dk]` with k >= 1 and returns k.
std::optional<size_t> spatialRank(NodeBinder &b, RankedTensorType in) {
  if (in.getRank() < 3) {
    b.emitError() << "expects an input of rank >= 3 (N, C, spatial...), got "
                  << in;
    return std::nullopt;
  }
  return in.getRank() - 2;
}

/// Reads `kernel_shape` (required for pooling).
LogicalResult readPoolKernel(NodeBinder &b, size_t spatial, Window &w) {
  if (!b.hasAttr("kernel_shape"))
    return b.fail("attribute 'kernel_shape' is required");
  auto kernel = countedInts(b, "kernel_shape", spatial, 1, 1);
  if (!kernel)
    return failure();
  w.kernel = *kernel;
  return success();
}

/// The kernel of a convolution: the weight's spatial sizes, checked against
/// `kernel_shape` when both are known.
LogicalResult readConvKernel(NodeBinder &b, RankedTensorType weight,
                             size_t spatial, Window &w) {
  if (weight.getRank() != static_cast<int64_t>(spatial) + 2)
    return b.emitError() << "the weight must have rank " << spatial + 2
                         << " like the input, got " << weight;
  ArrayRef<int64_t> dims = weight.getShape().drop_front(2);
  if (b.hasAttr("kernel_shape")) {
    auto kernel = countedInts(b, "kernel_shape", spatial, 1, 1);
    if (!kernel)
      return failure();
    for (size_t i = 0; i < spatial; ++i)
      if (!ShapedType::isDynamic(dims[i]) && dims[i] != (*kernel)[i])
        return b.emitError() << "attribute 'kernel_shape' disagrees with the "
                                "weight's spatial sizes "
                             << weight;
    w.kernel = *kernel;
    return success();
  }
  if (llvm::any_of(dims, ShapedType::isDynamic))
    return b.fail("attribute 'kernel_shape' is required when the weight's "
                  "spatial sizes are dynamic");
  w.kernel.assign(dims.begin(), dims.end());
  return success();
}

/// Reads strides and dilations (default 1).
LogicalResult readStridesDilations(NodeBinder &b, size_t spatial, Window &w,
                                   bool hasDilations) {
  auto strides = countedInts(b, "strides", spatial, 1, 1);
  if (!strides)
    return failure();
  w.strides = *strides;
  if (!hasDilations) {
    w.dilations.assign(spatial, 1);
    return success();
  }
  auto dilations = countedInts(b, "dilations", spatial, 1, 1);
  if (!dilations)
    return failure();
  w.dilations = *dilations;
  return success();
}

/// Reads `auto_pad`; an error for anything but the four ONNX values.
std::optional<std::string> readAutoPad(NodeBinder &b) {
  std::optional<std::string> autoPad = b.stringAttr("auto_pad", "NOTSET");
  if (!autoPad)
    return std::nullopt;
  if (*autoPad != "NOTSET" && *autoPad != "VALID" && *autoPad != "SAME_UPPER" &&
      *autoPad != "SAME_LOWER") {
    b.emitError() << "attribute 'auto_pad' must be NOTSET, SAME_UPPER, "
                     "SAME_LOWER or VALID, got \""
                  << *autoPad << "\"";
    return std::nullopt;
  }
  return autoPad;
}

/// Resolves the pads of a forward window (convolution, pooling) over `in`:
/// explicit `pads`, or `auto_pad` computed for static spatial sizes. SAME
/// pads make the output ceil(in / stride); an odd total puts the extra pad
/// at the end (SAME_UPPER) or the beginning (SAME_LOWER). As in onnxruntime,
/// `pads` is ignored when `auto_pad` is set.
LogicalResult resolveForwardPads(NodeBinder &b, RankedTensorType in,
                                 Window &w) {
  size_t spatial = w.kernel.size();
  std::optional<std::string> autoPad = readAutoPad(b);
  if (!autoPad)
    return failure();
  if (*autoPad == "NOTSET") {
    auto pads = countedInts(b, "pads", 2 * spatial, 0, 0);
    if (!pads)
      return failure();
    w.pads = *pads;
    return success();
  }
  w.pads.assign(2 * spatial, 0);
  if (*autoPad == "VALID")
    return success();
  for (size_t i = 0; i < spatial; ++i) {
    int64_t size = in.getDimSize(2 + i);
    if (ShapedType::isDynamic(size))
      return b.emitError() << "auto_pad=" << *autoPad
                           << " needs static spatial sizes, but spatial axis "
                           << i << " of " << in << " is dynamic";
    int64_t stride = w.strides[i];
    int64_t out = (size + stride - 1) / stride;
    int64_t effective = (w.kernel[i] - 1) * w.dilations[i] + 1;
    int64_t total = std::max<int64_t>(0, (out - 1) * stride + effective - size);
    int64_t half = total / 2;
    bool upper = *autoPad == "SAME_UPPER";
    w.pads[i] = upper ? half : total - half;
    w.pads[spatial + i] = upper ? total - half : half;
  }
  return success();
}

LogicalResult readConvWindow(NodeBinder &b, RankedTensorType in,
                             RankedTensorType weight, Window &w) {
  std::optional<size_t> spatial = spatialRank(b, in);
  if (!spatial || failed(readConvKernel(b, weight, *spatial, w)) ||
      failed(readStridesDilations(b, *spatial, w)))
    return failure();
  return resolveForwardPads(b, in, w);
}

} // namespace loom::onnx_import
