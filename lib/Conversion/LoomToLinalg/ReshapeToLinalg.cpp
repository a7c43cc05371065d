//===- ReshapeToLinalg.cpp - Reshapes, shapes and sizes -------------------===//
//
// Reshape, squeeze and unsqueeze become tensor views (expand_shape,
// collapse_shape), also with sizes known only at run time where the
// shapes allow, else a flattened, checked and expanded view; shape and
// size are read from the operand at run time.
//
//===----------------------------------------------------------------------===//

#include "loom/Conversion/LoomToLinalg/LoomToLinalg.h"

#include "Utils.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace loom::lowering;

namespace loom {
namespace {

/// The number of elements of `tensor` as an index value.
Value numElementsOf(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  Value count = arith::ConstantIndexOp::create(b, loc, 1);
  for (int64_t d = 0; d < type.getRank(); ++d)
    count = arith::MulIOp::create(b, loc, count, indexDim(b, loc, tensor, d));
  return count;
}

/// `input` collapsed into one dimension.
Value flattened(OpBuilder &b, Location loc, Value input) {
  auto type = cast<RankedTensorType>(input.getType());
  if (type.getRank() == 1)
    return input;
  ReassociationIndices all;
  for (int64_t d = 0; d < type.getRank(); ++d)
    all.push_back(d);
  int64_t count =
      type.hasStaticShape() ? type.getNumElements() : ShapedType::kDynamic;
  return tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get({count}, type.getElementType()), input,
      type.getRank() ? ArrayRef<ReassociationIndices>{all}
                     : ArrayRef<ReassociationIndices>{});
}

/// ONNX Reshape with a constant shape (`entries`) of an input with sizes
/// known only at run time, as a view: expand_shape or collapse_shape, so
/// that nothing is copied and elementwise fusion sees through it. Taken
/// when the input and the result share their leading dimensions (entries
/// of 0, the input's own sizes, or equal static sizes) and their trailing
/// static ones, and what lies between is one dimension on one side and
/// dimensions of sizes known at compile time on the other (or the -1 on
/// the result's side): a transformer's split of [B, S, 64] into
/// [B, S, 4, 16] heads (entries [0, 0, 4, 16]), or their merge. Null
/// otherwise (the general run-time reshape then).
Value viewReshape(OpBuilder &b, Location loc, Value input,
                  ArrayRef<int64_t> entries, bool allowzero,
                  RankedTensorType type) {
  auto inputType = cast<RankedTensorType>(input.getType());
  int64_t inRank = inputType.getRank(), outRank = entries.size();
  if (allowzero || inRank == 0 || outRank == 0)
    return {};
  auto staticIn = [&](int64_t d) -> std::optional<int64_t> {
    if (inputType.isDynamicDim(d))
      return std::nullopt;
    return inputType.getDimSize(d);
  };
  // Result dimension `out` is input dimension `in`, at run time too.
  auto same = [&](int64_t out, int64_t in) {
    if (entries[out] == 0)
      return out == in;
    return entries[out] > 0 && staticIn(in) == entries[out];
  };
  int64_t prefix = 0;
  while (prefix < inRank && prefix < outRank && same(prefix, prefix))
    ++prefix;
  int64_t suffix = 0;
  while (prefix + suffix < inRank && prefix + suffix < outRank &&
         same(outRank - 1 - suffix, inRank - 1 - suffix))
    ++suffix;
  int64_t inMiddle = inRank - prefix - suffix;
  int64_t outMiddle = outRank - prefix - suffix;
  // The result's sizes, known ones static.
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < outRank; ++d)
    shape.push_back(
        d < prefix || d >= prefix + outMiddle
            ? inputType.getDimSize(d < prefix ? d : d - outMiddle + inMiddle)
            : entries[d]);
  auto castToResult = [&](Value view) -> Value {
    if (view.getType() == type)
      return view;
    return tensor::CastOp::create(b, loc, type, view);
  };
  SmallVector<ReassociationIndices> groups;
  auto group = [&](int64_t middle) {
    groups.clear();
    for (int64_t d = 0; d < prefix; ++d)
      groups.push_back({d});
    ReassociationIndices mid;
    for (int64_t d = prefix; d < prefix + middle; ++d)
      mid.push_back(d);
    groups.push_back(mid);
    for (int64_t k = 0; k < suffix; ++k)
      groups.push_back({prefix + middle + k});
  };
  if (inMiddle == 1 && outMiddle >= 1) {
    // One input dimension split into sizes known at compile time, whose
    // product is its static size.
    std::optional<int64_t> split = staticIn(prefix);
    if (!split)
      return {};
    int64_t product = 1, inferred = -1;
    for (int64_t d = prefix; d < prefix + outMiddle; ++d) {
      if (entries[d] == -1 && inferred < 0) {
        inferred = d;
        continue;
      }
      if (entries[d] <= 0)
        return {};
      product *= entries[d];
    }
    // The -1: what the others leave of the split size.
    if (inferred >= 0) {
      if (product == 0 || *split % product != 0)
        return {};
      shape[inferred] = *split / product;
      product = *split;
    }
    if (product != *split)
      return {};
    SmallVector<OpFoldResult> outputShape;
    for (int64_t d = 0; d < outRank; ++d)
      outputShape.push_back(
          ShapedType::isDynamic(shape[d])
              ? OpFoldResult(
                    indexDim(b, loc, input, d < prefix ? d : d - outMiddle + 1))
              : OpFoldResult(b.getIndexAttr(shape[d])));
    group(outMiddle);
    auto expanded = RankedTensorType::get(shape, inputType.getElementType());
    return castToResult(tensor::ExpandShapeOp::create(b, loc, expanded, input,
                                                      groups, outputShape));
  }
  if (outMiddle == 1 && inMiddle >= 2) {
    // Input dimensions merged into one: the -1, or a static size that is
    // their static product.
    int64_t merged = entries[prefix];
    if (merged == 0 || merged < -1)
      return {};
    if (merged > 0) {
      int64_t product = 1;
      for (int64_t d = prefix; d < prefix + inMiddle; ++d) {
        std::optional<int64_t> size = staticIn(d);
        if (!size)
          return {};
        product *= *size;
      }
      if (product != merged)
        return {};
    }
    group(inMiddle);
    return castToResult(tensor::CollapseShapeOp::create(b, loc, input, groups));
  }
  return {};
}

/// Reshape, squeeze, unsqueeze: a view with the result's static shape.
template <typename OpTy>
class ReshapeLowering : public ResultTypedLowering<OpTy> {
public:
  using ResultTypedLowering<OpTy>::ResultTypedLowering;
  LogicalResult lower(OpTy op, typename OpTy::Adaptor adaptor,
                      RankedTensorType type,
                      ConversionPatternRewriter &rewriter) const override {
    auto inputType = cast<RankedTensorType>(adaptor.getInput().getType());
    if constexpr (std::is_same_v<OpTy, ReshapeOp>) {
      if (!inputType.hasStaticShape() || !type.hasStaticShape()) {
        DenseIntElementsAttr constant;
        if (matchPattern(adaptor.getShape(), m_Constant(&constant))) {
          SmallVector<int64_t> entries;
          for (const APInt &entry : constant.getValues<APInt>())
            entries.push_back(entry.getSExtValue());
          if (Value view =
                  viewReshape(rewriter, op.getLoc(), adaptor.getInput(),
                              entries, op.getAllowzero(), type)) {
            rewriter.replaceOp(op, view);
            return success();
          }
        }
        rewriter.replaceOp(op, runTimeReshape(rewriter, op, adaptor, type));
        return success();
      }
    }
    // Squeeze or unsqueeze of sizes known only at run time into a static
    // shape: the element count is checked.
    if (!inputType.hasStaticShape() && type.hasStaticShape()) {
      Value flat =
          checkedCast(rewriter, op.getLoc(), op,
                      flattened(rewriter, op.getLoc(), adaptor.getInput()),
                      RankedTensorType::get({type.getNumElements()},
                                            type.getElementType()));
      rewriter.replaceOp(op, reshapeTo(rewriter, op.getLoc(), flat, type));
      return success();
    }
    rewriter.replaceOp(
        op, reshapeTo(rewriter, op.getLoc(), adaptor.getInput(), type));
    return success();
  }

private:
  /// ONNX Reshape with sizes known only at run time: each result size is
  /// the shape operand's entry, the input's size there for a 0 (unless
  /// allowzero), and the remaining elements for the -1; a result the model
  /// states static is checked against the element count.
  static Value runTimeReshape(OpBuilder &b, ReshapeOp op,
                              typename ReshapeOp::Adaptor adaptor,
                              RankedTensorType type) {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto inputType = cast<RankedTensorType>(input.getType());
    Value flat = flattened(b, loc, input);
    Value count = numElementsOf(b, loc, input);
    if (type.hasStaticShape()) {
      auto flatType =
          RankedTensorType::get({type.getNumElements()}, type.getElementType());
      flat = checkedCast(b, loc, op, flat, flatType);
      return reshapeTo(b, loc, flat, type);
    }
    int64_t rank = type.getRank();
    auto index = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    // The entries as given, with 0 replaced by the input's size.
    SmallVector<Value> sizes;
    Value known = index(1);
    for (int64_t d = 0; d < rank; ++d) {
      Value entry = arith::IndexCastOp::create(
          b, loc, b.getIndexType(), scalarOf(b, loc, adaptor.getShape(), d));
      if (!op.getAllowzero() && d < inputType.getRank()) {
        Value zero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                           entry, index(0));
        entry = arith::SelectOp::create(b, loc, zero,
                                        indexDim(b, loc, input, d), entry);
      }
      Value isInferred = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                               entry, index(-1));
      known = arith::MulIOp::create(
          b, loc, known,
          arith::SelectOp::create(b, loc, isInferred, index(1), entry));
      sizes.push_back(entry);
    }
    // The -1 entry: the elements left (a zero divisor reads as one).
    Value rest = arith::DivUIOp::create(
        b, loc, count, arith::MaxSIOp::create(b, loc, known, index(1)));
    SmallVector<OpFoldResult> shape;
    Value product = index(1);
    Value statedDiffers =
        arith::ConstantOp::create(b, loc, b.getBoolAttr(false));
    for (int64_t d = 0; d < rank; ++d) {
      Value isInferred = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                               sizes[d], index(-1));
      Value size = arith::SelectOp::create(b, loc, isInferred, rest, sizes[d]);
      product = arith::MulIOp::create(b, loc, product, size);
      shape.push_back(type.isDynamicDim(d)
                          ? OpFoldResult(size)
                          : b.getIndexAttr(type.getDimSize(d)));
      if (!type.isDynamicDim(d)) {
        Value differs = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                              size, index(type.getDimSize(d)));
        checkCondition(b, loc, op, differs,
                       "the shape gives a size the model states otherwise");
        statedDiffers = arith::OrIOp::create(b, loc, statedDiffers, differs);
      }
    }
    // A shape whose element count differs from the input's is reported;
    // the code goes on with every run-time size 0 (nothing read), so that
    // no view reaches past the input.
    Value mismatch =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, product, count);
    checkCondition(b, loc, op, mismatch,
                   "the shape's element count differs from the input's");
    mismatch = arith::OrIOp::create(b, loc, mismatch, statedDiffers);
    for (int64_t d = 0; d < rank; ++d)
      if (type.isDynamicDim(d))
        shape[d] = arith::SelectOp::create(
                       b, loc, mismatch, index(0),
                       getValueOrCreateConstantIndexOp(b, loc, shape[d]))
                       .getResult();
    if (rank > 1)
      flat = tensor::ExtractSliceOp::create(
          b, loc, flat, ArrayRef<OpFoldResult>{b.getIndexAttr(0)},
          ArrayRef<OpFoldResult>{
              arith::SelectOp::create(b, loc, mismatch, index(0), count)
                  .getResult()},
          ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
    ReassociationIndices all;
    for (int64_t d = 0; d < rank; ++d)
      all.push_back(d);
    if (rank == 0)
      return tensor::CollapseShapeOp::create(
          b, loc, type,
          tensor::CastOp::create(
              b, loc, RankedTensorType::get({1}, type.getElementType()), flat),
          ArrayRef<ReassociationIndices>{});
    if (rank == 1)
      return tensor::CastOp::create(b, loc, type, flat);
    return tensor::ExpandShapeOp::create(
        b, loc, type, flat, ArrayRef<ReassociationIndices>{all}, shape);
  }
};

/// Dimensions [start, end) of the input's shape, read at run time.
class ShapeLowering : public ResultTypedLowering<ShapeOp> {
public:
  using ResultTypedLowering::ResultTypedLowering;
  LogicalResult lower(ShapeOp op, OpAdaptor adaptor, RankedTensorType type,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
    auto clampBound = [&](int64_t bound) {
      return std::clamp<int64_t>(bound < 0 ? bound + rank : bound, 0, rank);
    };
    int64_t start = clampBound(op.getStart());
    int64_t end = clampBound(op.getEnd() ? int64_t(*op.getEnd()) : rank);
    SmallVector<Value> sizes;
    for (int64_t d = start; d < end; ++d)
      sizes.push_back(
          arith::IndexCastOp::create(rewriter, loc, rewriter.getI64Type(),
                                     indexDim(rewriter, loc, input, d)));
    if (int64_t(sizes.size()) != type.getDimSize(0))
      return rewriter.notifyMatchFailure(op, "unexpected result size");
    rewriter.replaceOpWithNewOp<tensor::FromElementsOp>(op, type, sizes);
    return success();
  }
};

/// The number of elements, read at run time.
class SizeLowering : public ResultTypedLowering<SizeOp> {
public:
  using ResultTypedLowering::ResultTypedLowering;
  LogicalResult lower(SizeOp op, OpAdaptor adaptor, RankedTensorType type,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value count = arith::IndexCastOp::create(
        rewriter, loc, rewriter.getI64Type(),
        numElementsOf(rewriter, loc, adaptor.getInput()));
    rewriter.replaceOpWithNewOp<tensor::FromElementsOp>(op, type,
                                                        ValueRange{count});
    return success();
  }
};

} // namespace

void populateLoomReshapeToLinalgPatterns(const TypeConverter &converter,
                                         RewritePatternSet &patterns) {
  patterns.add<ShapeLowering, SizeLowering, ReshapeLowering<ReshapeOp>,
               ReshapeLowering<SqueezeOp>, ReshapeLowering<UnsqueezeOp>>(
      converter, patterns.getContext());
}

} // namespace loom
