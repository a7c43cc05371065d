//===- QuantKernels.cpp - Reference kernels of the quantization ops -------===//
//
// Quantized contractions run in two steps that keep them obviously equal to
// their QDQ definition: the zero points are subtracted exactly (into f64
// tensors), the float matmul/conv kernel sums the products exactly (8-bit
// products and their sums fit a double's mantissa), and the scales are
// applied once, with a single rounding to the f32 result.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include <cmath>

using namespace mlir;

namespace loom::reference {
namespace {

using Results = SmallVectorImpl<Tensor>;

/// The representable range of an integer element kind.
std::pair<int64_t, int64_t> integerRange(ElementKind kind) {
  unsigned width = getBitWidth(kind);
  if (isUnsignedKind(kind))
    return {0, width >= 63 ? INT64_MAX : (int64_t(1) << width) - 1};
  if (width >= 64)
    return {INT64_MIN, INT64_MAX};
  return {-(int64_t(1) << (width - 1)), (int64_t(1) << (width - 1)) - 1};
}

/// Element `i` of `param` broadcast to `shape` (the shape of the data).
double paramAt(const Tensor *param, ArrayRef<int64_t> shape,
               ArrayRef<int64_t> index) {
  if (!param)
    return 0;
  return param->getDouble(broadcastSourceIndex(index, param->shape()));
}

/// Checks that `param` broadcasts to `data`'s shape at run time.
LogicalResult checkParam(Operation *op, const Tensor *param, const Tensor &data,
                         StringRef name) {
  if (!param)
    return success();
  auto shape = broadcastShapes(data.shape(), param->shape());
  if (!shape || ArrayRef<int64_t>(*shape) != data.shape())
    return op->emitError() << name << " " << param->typeString()
                           << " does not broadcast to " << data.typeString();
  return success();
}

LogicalResult quantizeKernel(Operation *op, ArrayRef<const Tensor *> in,
                             Results &out) {
  auto quantize = cast<QuantizeOp>(op);
  const Tensor &x = *in[0], &scale = *in[1];
  const Tensor *zp = quantize.getZeroPoint() ? in[2] : nullptr;
  if (failed(checkParam(op, &scale, x, "scale")) ||
      failed(checkParam(op, zp, x, "zero point")))
    return failure();
  ElementKind kind = resultKind(op);
  Tensor y(kind, x.shape());
  bool saturate = quantize.getSaturate();
  double largest = isFloatKind(kind) ? getLargestFinite(kind) : 0.0;
  forEachIndex(x.shape(), [&](int64_t i, ArrayRef<int64_t> index) {
    double q = roundFloat(scale.kind(),
                          x.getDouble(i) / paramAt(&scale, x.shape(), index));
    if (isFloatKind(kind)) {
      // Saturated: beyond the range, the largest finite value (+-448 for
      // f8E4M3FN); otherwise the rounding gives infinity or NaN.
      if (saturate && !std::isnan(q))
        q = std::clamp(q, -largest, largest);
      y.setDouble(i, q);
      return;
    }
    auto [lo, hi] = integerRange(kind);
    // The default rounding mode rounds halves to even, as ONNX requires.
    q = std::nearbyint(q) + paramAt(zp, x.shape(), index);
    q = std::isnan(q) ? 0 : std::clamp(q, double(lo), double(hi));
    y.setInt(i, static_cast<int64_t>(q));
  });
  out.push_back(std::move(y));
  return success();
}

LogicalResult dequantizeKernel(Operation *op, ArrayRef<const Tensor *> in,
                               Results &out) {
  auto dequantize = cast<DequantizeOp>(op);
  const Tensor &x = *in[0], &scale = *in[1];
  const Tensor *zp = dequantize.getZeroPoint() ? in[2] : nullptr;
  if (failed(checkParam(op, &scale, x, "scale")) ||
      failed(checkParam(op, zp, x, "zero point")))
    return failure();
  Tensor y(resultKind(op), x.shape());
  forEachIndex(x.shape(), [&](int64_t i, ArrayRef<int64_t> index) {
    y.setDouble(i, (x.getDouble(i) - paramAt(zp, x.shape(), index)) *
                       paramAt(&scale, x.shape(), index));
  });
  out.push_back(std::move(y));
  return success();
}

/// `q - zp` as exact f64 values; the zero point is 0-D or one value per
/// index of `channelAxis`.
Tensor centered(const Tensor &q, const Tensor *zp, int64_t channelAxis) {
  Tensor c(ElementKind::F64, q.shape());
  int64_t inner = 1;
  for (int64_t d = channelAxis + 1; d < q.rank(); ++d)
    inner *= q.dim(d);
  for (int64_t i = 0, e = q.numElements(); i < e; ++i) {
    double z = 0;
    if (zp)
      z = zp->numElements() == 1
              ? zp->getDouble(0)
              : zp->getDouble((i / inner) % q.dim(channelAxis));
    c.setDouble(i, q.getDouble(i) - z);
  }
  return c;
}

/// A 0-D or per-channel parameter at `channel`.
double channelParam(const Tensor &param, int64_t channel) {
  return param.getDouble(param.numElements() == 1 ? 0 : channel);
}

/// Checks that a weight parameter is 0-D or holds `channels` values.
LogicalResult checkChannelParam(Operation *op, const Tensor *param,
                                int64_t channels, StringRef name) {
  if (!param || param->numElements() == 1 ||
      (param->rank() == 1 && param->dim(0) == channels))
    return success();
  return op->emitError() << name << " " << param->typeString()
                         << " must be 0-D or hold " << channels << " values";
}

LogicalResult qmatmulKernel(Operation *op, ArrayRef<const Tensor *> in,
                            Results &out) {
  auto qmatmul = cast<QMatMulOp>(op);
  const Tensor &a = *in[0], &b = *in[1], &sa = *in[2], &sb = *in[3];
  bool hasZp = bool(qmatmul.getLhsZeroPoint());
  const Tensor *za = hasZp ? in[4] : nullptr, *zb = hasZp ? in[5] : nullptr;
  if (b.rank() != 2)
    return op->emitError() << "rhs " << b.typeString() << " must be 2-D";
  int64_t n = b.dim(1);
  if (failed(checkChannelParam(op, &sb, n, "rhs scale")) ||
      failed(checkChannelParam(op, zb, n, "rhs zero point")))
    return failure();
  FailureOr<Tensor> acc = computeMatMul(op, centered(a, za, a.rank() - 1),
                                        centered(b, zb, 1), ElementKind::F64);
  if (failed(acc))
    return failure();
  Tensor y(resultKind(op), acc->shape());
  double lhsScale = sa.getDouble(0);
  for (int64_t i = 0, e = acc->numElements(); i < e; ++i)
    y.setDouble(i, acc->getDouble(i) * (lhsScale * channelParam(sb, i % n)));
  out.push_back(std::move(y));
  return success();
}

LogicalResult qconvKernel(Operation *op, ArrayRef<const Tensor *> in,
                          Results &out) {
  auto qconv = cast<QConvOp>(op);
  const Tensor &x = *in[0], &w = *in[1], &sx = *in[2], &sw = *in[3];
  unsigned next = 4;
  const Tensor *zx = nullptr, *zw = nullptr, *bias = nullptr;
  if (qconv.getInputZeroPoint()) {
    zx = in[next++];
    zw = in[next++];
  }
  if (qconv.getBias())
    bias = in[next++];
  if (w.rank() < 1)
    return op->emitError() << "weight " << w.typeString() << " has no channels";
  int64_t m = w.dim(0);
  if (failed(checkChannelParam(op, &sw, m, "weight scale")) ||
      failed(checkChannelParam(op, zw, m, "weight zero point")) ||
      failed(checkChannelParam(op, bias, m, "bias")))
    return failure();
  FailureOr<Tensor> acc =
      computeConv(op, centered(x, zx, 0), centered(w, zw, 0), /*bias=*/nullptr,
                  qconv.getStrides(), qconv.getPads(), qconv.getDilations(),
                  static_cast<int64_t>(qconv.getGroup()), ElementKind::F64);
  if (failed(acc))
    return failure();
  Tensor y(resultKind(op), acc->shape());
  int64_t spatial = 1;
  for (int64_t d = 2; d < acc->rank(); ++d)
    spatial *= acc->dim(d);
  double inputScale = sx.getDouble(0);
  for (int64_t i = 0, e = acc->numElements(); i < e; ++i) {
    int64_t channel = (i / spatial) % m;
    double v = acc->getDouble(i) * (inputScale * channelParam(sw, channel));
    y.setDouble(i, bias ? v + bias->getDouble(channel) : v);
  }
  out.push_back(std::move(y));
  return success();
}

} // namespace

void registerQuantKernels(KernelRegistry &r) {
  r.add("loom.quantize", quantizeKernel);
  r.add("loom.dequantize", dequantizeKernel);
  r.add("loom.qmatmul", qmatmulKernel);
  r.add("loom.qconv", qconvKernel);
}

} // namespace loom::reference
