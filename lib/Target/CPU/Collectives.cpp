//===- Collectives.cpp - Per-rank programs for engines --------------------===//
//
// Runs on loom IR (before convert-loom-to-linalg). The rank's position
// becomes a constant: slices static, process indices constants. A
// collective becomes
//
//   %in   = bufferization.to_buffer %x             (read only)
//   %out  = memref.alloc()
//   call @loom_rt_all_reduce(addr(%in), addr(%out), count, dtype, op)
//   %y    = bufferization.to_tensor %out restrict writable
//
// so that one-shot bufferization sees a tensor program and the call reads
// and writes plain buffers. An all_gather along an axis other than 0 gathers
// [ranks, local...] and moves the rank dimension into place with
// loom.transpose and loom.reshape; a reduce_scatter reduces the whole tensor
// and keeps the rank's slice (simple, not the least traffic). An all_to_all
// that splits and concatenates along axis 0 (expert parallelism's dispatch
// and combine) exchanges contiguous blocks as they are.
//
// Shapes known only at run time (symbolic engine inputs) are handled by
// every collective but send and receive: buffers are allocated at the
// input's run-time sizes, counts computed from them, and a dimension that
// is split among ranks must divide evenly at run time (checked: the call
// fails naming the node, loom_rt_check_failed).
//
// Pipeline stages come first: the rank's own loom.pipeline_stage regions
// are inlined and the others dropped (their results are zeros nobody on
// this rank reads), so each rank's program holds only its stage's ops and
// weights; shard.send / shard.recv / shard.broadcast then become calls.
//
//===----------------------------------------------------------------------===//

#include "loom/Target/CPU/Collectives.h"

#include "TargetUtils.h"

#include "loom/Conversion/LoomToLinalg/LoomToLinalg.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/Sharding/EngineGrid.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace loom::cpu {
namespace {

constexpr const char *kAllReduce = "loom_rt_all_reduce";
constexpr const char *kAllGather = "loom_rt_all_gather";
constexpr const char *kBroadcast = "loom_rt_broadcast";
constexpr const char *kSend = "loom_rt_send";
constexpr const char *kRecv = "loom_rt_recv";
constexpr const char *kGroupAllReduce = "loom_rt_group_all_reduce";
constexpr const char *kGroupAllGather = "loom_rt_group_all_gather";
constexpr const char *kGroupBroadcast = "loom_rt_group_broadcast";
constexpr const char *kAllToAll = "loom_rt_all_to_all";
constexpr const char *kGroupAllToAll = "loom_rt_group_all_to_all";

/// The runtime's loom_dtype of an element type (runtime/include/loom/
/// runtime.h), or -1.
int32_t dtypeOf(Type type) {
  if (type.isF32())
    return 3;
  if (type.isF64())
    return 4;
  if (type.isInteger(32))
    return 8;
  if (type.isInteger(64))
    return 9;
  return -1;
}

/// The runtime's loom_reduce_op, or -1.
int32_t reduceOpOf(shard::ReductionKind kind) {
  switch (kind) {
  case shard::ReductionKind::Sum:
    return 0;
  case shard::ReductionKind::Product:
    return 1;
  case shard::ReductionKind::Max:
    return 2;
  case shard::ReductionKind::Min:
    return 3;
  default:
    return -1;
  }
}

/// `x` as a read-only buffer and a new buffer of `resultType`, with their
/// addresses; the caller emits the call and then `finish`.
struct CallBuffers {
  Value in, out, inAddress, outAddress;
};

/// Whether `x` may bufferize to a strided view (of a slice, through
/// reshapes) rather than a buffer of its own.
bool mayBeStridedView(Value x) {
  Operation *producer = x.getDefiningOp();
  while (producer &&
         isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp, tensor::CastOp,
             ReshapeOp, SqueezeOp, UnsqueezeOp>(producer))
    producer = producer->getOperand(0).getDefiningOp();
  return isa_and_nonnull<tensor::ExtractSliceOp, SliceOp>(producer);
}

/// `x` as a read-only buffer, contiguous as the runtime's calls read it.
/// A static strided view does not cast to the contiguous type and is
/// copied by bufferization; one with sizes known only at run time would
/// cast (the cast is not checked), so it is copied here.
Value readOnlyBuffer(OpBuilder &b, Location loc, Value x) {
  auto type = cast<RankedTensorType>(x.getType());
  if (!type.hasStaticShape() && mayBeStridedView(x))
    x = bufferization::AllocTensorOp::create(b, loc, type, ValueRange{},
                                             /*copy=*/x);
  return bufferization::ToBufferOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()), x,
      /*read_only=*/true);
}

/// The sizes of `value`'s dimensions that its type leaves to run time, in
/// order.
SmallVector<Value> runTimeSizes(OpBuilder &b, Location loc, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      sizes.push_back(tensor::DimOp::create(b, loc, value, d));
  return sizes;
}

/// A new buffer for a result of `type`, its run-time sizes `sizes`.
Value resultBuffer(OpBuilder &b, Location loc, RankedTensorType type,
                   ValueRange sizes = {}) {
  return memref::AllocOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()), sizes);
}

/// A result buffer of `resultType` whose run-time sizes are those of `x`
/// (the collectives' results differ from their inputs only in static
/// dimensions).
CallBuffers prepare(OpBuilder &b, Location loc, Value x,
                    RankedTensorType resultType) {
  CallBuffers c;
  c.in = readOnlyBuffer(b, loc, x);
  c.out = resultBuffer(b, loc, resultType, runTimeSizes(b, loc, x));
  c.inAddress = addressOf(b, loc, c.in);
  c.outAddress = addressOf(b, loc, c.out);
  return c;
}

Value finish(OpBuilder &b, Location loc, CallBuffers &c,
             RankedTensorType resultType) {
  return bufferization::ToTensorOp::create(b, loc, resultType, c.out,
                                           /*restrict=*/true,
                                           /*writable=*/true);
}

/// Reports at run time, as a failure of `op` (at `site` when given), that
/// `size` (an index) does not divide by `parts`: "WHAT among PARTS ranks
/// but its size at run time does not divide by PARTS".
void checkDivides(OpBuilder &b, Location loc, Operation *op, Value size,
                  int64_t parts, const std::string &what, StringRef site = {}) {
  Value remainder = arith::RemUIOp::create(
      b, loc, size, arith::ConstantIndexOp::create(b, loc, parts));
  Value uneven =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, remainder,
                            arith::ConstantIndexOp::create(b, loc, 0));
  lowering::checkCondition(
      b, loc, op, uneven,
      what + " among " + std::to_string(parts) +
          " ranks but its size at run time does not divide by " +
          std::to_string(parts),
      site);
}

/// Block `position` of `parts` of `source` along `axis`, of `resultType`:
/// a static slice, or, where `source`'s sizes are known only at run time,
/// one of those sizes (along `axis`: the size divided by `parts`, which
/// must divide it — checked at run time, reported as a failure of `op`).
Value rankSlice(OpBuilder &b, Location loc, Operation *op, Value source,
                RankedTensorType resultType, int64_t axis, int64_t position,
                int64_t parts) {
  // A split input is named as the engine's caller knows it.
  std::string site;
  if (auto arg = dyn_cast<BlockArgument>(source))
    if (auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp())) {
      site = "input " + std::to_string(arg.getArgNumber());
      if (auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                        "onnx.name"))
        site += " ('" + name.getValue().str() + "')";
    }
  int64_t rankOf = resultType.getRank();
  SmallVector<OpFoldResult> offsets(rankOf, b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes, strides(rankOf, b.getIndexAttr(1));
  for (int64_t d = 0; d < rankOf; ++d) {
    if (!resultType.isDynamicDim(d)) {
      sizes.push_back(b.getIndexAttr(resultType.getDimSize(d)));
      continue;
    }
    Value size = tensor::DimOp::create(b, loc, source, d);
    if (d == axis) {
      checkDivides(b, loc, op, size, parts,
                   "dimension " + std::to_string(axis) + " is split", site);
      size = arith::DivUIOp::create(
          b, loc, size, arith::ConstantIndexOp::create(b, loc, parts));
    }
    sizes.push_back(size);
  }
  if (auto size = getConstantIntValue(sizes[axis]))
    offsets[axis] = b.getIndexAttr(position * *size);
  else
    offsets[axis] =
        arith::MulIOp::create(b, loc, cast<Value>(sizes[axis]),
                              arith::ConstantIndexOp::create(b, loc, position))
            .getResult();
  return tensor::ExtractSliceOp::create(b, loc, resultType, source, offsets,
                                        sizes, strides);
}

Value i64(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
}
Value i32(OpBuilder &b, Location loc, int32_t v) {
  return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
}

/// The bytes of a static tensor type, or -1.
int64_t bytesOf(RankedTensorType type) {
  int64_t bits = type.getElementTypeBitWidth();
  if (!type.hasStaticShape() || bits % 8)
    return -1;
  return type.getNumElements() * bits / 8;
}

/// `value`'s element count times `unit` (1: elements; the element size:
/// bytes), divided by `parts`, as an i64: a constant when its shape is
/// static, computed from its run-time sizes otherwise.
Value countOf(OpBuilder &b, Location loc, Value value, int64_t unit,
              int64_t parts = 1) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.hasStaticShape())
    return i64(b, loc, type.getNumElements() * unit / parts);
  int64_t known = unit;
  for (int64_t d : type.getShape())
    if (!ShapedType::isDynamic(d))
      known *= d;
  Value count = arith::ConstantIndexOp::create(b, loc, known);
  for (Value size : runTimeSizes(b, loc, value))
    count = arith::MulIOp::create(b, loc, count, size);
  if (parts != 1)
    count = arith::DivUIOp::create(
        b, loc, count, arith::ConstantIndexOp::create(b, loc, parts));
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), count);
}

/// One rank's place in a grid (row-major: the last axis varies fastest),
/// and the groups of ranks that collectives over some axes involve.
struct GridPlace {
  SmallVector<int64_t> shape, coordinates;
  int64_t rank = 0;

  GridPlace(ArrayRef<int64_t> gridShape, int64_t rank)
      : shape(gridShape), coordinates(gridShape.size()), rank(rank) {
    int64_t rest = rank;
    for (int64_t d = shape.size() - 1; d >= 0; --d) {
      coordinates[d] = rest % shape[d];
      rest /= shape[d];
    }
  }
  int64_t numRanks() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  int64_t linear(ArrayRef<int64_t> at) const {
    int64_t r = 0;
    for (auto [d, c] : llvm::enumerate(at))
      r = r * shape[d] + c;
    return r;
  }
  /// The rank at in-group index `index` (one entry per axis of `axes`) of
  /// this rank's group.
  int64_t memberAt(ArrayRef<int16_t> axes, ArrayRef<int64_t> index) const {
    SmallVector<int64_t> at(coordinates);
    for (auto [axis, i] : llvm::zip(axes, index))
      at[axis] = i;
    return linear(at);
  }
  /// This rank's group over `axes`: the ranks that differ from it only
  /// there, in in-group order (row-major over `axes` as listed).
  SmallVector<int64_t> group(ArrayRef<int16_t> axes) const {
    int64_t n = 1;
    for (int16_t axis : axes)
      n *= shape[axis];
    SmallVector<int64_t> members;
    for (int64_t i = 0; i < n; ++i) {
      SmallVector<int64_t> index(axes.size());
      int64_t rest = i;
      for (int64_t k = axes.size() - 1; k >= 0; --k) {
        index[k] = rest % shape[axes[k]];
        rest /= shape[axes[k]];
      }
      members.push_back(memberAt(axes, index));
    }
    return members;
  }
  /// This rank's in-group index over `axes`.
  int64_t position(ArrayRef<int16_t> axes) const {
    int64_t p = 0;
    for (int16_t axis : axes)
      p = p * shape[axis] + coordinates[axis];
    return p;
  }
  /// Whether `members` is every rank in order: the communicator itself.
  bool isWholeGrid(ArrayRef<int64_t> members) const {
    if (static_cast<int64_t>(members.size()) != numRanks())
      return false;
    for (auto [i, m] : llvm::enumerate(members))
      if (m != static_cast<int64_t>(i))
        return false;
    return true;
  }
};

/// The address of a constant list of ranks, for group calls.
Value ranksAddress(OpBuilder &b, Location loc, ArrayRef<int64_t> members) {
  auto type = RankedTensorType::get({static_cast<int64_t>(members.size())},
                                    b.getI64Type());
  Value list =
      ConstantOp::create(b, loc, type, DenseElementsAttr::get(type, members));
  return addressOf(b, loc, readOnlyBuffer(b, loc, list));
}

/// Keeps the stages of this rank (inlined in place) and drops the others.
LogicalResult keepOwnStages(ModuleOp module, const GridPlace &place) {
  SmallVector<PipelineStageOp> stages;
  module.walk([&](PipelineStageOp stage) { stages.push_back(stage); });
  for (PipelineStageOp stage : stages) {
    if (stage.getGridAxisIndex() >= static_cast<int64_t>(place.shape.size()))
      return stage.emitOpError("names a grid axis the grid does not have");
    OpBuilder b(stage);
    if (stage.getStageIndex() != place.coordinates[stage.getGridAxisIndex()]) {
      for (Value result : stage.getResults()) {
        auto type = cast<RankedTensorType>(result.getType());
        result.replaceAllUsesWith(ConstantOp::create(
            b, stage.getLoc(), type,
            DenseElementsAttr::get(type,
                                   b.getZeroAttr(type.getElementType()))));
      }
      stage.erase();
      continue;
    }
    Block &body = stage.getBody().front();
    auto yield = cast<YieldOp>(body.getTerminator());
    for (auto [arg, input] : llvm::zip(body.getArguments(), stage.getInputs()))
      arg.replaceAllUsesWith(input);
    for (auto [result, value] :
         llvm::zip(stage.getResults(), yield.getValues()))
      result.replaceAllUsesWith(value);
    yield.erase();
    stage->getBlock()->getOperations().splice(stage->getIterator(),
                                              body.getOperations());
    stage.erase();
  }
  return success();
}

} // namespace

LogicalResult specializeForRank(ModuleOp module, int64_t rank) {
  Type i64Type = IntegerType::get(module.getContext(), 64);
  FailureOr<std::optional<SmallVector<int64_t>>> shape =
      engineGridShape(module);
  if (failed(shape))
    return failure();
  GridPlace place(shape->value_or(SmallVector<int64_t>{1}), rank);
  if (failed(keepOwnStages(module, place)))
    return failure();
  SmallVector<Operation *> shardOps;
  module.walk([&](Operation *op) {
    if (op->getDialect() && op->getDialect()->getNamespace() == "shard" &&
        !isa<shard::GridOp>(op))
      shardOps.push_back(op);
  });

  // Calls `whole` with `args` when `members` is the whole communicator,
  // else `group` with the members' list appended.
  auto callOnGroup = [&](OpBuilder &b, Location loc, StringRef whole,
                         StringRef group, SmallVector<Value> args,
                         ArrayRef<int64_t> members) {
    StringRef callee = whole;
    if (!place.isWholeGrid(members)) {
      callee = group;
      args.push_back(ranksAddress(b, loc, members));
      args.push_back(i64(b, loc, members.size()));
    }
    SmallVector<Type> types;
    for (Value arg : args)
      types.push_back(arg.getType());
    func::CallOp::create(b, loc, declareRuntimeFunction(module, callee, types),
                         args);
  };

  // all_reduce of `input` (of `type`) over `members` into a new tensor.
  auto allReduce = [&](OpBuilder &b, Location loc, Value input,
                       RankedTensorType type, int32_t dtype, int32_t kind,
                       ArrayRef<int64_t> members) -> Value {
    if (members.size() == 1)
      return input;
    CallBuffers c = prepare(b, loc, input, type);
    SmallVector<Value> args{c.inAddress, c.outAddress,
                            countOf(b, loc, input, 1), i32(b, loc, dtype),
                            i32(b, loc, kind)};
    callOnGroup(b, loc, kAllReduce, kGroupAllReduce, args, members);
    return finish(b, loc, c, type);
  };

  for (Operation *op : shardOps) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    if (auto slice = dyn_cast<shard::AllSliceOp>(op)) {
      op->getResult(0).replaceAllUsesWith(rankSlice(
          b, loc, op, slice.getInput(), cast<RankedTensorType>(slice.getType()),
          slice.getSliceAxis().getSExtValue(),
          place.position(slice.getGridAxes()),
          place.group(slice.getGridAxes()).size()));
    } else if (isa<shard::ProcessLinearIndexOp>(op)) {
      op->getResult(0).replaceAllUsesWith(
          arith::ConstantIndexOp::create(b, loc, rank));
    } else if (auto index = dyn_cast<shard::ProcessMultiIndexOp>(op)) {
      SmallVector<int64_t> axes;
      for (int16_t axis : index.getAxes())
        axes.push_back(axis);
      if (axes.empty())
        for (int64_t d = 0; d < static_cast<int64_t>(place.shape.size()); ++d)
          axes.push_back(d);
      for (auto [result, axis] : llvm::zip(op->getResults(), axes))
        result.replaceAllUsesWith(
            arith::ConstantIndexOp::create(b, loc, place.coordinates[axis]));
    } else if (auto reduce = dyn_cast<shard::AllReduceOp>(op)) {
      auto type = cast<RankedTensorType>(reduce.getType());
      int32_t kind = reduceOpOf(reduce.getReduction());
      // Narrow types the runtime does not reduce travel widened: booleans
      // and small integers as i32 (a masked gather of a data-parallel
      // boolean mask sums values of which one rank holds each; back to
      // bool, any nonzero sum is true), 16-bit floats as f32.
      Type element = type.getElementType();
      Type wide;
      if (element.isInteger() && element.getIntOrFloatBitWidth() < 32)
        wide = b.getI32Type();
      else if (element.isF16() || element.isBF16())
        wide = b.getF32Type();
      Value input = reduce.getInput();
      RankedTensorType reduced = type;
      if (wide) {
        reduced = type.clone(wide);
        input = loom::CastOp::create(b, loc, reduced, input);
      }
      int32_t dtype = dtypeOf(reduced.getElementType());
      if (dtype < 0 || kind < 0 ||
          reduce.getInput().getType() != reduce.getType())
        return op->emitOpError("with this element type, reduction or type "
                               "change is not supported in engines yet");
      Value result = allReduce(b, loc, input, reduced, dtype, kind,
                               place.group(reduce.getGridAxes()));
      if (wide)
        result = loom::CastOp::create(b, loc, type, result);
      op->getResult(0).replaceAllUsesWith(result);
    } else if (auto scatter = dyn_cast<shard::ReduceScatterOp>(op)) {
      // The reduction of the whole tensor, then this rank's slice.
      auto in = cast<RankedTensorType>(scatter.getInput().getType());
      auto out = cast<RankedTensorType>(scatter.getType());
      int32_t dtype = dtypeOf(in.getElementType());
      int32_t kind = reduceOpOf(scatter.getReduction());
      if (dtype < 0 || kind < 0)
        return op->emitOpError("with this element type or reduction is not "
                               "supported in engines yet");
      SmallVector<int64_t> members = place.group(scatter.getGridAxes());
      Value reduced =
          allReduce(b, loc, scatter.getInput(), in, dtype, kind, members);
      op->getResult(0).replaceAllUsesWith(rankSlice(
          b, loc, op, reduced, out, scatter.getScatterAxis().getSExtValue(),
          place.position(scatter.getGridAxes()), members.size()));
    } else if (auto gather = dyn_cast<shard::AllGatherOp>(op)) {
      auto in = cast<RankedTensorType>(gather.getInput().getType());
      auto out = cast<RankedTensorType>(gather.getType());
      RankedTensorType gatheredType = out;
      int64_t axis = gather.getGatherAxis().getSExtValue();
      int64_t bits = in.getElementTypeBitWidth();
      Value input = gather.getInput();
      // Booleans (and other sub-byte integers) travel as bytes.
      if (bits % 8 && in.getElementType().isInteger()) {
        in = in.clone(b.getI8Type());
        out = out.clone(b.getI8Type());
        input = loom::CastOp::create(b, loc, in, input);
        bits = 8;
      }
      if (bits % 8)
        return op->emitOpError("of this element type is not supported in "
                               "engines yet");
      SmallVector<int64_t> members = place.group(gather.getGridAxes());
      int64_t n = members.size();
      // [n, local...], contiguous per member.
      SmallVector<int64_t> stacked{n};
      llvm::append_range(stacked, in.getShape());
      auto stackedType = RankedTensorType::get(stacked, in.getElementType());
      CallBuffers c = prepare(b, loc, input, stackedType);
      SmallVector<Value> args{c.inAddress, c.outAddress,
                              countOf(b, loc, input, bits / 8)};
      callOnGroup(b, loc, kAllGather, kGroupAllGather, args, members);
      Value result = finish(b, loc, c, stackedType);
      if (axis != 0) {
        // Move the member dimension next to the gathered axis.
        SmallVector<int64_t> perm, permuted;
        for (int64_t d = 0; d < in.getRank(); ++d) {
          if (d == axis)
            perm.push_back(0);
          perm.push_back(d + 1);
        }
        for (int64_t p : perm)
          permuted.push_back(stacked[p]);
        result = TransposeOp::create(
            b, loc, RankedTensorType::get(permuted, in.getElementType()),
            result, b.getDenseI64ArrayAttr(perm));
      }
      if (out.hasStaticShape()) {
        auto shapeType = RankedTensorType::get({out.getRank()}, b.getI64Type());
        Value outShape = ConstantOp::create(
            b, loc, DenseElementsAttr::get(shapeType, out.getShape()));
        result = ReshapeOp::create(b, loc, out, result, outShape,
                                   /*allowzero=*/false);
      } else {
        // The member dimension (at `axis` now) and the gathered one after
        // it become one; the other sizes stay what they are at run time.
        SmallVector<ReassociationIndices> groups;
        for (int64_t d = 0; d < in.getRank(); ++d) {
          if (d == axis)
            groups.push_back({d, d + 1});
          else
            groups.push_back({d < axis ? d : d + 1});
        }
        result = tensor::CollapseShapeOp::create(b, loc, result, groups);
        if (result.getType() != out)
          result = tensor::CastOp::create(b, loc, out, result);
      }
      if (out != gatheredType)
        result = loom::CastOp::create(b, loc, gatheredType, result);
      op->getResult(0).replaceAllUsesWith(result);
    } else if (auto send = dyn_cast<shard::SendOp>(op)) {
      auto type = cast<RankedTensorType>(send.getInput().getType());
      if (bytesOf(type) < 0 || !send.getDestinationDynamic().empty())
        return op->emitOpError("of this type or shape (sizes known only at "
                               "run time) or with a dynamic destination "
                               "is not supported in engines yet");
      func::FuncOp callee =
          declareRuntimeFunction(module, kSend, {i64Type, i64Type, i64Type});
      Value in = addressOf(b, loc, readOnlyBuffer(b, loc, send.getInput()));
      int64_t destination =
          place.memberAt(send.getGridAxes(), send.getDestination());
      func::CallOp::create(
          b, loc, callee,
          ValueRange{in, i64(b, loc, bytesOf(type)), i64(b, loc, destination)});
      op->getResult(0).replaceAllUsesWith(send.getInput());
    } else if (auto recv = dyn_cast<shard::RecvOp>(op)) {
      auto type = cast<RankedTensorType>(recv.getType());
      if (bytesOf(type) < 0 || !recv.getSource() ||
          !recv.getSourceDynamic().empty())
        return op->emitOpError("of this type or shape (sizes known only at "
                               "run time) or without a static source is "
                               "not supported in engines yet");
      func::FuncOp callee =
          declareRuntimeFunction(module, kRecv, {i64Type, i64Type, i64Type});
      CallBuffers c;
      c.out = resultBuffer(b, loc, type);
      int64_t source = place.memberAt(recv.getGridAxes(), *recv.getSource());
      func::CallOp::create(b, loc, callee,
                           ValueRange{addressOf(b, loc, c.out),
                                      i64(b, loc, bytesOf(type)),
                                      i64(b, loc, source)});
      op->getResult(0).replaceAllUsesWith(finish(b, loc, c, type));
    } else if (auto broadcast = dyn_cast<shard::BroadcastOp>(op)) {
      auto type = cast<RankedTensorType>(broadcast.getType());
      int64_t bits = type.getElementTypeBitWidth();
      if (bits % 8 || !broadcast.getRootDynamic().empty())
        return op->emitOpError("of this type or with a dynamic root is not "
                               "supported in engines yet");
      SmallVector<int64_t> members = place.group(broadcast.getGridAxes());
      if (members.size() == 1) {
        op->getResult(0).replaceAllUsesWith(broadcast.getInput());
        continue;
      }
      int64_t root =
          place.memberAt(broadcast.getGridAxes(), broadcast.getRoot());
      CallBuffers c = prepare(b, loc, broadcast.getInput(), type);
      SmallVector<Value> args{c.inAddress, c.outAddress,
                              countOf(b, loc, broadcast.getInput(), bits / 8),
                              i64(b, loc, root)};
      callOnGroup(b, loc, kBroadcast, kGroupBroadcast, args, members);
      op->getResult(0).replaceAllUsesWith(finish(b, loc, c, type));
    } else if (auto exchange = dyn_cast<shard::AllToAllOp>(op)) {
      auto in = cast<RankedTensorType>(exchange.getInput().getType());
      auto out = cast<RankedTensorType>(exchange.getType());
      int64_t bits = in.getElementTypeBitWidth();
      SmallVector<int64_t> members = place.group(exchange.getGridAxes());
      int64_t n = members.size();
      if (bits % 8 || in != out || exchange.getSplitAxis() != 0 ||
          exchange.getConcatAxis() != 0 ||
          (!in.isDynamicDim(0) && in.getDimSize(0) % n != 0))
        return op->emitOpError("is supported in engines only along axis 0 "
                               "(split and concatenate), with a dimension 0 "
                               "that divides by the group");
      if (n == 1) {
        op->getResult(0).replaceAllUsesWith(exchange.getInput());
        continue;
      }
      if (in.isDynamicDim(0)) {
        checkDivides(b, loc, op,
                     tensor::DimOp::create(b, loc, exchange.getInput(), 0), n,
                     "dimension 0 is exchanged");
      }
      // Block j of dimension 0 is contiguous: it goes to member j as it is.
      CallBuffers c = prepare(b, loc, exchange.getInput(), out);
      SmallVector<Value> args{
          c.inAddress, c.outAddress,
          countOf(b, loc, exchange.getInput(), bits / 8, n)};
      callOnGroup(b, loc, kAllToAll, kGroupAllToAll, args, members);
      op->getResult(0).replaceAllUsesWith(finish(b, loc, c, out));
    } else {
      return op->emitOpError("is not supported in engines yet (per-rank code "
                             "handles all_slice, all_reduce, reduce_scatter, "
                             "all_gather, all_to_all, broadcast, send, recv "
                             "and process indices)");
    }
  }
  for (Operation *op : llvm::reverse(shardOps))
    op->erase();
  for (auto grid : llvm::make_early_inc_range(module.getOps<shard::GridOp>()))
    grid.erase();
  return success();
}

} // namespace loom::cpu
