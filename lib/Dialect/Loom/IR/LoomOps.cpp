//===- LoomOps.cpp - Verifiers and type inference of loom ops -------------===//

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/StringSwitch.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace loom;

namespace {

RankedTensorType tensorTypeOf(Value value) {
  return cast<RankedTensorType>(value.getType());
}

/// Static element count of a 1-D tensor, or nullopt when dynamic.
std::optional<int64_t> staticLength(Value value) {
  auto type = tensorTypeOf(value);
  if (type.getRank() != 1 || type.isDynamicDim(0))
    return std::nullopt;
  return type.getDimSize(0);
}

bool isDynamicOr(int64_t dim, int64_t expected) {
  return ShapedType::isDynamic(dim) || ShapedType::isDynamic(expected) ||
         dim == expected;
}

LogicalResult verifyOneOf(Operation *op, StringRef name, StringRef value,
                          ArrayRef<StringRef> allowed) {
  if (llvm::is_contained(allowed, value))
    return success();
  InFlightDiagnostic diag = op->emitOpError() << name << " must be one of ";
  llvm::interleaveComma(allowed, diag,
                        [&](StringRef s) { diag << '"' << s << '"'; });
  return diag << ", got \"" << value << '"';
}

LogicalResult verifySameElementType(Operation *op, Value a, Value b,
                                    StringRef what) {
  if (getElementTypeOrSelf(a.getType()) != getElementTypeOrSelf(b.getType()))
    return op->emitOpError(what) << " must have the element type of the input";
  return success();
}

/// Where a shape rule reports a violation. Each rule that gives an op's
/// result types also checks the operands and attributes it reads, and runs
/// twice: in the op's verifier, which passes the op so that messages name
/// it, and in type inference, which passes its optional location (none when
/// a caller only probes).
class ShapeError {
public:
  explicit ShapeError(Operation *op) : op(op) {}
  explicit ShapeError(std::optional<Location> loc) : loc(loc) {}

  template <typename... Args> LogicalResult operator()(Args &&...args) const {
    if (!op)
      return emitOptionalError(loc, std::forward<Args>(args)...);
    InFlightDiagnostic diag = op->emitOpError();
    (diag << ... << std::forward<Args>(args));
    return diag;
  }

private:
  Operation *op = nullptr;
  std::optional<Location> loc;
};

/// Runs the result-type rule of `op` for its verifier. The verifier of
/// InferTypeOpInterface runs after this one and compares the types the rule
/// gives with the stated ones, so this only reports bad operands and
/// attributes, under the op's name.
template <typename OpT, typename Rule>
LogicalResult verifyResultRule(OpT op, Rule rule) {
  SmallVector<Type> types;
  return rule(op, ShapeError(op.getOperation()), types);
}

/// The static one of two sizes that must agree, or dynamic if neither is.
int64_t mergeDims(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) ? b : a;
}

/// Checks the windowed-op attributes shared by conv, conv_transpose and
/// pooling for an input of `rank` (N, C, spatial...).
LogicalResult checkWindowAttrs(const ShapeError &error, int64_t rank,
                               ArrayRef<int64_t> strides,
                               ArrayRef<int64_t> pads,
                               ArrayRef<int64_t> dilations) {
  if (rank < 3)
    return error("expects an input of rank >= 3 (N, C, spatial...)");
  size_t spatial = rank - 2;
  if (strides.size() != spatial || dilations.size() != spatial)
    return error("expects ", spatial,
                 " strides and dilations, one per spatial axis");
  if (pads.size() != 2 * spatial)
    return error("expects ", 2 * spatial, " pads (begin pads, then end pads)");
  if (llvm::any_of(strides, [](int64_t s) { return s <= 0; }) ||
      llvm::any_of(dilations, [](int64_t d) { return d <= 0; }))
    return error("strides and dilations must be positive");
  if (llvm::any_of(pads, [](int64_t p) { return p < 0; }))
    return error("pads must be non-negative");
  return success();
}

/// Size of spatial axis `axis` of a conv or pool result: how many windows of
/// `kernel` elements dilated by `dilation` fit in the padded input at
/// `stride` apart, as ONNX computes it. With `ceilMode` a last, partial
/// window counts too, unless it would start in the end padding: ONNX (like
/// PyTorch) drops that one, since it would see no input element. Dynamic
/// when the input or the kernel size is.
FailureOr<int64_t> windowOutputSize(const ShapeError &error, size_t axis,
                                    int64_t in, int64_t kernel, int64_t stride,
                                    int64_t padBegin, int64_t padEnd,
                                    int64_t dilation, bool ceilMode) {
  if (ShapedType::isDynamic(in) || ShapedType::isDynamic(kernel))
    return ShapedType::kDynamic;
  int64_t padded = in + padBegin + padEnd;
  int64_t window = (kernel - 1) * dilation + 1;
  if (padded < window)
    return error("spatial axis ", axis, " holds ", padded,
                 " elements with pads, fewer than the window of ", window);
  int64_t steps = padded - window;
  int64_t size =
      (ceilMode ? (steps + stride - 1) / stride : steps / stride) + 1;
  if (ceilMode && (size - 1) * stride >= in + padBegin)
    --size;
  return size;
}

} // namespace

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

LogicalResult GeluOp::verify() {
  return verifyOneOf(*this, "approximate", getApproximate(), {"none", "tanh"});
}

LogicalResult WhereOp::inferReturnTypes(MLIRContext *ctx,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  auto c = cast<RankedTensorType>(adaptor.getCondition().getType());
  auto t = cast<RankedTensorType>(adaptor.getOnTrue().getType());
  auto f = cast<RankedTensorType>(adaptor.getOnFalse().getType());
  auto tf = broadcastShapes(t.getShape(), f.getShape());
  if (failed(tf))
    return emitOptionalError(loc, "operand shapes do not broadcast");
  auto all = broadcastShapes(c.getShape(), *tf);
  if (failed(all))
    return emitOptionalError(loc, "condition does not broadcast");
  types.push_back(RankedTensorType::get(*all, t.getElementType()));
  return success();
}

bool WhereOp::isCompatibleReturnTypes(TypeRange l, TypeRange r) {
  return areRefinedTypesCompatible(l, r);
}

LogicalResult WhereOp::verify() {
  return verifySameElementType(*this, getOnTrue(), getOnFalse(), "on_false");
}

/// Bits per element in memory as loom.bitcast counts them: a boolean is a
/// byte.
static unsigned storedBits(Type element) {
  unsigned width = element.getIntOrFloatBitWidth();
  return width == 1 ? 8 : width;
}

LogicalResult BitcastOp::verify() {
  Type from = getElementTypeOrSelf(getInput().getType());
  Type to = getElementTypeOrSelf(getType());
  if (!from.isIntOrFloat() || !to.isIntOrFloat() ||
      storedBits(from) != storedBits(to))
    return emitOpError("needs element types of one width, got ")
           << from << " and " << to;
  return success();
}

//===----------------------------------------------------------------------===//
// Contractions and convolutions
//===----------------------------------------------------------------------===//

LogicalResult MatMulOp::inferReturnTypes(MLIRContext *ctx,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  auto a = cast<RankedTensorType>(adaptor.getLhs().getType());
  auto b = cast<RankedTensorType>(adaptor.getRhs().getType());
  if (a.getRank() == 0 || b.getRank() == 0)
    return emitOptionalError(loc, "matmul operands must have rank >= 1");
  // numpy promotion of 1-D operands.
  SmallVector<int64_t> as(a.getShape()), bs(b.getShape());
  bool vecA = as.size() == 1, vecB = bs.size() == 1;
  if (vecA)
    as.insert(as.begin(), 1);
  if (vecB)
    bs.push_back(1);
  int64_t k1 = as.back(), k2 = bs[bs.size() - 2];
  if (!isDynamicOr(k1, k2))
    return emitOptionalError(loc, "contracting dimensions differ: ", k1, " vs ",
                             k2);
  auto batch = broadcastShapes(ArrayRef<int64_t>(as).drop_back(2),
                               ArrayRef<int64_t>(bs).drop_back(2));
  if (failed(batch))
    return emitOptionalError(loc, "batch dimensions do not broadcast");
  SmallVector<int64_t> shape(*batch);
  if (!vecA)
    shape.push_back(as[as.size() - 2]);
  if (!vecB)
    shape.push_back(bs.back());
  types.push_back(RankedTensorType::get(shape, a.getElementType()));
  return success();
}

bool MatMulOp::isCompatibleReturnTypes(TypeRange l, TypeRange r) {
  return areRefinedTypesCompatible(l, r);
}

LogicalResult MatMulOp::verify() {
  return verifySameElementType(*this, getLhs(), getRhs(), "rhs");
}

/// Result type of loom.conv, checking the operands and attributes it reads.
/// Quantized convolutions pass `quantized`: their operands may differ in
/// element type (ui8 activations, i8 weights) and their result is f32.
template <typename ConvLike>
static LogicalResult inferConvResult(ConvLike op, const ShapeError &error,
                                     SmallVectorImpl<Type> &types,
                                     bool quantized = false) {
  auto in = tensorTypeOf(op.getInput()), w = tensorTypeOf(op.getWeight());
  if (failed(checkWindowAttrs(error, in.getRank(), op.getStrides(),
                              op.getPads(), op.getDilations())))
    return failure();
  if (w.getRank() != in.getRank())
    return error("input and weight must have the same rank");
  if (!quantized && w.getElementType() != in.getElementType())
    return error("weight must have the element type of the input");
  // Read signed: the I64Attr getter is unsigned.
  int64_t group = op.getGroup();
  if (group <= 0)
    return error("group must be positive");
  int64_t c = in.getDimSize(1), m = w.getDimSize(0),
          cPerGroup = w.getDimSize(1);
  if (!ShapedType::isDynamic(c) && !ShapedType::isDynamic(cPerGroup) &&
      c != cPerGroup * group)
    return error("input has ", c, " channels but weight expects ", cPerGroup,
                 " x ", group, " groups");
  if (!ShapedType::isDynamic(m) && m % group != 0)
    return error("output channels ", m, " are not divisible by group ", group);
  if (Value bias = op.getBias()) {
    auto b = tensorTypeOf(bias);
    if (b.getRank() != 1 || !isDynamicOr(b.getDimSize(0), m))
      return error("bias must be 1-D with one value per output channel");
  }
  SmallVector<int64_t> shape{in.getDimSize(0), m};
  size_t spatial = in.getRank() - 2;
  for (size_t i = 0; i < spatial; ++i) {
    FailureOr<int64_t> size = windowOutputSize(
        error, i, in.getDimSize(2 + i), w.getDimSize(2 + i), op.getStrides()[i],
        op.getPads()[i], op.getPads()[spatial + i], op.getDilations()[i],
        /*ceilMode=*/false);
    if (failed(size))
      return failure();
    shape.push_back(*size);
  }
  Type element =
      quantized ? Float32Type::get(in.getContext()) : in.getElementType();
  types.push_back(RankedTensorType::get(shape, element));
  return success();
}

LogicalResult ConvOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  return inferConvResult(adaptor, ShapeError(loc), types);
}

bool ConvOp::isCompatibleReturnTypes(TypeRange l, TypeRange r) {
  return areRefinedTypesCompatible(l, r);
}

LogicalResult ConvOp::verify() {
  SmallVector<Type> types;
  return inferConvResult(*this, ShapeError(getOperation()), types);
}

/// Result type of loom.conv_transpose, checking the operands and attributes
/// it reads.
template <typename ConvLike>
static LogicalResult inferConvTransposeResult(ConvLike op,
                                              const ShapeError &error,
                                              SmallVectorImpl<Type> &types) {
  auto in = tensorTypeOf(op.getInput()), w = tensorTypeOf(op.getWeight());
  if (failed(checkWindowAttrs(error, in.getRank(), op.getStrides(),
                              op.getPads(), op.getDilations())))
    return failure();
  if (w.getRank() != in.getRank())
    return error("input and weight must have the same rank");
  if (w.getElementType() != in.getElementType())
    return error("weight must have the element type of the input");
  if (op.getOutputPadding().size() != op.getStrides().size())
    return error("expects one output_padding per spatial axis");
  int64_t group = op.getGroup();
  if (group <= 0)
    return error("group must be positive");
  if (!isDynamicOr(in.getDimSize(1), w.getDimSize(0)))
    return error("input channels must equal weight dimension 0");
  int64_t m = ShapedType::isDynamic(w.getDimSize(1)) ? ShapedType::kDynamic
                                                     : w.getDimSize(1) * group;
  SmallVector<int64_t> shape{in.getDimSize(0), m};
  size_t spatial = in.getRank() - 2;
  for (size_t i = 0; i < spatial; ++i) {
    int64_t x = in.getDimSize(2 + i), k = w.getDimSize(2 + i);
    if (ShapedType::isDynamic(x) || ShapedType::isDynamic(k)) {
      shape.push_back(ShapedType::kDynamic);
      continue;
    }
    int64_t size = op.getStrides()[i] * (x - 1) + op.getOutputPadding()[i] +
                   (k - 1) * op.getDilations()[i] + 1 - op.getPads()[i] -
                   op.getPads()[spatial + i];
    if (size < 0)
      return error("pads crop spatial axis ", i, " to a negative size");
    shape.push_back(size);
  }
  types.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

LogicalResult ConvTransposeOp::inferReturnTypes(MLIRContext *,
                                                std::optional<Location> loc,
                                                Adaptor adaptor,
                                                SmallVectorImpl<Type> &types) {
  return inferConvTransposeResult(adaptor, ShapeError(loc), types);
}

bool ConvTransposeOp::isCompatibleReturnTypes(TypeRange l, TypeRange r) {
  return areRefinedTypesCompatible(l, r);
}

LogicalResult ConvTransposeOp::verify() {
  return verifyResultRule(*this, inferConvTransposeResult<ConvTransposeOp>);
}

/// Result type of a pooling op (the pooled values), checking the operands
/// and attributes it reads.
template <typename PoolLike>
static LogicalResult inferPoolResult(PoolLike op, const ShapeError &error,
                                     SmallVectorImpl<Type> &types) {
  auto in = tensorTypeOf(op.getInput());
  if (failed(checkWindowAttrs(error, in.getRank(), op.getStrides(),
                              op.getPads(), op.getDilations())))
    return failure();
  ArrayRef<int64_t> kernel = op.getKernelShape();
  if (kernel.size() != op.getStrides().size())
    return error("expects one kernel size per spatial axis");
  if (llvm::any_of(kernel, [](int64_t k) { return k <= 0; }))
    return error("kernel sizes must be positive");
  SmallVector<int64_t> shape{in.getDimSize(0), in.getDimSize(1)};
  size_t spatial = in.getRank() - 2;
  for (size_t i = 0; i < spatial; ++i) {
    FailureOr<int64_t> size = windowOutputSize(
        error, i, in.getDimSize(2 + i), kernel[i], op.getStrides()[i],
        op.getPads()[i], op.getPads()[spatial + i], op.getDilations()[i],
        op.getCeilMode());
    if (failed(size))
      return failure();
    shape.push_back(*size);
  }
  types.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

LogicalResult MaxPoolOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  return inferPoolResult(adaptor, ShapeError(loc), types);
}

bool MaxPoolOp::isCompatibleReturnTypes(TypeRange l, TypeRange r) {
  return areRefinedTypesCompatible(l, r);
}

LogicalResult MaxPoolOp::verify() {
  return verifyResultRule(*this, inferPoolResult<MaxPoolOp>);
}

LogicalResult AvgPoolOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  return inferPoolResult(adaptor, ShapeError(loc), types);
}

bool AvgPoolOp::isCompatibleReturnTypes(TypeRange l, TypeRange r) {
  return areRefinedTypesCompatible(l, r);
}

LogicalResult AvgPoolOp::verify() {
  return verifyResultRule(*this, inferPoolResult<AvgPoolOp>);
}

/// Result types of loom.max_pool_with_indices: the pooled values and i64
/// indices of one shape.
template <typename PoolLike>
static LogicalResult inferPoolWithIndicesResults(PoolLike op,
                                                 const ShapeError &error,
                                                 SmallVectorImpl<Type> &types) {
  if (failed(inferPoolResult(op, error, types)))
    return failure();
  auto values = cast<RankedTensorType>(types.back());
  types.push_back(values.clone(IntegerType::get(values.getContext(), 64)));
  // Read signed: the I64Attr getter is unsigned.
  int64_t order = op.getStorageOrder();
  if (order != 0 && order != 1)
    return error("storage_order must be 0 (row-major) or 1 (column-major), "
                 "got ",
                 order);
  return success();
}

LogicalResult MaxPoolWithIndicesOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  return inferPoolWithIndicesResults(adaptor, ShapeError(loc), types);
}

bool MaxPoolWithIndicesOp::isCompatibleReturnTypes(TypeRange l, TypeRange r) {
  return areRefinedTypesCompatible(l, r);
}

LogicalResult MaxPoolWithIndicesOp::verify() {
  return verifyResultRule(*this,
                          inferPoolWithIndicesResults<MaxPoolWithIndicesOp>);
}

//===----------------------------------------------------------------------===//
// Normalizations, softmax, attention
//===----------------------------------------------------------------------===//

/// Per-channel parameters: 1-D with C elements.
static LogicalResult verifyChannelParams(Operation *op, Value input,
                                         ValueRange params) {
  auto in = tensorTypeOf(input);
  if (in.getRank() < 2)
    return op->emitOpError("expects an input of rank >= 2 (N, C, ...)");
  for (Value p : params) {
    auto t = tensorTypeOf(p);
    if (t.getRank() != 1 || !isDynamicOr(t.getDimSize(0), in.getDimSize(1)))
      return op->emitOpError("per-channel parameters must be 1-D with ")
             << in.getDimSize(1) << " elements, got " << t;
  }
  return success();
}

LogicalResult BatchNormOp::verify() {
  return verifyChannelParams(*this, getInput(),
                             {getScale(), getBias(), getMean(), getVariance()});
}

LogicalResult InstanceNormOp::verify() {
  if (tensorTypeOf(getInput()).getRank() < 3)
    return emitOpError("expects an input of rank >= 3 (N, C, spatial...)");
  return verifyChannelParams(*this, getInput(), {getScale(), getBias()});
}

/// Scale/bias of a norm over axes [axis, rank) must broadcast to those axes.
static LogicalResult verifyNormParams(Operation *op, Value input, int64_t axis,
                                      ValueRange params) {
  auto in = tensorTypeOf(input);
  std::optional<int64_t> a = normalizeAxis(axis, in.getRank());
  if (!a)
    return op->emitOpError("axis ")
           << axis << " is out of range for rank " << in.getRank();
  ArrayRef<int64_t> normalized = in.getShape().drop_front(*a);
  for (Value p : params) {
    auto t = tensorTypeOf(p);
    auto b = broadcastShapes(normalized, t.getShape());
    if (failed(b) || b->size() != normalized.size() ||
        !areShapesCompatible(*b, normalized))
      return op->emitOpError("parameter of type ")
             << t << " does not broadcast to the normalized shape";
  }
  return success();
}

LogicalResult LayerNormOp::verify() {
  SmallVector<Value> params{getScale()};
  if (getBias())
    params.push_back(getBias());
  return verifyNormParams(*this, getInput(), getAxis(), params);
}

LogicalResult RMSNormOp::verify() {
  return verifyNormParams(*this, getInput(), getAxis(), {getScale()});
}

/// Result type of loom.attention, `[B, H, S, Dv]`, checking the operands it
/// reads.
template <typename AttentionLike>
static LogicalResult inferAttentionResult(AttentionLike op,
                                          const ShapeError &error,
                                          SmallVectorImpl<Type> &types) {
  auto q = tensorTypeOf(op.getQuery()), k = tensorTypeOf(op.getKey()),
       v = tensorTypeOf(op.getValue());
  if (q.getRank() != 4 || k.getRank() != 4 || v.getRank() != 4)
    return error("query, key and value must be [B, H, S, D]");
  int64_t h = q.getDimSize(1), hkv = k.getDimSize(1);
  if (!ShapedType::isDynamic(h) && !ShapedType::isDynamic(hkv) &&
      (hkv == 0 || h % hkv != 0))
    return error("query heads (", h,
                 ") must be a multiple of key/value heads (", hkv, ")");
  if (!isDynamicOr(k.getDimSize(1), v.getDimSize(1)) ||
      !isDynamicOr(k.getDimSize(2), v.getDimSize(2)))
    return error("key and value must have the same heads and length");
  if (!isDynamicOr(q.getDimSize(3), k.getDimSize(3)))
    return error("query and key head sizes differ");
  if (Value mask = op.getMask()) {
    auto m = tensorTypeOf(mask);
    SmallVector<int64_t> scores{q.getDimSize(0), h, q.getDimSize(2),
                                k.getDimSize(2)};
    auto b = broadcastShapes(scores, m.getShape());
    if (failed(b) || !areShapesCompatible(*b, scores))
      return error("mask of type ", m, " does not broadcast to [B, H, S, T]");
  }
  types.push_back(RankedTensorType::get(
      {q.getDimSize(0), h, q.getDimSize(2), v.getDimSize(3)},
      q.getElementType()));
  return success();
}

LogicalResult AttentionOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  return inferAttentionResult(adaptor, ShapeError(loc), types);
}

bool AttentionOp::isCompatibleReturnTypes(TypeRange l, TypeRange r) {
  return areRefinedTypesCompatible(l, r);
}

LogicalResult AttentionOp::verify() {
  if (leftWindowSize() < -1 || rightWindowSize() < -1)
    return emitOpError("windows must be >= 0, or -1 for none");
  return verifyResultRule(*this, inferAttentionResult<AttentionOp>);
}

LogicalResult RotaryEmbeddingOp::verify() {
  auto x = tensorTypeOf(getInput());
  if (x.getRank() < 2)
    return emitOpError("expects an input of rank >= 2 ([..., S, D])");
  int64_t d = x.getShape().back();
  if (!ShapedType::isDynamic(d) && d % 2 != 0)
    return emitOpError("the feature size must be even");
  for (Value table : {getCos(), getSin()}) {
    auto t = tensorTypeOf(table);
    if (t.getRank() < 2)
      return emitOpError("cos and sin tables must be [..., S, D/2]");
    int64_t half = ShapedType::isDynamic(d) ? d : d / 2;
    if (!isDynamicOr(t.getShape().back(), half))
      return emitOpError("cos and sin tables must have D/2 = ")
             << half << " columns";
  }
  return success();
}

LogicalResult MoEOp::verify() {
  auto x = tensorTypeOf(getInput()), scores = tensorTypeOf(getScores());
  auto wIn = tensorTypeOf(getWIn()), wOut = tensorTypeOf(getWOut());
  if (x.getRank() != 2 || scores.getRank() != 2)
    return emitOpError("expects input [T, D] and scores [T, E], got ")
           << x << " and " << scores;
  if (wIn.getRank() != 3 || wOut.getRank() != 3)
    return emitOpError("expects expert weights w_in [E, D, H] and w_out "
                       "[E, H, D], got ")
           << wIn << " and " << wOut;
  if (x.getElementType() != wIn.getElementType() ||
      x.getElementType() != wOut.getElementType())
    return emitOpError("expects input and expert weights of one element type");
  // Each size must agree wherever it appears (dynamic sizes agree with all).
  auto same = [](ArrayRef<int64_t> sizes) {
    std::optional<int64_t> known;
    for (int64_t size : sizes) {
      if (ShapedType::isDynamic(size))
        continue;
      if (known && *known != size)
        return false;
      known = size;
    }
    return true;
  };
  if (!same({x.getDimSize(0), scores.getDimSize(0)}))
    return emitOpError("input and scores disagree on the number of tokens");
  if (!same({scores.getDimSize(1), wIn.getDimSize(0), wOut.getDimSize(0)}))
    return emitOpError("scores, w_in and w_out disagree on the number of "
                       "experts");
  if (!same({x.getDimSize(1), wIn.getDimSize(1), wOut.getDimSize(2)}))
    return emitOpError("input, w_in and w_out disagree on the model "
                       "dimension");
  if (!same({wIn.getDimSize(2), wOut.getDimSize(1)}))
    return emitOpError("w_in and w_out disagree on the hidden dimension");
  if (Value gate = getWGate(); gate && tensorTypeOf(gate) != wIn)
    return emitOpError("expects w_gate of the type of w_in (")
           << wIn << "), got " << gate.getType();
  int64_t experts = getNumExperts();
  int64_t k = getKAttr().getInt();
  if (k < 1 || (!ShapedType::isDynamic(experts) && k > experts))
    return emitOpError("k must be in [1, experts], got ") << k;
  if (!llvm::is_contained({"relu", "gelu", "silu", "none"}, getActivation()))
    return emitOpError("unknown activation '")
           << getActivation() << "'; expected relu, gelu, silu or none";
  if (FloatAttr factor = getCapacityFactorAttr();
      factor && !(factor.getValueAsDouble() > 0.0))
    return emitOpError("capacity_factor must be positive, got ")
           << factor.getValueAsDouble();
  return success();
}

int64_t MoEOp::getCapacity(int64_t tokens) {
  FloatAttr factor = getCapacityFactorAttr();
  int64_t experts = getNumExperts();
  if (!factor)
    return tokens;
  double wanted = std::ceil(factor.getValueAsDouble() *
                            static_cast<double>(tokens * getKAttr().getInt()) /
                            static_cast<double>(experts));
  return std::clamp<int64_t>(static_cast<int64_t>(wanted), 1, tokens);
}

/// The values of `value` when it is a constant float tensor.
static std::optional<SmallVector<float>> constantFloatValues(Value value) {
  DenseFPElementsAttr attr;
  if (!value || !matchPattern(value, m_Constant(&attr)))
    return std::nullopt;
  SmallVector<float> values;
  for (const APFloat &v : attr.getValues<APFloat>()) {
    APFloat f = v;
    bool lost;
    f.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
    values.push_back(f.convertToFloat());
  }
  return values;
}

std::optional<SmallVector<float>> ResizeOp::getStaticScales() {
  return constantFloatValues(getScales());
}

std::optional<SmallVector<float>> ResizeOp::getStaticRoi() {
  return constantFloatValues(getRoi());
}

LogicalResult ResizeOp::verify() {
  auto in = tensorTypeOf(getInput()), out = tensorTypeOf(getResult());
  int64_t rank = in.getRank();
  if (rank != out.getRank())
    return emitOpError("result must have the rank of the input");
  // Lengths and values are checked where they are known; run-time scales
  // and roi are the executor's to check.
  if (std::optional<int64_t> len = staticLength(getScales());
      len && *len != rank)
    return emitOpError("expects one scale per axis (")
           << rank << "), got " << *len;
  if (std::optional<SmallVector<float>> scales = getStaticScales())
    for (float s : *scales)
      if (!(s > 0.0f) || !std::isfinite(s))
        return emitOpError("scales must be positive and finite, got ") << s;
  if (getRoi())
    if (std::optional<int64_t> len = staticLength(getRoi());
        len && *len != 2 * rank)
      return emitOpError("roi must hold 2 * rank = ")
             << 2 * rank << " values, got " << *len;
  if (failed(verifyOneOf(*this, "mode", getMode(),
                         {"nearest", "linear", "cubic"})) ||
      failed(verifyOneOf(*this, "coordinate_transformation_mode",
                         getCoordinateTransformationMode(),
                         {"half_pixel", "half_pixel_symmetric",
                          "pytorch_half_pixel", "align_corners", "asymmetric",
                          "tf_half_pixel_for_nn", "tf_crop_and_resize"})) ||
      failed(verifyOneOf(
          *this, "nearest_mode", getNearestMode(),
          {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"})))
    return failure();
  if (getCoordinateTransformationMode() == "tf_crop_and_resize" && !getRoi())
    return emitOpError("tf_crop_and_resize requires a roi operand");
  return verifySameElementType(*this, getInput(), getResult(), "result");
}

//===----------------------------------------------------------------------===//
// Reductions, scans, top-k
//===----------------------------------------------------------------------===//

/// Result type of argmax/argmin: the input shape with `axis` reduced, as
/// i64 indices.
template <typename ArgLike>
static LogicalResult inferArgReduceResult(ArgLike op, const ShapeError &error,
                                          SmallVectorImpl<Type> &types) {
  auto in = tensorTypeOf(op.getInput());
  std::optional<int64_t> axis = normalizeAxis(op.getAxis(), in.getRank());
  if (!axis)
    return error("axis is out of range");
  SmallVector<int64_t> shape(in.getShape());
  if (op.getKeepdims())
    shape[*axis] = 1;
  else
    shape.erase(shape.begin() + *axis);
  types.push_back(
      RankedTensorType::get(shape, IntegerType::get(in.getContext(), 64)));
  return success();
}

LogicalResult ArgMaxOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  return inferArgReduceResult(adaptor, ShapeError(loc), types);
}

bool ArgMaxOp::isCompatibleReturnTypes(TypeRange l, TypeRange r) {
  return areRefinedTypesCompatible(l, r);
}

LogicalResult ArgMaxOp::verify() {
  return verifyResultRule(*this, inferArgReduceResult<ArgMaxOp>);
}

LogicalResult ArgMinOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  return inferArgReduceResult(adaptor, ShapeError(loc), types);
}

bool ArgMinOp::isCompatibleReturnTypes(TypeRange l, TypeRange r) {
  return areRefinedTypesCompatible(l, r);
}

LogicalResult ArgMinOp::verify() {
  return verifyResultRule(*this, inferArgReduceResult<ArgMinOp>);
}

LogicalResult CumSumOp::verify() {
  return verifyAxis(*this, getAxis(), tensorTypeOf(getInput()).getRank());
}

LogicalResult CumProdOp::verify() {
  return verifyAxis(*this, getAxis(), tensorTypeOf(getInput()).getRank());
}

LogicalResult TopKOp::verify() {
  auto in = tensorTypeOf(getInput());
  std::optional<int64_t> axis = normalizeAxis(getAxis(), in.getRank());
  if (!axis)
    return emitOpError("axis is out of range");
  if (std::optional<int64_t> len = staticLength(getK()); len && *len != 1)
    return emitOpError("k must hold exactly one value");
  auto values = tensorTypeOf(getValues()), indices = tensorTypeOf(getIndices());
  if (values.getShape() != indices.getShape())
    return emitOpError("values and indices must have one shape");
  if (values.getRank() != in.getRank())
    return emitOpError("results must have the rank of the input");
  for (int64_t i = 0; i < in.getRank(); ++i)
    if (i != *axis && !isDynamicOr(values.getDimSize(i), in.getDimSize(i)))
      return emitOpError("results must match the input except along axis");
  return verifySameElementType(*this, getInput(), getValues(), "values");
}

//===----------------------------------------------------------------------===//
// Shapes and data movement
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  auto in = tensorTypeOf(getInput()), out = tensorTypeOf(getResult());
  if (failed(verifySameElementType(*this, getInput(), getResult(), "result")))
    return failure();
  if (std::optional<int64_t> len = staticLength(getShape());
      len && *len != out.getRank())
    return emitOpError("shape has ")
           << *len << " elements but the result has rank " << out.getRank();
  if (in.hasStaticShape() && out.hasStaticShape() &&
      in.getNumElements() != out.getNumElements())
    return emitOpError("cannot reshape ")
           << in.getNumElements() << " elements into " << out;
  return success();
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  auto in = cast<RankedTensorType>(adaptor.getInput().getType());
  ArrayRef<int64_t> perm = adaptor.getPerm();
  if (perm.size() != static_cast<size_t>(in.getRank()))
    return emitOptionalError(loc, "perm must have one entry per dimension");
  SmallVector<int64_t> shape;
  llvm::SmallBitVector seen(in.getRank());
  for (int64_t p : perm) {
    if (p < 0 || p >= in.getRank() || seen.test(p))
      return emitOptionalError(loc, "perm is not a permutation");
    seen.set(p);
    shape.push_back(in.getDimSize(p));
  }
  types.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

bool TransposeOp::isCompatibleReturnTypes(TypeRange l, TypeRange r) {
  return areRefinedTypesCompatible(l, r);
}

LogicalResult TransposeOp::verify() { return success(); }

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  if (adaptor.getInputs().empty())
    return emitOptionalError(loc, "concat needs at least one operand");
  auto first = cast<RankedTensorType>(adaptor.getInputs()[0].getType());
  std::optional<int64_t> axis =
      normalizeAxis(adaptor.getAxis(), first.getRank());
  if (!axis)
    return emitOptionalError(loc, "axis is out of range");
  SmallVector<int64_t> shape(first.getShape());
  shape[*axis] = 0;
  for (Value v : adaptor.getInputs()) {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getRank() != first.getRank() ||
        t.getElementType() != first.getElementType())
      return emitOptionalError(loc,
                               "operands must share rank and element type");
    for (int64_t i = 0; i < t.getRank(); ++i) {
      int64_t d = t.getDimSize(i);
      if (i == *axis) {
        shape[i] = ShapedType::isDynamic(d) || ShapedType::isDynamic(shape[i])
                       ? ShapedType::kDynamic
                       : shape[i] + d;
      } else if (ShapedType::isDynamic(shape[i])) {
        shape[i] = d;
      } else if (!isDynamicOr(d, shape[i])) {
        return emitOptionalError(loc, "operand dimension ", i, " differs");
      }
    }
  }
  types.push_back(RankedTensorType::get(shape, first.getElementType()));
  return success();
}

bool ConcatOp::isCompatibleReturnTypes(TypeRange l, TypeRange r) {
  return areRefinedTypesCompatible(l, r);
}

LogicalResult ConcatOp::verify() { return success(); }

LogicalResult CacheAppendOp::verify() {
  auto cache = cast<RankedTensorType>(getCache().getType());
  auto update = cast<RankedTensorType>(getUpdate().getType());
  auto result = cast<RankedTensorType>(getResult().getType());
  if (cast<RankedTensorType>(getLength().getType()).getRank() != 0)
    return emitOpError("expects a scalar length");
  if (update.getRank() != cache.getRank() ||
      result.getRank() != cache.getRank())
    return emitOpError("expects the cache, update and result of one rank");
  if (update.getElementType() != cache.getElementType() ||
      result.getElementType() != cache.getElementType())
    return emitOpError("expects one element type");
  std::optional<int64_t> axis = normalizeAxis(getAxis(), cache.getRank());
  if (!axis)
    return emitOpError("axis is out of range");
  for (int64_t d = 0; d < cache.getRank(); ++d) {
    if (d == *axis)
      continue;
    for (int64_t size : {update.getDimSize(d), result.getDimSize(d)})
      if (!ShapedType::isDynamic(size) && !cache.isDynamicDim(d) &&
          size != cache.getDimSize(d))
        return emitOpError("dimension ") << d << " differs from the cache's ("
                                         << cache.getDimSize(d) << ")";
  }
  if (!result.isDynamicDim(*axis))
    return emitOpError("expects the result's length along the axis to be "
                       "dynamic (it is the filled length)");
  return success();
}

/// Result types of loom.split with `numResults` results: pieces of `sizes`
/// along `axis`, or equal pieces (the last may be smaller, ONNX Split-18) of
/// a static dimension, or dynamic ones. Not InferTypeOpInterface: without
/// `sizes`, the number of results is in neither the operand types nor the
/// attributes.
static LogicalResult inferSplitResults(Value input, int64_t axisAttr,
                                       std::optional<ArrayRef<int64_t>> sizes,
                                       size_t numResults,
                                       const ShapeError &error,
                                       SmallVectorImpl<Type> &types) {
  auto in = tensorTypeOf(input);
  std::optional<int64_t> axis = normalizeAxis(axisAttr, in.getRank());
  if (!axis)
    return error("axis is out of range");
  if (numResults == 0)
    return error("expects at least one result");
  int64_t dim = in.getDimSize(*axis);
  SmallVector<int64_t> pieces;
  if (sizes) {
    if (sizes->size() != numResults)
      return error("expects one size per result");
    if (llvm::any_of(*sizes, [](int64_t size) { return size < 0; }))
      return error("sizes must be non-negative");
    int64_t total = 0;
    for (int64_t size : *sizes)
      total += size;
    if (!ShapedType::isDynamic(dim) && total != dim)
      return error("sizes add up to ", total, ", not ", dim);
    pieces.assign(sizes->begin(), sizes->end());
  } else if (ShapedType::isDynamic(dim)) {
    pieces.assign(numResults, ShapedType::kDynamic);
  } else {
    int64_t count = numResults;
    int64_t part = (dim + count - 1) / count;
    for (int64_t left = dim; pieces.size() < numResults; left -= pieces.back())
      pieces.push_back(std::min(part, left));
  }
  for (int64_t piece : pieces) {
    SmallVector<int64_t> shape(in.getShape());
    shape[*axis] = piece;
    types.push_back(RankedTensorType::get(shape, in.getElementType()));
  }
  return success();
}

void SplitOp::build(OpBuilder &builder, OperationState &state, Value input,
                    int64_t axis, ArrayRef<int64_t> sizes) {
  SmallVector<Type> types;
  // Bad sizes leave the types short; the verifier then reports them.
  (void)inferSplitResults(input, axis, sizes, sizes.size(),
                          ShapeError(std::optional<Location>()), types);
  build(builder, state, types, input, axis,
        builder.getDenseI64ArrayAttr(sizes));
}

LogicalResult SplitOp::verify() {
  SmallVector<Type> expected;
  if (failed(inferSplitResults(getInput(), getAxis(), getSizes(),
                               getNumResults(), ShapeError(getOperation()),
                               expected)))
    return failure();
  // Static result sizes with the wrong total say more than the first result
  // that differs from an equal split.
  auto in = tensorTypeOf(getInput());
  int64_t axis = *normalizeAxis(getAxis(), in.getRank());
  int64_t total = 0;
  bool allStatic = !in.isDynamicDim(axis);
  for (Value r : getResults()) {
    auto t = tensorTypeOf(r);
    if (t.getRank() != in.getRank() || t.isDynamicDim(axis))
      allStatic = false;
    else
      total += t.getDimSize(axis);
  }
  if (allStatic && total != in.getDimSize(axis))
    return emitOpError("result sizes add up to ")
           << total << ", not " << in.getDimSize(axis);
  for (auto [i, want, have] : llvm::enumerate(expected, getResultTypes()))
    if (!areRefinedTypesCompatible(TypeRange{want}, TypeRange{have}))
      return emitOpError("result ")
             << i << " has type " << have << ", expected " << want;
  return success();
}

LogicalResult SliceOp::verify() {
  auto in = tensorTypeOf(getInput()), out = tensorTypeOf(getResult());
  if (in.getRank() != out.getRank())
    return emitOpError("result must have the rank of the input");
  SmallVector<Value> params{getStarts(), getEnds()};
  if (getAxes())
    params.push_back(getAxes());
  if (getSteps())
    params.push_back(getSteps());
  std::optional<int64_t> length;
  for (Value p : params) {
    if (tensorTypeOf(p).getRank() != 1)
      return emitOpError("starts, ends, axes and steps must be 1-D");
    std::optional<int64_t> l = staticLength(p);
    if (l && length && *l != *length)
      return emitOpError("starts, ends, axes and steps must have one length");
    if (l)
      length = l;
  }
  return verifySameElementType(*this, getInput(), getResult(), "result");
}

/// Result type of loom.gather: `data[:axis] + indices + data[axis+1:]`.
template <typename GatherLike>
static LogicalResult inferGatherResult(GatherLike op, const ShapeError &error,
                                       SmallVectorImpl<Type> &types) {
  auto data = tensorTypeOf(op.getData()), idx = tensorTypeOf(op.getIndices());
  std::optional<int64_t> axis = normalizeAxis(op.getAxis(), data.getRank());
  if (!axis)
    return error("axis is out of range");
  SmallVector<int64_t> shape(data.getShape().take_front(*axis));
  llvm::append_range(shape, idx.getShape());
  llvm::append_range(shape, data.getShape().drop_front(*axis + 1));
  types.push_back(RankedTensorType::get(shape, data.getElementType()));
  return success();
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  return inferGatherResult(adaptor, ShapeError(loc), types);
}

bool GatherOp::isCompatibleReturnTypes(TypeRange l, TypeRange r) {
  return areRefinedTypesCompatible(l, r);
}

LogicalResult GatherOp::verify() {
  return verifyResultRule(*this, inferGatherResult<GatherOp>);
}

/// Result type of loom.gather_elements: the shape of `indices`.
template <typename GatherLike>
static LogicalResult inferGatherElementsResult(GatherLike op,
                                               const ShapeError &error,
                                               SmallVectorImpl<Type> &types) {
  auto data = tensorTypeOf(op.getData()), idx = tensorTypeOf(op.getIndices());
  if (!normalizeAxis(op.getAxis(), data.getRank()))
    return error("axis ", op.getAxis(), " is out of range for rank ",
                 data.getRank());
  if (idx.getRank() != data.getRank())
    return error("indices must have the rank of data");
  types.push_back(idx.clone(data.getElementType()));
  return success();
}

LogicalResult GatherElementsOp::inferReturnTypes(MLIRContext *,
                                                 std::optional<Location> loc,
                                                 Adaptor adaptor,
                                                 SmallVectorImpl<Type> &types) {
  return inferGatherElementsResult(adaptor, ShapeError(loc), types);
}

bool GatherElementsOp::isCompatibleReturnTypes(TypeRange l, TypeRange r) {
  return areRefinedTypesCompatible(l, r);
}

LogicalResult GatherElementsOp::verify() {
  return verifyResultRule(*this, inferGatherElementsResult<GatherElementsOp>);
}

/// Result type of loom.gather_nd: `indices.shape[:-1] +
/// data.shape[batch_dims + k:]` for index tuples of length k. The rank
/// depends on k, so a dynamic k gives an unranked type.
template <typename GatherLike>
static LogicalResult inferGatherNDResult(GatherLike op, const ShapeError &error,
                                         SmallVectorImpl<Type> &types) {
  auto data = tensorTypeOf(op.getData()), idx = tensorTypeOf(op.getIndices());
  // Read signed: the I64Attr getter is unsigned.
  int64_t b = op.getBatchDims();
  if (idx.getRank() < 1 || b < 0 ||
      b >= std::min(data.getRank(), idx.getRank()))
    return error("batch_dims must be smaller than both ranks");
  int64_t last = idx.getShape().back();
  if (ShapedType::isDynamic(last)) {
    types.push_back(UnrankedTensorType::get(data.getElementType()));
    return success();
  }
  if (last < 1 || b + last > data.getRank())
    return error("index tuples of length ", last,
                 " do not address data of rank ", data.getRank());
  SmallVector<int64_t> shape(idx.getShape().drop_back());
  // The batch dimensions are shared: either operand may know them.
  for (int64_t i = 0; i < b; ++i)
    shape[i] = mergeDims(shape[i], data.getDimSize(i));
  llvm::append_range(shape, data.getShape().drop_front(b + last));
  types.push_back(RankedTensorType::get(shape, data.getElementType()));
  return success();
}

LogicalResult GatherNDOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location> loc,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &types) {
  return inferGatherNDResult(adaptor, ShapeError(loc), types);
}

bool GatherNDOp::isCompatibleReturnTypes(TypeRange l, TypeRange r) {
  return areRefinedTypesCompatible(l, r);
}

LogicalResult GatherNDOp::verify() {
  return verifyResultRule(*this, inferGatherNDResult<GatherNDOp>);
}

static LogicalResult verifyReduction(Operation *op, StringRef reduction) {
  return verifyOneOf(op, "reduction", reduction,
                     {"none", "add", "mul", "max", "min"});
}

LogicalResult ScatterElementsOp::verify() {
  auto data = tensorTypeOf(getData()), idx = tensorTypeOf(getIndices());
  if (failed(verifyAxis(*this, getAxis(), data.getRank())))
    return failure();
  if (idx.getRank() != data.getRank() ||
      !areShapesCompatible(idx.getShape(),
                           tensorTypeOf(getUpdates()).getShape()))
    return emitOpError(
        "indices and updates must have one shape of data's rank");
  if (failed(verifySameElementType(*this, getData(), getUpdates(), "updates")))
    return failure();
  return verifyReduction(*this, getReduction());
}

LogicalResult ScatterNDOp::verify() {
  auto data = tensorTypeOf(getData()), idx = tensorTypeOf(getIndices());
  if (idx.getRank() < 1)
    return emitOpError("indices must have rank >= 1");
  int64_t last = idx.getShape().back();
  if (!ShapedType::isDynamic(last) && last > data.getRank())
    return emitOpError("index tuples are longer than the rank of data");
  if (!ShapedType::isDynamic(last)) {
    int64_t updatesRank = idx.getRank() - 1 + data.getRank() - last;
    if (tensorTypeOf(getUpdates()).getRank() != updatesRank)
      return emitOpError("updates must have rank ") << updatesRank;
  }
  if (failed(verifySameElementType(*this, getData(), getUpdates(), "updates")))
    return failure();
  return verifyReduction(*this, getReduction());
}

LogicalResult PadOp::verify() {
  auto in = tensorTypeOf(getInput());
  if (tensorTypeOf(getResult()).getRank() != in.getRank())
    return emitOpError("result must have the rank of the input");
  if (std::optional<int64_t> len = staticLength(getPads());
      len && *len != 2 * in.getRank())
    return emitOpError("pads must hold 2 * rank = ")
           << 2 * in.getRank() << " values";
  if (getConstantValue()) {
    auto c = tensorTypeOf(getConstantValue());
    if (c.hasStaticShape() && c.getNumElements() != 1)
      return emitOpError("constant_value must be a scalar");
    if (failed(verifySameElementType(*this, getInput(), getConstantValue(),
                                     "constant_value")))
      return failure();
  }
  if (failed(verifyOneOf(*this, "mode", getMode(),
                         {"constant", "reflect", "edge", "wrap"})))
    return failure();
  return verifySameElementType(*this, getInput(), getResult(), "result");
}

LogicalResult ExpandOp::verify() {
  auto in = tensorTypeOf(getInput()), out = tensorTypeOf(getResult());
  if (out.getRank() < in.getRank())
    return emitOpError("result rank must be at least the input rank");
  if (std::optional<int64_t> len = staticLength(getShape());
      len && *len > out.getRank())
    return emitOpError("shape is longer than the result rank");
  auto b = broadcastShapes(in.getShape(), out.getShape());
  if (failed(b) || !areShapesCompatible(*b, out.getShape()))
    return emitOpError("input does not broadcast to the result shape");
  return verifySameElementType(*this, getInput(), getResult(), "result");
}

LogicalResult TileOp::verify() {
  auto in = tensorTypeOf(getInput()), out = tensorTypeOf(getResult());
  if (out.getRank() != in.getRank())
    return emitOpError("result must have the rank of the input");
  if (std::optional<int64_t> len = staticLength(getRepeats());
      len && *len != in.getRank())
    return emitOpError("repeats must have one value per dimension");
  return verifySameElementType(*this, getInput(), getResult(), "result");
}

LogicalResult SqueezeOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  auto in = cast<RankedTensorType>(adaptor.getInput().getType());
  llvm::SmallBitVector drop(in.getRank());
  for (int64_t axis : adaptor.getAxes()) {
    if (axis < 0 || axis >= in.getRank())
      return emitOptionalError(loc, "squeeze axis ", axis, " is out of range");
    if (!isDynamicOr(in.getDimSize(axis), 1))
      return emitOptionalError(loc, "squeezed dimension ", axis,
                               " does not have size 1");
    drop.set(axis);
  }
  if (adaptor.getAxes().empty())
    for (int64_t i = 0; i < in.getRank(); ++i)
      if (in.getDimSize(i) == 1)
        drop.set(i);
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < in.getRank(); ++i)
    if (!drop.test(i))
      shape.push_back(in.getDimSize(i));
  types.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

bool SqueezeOp::isCompatibleReturnTypes(TypeRange l, TypeRange r) {
  return areRefinedTypesCompatible(l, r);
}

LogicalResult SqueezeOp::verify() { return success(); }

LogicalResult UnsqueezeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  auto in = cast<RankedTensorType>(adaptor.getInput().getType());
  int64_t rank = in.getRank() + adaptor.getAxes().size();
  llvm::SmallBitVector inserted(rank);
  for (int64_t axis : adaptor.getAxes()) {
    if (axis < 0 || axis >= rank || inserted.test(axis))
      return emitOptionalError(loc, "unsqueeze axis ", axis,
                               " is out of range or repeated");
    inserted.set(axis);
  }
  SmallVector<int64_t> shape;
  int64_t next = 0;
  for (int64_t i = 0; i < rank; ++i)
    shape.push_back(inserted.test(i) ? 1 : in.getDimSize(next++));
  types.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

bool UnsqueezeOp::isCompatibleReturnTypes(TypeRange l, TypeRange r) {
  return areRefinedTypesCompatible(l, r);
}

LogicalResult UnsqueezeOp::verify() { return success(); }

/// Result type of loom.shape: one i64 per dimension in `[start, end)`, with
/// negative bounds counted from the end and both clamped to the rank.
template <typename ShapeLike>
static LogicalResult inferShapeResult(ShapeLike op, const ShapeError &,
                                      SmallVectorImpl<Type> &types) {
  auto in = tensorTypeOf(op.getInput());
  int64_t rank = in.getRank();
  auto clamp = [&](int64_t v) {
    if (v < 0)
      v += rank;
    return std::clamp<int64_t>(v, 0, rank);
  };
  // Read signed: the I64Attr getters are unsigned.
  int64_t start = clamp(static_cast<int64_t>(op.getStart()));
  std::optional<uint64_t> endAttr = op.getEnd();
  int64_t end = clamp(endAttr ? static_cast<int64_t>(*endAttr) : rank);
  int64_t length = std::max<int64_t>(end - start, 0);
  types.push_back(
      RankedTensorType::get({length}, IntegerType::get(in.getContext(), 64)));
  return success();
}

LogicalResult ShapeOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  return inferShapeResult(adaptor, ShapeError(loc), types);
}

bool ShapeOp::isCompatibleReturnTypes(TypeRange l, TypeRange r) {
  return areRefinedTypesCompatible(l, r);
}

LogicalResult ShapeOp::verify() {
  return verifyResultRule(*this, inferShapeResult<ShapeOp>);
}

LogicalResult SizeOp::inferReturnTypes(MLIRContext *ctx,
                                       std::optional<Location>, Adaptor,
                                       SmallVectorImpl<Type> &types) {
  types.push_back(RankedTensorType::get({}, IntegerType::get(ctx, 64)));
  return success();
}

bool SizeOp::isCompatibleReturnTypes(TypeRange l, TypeRange r) {
  return areRefinedTypesCompatible(l, r);
}

LogicalResult RangeOp::verify() {
  for (Value v : {getStart(), getLimit(), getDelta()}) {
    auto t = tensorTypeOf(v);
    if (t.getRank() != 0 ||
        t.getElementType() != tensorTypeOf(getResult()).getElementType())
      return emitOpError("start, limit and delta must be 0-D tensors of the "
                         "result's element type");
  }
  return success();
}

LogicalResult ConstantOfShapeOp::verify() {
  auto out = tensorTypeOf(getResult());
  auto value = dyn_cast<TypedAttr>(getValue());
  if (!value || value.getType() != out.getElementType())
    return emitOpError("value must have the result's element type");
  if (std::optional<int64_t> len = staticLength(getShape());
      len && *len != out.getRank())
    return emitOpError("shape length must equal the result rank");
  return success();
}

LogicalResult OneHotOp::verify() {
  auto idx = tensorTypeOf(getIndices()), out = tensorTypeOf(getResult());
  if (out.getRank() != idx.getRank() + 1)
    return emitOpError("result rank must be the indices rank + 1");
  if (failed(verifyAxis(*this, getAxis(), out.getRank())))
    return failure();
  auto values = tensorTypeOf(getValues());
  if (values.getRank() != 1 || !isDynamicOr(values.getDimSize(0), 2))
    return emitOpError("values must be [off, on]");
  return verifySameElementType(*this, getValues(), getResult(), "result");
}

LogicalResult TriluOp::verify() {
  if (tensorTypeOf(getInput()).getRank() < 2)
    return emitOpError("expects an input of rank >= 2");
  if (getK()) {
    auto k = tensorTypeOf(getK());
    if (k.hasStaticShape() && k.getNumElements() != 1)
      return emitOpError("k must be a scalar");
  }
  return success();
}

LogicalResult NonZeroOp::verify() {
  if (!isDynamicOr(tensorTypeOf(getResult()).getDimSize(0),
                   tensorTypeOf(getInput()).getRank()))
    return emitOpError("result must have one row per input dimension");
  return success();
}

//===----------------------------------------------------------------------===//
// Vision: grid sampling, RoI align, non-maximum suppression
//===----------------------------------------------------------------------===//

/// Result type of loom.grid_sample: `[N, C, Ho, Wo]` from input
/// `[N, C, H, W]` and grid `[N, Ho, Wo, 2]`, or `[N, C, Do, Ho, Wo]` from
/// `[N, C, D, H, W]` and `[N, Do, Ho, Wo, 3]`.
template <typename GridSampleLike>
static LogicalResult inferGridSampleResult(GridSampleLike op,
                                           const ShapeError &error,
                                           SmallVectorImpl<Type> &types) {
  auto in = tensorTypeOf(op.getInput()), grid = tensorTypeOf(op.getGrid());
  int64_t spatial = in.getRank() - 2;
  if ((spatial != 2 && spatial != 3) || grid.getRank() != in.getRank())
    return error("expects a 4-D input [N, C, H, W] and grid [N, Ho, Wo, 2], "
                 "or a 5-D input [N, C, D, H, W] and grid [N, Do, Ho, Wo, 3]");
  if (!isDynamicOr(grid.getDimSize(spatial + 1), spatial))
    return error("grid must hold ", spatial,
                 " coordinates in its last dimension, got ", grid);
  if (!isDynamicOr(grid.getDimSize(0), in.getDimSize(0)))
    return error("grid and input must have one batch size");
  SmallVector<int64_t> shape = {mergeDims(in.getDimSize(0), grid.getDimSize(0)),
                                in.getDimSize(1)};
  for (int64_t d = 1; d <= spatial; ++d)
    shape.push_back(grid.getDimSize(d));
  types.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

LogicalResult GridSampleOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> loc,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &types) {
  return inferGridSampleResult(adaptor, ShapeError(loc), types);
}

bool GridSampleOp::isCompatibleReturnTypes(TypeRange l, TypeRange r) {
  return areRefinedTypesCompatible(l, r);
}

LogicalResult GridSampleOp::verify() {
  if (failed(verifyResultRule(*this, inferGridSampleResult<GridSampleOp>)))
    return failure();
  if (getMode() == "bicubic" &&
      cast<ShapedType>(getInput().getType()).getRank() != 4)
    return emitOpError("bicubic sampling takes 2 spatial axes (a 4-D input)");
  return failure(failed(verifyOneOf(*this, "mode", getMode(),
                                    {"bilinear", "nearest", "bicubic"})) ||
                 failed(verifyOneOf(*this, "padding_mode", getPaddingMode(),
                                    {"zeros", "border", "reflection"})));
}

/// Result type of loom.roi_align: `[R, C, output_height, output_width]` for
/// R rois of an `[N, C, H, W]` input.
template <typename RoiAlignLike>
static LogicalResult inferRoiAlignResult(RoiAlignLike op,
                                         const ShapeError &error,
                                         SmallVectorImpl<Type> &types) {
  auto in = tensorTypeOf(op.getInput()), rois = tensorTypeOf(op.getRois());
  auto idx = tensorTypeOf(op.getBatchIndices());
  if (in.getRank() != 4)
    return error("expects a 4-D input [N, C, H, W]");
  if (rois.getRank() != 2 || !isDynamicOr(rois.getDimSize(1), 4))
    return error("rois must be [R, 4], got ", rois);
  if (!isDynamicOr(idx.getDimSize(0), rois.getDimSize(0)))
    return error("batch_indices must hold one index per roi");
  if (rois.getElementType() != in.getElementType())
    return error("rois must have the element type of the input");
  // I64Attr getters are unsigned: read the values as the signed ones ONNX
  // gives so that negative sizes are reported, not wrapped.
  int64_t height = op.getOutputHeight(), width = op.getOutputWidth();
  if (height <= 0 || width <= 0)
    return error("output_height and output_width must be positive");
  types.push_back(
      RankedTensorType::get({mergeDims(rois.getDimSize(0), idx.getDimSize(0)),
                             in.getDimSize(1), height, width},
                            in.getElementType()));
  return success();
}

LogicalResult RoiAlignOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location> loc,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &types) {
  return inferRoiAlignResult(adaptor, ShapeError(loc), types);
}

bool RoiAlignOp::isCompatibleReturnTypes(TypeRange l, TypeRange r) {
  return areRefinedTypesCompatible(l, r);
}

LogicalResult RoiAlignOp::verify() {
  if (failed(verifyResultRule(*this, inferRoiAlignResult<RoiAlignOp>)))
    return failure();
  if (static_cast<int64_t>(getSamplingRatio()) < 0)
    return emitOpError("sampling_ratio must be non-negative");
  float scale = getSpatialScale().convertToFloat();
  if (!(scale > 0.0f) || !std::isfinite(scale))
    return emitOpError("spatial_scale must be positive and finite");
  return failure(
      failed(verifyOneOf(*this, "mode", getMode(), {"avg", "max"})) ||
      failed(verifyOneOf(*this, "coordinate_transformation_mode",
                         getCoordinateTransformationMode(),
                         {"half_pixel", "output_half_pixel"})));
}

/// A scalar operand: rank 0, or rank 1 with one element.
static LogicalResult verifyScalarOperand(Operation *op, Value value,
                                         StringRef name) {
  if (!value)
    return success();
  auto t = tensorTypeOf(value);
  if (t.getRank() > 1 || (t.getRank() == 1 && !isDynamicOr(t.getDimSize(0), 1)))
    return op->emitOpError(name) << " must be a scalar (0-D or [1]), got " << t;
  return success();
}

LogicalResult NonMaxSuppressionOp::verify() {
  auto boxes = tensorTypeOf(getBoxes()), scores = tensorTypeOf(getScores());
  auto out = tensorTypeOf(getResult());
  if (boxes.getRank() != 3 || !isDynamicOr(boxes.getDimSize(2), 4))
    return emitOpError("boxes must be [B, N, 4], got ") << boxes;
  if (scores.getRank() != 3)
    return emitOpError("scores must be [B, C, N], got ") << scores;
  if (!isDynamicOr(scores.getDimSize(0), boxes.getDimSize(0)) ||
      !isDynamicOr(scores.getDimSize(2), boxes.getDimSize(1)))
    return emitOpError("scores ")
           << scores << " do not match boxes " << boxes << " in B and N";
  if (failed(verifySameElementType(*this, getBoxes(), getScores(), "scores")))
    return failure();
  if (failed(verifyScalarOperand(*this, getMaxOutputBoxesPerClass(),
                                 "max_output_boxes_per_class")) ||
      failed(verifyScalarOperand(*this, getIouThreshold(), "iou_threshold")) ||
      failed(
          verifyScalarOperand(*this, getScoreThreshold(), "score_threshold")))
    return failure();
  // How many boxes survive is data-dependent; a static count would be a
  // claim the op cannot check.
  if (!out.isDynamicDim(0) || !isDynamicOr(out.getDimSize(1), 3) ||
      out.isDynamicDim(1))
    return emitOpError("result must be tensor<?x3xi64>, got ") << out;
  return success();
}

//===----------------------------------------------------------------------===//
// Quantization
//===----------------------------------------------------------------------===//

/// Checks that quantization parameters `scale` (and `zeroPoint`, when
/// present) broadcast against `data` and that the zero point has the
/// quantized element type `quantElement`.
static LogicalResult verifyQuantParams(Operation *op, RankedTensorType data,
                                       Value scale, Value zeroPoint,
                                       Type quantElement) {
  auto scaleType = tensorTypeOf(scale);
  auto shape = broadcastShapes(data.getShape(), scaleType.getShape());
  if (failed(shape) || *shape != SmallVector<int64_t>(data.getShape()))
    return op->emitOpError("scale of type ")
           << scaleType << " does not broadcast to " << data;
  if (isa<FloatType>(quantElement) && zeroPoint)
    return op->emitOpError("float quantized values take no zero point");
  if (!zeroPoint)
    return success();
  auto zpType = tensorTypeOf(zeroPoint);
  if (zpType.getElementType() != quantElement)
    return op->emitOpError("zero point must have element type ")
           << quantElement << ", got " << zpType.getElementType();
  if (zpType.getShape() != scaleType.getShape())
    return op->emitOpError("zero point must have the shape of the scale");
  return success();
}

LogicalResult QuantizeOp::verify() {
  auto in = tensorTypeOf(getInput()), out = tensorTypeOf(getResult());
  if (in.getShape() != out.getShape())
    return emitOpError("result must have the shape of the input");
  if (tensorTypeOf(getScale()).getElementType() != in.getElementType())
    return emitOpError("scale must have the element type of the input");
  return verifyQuantParams(*this, in, getScale(), getZeroPoint(),
                           out.getElementType());
}

LogicalResult DequantizeOp::verify() {
  auto in = tensorTypeOf(getInput()), out = tensorTypeOf(getResult());
  if (in.getShape() != out.getShape())
    return emitOpError("result must have the shape of the input");
  if (tensorTypeOf(getScale()).getElementType() != out.getElementType())
    return emitOpError("scale must have the element type of the result");
  return verifyQuantParams(*this, in, getScale(), getZeroPoint(),
                           in.getElementType());
}

/// Checks the operand pair of a quantized contraction: both 8-bit integers
/// or both f8E4M3FN, zero points both present or both absent, a 0-D scale
/// for the activation and a 0-D or [channels] scale for the weight.
static LogicalResult verifyQuantContraction(Operation *op, Value act,
                                            Value weight, Value actScale,
                                            Value weightScale, Value actZp,
                                            Value weightZp, int64_t channels) {
  Type a = getElementTypeOrSelf(act.getType());
  Type w = getElementTypeOrSelf(weight.getType());
  if (isa<Float8E4M3FNType>(a) != isa<Float8E4M3FNType>(w))
    return op->emitOpError("operands must both be 8-bit integers or both "
                           "f8E4M3FN");
  if (bool(actZp) != bool(weightZp))
    return op->emitOpError("zero points come both or neither");
  auto as = tensorTypeOf(actScale), ws = tensorTypeOf(weightScale);
  if (as.getRank() != 0)
    return op->emitOpError("activation scale must be 0-D (per tensor)");
  if (!(ws.getRank() == 0 ||
        (ws.getRank() == 1 && isDynamicOr(ws.getDimSize(0), channels))))
    return op->emitOpError("weight scale must be 0-D or one value per output "
                           "channel (")
           << channels << ")";
  if (!isa<Float32Type>(as.getElementType()) ||
      !isa<Float32Type>(ws.getElementType()))
    return op->emitOpError("scales must be f32");
  if (actZp && (failed(verifyQuantParams(op, as, actScale, actZp, a)) ||
                failed(verifyQuantParams(op, ws, weightScale, weightZp, w))))
    return failure();
  if (actZp && (tensorTypeOf(actZp).getShape() != as.getShape() ||
                tensorTypeOf(weightZp).getShape() != ws.getShape()))
    return op->emitOpError("zero points must have the shapes of the scales");
  return success();
}

LogicalResult QMatMulOp::verify() {
  auto a = tensorTypeOf(getLhs()), b = tensorTypeOf(getRhs());
  if (a.getRank() < 2 || b.getRank() != 2)
    return emitOpError("expects lhs of rank >= 2 and a 2-D rhs");
  if (!isDynamicOr(a.getShape().back(), b.getDimSize(0)))
    return emitOpError("contracting dimensions differ: ")
           << a.getShape().back() << " vs " << b.getDimSize(0);
  if (failed(verifyQuantContraction(*this, getLhs(), getRhs(), getLhsScale(),
                                    getRhsScale(), getLhsZeroPoint(),
                                    getRhsZeroPoint(), b.getDimSize(1))))
    return failure();
  SmallVector<int64_t> shape(a.getShape());
  shape.back() = b.getDimSize(1);
  auto expected = RankedTensorType::get(shape, Float32Type::get(getContext()));
  if (!areRefinedTypesCompatible(TypeRange{expected},
                                 TypeRange{getResult().getType()}))
    return emitOpError("result type must be ") << expected;
  return success();
}

LogicalResult QConvOp::verify() {
  SmallVector<Type> types;
  if (failed(inferConvResult(*this, ShapeError(getOperation()), types,
                             /*quantized=*/true)))
    return failure();
  if (failed(verifyQuantContraction(*this, getInput(), getWeight(),
                                    getInputScale(), getWeightScale(),
                                    getInputZeroPoint(), getWeightZeroPoint(),
                                    tensorTypeOf(getWeight()).getDimSize(0))))
    return failure();
  if (!areRefinedTypesCompatible(types, TypeRange{getResult().getType()}))
    return emitOpError("result type must be ") << types.front();
  return success();
}

//===----------------------------------------------------------------------===//
// Fusion
//===----------------------------------------------------------------------===//

/// The block of a region op that stands for its operands (one block
/// argument per input) and ends in a loom.yield of its results. `where`
/// names the region in messages when the op has several ("then branch: ").
static LogicalResult verifyInputsAndYield(Operation *op, ValueRange inputs,
                                          Block &body, TypeRange results,
                                          StringRef where = "") {
  if (body.getNumArguments() != inputs.size())
    return op->emitOpError(where)
           << "has " << inputs.size() << " inputs but its block has "
           << body.getNumArguments() << " arguments";
  for (auto [i, input, arg] : llvm::enumerate(inputs, body.getArguments()))
    if (input.getType() != arg.getType())
      return op->emitOpError(where)
             << "block argument " << i << " has type " << arg.getType()
             << ", but input " << i << " has type " << input.getType();
  // The ops of the region are verified after this verifier, so the block
  // may still end in any op (or be empty).
  auto yield = dyn_cast_or_null<YieldOp>(body.empty() ? nullptr : &body.back());
  if (!yield)
    return op->emitOpError(where) << "body must end with loom.yield";
  if (yield.getValues().size() != results.size())
    return op->emitOpError(where)
           << "yields " << yield.getValues().size() << " values for "
           << results.size() << " results";
  for (auto [i, value, result] : llvm::enumerate(yield.getValues(), results))
    if (value.getType() != result)
      return op->emitOpError(where)
             << "yielded value " << i << " has type " << value.getType()
             << ", but result " << i << " has type " << result;
  return success();
}

LogicalResult FusionOp::verify() {
  if (failed(verifyOneOf(*this, "kind", getKind(),
                         {"elementwise", "reduction", "epilogue"})))
    return failure();
  return verifyInputsAndYield(*this, getInputs(), getBody().front(),
                              getResultTypes());
}

//===----------------------------------------------------------------------===//
// PipelineStageOp
//===----------------------------------------------------------------------===//

LogicalResult PipelineStageOp::verify() {
  if (getGridAxisIndex() < 0 || getStageIndex() < 0 || getMicroBatchIndex() < 0)
    return emitOpError("grid axis, stage and micro-batch must not be negative");
  return verifyInputsAndYield(*this, getInputs(), getBody().front(),
                              getResultTypes());
}

LogicalResult
PipelineStageOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  // The grid is a shard.grid; read its shape generically so that the loom
  // dialect does not depend on the shard dialect's library.
  Operation *grid = symbolTable.lookupNearestSymbolFrom(*this, getGridAttr());
  if (!grid || grid->getName().getStringRef() != "shard.grid")
    return emitOpError("refers to ")
           << getGridAttr() << ", which is not a shard.grid";
  auto shape = grid->getAttrOfType<DenseI64ArrayAttr>("shape");
  if (!shape || getGridAxisIndex() >= shape.size())
    return emitOpError("grid axis ")
           << getGridAxisIndex() << " is not an axis of " << getGridAttr();
  int64_t stages = shape[getGridAxisIndex()];
  if (!ShapedType::isDynamic(stages) && getStageIndex() >= stages)
    return emitOpError("stage ") << getStageIndex() << " is outside grid axis "
                                 << getGridAxisIndex() << " of size " << stages;
  return success();
}

//===----------------------------------------------------------------------===//
// IfOp
//===----------------------------------------------------------------------===//

LogicalResult IfOp::verify() {
  auto condition = cast<RankedTensorType>(getCondition().getType());
  if (condition.hasStaticShape() && condition.getNumElements() != 1)
    return emitOpError("condition must hold one element, not ")
           << condition.getNumElements();
  if (failed(verifyInputsAndYield(*this, getInputs(), getThenRegion().front(),
                                  getResultTypes(), "then branch: ")))
    return failure();
  return verifyInputsAndYield(*this, getInputs(), getElseRegion().front(),
                              getResultTypes(), "else branch: ");
}

//===----------------------------------------------------------------------===//
// LoopOp
//===----------------------------------------------------------------------===//

/// Whether `type` is a tensor of `element` with one element (any rank, so
/// that ONNX's [1]-shaped scalars are accepted too).
static bool isOneElementOf(Type type, Type element) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getElementType() == element &&
         (!tensor.hasStaticShape() || tensor.getNumElements() == 1);
}

LogicalResult LoopOp::verify() {
  Builder b(getContext());
  Type i64 = b.getI64Type(), i1 = b.getI1Type();
  if (!isOneElementOf(getTripCount().getType(), i64))
    return emitOpError("trip count must be one i64, not ")
           << getTripCount().getType();
  if (!isOneElementOf(getCondition().getType(), i1))
    return emitOpError("condition must be one i1, not ")
           << getCondition().getType();
  unsigned numCarried = getCarried().size();
  if (getNumResults() < numCarried)
    return emitOpError("has ") << numCarried << " carried values but only "
                               << getNumResults() << " results";
  Block &body = getBody().front();
  unsigned expectedArgs = 2 + numCarried + getInputs().size();
  if (body.getNumArguments() != expectedArgs)
    return emitOpError("body must take the iteration number, the condition, "
                       "the carried values and the inputs (")
           << expectedArgs << " arguments), not " << body.getNumArguments();
  auto scalarOf = [](Type element) {
    return RankedTensorType::get({}, element);
  };
  if (body.getArgument(0).getType() != scalarOf(i64) ||
      body.getArgument(1).getType() != scalarOf(i1))
    return emitOpError("body's first arguments must be tensor<i64> (the "
                       "iteration number) and tensor<i1> (the condition)");
  for (auto [i, carried] : llvm::enumerate(getCarried())) {
    Type result = getResult(i).getType();
    if (carried.getType() != result ||
        body.getArgument(2 + i).getType() != result)
      return emitOpError("carried value ")
             << i << " must have its result's type " << result
             << " as operand and as body argument";
  }
  for (auto [i, input] : llvm::enumerate(getInputs()))
    if (body.getArgument(2 + numCarried + i).getType() != input.getType())
      return emitOpError("body argument for input ")
             << i << " has type "
             << body.getArgument(2 + numCarried + i).getType()
             << ", but the input has type " << input.getType();
  auto yield = dyn_cast_or_null<YieldOp>(body.empty() ? nullptr : &body.back());
  if (!yield)
    return emitOpError("body must end with loom.yield");
  if (yield.getValues().size() != 1 + getNumResults())
    return emitOpError("body yields ")
           << yield.getValues().size()
           << " values; it must yield the condition and one value per result ("
           << 1 + getNumResults() << ")";
  if (!isOneElementOf(yield.getValues()[0].getType(), i1))
    return emitOpError("body must yield the condition (one i1) first");
  for (auto [i, result] : llvm::enumerate(getResults())) {
    Type yielded = yield.getValues()[1 + i].getType();
    if (i < numCarried) {
      if (yielded != result.getType())
        return emitOpError("body yields ")
               << yielded << " for carried value " << i << " of type "
               << result.getType();
      continue;
    }
    // A scan output stacks the per-iteration values.
    auto element = dyn_cast<RankedTensorType>(yielded);
    auto stacked = dyn_cast<RankedTensorType>(result.getType());
    if (!element || !stacked || stacked.getRank() != element.getRank() + 1 ||
        stacked.getElementType() != element.getElementType() ||
        failed(verifyCompatibleShape(stacked.getShape().drop_front(),
                                     element.getShape())))
      return emitOpError("scan output ")
             << i - numCarried << " has type " << result.getType()
             << ", which does not stack the body's " << yielded;
  }
  return success();
}

#define GET_OP_CLASSES
#include "loom/Dialect/Loom/IR/LoomOps.cpp.inc"
