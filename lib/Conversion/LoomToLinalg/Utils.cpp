//===- Utils.cpp - Builders shared by the loom-to-linalg lowerings --------===//

#include "Utils.h"

#include "loom/Conversion/LoomToLinalg/LoomToLinalg.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace loom::lowering {

Type elementType(Value value) {
  return cast<ShapedType>(value.getType()).getElementType();
}

Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType type) {
  return tensor::EmptyOp::create(b, loc, type.getShape(),
                                 type.getElementType());
}

Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType type,
                  ValueRange dynamicSizes) {
  return tensor::EmptyOp::create(b, loc, type, dynamicSizes);
}

Value scalarConstant(OpBuilder &b, Location loc, Type type, double value) {
  if (isa<FloatType>(type))
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, value));
  return arith::ConstantOp::create(
      b, loc, b.getIntegerAttr(type, static_cast<int64_t>(value)));
}

bool isUnsigned(Type type) {
  Type element = getElementTypeOrSelf(type);
  return element.isUnsignedInteger() || element.isSignlessInteger(1);
}

Value extremeValue(OpBuilder &b, Location loc, Type type, bool lowest,
                   bool isUnsigned) {
  if (auto floatType = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(
        b, loc,
        b.getFloatAttr(type, APFloat::getInf(floatType.getFloatSemantics(),
                                             /*Negative=*/lowest)));
  unsigned width = type.getIntOrFloatBitWidth();
  // i1 is a boolean: false < true.
  APInt value = width == 1   ? APInt(1, lowest ? 0 : 1)
                : isUnsigned ? (lowest ? APInt::getMinValue(width)
                                       : APInt::getMaxValue(width))
                : lowest     ? APInt::getSignedMinValue(width)
                             : APInt::getSignedMaxValue(width);
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, value));
}

Value scalarOf(OpBuilder &b, Location loc, Value tensor, int64_t position) {
  auto type = cast<RankedTensorType>(tensor.getType());
  SmallVector<Value> coords(type.getRank(),
                            arith::ConstantIndexOp::create(b, loc, 0));
  if (type.getRank() == 1)
    coords[0] = arith::ConstantIndexOp::create(b, loc, position);
  return tensor::ExtractOp::create(b, loc, tensor, coords);
}

Value filledTensor(OpBuilder &b, Location loc, RankedTensorType type,
                   Value value, ValueRange dynamicSizes) {
  return linalg::FillOp::create(
             b, loc, ValueRange{value},
             ValueRange{emptyTensor(b, loc, type, dynamicSizes)})
      .getResult(0);
}

Value zeroFilled(OpBuilder &b, Location loc, RankedTensorType type,
                 ValueRange dynamicSizes) {
  return filledTensor(b, loc, type,
                      scalarConstant(b, loc, type.getElementType(), 0),
                      dynamicSizes);
}

Value zerosWhere(OpBuilder &b, Location loc, Value failed, Value value,
                 ValueRange dynamicSizes) {
  auto type = cast<RankedTensorType>(value.getType());
  return scf::IfOp::create(
             b, loc, failed,
             [&](OpBuilder &then, Location thenLoc) {
               scf::YieldOp::create(
                   then, thenLoc,
                   zeroFilled(then, thenLoc, type, dynamicSizes));
             },
             [&](OpBuilder &otherwise, Location otherwiseLoc) {
               scf::YieldOp::create(otherwise, otherwiseLoc, value);
             })
      .getResult(0);
}

Value multiplyAccumulate(OpBuilder &b, Location loc, Value x, Value y,
                         Value acc) {
  Type type = acc.getType();
  Value product = floatOrInt<arith::MulFOp, arith::MulIOp>(
      b, loc, castScalar(b, loc, x, type), castScalar(b, loc, y, type));
  return floatOrInt<arith::AddFOp, arith::AddIOp>(b, loc, acc, product);
}

SmallVector<Value> sizesFrom(OpBuilder &b, Location loc, RankedTensorType type,
                             ValueRange sources) {
  int64_t rank = type.getRank();
  SmallVector<Value> sizes;
  for (int64_t j = 0; j < rank; ++j) {
    if (!type.isDynamicDim(j))
      continue;
    Value size;
    int64_t broadcast = 1;
    for (Value source : sources) {
      auto sourceType = cast<RankedTensorType>(source.getType());
      int64_t d = j - (rank - sourceType.getRank());
      if (d < 0)
        continue;
      if (sourceType.isDynamicDim(d)) {
        size = tensor::DimOp::create(b, loc, source, d);
        break;
      }
      if (sourceType.getDimSize(d) != 1)
        broadcast = sourceType.getDimSize(d);
    }
    sizes.push_back(size ? size
                         : arith::ConstantIndexOp::create(b, loc, broadcast));
  }
  return sizes;
}

Value castScalar(OpBuilder &b, Location loc, Value x, Type to,
                 bool fromUnsigned, bool toUnsigned) {
  Type from = x.getType();
  if (from == to)
    return x;
  auto fromFloat = dyn_cast<FloatType>(from);
  auto toFloat = dyn_cast<FloatType>(to);
  if (fromFloat && toFloat) {
    if (fromFloat.getWidth() == toFloat.getWidth()) // f16 <-> bf16
      x = arith::ExtFOp::create(b, loc, b.getF32Type(), x);
    if (cast<FloatType>(x.getType()).getWidth() < toFloat.getWidth())
      return arith::ExtFOp::create(b, loc, to, x);
    return arith::TruncFOp::create(b, loc, to, x);
  }
  if (fromFloat) {
    if (to.isInteger(1))
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, x,
                                   scalarConstant(b, loc, from, 0));
    if (toUnsigned)
      return arith::FPToUIOp::create(b, loc, to, x);
    return arith::FPToSIOp::create(b, loc, to, x);
  }
  if (toFloat) {
    if (from.isInteger(1) || fromUnsigned)
      return arith::UIToFPOp::create(b, loc, to, x);
    return arith::SIToFPOp::create(b, loc, to, x);
  }
  unsigned fromWidth = from.getIntOrFloatBitWidth();
  unsigned toWidth = to.getIntOrFloatBitWidth();
  if (toWidth == 1)
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, x,
                                 scalarConstant(b, loc, from, 0));
  if (fromWidth == toWidth)
    return x;
  if (fromWidth == 1 || (fromUnsigned && fromWidth < toWidth))
    return arith::ExtUIOp::create(b, loc, to, x);
  if (fromWidth < toWidth)
    return arith::ExtSIOp::create(b, loc, to, x);
  return arith::TruncIOp::create(b, loc, to, x);
}

Value padStatic(OpBuilder &b, Location loc, Value value, ArrayRef<int64_t> low,
                ArrayRef<int64_t> high, Value padValue) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape(type.getShape());
  SmallVector<OpFoldResult> lowFolds, highFolds;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (!ShapedType::isDynamic(shape[d]))
      shape[d] += low[d] + high[d];
    lowFolds.push_back(b.getIndexAttr(low[d]));
    highFolds.push_back(b.getIndexAttr(high[d]));
  }
  return tensor::PadOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), value,
      lowFolds, highFolds, padValue);
}

AffineMap broadcastMap(MLIRContext *ctx, ArrayRef<int64_t> operand,
                       ArrayRef<int64_t> result) {
  int64_t offset = result.size() - operand.size();
  SmallVector<AffineExpr> exprs;
  for (auto [i, size] : llvm::enumerate(operand)) {
    int64_t j = offset + i;
    exprs.push_back(size == 1 && result[j] != 1 ? getAffineConstantExpr(0, ctx)
                                                : getAffineDimExpr(j, ctx));
  }
  return AffineMap::get(result.size(), 0, exprs, ctx);
}

Value buildElementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                       ValueRange inputs, ScalarBody body,
                       ValueRange dynamicSizes) {
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps;
  for (Value input : inputs)
    maps.push_back(
        broadcastMap(ctx, cast<RankedTensorType>(input.getType()).getShape(),
                     resultType.getShape()));
  maps.push_back(b.getMultiDimIdentityMap(resultType.getRank()));
  SmallVector<utils::IteratorType> iterators(resultType.getRank(),
                                             utils::IteratorType::parallel);
  // Sizes known only at run time that the caller did not give: those of
  // the inputs (an op whose inputs may disagree checks them first,
  // alignRunTimeSizes).
  SmallVector<Value> sizes(dynamicSizes);
  if (sizes.empty() && !resultType.hasStaticShape())
    sizes = sizesFrom(b, loc, resultType, inputs);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{resultType}, inputs,
      ValueRange{emptyTensor(b, loc, resultType, sizes)}, maps, iterators,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        Value value = body(nested, nestedLoc, args.drop_back());
        linalg::YieldOp::create(nested, nestedLoc, value);
      });
  return generic.getResult(0);
}

Value broadcastCopy(OpBuilder &b, Location loc, Value input,
                    ArrayRef<int64_t> dims, ArrayRef<Value> targets) {
  auto type = cast<RankedTensorType>(input.getType());
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  SmallVector<Value> sizes, isOne(type.getRank());
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (!type.isDynamicDim(d))
      continue;
    Value size = tensor::DimOp::create(b, loc, input, d);
    const int64_t *at = llvm::find(dims, d);
    if (at != dims.end()) {
      isOne[d] =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, size, one);
      size = arith::SelectOp::create(b, loc, isOne[d],
                                     targets[at - dims.begin()], size);
    }
    sizes.push_back(size);
  }
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{type}, ValueRange{},
             ValueRange{emptyTensor(b, loc, type, sizes)},
             SmallVector<AffineMap>{b.getMultiDimIdentityMap(type.getRank())},
             iterators,
             [&](OpBuilder &nested, Location nestedLoc, ValueRange) {
               Value zero =
                   arith::ConstantIndexOp::create(nested, nestedLoc, 0);
               SmallVector<Value> coords;
               for (int64_t d = 0; d < type.getRank(); ++d) {
                 Value i = linalg::IndexOp::create(nested, nestedLoc, d);
                 coords.push_back(
                     isOne[d] ? Value(arith::SelectOp::create(
                                    nested, nestedLoc, isOne[d], zero, i))
                              : i);
               }
               linalg::YieldOp::create(nested, nestedLoc,
                                       Value(tensor::ExtractOp::create(
                                           nested, nestedLoc, input, coords)));
             })
      .getResult(0);
}

SmallVector<Value> alignRunTimeSizes(OpBuilder &b, Location loc, Operation *op,
                                     RankedTensorType resultType,
                                     SmallVectorImpl<Value> &inputs) {
  int64_t rank = resultType.getRank();
  // Inputs are right-aligned with the result (numpy broadcasting).
  auto inputDim = [&](Value input, int64_t j) {
    return j - (rank - cast<RankedTensorType>(input.getType()).getRank());
  };
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  // Each result dimension's size: stated, or the broadcast of the inputs'
  // (a size of 1 gives way to any other; sizes known only at run time are
  // compared there).
  SmallVector<Value> targets(rank), sizes, safeSizes(rank);
  // The input a target size is read from when it is the only one there
  // (it needs no check or stretch against itself); -1 otherwise.
  SmallVector<int64_t> soleSource(rank, -1);
  for (int64_t j = 0; j < rank; ++j) {
    if (!resultType.isDynamicDim(j)) {
      targets[j] =
          arith::ConstantIndexOp::create(b, loc, resultType.getDimSize(j));
      continue;
    }
    Value size;
    int64_t broadcast = 1, dynamicSources = 0;
    for (auto [k, input] : llvm::enumerate(inputs)) {
      int64_t d = inputDim(input, j);
      auto type = cast<RankedTensorType>(input.getType());
      if (d < 0)
        continue;
      if (!type.isDynamicDim(d)) {
        if (type.getDimSize(d) != 1)
          broadcast = type.getDimSize(d);
        continue;
      }
      if (dynamicSources++ == 0)
        soleSource[j] = k;
      else
        soleSource[j] = -1;
      Value other = tensor::DimOp::create(b, loc, input, d);
      size = size ? Value(arith::SelectOp::create(
                        b, loc,
                        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                              size, one),
                        other, size))
                  : other;
    }
    if (broadcast != 1) {
      // A static size other than 1 decides.
      size = arith::ConstantIndexOp::create(b, loc, broadcast);
      soleSource[j] = -1;
    } else if (!size) {
      size = one;
    }
    targets[j] = size;
    // The size the result takes: the target, unless an input that does not
    // broadcast (reported below) is smaller there; the code goes on after
    // the report, so its reads must stay inside every input.
    Value safe = size;
    for (Value input : soleSource[j] >= 0 ? ValueRange{} : ValueRange(inputs)) {
      int64_t d = inputDim(input, j);
      auto type = cast<RankedTensorType>(input.getType());
      if (d < 0 || !type.isDynamicDim(d))
        continue;
      Value other = tensor::DimOp::create(b, loc, input, d);
      Value isOne =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, other, one);
      safe = arith::MinUIOp::create(
          b, loc, safe, arith::SelectOp::create(b, loc, isOne, size, other));
    }
    sizes.push_back(safe);
    safeSizes[j] = safe;
  }
  // Every input dimension known only at run time is the target's size, or 1
  // and stretched (a copy, made only when a run-time size is 1 where the
  // result's is not); anything else is reported.
  for (auto [k, input] : llvm::enumerate(inputs)) {
    auto type = cast<RankedTensorType>(input.getType());
    SmallVector<int64_t> dims;
    SmallVector<Value> dimTargets;
    Value stretch;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (!type.isDynamicDim(d))
        continue;
      int64_t j = d + rank - type.getRank();
      if (soleSource[j] == int64_t(k))
        continue;
      Value size = tensor::DimOp::create(b, loc, input, d);
      Value isOne =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, size, one);
      Value differs = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                            size, targets[j]);
      // Against a size the model states, checkedCast below reports the
      // mismatch (naming both sizes).
      if (resultType.isDynamicDim(j))
        checkCondition(
            b, loc, op,
            arith::AndIOp::create(
                b, loc, differs,
                arith::XOrIOp::create(
                    b, loc, isOne,
                    arith::ConstantOp::create(b, loc, b.getBoolAttr(true)))),
            "operands have sizes known only at run time that do not "
            "broadcast");
      Value needed = arith::AndIOp::create(b, loc, isOne, differs);
      stretch = stretch ? Value(arith::OrIOp::create(b, loc, stretch, needed))
                        : needed;
      dims.push_back(d);
      dimTargets.push_back(targets[j]);
    }
    if (stretch) {
      Value original = input;
      auto ifOp = scf::IfOp::create(
          b, loc, stretch,
          [&](OpBuilder &then, Location thenLoc) {
            scf::YieldOp::create(
                then, thenLoc,
                broadcastCopy(then, thenLoc, original, dims, dimTargets));
          },
          [&](OpBuilder &otherwise, Location otherwiseLoc) {
            scf::YieldOp::create(otherwise, otherwiseLoc, original);
          });
      input = ifOp.getResult(0);
    }
    // Where the inputs' run-time sizes disagree (reported above), the code
    // goes on: each input is viewed at the result's size there, so that the
    // loops, which take their bounds from the operands, stay inside every
    // one. The view is marked for loom-cpu-fuse-elementwise, which moves it
    // above the input's producer so that the two still fuse.
    SmallVector<OpFoldResult> viewSizes;
    bool narrowed = false;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      int64_t j = d + rank - type.getRank();
      if (!resultType.isDynamicDim(j) || soleSource[j] == int64_t(k) ||
          type.getDimSize(d) == 1) {
        viewSizes.push_back(tensor::getMixedSize(b, loc, input, d));
        continue;
      }
      viewSizes.push_back(safeSizes[j]);
      narrowed = true;
    }
    if (narrowed) {
      auto view = tensor::ExtractSliceOp::create(
          b, loc, input,
          SmallVector<OpFoldResult>(type.getRank(), b.getIndexAttr(0)),
          viewSizes,
          SmallVector<OpFoldResult>(type.getRank(), b.getIndexAttr(1)));
      view->setAttr(kRunTimeBoundView, b.getUnitAttr());
      input = view;
      type = cast<RankedTensorType>(input.getType());
    }
    // The stated sizes: a dimension known only at run time whose result
    // size is static is that size (checked).
    SmallVector<int64_t> stated(type.getShape());
    for (int64_t d = 0; d < type.getRank(); ++d) {
      int64_t j = d + rank - type.getRank();
      if (type.isDynamicDim(d) && !resultType.isDynamicDim(j))
        stated[d] = resultType.getDimSize(j);
    }
    if (stated != type.getShape())
      input = checkedCast(b, loc, op, input,
                          RankedTensorType::get(stated, type.getElementType()));
  }
  return sizes;
}

Value buildReduction(OpBuilder &b, Location loc, Value input,
                     ArrayRef<int64_t> axes, bool keepdims, Value init,
                     ScalarBody combine) {
  MLIRContext *ctx = b.getContext();
  auto inputType = cast<RankedTensorType>(input.getType());
  int64_t rank = inputType.getRank();
  SmallVector<int64_t> shape;
  SmallVector<AffineExpr> exprs;
  SmallVector<utils::IteratorType> iterators;
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < rank; ++d) {
    bool reduced = llvm::is_contained(axes, d);
    iterators.push_back(reduced ? utils::IteratorType::reduction
                                : utils::IteratorType::parallel);
    if (reduced && !keepdims)
      continue;
    if (!reduced && inputType.isDynamicDim(d))
      sizes.push_back(tensor::DimOp::create(b, loc, input, d));
    shape.push_back(reduced ? 1 : inputType.getDimSize(d));
    exprs.push_back(reduced ? getAffineConstantExpr(0, ctx)
                            : getAffineDimExpr(d, ctx));
  }
  auto resultType = RankedTensorType::get(shape, init.getType());
  SmallVector<AffineMap> maps{b.getMultiDimIdentityMap(rank),
                              AffineMap::get(rank, 0, exprs, ctx)};
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{resultType}, ValueRange{input},
      ValueRange{filledTensor(b, loc, resultType, init, sizes)}, maps,
      iterators, [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        linalg::YieldOp::create(nested, nestedLoc,
                                combine(nested, nestedLoc, args));
      });
  return generic.getResult(0);
}

Value buildMean(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> axes,
                bool keepdims) {
  Type type = elementType(input);
  Value sum = buildReduction(
      b, loc, input, axes, keepdims, scalarConstant(b, loc, type, 0),
      [](OpBuilder &b, Location loc, ValueRange x) {
        return floatOrInt<arith::AddFOp, arith::AddIOp>(b, loc, x[0], x[1]);
      });
  int64_t count = 1;
  auto inputType = cast<RankedTensorType>(input.getType());
  // The count of a reduced dimension known only at run time, as an index.
  Value runTimeCount;
  for (int64_t axis : axes) {
    if (!inputType.isDynamicDim(axis)) {
      count *= inputType.getDimSize(axis);
      continue;
    }
    Value size = tensor::DimOp::create(b, loc, input, axis);
    runTimeCount =
        runTimeCount ? arith::MulIOp::create(b, loc, runTimeCount, size) : size;
  }
  if (runTimeCount)
    runTimeCount = arith::IndexCastOp::create(
        b, loc, b.getI64Type(),
        arith::MulIOp::create(b, loc, runTimeCount,
                              arith::ConstantIndexOp::create(b, loc, count)));
  return buildElementwise(
      b, loc, cast<RankedTensorType>(sum.getType()), ValueRange{sum},
      [&](OpBuilder &b, Location loc, ValueRange x) {
        Value n = scalarConstant(b, loc, type, count);
        if (runTimeCount)
          n = castScalar(b, loc, runTimeCount, type);
        return floatOrInt<arith::DivFOp, arith::DivSIOp>(b, loc, x[0], n);
      });
}

Value buildStableOrder(OpBuilder &b, Location loc, Value n,
                       RightFirst rightFirst) {
  // Positions are stored as i64: the type converter's tensors hold no
  // index elements.
  Type indexType = b.getIndexType(), i64 = b.getI64Type();
  auto orderType = RankedTensorType::get({ShapedType::kDynamic}, i64);
  auto c = [&](OpBuilder &b, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value identity = tensor::GenerateOp::create(
      b, loc, orderType, ValueRange{n},
      [&](OpBuilder &b, Location loc, ValueRange indices) {
        tensor::YieldOp::create(
            b, loc, arith::IndexCastOp::create(b, loc, i64, indices[0]));
      });
  Value scratch = tensor::EmptyOp::create(b, loc, orderType, ValueRange{n});
  // Passes over runs of `width` sorted positions, merged pairwise from
  // `source` into `target`; the two swap after each pass.
  Value one = c(b, 1);
  auto passes = scf::WhileOp::create(
      b, loc, TypeRange{indexType, orderType, orderType},
      ValueRange{one, identity, scratch},
      [&](OpBuilder &b, Location loc, ValueRange state) {
        Value more = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                           state[0], n);
        scf::ConditionOp::create(b, loc, more, state);
      },
      [&](OpBuilder &b, Location loc, ValueRange state) {
        Value width = state[0], source = state[1], target = state[2];
        Value pair = arith::AddIOp::create(b, loc, width, width);
        auto runs = scf::ForOp::create(
            b, loc, c(b, 0), n, pair, ValueRange{target},
            [&](OpBuilder &b, Location loc, Value lo, ValueRange acc) {
              Value mid = arith::MinUIOp::create(
                  b, loc, arith::AddIOp::create(b, loc, lo, width), n);
              Value hi = arith::MinUIOp::create(
                  b, loc, arith::AddIOp::create(b, loc, lo, pair), n);
              auto merge = scf::WhileOp::create(
                  b, loc, TypeRange{indexType, indexType, indexType, orderType},
                  ValueRange{lo, mid, lo, acc[0]},
                  [&](OpBuilder &b, Location loc, ValueRange s) {
                    Value more = arith::CmpIOp::create(
                        b, loc, arith::CmpIPredicate::ult, s[2], hi);
                    scf::ConditionOp::create(b, loc, more, s);
                  },
                  [&](OpBuilder &b, Location loc, ValueRange s) {
                    Value i = s[0], j = s[1], k = s[2], out = s[3];
                    Value leftOpen = arith::CmpIOp::create(
                        b, loc, arith::CmpIPredicate::ult, i, mid);
                    Value rightOpen = arith::CmpIOp::create(
                        b, loc, arith::CmpIPredicate::ult, j, hi);
                    // Both reads in bounds: an exhausted run reads the
                    // other run's head, and is not taken.
                    Value lastLeft = arith::SubIOp::create(b, loc, mid, one);
                    Value li = arith::MinUIOp::create(b, loc, i, lastLeft);
                    Value rj =
                        arith::SelectOp::create(b, loc, rightOpen, j, li);
                    Value left = tensor::ExtractOp::create(b, loc, source, li);
                    Value right = tensor::ExtractOp::create(b, loc, source, rj);
                    auto asIndex = [&](Value v) -> Value {
                      return arith::IndexCastOp::create(b, loc, indexType, v);
                    };
                    Value takeRight = arith::AndIOp::create(
                        b, loc, rightOpen,
                        arith::OrIOp::create(
                            b, loc,
                            arith::XOrIOp::create(
                                b, loc, leftOpen,
                                arith::ConstantIntOp::create(b, loc, 1, 1)),
                            rightFirst(b, loc, asIndex(left), asIndex(right))));
                    Value taken =
                        arith::SelectOp::create(b, loc, takeRight, right, left);
                    Value written =
                        tensor::InsertOp::create(b, loc, taken, out, k);
                    Value stepRight = arith::IndexCastUIOp::create(
                        b, loc, indexType, takeRight);
                    Value nextI = arith::SubIOp::create(
                        b, loc, arith::AddIOp::create(b, loc, i, one),
                        stepRight);
                    Value nextJ = arith::AddIOp::create(b, loc, j, stepRight);
                    Value nextK = arith::AddIOp::create(b, loc, k, one);
                    scf::YieldOp::create(
                        b, loc, ValueRange{nextI, nextJ, nextK, written});
                  });
              scf::YieldOp::create(b, loc, merge.getResult(3));
            });
        scf::YieldOp::create(b, loc,
                             ValueRange{pair, runs.getResult(0), source});
      });
  return passes.getResult(1);
}

Value buildSoftmax(OpBuilder &b, Location loc, Value input, int64_t axis,
                   bool logarithm, bool zeroEmptyRows) {
  auto type = cast<RankedTensorType>(input.getType());
  Type element = type.getElementType();
  if (element.getIntOrFloatBitWidth() < 32) {
    // 16-bit floats: the exponentials are summed in f32 and the result is
    // rounded once (a 16-bit running sum loses the small terms).
    Type f32 = b.getF32Type();
    auto convert = [&](Value value, RankedTensorType to) {
      return buildElementwise(
          b, loc, to, ValueRange{value},
          [&](OpBuilder &b, Location loc, ValueRange x) -> Value {
            return castScalar(b, loc, x[0], to.getElementType());
          },
          sizesFrom(b, loc, to, ValueRange{value}));
    };
    Value wide = buildSoftmax(b, loc, convert(input, type.clone(f32)), axis,
                              logarithm, zeroEmptyRows);
    return convert(wide, type);
  }
  Value max =
      buildReduction(b, loc, input, {axis}, /*keepdims=*/true,
                     extremeValue(b, loc, element, /*lowest=*/true),
                     [](OpBuilder &b, Location loc, ValueRange x) -> Value {
                       return arith::MaximumFOp::create(b, loc, x[0], x[1]);
                     });
  Value exp = buildElementwise(
      b, loc, type, ValueRange{input, max},
      [&](OpBuilder &b, Location loc, ValueRange x) -> Value {
        Value base = x[1];
        if (zeroEmptyRows) {
          // An empty row's maximum is -inf: shift by 0, so that its
          // exponentials are 0 (not exp(-inf - -inf) = NaN).
          Value empty = arith::CmpFOp::create(
              b, loc, arith::CmpFPredicate::OEQ, base,
              extremeValue(b, loc, element, /*lowest=*/true));
          base = arith::SelectOp::create(
              b, loc, empty, scalarConstant(b, loc, element, 0), base);
        }
        return math::ExpOp::create(b, loc,
                                   arith::SubFOp::create(b, loc, x[0], base));
      });
  Value sum =
      buildReduction(b, loc, exp, {axis}, /*keepdims=*/true,
                     scalarConstant(b, loc, element, 0),
                     [](OpBuilder &b, Location loc, ValueRange x) -> Value {
                       return arith::AddFOp::create(b, loc, x[0], x[1]);
                     });
  if (!logarithm)
    return buildElementwise(
        b, loc, type, ValueRange{exp, sum},
        [&](OpBuilder &b, Location loc, ValueRange x) -> Value {
          Value quotient = arith::DivFOp::create(b, loc, x[0], x[1]);
          if (!zeroEmptyRows)
            return quotient;
          // Only an empty row sums to 0 (otherwise its maximum gives 1).
          Value zero = scalarConstant(b, loc, element, 0);
          Value empty = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                              x[1], zero);
          return arith::SelectOp::create(b, loc, empty, zero, quotient);
        });
  return buildElementwise(
      b, loc, type, ValueRange{input, max, sum},
      [](OpBuilder &b, Location loc, ValueRange x) -> Value {
        Value shifted = arith::SubFOp::create(b, loc, x[0], x[1]);
        return arith::SubFOp::create(b, loc, shifted,
                                     math::LogOp::create(b, loc, x[2]));
      });
}

/// reshapeTo for sizes known only at run time: the dynamic dimensions of
/// `type` have the sizes of the value's, in order (squeeze, unsqueeze).
static Value reshapeRunTimeSizes(OpBuilder &b, Location loc, Value value,
                                 RankedTensorType type) {
  auto source = cast<RankedTensorType>(value.getType());
  ReassociationIndices all;
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < source.getRank(); ++d) {
    all.push_back(d);
    if (source.isDynamicDim(d))
      sizes.push_back(tensor::DimOp::create(b, loc, value, d));
  }
  Value flat = value;
  if (source.getRank() != 1)
    flat = tensor::CollapseShapeOp::create(
        b, loc,
        RankedTensorType::get({ShapedType::kDynamic}, source.getElementType()),
        value, ArrayRef<ReassociationIndices>{all});
  if (type.getRank() == 1)
    return flat;
  SmallVector<OpFoldResult> shape;
  ReassociationIndices into;
  for (int64_t d = 0, next = 0; d < type.getRank(); ++d) {
    into.push_back(d);
    shape.push_back(type.isDynamicDim(d) ? OpFoldResult(sizes[next++])
                                         : b.getIndexAttr(type.getDimSize(d)));
  }
  return tensor::ExpandShapeOp::create(
      b, loc, type, flat, ArrayRef<ReassociationIndices>{into}, shape);
}

Value reshapeTo(OpBuilder &b, Location loc, Value value,
                RankedTensorType type) {
  auto source = cast<RankedTensorType>(value.getType());
  if (source == type)
    return value;
  if (!source.hasStaticShape() || !type.hasStaticShape())
    return reshapeRunTimeSizes(b, loc, value, type);
  // One element: every dimension is 1 and a rank-0 side needs no grouping.
  if (type.getRank() == 0)
    return tensor::CollapseShapeOp::create(b, loc, type, value,
                                           ArrayRef<ReassociationIndices>{});
  if (source.getRank() == 0)
    return tensor::ExpandShapeOp::create(b, loc, type, value,
                                         ArrayRef<ReassociationIndices>{});
  auto allDims = [](int64_t rank) {
    ReassociationIndices all;
    for (int64_t d = 0; d < rank; ++d)
      all.push_back(d);
    return SmallVector<ReassociationIndices>{all};
  };
  Value flat = value;
  if (source.getRank() > 1)
    flat = tensor::CollapseShapeOp::create(
        b, loc,
        RankedTensorType::get({source.getNumElements()},
                              source.getElementType()),
        value, allDims(source.getRank()));
  if (type.getRank() == 1)
    return flat;
  return tensor::ExpandShapeOp::create(b, loc, type, flat,
                                       allDims(type.getRank()));
}

FailureOr<SmallVector<Value>> batchSizes(OpBuilder &b, Location loc,
                                         RankedTensorType type, Value input) {
  auto inputType = cast<RankedTensorType>(input.getType());
  for (int64_t d = 1; d < type.getRank(); ++d)
    if (type.isDynamicDim(d) ||
        (d < inputType.getRank() && inputType.isDynamicDim(d)))
      return failure();
  SmallVector<Value> sizes;
  if (type.getRank() && type.isDynamicDim(0))
    sizes.push_back(tensor::DimOp::create(b, loc, input, 0));
  return sizes;
}

Value channelVector(OpBuilder &b, Location loc, Value vector,
                    int64_t trailing) {
  auto type = cast<RankedTensorType>(vector.getType());
  SmallVector<int64_t> shape{type.getNumElements()};
  shape.append(trailing, 1);
  return reshapeTo(b, loc, vector,
                   RankedTensorType::get(shape, type.getElementType()));
}

AffineExpr windowExpr(MLIRContext *ctx, int64_t outDim, int64_t kernelDim,
                      int64_t stride, int64_t dilation) {
  return getAffineDimExpr(outDim, ctx) * stride +
         getAffineDimExpr(kernelDim, ctx) * dilation;
}

} // namespace loom::lowering
