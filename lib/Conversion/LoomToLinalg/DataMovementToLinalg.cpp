//===- DataMovementToLinalg.cpp - Constants and data movement -------------===//
//
// Constants become arith.constant; transposes, expands, concats, splits,
// slices, pads, tiles and trilu become tensor slices, linalg.transpose or
// one linalg.generic each, with sizes known only at run time read from the
// operands (reshapes and shapes are in ReshapeToLinalg.cpp).
//
//===----------------------------------------------------------------------===//

#include "loom/Conversion/LoomToLinalg/LoomToLinalg.h"

#include "Utils.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace loom::lowering;

namespace loom {
namespace {

class ConstantLowering : public LoomLowering<ConstantOp> {
public:
  using LoomLowering::LoomLowering;
  LogicalResult
  matchAndRewrite(ConstantOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = resultType(op);
    auto value = dyn_cast<TypedAttr>(op.getValue());
    if (!type || !value)
      return failure();
    if (value.getType() != type) {
      // Unsigned or narrow float elements: the same bits with the signless
      // type (a resource keeps its blob, which holds a byte per element
      // for the sub-byte types already). Sub-byte elements widen to bytes,
      // sign-extended for the signed integers.
      Type from = getElementTypeOrSelf(value.getType());
      Type to = type.getElementType();
      if (auto resource = dyn_cast<DenseResourceElementsAttr>(value))
        value = DenseResourceElementsAttr::get(type, resource.getRawHandle());
      else if (auto dense = dyn_cast<DenseElementsAttr>(value);
               dense &&
               from.getIntOrFloatBitWidth() == to.getIntOrFloatBitWidth())
        value = dense.bitcast(to);
      else if (dense)
        value = dense.mapValues(to, [&](const APInt &bits) {
          return from.isSignedInteger() || from.isSignlessInteger()
                     ? bits.sext(to.getIntOrFloatBitWidth())
                     : bits.zext(to.getIntOrFloatBitWidth());
        });
      else
        return rewriter.notifyMatchFailure(op, "constant of another kind");
    }
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, value);
    return success();
  }
};

class TransposeLowering : public ResultTypedLowering<TransposeOp> {
public:
  using ResultTypedLowering::ResultTypedLowering;
  LogicalResult lower(TransposeOp op, OpAdaptor adaptor, RankedTensorType type,
                      ConversionPatternRewriter &rewriter) const override {
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (type.isDynamicDim(d))
        sizes.push_back(indexDim(rewriter, op.getLoc(), adaptor.getInput(),
                                 op.getPerm()[d]));
    Value init = emptyTensor(rewriter, op.getLoc(), type, sizes);
    auto transpose = linalg::TransposeOp::create(
        rewriter, op.getLoc(), adaptor.getInput(), init, op.getPerm());
    rewriter.replaceOp(op, transpose->getResult(0));
    return success();
  }
};

class ExpandLowering : public ResultTypedLowering<ExpandOp> {
public:
  using ResultTypedLowering::ResultTypedLowering;
  LogicalResult lower(ExpandOp op, OpAdaptor adaptor, RankedTensorType type,
                      ConversionPatternRewriter &rewriter) const override {
    Value input = adaptor.getInput();
    auto inputType = cast<RankedTensorType>(input.getType());
    if (inputType.hasStaticShape() && type.hasStaticShape()) {
      rewriter.replaceOp(
          op, buildElementwise(
                  rewriter, op.getLoc(), type, ValueRange{input},
                  [](OpBuilder &, Location, ValueRange x) { return x[0]; }));
      return success();
    }
    rewriter.replaceOp(op, runTimeExpand(rewriter, op, adaptor, type));
    return success();
  }

private:
  /// Expand with sizes known only at run time: result size j is the
  /// shape's entry where the input's size is 1 (or the input has no such
  /// dimension) and the input's otherwise; an input dimension broadcasts
  /// when its size is 1 at run time, so each element is read through
  /// coordinates computed in the body rather than an indexing map.
  static Value runTimeExpand(OpBuilder &b, ExpandOp op, OpAdaptor adaptor,
                             RankedTensorType type) {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto inputType = cast<RankedTensorType>(input.getType());
    int64_t rank = type.getRank(), offset = rank - inputType.getRank();
    int64_t shapeLength =
        cast<RankedTensorType>(adaptor.getShape().getType()).getDimSize(0);
    auto index = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    SmallVector<Value> sizes, inputSizes;
    for (int64_t d = 0; d < inputType.getRank(); ++d)
      inputSizes.push_back(indexDim(b, loc, input, d));
    for (int64_t j = 0; j < rank; ++j) {
      if (!type.isDynamicDim(j))
        continue;
      int64_t k = j - (rank - shapeLength);
      Value entry = k >= 0 ? Value(arith::IndexCastOp::create(
                                 b, loc, b.getIndexType(),
                                 scalarOf(b, loc, adaptor.getShape(), k)))
                           : index(1);
      if (j < offset) {
        sizes.push_back(entry);
        continue;
      }
      Value size = inputSizes[j - offset];
      Value one = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, size,
                                        index(1));
      sizes.push_back(arith::SelectOp::create(b, loc, one, entry, size));
    }
    return buildElementwise(
        b, loc, type, ValueRange{},
        [&](OpBuilder &b, Location loc, ValueRange) {
          SmallVector<Value> coords;
          for (int64_t d = 0; d < inputType.getRank(); ++d) {
            Value i = linalg::IndexOp::create(b, loc, d + offset);
            if (inputType.getDimSize(d) == 1) {
              coords.push_back(index(0));
              continue;
            }
            if (!inputType.isDynamicDim(d)) {
              coords.push_back(i);
              continue;
            }
            Value one = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                              inputSizes[d], index(1));
            coords.push_back(arith::SelectOp::create(b, loc, one, index(0), i));
          }
          return Value(tensor::ExtractOp::create(b, loc, input, coords));
        },
        sizes);
  }
};

SmallVector<OpFoldResult> indexAttrs(OpBuilder &b, ArrayRef<int64_t> values) {
  return llvm::map_to_vector(
      values, [&](int64_t v) -> OpFoldResult { return b.getIndexAttr(v); });
}

/// The append writes into the cache operand, which is the engine's cache
/// input (a writable function argument), so that bufferization performs it
/// in place; the result views the filled part of the same buffer. A length
/// or update that does not fit is reported, and the code goes on writing
/// and viewing only what fits.
class CacheAppendLowering : public ResultTypedLowering<CacheAppendOp> {
public:
  using ResultTypedLowering::ResultTypedLowering;
  LogicalResult lower(CacheAppendOp op, OpAdaptor adaptor,
                      RankedTensorType type,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value cache = adaptor.getCache(), update = adaptor.getUpdate();
    int64_t rank = type.getRank();
    int64_t axis = axisIndex(op.getAxis(), rank);
    Type i64 = rewriter.getI64Type();
    auto toI64 = [&](Value index) {
      return arith::IndexCastOp::create(rewriter, loc, i64, index).getResult();
    };
    auto cmp = [&](arith::CmpIPredicate predicate, Value x, Value y) {
      return arith::CmpIOp::create(rewriter, loc, predicate, x, y).getResult();
    };
    Value length = tensor::ExtractOp::create(rewriter, loc, adaptor.getLength(),
                                             ValueRange{});
    Value capacity = toI64(indexDim(rewriter, loc, cache, axis));
    Value added = toI64(indexDim(rewriter, loc, update, axis));
    Value zero = arith::ConstantIntOp::create(rewriter, loc, i64, 0);
    Value overflows = arith::OrIOp::create(
        rewriter, loc, cmp(arith::CmpIPredicate::slt, length, zero),
        arith::OrIOp::create(
            rewriter, loc, cmp(arith::CmpIPredicate::sgt, length, capacity),
            cmp(arith::CmpIPredicate::sgt, added,
                arith::SubIOp::create(rewriter, loc, capacity, length))));
    checkCondition(rewriter, loc, op, overflows,
                   "the key/value cache is full: its capacity is less than "
                   "the filled length plus the new positions");
    // What fits: the length in [0, capacity], the update cut to the rest.
    Value safeLength = arith::MinSIOp::create(
        rewriter, loc, arith::MaxSIOp::create(rewriter, loc, length, zero),
        capacity);
    Value safeAdded = arith::MinSIOp::create(
        rewriter, loc, added,
        arith::SubIOp::create(rewriter, loc, capacity, safeLength));
    auto toIndex = [&](Value v) {
      return arith::IndexCastOp::create(rewriter, loc, rewriter.getIndexType(),
                                        v)
          .getResult();
    };
    SmallVector<OpFoldResult> zeros(rank, rewriter.getIndexAttr(0)),
        ones(rank, rewriter.getIndexAttr(1)), written, viewed;
    for (int64_t d = 0; d < rank; ++d) {
      OpFoldResult own = tensor::getMixedSize(rewriter, loc, update, d);
      OpFoldResult whole = tensor::getMixedSize(rewriter, loc, cache, d);
      if (d == axis) {
        written.push_back(toIndex(safeAdded));
        viewed.push_back(toIndex(
            arith::AddIOp::create(rewriter, loc, safeLength, safeAdded)));
        continue;
      }
      viewed.push_back(whole);
      if (!isa<Value>(own) && !isa<Value>(whole)) {
        written.push_back(own);
        continue;
      }
      Value ownSize = getValueOrCreateConstantIndexOp(rewriter, loc, own);
      Value wholeSize = getValueOrCreateConstantIndexOp(rewriter, loc, whole);
      checkCondition(rewriter, loc, op,
                     cmp(arith::CmpIPredicate::ne, ownSize, wholeSize),
                     "the new keys/values differ from the cache off the "
                     "position axis");
      written.push_back(
          arith::MinUIOp::create(rewriter, loc, ownSize, wholeSize)
              .getResult());
    }
    Value source = tensor::ExtractSliceOp::create(rewriter, loc, update, zeros,
                                                  written, ones);
    SmallVector<OpFoldResult> offsets(zeros);
    offsets[axis] = toIndex(safeLength);
    Value filled = tensor::InsertSliceOp::create(rewriter, loc, source, cache,
                                                 offsets, written, ones);
    Value view = tensor::ExtractSliceOp::create(rewriter, loc, filled, zeros,
                                                viewed, ones);
    if (view.getType() != type)
      view = tensor::CastOp::create(rewriter, loc, type, view);
    rewriter.replaceOp(op, view);
    return success();
  }
};

class ConcatLowering : public ResultTypedLowering<ConcatOp> {
public:
  using ResultTypedLowering::ResultTypedLowering;
  LogicalResult lower(ConcatOp op, OpAdaptor adaptor, RankedTensorType type,
                      ConversionPatternRewriter &rewriter) const override {
    int64_t rank = type.getRank();
    int64_t axis = axisIndex(op.getAxis(), rank);
    Location loc = op.getLoc();
    bool runTimeSizes =
        !type.hasStaticShape() ||
        llvm::any_of(adaptor.getInputs(), [](Value input) {
          return !cast<RankedTensorType>(input.getType()).hasStaticShape();
        });
    if (!runTimeSizes) {
      Value result = emptyTensor(rewriter, loc, type);
      SmallVector<int64_t> offsets(rank, 0), strides(rank, 1);
      for (Value input : adaptor.getInputs()) {
        auto shape = cast<RankedTensorType>(input.getType()).getShape();
        // Empty inputs add nothing (and their offset at the end is one
        // insert_slice's verifier refuses).
        if (llvm::is_contained(shape, 0))
          continue;
        result = tensor::InsertSliceOp::create(
            rewriter, loc, input, result, indexAttrs(rewriter, offsets),
            indexAttrs(rewriter, shape), indexAttrs(rewriter, strides));
        offsets[axis] += shape[axis];
      }
      rewriter.replaceOp(op, result);
      return success();
    }
    // Sizes known only at run time: the axis's is the sum of the inputs',
    // the others the first input's (the inputs must agree there).
    Value first = adaptor.getInputs().front();
    Value total = arith::ConstantIndexOp::create(rewriter, loc, 0);
    for (Value input : adaptor.getInputs())
      total = arith::AddIOp::create(rewriter, loc, total,
                                    indexDim(rewriter, loc, input, axis));
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < rank; ++d)
      if (type.isDynamicDim(d))
        sizes.push_back(d == axis ? total : indexDim(rewriter, loc, first, d));
    Value result = emptyTensor(rewriter, loc, type, sizes);
    OpFoldResult offset = rewriter.getIndexAttr(0);
    for (Value input : adaptor.getInputs()) {
      if (llvm::is_contained(cast<RankedTensorType>(input.getType()).getShape(),
                             0))
        continue;
      SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0)),
          extents, strides(rank, rewriter.getIndexAttr(1));
      offsets[axis] = offset;
      // Off the axis every input must have the result's sizes: a
      // difference is reported, and only what fits is written.
      bool clipped = false;
      for (int64_t d = 0; d < rank; ++d) {
        OpFoldResult own = tensor::getMixedSize(rewriter, loc, input, d);
        OpFoldResult whole = tensor::getMixedSize(rewriter, loc, result, d);
        if (d == axis || (!isa<Value>(own) && !isa<Value>(whole))) {
          extents.push_back(own);
          continue;
        }
        Value ownSize = getValueOrCreateConstantIndexOp(rewriter, loc, own);
        Value wholeSize = getValueOrCreateConstantIndexOp(rewriter, loc, whole);
        checkCondition(rewriter, loc, op,
                       arith::CmpIOp::create(rewriter, loc,
                                             arith::CmpIPredicate::ne, ownSize,
                                             wholeSize),
                       "inputs have sizes known only at run time that "
                       "differ off the axis");
        extents.push_back(
            arith::MinUIOp::create(rewriter, loc, ownSize, wholeSize)
                .getResult());
        clipped = true;
      }
      Value source = input;
      if (clipped)
        source = tensor::ExtractSliceOp::create(
            rewriter, loc, input,
            SmallVector<OpFoldResult>(rank, rewriter.getIndexAttr(0)), extents,
            strides);
      result = tensor::InsertSliceOp::create(rewriter, loc, source, result,
                                             offsets, extents, strides);
      offset =
          arith::AddIOp::create(
              rewriter, loc,
              getValueOrCreateConstantIndexOp(rewriter, loc, offset),
              getValueOrCreateConstantIndexOp(rewriter, loc, extents[axis]))
              .getResult();
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

class SplitLowering : public LoomLowering<SplitOp> {
public:
  using LoomLowering::LoomLowering;
  LogicalResult
  matchAndRewrite(SplitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto inputType = cast<RankedTensorType>(adaptor.getInput().getType());
    int64_t rank = inputType.getRank();
    int64_t axis = axisIndex(op.getAxis(), rank);
    SmallVector<int64_t> offsets(rank, 0), strides(rank, 1);
    SmallVector<Value> results;
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    std::optional<ArrayRef<int64_t>> splitSizes = op.getSizes();
    for (auto [i, result] : llvm::enumerate(op.getResults())) {
      auto type = convertedType(result);
      if (!type)
        return failure();
      // The part's size along the axis: its type's, or the op's sizes.
      int64_t part = type.getDimSize(axis);
      if (ShapedType::isDynamic(part) && splitSizes && i < splitSizes->size())
        part = (*splitSizes)[i];
      if (ShapedType::isDynamic(part))
        return rewriter.notifyMatchFailure(
            op, "split sizes known only at run time");
      // Other dimensions known only at run time are the input's.
      SmallVector<OpFoldResult> extents;
      for (int64_t d = 0; d < rank; ++d)
        extents.push_back(d == axis
                              ? rewriter.getIndexAttr(part)
                              : tensor::getMixedSize(rewriter, loc, input, d));
      // An empty part after the last element reads from offset 0: an
      // offset equal to the size is out of bounds even for nothing.
      SmallVector<int64_t> partOffsets(offsets);
      if (part == 0)
        partOffsets[axis] = 0;
      Value slice = tensor::ExtractSliceOp::create(
          rewriter, loc, input, indexAttrs(rewriter, partOffsets), extents,
          indexAttrs(rewriter, strides));
      if (slice.getType() != type)
        slice = tensor::CastOp::create(rewriter, loc, type, slice);
      results.push_back(slice);
      offsets[axis] += part;
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// The values of a constant integer tensor.
std::optional<SmallVector<int64_t>> constantInts(Value value) {
  DenseIntElementsAttr attr;
  if (!value || !matchPattern(value, m_Constant(&attr)))
    return std::nullopt;
  return llvm::map_to_vector(attr.getValues<APInt>(),
                             [](const APInt &v) { return v.getSExtValue(); });
}

class SliceLowering : public LoomLowering<SliceOp> {
public:
  using LoomLowering::LoomLowering;
  LogicalResult
  matchAndRewrite(SliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = resultType(op);
    auto inputType = cast<RankedTensorType>(adaptor.getInput().getType());
    auto starts = constantInts(op.getStarts());
    std::optional<SmallVector<int64_t>> axes, steps;
    if (op.getAxes())
      axes = constantInts(op.getAxes());
    if (op.getSteps())
      steps = constantInts(op.getSteps());
    if (!type)
      return failure();
    int64_t rank = inputType.getRank();
    bool constantBounds =
        starts && (!op.getAxes() || axes) && (!op.getSteps() || steps) &&
        (!steps || llvm::all_of(*steps, [](int64_t step) { return step > 0; }));
    if (!constantBounds || !inputType.hasStaticShape() ||
        !type.hasStaticShape()) {
      rewriter.replaceOp(op, buildRuntimeSlice(rewriter, op, adaptor, type));
      return success();
    }
    // Nothing to read (and an offset at the end that extract_slice's
    // verifier refuses): an empty tensor.
    if (type.getNumElements() == 0) {
      rewriter.replaceOp(op, emptyTensor(rewriter, op.getLoc(), type));
      return success();
    }
    SmallVector<int64_t> offsets(rank, 0), strides(rank, 1);
    for (auto [i, start] : llvm::enumerate(*starts)) {
      int64_t axis = axes ? (*axes)[i] : static_cast<int64_t>(i);
      axis = axis < 0 ? axis + rank : axis;
      int64_t dim = inputType.getDimSize(axis);
      start = start < 0 ? start + dim : start;
      offsets[axis] = std::clamp<int64_t>(start, 0, dim);
      strides[axis] = steps ? (*steps)[i] : 1;
    }
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        op, type, adaptor.getInput(), indexAttrs(rewriter, offsets),
        indexAttrs(rewriter, type.getShape()), indexAttrs(rewriter, strides));
    return success();
  }

private:
  /// Bounds known only at run time, or negative steps: a generic reads
  /// out[d] = x[offset + d * step] per dimension, where each dimension's
  /// offset and step are selected at run time from the entries whose axis
  /// names it (ONNX clamping; the sizes are the result's static ones).
  static Value buildRuntimeSlice(OpBuilder &b, SliceOp op, OpAdaptor adaptor,
                                 RankedTensorType type) {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto inputType = cast<RankedTensorType>(input.getType());
    int64_t rank = inputType.getRank();
    int64_t count =
        cast<RankedTensorType>(adaptor.getStarts().getType()).getDimSize(0);
    auto index = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    auto read = [&](Value tensor, int64_t i) -> Value {
      return arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                        scalarOf(b, loc, tensor, i));
    };
    SmallVector<Value> offsets, steps, sizes;
    for (int64_t d = 0; d < rank; ++d) {
      Value offset = index(0), step = index(1);
      Value size = indexDim(b, loc, input, d);
      // The number of elements read along d (the result's size there).
      Value length = size;
      for (int64_t i = 0; i < count; ++i) {
        Value axis = adaptor.getAxes() ? read(adaptor.getAxes(), i) : index(i);
        Value negativeAxis = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::slt, axis, index(0));
        axis = arith::SelectOp::create(
            b, loc, negativeAxis,
            arith::AddIOp::create(b, loc, axis, index(rank)), axis);
        Value here = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                           axis, index(d));
        Value stepI =
            adaptor.getSteps() ? read(adaptor.getSteps(), i) : index(1);
        Value start = read(adaptor.getStarts(), i);
        Value negativeStart = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::slt, start, index(0));
        start = arith::SelectOp::create(
            b, loc, negativeStart, arith::AddIOp::create(b, loc, start, size),
            start);
        // Positive steps clamp the start to [0, size], negative ones to
        // [0, size - 1].
        Value backwards = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::slt, stepI, index(0));
        Value upper = arith::SelectOp::create(
            b, loc, backwards, arith::SubIOp::create(b, loc, size, index(1)),
            size);
        start = arith::MaxSIOp::create(
            b, loc, arith::MinSIOp::create(b, loc, start, upper), index(0));
        offset = arith::SelectOp::create(b, loc, here, start, offset);
        step = arith::SelectOp::create(b, loc, here, stepI, step);
        if (!type.isDynamicDim(d))
          continue;
        // The end, clamped like the start (to [-1, size - 1] going
        // backwards); the count max(ceil((end - start) / step), 0). The end
        // is read as i64 and clamped before it becomes an index: exporters
        // write INT64_MAX for "to the end".
        Value end = scalarOf(b, loc, adaptor.getEnds(), i);
        Type i64 = end.getType();
        auto i64Of = [&](Value v) -> Value {
          return arith::IndexCastOp::create(b, loc, i64, v);
        };
        Value sizeI64 = i64Of(size);
        Value zeroI64 = i64Of(index(0));
        Value negativeEnd = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::slt, end, zeroI64);
        end = arith::SelectOp::create(
            b, loc, negativeEnd, arith::AddIOp::create(b, loc, end, sizeI64),
            end);
        Value lowest = arith::SelectOp::create(b, loc, backwards,
                                               i64Of(index(-1)), zeroI64);
        Value highest = arith::SelectOp::create(
            b, loc, backwards,
            i64Of(arith::SubIOp::create(b, loc, size, index(1))), sizeI64);
        end = arith::IndexCastOp::create(
            b, loc, b.getIndexType(),
            arith::MaxSIOp::create(
                b, loc, arith::MinSIOp::create(b, loc, end, highest), lowest));
        // ceil(a / s) for s > 0 and for s < 0 (a and s of the same sign
        // when anything is read).
        Value distance = arith::SubIOp::create(b, loc, end, start);
        Value magnitude = arith::SelectOp::create(
            b, loc, backwards, arith::SubIOp::create(b, loc, index(0), stepI),
            stepI);
        Value forward = arith::SelectOp::create(
            b, loc, backwards,
            arith::SubIOp::create(b, loc, index(0), distance), distance);
        Value n = arith::CeilDivSIOp::create(
            b, loc, forward,
            arith::MaxSIOp::create(b, loc, magnitude, index(1)));
        n = arith::MaxSIOp::create(b, loc, n, index(0));
        length = arith::SelectOp::create(b, loc, here, n, length);
      }
      offsets.push_back(offset);
      steps.push_back(step);
      if (type.isDynamicDim(d))
        sizes.push_back(length);
    }
    return buildElementwise(
        b, loc, type, ValueRange{},
        [&](OpBuilder &b, Location loc, ValueRange) {
          SmallVector<Value> coords;
          for (int64_t d = 0; d < rank; ++d)
            coords.push_back(arith::AddIOp::create(
                b, loc, offsets[d],
                arith::MulIOp::create(
                    b, loc, linalg::IndexOp::create(b, loc, d), steps[d])));
          return Value(tensor::ExtractOp::create(b, loc, input, coords));
        },
        sizes);
  }
};

class PadLowering : public ResultTypedLowering<PadOp> {
public:
  using ResultTypedLowering::ResultTypedLowering;
  LogicalResult lower(PadOp op, OpAdaptor adaptor, RankedTensorType type,
                      ConversionPatternRewriter &rewriter) const override {
    auto pads = constantInts(op.getPads());
    if (!pads || op.getMode() != "constant" ||
        llvm::any_of(*pads, [](int64_t p) { return p < 0; })) {
      rewriter.replaceOp(op, buildGeneral(rewriter, op, adaptor, type));
      return success();
    }
    Location loc = op.getLoc();
    Value padValue;
    if (Value given = adaptor.getConstantValue()) {
      auto givenType = cast<RankedTensorType>(given.getType());
      SmallVector<Value> zeros(
          givenType.getRank(),
          arith::ConstantIndexOp::create(rewriter, loc, 0));
      padValue = tensor::ExtractOp::create(rewriter, loc, given, zeros);
    } else {
      padValue = scalarConstant(rewriter, loc, type.getElementType(), 0);
    }
    int64_t rank = type.getRank();
    ArrayRef<int64_t> all(*pads);
    rewriter.replaceOp(op, padStatic(rewriter, loc, adaptor.getInput(),
                                     all.take_front(rank), all.drop_front(rank),
                                     padValue));
    return success();
  }

private:
  /// Pads read at run time, negative pads, and the edge, reflect and wrap
  /// modes. Negative pads crop first, as in the reference executor: along
  /// each dimension the input is narrowed to a window [cropBegin, size -
  /// cropEnd) of m elements, and an output position o reads window
  /// position c = o - padBegin. Outside the window, c is clamped (edge),
  /// mirrored with period 2 (m - 1) (reflect), taken modulo m (wrap) or,
  /// in constant mode, replaced by the pad value.
  static Value buildGeneral(OpBuilder &b, PadOp op, OpAdaptor adaptor,
                            RankedTensorType type) {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto inputType = cast<RankedTensorType>(input.getType());
    int64_t rank = type.getRank();
    StringRef mode = op.getMode();
    auto index = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    auto padAt = [&](int64_t i) -> Value {
      return arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                        scalarOf(b, loc, adaptor.getPads(), i));
    };
    Value zero = index(0);
    SmallVector<Value> padBegins, cropBegins, windows;
    for (int64_t d = 0; d < rank; ++d) {
      Value begin = padAt(d), end = padAt(rank + d);
      Value size = inputType.isDynamicDim(d)
                       ? Value(tensor::DimOp::create(b, loc, input, d))
                       : index(inputType.getDimSize(d));
      Value cropBegin = arith::MaxSIOp::create(
          b, loc, arith::SubIOp::create(b, loc, zero, begin), zero);
      Value cropEnd = arith::MaxSIOp::create(
          b, loc, arith::SubIOp::create(b, loc, zero, end), zero);
      padBegins.push_back(arith::MaxSIOp::create(b, loc, begin, zero));
      cropBegins.push_back(cropBegin);
      windows.push_back(arith::SubIOp::create(
          b, loc, size, arith::AddIOp::create(b, loc, cropBegin, cropEnd)));
    }
    Value padValue = adaptor.getConstantValue()
                         ? scalarOf(b, loc, adaptor.getConstantValue())
                         : scalarConstant(b, loc, type.getElementType(), 0);
    return buildElementwise(
        b, loc, type, ValueRange{},
        [&](OpBuilder &b, Location loc, ValueRange) {
          SmallVector<Value> coords;
          Value inside = arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
          auto lessThan = [&](Value x, Value y) -> Value {
            return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x,
                                         y);
          };
          // ((x rem m) + m) rem m: remsi keeps the sign of x.
          auto modulo = [&](Value x, Value m) -> Value {
            Value r = arith::RemSIOp::create(b, loc, x, m);
            return arith::SelectOp::create(b, loc, lessThan(r, zero),
                                           arith::AddIOp::create(b, loc, r, m),
                                           r);
          };
          for (int64_t d = 0; d < rank; ++d) {
            Value window = windows[d];
            Value last = arith::SubIOp::create(b, loc, window, index(1));
            Value c = arith::SubIOp::create(
                b, loc, linalg::IndexOp::create(b, loc, d), padBegins[d]);
            if (mode == "reflect") {
              Value period = arith::MaxSIOp::create(
                  b, loc, arith::AddIOp::create(b, loc, last, last), index(1));
              c = modulo(c, period);
              c = arith::SelectOp::create(
                  b, loc, lessThan(last, c),
                  arith::SubIOp::create(b, loc, period, c), c);
            } else if (mode == "wrap") {
              c = modulo(c, arith::MaxSIOp::create(b, loc, window, index(1)));
            } else if (mode == "constant") {
              Value outside = arith::OrIOp::create(b, loc, lessThan(c, zero),
                                                   lessThan(last, c));
              inside = arith::AndIOp::create(
                  b, loc, inside,
                  arith::XOrIOp::create(
                      b, loc, outside,
                      arith::ConstantOp::create(b, loc, b.getBoolAttr(true))));
            }
            // Edge mode, and a safe address for the others.
            c = arith::MaxSIOp::create(
                b, loc, arith::MinSIOp::create(b, loc, c, last), zero);
            coords.push_back(arith::AddIOp::create(b, loc, cropBegins[d], c));
          }
          Value value = tensor::ExtractOp::create(b, loc, input, coords);
          if (mode != "constant")
            return value;
          return Value(
              arith::SelectOp::create(b, loc, inside, value, padValue));
        });
  }
};

/// Repeats: input dimension i is read at d_i mod size_i.
class TileLowering : public ResultTypedLowering<TileOp> {
public:
  using ResultTypedLowering::ResultTypedLowering;
  LogicalResult lower(TileOp op, OpAdaptor adaptor, RankedTensorType type,
                      ConversionPatternRewriter &rewriter) const override {
    MLIRContext *ctx = rewriter.getContext();
    auto inputType = cast<RankedTensorType>(adaptor.getInput().getType());
    if (!inputType.hasStaticShape() || !type.hasStaticShape()) {
      rewriter.replaceOp(op, runTimeTile(rewriter, op, adaptor, type));
      return success();
    }
    auto inputShape = inputType.getShape();
    SmallVector<AffineExpr> exprs;
    for (auto [d, size] : llvm::enumerate(inputShape))
      exprs.push_back(size == 1 ? getAffineConstantExpr(0, ctx)
                                : getAffineDimExpr(d, ctx) % size);
    int64_t rank = type.getRank();
    SmallVector<AffineMap> maps{AffineMap::get(rank, 0, exprs, ctx),
                                rewriter.getMultiDimIdentityMap(rank)};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        rewriter, op.getLoc(), TypeRange{type}, ValueRange{adaptor.getInput()},
        ValueRange{emptyTensor(rewriter, op.getLoc(), type)}, maps, iterators,
        [](OpBuilder &b, Location loc, ValueRange args) {
          linalg::YieldOp::create(b, loc, args[0]);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }

private:
  /// Tile with sizes known only at run time: result size i is the input's
  /// times repeats[i] (read from the operand), and each element is read at
  /// coordinates d_i mod size_i computed in the body.
  static Value runTimeTile(OpBuilder &b, TileOp op, OpAdaptor adaptor,
                           RankedTensorType type) {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto inputType = cast<RankedTensorType>(input.getType());
    SmallVector<Value> inputSizes, sizes;
    for (int64_t d = 0; d < inputType.getRank(); ++d)
      inputSizes.push_back(indexDim(b, loc, input, d));
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (!type.isDynamicDim(d))
        continue;
      Value repeats = arith::IndexCastOp::create(
          b, loc, b.getIndexType(), scalarOf(b, loc, adaptor.getRepeats(), d));
      sizes.push_back(arith::MulIOp::create(b, loc, inputSizes[d], repeats));
    }
    return buildElementwise(
        b, loc, type, ValueRange{},
        [&](OpBuilder &b, Location loc, ValueRange) {
          SmallVector<Value> coords;
          for (int64_t d = 0; d < inputType.getRank(); ++d) {
            if (inputType.getDimSize(d) == 1) {
              coords.push_back(arith::ConstantIndexOp::create(b, loc, 0));
              continue;
            }
            coords.push_back(arith::RemUIOp::create(
                b, loc, linalg::IndexOp::create(b, loc, d), inputSizes[d]));
          }
          return Value(tensor::ExtractOp::create(b, loc, input, coords));
        },
        sizes);
  }
};

/// Keeps the elements on one side of the k-th diagonal of the last two
/// dimensions: col - row >= k (upper) or <= k (lower).
class TriluLowering : public LoomLowering<TriluOp> {
public:
  using LoomLowering::LoomLowering;
  LogicalResult
  matchAndRewrite(TriluOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = resultType(op);
    if (!type || type.getRank() < 2)
      return failure();
    Location loc = op.getLoc();
    Value k =
        adaptor.getK()
            ? castScalar(rewriter, loc, scalarOf(rewriter, loc, adaptor.getK()),
                         rewriter.getI64Type())
            : scalarConstant(rewriter, loc, rewriter.getI64Type(), 0);
    int64_t rank = type.getRank();
    bool upper = op.getUpper();
    Value result = buildElementwise(
        rewriter, loc, type, ValueRange{adaptor.getInput()},
        [&](OpBuilder &b, Location loc, ValueRange x) -> Value {
          Value row = linalg::IndexOp::create(b, loc, rank - 2);
          Value col = linalg::IndexOp::create(b, loc, rank - 1);
          Value diagonal = arith::IndexCastOp::create(
              b, loc, b.getI64Type(), arith::SubIOp::create(b, loc, col, row));
          Value keep = arith::CmpIOp::create(b, loc,
                                             upper ? arith::CmpIPredicate::sge
                                                   : arith::CmpIPredicate::sle,
                                             diagonal, k);
          return arith::SelectOp::create(
              b, loc, keep, x[0], scalarConstant(b, loc, x[0].getType(), 0));
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateLoomDataMovementToLinalgPatterns(const TypeConverter &converter,
                                              RewritePatternSet &patterns) {
  patterns.add<ConstantLowering, TransposeLowering, ExpandLowering,
               ConcatLowering, CacheAppendLowering, SplitLowering,
               SliceLowering, PadLowering, TileLowering, TriluLowering>(
      converter, patterns.getContext());
}

} // namespace loom
