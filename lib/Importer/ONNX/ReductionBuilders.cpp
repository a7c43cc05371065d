//===- ReductionBuilders.cpp - Reductions, arg-reductions, scans, top-k ---===//
//
// ReduceSum/Mean/Max/Min/Prod map to loom reduce ops; ReduceL1, ReduceL2,
// ReduceLogSum, ReduceLogSumExp and ReduceSumSquare are decomposed into
// elementwise ops around reduce_sum/reduce_max. ArgMax/ArgMin, CumSum and
// TopK map to their loom ops. Axes always reach loom non-negative and sorted.
//
//===----------------------------------------------------------------------===//

#include "BuilderUtils.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;

namespace loom::onnx_import {
namespace {

/// What an ONNX Reduce* node asks for, once its axes are resolved.
struct ReduceSpec {
  /// Non-negative, sorted, unique axes; every axis when ONNX reduces all.
  SmallVector<int64_t> axes;
  bool keepdims = true;
  /// `noop_with_empty_axes` with no axes: the node is the identity.
  bool identity = false;
  /// Axes known only at run time: the sets of axes they may name (each
  /// like `axes`), and which one they do name, an i64 scalar indexing
  /// `candidates` (see runTimeAxes). Empty when the axes are known.
  SmallVector<SmallVector<int64_t>> candidates;
  Value choice;
  /// Whether the candidates give results of different shapes (the
  /// declared output type does not tell them apart): the node's result
  /// then has `?` where they differ and only the chosen one is computed.
  bool shapesDiffer = false;
};

/// Normalizes `axes` against `rank` and sorts them; reports out-of-range
/// and repeated axes (loom's verifier would reject both).
LogicalResult normalizeAxes(NodeBinder &b, ArrayRef<int64_t> axes, int64_t rank,
                            SmallVectorImpl<int64_t> &result) {
  for (int64_t axis : axes) {
    std::optional<int64_t> n = normalizeAxisOrFail(b, axis, rank);
    if (!n)
      return failure();
    result.push_back(*n);
  }
  llvm::sort(result);
  if (std::adjacent_find(result.begin(), result.end()) != result.end())
    return b.fail("axes must not repeat a dimension");
  return success();
}

/// When the axes input is not a constant, the reduced axes still follow
/// from the types if `keepdims` is set and both shapes are static: the
/// dimensions that shrink to 1 are reduced, others are kept, and reducing a
/// dimension of size 1 or not gives the same value. The declared result
/// type is part of the model's contract, so this is no guess.
std::optional<SmallVector<int64_t>>
axesFromKeptShape(NodeBinder &b, RankedTensorType in, bool keepdims) {
  RankedTensorType out = b.knownOutputType(0);
  if (!keepdims || !out || !in.hasStaticShape() || !out.hasStaticShape() ||
      out.getRank() != in.getRank())
    return std::nullopt;
  SmallVector<int64_t> axes;
  for (int64_t i = 0; i < in.getRank(); ++i) {
    if (in.getDimSize(i) == out.getDimSize(i))
      continue;
    if (out.getDimSize(i) != 1)
      return std::nullopt;
    axes.push_back(i);
  }
  return axes;
}

template <typename OpT>
Value createReduce(NodeBinder &b, Value input, ArrayRef<int64_t> axes,
                   bool keepdims) {
  return createInferred<OpT>(b, input, b.builder().getDenseI64ArrayAttr(axes),
                             b.builder().getBoolAttr(keepdims));
}

/// The result shape of reducing `axes` (sorted) of `shape`.
SmallVector<int64_t> reducedShape(ArrayRef<int64_t> shape,
                                  ArrayRef<int64_t> axes, bool keepdims) {
  SmallVector<int64_t> result;
  for (auto [d, size] : llvm::enumerate(shape)) {
    if (!llvm::is_contained(axes, int64_t(d)))
      result.push_back(size);
    else if (keepdims)
      result.push_back(1);
  }
  return result;
}

/// Axes given as a run-time input of a static number k of values: each set
/// of k distinct dimensions whose result agrees with the declared output
/// type is a candidate, and when all candidates give one result shape the
/// node computes each and picks one by the axes' value (`spec.choice`).
/// The choice is checked: each axis is looked up in a table of 2^d per
/// dimension d (a Gather: negative axes count from the end, out-of-range
/// ones are a run-time error), their sum is k bits set exactly when the
/// axes are distinct, and a second lookup maps the sum to the candidate's
/// index or, for sums naming no candidate (repeated axes, or axes the
/// declared type rules out), to an out-of-range index, a run-time error.
/// A single candidate needs no choice: the declared type names it, as for
/// axesFromKeptShape. Candidates of different shapes (an intermediate
/// value with no declared type, as in ONNX's function bodies) are allowed
/// up to kMaxShapedCandidates; fails (nullopt) beyond.
std::optional<ReduceSpec> runTimeAxes(NodeBinder &b, Value axes,
                                      RankedTensorType in, bool keepdims) {
  // 2^rank entries in the lookup table.
  constexpr int64_t kMaxRank = 10;
  // Each candidate of its own shape is a branch of a chain of loom.if.
  constexpr size_t kMaxShapedCandidates = 16;
  RankedTensorType axesType = typeOf(axes);
  int64_t rank = in.getRank();
  if (!axesType || axesType.getRank() != 1 || axesType.isDynamicDim(0) ||
      rank > kMaxRank)
    return std::nullopt;
  int64_t count = axesType.getDimSize(0);
  if (count < 1 || count > rank)
    return std::nullopt;
  RankedTensorType out = b.knownOutputType(0);
  auto agrees = [&](ArrayRef<int64_t> shape) {
    if (!out)
      return true;
    if (out.getRank() != int64_t(shape.size()))
      return false;
    for (auto [declared, computed] : llvm::zip(out.getShape(), shape))
      if (!ShapedType::isDynamic(declared) &&
          !ShapedType::isDynamic(computed) && declared != computed)
        return false;
    return true;
  };
  ReduceSpec spec;
  spec.keepdims = keepdims;
  SmallVector<int64_t> masks;
  std::optional<SmallVector<int64_t>> shape;
  for (int64_t mask = 1; mask < (int64_t(1) << rank); ++mask) {
    if (llvm::popcount(uint64_t(mask)) != count)
      continue;
    SmallVector<int64_t> set;
    for (int64_t d = 0; d < rank; ++d)
      if (mask & (int64_t(1) << d))
        set.push_back(d);
    SmallVector<int64_t> candidateShape =
        reducedShape(in.getShape(), set, keepdims);
    if (!agrees(candidateShape))
      continue;
    if (shape && *shape != candidateShape)
      spec.shapesDiffer = true;
    shape = candidateShape;
    spec.candidates.push_back(std::move(set));
    masks.push_back(mask);
  }
  if (spec.candidates.empty() ||
      (spec.shapesDiffer && spec.candidates.size() > kMaxShapedCandidates))
    return std::nullopt;
  if (spec.candidates.size() == 1) {
    spec.axes = spec.candidates.pop_back_val();
    return spec;
  }
  OpBuilder &builder = b.builder();
  Type i64 = builder.getI64Type();
  auto scalarType = RankedTensorType::get({}, i64);
  auto gather = [&](ArrayRef<int64_t> table, Value indices, Type type) {
    return GatherOp::create(builder, b.loc(), type, b.i64Tensor(table), indices,
                            builder.getI64IntegerAttr(0))
        .getResult();
  };
  SmallVector<int64_t> powers;
  for (int64_t d = 0; d < rank; ++d)
    powers.push_back(int64_t(1) << d);
  Value bits = gather(powers, axes, RankedTensorType::get({count}, i64));
  Value sum = createReduce<ReduceSumOp>(b, bits, {0}, /*keepdims=*/false);
  int64_t none = spec.candidates.size();
  SmallVector<int64_t> indexOfMask(int64_t(1) << rank, none);
  for (auto [index, mask] : llvm::enumerate(masks))
    indexOfMask[mask] = index;
  Value index = gather(indexOfMask, sum, scalarType);
  spec.choice =
      gather(llvm::to_vector(llvm::seq<int64_t>(0, none)), index, scalarType);
  return spec;
}

/// Reads `keepdims`, `noop_with_empty_axes` and the axes, from the `axes`
/// attribute before `axesInputSince` and from input 1 from then on.
FailureOr<ReduceSpec> readReduceSpec(NodeBinder &b, int64_t axesInputSince) {
  bool axesAsInput = b.opset() >= axesInputSince;
  SmallVector<StringRef> known = {"keepdims"};
  known.push_back(axesAsInput ? "noop_with_empty_axes" : "axes");
  if (failed(b.rejectUnknownAttrs(known)))
    return failure();
  Value x = b.input(0);
  std::optional<int64_t> keepdims = b.intAttr("keepdims", 1);
  std::optional<int64_t> noop = b.intAttr("noop_with_empty_axes", 0);
  if (!x || !keepdims || !noop)
    return failure();
  auto type = cast<RankedTensorType>(x.getType());

  ReduceSpec spec;
  spec.keepdims = *keepdims != 0;
  SmallVector<int64_t> axes;
  if (!axesAsInput) {
    std::optional<SmallVector<int64_t>> attr = b.intsAttr("axes");
    if (!attr)
      return failure();
    axes = std::move(*attr);
  } else if (b.hasInput(1)) {
    RankedTensorType axesType = b.inputType(1);
    if (std::optional<SmallVector<int64_t>> values = b.constantInts(1)) {
      axes = std::move(*values);
    } else if (axesType && axesType.hasStaticShape() &&
               axesType.getNumElements() == 0) {
      // An empty axes tensor needs no values.
    } else if (std::optional<SmallVector<int64_t>> derived =
                   axesFromKeptShape(b, type, spec.keepdims)) {
      // Reducing exactly the shrinking dimensions is also right for
      // `noop_with_empty_axes`: the identity keeps every dimension.
      if (derived->empty())
        spec.identity = true;
      spec.axes = std::move(*derived);
      return spec;
    } else if (std::optional<ReduceSpec> runTime =
                   runTimeAxes(b, b.input(1), type, spec.keepdims)) {
      return *runTime;
    } else {
      return b.emitError() << "input 1 ('" << b.node().input(1)
                           << "', the axes) must be a constant";
    }
  }

  if (axes.empty()) {
    if (*noop) {
      spec.identity = true;
      return spec;
    }
    // ONNX reduces every dimension; spell them out rather than rely on
    // loom's reading of an empty list.
    spec.axes = llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
    return spec;
  }
  if (failed(normalizeAxes(b, axes, type.getRank(), spec.axes)))
    return failure();
  return spec;
}

/// Binds the input, refined to the inferred output type, as the result.
LogicalResult buildIdentity(NodeBinder &b) {
  Value x = b.input(0);
  RankedTensorType type = b.outputType(0);
  if (!x || !type || failed(refineTo(b, x, type)))
    return failure();
  b.setOutput(0, x);
  return success();
}

/// Computes the reduction of one input over a set of axes, building at
/// the binder's insertion point.
using ComputeFn = llvm::function_ref<Value(Value input, ArrayRef<int64_t>)>;

/// Candidates `first` and on, of different shapes: a loom.if on
/// `choice == first` whose then-branch computes that candidate and whose
/// else-branch holds the chain for the rest. Each result is cast to
/// `type`, the candidates' shapes joined (`?` where they differ).
Value chooseByIf(NodeBinder &b, const ReduceSpec &spec, size_t first,
                 Value input, Value choice, RankedTensorType type,
                 ComputeFn compute) {
  OpBuilder &builder = b.builder();
  auto castToJoined = [&](Value value) -> Value {
    if (value.getType() == type)
      return value;
    return tensor::CastOp::create(builder, b.loc(), type, value);
  };
  if (first + 1 == spec.candidates.size())
    return castToJoined(compute(input, spec.candidates[first]));
  Type i64 = builder.getI64Type();
  Value taken = createInferred<EqualOp>(b, choice, b.scalar(i64, first));
  auto ifOp = IfOp::create(builder, b.loc(), TypeRange{type}, taken,
                           ValueRange{input, choice});
  for (Region *region : {&ifOp.getThenRegion(), &ifOp.getElseRegion()}) {
    Block *block = new Block();
    region->push_back(block);
    Value blockInput = block->addArgument(input.getType(), b.loc());
    Value blockChoice = block->addArgument(choice.getType(), b.loc());
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(block);
    Value result =
        region == &ifOp.getThenRegion()
            ? castToJoined(compute(blockInput, spec.candidates[first]))
            : chooseByIf(b, spec, first + 1, blockInput, blockChoice, type,
                         compute);
    YieldOp::create(builder, b.loc(), result);
  }
  return ifOp.getResult(0);
}

/// The node's result: `compute(input, axes)` for the spec's axes or, with
/// axes known only at run time, the candidate the axes name: every
/// candidate computed and one picked by a chain of loom.where on the
/// spec's choice when they share a shape, else only the chosen one, in a
/// chain of loom.if (see chooseByIf).
Value forEachCandidate(NodeBinder &b, const ReduceSpec &spec, Value input,
                       ComputeFn compute) {
  if (spec.candidates.empty())
    return compute(input, spec.axes);
  if (spec.shapesDiffer) {
    // Every decomposed reduction keeps its input's element type.
    auto inputType = cast<RankedTensorType>(input.getType());
    RankedTensorType joined;
    for (ArrayRef<int64_t> axes : spec.candidates) {
      auto type = RankedTensorType::get(
          reducedShape(inputType.getShape(), axes, spec.keepdims),
          inputType.getElementType());
      joined = joined ? joinBranchTypes(joined, type) : type;
    }
    return chooseByIf(b, spec, 0, input, spec.choice, joined, compute);
  }
  Type i64 = b.builder().getI64Type();
  Value result = compute(input, spec.candidates.back());
  for (int64_t i = int64_t(spec.candidates.size()) - 2; i >= 0; --i) {
    Value chosen = createInferred<EqualOp>(b, spec.choice, b.scalar(i64, i));
    result = createInferred<WhereOp>(
        b, chosen, compute(input, spec.candidates[i]), result);
  }
  return result;
}

/// ReduceSum/Mean/Max/Min/Prod: one loom reduce op (one per candidate when
/// the axes are known only at run time).
template <typename OpT>
LogicalResult buildReduce(NodeBinder &b, int64_t axesInputSince) {
  FailureOr<ReduceSpec> spec = readReduceSpec(b, axesInputSince);
  if (failed(spec))
    return failure();
  if (spec->identity)
    return buildIdentity(b);
  if (!spec->candidates.empty())
    return bindRefined(
        b, forEachCandidate(
               b, *spec, b.input(0), [&](Value input, ArrayRef<int64_t> axes) {
                 return createReduce<OpT>(b, input, axes, spec->keepdims);
               }));
  return buildSimple<OpT>(
      b, {b.input(0)},
      {b.builder().getNamedAttr("axes",
                                b.builder().getDenseI64ArrayAttr(spec->axes)),
       b.builder().getNamedAttr("keepdims",
                                b.builder().getBoolAttr(spec->keepdims))});
}

enum class ReduceKind { L1, L2, LogSum, LogSumExp, SumSquare };

/// The decomposed reduction `kind` of `x` over `axes`. Intermediate
/// reductions keep their dimensions so they broadcast against the input;
/// only the last step drops them.
Value decomposedReduce(NodeBinder &b, ReduceKind kind, Value x,
                       ArrayRef<int64_t> axes, bool keepdims, bool identity) {
  Type elementType = cast<RankedTensorType>(x.getType()).getElementType();
  // With `noop_with_empty_axes` nothing is reduced, but the elementwise
  // part still applies (e.g. ReduceL1 is then Abs).
  auto sum = [&](Value v) -> Value {
    if (identity)
      return v;
    return createReduce<ReduceSumOp>(b, v, axes, keepdims);
  };

  Value result;
  switch (kind) {
  case ReduceKind::L1:
    result = sum(createInferred<AbsOp>(b, x));
    break;
  case ReduceKind::L2:
    result = createInferred<SqrtOp>(b, sum(createInferred<MulOp>(b, x, x)));
    break;
  case ReduceKind::SumSquare:
    result = sum(createInferred<MulOp>(b, x, x));
    break;
  case ReduceKind::LogSum:
    result = createInferred<LogOp>(b, sum(x));
    break;
  case ReduceKind::LogSumExp: {
    if (identity) {
      // log(exp(x)) is x, exactly so only without the round trip.
      result = x;
      break;
    }
    // m + log(sum(exp(x - m))) with m = max(x) over the axes, so exp cannot
    // overflow. An infinite m (all -inf, or some +inf) would turn x - m into
    // NaN; shifting by 0 there gives log(sum(exp(x))) as ONNX defines it.
    Value m = createReduce<ReduceMaxOp>(b, x, axes, /*keepdims=*/true);
    Value infinite = IsInfOp::create(
        b.builder(), b.loc(),
        RankedTensorType::get(cast<RankedTensorType>(m.getType()).getShape(),
                              b.builder().getI1Type()),
        m);
    Value zero = b.scalar(elementType, 0);
    m = createInferred<WhereOp>(b, infinite, zero, m);
    Value shifted = createInferred<ExpOp>(b, createInferred<SubOp>(b, x, m));
    Value logSum = createInferred<LogOp>(b, sum(shifted));
    // Drop m's kept dimensions (all of size 1) to match the sum.
    if (!keepdims)
      m = createReduce<ReduceMaxOp>(b, m, axes, /*keepdims=*/false);
    result = createInferred<AddOp>(b, logSum, m);
    break;
  }
  }
  return result;
}

/// ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp, ReduceSumSquare.
LogicalResult buildDecomposedReduce(NodeBinder &b, ReduceKind kind,
                                    int64_t axesInputSince) {
  FailureOr<ReduceSpec> spec = readReduceSpec(b, axesInputSince);
  if (failed(spec))
    return failure();
  Value x = b.input(0);
  RankedTensorType type = b.outputType(0);
  if (!x || !type)
    return failure();
  // sqrt, log and exp take floats: integer inputs are computed in f64 and
  // the result truncated back, as the ONNX reference does.
  bool needsFloat = kind == ReduceKind::L2 || kind == ReduceKind::LogSum ||
                    kind == ReduceKind::LogSumExp;
  bool viaF64 = needsFloat && !isa<FloatType>(type.getElementType());
  if (viaF64) {
    auto xType = cast<RankedTensorType>(x.getType());
    x = CastOp::create(b.builder(), b.loc(),
                       xType.clone(b.builder().getF64Type()), x);
  }
  Value result =
      forEachCandidate(b, *spec, x, [&](Value input, ArrayRef<int64_t> axes) {
        return decomposedReduce(b, kind, input, axes, spec->keepdims,
                                spec->identity);
      });
  if (viaF64) {
    auto resultType = cast<RankedTensorType>(result.getType());
    result = CastOp::create(b.builder(), b.loc(),
                            resultType.clone(type.getElementType()), result);
  }
  if (failed(refineTo(b, result, type)))
    return failure();
  b.setOutput(0, result);
  return success();
}

template <typename OpT> LogicalResult buildArgReduce(NodeBinder &b) {
  if (failed(b.rejectUnknownAttrs({"axis", "keepdims", "select_last_index"})))
    return failure();
  Value x = b.input(0);
  std::optional<int64_t> axis = b.intAttr("axis", 0);
  std::optional<int64_t> keepdims = b.intAttr("keepdims", 1);
  std::optional<int64_t> last = b.intAttr("select_last_index", 0);
  if (!x || !axis || !keepdims || !last)
    return failure();
  int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
  std::optional<int64_t> normalized = normalizeAxisOrFail(b, *axis, rank);
  if (!normalized)
    return failure();
  OpBuilder &builder = b.builder();
  return buildSimple<OpT>(
      b, {x},
      {builder.getNamedAttr("axis", builder.getI64IntegerAttr(*normalized)),
       builder.getNamedAttr("keepdims", builder.getBoolAttr(*keepdims != 0)),
       builder.getNamedAttr("select_last_index",
                            builder.getBoolAttr(*last != 0))});
}

/// A CumSum or CumProd whose axis is known only at run time: one op per
/// possible axis, the result chosen by the axis's value. The value is first
/// looked up in [0, 1, ..., rank - 1] (a gather: a negative axis counts from
/// the end, as ONNX's does, and one outside [-rank, rank) is a run-time
/// index error rather than a silent choice).
template <typename OpT>
LogicalResult buildRunTimeAxisCumulative(NodeBinder &b, Value x, bool exclusive,
                                         bool reverse) {
  Value axis = b.input(1);
  RankedTensorType axisType = typeOf(axis);
  if (axisType.getRank() > 1 ||
      (axisType.getRank() == 1 && axisType.getDimSize(0) != 1))
    return b.emitError() << "input 1 (the axis) must hold one value, not "
                         << axisType;
  OpBuilder &builder = b.builder();
  if (axisType.getRank() == 1)
    axis =
        ReshapeOp::create(builder, b.loc(), axisType.clone(ArrayRef<int64_t>{}),
                          axis, b.i64Tensor({}));
  int64_t rank = typeOf(x).getRank();
  Type i64 = builder.getI64Type();
  Value normalized = GatherOp::create(
      builder, b.loc(), RankedTensorType::get({}, i64),
      b.i64Tensor(llvm::to_vector(llvm::seq<int64_t>(0, rank))), axis,
      builder.getI64IntegerAttr(0));
  Value result;
  for (int64_t d = rank - 1; d >= 0; --d) {
    Value along = createInferred<OpT>(b, x, builder.getI64IntegerAttr(d),
                                      builder.getBoolAttr(exclusive),
                                      builder.getBoolAttr(reverse));
    if (!result) {
      result = along;
      continue;
    }
    Value chosen = createInferred<EqualOp>(b, normalized, b.scalar(i64, d));
    result = createInferred<WhereOp>(b, chosen, along, result);
  }
  return bindRefined(b, result);
}

/// CumSum and CumProd: the axis is input 1.
template <typename OpT> LogicalResult buildCumulative(NodeBinder &b) {
  if (failed(b.rejectUnknownAttrs({"exclusive", "reverse"})))
    return failure();
  Value x = b.input(0);
  std::optional<int64_t> exclusive = b.intAttr("exclusive", 0);
  std::optional<int64_t> reverse = b.intAttr("reverse", 0);
  if (!x || !b.input(1) || !exclusive || !reverse)
    return failure();
  int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
  int64_t axis = 0;
  if (std::optional<SmallVector<int64_t>> values = b.constantInts(1)) {
    if (values->size() != 1)
      return b.emitError() << "input 1 (the axis) must hold one value, not "
                           << values->size();
    std::optional<int64_t> normalized =
        normalizeAxisOrFail(b, values->front(), rank);
    if (!normalized)
      return failure();
    axis = *normalized;
  } else if (rank != 1) {
    // A rank-1 input has one valid axis whatever the value.
    return buildRunTimeAxisCumulative<OpT>(b, x, *exclusive != 0,
                                           *reverse != 0);
  }
  OpBuilder &builder = b.builder();
  return buildSimple<OpT>(
      b, {x},
      {builder.getNamedAttr("axis", builder.getI64IntegerAttr(axis)),
       builder.getNamedAttr("exclusive", builder.getBoolAttr(*exclusive != 0)),
       builder.getNamedAttr("reverse", builder.getBoolAttr(*reverse != 0))});
}

LogicalResult buildTopK(NodeBinder &b) {
  bool kIsInput = b.opset() >= 10;
  SmallVector<StringRef> known = {"axis"};
  if (kIsInput)
    known.append({"largest", "sorted"});
  else
    known.push_back("k");
  if (failed(b.rejectUnknownAttrs(known)))
    return failure();
  Value x = b.input(0);
  std::optional<int64_t> axis = b.intAttr("axis", -1);
  std::optional<int64_t> largest = b.intAttr("largest", 1);
  std::optional<int64_t> sorted = b.intAttr("sorted", 1);
  if (!x || !axis || !largest || !sorted)
    return failure();
  int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
  std::optional<int64_t> normalized = normalizeAxisOrFail(b, *axis, rank);
  if (!normalized)
    return failure();

  Value k;
  if (!kIsInput) {
    if (!b.hasAttr("k"))
      return b.fail("attribute 'k' is required");
    std::optional<int64_t> kAttr = b.intAttr("k", 0);
    if (!kAttr)
      return failure();
    if (*kAttr < 0)
      return b.emitError() << "k = " << *kAttr << " must not be negative";
    k = b.i64Tensor({*kAttr});
  } else {
    k = b.input(1);
    if (!k)
      return failure();
    auto kType = cast<RankedTensorType>(k.getType());
    if (!kType.getElementType().isInteger(64))
      return b.emitError() << "input 1 (k) must hold i64, not "
                           << kType.getElementType();
    if (kType.getRank() > 1 ||
        (kType.getRank() == 1 && !kType.isDynamicDim(0) &&
         kType.getDimSize(0) != 1))
      return b.emitError() << "input 1 (k) must be a 1-element tensor, not "
                           << kType;
    if (std::optional<SmallVector<int64_t>> values = b.constantInts(1);
        values && values->size() == 1 && values->front() < 0)
      return b.emitError() << "k = " << values->front()
                           << " must not be negative";
    if (kType.getRank() == 0) {
      // loom.topk takes k as a 1-element 1-D tensor.
      auto oneD = RankedTensorType::get({1}, kType.getElementType());
      k = ReshapeOp::create(b.builder(), b.loc(), oneD, k, b.i64Tensor({1}));
    }
  }

  RankedTensorType valuesType = b.outputType(0);
  RankedTensorType indicesType = b.outputType(1);
  if (!valuesType || !indicesType)
    return failure();
  OpBuilder &builder = b.builder();
  auto op = TopKOp::create(
      builder, b.loc(), TypeRange{valuesType, indicesType}, ValueRange{x, k},
      {builder.getNamedAttr("axis", builder.getI64IntegerAttr(*normalized)),
       builder.getNamedAttr("largest", builder.getBoolAttr(*largest != 0)),
       builder.getNamedAttr("sorted", builder.getBoolAttr(*sorted != 0))});
  b.setOutputs(op->getResults());
  return success();
}

} // namespace

void registerReductionBuilders(OpTable &t) {
  // ReduceSum takes its axes as an input from opset 13, the others from
  // opset 18; one entry per op reads whichever form the opset uses.
  t.add("", "ReduceSum", 1,
        [](NodeBinder &b) { return buildReduce<ReduceSumOp>(b, 13); });
  t.add("", "ReduceMean", 1,
        [](NodeBinder &b) { return buildReduce<ReduceMeanOp>(b, 18); });
  t.add("", "ReduceMax", 1,
        [](NodeBinder &b) { return buildReduce<ReduceMaxOp>(b, 18); });
  t.add("", "ReduceMin", 1,
        [](NodeBinder &b) { return buildReduce<ReduceMinOp>(b, 18); });
  t.add("", "ReduceProd", 1,
        [](NodeBinder &b) { return buildReduce<ReduceProdOp>(b, 18); });
  t.add("", "ReduceL1", 1, [](NodeBinder &b) {
    return buildDecomposedReduce(b, ReduceKind::L1, 18);
  });
  t.add("", "ReduceL2", 1, [](NodeBinder &b) {
    return buildDecomposedReduce(b, ReduceKind::L2, 18);
  });
  t.add("", "ReduceLogSum", 1, [](NodeBinder &b) {
    return buildDecomposedReduce(b, ReduceKind::LogSum, 18);
  });
  t.add("", "ReduceLogSumExp", 1, [](NodeBinder &b) {
    return buildDecomposedReduce(b, ReduceKind::LogSumExp, 18);
  });
  t.add("", "ReduceSumSquare", 1, [](NodeBinder &b) {
    return buildDecomposedReduce(b, ReduceKind::SumSquare, 18);
  });

  t.add("", "ArgMax", 1, buildArgReduce<ArgMaxOp>);
  t.add("", "ArgMin", 1, buildArgReduce<ArgMinOp>);
  t.add("", "CumSum", 11, buildCumulative<CumSumOp>);
  t.add("", "CumProd", 26, buildCumulative<CumProdOp>);
  t.add("", "TopK", 1, buildTopK);
}

} // namespace loom::onnx_import
