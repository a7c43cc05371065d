//===- ShapeBuilders.cpp - Constants, shapes and data movement ------------===//
//
// Builders for the ONNX ops that create constants, query shapes and move
// data (reshape, slice, gather, scatter, pad, ...). Older opsets pass some
// operands as attributes; those become small i64 constants so that every
// opset maps onto one loom op form. Shape queries of static dimensions are
// emitted as constants right away so that PyTorch-style shape arithmetic
// folds at import.
//
//===----------------------------------------------------------------------===//

#include "BuilderUtils.h"
#include "loom/Dialect/Loom/IR/ShapeValues.h"

#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SmallBitVector.h"

#include <numeric>

using namespace mlir;

namespace loom::onnx_import {
namespace {

NamedAttribute i64Attr(NodeBinder &b, StringRef name, int64_t value) {
  return b.builder().getNamedAttr(name, b.builder().getI64IntegerAttr(value));
}

NamedAttribute strAttr(NodeBinder &b, StringRef name, StringRef value) {
  return b.builder().getNamedAttr(name, b.builder().getStringAttr(value));
}

/// Reshapes input 0 to the static type ONNX inferred or declared for
/// output 0. This serves ops whose axes are only known at run time but whose
/// result shape the model states anyway; null (no error) when it does not.
Value reshapeToStaticOutput(NodeBinder &b) {
  RankedTensorType type = b.knownOutputType(0);
  RankedTensorType in = b.inputType(0);
  if (!type || !in || !type.hasStaticShape() ||
      (in.hasStaticShape() && in.getNumElements() != type.getNumElements()))
    return {};
  // allowzero: a 0 in the static shape is a real zero-sized dimension.
  return ReshapeOp::create(b.builder(), b.loc(), type, b.input(0),
                           b.i64Tensor(type.getShape()), true);
}

/// Normalizes every axis of `axes` against `rank`; reports out-of-range and
/// repeated axes.
std::optional<SmallVector<int64_t>>
normalizeAxesOrFail(NodeBinder &b, ArrayRef<int64_t> axes, int64_t rank) {
  SmallVector<int64_t> result;
  for (int64_t axis : axes) {
    std::optional<int64_t> a = normalizeAxisOrFail(b, axis, rank);
    if (!a)
      return std::nullopt;
    if (llvm::is_contained(result, *a)) {
      b.emitError() << "axis " << axis << " is repeated";
      return std::nullopt;
    }
    result.push_back(*a);
  }
  return result;
}

/// The `axes` of Squeeze/Unsqueeze/ReduceX-style ops: an attribute before
/// `inputSince`, a constant input 1 from then on. `present` tells whether
/// any axes were given at all.
std::optional<SmallVector<int64_t>>
axesAttrOrInput(NodeBinder &b, int64_t inputSince, bool &present) {
  if (b.opset() < inputSince) {
    present = b.hasAttr("axes");
    return b.intsAttr("axes");
  }
  present = b.hasInput(1);
  if (!present)
    return SmallVector<int64_t>();
  return b.constantInts(1);
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

LogicalResult buildConstant(NodeBinder &b) {
  if (b.hasAttr("value")) {
    const onnx::TensorProto *t = b.tensorAttr("value");
    if (!t)
      return failure();
    Value v = b.tensorConstant(*t);
    if (!v)
      return failure();
    b.setOutput(0, v);
    return success();
  }
  if (b.hasAttr("sparse_value"))
    return b.fail("sparse tensor constants ('sparse_value') are not supported");
  if (b.hasAttr("value_string") || b.hasAttr("value_strings"))
    return b.fail("string constants are not supported: loom has no string "
                  "tensors");
  RankedTensorType type = b.outputType(0);
  if (!type)
    return failure();
  auto &builder = b.builder();
  ElementsAttr value;
  if (b.hasAttr("value_float")) {
    std::optional<float> f = b.floatAttr("value_float", 0);
    if (!f)
      return failure();
    value = DenseElementsAttr::get(type, builder.getF32FloatAttr(*f));
  } else if (b.hasAttr("value_int")) {
    std::optional<int64_t> i = b.intAttr("value_int", 0);
    if (!i)
      return failure();
    value = DenseElementsAttr::get(type, builder.getI64IntegerAttr(*i));
  } else if (b.hasAttr("value_floats")) {
    auto fs = b.floatsAttr("value_floats");
    if (!fs)
      return failure();
    if (static_cast<int64_t>(fs->size()) != type.getNumElements())
      return b.fail("'value_floats' does not match the inferred type");
    value = DenseElementsAttr::get(type, ArrayRef<float>(*fs));
  } else if (b.hasAttr("value_ints")) {
    auto is = b.intsAttr("value_ints");
    if (!is)
      return failure();
    if (static_cast<int64_t>(is->size()) != type.getNumElements())
      return b.fail("'value_ints' does not match the inferred type");
    value = DenseElementsAttr::get(type, ArrayRef<int64_t>(*is));
  } else {
    return b.fail("the constant has no value attribute");
  }
  b.setOutput(0, ConstantOp::create(builder, b.loc(), value));
  return success();
}

/// The 0 or 1 of an element type, for one-hot style constants.
Attribute zeroOrOne(Type elementType, bool one) {
  if (auto f = dyn_cast<FloatType>(elementType))
    return FloatAttr::get(f, one ? 1.0 : 0.0);
  return IntegerAttr::get(elementType,
                          APInt(elementType.getIntOrFloatBitWidth(), one));
}

/// ConstantOfShape: the fill value is a one-element tensor attribute
/// (float 0 when absent).
LogicalResult buildConstantOfShape(NodeBinder &b) {
  RankedTensorType type = b.outputType(0);
  Value shape = b.input(0);
  if (!type || !shape)
    return failure();
  TypedAttr fill = b.builder().getF32FloatAttr(0);
  if (b.hasAttr("value")) {
    const onnx::TensorProto *t = b.tensorAttr("value");
    if (!t)
      return failure();
    Value c = b.tensorConstant(*t);
    if (!c)
      return failure();
    DenseElementsAttr attr;
    bool ok = matchPattern(c, m_Constant(&attr)) && attr.getNumElements() == 1;
    if (ok)
      fill = dyn_cast<TypedAttr>(*attr.getValues<Attribute>().begin());
    c.getDefiningOp()->erase();
    if (!ok || !fill)
      return b.fail("'value' must be a tensor of one element");
  }
  if (fill.getType() != type.getElementType())
    return b.fail("'value' does not have the inferred element type");
  auto shapeType = cast<RankedTensorType>(shape.getType());
  if (shapeType.getRank() != 1 || !shapeType.getElementType().isInteger(64))
    return b.fail("the shape must be a 1-D int64 tensor");
  b.setOutput(
      0, ConstantOfShapeOp::create(b.builder(), b.loc(), type, shape, fill));
  return success();
}

/// EyeLike: a constant with ones on the k-th diagonal; the input only
/// contributes its (static) shape.
LogicalResult buildEyeLike(NodeBinder &b) {
  RankedTensorType type = b.outputType(0);
  std::optional<int64_t> k = b.intAttr("k", 0);
  if (!type || !k || !b.input(0))
    return failure();
  if (type.getRank() != 2)
    return b.fail("EyeLike expects a 2-D input");
  if (!type.hasStaticShape())
    return b.fail("EyeLike of a dynamic shape is not supported");
  Type elementType = type.getElementType();
  if (!elementType.isIntOrFloat())
    return b.fail("EyeLike of this element type is not supported");
  Attribute zero = zeroOrOne(elementType, false);
  Attribute one = zeroOrOne(elementType, true);
  int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
  SmallVector<Attribute> values(rows * cols, zero);
  for (int64_t r = 0; r < rows; ++r)
    if (int64_t c = r + *k; c >= 0 && c < cols)
      values[r * cols + c] = one;
  b.setOutput(0, ConstantOp::create(b.builder(), b.loc(),
                                    DenseElementsAttr::get(type, values)));
  return success();
}

LogicalResult buildIdentity(NodeBinder &b) {
  Value x = b.input(0);
  if (!x)
    return failure();
  b.setOutput(0, x);
  return success();
}

/// OptionalHasElement and OptionalGetElement on what loom imports: a tensor
/// is an optional holding it, an absent input (no input, or the empty name)
/// an optional holding nothing. Optional-typed graph values themselves are
/// refused where they are declared.
LogicalResult buildOptionalHasElement(NodeBinder &b) {
  bool has = b.numInputs() > 0 && b.hasInput(0);
  if (has && !b.input(0))
    return failure();
  b.setOutput(0, b.splat(RankedTensorType::get({}, b.builder().getI1Type()),
                         has ? 1 : 0));
  return success();
}

LogicalResult buildOptionalGetElement(NodeBinder &b) {
  if (b.numInputs() == 0 || !b.hasInput(0))
    return b.fail("the optional input holds no element");
  return buildIdentity(b);
}

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

/// Shape (start/end from opset 15). Static dimensions become a constant at
/// once so that shape arithmetic downstream folds.
LogicalResult buildShape(NodeBinder &b) {
  if (!b.input(0))
    return failure();
  RankedTensorType in = b.inputType(0);
  std::optional<int64_t> start = b.intAttr("start", 0);
  std::optional<int64_t> end = b.intAttr("end", in.getRank());
  if (!start || !end)
    return failure();
  int64_t rank = in.getRank();
  auto clamp = [&](int64_t v) {
    return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank);
  };
  int64_t first = clamp(*start), last = std::max(clamp(*end), first);
  ArrayRef<int64_t> dims = in.getShape().slice(first, last - first);
  Value result;
  if (!ShapedType::isDynamicShape(dims)) {
    result = b.i64Tensor(dims);
  } else {
    auto type = RankedTensorType::get({last - first}, b.builder().getI64Type());
    result = ShapeOp::create(b.builder(), b.loc(), type, b.input(0),
                             b.builder().getI64IntegerAttr(first),
                             b.builder().getI64IntegerAttr(last));
  }
  return bindRefined(b, result);
}

LogicalResult buildSize(NodeBinder &b) {
  Value x = b.input(0);
  if (!x)
    return failure();
  RankedTensorType in = b.inputType(0);
  auto type = RankedTensorType::get({}, b.builder().getI64Type());
  Value result =
      in.hasStaticShape()
          ? b.scalar(b.builder().getI64Type(), in.getNumElements())
          : SizeOp::create(b.builder(), b.loc(), type, x).getResult();
  return bindRefined(b, result);
}

/// The result type of a Reshape of `x` whose shape is computed at run time,
/// from what import time knows of each element (ShapeValues.h): constants,
/// sizes that are static, and sizes that are the input's own at the same
/// position -- which, when they are all but one -1, give the -1 too (the
/// input's other dimensions static). Null when nothing is known.
RankedTensorType inferPartialReshapeType(Value x, Value shape, bool allowzero) {
  auto input = cast<RankedTensorType>(x.getType());
  std::optional<SmallVector<ShapeElement>> elements = shapeElements(shape);
  if (!elements)
    return {};
  SmallVector<int64_t> dims;
  // The input's dimensions that reappear at their own position.
  llvm::SmallBitVector copied(input.getRank());
  int64_t inferred = -1, known = 1;
  bool allKnown = true;
  for (auto [i, e] : llvm::enumerate(*elements)) {
    int64_t at = static_cast<int64_t>(i);
    bool inInput = at < input.getRank();
    if (e.constant) {
      int64_t d = *e.constant;
      if (d == 0 && !allowzero) {
        if (!inInput)
          return {};
        copied.set(at);
        dims.push_back(input.getDimSize(at));
        continue;
      }
      if (d == -1) {
        if (inferred >= 0)
          return {};
        inferred = at;
        dims.push_back(ShapedType::kDynamic);
        continue;
      }
      if (d < 0)
        return {};
      known *= d;
      dims.push_back(d);
      continue;
    }
    if (e.isSizeOf() && inInput && sameRunTimeSize(e.of, e.dim, x, at)) {
      copied.set(at);
      dims.push_back(input.getDimSize(at));
      continue;
    }
    allKnown = false;
    dims.push_back(ShapedType::kDynamic);
  }
  if (inferred >= 0 && allKnown && known > 0) {
    // The elements of the input not copied, over the known sizes.
    int64_t rest = 1;
    bool restStatic = true;
    for (int64_t d = 0; d < input.getRank(); ++d) {
      if (copied.test(d))
        continue;
      if (input.isDynamicDim(d))
        restStatic = false;
      else
        rest *= input.getDimSize(d);
    }
    if (restStatic && rest % known == 0)
      dims[inferred] = rest / known;
  }
  if (llvm::all_of(dims, ShapedType::isDynamic))
    return {};
  return RankedTensorType::get(dims, input.getElementType());
}

/// The result type of ONNX Reshape computed from the shape operand, for the
/// cases ONNX 1.12's inference leaves untyped (it only reads initializers,
/// while Loom has folded constant shape arithmetic by now). A constant shape
/// gives static dimensions (0 copies, -1 is inferred); otherwise only the
/// rank is known.
RankedTensorType inferReshapeType(RankedTensorType input, Value shape,
                                  bool allowzero, NodeBinder &b) {
  auto shapeType = cast<RankedTensorType>(shape.getType());
  if (shapeType.getRank() != 1 || shapeType.isDynamicDim(0))
    return {};
  DenseIntElementsAttr constant;
  if (!matchPattern(shape, m_Constant(&constant)))
    return RankedTensorType::get(
        SmallVector<int64_t>(shapeType.getDimSize(0), ShapedType::kDynamic),
        input.getElementType());
  SmallVector<int64_t> dims;
  int64_t inferred = -1, known = 1;
  for (auto [i, v] : llvm::enumerate(constant.getValues<APInt>())) {
    int64_t d = v.getSExtValue();
    if (d == 0 && !allowzero) {
      if (static_cast<int64_t>(i) >= input.getRank())
        return {};
      d = input.getDimSize(i);
    }
    if (d == -1) {
      if (inferred >= 0)
        return {};
      inferred = i;
    } else if (ShapedType::isDynamic(d)) {
      known = ShapedType::kDynamic;
    } else if (d < 0) {
      return {};
    } else if (!ShapedType::isDynamic(known)) {
      known *= d;
    }
    dims.push_back(d);
  }
  if (inferred >= 0) {
    dims[inferred] = ShapedType::kDynamic;
    if (input.hasStaticShape() && !ShapedType::isDynamic(known) && known > 0 &&
        input.getNumElements() % known == 0)
      dims[inferred] = input.getNumElements() / known;
  }
  return RankedTensorType::get(dims, input.getElementType());
}

/// `shape` as a constant when import time knows each of its elements: a
/// constant, or the input's own size at the same position -- then 0,
/// which Reshape reads as that size (unless allowzero). Exporters compute
/// a head split's [B, S, H, D] from the input's shape at run time; as
/// [0, 0, H, D] it lowers to a view instead of a reshape of run-time
/// sizes (a copy). Null when some element is neither.
Value shapeOfCopiedSizes(NodeBinder &b, Value x, Value shape, bool allowzero) {
  if (allowzero || matchPattern(shape, m_Constant()))
    return {};
  std::optional<SmallVector<ShapeElement>> elements = shapeElements(shape);
  if (!elements)
    return {};
  auto input = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> entries;
  for (auto [i, e] : llvm::enumerate(*elements)) {
    int64_t at = static_cast<int64_t>(i);
    if (e.constant)
      entries.push_back(*e.constant);
    else if (e.isSizeOf() && at < input.getRank() &&
             sameRunTimeSize(e.of, e.dim, x, at))
      entries.push_back(0);
    else
      return {};
  }
  return b.i64Tensor(entries);
}

LogicalResult buildReshape(NodeBinder &b) {
  RankedTensorType type = b.knownOutputType(0);
  Value x = b.input(0);
  if (!x)
    return failure();
  Value shape;
  std::optional<int64_t> allowzero = b.intAttr("allowzero", 0);
  if (!allowzero)
    return failure();
  if (b.opset() < 5) {
    auto dims = b.intsAttr("shape");
    if (!dims)
      return failure();
    shape = b.i64Tensor(*dims);
  } else {
    shape = b.input(1);
  }
  if (!shape)
    return failure();
  auto shapeType = cast<RankedTensorType>(shape.getType());
  if (shapeType.getRank() != 1 || !shapeType.getElementType().isInteger(64))
    return b.fail("the shape must be a 1-D int64 tensor");
  if (!type || !type.hasStaticShape()) {
    // What ONNX's inference and ours know, dimension by dimension.
    RankedTensorType ours =
        inferReshapeType(b.inputType(0), shape, *allowzero != 0, b);
    if (RankedTensorType partial =
            inferPartialReshapeType(x, shape, *allowzero != 0))
      ours = mergeStaticSizes(ours, partial);
    type = mergeStaticSizes(type, ours);
  }
  if (!type)
    return b.outputType(0) ? success() : failure();
  if (Value constant = shapeOfCopiedSizes(b, x, shape, *allowzero != 0))
    shape = constant;
  b.setOutput(0, ReshapeOp::create(b.builder(), b.loc(), type, x, shape,
                                   *allowzero != 0));
  return success();
}

/// Flatten: a reshape to [prod(dims[:axis]), prod(dims[axis:])]. A side
/// that is fully static gives its product and the other side is -1; only
/// when both sides are dynamic is the shape computed at run time.
LogicalResult buildFlatten(NodeBinder &b) {
  RankedTensorType type = b.outputType(0);
  Value x = b.input(0);
  if (!type || !x)
    return failure();
  int64_t rank = b.inputType(0).getRank();
  std::optional<int64_t> axis = b.intAttr("axis", 1);
  if (!axis)
    return failure();
  int64_t a = *axis < 0 ? *axis + rank : *axis;
  if (a < 0 || a > rank)
    return b.fail("axis " + Twine(*axis) + " is out of range for rank " +
                  Twine(rank));
  auto &builder = b.builder();
  ArrayRef<int64_t> dims = b.inputType(0).getShape();
  auto product = [](ArrayRef<int64_t> ds) -> std::optional<int64_t> {
    if (ShapedType::isDynamicShape(ds))
      return std::nullopt;
    return std::accumulate(ds.begin(), ds.end(), int64_t{1},
                           std::multiplies<int64_t>());
  };
  std::optional<int64_t> outer = product(dims.take_front(a));
  std::optional<int64_t> inner = product(dims.drop_front(a));
  Value shape;
  if (outer || inner) {
    shape = b.i64Tensor({outer ? *outer : -1, inner ? *inner : -1});
  } else {
    Type i64 = builder.getI64Type();
    auto part = [&](int64_t from, int64_t to) -> Value {
      Value s = ShapeOp::create(
          builder, b.loc(), RankedTensorType::get({to - from}, i64), x,
          builder.getI64IntegerAttr(from), builder.getI64IntegerAttr(to));
      return createInferred<ReduceProdOp>(b, s, ArrayRef<int64_t>{0}, true);
    };
    shape = createInferred<ConcatOp>(b, ValueRange{part(0, a), part(a, rank)},
                                     builder.getI64IntegerAttr(0));
  }
  // A fully static shape may hold real zeros, which must not copy input
  // dimensions.
  b.setOutput(
      0, ReshapeOp::create(builder, b.loc(), type, x, shape, outer && inner));
  return success();
}

LogicalResult buildTranspose(NodeBinder &b) {
  Value x = b.input(0);
  if (!x)
    return failure();
  RankedTensorType in = b.inputType(0);
  SmallVector<int64_t> reversed;
  for (int64_t i = in.getRank() - 1; i >= 0; --i)
    reversed.push_back(i);
  std::optional<SmallVector<int64_t>> perm = b.intsAttr("perm", reversed);
  if (!perm)
    return failure();
  if (static_cast<int64_t>(perm->size()) != in.getRank())
    return b.fail("'perm' must have one entry per input dimension");
  llvm::SmallBitVector seen(in.getRank());
  for (int64_t p : *perm) {
    if (p < 0 || p >= in.getRank() || seen.test(p))
      return b.fail("'perm' is not a permutation of the input dimensions");
    seen.set(p);
  }
  return buildSimple<TransposeOp>(
      b, {x},
      {b.builder().getNamedAttr("perm",
                                b.builder().getDenseI64ArrayAttr(*perm))});
}

/// Squeeze/Unsqueeze whose axes input is not constant (or whose axes
/// attribute is malformed, already reported): a reshape to the stated
/// output shape when it is static, else an error.
LogicalResult nonConstantAxes(NodeBinder &b) {
  if (b.opset() < 13 || !b.input(0))
    return failure();
  if (Value v = reshapeToStaticOutput(b)) {
    b.setOutput(0, v);
    return success();
  }
  return b.fail("the 'axes' input must be a constant known at import time "
                "unless the output shape is static");
}

LogicalResult buildSqueeze(NodeBinder &b) {
  Value x = b.input(0);
  if (!x)
    return failure();
  RankedTensorType in = b.inputType(0);
  bool present;
  std::optional<SmallVector<int64_t>> axes = axesAttrOrInput(b, 13, present);
  if (!axes)
    return nonConstantAxes(b);
  axes = normalizeAxesOrFail(b, *axes, in.getRank());
  if (!axes)
    return failure();
  for (int64_t a : *axes)
    if (!in.isDynamicDim(a) && in.getDimSize(a) != 1)
      return b.fail("dimension " + Twine(a) + " has size " +
                    Twine(in.getDimSize(a)) + ", not 1");
  // Without axes ONNX squeezes every dimension of size 1, which is only
  // known when no dimension is dynamic.
  if (axes->empty() && !in.hasStaticShape())
    return b.fail("Squeeze without axes of an input with dynamic dimensions "
                  "is not supported");
  llvm::sort(*axes);
  return buildSimple<SqueezeOp>(
      b, {x},
      {b.builder().getNamedAttr("axes",
                                b.builder().getDenseI64ArrayAttr(*axes))});
}

LogicalResult buildUnsqueeze(NodeBinder &b) {
  Value x = b.input(0);
  if (!x)
    return failure();
  RankedTensorType in = b.inputType(0);
  bool present;
  std::optional<SmallVector<int64_t>> axes = axesAttrOrInput(b, 13, present);
  if (!axes)
    return nonConstantAxes(b);
  if (!present || axes->empty())
    return b.fail("Unsqueeze needs at least one axis");
  // Unsqueeze axes name positions of the result, so negative ones count
  // from the end of the output rank.
  axes = normalizeAxesOrFail(b, *axes, in.getRank() + axes->size());
  if (!axes)
    return failure();
  llvm::sort(*axes);
  return buildSimple<UnsqueezeOp>(
      b, {x},
      {b.builder().getNamedAttr("axes",
                                b.builder().getDenseI64ArrayAttr(*axes))});
}

//===----------------------------------------------------------------------===//
// Joining and cutting
//===----------------------------------------------------------------------===//

LogicalResult buildConcat(NodeBinder &b) {
  SmallVector<Value> inputs = b.variadicInputs();
  if (inputs.empty())
    return b.fail("Concat needs at least one input");
  int64_t rank = cast<RankedTensorType>(inputs[0].getType()).getRank();
  // Concat-1 defaults the axis to 1; from opset 4 it is required.
  if (b.opset() >= 4 && !b.hasAttr("axis"))
    return b.fail("attribute 'axis' is required");
  std::optional<int64_t> axis = b.intAttr("axis", 1);
  if (!axis)
    return failure();
  std::optional<int64_t> a = normalizeAxisOrFail(b, *axis, rank);
  if (!a)
    return failure();
  for (Value v : inputs)
    if (cast<RankedTensorType>(v.getType()).getRank() != rank)
      return b.fail("all inputs must have the same rank");
  return buildSimple<ConcatOp>(b, inputs, {i64Attr(b, "axis", *a)});
}

/// Split: sizes from the `split` attribute (before opset 13), the `split`
/// input (from 13; it must be constant), or equal parts.
LogicalResult buildSplit(NodeBinder &b) {
  Value x = b.input(0);
  if (!x)
    return failure();
  RankedTensorType in = b.inputType(0);
  std::optional<int64_t> axisAttr = b.intAttr("axis", 0);
  if (!axisAttr)
    return failure();
  std::optional<int64_t> axis = normalizeAxisOrFail(b, *axisAttr, in.getRank());
  if (!axis)
    return failure();
  int64_t count = b.numOutputs();
  std::optional<SmallVector<int64_t>> sizes;
  if (b.opset() < 13 && b.hasAttr("split")) {
    sizes = b.intsAttr("split");
    if (!sizes)
      return failure();
  } else if (b.hasInput(1)) {
    // Split-1 could also take the sizes as a second input.
    sizes = b.constantInts(1);
    if (!sizes) {
      // Sizes known only at run time: the stated output shapes give them.
      sizes.emplace();
      for (int64_t i = 0; i < count; ++i) {
        RankedTensorType t = b.knownOutputType(i);
        if (!t || t.getRank() != in.getRank() || t.isDynamicDim(*axis))
          return b.fail("the 'split' input must be a constant known at "
                        "import time unless the output sizes are static");
        sizes->push_back(t.getDimSize(*axis));
      }
    }
  }
  int64_t dim = in.getDimSize(*axis);
  if (sizes) {
    if (static_cast<int64_t>(sizes->size()) != count)
      return b.fail("'split' has " + Twine(sizes->size()) + " sizes for " +
                    Twine(count) + " outputs");
    int64_t total = 0;
    for (int64_t s : *sizes) {
      if (s < 0)
        return b.fail("split sizes must not be negative");
      total += s;
    }
    if (!ShapedType::isDynamic(dim) && total != dim)
      return b.fail("split sizes add up to " + Twine(total) + ", not " +
                    Twine(dim));
  } else if (!ShapedType::isDynamic(dim)) {
    if (b.opset() >= 18) {
      std::optional<int64_t> n = b.intAttr("num_outputs", count);
      if (!n)
        return failure();
      if (*n != count)
        return b.fail("'num_outputs' does not match the number of outputs");
    }
    // Before opset 18 the parts must be equal; from 18 the last may be
    // smaller.
    int64_t part = b.opset() >= 18 ? (dim + count - 1) / count : dim / count;
    if (b.opset() < 18 && dim % count != 0)
      return b.fail("dimension " + Twine(dim) + " does not split into " +
                    Twine(count) + " equal parts");
    sizes.emplace();
    for (int64_t i = 0, left = dim; i < count; ++i) {
      sizes->push_back(std::min(part, left));
      left -= sizes->back();
    }
  }
  SmallVector<Type> types;
  for (int64_t i = 0; i < count; ++i) {
    SmallVector<int64_t> shape(in.getShape());
    shape[*axis] = sizes ? (*sizes)[i] : ShapedType::kDynamic;
    auto computed = RankedTensorType::get(shape, in.getElementType());
    RankedTensorType known = b.knownOutputType(i);
    types.push_back(known && areRefinedTypesCompatible(TypeRange{computed},
                                                       TypeRange{known})
                        ? known
                        : computed);
  }
  SmallVector<NamedAttribute> attrs{i64Attr(b, "axis", *axis)};
  if (sizes)
    attrs.push_back(b.builder().getNamedAttr(
        "sizes", b.builder().getDenseI64ArrayAttr(*sizes)));
  auto op = SplitOp::create(b.builder(), b.loc(), types, ValueRange{x}, attrs);
  b.setOutputs(op->getResults());
  return success();
}

/// Slice: attributes before opset 10, inputs (possibly computed at run time)
/// from then on. Constant axes are normalized; steps without axes get the
/// default axes spelled out because loom.slice orders its optional operands.
LogicalResult buildSlice(NodeBinder &b) {
  Value x = b.input(0);
  if (!x)
    return failure();
  int64_t rank = b.inputType(0).getRank();
  // A slice keeps its input's rank; sizes that depend on run-time starts
  // and ends are unknown until then.
  RankedTensorType type = b.knownOutputType(0);
  if (!type)
    type =
        RankedTensorType::get(SmallVector<int64_t>(rank, ShapedType::kDynamic),
                              b.inputType(0).getElementType());
  Value starts, ends, axes, steps;
  std::optional<SmallVector<int64_t>> constAxes;
  if (b.opset() < 10) {
    auto s = b.intsAttr("starts"), e = b.intsAttr("ends");
    if (!s || !e)
      return failure();
    if (!b.hasAttr("starts") || !b.hasAttr("ends"))
      return b.fail("attributes 'starts' and 'ends' are required");
    if (s->size() != e->size())
      return b.fail("'starts' and 'ends' must have one length");
    starts = b.i64Tensor(*s);
    ends = b.i64Tensor(*e);
    if (b.hasAttr("axes")) {
      constAxes = b.intsAttr("axes");
      if (!constAxes)
        return failure();
    }
  } else {
    starts = b.input(1);
    ends = b.input(2);
    if (!starts || !ends)
      return failure();
    if (b.hasInput(3)) {
      constAxes = b.constantInts(3);
      if (!constAxes)
        axes = b.input(3);
    }
    steps = b.optionalInput(4);
    if (std::optional<SmallVector<int64_t>> s = b.constantInts(4))
      if (llvm::is_contained(*s, 0))
        return b.fail("slice steps must not be 0");
  }
  for (Value v : {starts, ends, axes, steps}) {
    if (!v)
      continue;
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getRank() != 1 ||
        !(t.getElementType().isInteger(32) || t.getElementType().isInteger(64)))
      return b.fail("starts, ends, axes and steps must be 1-D int32 or int64 "
                    "tensors");
  }
  if (constAxes) {
    constAxes = normalizeAxesOrFail(b, *constAxes, rank);
    if (!constAxes)
      return failure();
    axes = b.i64Tensor(*constAxes);
  } else if (steps && !axes) {
    int64_t length = cast<RankedTensorType>(starts.getType()).getDimSize(0);
    if (ShapedType::isDynamic(length))
      return b.fail("steps without axes need starts of a static length");
    SmallVector<int64_t> iota(length);
    std::iota(iota.begin(), iota.end(), 0);
    axes = b.i64Tensor(iota);
  }
  // Without a known type: the dimensions no entry names keep the input's
  // size (a [1, 128] buffer sliced along axis 1 stays [1, ?]; a dynamic
  // size there would lose the broadcast of the 1).
  if (!b.knownOutputType(0) && (constAxes || !axes)) {
    SmallVector<int64_t> named;
    if (constAxes) {
      named = *constAxes;
    } else {
      int64_t length = cast<RankedTensorType>(starts.getType()).getDimSize(0);
      if (!ShapedType::isDynamic(length))
        for (int64_t i = 0; i < length; ++i)
          named.push_back(i);
      else
        for (int64_t i = 0; i < rank; ++i)
          named.push_back(i);
    }
    SmallVector<int64_t> shape(b.inputType(0).getShape());
    for (int64_t axis : named)
      if (axis >= 0 && axis < rank)
        shape[axis] = ShapedType::kDynamic;
    type = RankedTensorType::get(shape, type.getElementType());
  }
  b.setOutput(0, SliceOp::create(b.builder(), b.loc(), type, x, starts, ends,
                                 axes, steps));
  return success();
}

//===----------------------------------------------------------------------===//
// Gather and scatter
//===----------------------------------------------------------------------===//

/// Checks that input `i` is an int32 or int64 index tensor.
LogicalResult requireIndices(NodeBinder &b, size_t i) {
  RankedTensorType t = b.inputType(i);
  if (!t)
    return failure();
  if (!t.getElementType().isInteger(32) && !t.getElementType().isInteger(64))
    return b.fail("indices must be int32 or int64");
  return success();
}

template <typename OpT> LogicalResult buildGatherLike(NodeBinder &b) {
  Value data = b.input(0), indices = b.input(1);
  if (!data || !indices || failed(requireIndices(b, 1)))
    return failure();
  std::optional<int64_t> axis = b.intAttr("axis", 0);
  if (!axis)
    return failure();
  std::optional<int64_t> a =
      normalizeAxisOrFail(b, *axis, b.inputType(0).getRank());
  if (!a)
    return failure();
  return buildSimple<OpT>(b, {data, indices}, {i64Attr(b, "axis", *a)});
}

LogicalResult buildGatherND(NodeBinder &b) {
  Value data = b.input(0), indices = b.input(1);
  if (!data || !indices || failed(requireIndices(b, 1)))
    return failure();
  std::optional<int64_t> batchDims = b.intAttr("batch_dims", 0);
  if (!batchDims)
    return failure();
  int64_t dataRank = b.inputType(0).getRank();
  int64_t indicesRank = b.inputType(1).getRank();
  if (*batchDims < 0 || *batchDims >= std::min(dataRank, indicesRank))
    return b.fail("'batch_dims' must be smaller than both input ranks");
  return buildSimple<GatherNDOp>(b, {data, indices},
                                 {i64Attr(b, "batch_dims", *batchDims)});
}

/// The `reduction` attribute of ScatterElements/ScatterND (from opset 16).
std::optional<std::string> scatterReduction(NodeBinder &b) {
  std::optional<std::string> reduction = b.stringAttr("reduction", "none");
  if (!reduction)
    return std::nullopt;
  if (!llvm::is_contained({"none", "add", "mul", "max", "min"}, *reduction)) {
    (void)b.fail("reduction '" + *reduction + "' is not supported");
    return std::nullopt;
  }
  return reduction;
}

LogicalResult buildScatterElements(NodeBinder &b) {
  Value data = b.input(0), indices = b.input(1), updates = b.input(2);
  if (!data || !indices || !updates || failed(requireIndices(b, 1)))
    return failure();
  std::optional<int64_t> axis = b.intAttr("axis", 0);
  std::optional<std::string> reduction = scatterReduction(b);
  if (!axis || !reduction)
    return failure();
  std::optional<int64_t> a =
      normalizeAxisOrFail(b, *axis, b.inputType(0).getRank());
  if (!a)
    return failure();
  if (b.inputType(1).getRank() != b.inputType(0).getRank() ||
      b.inputType(2).getRank() != b.inputType(0).getRank())
    return b.fail("indices and updates must have the rank of data");
  return buildSimple<ScatterElementsOp>(
      b, {data, indices, updates},
      {i64Attr(b, "axis", *a), strAttr(b, "reduction", *reduction)});
}

LogicalResult buildScatterND(NodeBinder &b) {
  Value data = b.input(0), indices = b.input(1), updates = b.input(2);
  if (!data || !indices || !updates || failed(requireIndices(b, 1)))
    return failure();
  std::optional<std::string> reduction = scatterReduction(b);
  if (!reduction)
    return failure();
  return buildSimple<ScatterNDOp>(b, {data, indices, updates},
                                  {strAttr(b, "reduction", *reduction)});
}

//===----------------------------------------------------------------------===//
// Padding, broadcasting, tiling
//===----------------------------------------------------------------------===//

/// Pad: pads/value/mode attributes before opset 11 (`paddings` in Pad-1),
/// then a pads input, an optional constant_value input and (opset 18) an
/// optional axes input that must be constant.
/// Pad's pads for the axes given at run time (input 3), spelled out for
/// every axis: the listed axes are normalized by a lookup in [0, rank) (a
/// Gather: negative axes count from the end, out-of-range ones are a
/// run-time error) and the pads scattered into zeros at `axis` and
/// `rank + axis`. Null after reporting when the sizes cannot agree.
Value padsOfEveryAxis(NodeBinder &b, Value pads, int64_t rank) {
  Value axes = b.input(3);
  RankedTensorType axesType = b.inputType(3);
  if (!axes || !axesType)
    return {};
  if (axesType.getRank() != 1 || axesType.isDynamicDim(0)) {
    (void)b.fail("axes must be a 1-D tensor of a size known at import time");
    return {};
  }
  int64_t count = axesType.getDimSize(0);
  RankedTensorType padsType = typeOf(pads);
  if (!padsType.isDynamicDim(0) && padsType.getDimSize(0) != 2 * count) {
    (void)b.fail("pads must hold 2 values per listed axis");
    return {};
  }
  OpBuilder &builder = b.builder();
  Type i64 = builder.getI64Type();
  auto vectorType = [&](int64_t size) {
    return RankedTensorType::get({size}, i64);
  };
  Value normalized = GatherOp::create(
      builder, b.loc(), vectorType(count),
      b.i64Tensor(llvm::to_vector(llvm::seq<int64_t>(0, rank))),
      castTo(b, axes, i64), builder.getI64IntegerAttr(0));
  Value indices = createInferred<ConcatOp>(
      b,
      ValueRange{normalized,
                 createInferred<AddOp>(b, normalized, b.scalar(i64, rank))},
      builder.getI64IntegerAttr(0));
  if (padsType.isDynamicDim(0))
    pads =
        tensor::CastOp::create(builder, b.loc(), vectorType(2 * count), pads);
  auto fullType = vectorType(2 * rank);
  return ScatterElementsOp::create(builder, b.loc(), fullType,
                                   b.splat(fullType, 0), indices, pads,
                                   static_cast<uint64_t>(0), "none");
}

LogicalResult buildPad(NodeBinder &b) {
  RankedTensorType type = b.outputType(0);
  Value x = b.input(0);
  if (!type || !x)
    return failure();
  int64_t rank = b.inputType(0).getRank();
  Type elementType = type.getElementType();
  std::optional<std::string> mode = b.stringAttr("mode", "constant");
  if (!mode)
    return failure();
  if (!llvm::is_contained({"constant", "reflect", "edge", "wrap"}, *mode))
    return b.fail("pad mode '" + *mode + "' is not supported");
  Value pads, value;
  if (b.opset() < 11) {
    StringRef name = b.opset() < 2 ? "paddings" : "pads";
    if (!b.hasAttr(name))
      return b.fail("attribute '" + name + "' is required");
    std::optional<SmallVector<int64_t>> p = b.intsAttr(name);
    std::optional<float> v = b.floatAttr("value", 0);
    if (!p || !v)
      return failure();
    if (static_cast<int64_t>(p->size()) != 2 * rank)
      return b.fail("'" + name + "' must hold 2 * rank values");
    pads = b.i64Tensor(*p);
    if (*v != 0 && *mode == "constant")
      value = b.scalar(elementType, *v);
  } else {
    pads = b.input(1);
    if (!pads)
      return failure();
    auto padsType = cast<RankedTensorType>(pads.getType());
    if (padsType.getRank() != 1 || !padsType.getElementType().isInteger(64))
      return b.fail("pads must be a 1-D int64 tensor");
    if (*mode == "constant")
      value = b.optionalInput(2);
    if (value &&
        cast<RankedTensorType>(value.getType()).getElementType() != elementType)
      return b.fail("constant_value must have the element type of the input");
    if (b.hasInput(3)) {
      // Pads for a subset of axes: spell out the pads of every axis.
      std::optional<SmallVector<int64_t>> axes = b.constantInts(3);
      std::optional<SmallVector<int64_t>> p = b.constantInts(1);
      if (axes && p) {
        axes = normalizeAxesOrFail(b, *axes, rank);
        if (!axes)
          return failure();
        if (p->size() != 2 * axes->size())
          return b.fail("pads must hold 2 values per listed axis");
        SmallVector<int64_t> full(2 * rank, 0);
        for (auto [i, a] : llvm::enumerate(*axes)) {
          full[a] = (*p)[i];
          full[rank + a] = (*p)[axes->size() + i];
        }
        pads = b.i64Tensor(full);
      } else {
        pads = padsOfEveryAxis(b, pads, rank);
        if (!pads)
          return failure();
      }
    }
  }
  // Constant pads of static dimensions give static sizes, which ONNX's
  // inference leaves out for opsets newer than it knows.
  DenseIntElementsAttr constantPads;
  RankedTensorType in = b.inputType(0);
  if (matchPattern(pads, m_Constant(&constantPads)) &&
      constantPads.getNumElements() == 2 * rank) {
    SmallVector<int64_t> p(constantPads.getValues<int64_t>());
    SmallVector<int64_t> shape(type.getShape());
    for (int64_t d = 0; d < rank; ++d)
      if (type.isDynamicDim(d) && !in.isDynamicDim(d) &&
          in.getDimSize(d) + p[d] + p[rank + d] >= 0)
        shape[d] = in.getDimSize(d) + p[d] + p[rank + d];
    type = RankedTensorType::get(shape, elementType);
  }
  b.setOutput(0, PadOp::create(b.builder(), b.loc(), type, x, pads, value,
                               b.builder().getStringAttr(*mode)));
  return success();
}

/// CenterCropPad-18: each listed axis (`axes`, default all) becomes the
/// size `shape` names, centred: a larger input is cropped, (in - size) / 2
/// elements dropped in front and the rest behind; a smaller one padded
/// with zeros, (size - in) / 2 in front and the rest behind, as ONNX's
/// function body does. The sizes come from the `shape` input when it is a
/// constant, else from the declared output type (part of the model's
/// contract, as for Resize's sizes); the listed axes need static sizes.
LogicalResult buildCenterCropPad(NodeBinder &b) {
  if (failed(b.rejectUnknownAttrs({"axes"})))
    return failure();
  Value x = b.input(0);
  RankedTensorType shapeType = b.inputType(1);
  if (!x || !shapeType)
    return failure();
  RankedTensorType in = typeOf(x);
  int64_t rank = in.getRank();
  SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  if (b.hasAttr("axes")) {
    std::optional<SmallVector<int64_t>> listed = b.intsAttr("axes");
    if (!listed)
      return failure();
    std::optional<SmallVector<int64_t>> normalized =
        normalizeAxesOrFail(b, *listed, rank);
    if (!normalized)
      return failure();
    axes = std::move(*normalized);
  }
  auto count = static_cast<int64_t>(axes.size());
  if (shapeType.getRank() != 1 ||
      (!shapeType.isDynamicDim(0) && shapeType.getDimSize(0) != count))
    return b.emitError() << "'shape' must hold one size per "
                         << (b.hasAttr("axes") ? "listed axis" : "axis") << " ("
                         << count << "), got " << shapeType;
  std::optional<SmallVector<int64_t>> sizes = b.constantInts(1);
  if (!sizes) {
    RankedTensorType out = b.knownOutputType(0);
    if (!out || out.getRank() != rank)
      return b.fail("input 1 ('shape') must be a constant, or the output "
                    "shape known");
    sizes.emplace();
    for (int64_t axis : axes) {
      if (out.isDynamicDim(axis))
        return b.fail("input 1 ('shape') must be a constant, or the output "
                      "sizes of the listed axes static");
      sizes->push_back(out.getDimSize(axis));
    }
  }
  SmallVector<int64_t> pads(2 * rank, 0), starts, ends, sliced;
  SmallVector<int64_t> padded(in.getShape()), result(in.getShape());
  for (auto [axis, size] : llvm::zip(axes, *sizes)) {
    if (in.isDynamicDim(axis))
      return b.emitError() << "needs a static size on axis " << axis << ", got "
                           << in;
    if (size < 0)
      return b.emitError() << "'shape' holds the negative size " << size;
    int64_t inSize = in.getDimSize(axis);
    result[axis] = size;
    if (size > inSize) {
      pads[axis] = (size - inSize) / 2;
      pads[rank + axis] = size - inSize - pads[axis];
      padded[axis] = size;
    } else if (size < inSize) {
      starts.push_back((inSize - size) / 2);
      ends.push_back(starts.back() + size);
      sliced.push_back(axis);
    }
  }
  OpBuilder &builder = b.builder();
  Value y = x;
  if (llvm::any_of(pads, [](int64_t p) { return p != 0; }))
    y = PadOp::create(builder, b.loc(), in.clone(padded), y, b.i64Tensor(pads),
                      Value(), "constant");
  if (!sliced.empty())
    y = SliceOp::create(builder, b.loc(), in.clone(result), y,
                        b.i64Tensor(starts), b.i64Tensor(ends),
                        b.i64Tensor(sliced), Value());
  return bindRefined(b, y);
}

/// Checks that input `i` is a 1-D int64 tensor (a loom shape tensor).
LogicalResult requireShapeTensor(NodeBinder &b, size_t i, StringRef what) {
  RankedTensorType t = b.inputType(i);
  if (!t) {
    (void)b.input(i); // Reports the missing input.
    return failure();
  }
  if (t.getRank() != 1 || !t.getElementType().isInteger(64))
    return b.fail(what + " must be a 1-D int64 tensor");
  return success();
}

/// The result type of Expand from what import time knows of each element
/// of the shape (ShapeValues.h), or null: a constant above 1 is the size, a
/// 1 or the input's own run-time size keeps the input's size.
RankedTensorType inferPartialExpandType(Value input, Value shape) {
  std::optional<SmallVector<ShapeElement>> elements = shapeElements(shape);
  if (!elements)
    return {};
  auto in = cast<RankedTensorType>(input.getType());
  int64_t rank = std::max<int64_t>(in.getRank(), elements->size());
  SmallVector<int64_t> dims;
  for (int64_t k = 0; k < rank; ++k) {
    int64_t inAt = k - (rank - in.getRank());
    int64_t shapeAt = k - (rank - static_cast<int64_t>(elements->size()));
    int64_t inputDim = inAt >= 0 ? in.getDimSize(inAt) : 1;
    if (shapeAt < 0) {
      dims.push_back(inputDim);
      continue;
    }
    const ShapeElement &e = (*elements)[shapeAt];
    if (e.constant) {
      int64_t c = *e.constant;
      if (c == 1)
        dims.push_back(inputDim);
      else if (c > 1 && (ShapedType::isDynamic(inputDim) || inputDim == 1 ||
                         inputDim == c))
        dims.push_back(c);
      else
        return {};
      continue;
    }
    if (e.isSizeOf() && inAt >= 0 &&
        sameRunTimeSize(e.of, e.dim, input, inAt)) {
      dims.push_back(inputDim);
      continue;
    }
    // Broadcasting keeps an input size above 1.
    dims.push_back(!ShapedType::isDynamic(inputDim) && inputDim > 1
                       ? inputDim
                       : ShapedType::kDynamic);
  }
  return RankedTensorType::get(dims, in.getElementType());
}

LogicalResult buildExpand(NodeBinder &b) {
  if (!b.input(0) || failed(requireShapeTensor(b, 1, "the shape")))
    return failure();
  RankedTensorType known = b.knownOutputType(0);
  if (known && known.hasStaticShape())
    return buildSimple<ExpandOp>(b, {b.input(0), b.input(1)});
  RankedTensorType ours = inferPartialExpandType(b.input(0), b.input(1));
  if (!ours)
    return buildSimple<ExpandOp>(b, {b.input(0), b.input(1)});
  if (known)
    ours = mergeStaticSizes(ours, known);
  b.setOutput(
      0, ExpandOp::create(b.builder(), b.loc(), ours, b.input(0), b.input(1)));
  return success();
}

LogicalResult buildTile(NodeBinder &b) {
  if (!b.input(0) || failed(requireShapeTensor(b, 1, "repeats")))
    return failure();
  return buildSimple<TileOp>(b, {b.input(0), b.input(1)});
}

//===----------------------------------------------------------------------===//
// Generators and index ops
//===----------------------------------------------------------------------===//

LogicalResult buildRange(NodeBinder &b) {
  Value start = b.input(0), limit = b.input(1), delta = b.input(2);
  if (!start || !limit || !delta)
    return failure();
  for (size_t i = 0; i < 3; ++i)
    if (b.inputType(i).getRank() != 0)
      return b.fail("start, limit and delta must be scalars");
  if (std::optional<SmallVector<double>> d = b.constantFloats(2))
    if ((*d)[0] == 0)
      return b.fail("delta must not be 0");
  return buildSimple<RangeOp>(b, {start, limit, delta});
}

LogicalResult buildOneHot(NodeBinder &b) {
  Value indices = b.input(0), depth = b.input(1), values = b.input(2);
  if (!indices || !depth || !values)
    return failure();
  std::optional<int64_t> axis = b.intAttr("axis", -1);
  if (!axis)
    return failure();
  // The axis names a dimension of the output, one rank above the indices.
  std::optional<int64_t> a =
      normalizeAxisOrFail(b, *axis, b.inputType(0).getRank() + 1);
  if (!a)
    return failure();
  RankedTensorType valuesType = b.inputType(2);
  if (valuesType.getRank() != 1 ||
      (!valuesType.isDynamicDim(0) && valuesType.getDimSize(0) != 2))
    return b.fail("values must be a 1-D tensor of [off, on]");
  return buildSimple<OneHotOp>(b, {indices, depth, values},
                               {i64Attr(b, "axis", *a)});
}

LogicalResult buildTrilu(NodeBinder &b) {
  RankedTensorType type = b.outputType(0);
  Value x = b.input(0);
  std::optional<int64_t> upper = b.intAttr("upper", 1);
  if (!type || !x || !upper)
    return failure();
  if (b.inputType(0).getRank() < 2)
    return b.fail("Trilu expects an input of rank >= 2");
  Value k = b.optionalInput(1);
  if (k) {
    RankedTensorType kType = b.inputType(1);
    if (!kType.getElementType().isInteger(64) ||
        (kType.hasStaticShape() && kType.getNumElements() != 1))
      return b.fail("k must be an int64 scalar");
  }
  b.setOutput(0, TriluOp::create(b.builder(), b.loc(), type, x, k,
                                 b.builder().getBoolAttr(*upper != 0)));
  return success();
}

LogicalResult buildNonZero(NodeBinder &b) {
  return buildSimple<NonZeroOp>(b, {b.input(0)});
}

/// ReverseSequence: along the time axis, batch entry b reverses its first
/// seq_lens[b] steps and keeps the rest. With t the time index,
///   source(t, b) = t < len[b] ? len[b] - 1 - t : t
/// and the result is a gather_elements of the input along the time axis with
/// `source` broadcast over the remaining axes. Needs static time and batch
/// sizes.
LogicalResult buildReverseSequence(NodeBinder &b) {
  Value x = b.input(0), lens = b.input(1);
  RankedTensorType type = b.outputType(0);
  std::optional<int64_t> timeAxis = b.intAttr("time_axis", 0);
  std::optional<int64_t> batchAxis = b.intAttr("batch_axis", 1);
  if (!x || !lens || !type || !timeAxis || !batchAxis)
    return failure();
  bool timeFirst = *timeAxis == 0 && *batchAxis == 1;
  bool batchFirst = *timeAxis == 1 && *batchAxis == 0;
  if (!timeFirst && !batchFirst)
    return b.fail("time_axis and batch_axis must be 0 and 1 in some order");
  if (type.getRank() < 2 || !type.hasStaticShape())
    return b.fail("needs a static input of rank >= 2");
  int64_t steps = type.getDimSize(*timeAxis);
  int64_t batch = type.getDimSize(*batchAxis);
  auto &builder = b.builder();
  Type i64 = builder.getI64Type();
  // [T, B] (time-major) or [B, T] index grids, then broadcast to the input.
  SmallVector<int64_t> tShape(2, 1), lShape(2, 1);
  tShape[*timeAxis] = steps;
  lShape[*batchAxis] = batch;
  SmallVector<int64_t> tValues;
  for (int64_t t = 0; t < steps; ++t)
    tValues.push_back(t);
  Value t = ConstantOp::create(
      builder, b.loc(),
      DenseElementsAttr::get(RankedTensorType::get(tShape, i64),
                             ArrayRef<int64_t>(tValues)));
  auto lensType = RankedTensorType::get(lShape, i64);
  Value len = lens;
  if (cast<RankedTensorType>(lens.getType()).getElementType() != i64)
    len = CastOp::create(builder, b.loc(), RankedTensorType::get({batch}, i64),
                         len);
  len = ReshapeOp::create(builder, b.loc(), lensType, len, b.i64Tensor(lShape),
                          false);
  Value inside = createInferred<LessOp>(b, t, len);
  Value reversed = createInferred<SubOp>(
      b, createInferred<SubOp>(b, len, b.scalar(i64, 1)), t);
  Value source = createInferred<WhereOp>(b, inside, reversed, t);
  SmallVector<int64_t> gridShape(type.getRank(), 1);
  gridShape[0] = cast<RankedTensorType>(source.getType()).getDimSize(0);
  gridShape[1] = cast<RankedTensorType>(source.getType()).getDimSize(1);
  Value grid =
      ReshapeOp::create(builder, b.loc(), RankedTensorType::get(gridShape, i64),
                        source, b.i64Tensor(gridShape), false);
  auto indexType = RankedTensorType::get(type.getShape(), i64);
  Value indices = ExpandOp::create(builder, b.loc(), indexType, grid,
                                   b.i64Tensor(type.getShape()));
  b.setOutput(0, GatherElementsOp::create(builder, b.loc(), type, x, indices,
                                          *timeAxis));
  return success();
}

} // namespace

void registerShapeBuilders(OpTable &t) {
  t.add("", "ReverseSequence", 10, buildReverseSequence);
  t.add("", "Constant", 1, buildConstant);
  t.add("", "ConstantOfShape", 9, buildConstantOfShape);
  t.add("", "EyeLike", 9, buildEyeLike);
  t.add("", "Identity", 1, buildIdentity);
  t.add("", "OptionalHasElement", 15, buildOptionalHasElement);
  t.add("", "OptionalGetElement", 15, buildOptionalGetElement);
  t.add("", "Shape", 1, buildShape);
  t.add("", "Size", 1, buildSize);
  t.add("", "Reshape", 1, buildReshape);
  t.add("", "Flatten", 1, buildFlatten);
  t.add("", "Transpose", 1, buildTranspose);
  t.add("", "Squeeze", 1, buildSqueeze);
  t.add("", "Unsqueeze", 1, buildUnsqueeze);
  t.add("", "Concat", 1, buildConcat);
  t.add("", "Split", 1, buildSplit);
  t.add("", "Slice", 1, buildSlice);
  t.add("", "Gather", 1, buildGatherLike<GatherOp>);
  t.add("", "GatherElements", 11, buildGatherLike<GatherElementsOp>);
  t.add("", "GatherND", 11, buildGatherND);
  t.add("", "Scatter", 9, buildScatterElements);
  t.add("", "ScatterElements", 11, buildScatterElements);
  t.add("", "ScatterND", 11, buildScatterND);
  t.add("", "Pad", 1, buildPad);
  t.add("", "CenterCropPad", 18, buildCenterCropPad);
  t.add("", "Expand", 8, buildExpand);
  t.add("", "Tile", 6, buildTile);
  t.add("", "Range", 11, buildRange);
  t.add("", "OneHot", 9, buildOneHot);
  t.add("", "Trilu", 14, buildTrilu);
  t.add("", "NonZero", 9, buildNonZero);
}

} // namespace loom::onnx_import
