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
//===----------------------------------------------------------------------===//

#include "loom/Target/CPU/Collectives.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

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
constexpr const char *kAllToAll = "loom_rt_all_to_all";

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
  case shard::ReductionKind::Sum: return 0;
  case shard::ReductionKind::Product: return 1;
  case shard::ReductionKind::Max: return 2;
  case shard::ReductionKind::Min: return 3;
  default: return -1;
  }
}

/// Declares `name(i64...)` (and the rest) once.
func::FuncOp declare(ModuleOp module, StringRef name, TypeRange inputs) {
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  OpBuilder b(module.getBodyRegion());
  b.setInsertionPointToStart(module.getBody());
  auto f = func::FuncOp::create(b, module.getLoc(), name,
                                b.getFunctionType(inputs, {}));
  f.setPrivate();
  return f;
}

/// The address of `buffer`'s data as i64.
Value addressOf(OpBuilder &b, Location loc, Value buffer) {
  Value index =
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
}

/// `x` as a read-only buffer and a new buffer of `resultType`, with their
/// addresses; the caller emits the call and then `finish`.
struct CallBuffers {
  Value in, out, inAddress, outAddress;
};

CallBuffers prepare(OpBuilder &b, Location loc, Value x,
                    RankedTensorType resultType) {
  auto inType = cast<RankedTensorType>(x.getType());
  CallBuffers c;
  c.in = bufferization::ToBufferOp::create(
      b, loc, MemRefType::get(inType.getShape(), inType.getElementType()), x,
      /*read_only=*/true);
  c.out = memref::AllocOp::create(
      b, loc,
      MemRefType::get(resultType.getShape(), resultType.getElementType()));
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

/// Rank `rank`'s block of `source` along `axis`: a static slice of
/// `resultType`.
Value rankSlice(OpBuilder &b, Location loc, Value source,
                RankedTensorType resultType, int64_t axis, int64_t rank) {
  int64_t rankOf = resultType.getRank();
  SmallVector<OpFoldResult> offsets(rankOf, b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes, strides(rankOf, b.getIndexAttr(1));
  for (int64_t d : resultType.getShape())
    sizes.push_back(b.getIndexAttr(d));
  offsets[axis] = b.getIndexAttr(rank * resultType.getDimSize(axis));
  return tensor::ExtractSliceOp::create(b, loc, resultType, source, offsets,
                                        sizes, strides);
}

Value i64(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
}
Value i32(OpBuilder &b, Location loc, int32_t v) {
  return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
}

} // namespace

FailureOr<std::optional<int64_t>> engineGridSize(ModuleOp module) {
  auto grids = llvm::to_vector(module.getOps<shard::GridOp>());
  if (grids.empty())
    return std::optional<int64_t>();
  if (grids.size() != 1 || grids.front().getShape().size() != 1 ||
      ShapedType::isDynamic(grids.front().getShape()[0]))
    return grids.front().emitError(
        "engines support one 1-D device grid of static size yet");
  return std::optional<int64_t>(grids.front().getShape()[0]);
}

LogicalResult specializeForRank(ModuleOp module, int64_t rank) {
  Type i64Type = IntegerType::get(module.getContext(), 64);
  Type i32Type = IntegerType::get(module.getContext(), 32);
  SmallVector<Operation *> shardOps;
  module.walk([&](Operation *op) {
    if (op->getDialect() && op->getDialect()->getNamespace() == "shard" &&
        !isa<shard::GridOp>(op))
      shardOps.push_back(op);
  });
  FailureOr<std::optional<int64_t>> size = engineGridSize(module);
  if (failed(size))
    return failure();
  int64_t ranks = size->value_or(1);
  for (Operation *op : shardOps) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    if (auto slice = dyn_cast<shard::AllSliceOp>(op)) {
      op->getResult(0).replaceAllUsesWith(
          rankSlice(b, loc, slice.getInput(),
                    cast<RankedTensorType>(slice.getType()),
                    slice.getSliceAxis().getSExtValue(), rank));
    } else if (isa<shard::ProcessLinearIndexOp, shard::ProcessMultiIndexOp>(
                   op)) {
      // On a 1-D grid the rank is the linear and the only multi-index.
      for (Value result : op->getResults())
        result.replaceAllUsesWith(arith::ConstantIndexOp::create(b, loc, rank));
    } else if (auto reduce = dyn_cast<shard::AllReduceOp>(op)) {
      auto type = cast<RankedTensorType>(reduce.getType());
      int32_t dtype = dtypeOf(type.getElementType());
      int32_t kind = reduceOpOf(reduce.getReduction());
      if (dtype < 0 || kind < 0 ||
          reduce.getInput().getType() != reduce.getType())
        return op->emitOpError("with this element type, reduction or type "
                               "change is not supported in engines yet");
      func::FuncOp callee = declare(
          module, kAllReduce, {i64Type, i64Type, i64Type, i32Type, i32Type});
      CallBuffers c = prepare(b, loc, reduce.getInput(), type);
      func::CallOp::create(b, loc, callee,
                           ValueRange{c.inAddress, c.outAddress,
                                      i64(b, loc, type.getNumElements()),
                                      i32(b, loc, dtype), i32(b, loc, kind)});
      op->getResult(0).replaceAllUsesWith(finish(b, loc, c, type));
    } else if (auto scatter = dyn_cast<shard::ReduceScatterOp>(op)) {
      // The reduction of the whole tensor, then this rank's slice.
      auto in = cast<RankedTensorType>(scatter.getInput().getType());
      auto out = cast<RankedTensorType>(scatter.getType());
      int32_t dtype = dtypeOf(in.getElementType());
      int32_t kind = reduceOpOf(scatter.getReduction());
      if (dtype < 0 || kind < 0 || !in.hasStaticShape())
        return op->emitOpError("with this element type or reduction is not "
                               "supported in engines yet");
      func::FuncOp callee = declare(
          module, kAllReduce, {i64Type, i64Type, i64Type, i32Type, i32Type});
      CallBuffers c = prepare(b, loc, scatter.getInput(), in);
      func::CallOp::create(b, loc, callee,
                           ValueRange{c.inAddress, c.outAddress,
                                      i64(b, loc, in.getNumElements()),
                                      i32(b, loc, dtype), i32(b, loc, kind)});
      Value reduced = finish(b, loc, c, in);
      op->getResult(0).replaceAllUsesWith(
          rankSlice(b, loc, reduced, out,
                    scatter.getScatterAxis().getSExtValue(), rank));
    } else if (auto gather = dyn_cast<shard::AllGatherOp>(op)) {
      auto in = cast<RankedTensorType>(gather.getInput().getType());
      auto out = cast<RankedTensorType>(gather.getType());
      int64_t axis = gather.getGatherAxis().getSExtValue();
      int64_t bits = in.getElementTypeBitWidth();
      if (bits % 8 || !in.hasStaticShape())
        return op->emitOpError("of this element type or shape is not "
                               "supported in engines yet");
      // [ranks, local...], contiguous per rank.
      SmallVector<int64_t> stacked{ranks};
      llvm::append_range(stacked, in.getShape());
      auto stackedType = RankedTensorType::get(stacked, in.getElementType());
      func::FuncOp callee =
          declare(module, kAllGather, {i64Type, i64Type, i64Type});
      CallBuffers c = prepare(b, loc, gather.getInput(), stackedType);
      func::CallOp::create(
          b, loc, callee,
          ValueRange{c.inAddress, c.outAddress,
                     i64(b, loc, in.getNumElements() * bits / 8)});
      Value result = finish(b, loc, c, stackedType);
      if (axis != 0) {
        // Move the rank dimension next to the gathered axis.
        SmallVector<int64_t> perm, shape;
        for (int64_t d = 0; d < in.getRank(); ++d) {
          if (d == axis)
            perm.push_back(0);
          perm.push_back(d + 1);
        }
        for (int64_t p : perm)
          shape.push_back(stacked[p]);
        result = TransposeOp::create(b, loc,
                                     RankedTensorType::get(shape,
                                                           in.getElementType()),
                                     result, b.getDenseI64ArrayAttr(perm));
      }
      auto shapeType =
          RankedTensorType::get({out.getRank()}, b.getI64Type());
      Value shape = ConstantOp::create(
          b, loc, DenseElementsAttr::get(shapeType, out.getShape()));
      result = ReshapeOp::create(b, loc, out, result, shape,
                                 /*allowzero=*/false);
      op->getResult(0).replaceAllUsesWith(result);
    } else if (auto exchange = dyn_cast<shard::AllToAllOp>(op)) {
      auto in = cast<RankedTensorType>(exchange.getInput().getType());
      auto out = cast<RankedTensorType>(exchange.getType());
      int64_t bits = in.getElementTypeBitWidth();
      if (bits % 8 || !in.hasStaticShape() || in != out ||
          exchange.getSplitAxis() != 0 || exchange.getConcatAxis() != 0 ||
          in.getDimSize(0) % ranks != 0)
        return op->emitOpError("is supported in engines only along axis 0 "
                               "(split and concatenate), with a static shape "
                               "whose dimension 0 divides by the ranks");
      // Block j of dimension 0 is contiguous: it goes to rank j as it is.
      func::FuncOp callee =
          declare(module, kAllToAll, {i64Type, i64Type, i64Type});
      CallBuffers c = prepare(b, loc, exchange.getInput(), out);
      func::CallOp::create(
          b, loc, callee,
          ValueRange{c.inAddress, c.outAddress,
                     i64(b, loc, in.getNumElements() / ranks * bits / 8)});
      op->getResult(0).replaceAllUsesWith(finish(b, loc, c, out));
    } else {
      return op->emitOpError("is not supported in engines yet (per-rank code "
                             "handles all_slice, all_reduce, reduce_scatter, "
                             "all_gather, all_to_all and process indices)");
    }
  }
  for (Operation *op : llvm::reverse(shardOps))
    op->erase();
  for (auto grid : llvm::make_early_inc_range(module.getOps<shard::GridOp>()))
    grid.erase();
  return success();
}

} // namespace loom::cpu
