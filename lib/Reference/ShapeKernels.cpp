//===- ShapeKernels.cpp - Reference kernels for shapes and data movement --===//
//
// Kernels that move elements without computing on them (reshape, transpose,
// slicing, gathers, scatters, padding, ...) and the ops that produce shapes
// and index tensors. Run-time shape operands are checked here; a bad value
// (an out-of-range index, an element count that does not match) is an error
// at the op, never undefined behaviour.
//
// loom.constant lives with the upstream kernels.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;

namespace loom::reference {
namespace {

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// The most elements a result whose shape comes from run-time values may
/// have: a bad shape operand is reported instead of exhausting memory.
constexpr int64_t kMaxElements = int64_t(1) << 32;

int64_t product(ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? ", " : "") + std::to_string(d);
  return s + "]";
}

/// Checks a shape computed from run-time values: no negative dimension and
/// at most kMaxElements elements (an empty shape may have larger dimensions
/// as long as their product fits in 64 bits).
LogicalResult checkShape(Operation *op, ArrayRef<int64_t> shape) {
  int64_t n = 1;
  bool empty = false, overflow = false;
  for (int64_t d : shape) {
    if (d < 0)
      return op->emitError() << "result dimension " << d << " is negative";
    if (d == 0)
      empty = true;
    else if (__builtin_mul_overflow(n, d, &n))
      overflow = true;
  }
  if (overflow || (!empty && n > kMaxElements))
    return op->emitError() << "result shape " << shapeString(shape)
                           << " has more elements than the reference "
                              "executor supports";
  return success();
}

/// Copies element `i` of `src` to element `j` of `dst`; both have one kind.
inline void copyElement(const Tensor &src, int64_t i, Tensor &dst, int64_t j) {
  if (src.isFloat())
    dst.floats()[j] = src.floats()[i];
  else
    dst.ints()[j] = src.ints()[i];
}

/// Copies `n` consecutive elements.
inline void copyElements(const Tensor &src, int64_t i, Tensor &dst, int64_t j,
                         int64_t n) {
  if (src.isFloat())
    std::copy_n(src.floats().begin() + i, n, dst.floats().begin() + j);
  else
    std::copy_n(src.ints().begin() + i, n, dst.ints().begin() + j);
}

/// Normalizes a possibly negative index into [0, extent); emits an error
/// when it is out of range.
FailureOr<int64_t> getIndex(Operation *op, int64_t index, int64_t extent,
                            StringRef what = "index") {
  int64_t i = index < 0 ? index + extent : index;
  if (i < 0 || i >= extent)
    return op->emitError() << what << " " << index
                           << " is out of range for a dimension of size "
                           << extent;
  return i;
}

/// Reads the single value of a scalar operand (rank 0 or one element).
FailureOr<int64_t> getScalarInt(Operation *op, const Tensor &t,
                                StringRef what) {
  if (t.numElements() != 1)
    return op->emitError() << what << " must hold one value, got "
                           << t.typeString();
  return t.getInt(0);
}

//===----------------------------------------------------------------------===//
// Reshapes and permutations
//===----------------------------------------------------------------------===//

LogicalResult reshapeKernel(Operation *op, ArrayRef<const Tensor *> in,
                            SmallVectorImpl<Tensor> &out) {
  const Tensor &x = *in[0];
  bool allowZero = cast<ReshapeOp>(op).getAllowzero();
  SmallVector<int64_t> spec = toInts(*in[1]);
  SmallVector<int64_t> shape;
  int64_t inferred = -1, known = 1;
  bool hasZero = false;
  for (int64_t i = 0, e = spec.size(); i < e; ++i) {
    int64_t d = spec[i];
    if (d == -1) {
      if (inferred >= 0)
        return op->emitError()
               << "shape " << shapeString(spec) << " has more than one -1";
      inferred = i;
      shape.push_back(1);
      continue;
    }
    if (d < -1)
      return op->emitError()
             << "shape " << shapeString(spec) << " has a negative dimension";
    if (d == 0) {
      hasZero = true;
      if (!allowZero) {
        if (i >= x.rank())
          return op->emitError()
                 << "shape " << shapeString(spec) << " copies dimension " << i
                 << " of an input of rank " << x.rank();
        d = x.dim(i);
      }
    }
    shape.push_back(d);
    // Saturates: a product past int64 cannot match any element count.
    if (__builtin_mul_overflow(known, d, &known))
      known = std::numeric_limits<int64_t>::max();
  }
  if (allowZero && hasZero && inferred >= 0)
    return op->emitError() << "shape " << shapeString(spec)
                           << " has both 0 and -1 with allowzero";
  int64_t n = x.numElements();
  if (inferred >= 0) {
    if (known == 0 || n % known != 0)
      return op->emitError() << "cannot reshape " << x.typeString()
                             << " to shape " << shapeString(spec);
    shape[inferred] = n / known;
  } else if (known != n) {
    return op->emitError() << "cannot reshape " << x.typeString() << " (" << n
                           << " elements) to " << shapeString(shape);
  }
  if (failed(checkShape(op, shape)))
    return failure();
  out.push_back(x.reshaped(shape));
  return success();
}

LogicalResult transposeKernel(Operation *op, ArrayRef<const Tensor *> in,
                              SmallVectorImpl<Tensor> &out) {
  const Tensor &x = *in[0];
  ArrayRef<int64_t> perm = cast<TransposeOp>(op).getPerm();
  if (static_cast<int64_t>(perm.size()) != x.rank())
    return op->emitError() << "perm has " << perm.size()
                           << " entries for an input of rank " << x.rank();
  SmallVector<int64_t> shape, inStrides = x.strides(), strides;
  SmallVector<bool> seen(x.rank(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= x.rank() || seen[p])
      return op->emitError() << "perm is not a permutation";
    seen[p] = true;
    shape.push_back(x.dim(p));
    strides.push_back(inStrides[p]);
  }
  Tensor y(x.kind(), shape);
  forEachIndex(shape, [&](int64_t linear, ArrayRef<int64_t> index) {
    int64_t src = 0;
    for (size_t d = 0; d < index.size(); ++d)
      src += index[d] * strides[d];
    copyElement(x, src, y, linear);
  });
  out.push_back(std::move(y));
  return success();
}

LogicalResult squeezeKernel(Operation *op, ArrayRef<const Tensor *> in,
                            SmallVectorImpl<Tensor> &out) {
  const Tensor &x = *in[0];
  ArrayRef<int64_t> axes = cast<SqueezeOp>(op).getAxes();
  SmallVector<bool> drop(x.rank(), false);
  for (int64_t axis : axes) {
    FailureOr<int64_t> a = getAxis(op, axis, x.rank());
    if (failed(a))
      return failure();
    if (x.dim(*a) != 1)
      return op->emitError()
             << "cannot squeeze dimension " << *a << " of size " << x.dim(*a);
    drop[*a] = true;
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < x.rank(); ++d)
    if (!(axes.empty() ? x.dim(d) == 1 : drop[d]))
      shape.push_back(x.dim(d));
  out.push_back(x.reshaped(shape));
  return success();
}

LogicalResult unsqueezeKernel(Operation *op, ArrayRef<const Tensor *> in,
                              SmallVectorImpl<Tensor> &out) {
  const Tensor &x = *in[0];
  ArrayRef<int64_t> axes = cast<UnsqueezeOp>(op).getAxes();
  int64_t rank = x.rank() + axes.size();
  SmallVector<bool> inserted(rank, false);
  for (int64_t axis : axes) {
    int64_t a = normalizedAxis(axis, rank);
    if (a < 0 || a >= rank || inserted[a])
      return op->emitError()
             << "unsqueeze axis " << axis << " is out of range or repeated";
    inserted[a] = true;
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0, next = 0; d < rank; ++d)
    shape.push_back(inserted[d] ? 1 : x.dim(next++));
  out.push_back(x.reshaped(shape));
  return success();
}

//===----------------------------------------------------------------------===//
// Concatenation, splitting and slicing
//===----------------------------------------------------------------------===//

LogicalResult concatKernel(Operation *op, ArrayRef<const Tensor *> in,
                           SmallVectorImpl<Tensor> &out) {
  if (in.empty())
    return op->emitError() << "concat needs at least one operand";
  const Tensor &first = *in[0];
  FailureOr<int64_t> axis =
      getAxis(op, cast<ConcatOp>(op).getAxis(), first.rank());
  if (failed(axis))
    return failure();
  SmallVector<int64_t> shape(first.shape());
  shape[*axis] = 0;
  for (const Tensor *t : in) {
    bool ok = t->rank() == first.rank() && t->kind() == first.kind();
    for (int64_t d = 0; ok && d < t->rank(); ++d)
      ok = d == *axis || t->dim(d) == first.dim(d);
    if (!ok)
      return op->emitError()
             << "cannot concatenate " << t->typeString() << " with "
             << first.typeString() << " along axis " << *axis;
    shape[*axis] += t->dim(*axis);
  }
  Tensor y(first.kind(), shape);
  int64_t outer = product(ArrayRef<int64_t>(shape).take_front(*axis));
  int64_t inner = product(ArrayRef<int64_t>(shape).drop_front(*axis + 1));
  int64_t rowSize = shape[*axis] * inner, offset = 0;
  for (const Tensor *t : in) {
    int64_t chunk = t->dim(*axis) * inner;
    for (int64_t o = 0; o < outer; ++o)
      copyElements(*t, o * chunk, y, o * rowSize + offset, chunk);
    offset += chunk;
  }
  out.push_back(std::move(y));
  return success();
}

/// The filled part of the cache after the append. The reference executor
/// keeps no state between runs: it appends to a copy of the cache operand,
/// which is what one call of the compiled code computes.
LogicalResult cacheAppendKernel(Operation *op, ArrayRef<const Tensor *> in,
                                SmallVectorImpl<Tensor> &out) {
  const Tensor &cache = *in[0], &update = *in[1];
  FailureOr<int64_t> axis =
      getAxis(op, cast<CacheAppendOp>(op).getAxis(), cache.rank());
  if (failed(axis))
    return failure();
  int64_t length = in[2]->getInt(0), capacity = cache.dim(*axis);
  int64_t added = update.dim(*axis);
  if (length < 0 || length > capacity || added > capacity - length)
    return op->emitError() << "the cache holds " << capacity
                           << " positions; this call fills " << length << " + "
                           << added;
  bool ok = update.rank() == cache.rank() && update.kind() == cache.kind();
  for (int64_t d = 0; ok && d < cache.rank(); ++d)
    ok = d == *axis || update.dim(d) == cache.dim(d);
  if (!ok)
    return op->emitError() << "cannot append " << update.typeString()
                           << " to the cache " << cache.typeString()
                           << " along axis " << *axis;
  SmallVector<int64_t> shape(cache.shape());
  shape[*axis] = length + added;
  Tensor y(cache.kind(), shape);
  int64_t outer = product(ArrayRef<int64_t>(shape).take_front(*axis));
  int64_t inner = product(ArrayRef<int64_t>(shape).drop_front(*axis + 1));
  for (int64_t o = 0; o < outer; ++o) {
    copyElements(cache, o * capacity * inner, y, o * shape[*axis] * inner,
                 length * inner);
    copyElements(update, o * added * inner, y,
                 (o * shape[*axis] + length) * inner, added * inner);
  }
  out.push_back(std::move(y));
  return success();
}

LogicalResult splitKernel(Operation *op, ArrayRef<const Tensor *> in,
                          SmallVectorImpl<Tensor> &out) {
  auto split = cast<SplitOp>(op);
  const Tensor &x = *in[0];
  FailureOr<int64_t> axis = getAxis(op, split.getAxis(), x.rank());
  if (failed(axis))
    return failure();
  int64_t extent = x.dim(*axis);
  int64_t pieces = op->getNumResults();
  if (pieces == 0)
    return op->emitError() << "split needs at least one result";
  SmallVector<int64_t> sizes;
  if (std::optional<ArrayRef<int64_t>> given = split.getSizes()) {
    sizes.assign(given->begin(), given->end());
    if (static_cast<int64_t>(sizes.size()) != pieces)
      return op->emitError()
             << "has " << sizes.size() << " sizes for " << pieces << " results";
    int64_t total = 0;
    for (int64_t s : sizes) {
      if (s < 0)
        return op->emitError() << "split size " << s << " is negative";
      total += s;
    }
    if (total != extent)
      return op->emitError()
             << "split sizes add up to " << total << ", but axis " << *axis
             << " has size " << extent;
  } else {
    // Equal pieces; when the extent does not divide, pieces of
    // ceil(extent / pieces) and a smaller last one (ONNX Split-18).
    int64_t chunk = (extent + pieces - 1) / pieces;
    int64_t last = extent - chunk * (pieces - 1);
    if (last < 0)
      return op->emitError() << "cannot split a dimension of size " << extent
                             << " into " << pieces << " pieces";
    sizes.assign(pieces - 1, chunk);
    sizes.push_back(last);
  }
  int64_t outer = product(x.shape().take_front(*axis));
  int64_t inner = product(x.shape().drop_front(*axis + 1));
  int64_t offset = 0;
  for (int64_t size : sizes) {
    SmallVector<int64_t> shape(x.shape());
    shape[*axis] = size;
    Tensor y(x.kind(), shape);
    int64_t chunk = size * inner;
    for (int64_t o = 0; o < outer; ++o)
      copyElements(x, o * extent * inner + offset, y, o * chunk, chunk);
    offset += chunk;
    out.push_back(std::move(y));
  }
  return success();
}

LogicalResult sliceKernel(Operation *op, ArrayRef<const Tensor *> in,
                          SmallVectorImpl<Tensor> &out) {
  auto slice = cast<SliceOp>(op);
  const Tensor &x = *in[0];
  int64_t rank = x.rank();
  SmallVector<int64_t> starts = toInts(*in[1]), ends = toInts(*in[2]);
  unsigned next = 3;
  SmallVector<int64_t> axes, steps;
  if (slice.getAxes())
    axes = toInts(*in[next++]);
  else
    for (int64_t i = 0, e = starts.size(); i < e; ++i)
      axes.push_back(i);
  if (slice.getSteps())
    steps = toInts(*in[next++]);
  else
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    return op->emitError() << "starts, ends, axes and steps have lengths "
                           << starts.size() << ", " << ends.size() << ", "
                           << axes.size() << ", " << steps.size();
  SmallVector<int64_t> begin(rank, 0), stride(rank, 1), shape(x.shape());
  SmallVector<bool> seen(rank, false);
  for (size_t i = 0; i < starts.size(); ++i) {
    FailureOr<int64_t> axis = getAxis(op, axes[i], rank);
    if (failed(axis))
      return failure();
    if (seen[*axis])
      return op->emitError() << "axis " << axes[i] << " is sliced twice";
    seen[*axis] = true;
    int64_t dim = x.dim(*axis), step = steps[i];
    if (step == 0)
      return op->emitError() << "slice step is zero";
    int64_t start = starts[i], end = ends[i];
    if (start < 0)
      start += dim;
    if (end < 0)
      end += dim;
    int64_t length;
    if (dim == 0) {
      start = 0;
      length = 0;
    } else if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      // ceil((end - start) / step) without overflow.
      length = end > start ? (end - start - 1) / step + 1 : 0;
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      // -step cannot overflow as an unsigned magnitude.
      uint64_t magnitude = uint64_t(-(step + 1)) + 1;
      length =
          start > end ? int64_t(uint64_t(start - end - 1) / magnitude) + 1 : 0;
    }
    begin[*axis] = start;
    stride[*axis] = step;
    shape[*axis] = length;
  }
  Tensor y(x.kind(), shape);
  SmallVector<int64_t> strides = x.strides();
  forEachIndex(shape, [&](int64_t linear, ArrayRef<int64_t> index) {
    int64_t src = 0;
    for (int64_t d = 0; d < rank; ++d)
      src += (begin[d] + index[d] * stride[d]) * strides[d];
    copyElement(x, src, y, linear);
  });
  out.push_back(std::move(y));
  return success();
}

//===----------------------------------------------------------------------===//
// Gathers
//===----------------------------------------------------------------------===//

LogicalResult gatherKernel(Operation *op, ArrayRef<const Tensor *> in,
                           SmallVectorImpl<Tensor> &out) {
  const Tensor &data = *in[0], &indices = *in[1];
  FailureOr<int64_t> axis =
      getAxis(op, cast<GatherOp>(op).getAxis(), data.rank());
  if (failed(axis))
    return failure();
  int64_t extent = data.dim(*axis);
  SmallVector<int64_t> idx;
  for (int64_t i = 0, n = indices.numElements(); i < n; ++i) {
    FailureOr<int64_t> v = getIndex(op, indices.getInt(i), extent);
    if (failed(v))
      return failure();
    idx.push_back(*v);
  }
  SmallVector<int64_t> shape(data.shape().take_front(*axis));
  llvm::append_range(shape, indices.shape());
  llvm::append_range(shape, data.shape().drop_front(*axis + 1));
  Tensor y(data.kind(), shape);
  int64_t outer = product(data.shape().take_front(*axis));
  int64_t inner = product(data.shape().drop_front(*axis + 1));
  int64_t count = idx.size();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < count; ++j)
      copyElements(data, (o * extent + idx[j]) * inner, y,
                   (o * count + j) * inner, inner);
  out.push_back(std::move(y));
  return success();
}

/// Checks the shape of the indices of gather_elements / scatter_elements:
/// data's rank and, except along `axis`, no dimension larger than data's.
LogicalResult checkElementIndices(Operation *op, const Tensor &data,
                                  const Tensor &indices, int64_t axis) {
  bool ok = indices.rank() == data.rank();
  for (int64_t d = 0; ok && d < data.rank(); ++d)
    ok = d == axis || indices.dim(d) <= data.dim(d);
  if (!ok)
    return op->emitError() << "indices " << indices.typeString()
                           << " do not fit data " << data.typeString()
                           << " outside axis " << axis;
  return success();
}

LogicalResult gatherElementsKernel(Operation *op, ArrayRef<const Tensor *> in,
                                   SmallVectorImpl<Tensor> &out) {
  const Tensor &data = *in[0], &indices = *in[1];
  FailureOr<int64_t> axis =
      getAxis(op, cast<GatherElementsOp>(op).getAxis(), data.rank());
  if (failed(axis) || failed(checkElementIndices(op, data, indices, *axis)))
    return failure();
  Tensor y(data.kind(), indices.shape());
  SmallVector<int64_t> strides = data.strides();
  LogicalResult status = success();
  forEachIndex(indices.shape(), [&](int64_t linear, ArrayRef<int64_t> index) {
    if (failed(status))
      return;
    FailureOr<int64_t> v =
        getIndex(op, indices.getInt(linear), data.dim(*axis));
    if (failed(v)) {
      status = failure();
      return;
    }
    int64_t src = 0;
    for (int64_t d = 0; d < data.rank(); ++d)
      src += (d == *axis ? *v : index[d]) * strides[d];
    copyElement(data, src, y, linear);
  });
  if (failed(status))
    return failure();
  out.push_back(std::move(y));
  return success();
}

/// The element offsets into `data` of the slices that index tuples address:
/// the last dimension of `indices` (length `k`) addresses dimensions
/// [batchDims, batchDims + k) of `data`, within batch `b` of the leading
/// `batchDims` dimensions. Returns one offset per tuple in row-major order.
FailureOr<SmallVector<int64_t>> tupleOffsets(Operation *op, const Tensor &data,
                                             const Tensor &indices,
                                             int64_t batchDims) {
  int64_t k = indices.dim(indices.rank() - 1);
  SmallVector<int64_t> strides = data.strides();
  int64_t batchCount = product(indices.shape().take_front(batchDims));
  int64_t perBatch = product(indices.shape().drop_front(batchDims).drop_back());
  int64_t batchStride = batchDims == 0 ? 0 : strides[batchDims - 1];
  SmallVector<int64_t> offsets;
  for (int64_t b = 0; b < batchCount; ++b) {
    for (int64_t t = 0; t < perBatch; ++t) {
      int64_t base = (b * perBatch + t) * k, offset = b * batchStride;
      for (int64_t j = 0; j < k; ++j) {
        FailureOr<int64_t> v =
            getIndex(op, indices.getInt(base + j), data.dim(batchDims + j));
        if (failed(v))
          return failure();
        offset += *v * strides[batchDims + j];
      }
      offsets.push_back(offset);
    }
  }
  return offsets;
}

LogicalResult gatherNDKernel(Operation *op, ArrayRef<const Tensor *> in,
                             SmallVectorImpl<Tensor> &out) {
  const Tensor &data = *in[0], &indices = *in[1];
  int64_t b = cast<GatherNDOp>(op).getBatchDims();
  if (indices.rank() < 1 || b < 0 || b >= data.rank() || b >= indices.rank())
    return op->emitError() << "batch_dims " << b
                           << " must be smaller than the ranks of data and "
                              "indices";
  int64_t k = indices.dim(indices.rank() - 1);
  if (k < 1 || b + k > data.rank())
    return op->emitError() << "index tuples of length " << k
                           << " do not address data " << data.typeString()
                           << " with batch_dims " << b;
  if (data.shape().take_front(b) != indices.shape().take_front(b))
    return op->emitError() << "batch dimensions of data " << data.typeString()
                           << " and indices " << indices.typeString()
                           << " differ";
  FailureOr<SmallVector<int64_t>> offsets = tupleOffsets(op, data, indices, b);
  if (failed(offsets))
    return failure();
  SmallVector<int64_t> shape(indices.shape().drop_back());
  llvm::append_range(shape, data.shape().drop_front(b + k));
  int64_t sliceSize = product(data.shape().drop_front(b + k));
  Tensor y(data.kind(), shape);
  for (auto [t, offset] : llvm::enumerate(*offsets))
    copyElements(data, offset, y, t * sliceSize, sliceSize);
  out.push_back(std::move(y));
  return success();
}

//===----------------------------------------------------------------------===//
// Scatters
//===----------------------------------------------------------------------===//

/// Combines element `i` of `src` into element `j` of `dst` per `reduction`.
void combine(StringRef reduction, const Tensor &src, int64_t i, Tensor &dst,
             int64_t j) {
  if (reduction == "none") {
    copyElement(src, i, dst, j);
    return;
  }
  if (dst.isFloat()) {
    double a = dst.floats()[j], b = src.floats()[i], r;
    if (reduction == "add")
      r = a + b;
    else if (reduction == "mul")
      r = a * b;
    else if (std::isnan(a) || std::isnan(b))
      r = NAN;
    else
      r = reduction == "max" ? std::max(a, b) : std::min(a, b);
    dst.setDouble(j, r);
    return;
  }
  int64_t a = dst.ints()[j], b = src.ints()[i], r;
  bool isUnsigned = isUnsignedKind(dst.kind());
  auto less = [&](int64_t p, int64_t q) {
    return isUnsigned ? uint64_t(p) < uint64_t(q) : p < q;
  };
  if (reduction == "add")
    r = int64_t(uint64_t(a) + uint64_t(b));
  else if (reduction == "mul")
    r = int64_t(uint64_t(a) * uint64_t(b));
  else if (reduction == "max")
    r = less(a, b) ? b : a;
  else
    r = less(b, a) ? b : a;
  dst.setInt(j, r);
}

LogicalResult checkReduction(Operation *op, StringRef reduction) {
  if (!llvm::is_contained({"none", "add", "mul", "max", "min"}, reduction))
    return op->emitError() << "unsupported reduction '" << reduction << "'";
  return success();
}

LogicalResult scatterElementsKernel(Operation *op, ArrayRef<const Tensor *> in,
                                    SmallVectorImpl<Tensor> &out) {
  auto scatter = cast<ScatterElementsOp>(op);
  const Tensor &data = *in[0], &indices = *in[1], &updates = *in[2];
  StringRef reduction = scatter.getReduction();
  FailureOr<int64_t> axis = getAxis(op, scatter.getAxis(), data.rank());
  if (failed(axis) || failed(checkReduction(op, reduction)) ||
      failed(checkElementIndices(op, data, indices, *axis)))
    return failure();
  if (updates.shape() != indices.shape())
    return op->emitError() << "updates " << updates.typeString()
                           << " must have the shape of indices "
                           << indices.typeString();
  Tensor y = data;
  SmallVector<int64_t> strides = data.strides();
  LogicalResult status = success();
  forEachIndex(indices.shape(), [&](int64_t linear, ArrayRef<int64_t> index) {
    if (failed(status))
      return;
    FailureOr<int64_t> v =
        getIndex(op, indices.getInt(linear), data.dim(*axis));
    if (failed(v)) {
      status = failure();
      return;
    }
    int64_t dst = 0;
    for (int64_t d = 0; d < data.rank(); ++d)
      dst += (d == *axis ? *v : index[d]) * strides[d];
    combine(reduction, updates, linear, y, dst);
  });
  if (failed(status))
    return failure();
  out.push_back(std::move(y));
  return success();
}

LogicalResult scatterNDKernel(Operation *op, ArrayRef<const Tensor *> in,
                              SmallVectorImpl<Tensor> &out) {
  const Tensor &data = *in[0], &indices = *in[1], &updates = *in[2];
  StringRef reduction = cast<ScatterNDOp>(op).getReduction();
  if (failed(checkReduction(op, reduction)))
    return failure();
  if (indices.rank() < 1)
    return op->emitError() << "indices must have rank >= 1";
  int64_t k = indices.dim(indices.rank() - 1);
  if (k > data.rank())
    return op->emitError() << "index tuples of length " << k
                           << " are longer than the rank of data "
                           << data.typeString();
  SmallVector<int64_t> expected(indices.shape().drop_back());
  llvm::append_range(expected, data.shape().drop_front(k));
  if (updates.shape() != ArrayRef<int64_t>(expected))
    return op->emitError() << "updates " << updates.typeString()
                           << " must have shape " << shapeString(expected);
  FailureOr<SmallVector<int64_t>> offsets = tupleOffsets(op, data, indices, 0);
  if (failed(offsets))
    return failure();
  int64_t sliceSize = product(data.shape().drop_front(k));
  Tensor y = data;
  for (auto [t, offset] : llvm::enumerate(*offsets))
    for (int64_t e = 0; e < sliceSize; ++e)
      combine(reduction, updates, t * sliceSize + e, y, offset + e);
  out.push_back(std::move(y));
  return success();
}

//===----------------------------------------------------------------------===//
// Padding, broadcasting and tiling
//===----------------------------------------------------------------------===//

LogicalResult padKernel(Operation *op, ArrayRef<const Tensor *> in,
                        SmallVectorImpl<Tensor> &out) {
  auto pad = cast<PadOp>(op);
  const Tensor &x = *in[0];
  int64_t rank = x.rank();
  StringRef mode = pad.getMode();
  if (!llvm::is_contained({"constant", "reflect", "edge", "wrap"}, mode))
    return op->emitError() << "unsupported pad mode '" << mode << "'";
  SmallVector<int64_t> pads = toInts(*in[1]);
  if (static_cast<int64_t>(pads.size()) != 2 * rank)
    return op->emitError() << "pads holds " << pads.size()
                           << " values, expected 2 * rank = " << 2 * rank;
  const Tensor *value = nullptr;
  if (pad.getConstantValue()) {
    value = in[2];
    if (value->numElements() > 1)
      return op->emitError()
             << "constant_value must be a scalar, got " << value->typeString();
    if (value->numElements() == 0)
      value = nullptr;
  }
  // Negative pads crop; the other modes then pad the cropped window, which
  // starts at `cropBegin` and has `window` elements.
  SmallVector<int64_t> shape, cropBegin, window, padBegin;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t b = pads[d], e = pads[rank + d], dim = x.dim(d);
    int64_t size = dim + b + e;
    if (size < 0)
      return op->emitError()
             << "pads " << b << " and " << e << " crop more than dimension "
             << d << " of size " << dim;
    shape.push_back(size);
    cropBegin.push_back(std::max<int64_t>(-b, 0));
    padBegin.push_back(std::max<int64_t>(b, 0));
    window.push_back(dim - std::max<int64_t>(-b, 0) - std::max<int64_t>(-e, 0));
    if (mode != "constant" && size > 0 && window.back() <= 0)
      return op->emitError() << "cannot pad an empty dimension " << d << " in "
                             << mode << " mode";
  }
  if (failed(checkShape(op, shape)))
    return failure();
  Tensor y(x.kind(), shape);
  SmallVector<int64_t> strides = x.strides();
  forEachIndex(shape, [&](int64_t linear, ArrayRef<int64_t> index) {
    int64_t src = 0;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t c = index[d] - padBegin[d], m = window[d];
      if (c < 0 || c >= m) {
        if (mode == "constant") {
          src = -1;
          break;
        }
        if (mode == "edge") {
          c = std::clamp<int64_t>(c, 0, m - 1);
        } else if (mode == "wrap") {
          c = ((c % m) + m) % m;
        } else if (m == 1) { // reflect
          c = 0;
        } else {
          int64_t period = 2 * (m - 1);
          c = ((c % period) + period) % period;
          if (c >= m)
            c = period - c;
        }
      }
      src += (cropBegin[d] + c) * strides[d];
    }
    if (src >= 0)
      copyElement(x, src, y, linear);
    else if (value)
      copyElement(*value, 0, y, linear);
  });
  out.push_back(std::move(y));
  return success();
}

LogicalResult expandKernel(Operation *op, ArrayRef<const Tensor *> in,
                           SmallVectorImpl<Tensor> &out) {
  const Tensor &x = *in[0];
  SmallVector<int64_t> spec = toInts(*in[1]);
  for (int64_t d : spec)
    if (d < 0)
      return op->emitError()
             << "shape " << shapeString(spec) << " has a negative dimension";
  auto shape = broadcastShapes(x.shape(), spec);
  if (!shape)
    return op->emitError() << "cannot expand " << x.typeString() << " to "
                           << shapeString(spec);
  if (failed(checkShape(op, *shape)))
    return failure();
  Tensor y(x.kind(), *shape);
  forEachIndex(*shape, [&](int64_t linear, ArrayRef<int64_t> index) {
    copyElement(x, broadcastSourceIndex(index, x.shape()), y, linear);
  });
  out.push_back(std::move(y));
  return success();
}

LogicalResult tileKernel(Operation *op, ArrayRef<const Tensor *> in,
                         SmallVectorImpl<Tensor> &out) {
  const Tensor &x = *in[0];
  SmallVector<int64_t> repeats = toInts(*in[1]);
  if (static_cast<int64_t>(repeats.size()) != x.rank())
    return op->emitError() << "repeats has " << repeats.size()
                           << " values for an input of rank " << x.rank();
  SmallVector<int64_t> shape;
  for (auto [d, r] : llvm::enumerate(repeats)) {
    if (r < 0)
      return op->emitError() << "repeat " << r << " is negative";
    if (r != 0 && x.dim(d) > kMaxElements / r)
      return op->emitError() << "result has more elements than the reference "
                                "executor supports";
    shape.push_back(x.dim(d) * r);
  }
  if (failed(checkShape(op, shape)))
    return failure();
  Tensor y(x.kind(), shape);
  SmallVector<int64_t> strides = x.strides();
  forEachIndex(shape, [&](int64_t linear, ArrayRef<int64_t> index) {
    int64_t src = 0;
    for (int64_t d = 0; d < x.rank(); ++d)
      src += (index[d] % x.dim(d)) * strides[d];
    copyElement(x, src, y, linear);
  });
  out.push_back(std::move(y));
  return success();
}

//===----------------------------------------------------------------------===//
// Shapes, ranges and constants
//===----------------------------------------------------------------------===//

LogicalResult shapeKernel(Operation *op, ArrayRef<const Tensor *> in,
                          SmallVectorImpl<Tensor> &out) {
  auto shapeOp = cast<ShapeOp>(op);
  const Tensor &x = *in[0];
  int64_t rank = x.rank();
  auto clamp = [&](int64_t v) {
    if (v < 0)
      v += rank;
    return std::clamp<int64_t>(v, 0, rank);
  };
  int64_t start = clamp(shapeOp.getStart());
  int64_t end = clamp(shapeOp.getEnd() ? int64_t(*shapeOp.getEnd()) : rank);
  int64_t length = std::max<int64_t>(end - start, 0);
  Tensor y(ElementKind::I64, {length});
  for (int64_t i = 0; i < length; ++i)
    y.setInt(i, x.dim(start + i));
  out.push_back(std::move(y));
  return success();
}

LogicalResult sizeKernel(Operation *, ArrayRef<const Tensor *> in,
                         SmallVectorImpl<Tensor> &out) {
  Tensor y(ElementKind::I64, {});
  y.setInt(0, in[0]->numElements());
  out.push_back(std::move(y));
  return success();
}

LogicalResult rangeKernel(Operation *op, ArrayRef<const Tensor *> in,
                          SmallVectorImpl<Tensor> &out) {
  for (const Tensor *t : in)
    if (t->numElements() != 1)
      return op->emitError() << "start, limit and delta must be scalars, got "
                             << t->typeString();
  ElementKind kind = resultKind(op);
  const Tensor &start = *in[0], &limit = *in[1], &delta = *in[2];
  if (isFloatKind(kind)) {
    double s = start.getDouble(0), l = limit.getDouble(0),
           d = delta.getDouble(0);
    if (d == 0 || std::isnan(s) || std::isnan(l) || std::isnan(d) ||
        std::isinf(s) || std::isinf(l) || std::isinf(d))
      return op->emitError() << "range(" << s << ", " << l << ", " << d
                             << ") is not a finite sequence";
    // As ONNX Runtime: limit - start in the element type, the quotient in
    // double. The elements are start + i * delta (the ONNX definition).
    double q = std::ceil(roundFloat(kind, l - s) / d);
    int64_t n = q > 0 ? static_cast<int64_t>(std::min(q, 1e18)) : 0;
    if (failed(checkShape(op, {n})))
      return failure();
    Tensor y(kind, {n});
    for (int64_t i = 0; i < n; ++i)
      y.setDouble(i, s + double(i) * d);
    out.push_back(std::move(y));
    return success();
  }
  auto value = [&](const Tensor &t) -> __int128 {
    int64_t v = t.getInt(0);
    return kind == ElementKind::U64 ? __int128(uint64_t(v)) : __int128(v);
  };
  __int128 s = value(start), l = value(limit), d = value(delta);
  if (d == 0)
    return op->emitError() << "range delta is zero";
  __int128 diff = l - s, q = diff / d;
  if (diff % d != 0 && ((diff > 0) == (d > 0)))
    ++q;
  if (q < 0)
    q = 0;
  if (q > kMaxElements)
    return op->emitError() << "range has more elements than the reference "
                              "executor supports";
  int64_t n = static_cast<int64_t>(q);
  Tensor y(kind, {n});
  for (int64_t i = 0; i < n; ++i)
    y.setInt(i, static_cast<int64_t>(s + __int128(i) * d));
  out.push_back(std::move(y));
  return success();
}

LogicalResult constantOfShapeKernel(Operation *op, ArrayRef<const Tensor *> in,
                                    SmallVectorImpl<Tensor> &out) {
  SmallVector<int64_t> shape = toInts(*in[0]);
  if (failed(checkShape(op, shape)))
    return failure();
  TypedAttr value = cast<ConstantOfShapeOp>(op).getValue();
  Tensor y(resultKind(op), shape);
  int64_t n = y.numElements();
  if (auto f = dyn_cast<FloatAttr>(value)) {
    llvm::APFloat v = f.getValue();
    bool lost;
    v.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
              &lost);
    for (int64_t i = 0; i < n; ++i)
      y.setDouble(i, v.convertToDouble());
  } else if (auto integer = dyn_cast<IntegerAttr>(value)) {
    const llvm::APInt &v = integer.getValue();
    bool zext =
        integer.getType().isUnsignedInteger() || integer.getType().isInteger(1);
    int64_t raw = zext ? int64_t(v.getZExtValue()) : v.getSExtValue();
    for (int64_t i = 0; i < n; ++i)
      y.setInt(i, raw);
  } else {
    return op->emitError() << "unsupported value " << value;
  }
  out.push_back(std::move(y));
  return success();
}

LogicalResult oneHotKernel(Operation *op, ArrayRef<const Tensor *> in,
                           SmallVectorImpl<Tensor> &out) {
  const Tensor &indices = *in[0], &values = *in[2];
  FailureOr<int64_t> depth = getScalarInt(op, *in[1], "depth");
  if (failed(depth))
    return failure();
  if (*depth < 0)
    return op->emitError() << "depth " << *depth << " is negative";
  if (values.numElements() != 2)
    return op->emitError() << "values must be [off, on], got "
                           << values.typeString();
  FailureOr<int64_t> axis =
      getAxis(op, cast<OneHotOp>(op).getAxis(), indices.rank() + 1);
  if (failed(axis))
    return failure();
  SmallVector<int64_t> shape(indices.shape());
  shape.insert(shape.begin() + *axis, *depth);
  if (failed(checkShape(op, shape)))
    return failure();
  Tensor y(values.kind(), shape);
  int64_t outer = product(indices.shape().take_front(*axis));
  int64_t inner = product(indices.shape().drop_front(*axis));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      int64_t hot = indices.getInt(o * inner + i);
      if (hot < 0)
        hot += *depth;
      for (int64_t d = 0; d < *depth; ++d)
        copyElement(values, d == hot ? 1 : 0, y, (o * *depth + d) * inner + i);
    }
  }
  out.push_back(std::move(y));
  return success();
}

LogicalResult triluKernel(Operation *op, ArrayRef<const Tensor *> in,
                          SmallVectorImpl<Tensor> &out) {
  const Tensor &x = *in[0];
  if (x.rank() < 2)
    return op->emitError() << "trilu needs an input of rank >= 2, got "
                           << x.typeString();
  int64_t k = 0;
  if (cast<TriluOp>(op).getK()) {
    FailureOr<int64_t> v = getScalarInt(op, *in[1], "k");
    if (failed(v))
      return failure();
    k = *v;
  }
  bool upper = cast<TriluOp>(op).getUpper();
  int64_t rows = x.dim(x.rank() - 2), cols = x.dim(x.rank() - 1);
  Tensor y(x.kind(), x.shape());
  for (int64_t i = 0, n = x.numElements(); i < n; ++i) {
    int64_t col = i % cols, row = (i / cols) % rows;
    int64_t diagonal = col - row;
    if (upper ? diagonal >= k : diagonal <= k)
      copyElement(x, i, y, i);
  }
  out.push_back(std::move(y));
  return success();
}

LogicalResult nonZeroKernel(Operation *, ArrayRef<const Tensor *> in,
                            SmallVectorImpl<Tensor> &out) {
  const Tensor &x = *in[0];
  SmallVector<SmallVector<int64_t>> found;
  forEachIndex(x.shape(), [&](int64_t linear, ArrayRef<int64_t> index) {
    bool nonZero =
        x.isFloat() ? x.floats()[linear] != 0.0 : x.ints()[linear] != 0;
    if (nonZero)
      found.emplace_back(index.begin(), index.end());
  });
  int64_t count = found.size();
  Tensor y(ElementKind::I64, {x.rank(), count});
  for (int64_t j = 0; j < count; ++j)
    for (int64_t d = 0; d < x.rank(); ++d)
      y.setInt(d * count + j, found[j][d]);
  out.push_back(std::move(y));
  return success();
}

} // namespace

void registerShapeKernels(KernelRegistry &r) {
  r.add("loom.reshape", reshapeKernel);
  r.add("loom.transpose", transposeKernel);
  r.add("loom.squeeze", squeezeKernel);
  r.add("loom.unsqueeze", unsqueezeKernel);
  r.add("loom.concat", concatKernel);
  r.add("loom.cache_append", cacheAppendKernel);
  r.add("loom.split", splitKernel);
  r.add("loom.slice", sliceKernel);
  r.add("loom.gather", gatherKernel);
  r.add("loom.gather_elements", gatherElementsKernel);
  r.add("loom.gather_nd", gatherNDKernel);
  r.add("loom.scatter_elements", scatterElementsKernel);
  r.add("loom.scatter_nd", scatterNDKernel);
  r.add("loom.pad", padKernel);
  r.add("loom.expand", expandKernel);
  r.add("loom.tile", tileKernel);
  r.add("loom.shape", shapeKernel);
  r.add("loom.size", sizeKernel);
  r.add("loom.range", rangeKernel);
  r.add("loom.constant_of_shape", constantOfShapeKernel);
  r.add("loom.one_hot", oneHotKernel);
  r.add("loom.trilu", triluKernel);
  r.add("loom.non_zero", nonZeroKernel);
}

} // namespace loom::reference
