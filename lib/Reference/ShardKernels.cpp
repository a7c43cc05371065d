//===- ShardKernels.cpp - Reference kernels for the shard dialect ---------===//
//
// A program partitioned over a device grid runs once per rank (see
// executeRanks); these kernels find their rank and the communicator in the
// thread's RankContext. A rank's position in a grid is its linear index in
// the grid's shape (row-major), and the position of a rank inside the group
// of a collective is the row-major index of its coordinates along the op's
// `grid_axes`, in the order listed (as upstream's partitioning computes it).
//
// Results the shard dialect leaves undefined (gather and reduce on non-root
// ranks, shift without rotate on ranks without a source) are zero-filled, so
// that a program which reads them shows it.
//
// The file also holds kernels for the scalar arith/tensor ops that compute
// with the `index` values of shard ops (process ids, dynamic roots and
// destinations); a scalar is held as a rank-0 tensor, `index` as i64.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include "loom/Reference/Collectives.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/SymbolTable.h"

#include <cmath>

using namespace mlir;

namespace loom::reference {
namespace {

//===----------------------------------------------------------------------===//
// Grids and groups
//===----------------------------------------------------------------------===//

/// The grid an op runs on, with its dynamic dimensions resolved against the
/// number of ranks.
struct Grid {
  llvm::SmallVector<int64_t> shape;
  RankContext *context;

  int64_t rank() const { return context->rank; }

  llvm::SmallVector<int64_t> coordinates(int64_t linear) const {
    llvm::SmallVector<int64_t> index(shape.size());
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      index[d] = linear % shape[d];
      linear /= shape[d];
    }
    return index;
  }

  /// The ranks that share this rank's coordinates off `axes`, in in-group
  /// order.
  llvm::SmallVector<int64_t> group(ArrayRef<int16_t> axes) const {
    llvm::SmallVector<int64_t> base = coordinates(rank());
    llvm::SmallVector<int64_t> groupShape;
    for (int16_t a : axes)
      groupShape.push_back(shape[a]);
    llvm::SmallVector<int64_t> members;
    forEachIndex(groupShape, [&](int64_t, ArrayRef<int64_t> inGroup) {
      llvm::SmallVector<int64_t> index = base;
      for (auto [i, a] : llvm::enumerate(axes))
        index[a] = inGroup[i];
      members.push_back(linearIndex(index, shape));
    });
    return members;
  }

  /// The rank at in-group multi-index `inGroup` of this rank's group.
  int64_t memberAt(ArrayRef<int16_t> axes, ArrayRef<int64_t> inGroup) const {
    llvm::SmallVector<int64_t> index = coordinates(rank());
    for (auto [i, a] : llvm::enumerate(axes))
      index[a] = inGroup[i];
    return linearIndex(index, shape);
  }

  /// This rank's position in its group along `axes`.
  int64_t positionIn(ArrayRef<int16_t> axes) const {
    return positionOf(axes, rank());
  }

  /// The position of `member` in this rank's group along `axes`.
  int64_t positionOf(ArrayRef<int16_t> axes, int64_t member) const {
    llvm::SmallVector<int64_t> members = group(axes);
    return llvm::find(members, member) - members.begin();
  }
};

/// The element kind of a scalar or tensor type, `index` being i64.
std::optional<ElementKind> scalarKind(Type type) {
  Type element = getElementTypeOrSelf(type);
  if (element.isIndex())
    return ElementKind::I64;
  return getElementKind(element);
}

/// "2x?x4".
std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s;
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? "x" : "") +
         (ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d));
  return s;
}

/// Resolves the grid `op` refers to and checks it against the ranks.
FailureOr<Grid> getGrid(Operation *op, FlatSymbolRefAttr symbol,
                        ArrayRef<int16_t> axes = {}) {
  RankContext *context = getCurrentRankContext();
  if (!context)
    return op->emitError() << "shard ops need a rank context (executeRanks)";
  auto gridOp = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(op, symbol);
  if (!gridOp)
    return op->emitError() << "refers to an unknown grid " << symbol;
  Grid grid{llvm::to_vector(gridOp.getShape()), context};
  int64_t ranks = context->communicator->size();
  int64_t known = 1, dynamic = -1;
  for (auto [i, d] : llvm::enumerate(grid.shape)) {
    if (ShapedType::isDynamic(d)) {
      if (dynamic >= 0)
        return op->emitError()
               << "grid " << symbol << " has more than one dynamic dimension";
      dynamic = i;
    } else {
      known *= d;
    }
  }
  // A single dynamic dimension takes whatever the ranks leave for it.
  if (dynamic >= 0 && known > 0 && ranks % known == 0)
    grid.shape[dynamic] = ranks / known;
  else if (dynamic >= 0)
    known = -1;
  if (dynamic < 0 ? known != ranks : known < 0)
    return op->emitError() << "grid " << symbol << " of shape "
                           << shapeString(gridOp.getShape()) << " does not fit "
                           << ranks << " rank(s)";
  for (int16_t a : axes)
    if (a < 0 || a >= static_cast<int64_t>(grid.shape.size()))
      return op->emitError() << "grid axis " << a << " is out of range";
  return grid;
}

/// A static index list with its dynamic entries (operands) filled in.
llvm::SmallVector<int64_t> mixedIndices(ArrayRef<int64_t> statics,
                                        ArrayRef<const Tensor *> dynamics) {
  llvm::SmallVector<int64_t> result;
  size_t next = 0;
  for (int64_t s : statics)
    result.push_back(ShapedType::isDynamic(s) && next < dynamics.size()
                         ? dynamics[next++]->getInt(0)
                         : s);
  return result;
}

/// Checks an in-group multi-index (a root, source or destination).
LogicalResult checkInGroup(Operation *op, StringRef what, const Grid &grid,
                           ArrayRef<int16_t> axes, ArrayRef<int64_t> index) {
  bool ok = index.size() == axes.size();
  for (size_t i = 0; ok && i < axes.size(); ++i)
    ok = index[i] >= 0 && index[i] < grid.shape[axes[i]];
  if (!ok)
    return op->emitError() << what << " [" << index
                           << "] is not an in-group index over grid axes ["
                           << axes << "]";
  return success();
}

/// Turns a communicator error into a diagnostic at `op`.
LogicalResult report(Operation *op, llvm::Error error) {
  std::string message = llvm::toString(std::move(error));
  return op->emitError() << message;
}

/// Rendezvous of this rank's group at `op`; every member's tensor.
FailureOr<std::shared_ptr<const std::vector<Tensor>>>
exchange(Operation *op, const Grid &grid, ArrayRef<int16_t> axes,
         const Tensor &contribution) {
  auto result = grid.context->communicator->exchange(
      grid.rank(), grid.group(axes), op, op->getName().getStringRef(),
      contribution);
  if (!result)
    return report(op, result.takeError());
  return std::move(*result);
}

//===----------------------------------------------------------------------===//
// Tensor pieces
//===----------------------------------------------------------------------===//

/// Piece `index` of `count` equal pieces of `t` along `axis`.
FailureOr<Tensor> piece(Operation *op, const Tensor &t, int64_t axis,
                        int64_t index, int64_t count) {
  if (axis < 0 || axis >= t.rank())
    return op->emitError() << "axis " << axis << " is out of range for "
                           << t.typeString();
  if (t.dim(axis) % count != 0)
    return op->emitError() << "dimension " << axis << " of " << t.typeString()
                           << " does not split into " << count
                           << " equal pieces";
  int64_t size = t.dim(axis) / count;
  llvm::SmallVector<int64_t> shape(t.shape());
  shape[axis] = size;
  Tensor out(t.kind(), shape);
  forEachIndex(shape, [&](int64_t linear, ArrayRef<int64_t> index0) {
    llvm::SmallVector<int64_t> source(index0);
    source[axis] += index * size;
    int64_t from = linearIndex(source, t.shape());
    if (t.isFloat())
      out.floats()[linear] = t.floats()[from];
    else
      out.ints()[linear] = t.ints()[from];
  });
  return out;
}

/// Concatenation of equally typed tensors along `axis`.
FailureOr<Tensor> concat(Operation *op, ArrayRef<Tensor> parts, int64_t axis) {
  const Tensor &first = parts.front();
  if (axis < 0 || axis >= first.rank())
    return op->emitError() << "axis " << axis << " is out of range for "
                           << first.typeString();
  llvm::SmallVector<int64_t> shape(first.shape());
  shape[axis] = 0;
  for (const Tensor &p : parts) {
    bool same = p.rank() == first.rank() && p.kind() == first.kind();
    for (int64_t d = 0; same && d < p.rank(); ++d)
      same = d == axis || p.dim(d) == first.dim(d);
    if (!same)
      return op->emitError() << "cannot concatenate " << p.typeString()
                             << " with " << first.typeString();
    shape[axis] += p.dim(axis);
  }
  Tensor out(first.kind(), shape);
  forEachIndex(shape, [&](int64_t linear, ArrayRef<int64_t> index) {
    llvm::SmallVector<int64_t> source(index);
    size_t part = 0;
    while (source[axis] >= parts[part].dim(axis))
      source[axis] -= parts[part++].dim(axis);
    int64_t from = linearIndex(source, parts[part].shape());
    if (out.isFloat())
      out.floats()[linear] = parts[part].floats()[from];
    else
      out.ints()[linear] = parts[part].ints()[from];
  });
  return out;
}

/// Elementwise reduction of the contributions, each first converted to the
/// element type of `op`'s result (the accumulation type). Computed in
/// double / int64 in group order and rounded once at the end.
FailureOr<Tensor> reduce(Operation *op, ArrayRef<Tensor> parts,
                         shard::ReductionKind reduction) {
  std::optional<ElementKind> resultKind =
      scalarKind(op->getResult(0).getType());
  if (!resultKind)
    return op->emitError() << "unsupported result type "
                           << op->getResult(0).getType();
  ElementKind kind = *resultKind;
  std::vector<Tensor> cast;
  for (const Tensor &p : parts) {
    if (p.shape() != parts.front().shape())
      return op->emitError() << "ranks contribute " << p.typeString() << " and "
                             << parts.front().typeString();
    cast.push_back(castTensor(p, kind));
  }
  bool isFloat = isFloatKind(kind), isUnsigned = isUnsignedKind(kind);
  using RK = shard::ReductionKind;
  if (isFloat && (reduction == RK::BitwiseAnd || reduction == RK::BitwiseOr ||
                  reduction == RK::BitwiseXor))
    return op->emitError() << "reduction '"
                           << shard::stringifyReductionKind(reduction)
                           << "' needs integer elements";
  if (reduction == RK::Generic)
    return op->emitError() << "the reference executor does not support "
                              "'generic' reductions";
  Tensor out(kind, parts.front().shape());
  int64_t count = static_cast<int64_t>(cast.size());
  for (int64_t i = 0, n = out.numElements(); i < n; ++i) {
    if (isFloat) {
      double acc = cast[0].getDouble(i);
      for (int64_t k = 1; k < count; ++k) {
        double v = cast[k].getDouble(i);
        switch (reduction) {
        case RK::Sum:
        case RK::Average:
          acc += v;
          break;
        case RK::Product:
          acc *= v;
          break;
        // NaN wins, as in loom.max / loom.min.
        case RK::Max:
          acc = std::isnan(acc) || std::isnan(v) ? NAN : std::max(acc, v);
          break;
        case RK::Min:
          acc = std::isnan(acc) || std::isnan(v) ? NAN : std::min(acc, v);
          break;
        default:
          break;
        }
      }
      if (reduction == RK::Average)
        acc /= count;
      out.setDouble(i, acc);
      continue;
    }
    // Unsigned arithmetic wraps like the element type does.
    uint64_t acc = static_cast<uint64_t>(cast[0].getInt(i));
    for (int64_t k = 1; k < count; ++k) {
      uint64_t v = static_cast<uint64_t>(cast[k].getInt(i));
      auto less = [&](uint64_t a, uint64_t b) {
        return isUnsigned ? a < b
                          : static_cast<int64_t>(a) < static_cast<int64_t>(b);
      };
      switch (reduction) {
      case RK::Sum:
      case RK::Average:
        acc += v;
        break;
      case RK::Product:
        acc *= v;
        break;
      case RK::Max:
        acc = less(acc, v) ? v : acc;
        break;
      case RK::Min:
        acc = less(v, acc) ? v : acc;
        break;
      case RK::BitwiseAnd:
        acc &= v;
        break;
      case RK::BitwiseOr:
        acc |= v;
        break;
      case RK::BitwiseXor:
        acc ^= v;
        break;
      default:
        break;
      }
    }
    // Integer averages truncate toward zero.
    if (reduction == RK::Average)
      acc = isUnsigned
                ? acc / count
                : static_cast<uint64_t>(static_cast<int64_t>(acc) / count);
    out.setInt(i, static_cast<int64_t>(acc));
  }
  return out;
}

/// A scalar (rank-0) tensor holding an index.
Tensor indexScalar(int64_t value) {
  Tensor t(ElementKind::I64, {});
  t.setInt(0, value);
  return t;
}

template <typename OpTy>
using ShardFn = std::function<LogicalResult(OpTy op, const Grid &grid,
                                            ArrayRef<const Tensor *> in,
                                            SmallVectorImpl<Tensor> &out)>;

template <typename OpTy>
using GridAxesOf = decltype(std::declval<OpTy &>().getGridAxes());

/// A kernel for a shard op on the grid (and axes) it names.
template <typename OpTy> Kernel shardKernel(ShardFn<OpTy> fn) {
  return [fn](Operation *op, ArrayRef<const Tensor *> in,
              SmallVectorImpl<Tensor> &out) -> LogicalResult {
    auto shardOp = cast<OpTy>(op);
    ArrayRef<int16_t> axes;
    if constexpr (llvm::is_detected<GridAxesOf, OpTy>::value)
      axes = shardOp.getGridAxes();
    FailureOr<Grid> grid = getGrid(op, shardOp.getGridAttr(), axes);
    if (failed(grid))
      return failure();
    return fn(shardOp, *grid, in, out);
  };
}

void registerProcessKernels(KernelRegistry &r) {
  r.add("shard.process_linear_index",
        shardKernel<shard::ProcessLinearIndexOp>(
            [](auto, const Grid &grid, auto, SmallVectorImpl<Tensor> &out) {
              out.push_back(indexScalar(grid.rank()));
              return success();
            }));
  r.add("shard.process_multi_index",
        shardKernel<shard::ProcessMultiIndexOp>(
            [](shard::ProcessMultiIndexOp op, const Grid &grid, auto,
               SmallVectorImpl<Tensor> &out) -> LogicalResult {
              llvm::SmallVector<int64_t> index = grid.coordinates(grid.rank());
              if (op.getAxes().empty()) {
                for (int64_t i : index)
                  out.push_back(indexScalar(i));
                return success();
              }
              for (int16_t a : op.getAxes()) {
                if (a < 0 || a >= static_cast<int64_t>(index.size()))
                  return op.emitError()
                         << "grid axis " << a << " is out of range";
                out.push_back(indexScalar(index[a]));
              }
              return success();
            }));
  r.add("shard.grid_shape",
        shardKernel<shard::GridShapeOp>(
            [](shard::GridShapeOp op, const Grid &grid, auto,
               SmallVectorImpl<Tensor> &out) -> LogicalResult {
              if (op.getAxes().empty()) {
                for (int64_t d : grid.shape)
                  out.push_back(indexScalar(d));
                return success();
              }
              for (int16_t a : op.getAxes()) {
                if (a < 0 || a >= static_cast<int64_t>(grid.shape.size()))
                  return op.emitError()
                         << "grid axis " << a << " is out of range";
                out.push_back(indexScalar(grid.shape[a]));
              }
              return success();
            }));
  r.add("shard.neighbors_linear_indices",
        shardKernel<shard::NeighborsLinearIndicesOp>(
            [](shard::NeighborsLinearIndicesOp op, const Grid &grid,
               ArrayRef<const Tensor *> in,
               SmallVectorImpl<Tensor> &out) -> LogicalResult {
              // Like upstream's lowering to MPI: one split axis.
              ArrayRef<int16_t> axes = op.getSplitAxes();
              if (axes.size() != 1 || axes[0] < 0 ||
                  axes[0] >= static_cast<int64_t>(grid.shape.size()))
                return op.emitError() << "expects exactly one valid split axis";
              if (in.size() != grid.shape.size())
                return op.emitError() << "expects a device index of "
                                      << grid.shape.size() << " entries";
              llvm::SmallVector<int64_t> device;
              for (const Tensor *t : in)
                device.push_back(t->getInt(0));
              for (auto [d, size] : llvm::zip(device, grid.shape))
                if (d < 0 || d >= size)
                  return op.emitError() << "device index is out of the grid";
              int16_t axis = axes[0];
              for (int64_t step : {-1, 1}) {
                llvm::SmallVector<int64_t> neighbor = device;
                neighbor[axis] += step;
                bool inside =
                    neighbor[axis] >= 0 && neighbor[axis] < grid.shape[axis];
                out.push_back(indexScalar(
                    inside ? linearIndex(neighbor, grid.shape) : -1));
              }
              return success();
            }));
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

/// shard.gather and shard.reduce: every member of the group sends its
/// tensor, `combine` merges the group's tensors in group order, and only the
/// root keeps the result (the others get zeros: their result is undefined
/// in the shard dialect).
template <typename OpT>
LogicalResult
combineAtRoot(OpT op, const Grid &grid, ArrayRef<const Tensor *> in,
              SmallVectorImpl<Tensor> &out,
              llvm::function_ref<FailureOr<Tensor>(const std::vector<Tensor> &)>
                  combine) {
  ArrayRef<int16_t> axes = op.getGridAxes();
  llvm::SmallVector<int64_t> root = mixedIndices(op.getRoot(), in.drop_front());
  if (failed(checkInGroup(op, "root", grid, axes, root)))
    return failure();
  auto parts = exchange(op, grid, axes, *in[0]);
  if (failed(parts))
    return failure();
  FailureOr<Tensor> result = combine(**parts);
  if (failed(result))
    return failure();
  if (grid.memberAt(axes, root) != grid.rank())
    *result = Tensor(result->kind(), result->shape());
  out.push_back(std::move(*result));
  return success();
}

void registerCollectiveKernels(KernelRegistry &r) {
  r.add("shard.all_reduce",
        shardKernel<shard::AllReduceOp>(
            [](shard::AllReduceOp op, const Grid &grid,
               ArrayRef<const Tensor *> in,
               SmallVectorImpl<Tensor> &out) -> LogicalResult {
              auto parts = exchange(op, grid, op.getGridAxes(), *in[0]);
              if (failed(parts))
                return failure();
              FailureOr<Tensor> result = reduce(op, **parts, op.getReduction());
              if (failed(result))
                return failure();
              out.push_back(std::move(*result));
              return success();
            }));
  r.add("shard.all_gather",
        shardKernel<shard::AllGatherOp>(
            [](shard::AllGatherOp op, const Grid &grid,
               ArrayRef<const Tensor *> in,
               SmallVectorImpl<Tensor> &out) -> LogicalResult {
              auto parts = exchange(op, grid, op.getGridAxes(), *in[0]);
              if (failed(parts))
                return failure();
              FailureOr<Tensor> result =
                  concat(op, **parts, op.getGatherAxis().getSExtValue());
              if (failed(result))
                return failure();
              out.push_back(std::move(*result));
              return success();
            }));
  // No communication: each rank keeps its own piece.
  r.add("shard.all_slice",
        shardKernel<shard::AllSliceOp>(
            [](shard::AllSliceOp op, const Grid &grid,
               ArrayRef<const Tensor *> in,
               SmallVectorImpl<Tensor> &out) -> LogicalResult {
              ArrayRef<int16_t> axes = op.getGridAxes();
              FailureOr<Tensor> result =
                  piece(op, *in[0], op.getSliceAxis().getSExtValue(),
                        grid.positionIn(axes), grid.group(axes).size());
              if (failed(result))
                return failure();
              out.push_back(std::move(*result));
              return success();
            }));
  r.add("shard.reduce_scatter",
        shardKernel<shard::ReduceScatterOp>(
            [](shard::ReduceScatterOp op, const Grid &grid,
               ArrayRef<const Tensor *> in,
               SmallVectorImpl<Tensor> &out) -> LogicalResult {
              ArrayRef<int16_t> axes = op.getGridAxes();
              auto parts = exchange(op, grid, axes, *in[0]);
              if (failed(parts))
                return failure();
              FailureOr<Tensor> reduced =
                  reduce(op, **parts, op.getReduction());
              if (failed(reduced))
                return failure();
              FailureOr<Tensor> result =
                  piece(op, *reduced, op.getScatterAxis().getSExtValue(),
                        grid.positionIn(axes), (*parts)->size());
              if (failed(result))
                return failure();
              out.push_back(std::move(*result));
              return success();
            }));
  r.add("shard.all_to_all",
        shardKernel<shard::AllToAllOp>(
            [](shard::AllToAllOp op, const Grid &grid,
               ArrayRef<const Tensor *> in,
               SmallVectorImpl<Tensor> &out) -> LogicalResult {
              ArrayRef<int16_t> axes = op.getGridAxes();
              auto parts = exchange(op, grid, axes, *in[0]);
              if (failed(parts))
                return failure();
              // Member k sends this rank piece `position` of its input.
              int64_t position = grid.positionIn(axes);
              int64_t count = (*parts)->size();
              llvm::SmallVector<Tensor> received;
              for (const Tensor &t : **parts) {
                FailureOr<Tensor> p = piece(
                    op, t, op.getSplitAxis().getSExtValue(), position, count);
                if (failed(p))
                  return failure();
                received.push_back(std::move(*p));
              }
              FailureOr<Tensor> result =
                  concat(op, received, op.getConcatAxis().getSExtValue());
              if (failed(result))
                return failure();
              out.push_back(std::move(*result));
              return success();
            }));
  r.add("shard.broadcast",
        shardKernel<shard::BroadcastOp>(
            [](shard::BroadcastOp op, const Grid &grid,
               ArrayRef<const Tensor *> in,
               SmallVectorImpl<Tensor> &out) -> LogicalResult {
              ArrayRef<int16_t> axes = op.getGridAxes();
              llvm::SmallVector<int64_t> root =
                  mixedIndices(op.getRoot(), in.drop_front());
              if (failed(checkInGroup(op, "root", grid, axes, root)))
                return failure();
              auto parts = exchange(op, grid, axes, *in[0]);
              if (failed(parts))
                return failure();
              out.push_back(
                  (**parts)[grid.positionOf(axes, grid.memberAt(axes, root))]);
              return success();
            }));
  r.add(
      "shard.gather",
      shardKernel<shard::GatherOp>(
          [](shard::GatherOp op, const Grid &grid, ArrayRef<const Tensor *> in,
             SmallVectorImpl<Tensor> &out) -> LogicalResult {
            return combineAtRoot(
                op, grid, in, out, [&](const std::vector<Tensor> &parts) {
                  return concat(op, parts, op.getGatherAxis().getSExtValue());
                });
          }));
  r.add(
      "shard.reduce",
      shardKernel<shard::ReduceOp>(
          [](shard::ReduceOp op, const Grid &grid, ArrayRef<const Tensor *> in,
             SmallVectorImpl<Tensor> &out) -> LogicalResult {
            return combineAtRoot(op, grid, in, out,
                                 [&](const std::vector<Tensor> &parts) {
                                   return reduce(op, parts, op.getReduction());
                                 });
          }));
  r.add(
      "shard.scatter",
      shardKernel<shard::ScatterOp>(
          [](shard::ScatterOp op, const Grid &grid, ArrayRef<const Tensor *> in,
             SmallVectorImpl<Tensor> &out) -> LogicalResult {
            ArrayRef<int16_t> axes = op.getGridAxes();
            llvm::SmallVector<int64_t> root =
                mixedIndices(op.getRoot(), in.drop_front());
            if (failed(checkInGroup(op, "root", grid, axes, root)))
              return failure();
            auto parts = exchange(op, grid, axes, *in[0]);
            if (failed(parts))
              return failure();
            int64_t rootPosition =
                grid.positionOf(axes, grid.memberAt(axes, root));
            FailureOr<Tensor> result = piece(
                op, (**parts)[rootPosition], op.getScatterAxis().getSExtValue(),
                grid.positionIn(axes), (*parts)->size());
            if (failed(result))
              return failure();
            out.push_back(std::move(*result));
            return success();
          }));
  r.add("shard.shift",
        shardKernel<shard::ShiftOp>([](shard::ShiftOp op, const Grid &grid,
                                       ArrayRef<const Tensor *> in,
                                       SmallVectorImpl<Tensor> &out)
                                        -> LogicalResult {
          ArrayRef<int16_t> axes = op.getGridAxes();
          int64_t shiftAxis = op.getShiftAxis().getSExtValue();
          if (!llvm::is_contained(axes, shiftAxis))
            return op.emitError() << "shift_axis " << shiftAxis
                                  << " is not one of the grid_axes";
          auto parts = exchange(op, grid, axes, *in[0]);
          if (failed(parts))
            return failure();
          // Data moves by +offset: this rank receives from the member
          // `offset` positions before it along the shift axis.
          int64_t size = grid.shape[shiftAxis];
          llvm::SmallVector<int64_t> source = grid.coordinates(grid.rank());
          int64_t from = source[shiftAxis] - op.getOffset();
          if (op.getRotate())
            from = ((from % size) + size) % size;
          if (from < 0 || from >= size) {
            out.push_back(Tensor(in[0]->kind(), in[0]->shape()));
            return success();
          }
          source[shiftAxis] = from;
          out.push_back((
              **parts)[grid.positionOf(axes, linearIndex(source, grid.shape))]);
          return success();
        }));
}

//===----------------------------------------------------------------------===//
// Point to point
//===----------------------------------------------------------------------===//

void registerPointToPointKernels(KernelRegistry &r) {
  // The result of a send is its input.
  r.add("shard.send",
        shardKernel<shard::SendOp>(
            [](shard::SendOp op, const Grid &grid, ArrayRef<const Tensor *> in,
               SmallVectorImpl<Tensor> &out) -> LogicalResult {
              ArrayRef<int16_t> axes = op.getGridAxes();
              llvm::SmallVector<int64_t> dest =
                  mixedIndices(op.getDestination(), in.drop_front());
              if (failed(checkInGroup(op, "destination", grid, axes, dest)))
                return failure();
              if (llvm::Error error = grid.context->communicator->send(
                      grid.rank(), grid.memberAt(axes, dest),
                      op->getName().getStringRef(), *in[0]))
                return report(op, std::move(error));
              out.push_back(*in[0]);
              return success();
            }));
  // Without a source, a recv takes the oldest message from any member of its
  // group.
  r.add("shard.recv",
        shardKernel<shard::RecvOp>(
            [](shard::RecvOp op, const Grid &grid, ArrayRef<const Tensor *> in,
               SmallVectorImpl<Tensor> &out) -> LogicalResult {
              ArrayRef<int16_t> axes = op.getGridAxes();
              llvm::SmallVector<int64_t> sources;
              if (std::optional<ArrayRef<int64_t>> source = op.getSource()) {
                llvm::SmallVector<int64_t> index =
                    mixedIndices(*source, in.drop_front());
                if (failed(checkInGroup(op, "source", grid, axes, index)))
                  return failure();
                sources.push_back(grid.memberAt(axes, index));
              } else {
                sources = grid.group(axes);
              }
              auto message = grid.context->communicator->recv(
                  grid.rank(), sources, op->getName().getStringRef());
              if (!message)
                return report(op, message.takeError());
              RankedTensorType type = resultType(op);
              Tensor &value = message->second;
              if (value.kind() != scalarKind(type) ||
                  value.shape() != type.getShape())
                return op.emitError()
                       << "received " << value.typeString() << " from rank "
                       << message->first << ", which does not match " << type;
              out.push_back(std::move(value));
              return success();
            }));
}

//===----------------------------------------------------------------------===//
// Scalars
//===----------------------------------------------------------------------===//

/// An elementwise integer op on same-shape operands (scalars mostly).
Kernel integerBinary(
    std::function<std::optional<int64_t>(int64_t, int64_t, bool)> fn) {
  return [fn](Operation *op, ArrayRef<const Tensor *> in,
              SmallVectorImpl<Tensor> &out) -> LogicalResult {
    std::optional<ElementKind> kind = scalarKind(op->getResult(0).getType());
    if (!kind || in[0]->shape() != in[1]->shape() || in[0]->isFloat())
      return op->emitError() << "unsupported operands";
    // arith's unsigned ops read the bits as unsigned; `index` is 64 bits.
    Tensor y(*kind, in[0]->shape());
    for (int64_t i = 0, n = y.numElements(); i < n; ++i) {
      std::optional<int64_t> v =
          fn(in[0]->getInt(i), in[1]->getInt(i), isUnsignedKind(*kind));
      if (!v)
        return op->emitError() << "division by zero";
      y.setInt(i, *v);
    }
    out.push_back(std::move(y));
    return success();
  };
}

void registerScalarKernels(KernelRegistry &r) {
  r.add("arith.constant",
        [](Operation *op, ArrayRef<const Tensor *>,
           SmallVectorImpl<Tensor> &out) -> LogicalResult {
          Attribute value = cast<arith::ConstantOp>(op).getValue();
          if (auto elements = dyn_cast<ElementsAttr>(value)) {
            FailureOr<Tensor> t = tensorFromAttr(elements, op->getLoc());
            if (failed(t))
              return failure();
            out.push_back(std::move(*t));
            return success();
          }
          std::optional<ElementKind> kind =
              scalarKind(op->getResult(0).getType());
          if (!kind)
            return op->emitError() << "unsupported constant type";
          Tensor t(*kind, {});
          if (auto i = dyn_cast<IntegerAttr>(value))
            t.setInt(0, i.getValue().getSExtValue());
          else if (auto f = dyn_cast<FloatAttr>(value))
            t.setDouble(0, f.getValueAsDouble());
          else
            return op->emitError() << "unsupported constant " << value;
          out.push_back(std::move(t));
          return success();
        });
  r.add("arith.addi", integerBinary([](int64_t a, int64_t b, bool) {
          return static_cast<int64_t>(static_cast<uint64_t>(a) +
                                      static_cast<uint64_t>(b));
        }));
  r.add("arith.subi", integerBinary([](int64_t a, int64_t b, bool) {
          return static_cast<int64_t>(static_cast<uint64_t>(a) -
                                      static_cast<uint64_t>(b));
        }));
  r.add("arith.muli", integerBinary([](int64_t a, int64_t b, bool) {
          return static_cast<int64_t>(static_cast<uint64_t>(a) *
                                      static_cast<uint64_t>(b));
        }));
  r.add("arith.divsi",
        integerBinary([](int64_t a, int64_t b, bool) -> std::optional<int64_t> {
          if (b == 0 || (a == INT64_MIN && b == -1))
            return std::nullopt;
          return a / b;
        }));
  r.add("arith.remsi",
        integerBinary([](int64_t a, int64_t b, bool) -> std::optional<int64_t> {
          if (b == 0 || (a == INT64_MIN && b == -1))
            return std::nullopt;
          return a % b;
        }));
  r.add("arith.divui",
        integerBinary([](int64_t a, int64_t b, bool) -> std::optional<int64_t> {
          if (b == 0)
            return std::nullopt;
          return static_cast<int64_t>(static_cast<uint64_t>(a) /
                                      static_cast<uint64_t>(b));
        }));
  r.add("arith.remui",
        integerBinary([](int64_t a, int64_t b, bool) -> std::optional<int64_t> {
          if (b == 0)
            return std::nullopt;
          return static_cast<int64_t>(static_cast<uint64_t>(a) %
                                      static_cast<uint64_t>(b));
        }));
  // Casts between index and integers: setInt wraps or sign-extends.
  Kernel indexCast = [](Operation *op, ArrayRef<const Tensor *> in,
                        SmallVectorImpl<Tensor> &out) -> LogicalResult {
    std::optional<ElementKind> kind = scalarKind(op->getResult(0).getType());
    if (!kind)
      return op->emitError() << "unsupported result type";
    Tensor y(*kind, in[0]->shape());
    for (int64_t i = 0, n = y.numElements(); i < n; ++i)
      y.setInt(i, in[0]->getInt(i));
    out.push_back(std::move(y));
    return success();
  };
  r.add("arith.index_cast", indexCast);
  r.add("arith.index_castui", indexCast);
  r.add("tensor.from_elements",
        [](Operation *op, ArrayRef<const Tensor *> in,
           SmallVectorImpl<Tensor> &out) -> LogicalResult {
          RankedTensorType type = resultType(op);
          std::optional<ElementKind> kind = scalarKind(type);
          if (!kind || !type.hasStaticShape())
            return op->emitError() << "unsupported result type " << type;
          Tensor y(*kind, type.getShape());
          for (auto [i, t] : llvm::enumerate(in)) {
            if (y.isFloat())
              y.setDouble(i, t->getDouble(0));
            else
              y.setInt(i, t->getInt(0));
          }
          out.push_back(std::move(y));
          return success();
        });
  r.add("tensor.extract",
        [](Operation *op, ArrayRef<const Tensor *> in,
           SmallVectorImpl<Tensor> &out) -> LogicalResult {
          const Tensor &t = *in[0];
          llvm::SmallVector<int64_t> index;
          for (const Tensor *i : in.drop_front())
            index.push_back(i->getInt(0));
          for (auto [i, d] : llvm::zip(index, t.shape()))
            if (i < 0 || i >= d)
              return op->emitError()
                     << "index out of bounds of " << t.typeString();
          int64_t at = linearIndex(index, t.shape());
          Tensor y(t.kind(), {});
          if (t.isFloat())
            y.setDouble(0, t.getDouble(at));
          else
            y.setInt(0, t.getInt(at));
          out.push_back(std::move(y));
          return success();
        });
}

} // namespace

FailureOr<int64_t> gridCoordinate(Operation *op, FlatSymbolRefAttr grid,
                                  int64_t axis) {
  FailureOr<Grid> resolved = getGrid(op, grid);
  if (failed(resolved))
    return failure();
  if (axis < 0 || axis >= static_cast<int64_t>(resolved->shape.size()))
    return op->emitError() << "grid axis " << axis << " is not an axis of "
                           << grid;
  return resolved->coordinates(resolved->rank())[axis];
}

void registerShardKernels(KernelRegistry &r) {
  // Annotations: in SPMD form every rank already holds its own value, and
  // the sharding value itself carries no data.
  r.add("shard.shard",
        [](Operation *, ArrayRef<const Tensor *> in,
           SmallVectorImpl<Tensor> &out) -> LogicalResult {
          out.push_back(*in[0]);
          return success();
        });
  r.add("shard.sharding",
        [](Operation *, ArrayRef<const Tensor *>,
           SmallVectorImpl<Tensor> &out) -> LogicalResult {
          out.push_back(Tensor());
          return success();
        });
  registerProcessKernels(r);
  registerCollectiveKernels(r);
  registerPointToPointKernels(r);
  registerScalarKernels(r);
}

} // namespace loom::reference
