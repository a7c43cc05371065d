//===- TransformerBuilders.cpp - The LLM ops of opsets 23-25 --------------===//
//
// RMSNormalization-23, RotaryEmbedding-23, Attention-23/24/25 and
// TensorScatter-24: the ops ONNX added for transformer inference.
//
// Each maps onto the fused op the recognition passes produce from exported
// subgraphs (loom.rms_norm, loom.rotary_embedding, loom.attention) wherever
// that op's semantics are the ONNX op's; the forms it does not cover are
// spelled out in core ops with ONNX's exact semantics:
//  - Attention with a mask shorter than the keys, padded key/value lengths
//    (nonpad_kv_seqlen), softcap, a sliding window, the qk_matmul_output
//    output, or a causal mask aligned to the first key (no past and fewer
//    keys than queries, or sizes that only run time tells) is the function
//    body of the ONNX
//    specification: scores, an additive bias, a softmax whose fully masked
//    rows are zeros (not NaN), and the product with the values;
//  - TensorScatter is a scatter_elements whose indices are each batch row's
//    write position plus the update's positions (modulo the cache length in
//    circular mode).
//
// ONNX 1.12's shape inference, which the importer runs per node, does not
// know these ops: result types come from the ops built here and are only
// refined by what the graph declares.
//
//===----------------------------------------------------------------------===//

#include "BuilderUtils.h"
#include "GraphImporter.h"

#include "loom/Dialect/Loom/IR/ShapeUtils.h"

#include <cmath>
#include <limits>
#include <string>

using namespace mlir;

namespace loom::onnx_import {
namespace {

RankedTensorType typeOfValue(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// `[d0, d1, heads * size]` -> `[d0, d1, heads, size]` (d0 and d1 may be
/// known only at run time: the reshape copies them).
Value splitLastDim(NodeBinder &b, Value x, int64_t heads, StringRef what) {
  RankedTensorType t = typeOfValue(x);
  int64_t hidden = t.getDimSize(2);
  if (heads <= 0) {
    b.emitError() << "a 3-D " << what << " needs its number of heads";
    return {};
  }
  if (ShapedType::isDynamic(hidden) || hidden % heads != 0) {
    b.emitError() << "the hidden size of " << what << " " << t
                  << " is not a multiple of " << heads << " heads";
    return {};
  }
  auto type = RankedTensorType::get(
      {t.getDimSize(0), t.getDimSize(1), heads, hidden / heads},
      t.getElementType());
  return ReshapeOp::create(b.builder(), b.loc(), type, x,
                           b.i64Tensor({0, 0, heads, hidden / heads}),
                           /*allowzero=*/false);
}

/// `[d0, d1, heads, size]` -> `[d0, d1, heads * size]`.
Value mergeLastDims(NodeBinder &b, Value x) {
  RankedTensorType t = typeOfValue(x);
  int64_t heads = t.getDimSize(2), size = t.getDimSize(3);
  int64_t hidden = ShapedType::isDynamic(heads) || ShapedType::isDynamic(size)
                       ? ShapedType::kDynamic
                       : heads * size;
  auto type = RankedTensorType::get({t.getDimSize(0), t.getDimSize(1), hidden},
                                    t.getElementType());
  return ReshapeOp::create(b.builder(), b.loc(), type, x,
                           b.i64Tensor({0, 0, -1}), /*allowzero=*/false);
}

/// Elements [begin, end) of the last dimension of `x` (static bounds).
Value sliceLastDim(NodeBinder &b, Value x, int64_t begin, int64_t end) {
  RankedTensorType t = typeOfValue(x);
  SmallVector<int64_t> shape(t.getShape());
  shape.back() = end - begin;
  return SliceOp::create(b.builder(), b.loc(),
                         RankedTensorType::get(shape, t.getElementType()), x,
                         b.i64Tensor({begin}), b.i64Tensor({end}),
                         b.i64Tensor({t.getRank() - 1}), Value());
}

/// Dimension `d` of `x` as a 0-D i64 tensor (a constant when static).
Value dimScalar(NodeBinder &b, Value x, int64_t d) {
  RankedTensorType t = typeOfValue(x);
  auto i64 = b.builder().getI64Type();
  if (!t.isDynamicDim(d))
    return b.scalar(i64, static_cast<double>(t.getDimSize(d)));
  Value dims = createInferred<ShapeOp>(b, x, b.builder().getI64IntegerAttr(d),
                                       b.builder().getI64IntegerAttr(d + 1));
  return createInferred<SqueezeOp>(b, dims, ArrayRef<int64_t>{0});
}

/// 0, 1, ..., n - 1 (i64) for a 0-D i64 `n`.
Value positions(NodeBinder &b, Value n, int64_t staticN) {
  auto i64 = b.builder().getI64Type();
  return RangeOp::create(b.builder(), b.loc(),
                         RankedTensorType::get({staticN}, i64),
                         b.scalar(i64, 0), n, b.scalar(i64, 1));
}

//===----------------------------------------------------------------------===//
// RMSNormalization
//===----------------------------------------------------------------------===//

/// RMSNormalization-23 is loom.rms_norm. Its statistics are computed in at
/// least f32, which is what stash_type 1 (the default, the only value the
/// ONNX reference implements) asks for. A scale of another element type
/// than X is converted to X's, and Y takes the scale's type.
LogicalResult buildRMSNormalization(NodeBinder &b) {
  Value x = b.input(0), scale = b.input(1);
  std::optional<int64_t> axis = b.intAttr("axis", -1);
  std::optional<float> epsilon = b.floatAttr("epsilon", 1e-5f);
  std::optional<int64_t> stashType = b.intAttr("stash_type", 1);
  if (!x || !scale || !axis || !epsilon || !stashType)
    return failure();
  if (*stashType != 1)
    return b.fail("stash_type " + std::to_string(*stashType) +
                  " is not supported (statistics are computed in float)");
  RankedTensorType in = typeOfValue(x);
  std::optional<int64_t> a = normalizeAxisOrFail(b, *axis, in.getRank());
  if (!a)
    return failure();
  ArrayRef<int64_t> normalized = in.getShape().drop_front(*a);
  ArrayRef<int64_t> scaleShape = typeOfValue(scale).getShape();
  FailureOr<SmallVector<int64_t>> broadcast =
      broadcastShapes(normalized, scaleShape);
  if (failed(broadcast) || broadcast->size() != normalized.size() ||
      !areShapesCompatible(*broadcast, normalized))
    return b.emitError() << "scale " << typeOfValue(scale)
                         << " does not broadcast to the normalized shape of "
                         << in << " from axis " << *a;
  Type resultElement = typeOfValue(scale).getElementType();
  Value y = RMSNormOp::create(
      b.builder(), b.loc(), in, x, castTo(b, scale, in.getElementType()),
      b.builder().getI64IntegerAttr(*a), b.builder().getF32FloatAttr(*epsilon));
  return bindRefined(b, castTo(b, y, resultElement));
}

//===----------------------------------------------------------------------===//
// RotaryEmbedding
//===----------------------------------------------------------------------===//

/// RotaryEmbedding-23 on `[B, H, S, D]` or `[B, S, H * D]` (with num_heads)
/// is loom.rotary_embedding on the input viewed `[B, H, S, D]` or
/// `[B, S, H, D]`, with the cos/sin rows of each (batch, position) -- looked
/// up by position_ids when given -- broadcast over the heads. A partial
/// rotation (rotary_embedding_dim < D) rotates the leading features and
/// passes the others through.
LogicalResult buildRotaryEmbedding(NodeBinder &b) {
  Value x = b.input(0), cosCache = b.input(1), sinCache = b.input(2);
  Value positionIds = b.optionalInput(3);
  std::optional<int64_t> interleaved = b.intAttr("interleaved", 0);
  std::optional<int64_t> rotaryDim = b.intAttr("rotary_embedding_dim", 0);
  std::optional<int64_t> numHeads = b.intAttr("num_heads", 0);
  if (!x || !cosCache || !sinCache || !interleaved || !rotaryDim || !numHeads)
    return failure();
  RankedTensorType in = typeOfValue(x);
  if (in.getRank() != 3 && in.getRank() != 4)
    return b.emitError() << "expects an input [B, H, S, D] or [B, S, hidden], "
                            "got "
                         << in;
  bool threeD = in.getRank() == 3;
  Value rows = threeD ? splitLastDim(b, x, *numHeads, "input") : x;
  if (!rows)
    return failure();
  int64_t headSize = typeOfValue(rows).getShape().back();
  if (ShapedType::isDynamic(headSize))
    return b.fail("needs a head size known at import time");
  int64_t rotated = *rotaryDim > 0 ? *rotaryDim : headSize;
  if (rotated % 2 != 0 || rotated > headSize)
    return b.emitError() << "rotary_embedding_dim " << rotated
                         << " must be even and at most the head size "
                         << headSize;
  SmallVector<Value, 2> tables;
  for (Value cache : {cosCache, sinCache}) {
    RankedTensorType t = typeOfValue(cache);
    if (positionIds) {
      if (t.getRank() != 2)
        return b.emitError() << "with position_ids, the cos/sin caches must be "
                                "[max_position, rotary_dim / 2], got "
                             << t;
      if (!typeOfValue(positionIds).getElementType().isInteger(64))
        return b.fail("position_ids must be int64");
      cache = createInferred<GatherOp>(b, cache, positionIds,
                                       b.builder().getI64IntegerAttr(0));
    } else if (t.getRank() != 3) {
      return b.emitError() << "without position_ids, the cos/sin caches must "
                              "be [B, S, rotary_dim / 2], got "
                           << t;
    }
    int64_t columns = typeOfValue(cache).getShape().back();
    if (!ShapedType::isDynamic(columns) && columns != rotated / 2)
      return b.emitError() << "the cos/sin caches have " << columns
                           << " columns; rotating " << rotated
                           << " features needs " << rotated / 2;
    // [B, S, half] against [B, H, S, D] or [B, S, H, D]: a 1 for the heads.
    tables.push_back(createInferred<UnsqueezeOp>(
        b, cache, ArrayRef<int64_t>{threeD ? 2 : 1}));
  }
  Value part = rotated < headSize ? sliceLastDim(b, rows, 0, rotated) : rows;
  Value y = RotaryEmbeddingOp::create(b.builder(), b.loc(), typeOfValue(part),
                                      part, tables[0], tables[1],
                                      b.builder().getBoolAttr(*interleaved));
  if (rotated < headSize)
    y = createInferred<ConcatOp>(
        b, ValueRange{y, sliceLastDim(b, rows, rotated, headSize)},
        b.builder().getI64IntegerAttr(3));
  return bindRefined(b, threeD ? mergeLastDims(b, y) : y);
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

/// Attention-23/24/25 as read from one node.
struct AttentionNode {
  Value query, key, value; // [B, H, S, D] after splitting 3-D inputs' heads
  Value mask, pastKey, pastValue, nonPadLength;
  bool threeD = false;
  bool causal = false;
  std::optional<float> scale;
  float softcap = 0;
  int64_t qkOutputMode = 0;
  int64_t softmaxPrecision = 0;
  int64_t leftWindow = -1, rightWindow = -1;
};

/// -inf where `allowed` is false, 0 where it is true, in `element`.
Value additiveMask(NodeBinder &b, Value allowed, Type element) {
  return createInferred<WhereOp>(
      b, allowed, b.scalar(element, 0.0),
      b.scalar(element, -std::numeric_limits<double>::infinity()));
}

/// The additive bias ONNX adds to the scores: the mask (padded with masked
/// positions to the key length, booleans made -inf/0), the causal and
/// sliding-window frontiers (aligned to the first key plus the past length,
/// or per batch to nonpad_kv_seqlen minus the query length) and the key
/// padding of nonpad_kv_seqlen. Null when there is none.
FailureOr<Value> attentionBias(NodeBinder &b, const AttentionNode &n,
                               Value keys) {
  Type element = typeOfValue(n.query).getElementType();
  auto i64 = b.builder().getI64Type();
  Value bias;
  auto addBias = [&](Value term) {
    bias = bias ? createInferred<AddOp>(b, bias, term) : term;
  };
  int64_t keyLength = typeOfValue(keys).getDimSize(2);
  if (n.mask) {
    Value mask = n.mask;
    RankedTensorType m = typeOfValue(mask);
    if (m.getRank() < 1)
      return b.fail("attn_mask must have rank >= 1");
    bool boolean = m.getElementType().isInteger(1);
    if (!boolean && !isa<FloatType>(m.getElementType()))
      return b.emitError() << "attn_mask must be boolean or floating-point, "
                              "got "
                           << m;
    int64_t columns = m.getShape().back();
    if (!ShapedType::isDynamic(columns) && !ShapedType::isDynamic(keyLength) &&
        columns < keyLength) {
      // A mask shorter than the keys leaves the remaining keys masked.
      SmallVector<int64_t> pads(2 * m.getRank(), 0), shape(m.getShape());
      pads.back() = keyLength - columns;
      shape.back() = keyLength;
      Value fill =
          boolean
              ? Value(ConstantOp::create(
                    b.builder(), b.loc(),
                    DenseElementsAttr::get(
                        RankedTensorType::get({}, m.getElementType()), false)))
              : b.scalar(m.getElementType(),
                         -std::numeric_limits<double>::infinity());
      mask = PadOp::create(b.builder(), b.loc(),
                           RankedTensorType::get(shape, m.getElementType()),
                           mask, b.i64Tensor(pads), fill);
    }
    addBias(boolean ? additiveMask(b, mask, element)
                    : castTo(b, mask, element));
  }
  bool window = n.leftWindow >= 0 || n.rightWindow >= 0;
  if (!n.causal && !window && !n.nonPadLength)
    return bias;

  // Query i attends key j when j - i <= offset (causal), with offset the
  // past length or, per batch, nonpad_kv_seqlen - S.
  int64_t s = typeOfValue(n.query).getDimSize(2);
  Value rows = createInferred<UnsqueezeOp>(
      b, positions(b, dimScalar(b, n.query, 2), s), ArrayRef<int64_t>{1});
  Value columns = createInferred<UnsqueezeOp>(
      b, positions(b, dimScalar(b, keys, 2), keyLength), ArrayRef<int64_t>{0});
  Value offset;
  if (n.nonPadLength) {
    // [B] -> [B, 1, 1] against [S, T].
    Value lengths = castTo(b, n.nonPadLength, i64);
    offset = createInferred<SubOp>(
        b, createInferred<UnsqueezeOp>(b, lengths, ArrayRef<int64_t>{1, 2}),
        dimScalar(b, n.query, 2));
  } else {
    offset = n.pastKey ? dimScalar(b, n.pastKey, 2) : b.scalar(i64, 0);
  }
  // distance = i + offset - j: how far key j lies behind query i.
  Value distance =
      createInferred<SubOp>(b, createInferred<AddOp>(b, rows, offset), columns);
  Value allowed;
  auto require = [&](Value condition) {
    allowed =
        allowed ? createInferred<AndOp>(b, allowed, condition) : condition;
  };
  if (n.causal)
    require(createInferred<GreaterEqualOp>(b, distance, b.scalar(i64, 0)));
  if (n.leftWindow >= 0)
    require(createInferred<LessEqualOp>(
        b, distance, b.scalar(i64, static_cast<double>(n.leftWindow))));
  if (n.rightWindow >= 0)
    require(createInferred<GreaterEqualOp>(
        b, distance, b.scalar(i64, -static_cast<double>(n.rightWindow))));
  auto perBatch = [&](Value v) {
    // [B, S, T] -> [B, 1, S, T]; [S, T] broadcasts as it is.
    return typeOfValue(v).getRank() == 3
               ? createInferred<UnsqueezeOp>(b, v, ArrayRef<int64_t>{1})
               : v;
  };
  if (allowed)
    addBias(perBatch(additiveMask(b, allowed, element)));
  if (n.nonPadLength) {
    // Keys at or after a batch's length are padding: [1, T] < [B, 1].
    Value lengths = createInferred<UnsqueezeOp>(
        b, castTo(b, n.nonPadLength, i64), ArrayRef<int64_t>{1});
    Value valid = createInferred<LessOp>(b, columns, lengths);
    addBias(createInferred<UnsqueezeOp>(b, additiveMask(b, valid, element),
                                        ArrayRef<int64_t>{1, 2}));
  }
  return bias;
}

/// `[B, Hkv, T, D]` repeated to `[B, Hkv * group, T, D]`, each key/value
/// head serving `group` consecutive query heads.
Value repeatHeads(NodeBinder &b, Value x, int64_t group) {
  if (group == 1)
    return x;
  RankedTensorType t = typeOfValue(x);
  Value lifted = createInferred<UnsqueezeOp>(b, x, ArrayRef<int64_t>{2});
  auto tiledType =
      RankedTensorType::get({t.getDimSize(0), t.getDimSize(1), group,
                             t.getDimSize(2), t.getDimSize(3)},
                            t.getElementType());
  // Broadcast (bidirectional, as ONNX Expand is) rather than tiled: the
  // other sizes may be known only at run time.
  Value tiled = ExpandOp::create(b.builder(), b.loc(), tiledType, lifted,
                                 b.i64Tensor({1, 1, group, 1, 1}));
  int64_t heads = t.getDimSize(1) * group;
  return ReshapeOp::create(
      b.builder(), b.loc(),
      RankedTensorType::get(
          {t.getDimSize(0), heads, t.getDimSize(2), t.getDimSize(3)},
          t.getElementType()),
      tiled, b.i64Tensor({0, heads, -1, t.getDimSize(3)}), /*allowzero=*/false);
}

/// The ONNX function body: returns Y `[B, H, S, Dv]` and binds output 3
/// (qk_matmul_output) when used.
FailureOr<Value> spelledOutAttention(NodeBinder &b, const AttentionNode &n,
                                     Value keys, Value values, double scale) {
  RankedTensorType q = typeOfValue(n.query), k = typeOfValue(keys);
  Type element = q.getElementType();
  int64_t group = q.getDimSize(1) / k.getDimSize(1);
  if (group > 1 && (ShapedType::isDynamic(k.getDimSize(3)) ||
                    ShapedType::isDynamic(typeOfValue(values).getDimSize(3))))
    return b.fail("grouped-query heads need head sizes known at import time");
  Value keysT = createInferred<TransposeOp>(b, repeatHeads(b, keys, group),
                                            ArrayRef<int64_t>{0, 1, 3, 2});
  Value scores = createInferred<MulOp>(
      b, createInferred<MatMulOp>(b, n.query, keysT), b.scalar(element, scale));
  if (n.softcap > 0) {
    Value cap = b.scalar(element, n.softcap);
    scores = createInferred<MulOp>(
        b, createInferred<TanhOp>(b, createInferred<DivOp>(b, scores, cap)),
        cap);
  }
  FailureOr<Value> bias = attentionBias(b, n, keys);
  if (failed(bias))
    return failure();
  Value biased = *bias ? createInferred<AddOp>(b, scores, *bias) : scores;
  Value qkOutput = n.qkOutputMode == 2 ? biased : scores;
  Type softmaxElement = element;
  if (n.softmaxPrecision != 0 &&
      !(softmaxElement = convertElementType(
            b.context(), static_cast<int32_t>(n.softmaxPrecision))))
    return b.fail("softmax_precision " + std::to_string(n.softmaxPrecision) +
                  " is not a supported element type");
  Value probabilities = createInferred<SoftmaxOp>(
      b, castTo(b, biased, softmaxElement), b.builder().getI64IntegerAttr(3));
  if (*bias) {
    // A row with every key masked has probabilities 0 (its softmax would
    // be 0 / 0), so its output is zeros.
    Value rowMax = createInferred<ReduceMaxOp>(
        b, *bias,
        b.builder().getDenseI64ArrayAttr({typeOfValue(*bias).getRank() - 1}),
        b.builder().getBoolAttr(true));
    Value allMasked = createInferred<EqualOp>(
        b, rowMax, b.scalar(element, -std::numeric_limits<double>::infinity()));
    probabilities = createInferred<WhereOp>(
        b, allMasked, b.scalar(softmaxElement, 0.0), probabilities);
  }
  probabilities = castTo(b, probabilities, element);
  if (n.qkOutputMode == 3)
    qkOutput = probabilities;
  if (b.hasOutput(3) && failed(bindRefined(b, qkOutput, 3)))
    return failure();
  return createInferred<MatMulOp>(b, probabilities,
                                  repeatHeads(b, values, group));
}

/// Whether a constant boolean or additive (0 / -inf) mask [..., S, T] is
/// exactly loom.attention's causal frontier for scores [B, H, s, t]: query
/// i keeps key j iff j <= i + t - s.
bool isCausalConstantMask(DenseElementsAttr mask, int64_t s, int64_t t) {
  auto type = cast<RankedTensorType>(mask.getType());
  if (type.getRank() < 2 || ShapedType::isDynamic(t) ||
      ShapedType::isDynamic(s) || type.getShape().back() != t ||
      type.getDimSize(type.getRank() - 2) != s)
    return false;
  SmallVector<bool> kept;
  if (type.getElementType().isInteger(1)) {
    llvm::append_range(kept, mask.getValues<bool>());
  } else if (isa<FloatType>(type.getElementType())) {
    for (const APFloat &v : mask.getValues<APFloat>()) {
      bool minusInf = v.isInfinity() && v.isNegative();
      if (!minusInf && !v.isZero())
        return false;
      kept.push_back(!minusInf);
    }
  } else {
    return false;
  }
  for (size_t e = 0; e < kept.size(); ++e) {
    int64_t i = static_cast<int64_t>(e / t) % s,
            j = static_cast<int64_t>(e % t);
    if (kept[e] != (j <= i + t - s))
      return false;
  }
  return true;
}

/// Attention-23 (opset 24 adds nonpad_kv_seqlen, opset 25 the sliding
/// window). Q/K/V are `[B, H, S, D]`, or `[B, S, H * D]` with q_num_heads
/// and kv_num_heads; past_key/past_value are concatenated before the keys
/// and values (present_key/present_value).
LogicalResult buildAttention(NodeBinder &b) {
  AttentionNode n;
  Value q = b.input(0), k = b.input(1), v = b.input(2);
  n.mask = b.optionalInput(3);
  n.pastKey = b.optionalInput(4);
  n.pastValue = b.optionalInput(5);
  n.nonPadLength = b.opset() >= 24 ? b.optionalInput(6) : Value();
  std::optional<int64_t> causal = b.intAttr("is_causal", 0);
  std::optional<int64_t> qHeads = b.intAttr("q_num_heads", 0);
  std::optional<int64_t> kvHeads = b.intAttr("kv_num_heads", 0);
  std::optional<int64_t> mode = b.intAttr("qk_matmul_output_mode", 0);
  std::optional<float> softcap = b.floatAttr("softcap", 0.0f);
  std::optional<int64_t> precision = b.intAttr("softmax_precision", 0);
  std::optional<int64_t> left = b.intAttr("left_window_size", -1);
  std::optional<int64_t> right = b.intAttr("right_window_size", -1);
  if (!q || !k || !v || !causal || !qHeads || !kvHeads || !mode || !softcap ||
      !precision || !left || !right)
    return failure();
  if (b.hasAttr("scale")) {
    n.scale = b.floatAttr("scale", 0.0f);
    if (!n.scale)
      return failure();
  }
  if (*mode < 0 || *mode > 3)
    return b.fail("qk_matmul_output_mode " + std::to_string(*mode) +
                  " is not one of 0, 1, 2, 3");
  if (!n.pastKey != !n.pastValue)
    return b.fail("past_key and past_value must be given together");
  if (n.nonPadLength && n.pastKey)
    return b.fail("nonpad_kv_seqlen cannot be combined with past_key and "
                  "past_value");
  n.causal = *causal != 0;
  n.softcap = *softcap;
  n.qkOutputMode = *mode;
  n.softmaxPrecision = *precision;
  n.leftWindow = *left;
  n.rightWindow = *right;

  // ONNX 1.12's checker does not know this op (opset 23): its type
  // constraints (T1, T2: floating-point tensors) are checked here.
  for (auto [value, name] :
       {std::pair{q, "Q"}, std::pair{k, "K"}, std::pair{v, "V"},
        std::pair{n.pastKey, "past_key"}, std::pair{n.pastValue, "past_value"}})
    if (value && !isa<FloatType>(typeOfValue(value).getElementType()))
      return b.emitError() << name << " must be a floating-point tensor, got "
                           << typeOfValue(value);
  int64_t rank = typeOfValue(q).getRank();
  if (rank != 3 && rank != 4)
    return b.fail("Q, K and V must be 3-D [B, S, hidden] or 4-D [B, H, S, D]");
  if (typeOfValue(k).getRank() != rank || typeOfValue(v).getRank() != rank)
    return b.fail("Q, K and V must have one rank");
  n.threeD = rank == 3;
  if (n.threeD) {
    // [B, S, H * D] -> [B, S, H, D] -> [B, H, S, D].
    auto heads = [&](Value x, int64_t count, StringRef what) -> Value {
      Value split = splitLastDim(b, x, count, what);
      return split ? createInferred<TransposeOp>(b, split,
                                                 ArrayRef<int64_t>{0, 2, 1, 3})
                   : Value();
    };
    q = heads(q, *qHeads, "Q");
    k = q ? heads(k, *kvHeads, "K") : Value();
    v = k ? heads(v, *kvHeads, "V") : Value();
    if (!v)
      return failure();
  }
  n.query = q;
  RankedTensorType qt = typeOfValue(q), kt = typeOfValue(k);
  int64_t h = qt.getDimSize(1), hkv = kt.getDimSize(1);
  if (ShapedType::isDynamic(h) || ShapedType::isDynamic(hkv))
    return b.fail("needs head counts known at import time");
  if (hkv == 0 || h % hkv != 0 || typeOfValue(v).getDimSize(1) != hkv)
    return b.emitError() << "query heads (" << h
                         << ") must be a multiple of the key/value heads ("
                         << hkv << ")";
  double scale;
  if (n.scale) {
    scale = *n.scale;
  } else {
    int64_t d = qt.getDimSize(3);
    if (ShapedType::isDynamic(d))
      return b.fail("needs the head size known at import time (or a scale)");
    scale = 1.0 / std::sqrt(static_cast<double>(d));
  }

  Value keys = k, values = v;
  if (n.pastKey) {
    if (typeOfValue(n.pastKey).getRank() != 4 ||
        typeOfValue(n.pastValue).getRank() != 4)
      return b.fail("past_key and past_value must be 4-D [B, H, P, D]");
    keys = createInferred<ConcatOp>(b, ValueRange{n.pastKey, k},
                                    b.builder().getI64IntegerAttr(2));
    values = createInferred<ConcatOp>(b, ValueRange{n.pastValue, v},
                                      b.builder().getI64IntegerAttr(2));
  }
  if ((b.hasOutput(1) && failed(bindRefined(b, keys, 1))) ||
      (b.hasOutput(2) && failed(bindRefined(b, values, 2))))
    return failure();

  // ONNX places query i at key position i + P, P the past length (0
  // without a past). loom.attention places it at i (start-aligned) or at
  // i + T - S (end-aligned, T = P + the new keys): without a past, the
  // start is ONNX's; with one, the end is, when the new keys are as many
  // as the queries -- known at import time, or checked at run time.
  int64_t s = qt.getDimSize(2), newKeys = kt.getDimSize(2);
  bool positional = n.causal || n.leftWindow >= 0 || n.rightWindow >= 0;
  bool startAligned = !n.pastKey;
  bool checkNewKeys =
      positional && n.pastKey &&
      (ShapedType::isDynamic(s) || ShapedType::isDynamic(newKeys));
  bool alignmentAgrees =
      !positional || !n.pastKey || checkNewKeys || s == newKeys;
  // loom.attention takes the mask as it is when it spans the keys (ONNX
  // pads a shorter one with masked positions; a size known only at run time
  // is taken to span them, as the spelled-out form takes it); rows with
  // every key masked give zeros in both. A constant mask that is exactly
  // the causal frontier (exporters fold the causal mask into one) becomes
  // the causal flag.
  bool fusedCausal = n.causal, maskFuses = !n.mask;
  Value fusedMask;
  int64_t keyLength = typeOfValue(keys).getDimSize(2);
  if (n.mask) {
    RankedTensorType m = typeOfValue(n.mask);
    SmallVector<int64_t> scoreShape{qt.getDimSize(0), h, s, keyLength};
    FailureOr<SmallVector<int64_t>> broadcast =
        broadcastShapes(scoreShape, m.getShape());
    int64_t columns = m.getRank() ? m.getShape().back() : 1;
    bool spansKeys = ShapedType::isDynamic(columns) ||
                     ShapedType::isDynamic(keyLength) || columns == keyLength;
    bool typed =
        m.getElementType().isInteger(1) || isa<FloatType>(m.getElementType());
    if (typed && spansKeys && m.getRank() <= 4 && succeeded(broadcast) &&
        areShapesCompatible(*broadcast, scoreShape)) {
      fusedMask = n.mask;
      maskFuses = true;
      DenseElementsAttr constant = b.constantInput(3);
      if (!positional && constant &&
          isCausalConstantMask(constant, s, keyLength)) {
        fusedCausal = true;
        fusedMask = Value();
      }
    }
  }
  bool fused = maskFuses && !n.nonPadLength && n.softcap <= 0 &&
               !b.hasOutput(3) && alignmentAgrees;
  Value y;
  if (fused) {
    if (checkNewKeys) {
      // The new keys and values reshaped to the query count: a reshape
      // that fails at run time when they differ.
      auto newKeysAsQueries = [&](Value x) -> Value {
        RankedTensorType t = typeOfValue(x);
        auto dims = [&](Value of, int64_t from, int64_t to) {
          return createInferred<ShapeOp>(b, of,
                                         b.builder().getI64IntegerAttr(from),
                                         b.builder().getI64IntegerAttr(to));
        };
        Value shape = createInferred<ConcatOp>(
            b, ValueRange{dims(x, 0, 2), dims(n.query, 2, 3), dims(x, 3, 4)},
            b.builder().getI64IntegerAttr(0));
        return ReshapeOp::create(
            b.builder(), b.loc(),
            RankedTensorType::get(
                {t.getDimSize(0), t.getDimSize(1), s, t.getDimSize(3)},
                t.getElementType()),
            x, shape, /*allowzero=*/false);
      };
      keys = createInferred<ConcatOp>(
          b, ValueRange{n.pastKey, newKeysAsQueries(k)},
          b.builder().getI64IntegerAttr(2));
      values = createInferred<ConcatOp>(
          b, ValueRange{n.pastValue, newKeysAsQueries(v)},
          b.builder().getI64IntegerAttr(2));
    }
    // The frontier of a constant causal mask is end-aligned.
    auto attention =
        createInferred<AttentionOp>(b, n.query, keys, values, fusedMask,
                                    b.builder().getF32FloatAttr(scale),
                                    b.builder().getBoolAttr(fusedCausal))
            .getDefiningOp<AttentionOp>();
    if (positional) {
      attention.setStartAligned(startAligned);
      attention.setLeftWindow(n.leftWindow);
      attention.setRightWindow(n.rightWindow);
    }
    y = attention;
  } else {
    FailureOr<Value> spelled = spelledOutAttention(b, n, keys, values, scale);
    if (failed(spelled))
      return failure();
    y = *spelled;
  }
  if (n.threeD)
    y = mergeLastDims(
        b, createInferred<TransposeOp>(b, y, ArrayRef<int64_t>{0, 2, 1, 3}));
  return bindRefined(b, y);
}

//===----------------------------------------------------------------------===//
// TensorScatter
//===----------------------------------------------------------------------===//

/// TensorScatter-24: present = past_cache with `update` written along
/// `axis` at each batch row's write_indices[b] (0 when absent), wrapping
/// around the cache length in circular mode. A scatter_elements with
/// indices write_indices[b] + position, broadcast over the update.
LogicalResult buildTensorScatter(NodeBinder &b) {
  Value cache = b.input(0), update = b.input(1);
  Value writeIndices = b.optionalInput(2);
  std::optional<int64_t> axis = b.intAttr("axis", -2);
  std::optional<std::string> mode = b.stringAttr("mode", "linear");
  if (!cache || !update || !axis || !mode)
    return failure();
  if (*mode != "linear" && *mode != "circular")
    return b.fail("mode '" + *mode + "' is not 'linear' or 'circular'");
  RankedTensorType c = typeOfValue(cache), u = typeOfValue(update);
  int64_t rank = c.getRank();
  if (u.getRank() != rank || u.getElementType() != c.getElementType())
    return b.emitError() << "update " << u << " does not fit the cache " << c;
  std::optional<int64_t> a = normalizeAxisOrFail(b, *axis, rank);
  if (!a)
    return failure();
  if (*a == 0)
    return b.fail("axis 0 is the batch axis; the sequence axis must follow "
                  "it");
  for (int64_t d = 0; d < rank; ++d) {
    int64_t cd = c.getDimSize(d), ud = u.getDimSize(d);
    if (ShapedType::isDynamic(cd) || ShapedType::isDynamic(ud))
      continue;
    if (d == *a ? ud > cd : ud != cd)
      return b.emitError() << "update " << u << " does not fit the cache " << c
                           << " (dimension " << d << ")";
  }
  auto i64 = b.builder().getI64Type();
  // position[p] along the axis, 1 elsewhere: [1, ..., L, ..., 1].
  SmallVector<int64_t> alongAxis(rank, 1);
  alongAxis[*a] = -1;
  Value position = ReshapeOp::create(
      b.builder(), b.loc(),
      RankedTensorType::get(
          [&] {
            SmallVector<int64_t> shape(rank, 1);
            shape[*a] = u.getDimSize(*a);
            return shape;
          }(),
          i64),
      positions(b, dimScalar(b, update, *a), u.getDimSize(*a)),
      b.i64Tensor(alongAxis), /*allowzero=*/false);
  Value index = position;
  if (writeIndices) {
    if (typeOfValue(writeIndices).getRank() != 1)
      return b.fail("write_indices must be 1-D [batch]");
    SmallVector<int64_t> batchOnly(rank, 1);
    batchOnly[0] = -1;
    SmallVector<int64_t> batchShape(rank, 1);
    batchShape[0] = typeOfValue(writeIndices).getDimSize(0);
    Value starts = ReshapeOp::create(
        b.builder(), b.loc(), RankedTensorType::get(batchShape, i64),
        castTo(b, writeIndices, i64), b.i64Tensor(batchOnly),
        /*allowzero=*/false);
    index = createInferred<AddOp>(b, starts, position);
  }
  if (*mode == "circular")
    index = createInferred<ModOp>(b, index, dimScalar(b, cache, *a),
                                  b.builder().getBoolAttr(false));
  // Broadcast to the update's shape, as scatter_elements wants.
  Value shape = createInferred<ShapeOp>(
      b, update, b.builder().getI64IntegerAttr(0), IntegerAttr());
  index =
      ExpandOp::create(b.builder(), b.loc(),
                       RankedTensorType::get(u.getShape(), i64), index, shape);
  Value present = ScatterElementsOp::create(
      b.builder(), b.loc(), c, cache, index, update,
      b.builder().getI64IntegerAttr(*a), b.builder().getStringAttr("none"));
  return bindRefined(b, present);
}

} // namespace

void registerTransformerBuilders(OpTable &t) {
  t.add("", "RMSNormalization", 23, buildRMSNormalization);
  t.add("", "RotaryEmbedding", 23, buildRotaryEmbedding);
  t.add("", "Attention", 23, buildAttention);
  t.add("", "TensorScatter", 24, buildTensorScatter);
}

} // namespace loom::onnx_import
