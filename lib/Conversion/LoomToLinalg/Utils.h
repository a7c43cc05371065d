//===- Utils.h - Builders shared by the loom-to-linalg lowerings -*- C++
//-*-===//

#ifndef LOOM_LIB_CONVERSION_LOOMTOLINALG_UTILS_H
#define LOOM_LIB_CONVERSION_LOOMTOLINALG_UTILS_H

#include "loom/Conversion/LoomToLinalg/LoomToLinalg.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/Transforms/DialectConversion.h"

namespace loom::lowering {

/// Computes one scalar of an elementwise region from the operands' scalars.
using ScalarBody = llvm::function_ref<mlir::Value(
    mlir::OpBuilder &, mlir::Location, mlir::ValueRange)>;

/// An axis attribute (negative counts from the end) as a dimension. The
/// attributes' getters return uint64_t: take the value as int64_t.
inline int64_t axisIndex(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

/// The axes [first, rank): the trailing dimensions from `first`.
inline llvm::SmallVector<int64_t> axesFrom(int64_t first, int64_t rank) {
  llvm::SmallVector<int64_t> axes;
  for (int64_t d = first; d < rank; ++d)
    axes.push_back(d);
  return axes;
}

/// The element type of a shaped value.
mlir::Type elementType(mlir::Value value);

/// An uninitialized tensor of a static type.
mlir::Value emptyTensor(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::RankedTensorType type);
/// An uninitialized tensor of `type`, its dynamic dimensions of the sizes
/// `dynamicSizes` (index values, in order).
mlir::Value emptyTensor(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::RankedTensorType type,
                        mlir::ValueRange dynamicSizes);

/// A scalar constant of a float or integer type.
mlir::Value scalarConstant(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Type type, double value);

/// The lowest (-inf, or the least integer) or the highest value of a type:
/// the identity of max or of min.
mlir::Value extremeValue(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Type type, bool lowest, bool isUnsigned = false);

/// Whether a value's (or a type's) elements are unsigned integers: they
/// lower to signless integers, and the ops whose meaning depends on the sign
/// pick their unsigned forms from the original type. Booleans (i1) count as
/// unsigned: true is 1 and orders above false (as signed, i1 true is -1).
bool isUnsigned(mlir::Type type);
inline bool isUnsigned(mlir::Value value) {
  return isUnsigned(value.getType());
}

/// `x` converted to the float or signless integer type `to` as loom.cast
/// does: floats to integers truncate, non-zero becomes true. The flags say
/// whether the integers on either side are unsigned.
mlir::Value castScalar(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                       mlir::Type to, bool fromUnsigned = false,
                       bool toUnsigned = false);

/// `value` padded with `padValue` by static amounts before and after each
/// dimension.
mlir::Value padStatic(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value,
                      llvm::ArrayRef<int64_t> low, llvm::ArrayRef<int64_t> high,
                      mlir::Value padValue);

/// Element `position` of a 1-D tensor (or the scalar of a one-element
/// tensor), read at run time.
mlir::Value scalarOf(mlir::OpBuilder &b, mlir::Location loc, mlir::Value tensor,
                     int64_t position = 0);

/// A tensor of `type` filled with `value`; its dynamic dimensions of the
/// sizes `dynamicSizes`.
mlir::Value filledTensor(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::RankedTensorType type, mlir::Value value,
                         mlir::ValueRange dynamicSizes = {});

/// A tensor of `type` filled with zeros; its dynamic dimensions of the
/// sizes `dynamicSizes`.
mlir::Value zeroFilled(mlir::OpBuilder &b, mlir::Location loc,
                       mlir::RankedTensorType type,
                       mlir::ValueRange dynamicSizes = {});

/// `value`, or zeros of its type (its dynamic dimensions of the sizes
/// `dynamicSizes`) where `failed` holds: after a size check that failed at
/// run time, the code goes on with operands of the sizes it was told, so
/// that no read reaches past the real ones.
mlir::Value zerosWhere(mlir::OpBuilder &b, mlir::Location loc,
                       mlir::Value failed, mlir::Value value,
                       mlir::ValueRange dynamicSizes);

/// acc + cast(x) * cast(y) in the accumulator's type.
mlir::Value multiplyAccumulate(mlir::OpBuilder &b, mlir::Location loc,
                               mlir::Value x, mlir::Value y, mlir::Value acc);

/// Dimension `d` of a ranked tensor as an index value: a constant when
/// static, a tensor.dim when known only at run time (tensor::getMixedSize,
/// materialized).
inline mlir::Value indexDim(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value tensor, int64_t d) {
  return mlir::getValueOrCreateConstantIndexOp(
      b, loc, mlir::tensor::getMixedSize(b, loc, tensor, d));
}

/// The sizes of `type`'s dynamic dimensions (in order) taken from
/// `sources`, right-aligned numpy-style: the first source whose dimension
/// there is dynamic gives it, unchecked; none dynamic, their broadcast
/// static size.
llvm::SmallVector<mlir::Value> sizesFrom(mlir::OpBuilder &b, mlir::Location loc,
                                         mlir::RankedTensorType type,
                                         mlir::ValueRange sources);

/// The indexing map of an operand of shape `operand` broadcast
/// numpy-style (right-aligned, size-1 dimensions stretched) to `result`.
mlir::AffineMap broadcastMap(mlir::MLIRContext *ctx,
                             llvm::ArrayRef<int64_t> operand,
                             llvm::ArrayRef<int64_t> result);

/// A linalg.generic over the iteration space of `resultType` whose inputs
/// broadcast numpy-style and whose scalar is `body(inputs)`; a dynamic
/// result dimension has its size in `dynamicSizes` (see
/// alignRunTimeSizes), or when none are given, the inputs' (sizesFrom).
mlir::Value buildElementwise(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::RankedTensorType resultType,
                             mlir::ValueRange inputs, ScalarBody body,
                             mlir::ValueRange dynamicSizes = {});

/// `input` broadcast at run time: each dimension of `dims` (input
/// dimensions known only at run time) whose size is 1 is stretched to the
/// size in `targets` (index values, one per entry of `dims`). The result
/// has the input's type; the caller only calls this when some such
/// dimension must stretch.
mlir::Value broadcastCopy(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value input, llvm::ArrayRef<int64_t> dims,
                          llvm::ArrayRef<mlir::Value> targets);

/// Run-time sizes of an elementwise `op` (operands `inputs`, result
/// `resultType`): an input dimension known only at run time whose result
/// dimension is static is checked against it (checkedCast), and each
/// dynamic result dimension takes its size from the first input whose
/// dimension there is dynamic, the others checked against it. Inputs are
/// updated in place; returns the result's dynamic sizes.
llvm::SmallVector<mlir::Value>
alignRunTimeSizes(mlir::OpBuilder &b, mlir::Location loc, mlir::Operation *op,
                  mlir::RankedTensorType resultType,
                  llvm::SmallVectorImpl<mlir::Value> &inputs);

/// A reduction of `input` over the sorted `axes` with dimensions of size 1
/// kept (`keepdims`) or dropped: the accumulator starts at `init` and
/// `combine(b, loc, {element, accumulator})` updates it.
mlir::Value buildReduction(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value input, llvm::ArrayRef<int64_t> axes,
                           bool keepdims, mlir::Value init, ScalarBody combine);

/// The sum of `input` over `axes` divided by the number of elements summed.
mlir::Value buildMean(mlir::OpBuilder &b, mlir::Location loc, mlir::Value input,
                      llvm::ArrayRef<int64_t> axes, bool keepdims);

/// Whether the element at position `right` must come before the one at
/// position `left` (strictly: equal elements keep their order).
using RightFirst = llvm::function_ref<mlir::Value(
    mlir::OpBuilder &, mlir::Location, mlir::Value left, mlir::Value right)>;

/// The positions 0 .. n-1 (a tensor<?xi64>) in the order of a stable
/// sort by `rightFirst`: a bottom-up merge sort of the positions, O(n log n)
/// comparisons, as scf loops on tensors.
mlir::Value buildStableOrder(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::Value n, RightFirst rightFirst);

/// Softmax (or log-softmax) of `input` along `axis`. With `zeroEmptyRows`
/// (softmax only), a row that is -inf everywhere (attention's fully masked
/// rows) gives zeros instead of 0 / 0.
mlir::Value buildSoftmax(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value input, int64_t axis, bool logarithm,
                         bool zeroEmptyRows = false);

/// `value` reshaped to `type` (same number of elements) through
/// collapse_shape/expand_shape views. With sizes known only at run time,
/// the dynamic dimensions must correspond in order (squeeze, unsqueeze).
mlir::Value reshapeTo(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value,
                      mlir::RankedTensorType type);

/// `lhs` [..., M, K] times the matrix `rhs` [K, N] into `type` [..., M, N]:
/// one linalg.matmul on the flattened rows, accumulated in `type`'s element
/// type.
mlir::Value buildMatrixProduct(mlir::OpBuilder &b, mlir::Location loc,
                               mlir::Value lhs, mlir::Value rhs,
                               mlir::RankedTensorType type);

/// The convolution of the (already padded) `input` [N, C, I...] with
/// `weight` [M, C/group, K...] into `type` [N, M, O...], accumulated in
/// `type`'s element type: linalg.conv_2d_nchw_fchw when 2-D and ungrouped,
/// a generic with window dimensions otherwise.
mlir::Value buildConvolution(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::Value input, mlir::Value weight,
                             mlir::RankedTensorType type,
                             llvm::ArrayRef<int64_t> strides,
                             llvm::ArrayRef<int64_t> dilations, int64_t group);

/// Whether `type` is one of the 8- and 4-bit floats (f8E4M3FN, f8E4M3FNUZ,
/// f8E5M2, f8E5M2FNUZ, f4E2M1FN, f8E8M0FNU). LLVM has none of them: their
/// tensors lower to their bits, a byte each.
bool isNarrowFloat(mlir::Type type);

/// The value of the `type` number whose bits are `bits` (an integer of the
/// type's width, or a scalar of `type`), exactly, as a `to` float.
mlir::Value decodeNarrowFloat(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::Value bits, mlir::FloatType type,
                              mlir::FloatType to);

/// The bits (an integer of the type's width) of the `type` number nearest
/// to the f16, bf16, f32 or f64 `x` (ties to even). Beyond the range
/// (infinities included): with `saturate`, the largest finite value;
/// without, infinity (f8E5M2) or NaN. f4E2M1FN, which has neither, always
/// saturates and takes NaN to -0. f8E8M0FNU follows ONNX's Cast-24 rule
/// with `roundMode` (see loom.cast).
mlir::Value encodeNarrowFloat(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::Value x, mlir::FloatType type,
                              bool saturate, llvm::StringRef roundMode = "up");

/// A base for the lowering patterns: the converted type of the op's first
/// result, or null when it or an operand type has no conversion.
template <typename OpTy>
class LoomLowering : public mlir::OpConversionPattern<OpTy> {
public:
  using mlir::OpConversionPattern<OpTy>::OpConversionPattern;

protected:
  /// The converted type of `value`, or null.
  mlir::RankedTensorType convertedType(mlir::Value value) const {
    return llvm::dyn_cast_or_null<mlir::RankedTensorType>(
        this->getTypeConverter()->convertType(value.getType()));
  }

  mlir::RankedTensorType resultType(OpTy op) const {
    for (mlir::Type t : op->getOperandTypes())
      if (!this->getTypeConverter()->convertType(t))
        return nullptr;
    return llvm::dyn_cast_or_null<mlir::RankedTensorType>(
        this->getTypeConverter()->convertType(op->getResult(0).getType()));
  }
};

/// A LoomLowering of ops whose result (and operand) types convert: the
/// pattern fails to match ("unsupported types") when resultType(op) is
/// null, and lower() rewrites the op given that type.
template <typename OpTy> class ResultTypedLowering : public LoomLowering<OpTy> {
public:
  using LoomLowering<OpTy>::LoomLowering;
  using OpAdaptor = typename OpTy::Adaptor;

  mlir::LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  mlir::ConversionPatternRewriter &rewriter) const final {
    mlir::RankedTensorType type = this->resultType(op);
    if (!type)
      return rewriter.notifyMatchFailure(op, "unsupported types");
    return lower(op, adaptor, type, rewriter);
  }

protected:
  virtual mlir::LogicalResult
  lower(OpTy op, OpAdaptor adaptor, mlir::RankedTensorType type,
        mlir::ConversionPatternRewriter &rewriter) const = 0;
};

/// The float, signed or unsigned form of a binary arith op.
template <typename FloatOp, typename SignedOp, typename UnsignedOp>
mlir::Value floatSignedOrUnsigned(mlir::OpBuilder &b, mlir::Location loc,
                                  bool isUnsigned, mlir::Value x,
                                  mlir::Value y) {
  if (llvm::isa<mlir::FloatType>(x.getType()))
    return FloatOp::create(b, loc, x, y);
  if (isUnsigned)
    return UnsignedOp::create(b, loc, x, y);
  return SignedOp::create(b, loc, x, y);
}

template <typename FloatOp, typename IntOp>
mlir::Value floatOrInt(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                       mlir::Value y) {
  if (llvm::isa<mlir::FloatType>(x.getType()))
    return FloatOp::create(b, loc, x, y);
  return IntOp::create(b, loc, x, y);
}

/// Scalar float arithmetic for op bodies, the builder's insertion point
/// moving with it: f.add(x, y), f.select(cond, x, y), f.lt(x, y) (ordered).
class FloatArith {
public:
  FloatArith(mlir::OpBuilder &b, mlir::Location loc) : b(b), loc(loc) {}
  mlir::Value add(mlir::Value x, mlir::Value y) const {
    return mlir::arith::AddFOp::create(b, loc, x, y);
  }
  mlir::Value sub(mlir::Value x, mlir::Value y) const {
    return mlir::arith::SubFOp::create(b, loc, x, y);
  }
  mlir::Value mul(mlir::Value x, mlir::Value y) const {
    return mlir::arith::MulFOp::create(b, loc, x, y);
  }
  mlir::Value div(mlir::Value x, mlir::Value y) const {
    return mlir::arith::DivFOp::create(b, loc, x, y);
  }
  mlir::Value lt(mlir::Value x, mlir::Value y) const {
    return mlir::arith::CmpFOp::create(b, loc, mlir::arith::CmpFPredicate::OLT,
                                       x, y);
  }
  mlir::Value select(mlir::Value cond, mlir::Value x, mlir::Value y) const {
    return mlir::arith::SelectOp::create(b, loc, cond, x, y);
  }

private:
  mlir::OpBuilder &b;
  mlir::Location loc;
};

/// What the runtime reports for `op`: "node 'NAME' (loom.gather)", or
/// just the op's name when its location names no node.
std::string siteDescription(mlir::Operation *op);

/// Before `op` reads data at run-time `indices`: the code finds the first
/// index outside [-size, size) ([0, size) unless `fromEnd`; `sizes` holds
/// one size, or one per position of the indices' last dimension) and
/// reports it through the runtime (loom_rt_index_error, loom/abi/checks.h).
/// A size known only at run time is ShapedType::kDynamic in `sizes`, its
/// value (an index) the next of `runTimeSizes`. The op must still clamp
/// its indices: the code goes on after the report.
void checkIndices(mlir::OpBuilder &rewriter, mlir::Location loc,
                  mlir::Operation *op, mlir::Value indices,
                  llvm::ArrayRef<int64_t> sizes, bool fromEnd = true,
                  mlir::ValueRange runTimeSizes = {});

/// `value` as `to`, a type with the same rank and element type whose
/// static sizes the value must have: each dimension `to` states and the
/// value only knows at run time is compared there, a mismatch reported
/// (loom_rt_shape_error) and replaced by zeros of the stated shape. The
/// report names `site`, or `op` (siteDescription) when it is empty.
mlir::Value checkedCast(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Operation *op, mlir::Value value,
                        mlir::RankedTensorType to, llvm::StringRef site = {});

/// The dynamic sizes of `type` [N, C, spatial...] when only the batch N is
/// known only at run time (it is `input`'s); failure when another
/// dimension is (convolution and pooling windows need static extents).
mlir::FailureOr<llvm::SmallVector<mlir::Value>>
batchSizes(mlir::OpBuilder &b, mlir::Location loc, mlir::RankedTensorType type,
           mlir::Value input);

/// A tensor of shape [n, 1, ..., 1] (`trailing` ones) viewing a [n] vector,
/// so that per-channel parameters broadcast over NC... tensors.
mlir::Value channelVector(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value vector, int64_t trailing);

/// Input index expressions o*stride + k*dilation of a sliding window.
mlir::AffineExpr windowExpr(mlir::MLIRContext *ctx, int64_t outDim,
                            int64_t kernelDim, int64_t stride,
                            int64_t dilation);

/// The shorthands the lowerings' builder callbacks are written with.
using B = mlir::OpBuilder;
using L = mlir::Location;
using V = mlir::ValueRange;

} // namespace loom::lowering

#endif // LOOM_LIB_CONVERSION_LOOMTOLINALG_UTILS_H
