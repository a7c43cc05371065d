//===- IndexingToLinalg.cpp - Gathers, scatters and one-hot ---------------===//
//
// Ops that read or write at positions taken from data: gather,
// gather_elements, gather_nd, one_hot (a linalg.generic each, indices
// checked at run time and clamped into their dimension) and
// scatter_elements, scatter_nd (ordered scf.for nests over tensors, so
// that repeated positions combine as ONNX defines).
//
//===----------------------------------------------------------------------===//

#include "loom/Conversion/LoomToLinalg/LoomToLinalg.h"

#include "Utils.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace loom::lowering;

namespace loom {
namespace {

/// The coordinates of the current iteration with dimension `axis` replaced
/// by `index`; dimensions from `axis + 1` on come from `skip` later loop
/// dimensions (for gather, the indices' rank minus one).
SmallVector<Value> coordsWith(OpBuilder &b, Location loc, int64_t rank,
                              int64_t axis, Value index, int64_t skip = 0) {
  SmallVector<Value> coords;
  for (int64_t d = 0; d < rank; ++d)
    coords.push_back(d == axis ? index
                               : Value(linalg::IndexOp::create(
                                     b, loc, d > axis ? d + skip : d)));
  return coords;
}

/// An index value as `index`, counted from the end of a dimension of
/// `size` when negative. An index outside [-size, size) - which
/// checkIndices reports before the op runs - is clamped into the
/// dimension, so that the code never reads or writes outside a tensor.
/// `size` is an index value (a constant, or read at run time).
Value wrappedIndex(OpBuilder &b, Location loc, Value value, Value size) {
  Value index = arith::IndexCastOp::create(b, loc, b.getIndexType(), value);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value negative =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, index, zero);
  Value wrapped = arith::AddIOp::create(b, loc, index, size);
  Value inRange = arith::SelectOp::create(b, loc, negative, wrapped, index);
  Value last = arith::SubIOp::create(b, loc, size,
                                     arith::ConstantIndexOp::create(b, loc, 1));
  return arith::MaxSIOp::create(
      b, loc, arith::MinSIOp::create(b, loc, inRange, last), zero);
}

/// out[d..., i..., e...] = data[d..., indices[i...], e...].
class GatherLowering : public ResultTypedLowering<GatherOp> {
public:
  using ResultTypedLowering::ResultTypedLowering;
  LogicalResult lower(GatherOp op, OpAdaptor adaptor, RankedTensorType type,
                      ConversionPatternRewriter &rewriter) const override {
    Value data = adaptor.getData(), indices = adaptor.getIndices();
    auto dataType = cast<RankedTensorType>(data.getType());
    int64_t indexRank = cast<RankedTensorType>(indices.getType()).getRank();
    int64_t axis = axisIndex(op.getAxis(), dataType.getRank());
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineExpr> indexExprs;
    for (int64_t d = 0; d < indexRank; ++d)
      indexExprs.push_back(getAffineDimExpr(axis + d, ctx));
    SmallVector<AffineMap> maps{
        AffineMap::get(type.getRank(), 0, indexExprs, ctx),
        rewriter.getMultiDimIdentityMap(type.getRank())};
    SmallVector<utils::IteratorType> iterators(type.getRank(),
                                               utils::IteratorType::parallel);
    int64_t axisSize = dataType.getDimSize(axis);
    Location loc = op.getLoc();
    // The axis's size as an index value (read from the data when known only
    // at run time).
    Value axisLength = indexDim(rewriter, loc, data, axis);
    SmallVector<Value> runTimeAxis;
    if (ShapedType::isDynamic(axisSize))
      runTimeAxis.push_back(axisLength);
    checkIndices(rewriter, loc, op, indices, {axisSize}, /*fromEnd=*/true,
                 runTimeAxis);
    // Run-time sizes come from the indices in [axis, axis + indexRank) and
    // from the data elsewhere.
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (!type.isDynamicDim(d))
        continue;
      if (d >= axis && d < axis + indexRank) {
        sizes.push_back(
            tensor::DimOp::create(rewriter, loc, indices, d - axis));
        continue;
      }
      int64_t dataDim = d < axis ? d : d - indexRank + 1;
      sizes.push_back(indexDim(rewriter, loc, data, dataDim));
    }
    auto generic = linalg::GenericOp::create(
        rewriter, op.getLoc(), TypeRange{type}, ValueRange{indices},
        ValueRange{emptyTensor(rewriter, op.getLoc(), type, sizes)}, maps,
        iterators, [&](OpBuilder &b, Location loc, ValueRange args) {
          Value index = wrappedIndex(b, loc, args[0], axisLength);
          SmallVector<Value> coords = coordsWith(b, loc, dataType.getRank(),
                                                 axis, index, indexRank - 1);
          linalg::YieldOp::create(
              b, loc, Value(tensor::ExtractOp::create(b, loc, data, coords)));
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// out[i...] = data[i... with axis -> indices[i...]].
class GatherElementsLowering : public ResultTypedLowering<GatherElementsOp> {
public:
  using ResultTypedLowering::ResultTypedLowering;
  LogicalResult lower(GatherElementsOp op, OpAdaptor adaptor,
                      RankedTensorType type,
                      ConversionPatternRewriter &rewriter) const override {
    Value data = adaptor.getData();
    auto dataType = cast<RankedTensorType>(data.getType());
    int64_t rank = type.getRank();
    int64_t axis = axisIndex(op.getAxis(), rank);
    int64_t axisSize = dataType.getDimSize(axis);
    Value axisLength = indexDim(rewriter, op.getLoc(), data, axis);
    SmallVector<Value> runTimeAxis;
    if (ShapedType::isDynamic(axisSize))
      runTimeAxis.push_back(axisLength);
    checkIndices(rewriter, op.getLoc(), op, adaptor.getIndices(), {axisSize},
                 /*fromEnd=*/true, runTimeAxis);
    Value result = buildElementwise(
        rewriter, op.getLoc(), type, ValueRange{adaptor.getIndices()},
        [&](OpBuilder &b, Location loc, ValueRange x) -> Value {
          Value index = wrappedIndex(b, loc, x[0], axisLength);
          return tensor::ExtractOp::create(
              b, loc, data, coordsWith(b, loc, rank, axis, index));
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// values[1] where the position along `axis` equals the (wrapped) index,
/// values[0] elsewhere; the depth is the result's static size.
class OneHotLowering : public ResultTypedLowering<OneHotOp> {
public:
  using ResultTypedLowering::ResultTypedLowering;
  LogicalResult lower(OneHotOp op, OpAdaptor adaptor, RankedTensorType type,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    int64_t rank = type.getRank();
    int64_t axis = axisIndex(op.getAxis(), rank);
    int64_t depth = type.getDimSize(axis);
    // A depth known only at run time is read from its operand (ONNX: one
    // element of any numeric type; a negative one gives an empty axis).
    Value runTimeDepth;
    if (ShapedType::isDynamic(depth))
      runTimeDepth = arith::MaxSIOp::create(
          rewriter, loc,
          castScalar(rewriter, loc,
                     scalarOf(rewriter, loc, adaptor.getDepth(), 0),
                     rewriter.getI64Type(), isUnsigned(op.getDepth())),
          scalarConstant(rewriter, loc, rewriter.getI64Type(), 0));
    // Other sizes known only at run time are the indices'.
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < rank; ++d) {
      if (!type.isDynamicDim(d))
        continue;
      if (d == axis) {
        sizes.push_back(arith::IndexCastOp::create(
            rewriter, loc, rewriter.getIndexType(), runTimeDepth));
        continue;
      }
      sizes.push_back(tensor::DimOp::create(rewriter, loc, adaptor.getIndices(),
                                            d < axis ? d : d - 1));
    }
    Value off = castScalar(rewriter, loc,
                           scalarOf(rewriter, loc, adaptor.getValues(), 0),
                           type.getElementType());
    Value on = castScalar(rewriter, loc,
                          scalarOf(rewriter, loc, adaptor.getValues(), 1),
                          type.getElementType());
    SmallVector<AffineExpr> exprs;
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis)
        exprs.push_back(getAffineDimExpr(d, ctx));
    SmallVector<AffineMap> maps{AffineMap::get(rank, 0, exprs, ctx),
                                rewriter.getMultiDimIdentityMap(rank)};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{type}, ValueRange{adaptor.getIndices()},
        ValueRange{emptyTensor(rewriter, loc, type, sizes)}, maps, iterators,
        [&](OpBuilder &b, Location loc, ValueRange args) {
          Value index = castScalar(b, loc, args[0], b.getI64Type(),
                                   isUnsigned(op.getIndices()));
          Value position = arith::IndexCastOp::create(
              b, loc, b.getI64Type(), linalg::IndexOp::create(b, loc, axis));
          Value depthValue =
              runTimeDepth ? runTimeDepth
                           : scalarConstant(b, loc, b.getI64Type(), depth);
          Value negative =
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, index,
                                    scalarConstant(b, loc, b.getI64Type(), 0));
          index = arith::SelectOp::create(
              b, loc, negative,
              arith::AddIOp::create(b, loc, index, depthValue), index);
          Value hit = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                            index, position);
          linalg::YieldOp::create(
              b, loc, Value(arith::SelectOp::create(b, loc, hit, on, off)));
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Scatter
//===----------------------------------------------------------------------===//

/// Combines the element already at a scattered position with an update
/// (ONNX `reduction`: none, add, mul, max, min).
Value combineScatter(OpBuilder &b, Location loc, StringRef reduction,
                     bool isUnsignedElement, Value old, Value update) {
  if (reduction == "add")
    return floatOrInt<arith::AddFOp, arith::AddIOp>(b, loc, old, update);
  if (reduction == "mul")
    return floatOrInt<arith::MulFOp, arith::MulIOp>(b, loc, old, update);
  if (reduction == "max")
    return floatSignedOrUnsigned<arith::MaximumFOp, arith::MaxSIOp,
                                 arith::MaxUIOp>(b, loc, isUnsignedElement, old,
                                                 update);
  if (reduction == "min")
    return floatSignedOrUnsigned<arith::MinimumFOp, arith::MinSIOp,
                                 arith::MinUIOp>(b, loc, isUnsignedElement, old,
                                                 update);
  return update;
}

/// Updates are applied one at a time, in order, so repeated positions
/// combine (or, without a reduction, the last one wins) as ONNX defines:
/// an scf.for nest over the updates carries the result tensor, and each
/// step extracts, combines and inserts one element. `target` maps the loop
/// indices to the position written.
Value buildScatter(
    OpBuilder &b, Location loc, Value data, Value updates, StringRef reduction,
    bool isUnsignedElement,
    function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)>
        target) {
  int64_t rank = cast<RankedTensorType>(updates.getType()).getRank();
  SmallVector<Value> lbs, ubs, steps;
  for (int64_t d = 0; d < rank; ++d) {
    lbs.push_back(arith::ConstantIndexOp::create(b, loc, 0));
    ubs.push_back(indexDim(b, loc, updates, d));
    steps.push_back(arith::ConstantIndexOp::create(b, loc, 1));
  }
  scf::LoopNest nest = scf::buildLoopNest(
      b, loc, lbs, ubs, steps, ValueRange{data},
      [&](OpBuilder &b, Location loc, ValueRange ivs,
          ValueRange carried) -> scf::ValueVector {
        SmallVector<Value> coords = target(b, loc, ivs);
        Value update = tensor::ExtractOp::create(b, loc, updates, ivs);
        Value old = tensor::ExtractOp::create(b, loc, carried[0], coords);
        Value value =
            combineScatter(b, loc, reduction, isUnsignedElement, old, update);
        return {tensor::InsertOp::create(b, loc, value, carried[0], coords)};
      });
  return nest.results.front();
}

/// out = data; out[i... with axis -> indices[i...]] (op)= updates[i...].
class ScatterElementsLowering : public ResultTypedLowering<ScatterElementsOp> {
public:
  using ResultTypedLowering::ResultTypedLowering;
  LogicalResult lower(ScatterElementsOp op, OpAdaptor adaptor,
                      RankedTensorType type,
                      ConversionPatternRewriter &rewriter) const override {
    int64_t rank = type.getRank();
    int64_t axis = axisIndex(op.getAxis(), rank);
    Value indices = adaptor.getIndices();
    Location loc = op.getLoc();
    Value axisLength = indexDim(rewriter, loc, adaptor.getData(), axis);
    SmallVector<Value> runTimeAxis;
    if (type.isDynamicDim(axis))
      runTimeAxis.push_back(axisLength);
    checkIndices(rewriter, loc, op, indices, {type.getDimSize(axis)},
                 /*fromEnd=*/true, runTimeAxis);
    rewriter.replaceOp(
        op, buildScatter(rewriter, loc, adaptor.getData(), adaptor.getUpdates(),
                         op.getReduction(), isUnsigned(op.getData()),
                         [&](OpBuilder &b, Location loc, ValueRange ivs) {
                           SmallVector<Value> coords(ivs);
                           coords[axis] = wrappedIndex(
                               b, loc,
                               tensor::ExtractOp::create(b, loc, indices, ivs),
                               axisLength);
                           return coords;
                         }));
    return success();
  }
};

/// out = data; out[indices[p...], e...] (op)= updates[p..., e...], where
/// the last dimension of `indices` holds the leading coordinates.
class ScatterNDLowering : public ResultTypedLowering<ScatterNDOp> {
public:
  using ResultTypedLowering::ResultTypedLowering;
  LogicalResult lower(ScatterNDOp op, OpAdaptor adaptor, RankedTensorType type,
                      ConversionPatternRewriter &rewriter) const override {
    Value indices = adaptor.getIndices();
    auto indexShape = cast<RankedTensorType>(indices.getType()).getShape();
    int64_t depth = indexShape.back();
    int64_t batch = indexShape.size() - 1;
    Location opLoc = op.getLoc();
    if (ShapedType::isDynamic(depth))
      return rewriter.notifyMatchFailure(op, "index depth known at run time");
    SmallVector<Value> dataSizes, runTimeSizes;
    for (int64_t j = 0; j < depth; ++j) {
      dataSizes.push_back(indexDim(rewriter, opLoc, adaptor.getData(), j));
      if (type.isDynamicDim(j))
        runTimeSizes.push_back(dataSizes.back());
    }
    checkIndices(rewriter, opLoc, op, indices,
                 type.getShape().take_front(depth), /*fromEnd=*/true,
                 runTimeSizes);
    rewriter.replaceOp(
        op, buildScatter(
                rewriter, op.getLoc(), adaptor.getData(), adaptor.getUpdates(),
                op.getReduction(), isUnsigned(op.getData()),
                [&](OpBuilder &b, Location loc, ValueRange ivs) {
                  SmallVector<Value> coords;
                  SmallVector<Value> at(ivs.take_front(batch));
                  at.push_back(Value());
                  for (int64_t j = 0; j < depth; ++j) {
                    at.back() = arith::ConstantIndexOp::create(b, loc, j);
                    coords.push_back(wrappedIndex(
                        b, loc, tensor::ExtractOp::create(b, loc, indices, at),
                        dataSizes[j]));
                  }
                  coords.append(ivs.begin() + batch, ivs.end());
                  return coords;
                }));
    return success();
  }
};

/// out[p..., e...] = data[indices[p...]..., e...] after `batch_dims`
/// shared leading dimensions.
class GatherNDLowering : public ResultTypedLowering<GatherNDOp> {
public:
  using ResultTypedLowering::ResultTypedLowering;
  LogicalResult lower(GatherNDOp op, OpAdaptor adaptor, RankedTensorType type,
                      ConversionPatternRewriter &rewriter) const override {
    Value data = adaptor.getData(), indices = adaptor.getIndices();
    auto dataShape = cast<RankedTensorType>(data.getType()).getShape();
    auto indexShape = cast<RankedTensorType>(indices.getType()).getShape();
    int64_t batch = op.getBatchDims();
    int64_t depth = indexShape.back();
    int64_t positions = indexShape.size() - 1; // loop dims naming a tuple
    Location opLoc = op.getLoc();
    // The sizes of the indexed data dimensions (read at run time where the
    // data's are known only then).
    SmallVector<Value> indexedSizes, runTimeIndexed;
    for (int64_t j = 0; j < depth; ++j) {
      indexedSizes.push_back(indexDim(rewriter, opLoc, data, batch + j));
      if (ShapedType::isDynamic(dataShape[batch + j]))
        runTimeIndexed.push_back(indexedSizes.back());
    }
    checkIndices(rewriter, opLoc, op, indices, dataShape.slice(batch, depth),
                 /*fromEnd=*/true, runTimeIndexed);
    // Result sizes known only at run time: the indices' positions, then
    // the data's trailing dimensions.
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (type.isDynamicDim(d))
        sizes.push_back(d < positions
                            ? indexDim(rewriter, opLoc, indices, d)
                            : indexDim(rewriter, opLoc, data,
                                       batch + depth + d - positions));
    Value result = buildElementwise(
        rewriter, op.getLoc(), type, ValueRange{},
        [&](OpBuilder &b, Location loc, ValueRange) -> Value {
          SmallVector<Value> at, coords;
          for (int64_t d = 0; d < positions; ++d)
            at.push_back(linalg::IndexOp::create(b, loc, d));
          for (int64_t d = 0; d < batch; ++d)
            coords.push_back(at[d]);
          at.push_back(Value());
          for (int64_t j = 0; j < depth; ++j) {
            at.back() = arith::ConstantIndexOp::create(b, loc, j);
            coords.push_back(wrappedIndex(
                b, loc, tensor::ExtractOp::create(b, loc, indices, at),
                indexedSizes[j]));
          }
          for (int64_t d = positions; d < type.getRank(); ++d)
            coords.push_back(linalg::IndexOp::create(b, loc, d));
          return tensor::ExtractOp::create(b, loc, data, coords);
        },
        sizes);
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateLoomIndexingToLinalgPatterns(const TypeConverter &converter,
                                          RewritePatternSet &patterns) {
  patterns.add<GatherLowering, GatherElementsLowering, OneHotLowering,
               ScatterElementsLowering, ScatterNDLowering, GatherNDLowering>(
      converter, patterns.getContext());
}

} // namespace loom
