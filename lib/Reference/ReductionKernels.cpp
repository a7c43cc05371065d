//===- ReductionKernels.cpp - Reference kernels for reductions ------------===//
//
// Reductions over axes, arg-reductions, cumulative sums and top-k.
//
// Floating-point reductions accumulate in double and round once when the
// result is stored; integer reductions accumulate modulo 2^64 and wrap to the
// element type on store (which equals wrapping at every step); the integer
// mean divides the 64-bit sum, truncating toward zero. An empty reduction
// gives the identity: 0, 1, NaN for a float mean (an error for an integer
// one), and for max/min -inf/+inf or the integer type's lowest/highest value
// (ONNX). NaN handling follows numpy, as the ONNX reference implementation
// does: reduce_max and reduce_min propagate NaN, argmax and argmin pick a NaN
// when there is one, and top-k orders NaN above every number.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

using namespace mlir;

namespace loom::reference {
namespace {

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

int64_t product(ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

/// The smallest value of an integer kind (as stored: unsigned kinds hold
/// their bit pattern).
int64_t lowestInt(ElementKind kind) {
  if (kind == ElementKind::I1 || isUnsignedKind(kind))
    return 0;
  unsigned width = getBitWidth(kind);
  return width >= 64 ? std::numeric_limits<int64_t>::min()
                     : -(int64_t(1) << (width - 1));
}

/// The largest value of an integer kind (ui64's is the all-ones pattern).
int64_t highestInt(ElementKind kind) {
  if (kind == ElementKind::I1)
    return 1;
  unsigned width = getBitWidth(kind);
  if (isUnsignedKind(kind))
    return width >= 64 ? int64_t(-1) : (int64_t(1) << width) - 1;
  return width >= 64 ? std::numeric_limits<int64_t>::max()
                     : (int64_t(1) << (width - 1)) - 1;
}

/// a < b for two stored integers of `kind`.
bool intLess(ElementKind kind, int64_t a, int64_t b) {
  if (isUnsignedKind(kind))
    return uint64_t(a) < uint64_t(b);
  return a < b;
}

/// Three-way comparison of elements `a` and `b` of `t`, NaN above every
/// number and equal to itself.
int compareElements(const Tensor &t, int64_t a, int64_t b) {
  if (t.isFloat()) {
    double x = t.floats()[a], y = t.floats()[b];
    bool nx = std::isnan(x), ny = std::isnan(y);
    if (nx || ny)
      return nx == ny ? 0 : (nx ? 1 : -1);
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  int64_t x = t.ints()[a], y = t.ints()[b];
  if (intLess(t.kind(), x, y))
    return -1;
  return intLess(t.kind(), y, x) ? 1 : 0;
}

/// The three sizes that address a tensor around one axis: the product of the
/// dimensions before it, its extent, and the product of those after it.
struct AxisView {
  int64_t outer, extent, inner;
};

AxisView viewAround(ArrayRef<int64_t> shape, int64_t axis) {
  return {product(shape.take_front(axis)), shape[axis],
          product(shape.drop_front(axis + 1))};
}

//===----------------------------------------------------------------------===//
// reduce_*
//===----------------------------------------------------------------------===//

enum class ReduceKind { Sum, Mean, Max, Min, Prod };

template <typename OpTy, ReduceKind Kind>
LogicalResult reduceKernel(Operation *op, ArrayRef<const Tensor *> in,
                           SmallVectorImpl<Tensor> &out) {
  auto reduceOp = cast<OpTy>(op);
  const Tensor &x = *in[0];
  int64_t rank = x.rank();
  ArrayRef<int64_t> axes = reduceOp.getAxes();
  SmallVector<bool> reduced(rank, axes.empty());
  for (int64_t axis : axes) {
    if (axis < 0 || axis >= rank)
      return op->emitError() << "reduction axis " << axis
                             << " is out of range for rank " << rank;
    reduced[axis] = true;
  }
  // The shape with reduced dimensions kept as 1 addresses the accumulators.
  SmallVector<int64_t> keptShape, resultShape;
  int64_t count = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (reduced[d]) {
      count *= x.dim(d);
      keptShape.push_back(1);
      if (reduceOp.getKeepdims())
        resultShape.push_back(1);
    } else {
      keptShape.push_back(x.dim(d));
      resultShape.push_back(x.dim(d));
    }
  }
  int64_t n = product(keptShape);
  ElementKind kind = resultKind(op);
  Tensor y(kind, resultShape);
  SmallVector<int64_t> index(rank);

  // Maps every input element to its accumulator.
  auto forEachInput = [&](llvm::function_ref<void(int64_t, int64_t)> fn) {
    forEachIndex(x.shape(), [&](int64_t linear, ArrayRef<int64_t> at) {
      for (int64_t d = 0; d < rank; ++d)
        index[d] = reduced[d] ? 0 : at[d];
      fn(linear, linearIndex(index, keptShape));
    });
  };

  if (x.isFloat()) {
    double init = 0.0;
    if (Kind == ReduceKind::Prod)
      init = 1.0;
    else if (Kind == ReduceKind::Max)
      init = -std::numeric_limits<double>::infinity();
    else if (Kind == ReduceKind::Min)
      init = std::numeric_limits<double>::infinity();
    std::vector<double> acc(n, init);
    const std::vector<double> &data = x.floats();
    forEachInput([&](int64_t i, int64_t j) {
      double v = data[i];
      double &a = acc[j];
      switch (Kind) {
      case ReduceKind::Sum:
      case ReduceKind::Mean:
        a += v;
        break;
      case ReduceKind::Prod:
        a *= v;
        break;
      case ReduceKind::Max:
        a = std::isnan(a) || std::isnan(v) ? NAN : std::max(a, v);
        break;
      case ReduceKind::Min:
        a = std::isnan(a) || std::isnan(v) ? NAN : std::min(a, v);
        break;
      }
    });
    for (int64_t j = 0; j < n; ++j)
      y.setDouble(j,
                  Kind == ReduceKind::Mean ? acc[j] / double(count) : acc[j]);
    out.push_back(std::move(y));
    return success();
  }

  ElementKind inKind = x.kind();
  int64_t init = 0;
  if (Kind == ReduceKind::Prod)
    init = 1;
  else if (Kind == ReduceKind::Max)
    init = lowestInt(inKind);
  else if (Kind == ReduceKind::Min)
    init = highestInt(inKind);
  if (Kind == ReduceKind::Mean && count == 0 && n != 0)
    return op->emitError() << "the mean of an empty reduction of "
                           << getElementKindName(inKind)
                           << " values is undefined";
  std::vector<int64_t> acc(n, init);
  const std::vector<int64_t> &data = x.ints();
  forEachInput([&](int64_t i, int64_t j) {
    int64_t v = data[i];
    int64_t &a = acc[j];
    switch (Kind) {
    case ReduceKind::Sum:
    case ReduceKind::Mean:
      a = int64_t(uint64_t(a) + uint64_t(v));
      break;
    case ReduceKind::Prod:
      a = int64_t(uint64_t(a) * uint64_t(v));
      break;
    case ReduceKind::Max:
      if (intLess(inKind, a, v))
        a = v;
      break;
    case ReduceKind::Min:
      if (intLess(inKind, v, a))
        a = v;
      break;
    }
  });
  for (int64_t j = 0; j < n; ++j) {
    int64_t v = acc[j];
    if (Kind == ReduceKind::Mean) {
      // The integer mean is the 64-bit sum divided with truncation toward
      // zero: exact for every narrow type (a reference that accumulates in
      // the element type differs once that narrow sum overflows).
      if (isUnsignedKind(inKind))
        v = int64_t(uint64_t(v) / uint64_t(count));
      else
        v = v / count;
    }
    y.setInt(j, v);
  }
  out.push_back(std::move(y));
  return success();
}

//===----------------------------------------------------------------------===//
// argmax / argmin
//===----------------------------------------------------------------------===//

template <typename OpTy, bool IsMax>
LogicalResult argReduceKernel(Operation *op, ArrayRef<const Tensor *> in,
                              SmallVectorImpl<Tensor> &out) {
  auto argOp = cast<OpTy>(op);
  const Tensor &x = *in[0];
  FailureOr<int64_t> axis = getAxis(op, int64_t(argOp.getAxis()), x.rank());
  if (failed(axis))
    return failure();
  AxisView v = viewAround(x.shape(), *axis);
  if (v.extent == 0 && v.outer * v.inner != 0)
    return op->emitError() << (IsMax ? "argmax" : "argmin")
                           << " over an empty axis";
  SmallVector<int64_t> shape(x.shape());
  if (argOp.getKeepdims())
    shape[*axis] = 1;
  else
    shape.erase(shape.begin() + *axis);
  bool last = argOp.getSelectLastIndex();
  Tensor y(ElementKind::I64, shape);
  // Whether candidate `c` replaces the best so far, `b`: a strictly better
  // value, or an equal one when the last index is wanted. A NaN beats any
  // number for both argmax and argmin (numpy).
  auto replaces = [&](int64_t c, int64_t b) {
    if (x.isFloat()) {
      double cv = x.floats()[c], bv = x.floats()[b];
      bool cn = std::isnan(cv), bn = std::isnan(bv);
      if (cn || bn)
        return cn && (!bn || last);
    }
    int cmp = compareElements(x, c, b);
    return (IsMax ? cmp > 0 : cmp < 0) || (cmp == 0 && last);
  };
  for (int64_t o = 0; o < v.outer; ++o) {
    for (int64_t i = 0; i < v.inner; ++i) {
      int64_t base = o * v.extent * v.inner + i;
      int64_t best = 0;
      for (int64_t k = 1; k < v.extent; ++k)
        if (replaces(base + k * v.inner, base + best * v.inner))
          best = k;
      y.setInt(o * v.inner + i, best);
    }
  }
  out.push_back(std::move(y));
  return success();
}

//===----------------------------------------------------------------------===//
// cumsum, cumprod
//===----------------------------------------------------------------------===//

/// Running sums or products along the op's axis; integers wrap (computed
/// in uint64 and truncated to the element type).
template <typename OpTy>
LogicalResult cumulativeKernel(Operation *op, ArrayRef<const Tensor *> in,
                               SmallVectorImpl<Tensor> &out) {
  constexpr bool product = std::is_same_v<OpTy, CumProdOp>;
  auto cumulative = cast<OpTy>(op);
  const Tensor &x = *in[0];
  FailureOr<int64_t> axis =
      getAxis(op, int64_t(cumulative.getAxis()), x.rank());
  if (failed(axis))
    return failure();
  AxisView v = viewAround(x.shape(), *axis);
  bool exclusive = cumulative.getExclusive(), reverse = cumulative.getReverse();
  Tensor y(x.kind(), x.shape());
  for (int64_t o = 0; o < v.outer; ++o) {
    for (int64_t i = 0; i < v.inner; ++i) {
      double facc = product ? 1.0 : 0.0;
      uint64_t iacc = product ? 1 : 0;
      for (int64_t step = 0; step < v.extent; ++step) {
        int64_t k = reverse ? v.extent - 1 - step : step;
        int64_t at = (o * v.extent + k) * v.inner + i;
        auto combine = [&] {
          if (x.isFloat()) {
            double value = x.floats()[at];
            facc = product ? facc * value : facc + value;
          } else {
            uint64_t value = uint64_t(x.ints()[at]);
            iacc = product ? iacc * value : iacc + value;
          }
        };
        if (!exclusive)
          combine();
        if (x.isFloat())
          y.setDouble(at, facc);
        else
          y.setInt(at, int64_t(iacc));
        if (exclusive)
          combine();
      }
    }
  }
  out.push_back(std::move(y));
  return success();
}

//===----------------------------------------------------------------------===//
// topk
//===----------------------------------------------------------------------===//

LogicalResult topkKernel(Operation *op, ArrayRef<const Tensor *> in,
                         SmallVectorImpl<Tensor> &out) {
  auto topk = cast<TopKOp>(op);
  const Tensor &x = *in[0];
  FailureOr<int64_t> axis = getAxis(op, int64_t(topk.getAxis()), x.rank());
  if (failed(axis))
    return failure();
  if (in[1]->numElements() != 1)
    return op->emitError() << "k must hold one value, got "
                           << in[1]->typeString();
  int64_t k = in[1]->getInt(0);
  AxisView v = viewAround(x.shape(), *axis);
  if (k < 0 || k > v.extent)
    return op->emitError() << "k = " << k << " is out of range [0, " << v.extent
                           << "] for axis " << *axis;
  bool largest = topk.getLargest();
  SmallVector<int64_t> shape(x.shape());
  shape[*axis] = k;
  Tensor values(x.kind(), shape), indices(ElementKind::I64, shape);
  // Always sorted (an unsorted result may be in any order); equal values
  // keep the lower index first.
  std::vector<int64_t> order(v.extent);
  for (int64_t o = 0; o < v.outer; ++o) {
    for (int64_t i = 0; i < v.inner; ++i) {
      int64_t base = o * v.extent * v.inner + i;
      std::iota(order.begin(), order.end(), 0);
      std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        int cmp = compareElements(x, base + a * v.inner, base + b * v.inner);
        if (cmp == 0)
          return a < b;
        return largest ? cmp > 0 : cmp < 0;
      });
      for (int64_t j = 0; j < k; ++j) {
        int64_t src = base + order[j] * v.inner;
        int64_t dst = (o * k + j) * v.inner + i;
        if (x.isFloat())
          values.floats()[dst] = x.floats()[src];
        else
          values.ints()[dst] = x.ints()[src];
        indices.setInt(dst, order[j]);
      }
    }
  }
  out.push_back(std::move(values));
  out.push_back(std::move(indices));
  return success();
}

} // namespace

void registerReductionKernels(KernelRegistry &r) {
  r.add("loom.reduce_sum", reduceKernel<ReduceSumOp, ReduceKind::Sum>);
  r.add("loom.reduce_mean", reduceKernel<ReduceMeanOp, ReduceKind::Mean>);
  r.add("loom.reduce_max", reduceKernel<ReduceMaxOp, ReduceKind::Max>);
  r.add("loom.reduce_min", reduceKernel<ReduceMinOp, ReduceKind::Min>);
  r.add("loom.reduce_prod", reduceKernel<ReduceProdOp, ReduceKind::Prod>);
  r.add("loom.argmax", argReduceKernel<ArgMaxOp, /*IsMax=*/true>);
  r.add("loom.argmin", argReduceKernel<ArgMinOp, /*IsMax=*/false>);
  r.add("loom.cumsum", cumulativeKernel<CumSumOp>);
  r.add("loom.cumprod", cumulativeKernel<CumProdOp>);
  r.add("loom.topk", topkKernel);
}

} // namespace loom::reference
