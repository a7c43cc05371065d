//===- NNKernels.cpp - Reference kernels for neural-network ops ----------===//
//
// Contractions, convolutions, pooling, normalizations, softmax, attention,
// rotary embeddings and resizing. Floating-point kernels accumulate in double
// and round once, when the result is stored; integer contractions accumulate
// in 64-bit two's complement and wrap to the result type.
//
// Every kernel computes its result shape from the run-time operand shapes
// (the interpreter then checks it against the static result type), so
// dynamic dimensions are handled and run-time mismatches are errors, never
// out-of-bounds accesses.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include "loom/Dialect/Loom/IR/ResizeSampling.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>

using namespace mlir;

namespace loom::reference {
namespace {

using Results = SmallVectorImpl<Tensor>;

int64_t product(ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

/// Floor division for a positive divisor.
int64_t floorDiv(int64_t a, int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/// Ceil division for a positive divisor.
int64_t ceilDiv(int64_t a, int64_t b) { return -floorDiv(-a, b); }

/// Multiply-accumulate in the accumulator domain: double for floats,
/// wrapping 64-bit integers otherwise (the wrap to the result width happens
/// when the result is stored).
inline void mac(double &acc, double a, double b) { acc += a * b; }
inline void mac(int64_t &acc, int64_t a, int64_t b) {
  acc =
      static_cast<int64_t>(static_cast<uint64_t>(acc) +
                           static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
inline void addTo(double &acc, double a) { acc += a; }
inline void addTo(int64_t &acc, int64_t a) {
  acc = static_cast<int64_t>(static_cast<uint64_t>(acc) +
                             static_cast<uint64_t>(a));
}

template <typename T> const std::vector<T> &storage(const Tensor &t);
template <> const std::vector<double> &storage<double>(const Tensor &t) {
  return t.floats();
}
template <> const std::vector<int64_t> &storage<int64_t>(const Tensor &t) {
  return t.ints();
}

template <typename T> void store(Tensor &t, int64_t i, T value);
template <> void store<double>(Tensor &t, int64_t i, double value) {
  t.setDouble(i, value);
}
template <> void store<int64_t>(Tensor &t, int64_t i, int64_t value) {
  t.setInt(i, value);
}

/// A bias element in the accumulator domain.
template <typename T> T biasValue(const Tensor &bias, int64_t i);
template <> double biasValue<double>(const Tensor &bias, int64_t i) {
  return bias.getDouble(i);
}
template <> int64_t biasValue<int64_t>(const Tensor &bias, int64_t i) {
  return bias.getInt(i);
}

/// `"[1, 2, 3]"`.
std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (i)
      s += ", ";
    s += std::to_string(d);
  }
  return s + "]";
}

/// Attributes by name, with ODS defaults for absent ones. Kernels shared by
/// several op classes (the pools) and ops whose ODS form is still moving
/// (resize, the vision ops) read their attributes this way.
StringRef strAttr(Operation *op, StringRef name, StringRef fallback) {
  auto a = op->getAttrOfType<StringAttr>(name);
  return a ? a.getValue() : fallback;
}
bool boolAttr(Operation *op, StringRef name, bool fallback) {
  auto a = op->getAttrOfType<BoolAttr>(name);
  return a ? a.getValue() : fallback;
}
int64_t intAttr(Operation *op, StringRef name, int64_t fallback) {
  auto a = op->getAttrOfType<IntegerAttr>(name);
  return a ? a.getInt() : fallback;
}
double floatAttr(Operation *op, StringRef name, double fallback) {
  auto a = op->getAttrOfType<FloatAttr>(name);
  return a ? a.getValueAsDouble() : fallback;
}
ArrayRef<int64_t> i64ArrayAttr(Operation *op, StringRef name) {
  auto a = op->getAttrOfType<DenseI64ArrayAttr>(name);
  return a ? a.asArrayRef() : ArrayRef<int64_t>();
}

//===----------------------------------------------------------------------===//
// matmul
//===----------------------------------------------------------------------===//

template <typename T>
void matmulLoops(const Tensor &a, const Tensor &b, Tensor &y,
                 ArrayRef<int64_t> batch, ArrayRef<int64_t> aBatch,
                 ArrayRef<int64_t> bBatch, int64_t m, int64_t k, int64_t n) {
  const std::vector<T> &av = storage<T>(a), &bv = storage<T>(b);
  std::vector<T> row(n);
  forEachIndex(batch, [&](int64_t linear, ArrayRef<int64_t> index) {
    int64_t aOff = broadcastSourceIndex(index, aBatch) * m * k;
    int64_t bOff = broadcastSourceIndex(index, bBatch) * k * n;
    int64_t yOff = linear * m * n;
    for (int64_t i = 0; i < m; ++i) {
      std::fill(row.begin(), row.end(), T(0));
      for (int64_t p = 0; p < k; ++p) {
        T x = av[aOff + i * k + p];
        const T *brow = bv.data() + bOff + p * n;
        for (int64_t j = 0; j < n; ++j)
          mac(row[j], x, brow[j]);
      }
      for (int64_t j = 0; j < n; ++j)
        store<T>(y, yOff + i * n + j, row[j]);
    }
  });
}

} // namespace

FailureOr<Tensor> computeMatMul(Operation *op, const Tensor &a, const Tensor &b,
                                ElementKind kind) {
  if (a.rank() == 0 || b.rank() == 0)
    return op->emitError() << "matmul operands must have rank >= 1";
  SmallVector<int64_t> as(a.shape()), bs(b.shape());
  bool vecA = as.size() == 1, vecB = bs.size() == 1;
  if (vecA)
    as.insert(as.begin(), 1);
  if (vecB)
    bs.push_back(1);
  int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  if (bs[bs.size() - 2] != k)
    return op->emitError() << "contracting dimensions differ at run time: "
                           << a.typeString() << " and " << b.typeString();
  ArrayRef<int64_t> aBatch = ArrayRef<int64_t>(as).drop_back(2);
  ArrayRef<int64_t> bBatch = ArrayRef<int64_t>(bs).drop_back(2);
  auto batch = broadcastShapes(aBatch, bBatch);
  if (!batch)
    return op->emitError() << "batch dimensions of " << a.typeString()
                           << " and " << b.typeString() << " do not broadcast";
  SmallVector<int64_t> shape(*batch);
  if (!vecA)
    shape.push_back(m);
  if (!vecB)
    shape.push_back(n);
  Tensor y(kind, shape);
  if (a.isFloat())
    matmulLoops<double>(a, b, y, *batch, aBatch, bBatch, m, k, n);
  else
    matmulLoops<int64_t>(a, b, y, *batch, aBatch, bBatch, m, k, n);
  return y;
}

namespace {

LogicalResult matmulKernel(Operation *op, ArrayRef<const Tensor *> in,
                           Results &out) {
  FailureOr<Tensor> y = computeMatMul(op, *in[0], *in[1], resultKind(op));
  if (failed(y))
    return failure();
  out.push_back(std::move(*y));
  return success();
}

//===----------------------------------------------------------------------===//
// conv and conv_transpose
//===----------------------------------------------------------------------===//

/// Shared window attributes, checked against the run-time input.
struct WindowAttrs {
  SmallVector<int64_t> strides, pads, dilations;
};

LogicalResult checkWindow(Operation *op, const Tensor &x,
                          const WindowAttrs &w) {
  int64_t spatial = x.rank() - 2;
  if (x.rank() < 3 || static_cast<int64_t>(w.strides.size()) != spatial ||
      static_cast<int64_t>(w.dilations.size()) != spatial ||
      static_cast<int64_t>(w.pads.size()) != 2 * spatial)
    return op->emitError() << "window attributes do not match the input "
                           << x.typeString();
  return success();
}

/// For one spatial position of the output, the (kernel offset, input offset)
/// pairs whose input position lies inside the input.
using TapList = std::vector<std::pair<int64_t, int64_t>>;

/// Builds, for every output spatial position of a forward window, the taps
/// that read the input.
std::vector<TapList> forwardTaps(ArrayRef<int64_t> inSpatial,
                                 ArrayRef<int64_t> kernel,
                                 ArrayRef<int64_t> outSpatial,
                                 const WindowAttrs &w) {
  size_t rank = inSpatial.size();
  std::vector<TapList> taps(product(outSpatial));
  SmallVector<int64_t> pos(rank);
  forEachIndex(outSpatial, [&](int64_t o, ArrayRef<int64_t> oi) {
    forEachIndex(kernel, [&](int64_t kl, ArrayRef<int64_t> ki) {
      for (size_t d = 0; d < rank; ++d) {
        pos[d] = oi[d] * w.strides[d] - w.pads[d] + ki[d] * w.dilations[d];
        if (pos[d] < 0 || pos[d] >= inSpatial[d])
          return;
      }
      taps[o].push_back({kl, linearIndex(pos, inSpatial)});
    });
  });
  return taps;
}

template <typename T>
void convLoops(const Tensor &x, const Tensor &wt, const Tensor *bias, Tensor &y,
               int64_t group, const std::vector<TapList> &taps) {
  const std::vector<T> &xv = storage<T>(x), &wv = storage<T>(wt);
  int64_t batch = x.dim(0), c = x.dim(1), m = wt.dim(0), cg = wt.dim(1);
  int64_t mg = m / group;
  int64_t inSp = product(x.shape().drop_front(2));
  int64_t kSp = product(wt.shape().drop_front(2));
  int64_t outSp = static_cast<int64_t>(taps.size());
  for (int64_t nIdx = 0; nIdx < batch; ++nIdx)
    for (int64_t oc = 0; oc < m; ++oc) {
      int64_t g = oc / mg;
      T b = bias ? biasValue<T>(*bias, oc) : T(0);
      for (int64_t o = 0; o < outSp; ++o) {
        T acc = T(0);
        for (int64_t ic = 0; ic < cg; ++ic) {
          const T *xp = xv.data() + (nIdx * c + g * cg + ic) * inSp;
          const T *wp = wv.data() + (oc * cg + ic) * kSp;
          for (const auto &[kOff, xOff] : taps[o])
            mac(acc, xp[xOff], wp[kOff]);
        }
        addTo(acc, b);
        store<T>(y, (nIdx * m + oc) * outSp + o, acc);
      }
    }
}

} // namespace

FailureOr<Tensor> computeConv(Operation *op, const Tensor &x, const Tensor &wt,
                              const Tensor *bias, ArrayRef<int64_t> strides,
                              ArrayRef<int64_t> pads,
                              ArrayRef<int64_t> dilations, int64_t group,
                              ElementKind kind) {
  WindowAttrs w{SmallVector<int64_t>(strides), SmallVector<int64_t>(pads),
                SmallVector<int64_t>(dilations)};
  if (failed(checkWindow(op, x, w)))
    return failure();
  int64_t spatial = x.rank() - 2;
  if (wt.rank() != x.rank() || group <= 0 || x.dim(1) != wt.dim(1) * group ||
      wt.dim(0) % group != 0)
    return op->emitError() << "input " << x.typeString() << " and weight "
                           << wt.typeString() << " do not fit group " << group;
  if (bias && (bias->rank() != 1 || bias->dim(0) != wt.dim(0)))
    return op->emitError() << "bias " << bias->typeString()
                           << " must hold one value per output channel";
  SmallVector<int64_t> shape{x.dim(0), wt.dim(0)};
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t effective = (wt.dim(2 + i) - 1) * w.dilations[i] + 1;
    int64_t span = x.dim(2 + i) + w.pads[i] + w.pads[spatial + i] - effective;
    if (span < 0)
      return op->emitError()
             << "kernel extent " << effective
             << " exceeds the padded input along spatial axis " << i;
    shape.push_back(span / w.strides[i] + 1);
  }
  std::vector<TapList> taps =
      forwardTaps(x.shape().drop_front(2), wt.shape().drop_front(2),
                  ArrayRef<int64_t>(shape).drop_front(2), w);
  Tensor y(kind, shape);
  if (x.isFloat())
    convLoops<double>(x, wt, bias, y, group, taps);
  else
    convLoops<int64_t>(x, wt, bias, y, group, taps);
  return y;
}

namespace {

LogicalResult convKernel(Operation *op, ArrayRef<const Tensor *> in,
                         Results &out) {
  auto conv = cast<ConvOp>(op);
  FailureOr<Tensor> y =
      computeConv(op, *in[0], *in[1], conv.getBias() ? in[2] : nullptr,
                  conv.getStrides(), conv.getPads(), conv.getDilations(),
                  static_cast<int64_t>(conv.getGroup()), resultKind(op));
  if (failed(y))
    return failure();
  out.push_back(std::move(*y));
  return success();
}

template <typename T>
void convTransposeLoops(const Tensor &x, const Tensor &wt, const Tensor *bias,
                        Tensor &y, int64_t group, const WindowAttrs &w) {
  const std::vector<T> &xv = storage<T>(x), &wv = storage<T>(wt);
  int64_t batch = x.dim(0), c = x.dim(1), mg = wt.dim(1);
  int64_t cg = c / group, m = mg * group;
  ArrayRef<int64_t> inSpatial = x.shape().drop_front(2);
  ArrayRef<int64_t> kernel = wt.shape().drop_front(2);
  ArrayRef<int64_t> outSpatial = y.shape().drop_front(2);
  int64_t inSp = product(inSpatial), kSp = product(kernel),
          outSp = product(outSpatial);
  size_t rank = inSpatial.size();
  // For every input position, the (kernel offset, output offset) pairs that
  // land inside the output.
  std::vector<TapList> scatter(inSp);
  SmallVector<int64_t> pos(rank);
  forEachIndex(inSpatial, [&](int64_t i, ArrayRef<int64_t> ii) {
    forEachIndex(kernel, [&](int64_t kl, ArrayRef<int64_t> ki) {
      for (size_t d = 0; d < rank; ++d) {
        pos[d] = ii[d] * w.strides[d] - w.pads[d] + ki[d] * w.dilations[d];
        if (pos[d] < 0 || pos[d] >= outSpatial[d])
          return;
      }
      scatter[i].push_back({kl, linearIndex(pos, outSpatial)});
    });
  });
  std::vector<T> acc(outSp);
  for (int64_t nIdx = 0; nIdx < batch; ++nIdx)
    for (int64_t g = 0; g < group; ++g)
      for (int64_t om = 0; om < mg; ++om) {
        int64_t oc = g * mg + om;
        std::fill(acc.begin(), acc.end(), T(0));
        for (int64_t ic = 0; ic < cg; ++ic) {
          int64_t channel = g * cg + ic;
          const T *xp = xv.data() + (nIdx * c + channel) * inSp;
          const T *wp = wv.data() + (channel * mg + om) * kSp;
          for (int64_t i = 0; i < inSp; ++i)
            for (const auto &[kOff, yOff] : scatter[i])
              mac(acc[yOff], xp[i], wp[kOff]);
        }
        T b = bias ? biasValue<T>(*bias, oc) : T(0);
        for (int64_t o = 0; o < outSp; ++o) {
          T v = acc[o];
          addTo(v, b);
          store<T>(y, (nIdx * m + oc) * outSp + o, v);
        }
      }
}

LogicalResult convTransposeKernel(Operation *op, ArrayRef<const Tensor *> in,
                                  Results &out) {
  auto conv = cast<ConvTransposeOp>(op);
  const Tensor &x = *in[0], &wt = *in[1];
  const Tensor *bias = conv.getBias() ? in[2] : nullptr;
  WindowAttrs w{SmallVector<int64_t>(conv.getStrides()),
                SmallVector<int64_t>(conv.getPads()),
                SmallVector<int64_t>(conv.getDilations())};
  if (failed(checkWindow(op, x, w)))
    return failure();
  ArrayRef<int64_t> outputPadding = conv.getOutputPadding();
  int64_t group = static_cast<int64_t>(conv.getGroup());
  int64_t spatial = x.rank() - 2;
  if (wt.rank() != x.rank() || group <= 0 || x.dim(1) != wt.dim(0) ||
      x.dim(1) % group != 0 ||
      static_cast<int64_t>(outputPadding.size()) != spatial)
    return op->emitError() << "input " << x.typeString() << " and weight "
                           << wt.typeString() << " do not fit group " << group;
  int64_t m = wt.dim(1) * group;
  if (bias && (bias->rank() != 1 || bias->dim(0) != m))
    return op->emitError() << "bias " << bias->typeString()
                           << " must hold one value per output channel";
  SmallVector<int64_t> shape{x.dim(0), m};
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t size = w.strides[i] * (x.dim(2 + i) - 1) + outputPadding[i] +
                   (wt.dim(2 + i) - 1) * w.dilations[i] + 1 - w.pads[i] -
                   w.pads[spatial + i];
    if (size < 0)
      return op->emitError() << "the pads leave a negative output size along "
                             << "spatial axis " << i;
    shape.push_back(size);
  }
  Tensor y(resultKind(op), shape);
  if (x.isFloat())
    convTransposeLoops<double>(x, wt, bias, y, group, w);
  else
    convTransposeLoops<int64_t>(x, wt, bias, y, group, w);
  out.push_back(std::move(y));
  return success();
}

//===----------------------------------------------------------------------===//
// max_pool, max_pool_with_indices and avg_pool
//===----------------------------------------------------------------------===//

/// The output size of a pooling window along one axis. With `ceilMode` the
/// size rounds up, but (as ONNX and PyTorch require) the last window must
/// start inside the input or the begin pad.
std::optional<int64_t> poolOutputSize(int64_t in, int64_t kernel,
                                      int64_t stride, int64_t padBegin,
                                      int64_t padEnd, int64_t dilation,
                                      bool ceilMode) {
  int64_t effective = (kernel - 1) * dilation + 1;
  int64_t span = in + padBegin + padEnd - effective;
  if (span < 0)
    return std::nullopt;
  if (!ceilMode)
    return span / stride + 1;
  int64_t size = ceilDiv(span, stride) + 1;
  if ((size - 1) * stride >= in + padBegin)
    --size;
  return size;
}

enum class PoolKind { Max, MaxWithIndices, Avg };

template <PoolKind Kind>
LogicalResult poolKernel(Operation *op, ArrayRef<const Tensor *> in,
                         Results &out) {
  constexpr bool isMax = Kind != PoolKind::Avg;
  constexpr bool withIndices = Kind == PoolKind::MaxWithIndices;
  const Tensor &x = *in[0];
  // The three pool ops share their window attributes by name.
  ArrayRef<int64_t> kernel = i64ArrayAttr(op, "kernel_shape");
  ArrayRef<int64_t> strides = i64ArrayAttr(op, "strides");
  ArrayRef<int64_t> pads = i64ArrayAttr(op, "pads");
  ArrayRef<int64_t> dilations = i64ArrayAttr(op, "dilations");
  bool ceilMode = boolAttr(op, "ceil_mode", false);
  bool countIncludePad = boolAttr(op, "count_include_pad", false);
  int64_t storageOrder = intAttr(op, "storage_order", 0);
  int64_t spatial = x.rank() - 2;
  if (x.rank() < 3 || static_cast<int64_t>(kernel.size()) != spatial ||
      static_cast<int64_t>(strides.size()) != spatial ||
      static_cast<int64_t>(dilations.size()) != spatial ||
      static_cast<int64_t>(pads.size()) != 2 * spatial)
    return op->emitError() << "window attributes do not match the input "
                           << x.typeString();
  SmallVector<int64_t> shape{x.dim(0), x.dim(1)};
  for (int64_t i = 0; i < spatial; ++i) {
    std::optional<int64_t> size =
        poolOutputSize(x.dim(2 + i), kernel[i], strides[i], pads[i],
                       pads[spatial + i], dilations[i], ceilMode);
    if (!size)
      return op->emitError() << "pooling window exceeds the padded input "
                                "along spatial axis "
                             << i;
    shape.push_back(*size);
  }
  ArrayRef<int64_t> inSpatial = x.shape().drop_front(2);
  ArrayRef<int64_t> outSpatial = ArrayRef<int64_t>(shape).drop_front(2);
  int64_t inSp = product(inSpatial), outSp = product(outSpatial);

  // Column-major strides of the spatial axes, for storage_order 1 indices.
  SmallVector<int64_t> colStrides(spatial, 1);
  for (int64_t d = 1; d < spatial; ++d)
    colStrides[d] = colStrides[d - 1] * inSpatial[d - 1];

  // Per output position: the input offsets the window reads (with their
  // storage-order offsets when indices are wanted) and the divisor of an
  // average (taps on real input, plus taps on the explicit pads when
  // count_include_pad; never taps beyond the end pads, which only ceil_mode
  // produces).
  std::vector<std::vector<int64_t>> reads(outSp), readIndices;
  if (withIndices)
    readIndices.resize(outSp);
  std::vector<int64_t> counts(outSp, 0);
  SmallVector<int64_t> pos(spatial);
  forEachIndex(outSpatial, [&](int64_t o, ArrayRef<int64_t> oi) {
    forEachIndex(kernel, [&](int64_t, ArrayRef<int64_t> ki) {
      bool inside = true, inPadded = true;
      for (int64_t d = 0; d < spatial; ++d) {
        pos[d] = oi[d] * strides[d] - pads[d] + ki[d] * dilations[d];
        if (pos[d] < 0 || pos[d] >= inSpatial[d])
          inside = false;
        if (pos[d] < -pads[d] || pos[d] >= inSpatial[d] + pads[spatial + d])
          inPadded = false;
      }
      if (inside) {
        int64_t offset = linearIndex(pos, inSpatial);
        reads[o].push_back(offset);
        if (withIndices) {
          int64_t index = offset;
          if (storageOrder == 1) {
            index = 0;
            for (int64_t d = 0; d < spatial; ++d)
              index += pos[d] * colStrides[d];
          }
          readIndices[o].push_back(index);
        }
        ++counts[o];
      } else if (inPadded && countIncludePad) {
        ++counts[o];
      }
    });
  });

  Tensor y(resultKind(op), shape);
  Tensor indices;
  if (withIndices)
    indices = Tensor(ElementKind::I64, shape);
  int64_t planes = x.dim(0) * x.dim(1);
  bool isUnsigned = isUnsignedKind(x.kind());
  // The lowest value of an integer element type (what a window over padding
  // only yields, as -inf does for floats).
  int64_t lowest =
      isUnsigned
          ? 0
          : -static_cast<int64_t>(uint64_t(1) << (getBitWidth(x.kind()) - 1));
  for (int64_t p = 0; p < planes; ++p) {
    int64_t xOff = p * inSp, yOff = p * outSp;
    for (int64_t o = 0; o < outSp; ++o) {
      const std::vector<int64_t> &taps = reads[o];
      if constexpr (isMax) {
        // The first maximum wins; NaN propagates (as loom.max does) and its
        // first occurrence is the index. A window over padding only has no
        // index (-1).
        int64_t winner = -1;
        if (x.isFloat()) {
          double best = -std::numeric_limits<double>::infinity();
          for (auto [t, tap] : llvm::enumerate(taps)) {
            double v = x.floats()[xOff + tap];
            if (std::isnan(v) || v > best || winner < 0) {
              best = v;
              winner = t;
            }
            if (std::isnan(best))
              break;
          }
          y.setDouble(yOff + o, best);
        } else {
          const std::vector<int64_t> &xv = x.ints();
          int64_t best = lowest;
          for (auto [t, tap] : llvm::enumerate(taps)) {
            int64_t v = xv[xOff + tap];
            bool greater = isUnsigned ? static_cast<uint64_t>(v) >
                                            static_cast<uint64_t>(best)
                                      : v > best;
            if (greater || winner < 0) {
              best = v;
              winner = t;
            }
          }
          y.setInt(yOff + o, best);
        }
        if constexpr (withIndices)
          indices.setInt(yOff + o,
                         winner < 0 ? -1 : p * inSp + readIndices[o][winner]);
      } else {
        double sum = 0;
        for (int64_t tap : taps)
          sum += x.getDouble(xOff + tap);
        y.setDouble(yOff + o, sum / static_cast<double>(counts[o]));
      }
    }
  }
  out.push_back(std::move(y));
  if (withIndices)
    out.push_back(std::move(indices));
  return success();
}

//===----------------------------------------------------------------------===//
// Normalizations
//===----------------------------------------------------------------------===//

double epsilonOf(APFloat epsilon) { return epsilon.convertToDouble(); }

LogicalResult checkChannelParam(Operation *op, const Tensor &x, const Tensor &p,
                                StringRef name) {
  if (p.rank() != 1 || p.dim(0) != x.dim(1))
    return op->emitError() << name << " " << p.typeString()
                           << " must hold one value per channel of "
                           << x.typeString();
  return success();
}

LogicalResult batchNormKernel(Operation *op, ArrayRef<const Tensor *> in,
                              Results &out) {
  auto bn = cast<BatchNormOp>(op);
  const Tensor &x = *in[0];
  if (x.rank() < 2)
    return op->emitError() << "expects an input of rank >= 2";
  const char *names[] = {"scale", "bias", "mean", "variance"};
  for (int i = 0; i < 4; ++i)
    if (failed(checkChannelParam(op, x, *in[1 + i], names[i])))
      return failure();
  const Tensor &scale = *in[1], &bias = *in[2], &mean = *in[3], &var = *in[4];
  double eps = epsilonOf(bn.getEpsilon());
  int64_t c = x.dim(1), inner = product(x.shape().drop_front(2));
  Tensor y(resultKind(op), x.shape());
  for (int64_t i = 0, n = x.numElements(); i < n; ++i) {
    int64_t ch = (i / inner) % c;
    double v = (x.getDouble(i) - mean.getDouble(ch)) /
                   std::sqrt(var.getDouble(ch) + eps) * scale.getDouble(ch) +
               bias.getDouble(ch);
    y.setDouble(i, v);
  }
  out.push_back(std::move(y));
  return success();
}

LogicalResult instanceNormKernel(Operation *op, ArrayRef<const Tensor *> in,
                                 Results &out) {
  auto norm = cast<InstanceNormOp>(op);
  const Tensor &x = *in[0], &scale = *in[1], &bias = *in[2];
  if (x.rank() < 3)
    return op->emitError() << "expects an input of rank >= 3";
  if (failed(checkChannelParam(op, x, scale, "scale")) ||
      failed(checkChannelParam(op, x, bias, "bias")))
    return failure();
  double eps = epsilonOf(norm.getEpsilon());
  int64_t c = x.dim(1), inner = product(x.shape().drop_front(2));
  Tensor y(resultKind(op), x.shape());
  for (int64_t plane = 0, planes = x.dim(0) * c; plane < planes; ++plane) {
    int64_t off = plane * inner, ch = plane % c;
    double mean = 0;
    for (int64_t i = 0; i < inner; ++i)
      mean += x.getDouble(off + i);
    mean /= static_cast<double>(inner);
    double var = 0;
    for (int64_t i = 0; i < inner; ++i) {
      double d = x.getDouble(off + i) - mean;
      var += d * d;
    }
    var /= static_cast<double>(inner);
    double denom = std::sqrt(var + eps);
    for (int64_t i = 0; i < inner; ++i)
      y.setDouble(off + i,
                  scale.getDouble(ch) * (x.getDouble(off + i) - mean) / denom +
                      bias.getDouble(ch));
  }
  out.push_back(std::move(y));
  return success();
}

/// Checks that a norm parameter broadcasts to the normalized shape.
LogicalResult checkNormParam(Operation *op, ArrayRef<int64_t> normalized,
                             const Tensor &p, StringRef name) {
  auto b = broadcastShapes(normalized, p.shape());
  if (!b || ArrayRef<int64_t>(*b) != normalized)
    return op->emitError() << name << " " << p.typeString()
                           << " does not broadcast to the normalized shape "
                           << shapeString(normalized);
  return success();
}

/// The offset of every element of the normalized shape inside a parameter
/// that broadcasts to it.
std::vector<int64_t> paramOffsets(ArrayRef<int64_t> normalized,
                                  const Tensor &p) {
  std::vector<int64_t> offsets(product(normalized));
  forEachIndex(normalized, [&](int64_t i, ArrayRef<int64_t> index) {
    offsets[i] = broadcastSourceIndex(index, p.shape());
  });
  return offsets;
}

template <bool IsRMS>
LogicalResult trailingNormKernel(Operation *op, ArrayRef<const Tensor *> in,
                                 Results &out) {
  const Tensor &x = *in[0], &scale = *in[1];
  const Tensor *bias = nullptr;
  int64_t axis;
  double eps;
  if constexpr (IsRMS) {
    auto norm = cast<RMSNormOp>(op);
    axis = static_cast<int64_t>(norm.getAxis());
    eps = epsilonOf(norm.getEpsilon());
  } else {
    auto norm = cast<LayerNormOp>(op);
    axis = static_cast<int64_t>(norm.getAxis());
    eps = epsilonOf(norm.getEpsilon());
    if (norm.getBias())
      bias = in[2];
  }
  axis = normalizedAxis(axis, x.rank());
  if (axis < 0 || axis >= x.rank())
    return op->emitError() << "axis is out of range for " << x.typeString();
  ArrayRef<int64_t> normalized = x.shape().drop_front(axis);
  if (failed(checkNormParam(op, normalized, scale, "scale")) ||
      (bias && failed(checkNormParam(op, normalized, *bias, "bias"))))
    return failure();
  std::vector<int64_t> scaleAt = paramOffsets(normalized, scale);
  std::vector<int64_t> biasAt;
  if (bias)
    biasAt = paramOffsets(normalized, *bias);
  int64_t inner = product(normalized);
  int64_t outer = inner == 0 ? 0 : x.numElements() / inner;
  Tensor y(resultKind(op), x.shape());
  for (int64_t r = 0; r < outer; ++r) {
    int64_t off = r * inner;
    double mean = 0;
    if constexpr (!IsRMS) {
      for (int64_t i = 0; i < inner; ++i)
        mean += x.getDouble(off + i);
      mean /= static_cast<double>(inner);
    }
    double var = 0;
    for (int64_t i = 0; i < inner; ++i) {
      double d = x.getDouble(off + i) - mean;
      var += d * d;
    }
    var /= static_cast<double>(inner);
    double denom = std::sqrt(var + eps);
    for (int64_t i = 0; i < inner; ++i) {
      double v =
          (x.getDouble(off + i) - mean) / denom * scale.getDouble(scaleAt[i]);
      if (bias)
        v += bias->getDouble(biasAt[i]);
      y.setDouble(off + i, v);
    }
  }
  out.push_back(std::move(y));
  return success();
}

//===----------------------------------------------------------------------===//
// softmax and log_softmax
//===----------------------------------------------------------------------===//

template <bool IsLog>
LogicalResult softmaxKernel(Operation *op, ArrayRef<const Tensor *> in,
                            Results &out) {
  const Tensor &x = *in[0];
  int64_t rawAxis = IsLog
                        ? static_cast<int64_t>(cast<LogSoftmaxOp>(op).getAxis())
                        : static_cast<int64_t>(cast<SoftmaxOp>(op).getAxis());
  int64_t axis = normalizedAxis(rawAxis, x.rank());
  if (axis < 0 || axis >= x.rank())
    return op->emitError() << "axis is out of range for " << x.typeString();
  int64_t len = x.dim(axis);
  int64_t inner = product(x.shape().drop_front(axis + 1));
  int64_t outer = product(x.shape().take_front(axis));
  Tensor y(resultKind(op), x.shape());
  std::vector<double> row(len);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t base = o * len * inner + i;
      double max = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < len; ++j) {
        row[j] = x.getDouble(base + j * inner);
        max =
            std::isnan(row[j]) || std::isnan(max) ? NAN : std::max(max, row[j]);
      }
      double sum = 0;
      for (int64_t j = 0; j < len; ++j)
        sum += std::exp(row[j] - max);
      for (int64_t j = 0; j < len; ++j) {
        double v =
            IsLog ? row[j] - max - std::log(sum) : std::exp(row[j] - max) / sum;
        y.setDouble(base + j * inner, v);
      }
    }
  out.push_back(std::move(y));
  return success();
}

//===----------------------------------------------------------------------===//
// attention
//===----------------------------------------------------------------------===//

LogicalResult attentionKernel(Operation *op, ArrayRef<const Tensor *> in,
                              Results &out) {
  auto attn = cast<AttentionOp>(op);
  const Tensor &q = *in[0], &k = *in[1], &v = *in[2];
  const Tensor *mask = attn.getMask() ? in[3] : nullptr;
  if (q.rank() != 4 || k.rank() != 4 || v.rank() != 4)
    return op->emitError() << "query, key and value must be [B, H, S, D]";
  int64_t b = q.dim(0), h = q.dim(1), s = q.dim(2), d = q.dim(3);
  int64_t hkv = k.dim(1), t = k.dim(2), dv = v.dim(3);
  if (k.dim(0) != b || v.dim(0) != b || k.dim(3) != d || v.dim(1) != hkv ||
      v.dim(2) != t || hkv == 0 || h % hkv != 0)
    return op->emitError() << "query " << q.typeString() << ", key "
                           << k.typeString() << " and value " << v.typeString()
                           << " do not fit together";
  SmallVector<int64_t> scoreShape{b, h, s, t};
  bool boolMask = false;
  if (mask) {
    auto shape = broadcastShapes(scoreShape, mask->shape());
    if (!shape || ArrayRef<int64_t>(*shape) != ArrayRef<int64_t>(scoreShape))
      return op->emitError()
             << "mask " << mask->typeString() << " does not broadcast to "
             << shapeString(scoreShape);
    boolMask = mask->kind() == ElementKind::I1;
    if (!boolMask && !mask->isFloat())
      return op->emitError() << "mask must be boolean or floating-point, got "
                             << mask->typeString();
  }
  double scale = attn.getScale() ? attn.getScale()->convertToDouble()
                                 : 1.0 / std::sqrt(static_cast<double>(d));
  bool positional = attn.hasPositionalMask();
  int64_t group = hkv == 0 ? 1 : h / hkv;
  const double inf = std::numeric_limits<double>::infinity();
  Tensor y(resultKind(op), {b, h, s, dv});
  std::vector<double> scores(t);
  std::vector<double> acc(dv);
  SmallVector<int64_t> index(4);
  for (int64_t bi = 0; bi < b; ++bi)
    for (int64_t hi = 0; hi < h; ++hi) {
      int64_t kvh = hi / group;
      int64_t qBase = (bi * h + hi) * s * d;
      int64_t kBase = (bi * hkv + kvh) * t * d;
      int64_t vBase = (bi * hkv + kvh) * t * dv;
      for (int64_t si = 0; si < s; ++si) {
        double max = -inf;
        for (int64_t ti = 0; ti < t; ++ti) {
          double dot = 0;
          for (int64_t di = 0; di < d; ++di)
            dot += q.getDouble(qBase + si * d + di) *
                   k.getDouble(kBase + ti * d + di);
          double score = dot * scale;
          if (mask) {
            index[0] = bi, index[1] = hi, index[2] = si, index[3] = ti;
            int64_t mi = broadcastSourceIndex(index, mask->shape());
            if (boolMask)
              score = mask->getInt(mi) ? score : -inf;
            else
              score += mask->getDouble(mi);
          }
          if (positional && !attn.keyVisible(si, ti, s, t))
            score = -inf;
          scores[ti] = score;
          max =
              std::isnan(score) || std::isnan(max) ? NAN : std::max(max, score);
        }
        // A row with every key masked (max = -inf) gives zeros, as ONNX's
        // Attention-23 defines it (a plain softmax would give 0 / 0).
        if (max == -inf) {
          int64_t yBase = ((bi * h + hi) * s + si) * dv;
          for (int64_t di = 0; di < dv; ++di)
            y.setDouble(yBase + di, 0.0);
          continue;
        }
        double sum = 0;
        for (int64_t ti = 0; ti < t; ++ti) {
          scores[ti] = std::exp(scores[ti] - max);
          sum += scores[ti];
        }
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int64_t ti = 0; ti < t; ++ti) {
          double p = scores[ti] / sum;
          for (int64_t di = 0; di < dv; ++di)
            acc[di] += p * v.getDouble(vBase + ti * dv + di);
        }
        int64_t yBase = ((bi * h + hi) * s + si) * dv;
        for (int64_t di = 0; di < dv; ++di)
          y.setDouble(yBase + di, acc[di]);
      }
    }
  out.push_back(std::move(y));
  return success();
}

//===----------------------------------------------------------------------===//
// rotary_embedding
//===----------------------------------------------------------------------===//

LogicalResult rotaryKernel(Operation *op, ArrayRef<const Tensor *> in,
                           Results &out) {
  auto rope = cast<RotaryEmbeddingOp>(op);
  const Tensor &x = *in[0], &cosT = *in[1], &sinT = *in[2];
  if (x.rank() < 2 || x.shape().back() % 2 != 0)
    return op->emitError() << "expects an input [..., S, D] with even D, got "
                           << x.typeString();
  int64_t dim = x.shape().back(), half = dim / 2;
  SmallVector<int64_t> tableShape(x.shape());
  tableShape.back() = half;
  for (const Tensor *table : {&cosT, &sinT}) {
    auto shape = broadcastShapes(tableShape, table->shape());
    if (!shape || ArrayRef<int64_t>(*shape) != ArrayRef<int64_t>(tableShape))
      return op->emitError()
             << "table " << table->typeString() << " does not broadcast to "
             << shapeString(tableShape);
  }
  bool interleaved = rope.getInterleaved();
  Tensor y(resultKind(op), x.shape());
  SmallVector<int64_t> rowShape(x.shape().drop_back());
  SmallVector<int64_t> index(x.rank());
  int64_t r = 0;
  forEachIndex(rowShape, [&](int64_t, ArrayRef<int64_t> ri) {
    llvm::copy(ri, index.begin());
    int64_t base = r * dim;
    for (int64_t i = 0; i < half; ++i) {
      index.back() = i;
      double c = cosT.getDouble(broadcastSourceIndex(index, cosT.shape()));
      double sn = sinT.getDouble(broadcastSourceIndex(index, sinT.shape()));
      int64_t first = interleaved ? 2 * i : i;
      int64_t second = interleaved ? 2 * i + 1 : i + half;
      double a = x.getDouble(base + first), bv = x.getDouble(base + second);
      y.setDouble(base + first, a * c - bv * sn);
      y.setDouble(base + second, bv * c + a * sn);
    }
    ++r;
  });
  out.push_back(std::move(y));
  return success();
}

//===----------------------------------------------------------------------===//
// moe
//===----------------------------------------------------------------------===//

/// Routes each token to its top-k experts by score, runs each expert's MLP
/// on the tokens it keeps (capacity: first choices before second choices,
/// in token order) and sums the weighted outputs.
LogicalResult moeKernel(Operation *op, ArrayRef<const Tensor *> in,
                        Results &out) {
  auto moe = cast<MoEOp>(op);
  const Tensor &x = *in[0], &scores = *in[1], &wIn = *in[2], &wOut = *in[3];
  const Tensor *wGate = moe.getWGate() ? in[4] : nullptr;
  if (wGate && wGate->shape() != wIn.shape())
    return op->emitError() << "w_gate " << wGate->typeString()
                           << " does not match w_in " << wIn.typeString();
  if (x.rank() != 2 || scores.rank() != 2 || wIn.rank() != 3 ||
      wOut.rank() != 3 || scores.dim(0) != x.dim(0) ||
      wIn.dim(0) != scores.dim(1) || wOut.dim(0) != scores.dim(1) ||
      wIn.dim(1) != x.dim(1) || wOut.dim(2) != x.dim(1) ||
      wOut.dim(1) != wIn.dim(2))
    return op->emitError() << "shapes do not agree: input " << x.typeString()
                           << ", scores " << scores.typeString() << ", w_in "
                           << wIn.typeString() << ", w_out "
                           << wOut.typeString();
  int64_t tokens = x.dim(0), model = x.dim(1), experts = wIn.dim(0),
          hidden = wIn.dim(2), k = moe.getKAttr().getInt();
  if (k > experts)
    return op->emitError() << "k = " << k << " exceeds the " << experts
                           << " experts";
  StringRef activation = moe.getActivation();
  auto activate = [&](double v) {
    if (activation == "relu")
      return v > 0 ? v : 0.0;
    if (activation == "gelu")
      return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
    if (activation == "silu")
      return v / (1.0 + std::exp(-v));
    return v;
  };
  // choice[t][j]: the j-th expert of token t and its weight.
  std::vector<std::vector<std::pair<int64_t, double>>> choice(tokens);
  for (int64_t t = 0; t < tokens; ++t) {
    SmallVector<int64_t> order(experts);
    std::iota(order.begin(), order.end(), 0);
    // Higher scores first; equal scores keep the lower expert first.
    std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      double sa = scores.getDouble(t * experts + a),
             sb = scores.getDouble(t * experts + b);
      return sa > sb || (sa == sb && a < b);
    });
    double sum = 0;
    for (int64_t j = 0; j < k; ++j) {
      double weight = scores.getDouble(t * experts + order[j]);
      choice[t].push_back({order[j], weight});
      sum += weight;
    }
    if (moe.getNormalize())
      for (auto &[expert, weight] : choice[t])
        weight /= sum;
  }
  int64_t capacity = moe.getCapacity(tokens);
  SmallVector<int64_t> taken(experts, 0);
  std::vector<double> y(tokens * model, 0.0), h(hidden);
  for (int64_t j = 0; j < k; ++j)
    for (int64_t t = 0; t < tokens; ++t) {
      auto [e, weight] = choice[t][j];
      if (taken[e]++ >= capacity)
        continue;
      for (int64_t n = 0; n < hidden; ++n) {
        double acc = 0, gate = 0;
        for (int64_t d = 0; d < model; ++d) {
          int64_t w = (e * model + d) * hidden + n;
          acc += x.getDouble(t * model + d) * wIn.getDouble(w);
          if (wGate)
            gate += x.getDouble(t * model + d) * wGate->getDouble(w);
        }
        // Gated: activation(x @ w_gate) * (x @ w_in).
        h[n] = wGate ? activate(gate) * acc : activate(acc);
      }
      for (int64_t d = 0; d < model; ++d) {
        double acc = 0;
        for (int64_t n = 0; n < hidden; ++n)
          acc += h[n] * wOut.getDouble((e * hidden + n) * model + d);
        y[t * model + d] += weight * acc;
      }
    }
  Tensor result(resultKind(op), x.shape());
  for (int64_t i = 0, e = tokens * model; i < e; ++i)
    result.setDouble(i, y[i]);
  out.push_back(std::move(result));
  return success();
}

//===----------------------------------------------------------------------===//
// resize
//===----------------------------------------------------------------------===//

LogicalResult resizeKernel(Operation *op, ArrayRef<const Tensor *> in,
                           Results &out) {
  const Tensor &x = *in[0];
  int64_t rank = x.rank();
  // `scales` and the optional `roi` are f32 operands (ONNX's form, so that
  // run-time values work); an older form of the op held them as f32 array
  // attributes, which are read when the operands are absent.
  SmallVector<float> scales;
  std::optional<SmallVector<float>> roi;
  auto toFloats = [](const Tensor &t) {
    SmallVector<float> v;
    for (int64_t i = 0, n = t.numElements(); i < n; ++i)
      v.push_back(static_cast<float>(t.getDouble(i)));
    return v;
  };
  if (in.size() >= 2) {
    scales = toFloats(*in[1]);
    if (in.size() >= 3)
      roi = toFloats(*in[2]);
  } else {
    if (auto a = op->getAttrOfType<DenseF32ArrayAttr>("scales"))
      scales.assign(a.asArrayRef().begin(), a.asArrayRef().end());
    if (auto a = op->getAttrOfType<DenseF32ArrayAttr>("roi"))
      roi = SmallVector<float>(a.asArrayRef());
  }
  StringRef mode = strAttr(op, "mode", "nearest");
  StringRef coordMode =
      strAttr(op, "coordinate_transformation_mode", "half_pixel");
  StringRef nearestMode = strAttr(op, "nearest_mode", "round_prefer_floor");
  double cubicA = floatAttr(op, "cubic_coeff_a", -0.75);
  bool excludeOutside = boolAttr(op, "exclude_outside", false);
  double extrapolation = floatAttr(op, "extrapolation_value", 0.0);
  if (static_cast<int64_t>(scales.size()) != rank)
    return op->emitError() << "expects one scale per axis of " << x.typeString()
                           << ", got " << scales.size();
  for (float s : scales)
    if (!(s > 0.0f) || !std::isfinite(s))
      return op->emitError() << "scales must be positive and finite, got " << s;
  if (roi && static_cast<int64_t>(roi->size()) != 2 * rank)
    return op->emitError() << "roi must hold 2 * rank = " << 2 * rank
                           << " values, got " << roi->size();
  bool crop = coordMode == "tf_crop_and_resize";

  // The output shape: the static result dimensions (which hold 'sizes' when
  // those were given), else floor(input * scale).
  RankedTensorType type = resultType(op);
  SmallVector<int64_t> shape(rank);
  for (int64_t i = 0; i < rank; ++i) {
    if (type.getRank() == rank && !type.isDynamicDim(i))
      shape[i] = type.getDimSize(i);
    else
      shape[i] = static_cast<int64_t>(
          std::floor(static_cast<float>(x.dim(i)) * scales[i]));
  }
  if (x.numElements() == 0 && product(shape) != 0)
    return op->emitError() << "cannot resize the empty tensor "
                           << x.typeString();
  if (product(shape) == 0) {
    out.push_back(Tensor(resultKind(op), shape));
    return success();
  }
  // exclude_outside reweights interpolation; a nearest sample has a single
  // neighbour and keeps it (as onnxruntime does).
  excludeOutside &= mode != "nearest";

  // Per axis, per output position: the weighted source indices.
  ResizeSampling sampling{mode,   coordMode,      nearestMode,
                          cubicA, excludeOutside, crop};
  std::vector<SmallVector<ResizeSample>> samples(rank);
  for (int64_t d = 0; d < rank; ++d)
    samples[d] =
        resizeAxisSamples(sampling, scales[d], x.dim(d), shape[d],
                          roi ? (*roi)[d] : 0.0, roi ? (*roi)[rank + d] : 1.0);

  // Zero weights can be skipped unless a non-finite input could turn
  // 0 * x into NaN.
  bool allFinite = true;
  if (x.isFloat())
    for (double v : x.floats())
      if (!std::isfinite(v)) {
        allFinite = false;
        break;
      }
  if (allFinite)
    for (auto &axis : samples)
      for (ResizeSample &s : axis) {
        ResizeSample kept;
        kept.outside = s.outside;
        for (auto [i, w] : llvm::zip(s.index, s.weight))
          if (w != 0) {
            kept.index.push_back(i);
            kept.weight.push_back(w);
          }
        s = std::move(kept);
      }

  SmallVector<int64_t> strides = x.strides();
  Tensor y(resultKind(op), shape);
  bool isFloat = x.isFloat();
  bool pureNearest = mode == "nearest";
  SmallVector<const ResizeSample *> axisSamples(rank);
  SmallVector<size_t> pick(rank);
  forEachIndex(shape, [&](int64_t linear, ArrayRef<int64_t> index) {
    bool outside = false;
    for (int64_t d = 0; d < rank; ++d) {
      axisSamples[d] = &samples[d][index[d]];
      outside |= axisSamples[d]->outside;
    }
    if (outside) {
      y.setDouble(linear, extrapolation);
      return;
    }
    // Nearest sampling copies one element (exact for every element type).
    if (pureNearest && allFinite) {
      int64_t src = 0;
      for (int64_t d = 0; d < rank; ++d)
        src += axisSamples[d]->index[0] * strides[d];
      if (isFloat)
        y.setDouble(linear, x.getDouble(src));
      else
        y.setInt(linear, x.getInt(src));
      return;
    }
    // The tensor product of the per-axis samples, innermost axis fastest.
    for (int64_t d = 0; d < rank; ++d)
      if (axisSamples[d]->index.empty()) {
        y.setDouble(linear, 0.0);
        return;
      }
    std::fill(pick.begin(), pick.end(), 0);
    double sum = 0;
    while (true) {
      double w = 1;
      int64_t src = 0;
      for (int64_t d = 0; d < rank; ++d) {
        w *= axisSamples[d]->weight[pick[d]];
        src += axisSamples[d]->index[pick[d]] * strides[d];
      }
      sum += w * x.getDouble(src);
      int64_t d = rank - 1;
      for (; d >= 0; --d) {
        if (++pick[d] < axisSamples[d]->index.size())
          break;
        pick[d] = 0;
      }
      if (d < 0)
        break;
    }
    y.setDouble(linear, sum);
  });
  out.push_back(std::move(y));
  return success();
}

//===----------------------------------------------------------------------===//
// grid_sample, roi_align, non_max_suppression
//
// These follow ONNX's reference implementation (itself onnxruntime's
// algorithm), which the conformance data comes from.
//===----------------------------------------------------------------------===//

/// Reflects `x` into [lo, hi] by mirroring at the borders, as often as
/// needed.
double reflect(double x, double lo, double hi) {
  double range = hi - lo;
  if (range <= 0)
    return lo;
  if (x < lo) {
    double dx = lo - x;
    double n = std::trunc(dx / range);
    double r = dx - n * range;
    return std::fmod(n, 2.0) == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    double dx = x - hi;
    double n = std::trunc(dx / range);
    double r = dx - n * range;
    return std::fmod(n, 2.0) == 0 ? hi - r : lo + r;
  }
  return x;
}

/// One spatial axis of a grid_sample: its length and padding rule.
struct GridAxis {
  int64_t size;
  bool alignCorners;
  StringRef padding;

  /// The borders that the padding modes clamp or reflect to.
  double lo() const { return alignCorners ? 0.0 : -0.5; }
  double hi() const {
    return alignCorners ? static_cast<double>(size - 1)
                        : static_cast<double>(size) - 0.5;
  }
  /// Normalized [-1, 1] to pixel coordinates.
  double denormalize(double n) const {
    return alignCorners ? (n + 1) / 2 * static_cast<double>(size - 1)
                        : ((n + 1) * static_cast<double>(size) - 1) / 2;
  }
  /// A coordinate outside the borders, moved inside by the padding mode
  /// ("zeros" leaves it; its neighbours then read as zero).
  double pad(double v) const {
    if (v >= lo() && v <= hi())
      return v;
    if (padding == "border")
      return std::clamp(v, 0.0, static_cast<double>(size - 1));
    if (padding == "reflection")
      return reflect(v, lo(), hi());
    return v;
  }
  /// The in-bounds index a neighbour `i` reads, or nullopt for a zero.
  std::optional<int64_t> index(int64_t i) const {
    if (padding == "border")
      return std::clamp<int64_t>(i, 0, size - 1);
    if (padding == "reflection")
      return static_cast<int64_t>(reflect(static_cast<double>(i), lo(), hi()));
    if (i < 0 || i >= size)
      return std::nullopt;
    return i;
  }
};

/// Keys' cubic convolution weights (a = -0.75) of the four neighbours
/// floor(x) - 1 .. floor(x) + 2 at fraction `t`.
std::array<double, 4> cubicWeights(double t) {
  const double a = -0.75;
  double t1 = t + 1, u = 1 - t, u1 = 2 - t;
  return {((a * t1 - 5 * a) * t1 + 8 * a) * t1 - 4 * a,
          ((a + 2) * t - (a + 3)) * t * t + 1,
          ((a + 2) * u - (a + 3)) * u * u + 1,
          ((a * u1 - 5 * a) * u1 + 8 * a) * u1 - 4 * a};
}

/// Samples [N, C, S_1..S_k] (k = 2 or 3 spatial axes) at the grid's
/// [N, O_1..O_k, k] normalized positions, whose component j is the
/// coordinate along spatial axis k - 1 - j ((x, y) or (x, y, z)).
LogicalResult gridSampleKernel(Operation *op, ArrayRef<const Tensor *> in,
                               Results &out) {
  const Tensor &x = *in[0], &grid = *in[1];
  int64_t k = x.rank() - 2;
  if ((k != 2 && k != 3) || grid.rank() != k + 2 || grid.dim(k + 1) != k ||
      grid.dim(0) != x.dim(0))
    return op->emitError() << "expects an input [N, C, H, W] and a grid "
                              "[N, Ho, Wo, 2], or [N, C, D, H, W] and [N, "
                              "Do, Ho, Wo, 3], got "
                           << x.typeString() << " and " << grid.typeString();
  StringRef mode = strAttr(op, "mode", "bilinear");
  StringRef padding = strAttr(op, "padding_mode", "zeros");
  bool alignCorners = boolAttr(op, "align_corners", false);
  if (mode == "bicubic" && k != 2)
    return op->emitError() << "bicubic sampling takes 2 spatial axes, got "
                           << k;
  int64_t n = x.dim(0), c = x.dim(1);
  SmallVector<int64_t> sizes, outSizes;
  SmallVector<GridAxis> axes;
  for (int64_t d = 0; d < k; ++d) {
    sizes.push_back(x.dim(2 + d));
    outSizes.push_back(grid.dim(1 + d));
    axes.push_back(GridAxis{x.dim(2 + d), alignCorners, padding});
  }
  SmallVector<int64_t> yShape = {n, c};
  llvm::append_range(yShape, outSizes);
  Tensor y(resultKind(op), yShape);
  if (y.numElements() == 0) {
    out.push_back(std::move(y));
    return success();
  }
  if (llvm::is_contained(sizes, 0))
    return op->emitError() << "cannot sample the empty image "
                           << x.typeString();
  int64_t imageSize = 1, outPoints = 1;
  for (int64_t d = 0; d < k; ++d) {
    imageSize *= sizes[d];
    outPoints *= outSizes[d];
  }
  // The (flat offset in the image, weight) taps of every output position.
  struct Tap {
    int64_t offset;
    double weight;
  };
  std::vector<Tap> taps;
  // Per spatial axis: the indices its neighbours read (nullopt: a zero)
  // and their weights.
  SmallVector<SmallVector<std::pair<std::optional<int64_t>, double>, 4>, 3>
      neighbours(k);
  for (int64_t ni = 0; ni < n; ++ni)
    for (int64_t o = 0; o < outPoints; ++o) {
      for (int64_t d = 0; d < k; ++d) {
        const GridAxis &axis = axes[d];
        // Spatial axis d is component k - 1 - d of the grid's last axis.
        double p = axis.denormalize(
            grid.getDouble((ni * outPoints + o) * k + (k - 1 - d)));
        neighbours[d].clear();
        if (mode == "nearest") {
          // Round half to even, as PyTorch and ONNX do.
          p = axis.pad(std::nearbyint(p));
          neighbours[d].push_back({axis.index(static_cast<int64_t>(p)), 1.0});
          continue;
        }
        p = axis.pad(p);
        double f = std::floor(p), t = p - f;
        bool cubic = mode == "bicubic";
        SmallVector<double, 4> weights;
        if (cubic) {
          auto w = cubicWeights(t);
          weights.assign(w.begin(), w.end());
        } else {
          weights = {1 - t, t};
        }
        int64_t first = static_cast<int64_t>(f) - (cubic ? 1 : 0);
        for (auto [j, w] : llvm::enumerate(weights))
          neighbours[d].push_back({axis.index(first + int64_t(j)), w});
      }
      // Every combination of one neighbour per axis that reads the image.
      taps.clear();
      SmallVector<size_t, 3> pick(k, 0);
      while (true) {
        int64_t offset = 0;
        double weight = 1;
        bool inside = true;
        for (int64_t d = 0; d < k && inside; ++d) {
          auto [index, w] = neighbours[d][pick[d]];
          inside = index.has_value();
          if (inside) {
            offset = offset * sizes[d] + *index;
            weight *= w;
          }
        }
        if (inside)
          taps.push_back({offset, weight});
        int64_t d = k - 1;
        for (; d >= 0; --d) {
          if (++pick[d] < neighbours[d].size())
            break;
          pick[d] = 0;
        }
        if (d < 0)
          break;
      }
      for (int64_t ci = 0; ci < c; ++ci) {
        int64_t base = (ni * c + ci) * imageSize;
        double v = 0;
        for (const Tap &t : taps)
          v += t.weight * x.getDouble(base + t.offset);
        y.setDouble((ni * c + ci) * outPoints + o, v);
      }
    }
  out.push_back(std::move(y));
  return success();
}

LogicalResult roiAlignKernel(Operation *op, ArrayRef<const Tensor *> in,
                             Results &out) {
  const Tensor &x = *in[0], &rois = *in[1], &batchIndices = *in[2];
  if (x.rank() != 4 || rois.rank() != 2 || rois.dim(1) != 4 ||
      batchIndices.rank() != 1 || batchIndices.dim(0) != rois.dim(0))
    return op->emitError() << "expects an input [N, C, H, W], rois [R, 4] "
                              "and batch_indices [R], got "
                           << x.typeString() << ", " << rois.typeString()
                           << " and " << batchIndices.typeString();
  bool isMax = strAttr(op, "mode", "avg") == "max";
  int64_t pooledH = intAttr(op, "output_height", 1);
  int64_t pooledW = intAttr(op, "output_width", 1);
  int64_t samplingRatio = intAttr(op, "sampling_ratio", 0);
  // The attribute is f32; the arithmetic below follows the reference in
  // double.
  double spatialScale = floatAttr(op, "spatial_scale", 1.0);
  bool halfPixel = strAttr(op, "coordinate_transformation_mode",
                           "half_pixel") == "half_pixel";
  int64_t numRois = rois.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
  Tensor y(resultKind(op), {numRois, c, pooledH, pooledW});
  // A bilinear sample: four input offsets and their weights.
  struct Sample {
    int64_t pos[4] = {0, 0, 0, 0};
    double weight[4] = {0, 0, 0, 0};
  };
  std::vector<Sample> samples;
  for (int64_t r = 0; r < numRois; ++r) {
    int64_t batch = batchIndices.getInt(r);
    if (batch < 0 || batch >= x.dim(0))
      return op->emitError() << "batch index " << batch << " of roi " << r
                             << " is out of range for " << x.typeString();
    double offset = halfPixel ? 0.5 : 0.0;
    double startW = rois.getDouble(r * 4 + 0) * spatialScale - offset;
    double startH = rois.getDouble(r * 4 + 1) * spatialScale - offset;
    double endW = rois.getDouble(r * 4 + 2) * spatialScale - offset;
    double endH = rois.getDouble(r * 4 + 3) * spatialScale - offset;
    double roiW = endW - startW, roiH = endH - startH;
    if (!halfPixel) {
      roiW = std::max(roiW, 1.0);
      roiH = std::max(roiH, 1.0);
    }
    double binH = roiH / static_cast<double>(pooledH);
    double binW = roiW / static_cast<double>(pooledW);
    int64_t gridH = samplingRatio > 0
                        ? samplingRatio
                        : static_cast<int64_t>(std::ceil(roiH / pooledH));
    int64_t gridW = samplingRatio > 0
                        ? samplingRatio
                        : static_cast<int64_t>(std::ceil(roiW / pooledW));
    gridH = std::max<int64_t>(gridH, 0);
    gridW = std::max<int64_t>(gridW, 0);
    double count = static_cast<double>(std::max<int64_t>(gridH * gridW, 1));
    // The samples of every bin, bin-major.
    samples.assign(pooledH * pooledW * gridH * gridW, Sample());
    int64_t si = 0;
    for (int64_t ph = 0; ph < pooledH; ++ph)
      for (int64_t pw = 0; pw < pooledW; ++pw)
        for (int64_t iy = 0; iy < gridH; ++iy) {
          double yy = startH + ph * binH + (iy + 0.5) * binH / gridH;
          for (int64_t ix = 0; ix < gridW; ++ix, ++si) {
            double xx = startW + pw * binW + (ix + 0.5) * binW / gridW;
            // Samples beyond a pixel outside the map contribute zero.
            if (yy < -1.0 || yy > h || xx < -1.0 || xx > w)
              continue;
            double sy = std::max(yy, 0.0), sx = std::max(xx, 0.0);
            int64_t yLow = static_cast<int64_t>(sy), yHigh;
            int64_t xLow = static_cast<int64_t>(sx), xHigh;
            if (yLow >= h - 1) {
              yHigh = yLow = h - 1;
              sy = static_cast<double>(yLow);
            } else {
              yHigh = yLow + 1;
            }
            if (xLow >= w - 1) {
              xHigh = xLow = w - 1;
              sx = static_cast<double>(xLow);
            } else {
              xHigh = xLow + 1;
            }
            double ly = sy - yLow, lx = sx - xLow, hy = 1 - ly, hx = 1 - lx;
            Sample &s = samples[si];
            s.pos[0] = yLow * w + xLow;
            s.pos[1] = yLow * w + xHigh;
            s.pos[2] = yHigh * w + xLow;
            s.pos[3] = yHigh * w + xHigh;
            s.weight[0] = hy * hx;
            s.weight[1] = hy * lx;
            s.weight[2] = ly * hx;
            s.weight[3] = ly * lx;
          }
        }
    int64_t perBin = gridH * gridW;
    for (int64_t ci = 0; ci < c; ++ci) {
      int64_t base = (batch * c + ci) * h * w;
      for (int64_t bin = 0; bin < pooledH * pooledW; ++bin) {
        double v = 0;
        for (int64_t k = 0; k < perBin; ++k) {
          const Sample &s = samples[bin * perBin + k];
          if (isMax) {
            // onnxruntime's (and ONNX's reference) max mode: the largest
            // weighted corner of each sample, maximized over the samples.
            double m = s.weight[0] * x.getDouble(base + s.pos[0]);
            for (int corner = 1; corner < 4; ++corner)
              m = std::max(m, s.weight[corner] *
                                  x.getDouble(base + s.pos[corner]));
            v = k == 0 ? m : std::max(v, m);
          } else {
            for (int corner = 0; corner < 4; ++corner)
              v += s.weight[corner] * x.getDouble(base + s.pos[corner]);
          }
        }
        if (!isMax)
          v /= count;
        y.setDouble((r * c + ci) * pooledH * pooledW + bin, v);
      }
    }
  }
  out.push_back(std::move(y));
  return success();
}

/// Whether box `a` overlaps box `b` by more than `threshold` (IoU), boxes
/// being 4 values at `boxes[a * 4]` and `boxes[b * 4]`.
bool suppressedByIoU(const Tensor &boxes, int64_t a, int64_t b,
                     bool centerPointBox, double threshold) {
  auto corners = [&](int64_t box, double &yMin, double &xMin, double &yMax,
                     double &xMax) {
    double v0 = boxes.getDouble(box * 4), v1 = boxes.getDouble(box * 4 + 1),
           v2 = boxes.getDouble(box * 4 + 2), v3 = boxes.getDouble(box * 4 + 3);
    if (centerPointBox) {
      // [x_center, y_center, width, height]
      xMin = v0 - v2 / 2;
      xMax = v0 + v2 / 2;
      yMin = v1 - v3 / 2;
      yMax = v1 + v3 / 2;
    } else {
      // [y1, x1, y2, x2], either corner first
      yMin = std::min(v0, v2);
      yMax = std::max(v0, v2);
      xMin = std::min(v1, v3);
      xMax = std::max(v1, v3);
    }
  };
  double ay0, ax0, ay1, ax1, by0, bx0, by1, bx1;
  corners(a, ay0, ax0, ay1, ax1);
  corners(b, by0, bx0, by1, bx1);
  double ix0 = std::max(ax0, bx0), ix1 = std::min(ax1, bx1);
  double iy0 = std::max(ay0, by0), iy1 = std::min(ay1, by1);
  if (ix1 <= ix0 || iy1 <= iy0)
    return false;
  double intersection = (ix1 - ix0) * (iy1 - iy0);
  double areaA = (ax1 - ax0) * (ay1 - ay0), areaB = (bx1 - bx0) * (by1 - by0);
  double unionArea = areaA + areaB - intersection;
  if (intersection <= 0 || areaA <= 0 || areaB <= 0 || unionArea <= 0)
    return false;
  return intersection / unionArea > threshold;
}

LogicalResult nonMaxSuppressionKernel(Operation *op,
                                      ArrayRef<const Tensor *> in,
                                      Results &out) {
  const Tensor &boxes = *in[0], &scores = *in[1];
  if (boxes.rank() != 3 || boxes.dim(2) != 4 || scores.rank() != 3 ||
      scores.dim(0) != boxes.dim(0) || scores.dim(2) != boxes.dim(1))
    return op->emitError() << "expects boxes [B, N, 4] and scores [B, C, N], "
                              "got "
                           << boxes.typeString() << " and "
                           << scores.typeString();
  // The optional scalar operands, by their operand segments.
  const Tensor *scalars[3] = {nullptr, nullptr, nullptr};
  auto segments = op->getAttrOfType<DenseI32ArrayAttr>("operandSegmentSizes");
  size_t next = 2;
  for (int i = 0; i < 3; ++i) {
    bool present =
        segments ? segments.asArrayRef()[2 + i] != 0 : next < in.size();
    if (present && next < in.size())
      scalars[i] = in[next++];
  }
  const char *names[] = {"max_output_boxes_per_class", "iou_threshold",
                         "score_threshold"};
  for (int i = 0; i < 3; ++i)
    if (scalars[i] && scalars[i]->numElements() != 1)
      return op->emitError() << names[i] << " must hold one value, got "
                             << scalars[i]->typeString();
  // ONNX's defaults: select nothing, IoU threshold 0, no score threshold.
  int64_t maxPerClass =
      scalars[0] ? std::max<int64_t>(scalars[0]->getInt(0), 0) : 0;
  double iouThreshold = scalars[1] ? scalars[1]->getDouble(0) : 0.0;
  std::optional<double> scoreThreshold;
  if (scalars[2])
    scoreThreshold = scalars[2]->getDouble(0);
  bool centerPointBox = boolAttr(op, "center_point_box", false);

  int64_t numBatches = boxes.dim(0), numBoxes = boxes.dim(1);
  int64_t numClasses = scores.dim(1);
  std::vector<int64_t> selected; // flat [batch, class, box] triples
  std::vector<int64_t> candidates, chosen;
  for (int64_t b = 0; b < numBatches; ++b)
    for (int64_t cls = 0; cls < numClasses; ++cls) {
      int64_t scoreBase = (b * numClasses + cls) * numBoxes;
      candidates.clear();
      for (int64_t i = 0; i < numBoxes; ++i)
        if (!scoreThreshold ||
            scores.getDouble(scoreBase + i) > *scoreThreshold)
          candidates.push_back(i);
      // Highest score first; equal scores by lower box index.
      llvm::sort(candidates, [&](int64_t l, int64_t r) {
        double sl = scores.getDouble(scoreBase + l),
               sr = scores.getDouble(scoreBase + r);
        return sl > sr || (sl == sr && l < r);
      });
      chosen.clear();
      for (int64_t box : candidates) {
        if (static_cast<int64_t>(chosen.size()) >= maxPerClass)
          break;
        bool keep = llvm::none_of(chosen, [&](int64_t other) {
          return suppressedByIoU(boxes, b * numBoxes + box,
                                 b * numBoxes + other, centerPointBox,
                                 iouThreshold);
        });
        if (!keep)
          continue;
        chosen.push_back(box);
        selected.insert(selected.end(), {b, cls, box});
      }
    }
  int64_t count = static_cast<int64_t>(selected.size()) / 3;
  Tensor y(ElementKind::I64, {count, 3});
  for (int64_t i = 0; i < count * 3; ++i)
    y.setInt(i, selected[i]);
  out.push_back(std::move(y));
  return success();
}

} // namespace

void registerNNKernels(KernelRegistry &r) {
  r.add("loom.matmul", matmulKernel);
  r.add("loom.conv", convKernel);
  r.add("loom.conv_transpose", convTransposeKernel);
  r.add("loom.max_pool", poolKernel<PoolKind::Max>);
  r.add("loom.max_pool_with_indices", poolKernel<PoolKind::MaxWithIndices>);
  r.add("loom.avg_pool", poolKernel<PoolKind::Avg>);
  r.add("loom.batch_norm", batchNormKernel);
  r.add("loom.instance_norm", instanceNormKernel);
  r.add("loom.layer_norm", trailingNormKernel<false>);
  r.add("loom.rms_norm", trailingNormKernel<true>);
  r.add("loom.softmax", softmaxKernel<false>);
  r.add("loom.log_softmax", softmaxKernel<true>);
  r.add("loom.attention", attentionKernel);
  r.add("loom.rotary_embedding", rotaryKernel);
  r.add("loom.moe", moeKernel);
  r.add("loom.resize", resizeKernel);
  r.add("loom.grid_sample", gridSampleKernel);
  r.add("loom.roi_align", roiAlignKernel);
  r.add("loom.non_max_suppression", nonMaxSuppressionKernel);
}

} // namespace loom::reference
