//===- SequenceModelBuilders.cpp - Recurrent cells ------------------------===//
//
// RNN, GRU and LSTM, and the state-carrying sequence ops of linear-attention
// and state-space models (LinearAttention, CausalConvWithState), are
// unrolled over their (static) time axis into matmuls, elementwise ops and
// activations.
//
//===----------------------------------------------------------------------===//

#include "BuilderUtils.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <cmath>
#include <limits>
#include <map>

using namespace mlir;

namespace loom::onnx_import {
namespace {

//===----------------------------------------------------------------------===//
// Small value helpers
//===----------------------------------------------------------------------===//

/// `v[index]` along `axis`, which drops that axis (a gather with a 0-D index).
Value takeIndex(NodeBinder &b, Value v, int64_t index, int64_t axis) {
  RankedTensorType t = typeOf(v);
  SmallVector<int64_t> shape(t.getShape());
  shape.erase(shape.begin() + axis);
  return GatherOp::create(b.builder(), b.loc(),
                          RankedTensorType::get(shape, t.getElementType()), v,
                          b.scalar(b.builder().getI64Type(), index),
                          b.builder().getI64IntegerAttr(axis));
}

/// Cuts `v` along `axis` into consecutive pieces of `sizes`.
SmallVector<Value> splitAlong(NodeBinder &b, Value v, int64_t axis,
                              ArrayRef<int64_t> sizes) {
  RankedTensorType t = typeOf(v);
  SmallVector<Type> types;
  for (int64_t size : sizes) {
    SmallVector<int64_t> shape(t.getShape());
    shape[axis] = size;
    types.push_back(RankedTensorType::get(shape, t.getElementType()));
  }
  auto &builder = b.builder();
  SmallVector<NamedAttribute> attrs{
      builder.getNamedAttr("axis", builder.getI64IntegerAttr(axis)),
      builder.getNamedAttr("sizes", builder.getDenseI64ArrayAttr(sizes))};
  auto op = SplitOp::create(builder, b.loc(), types, ValueRange{v}, attrs);
  return SmallVector<Value>(op->getResults());
}

/// Concatenation that skips the op for a single operand.
Value concat(NodeBinder &b, ValueRange values, int64_t axis) {
  if (values.size() == 1)
    return values.front();
  return createInferred<ConcatOp>(b, values,
                                  b.builder().getI64IntegerAttr(axis));
}

Value add(NodeBinder &b, Value x, Value y) {
  return createInferred<AddOp>(b, x, y);
}
Value mul(NodeBinder &b, Value x, Value y) {
  return createInferred<MulOp>(b, x, y);
}

//===----------------------------------------------------------------------===//
// RNN, GRU, LSTM
//===----------------------------------------------------------------------===//

/// An activation function of a recurrent cell with its parameters.
struct Activation {
  std::string name; // lower case
  float alpha = 0.0f, beta = 0.0f;
};

/// (uses alpha, uses beta, default alpha, default beta) of the activation
/// functions the ONNX recurrent ops name; the defaults are those of the ONNX
/// operators of the same name (and onnxruntime's).
struct ActivationInfo {
  bool hasAlpha, hasBeta;
  float alpha, beta;
};

std::optional<ActivationInfo> activationInfo(StringRef name) {
  static const std::map<std::string, ActivationInfo> known = {
      {"relu", {false, false, 0, 0}},
      {"tanh", {false, false, 0, 0}},
      {"sigmoid", {false, false, 0, 0}},
      {"softsign", {false, false, 0, 0}},
      {"softplus", {false, false, 0, 0}},
      {"leakyrelu", {true, false, 0.01f, 0}},
      {"thresholdedrelu", {true, false, 1.0f, 0}},
      {"elu", {true, false, 1.0f, 0}},
      {"hardsigmoid", {true, true, 0.2f, 0.5f}},
      {"affine", {true, true, 1.0f, 0.0f}},
      {"scaledtanh", {true, true, 1.0f, 1.0f}},
  };
  auto it = known.find(name.str());
  if (it == known.end())
    return std::nullopt;
  return it->second;
}

/// Applies `act` elementwise:
///   Affine: alpha * x + beta;  ScaledTanh: alpha * tanh(beta * x);
///   ThresholdedRelu: x > alpha ? x : 0;  the others are loom ops.
Value applyActivation(NodeBinder &b, const Activation &act, Value x) {
  auto &builder = b.builder();
  Type elementType = typeOf(x).getElementType();
  StringRef n = act.name;
  if (n == "relu")
    return createInferred<ReluOp>(b, x);
  if (n == "tanh")
    return createInferred<TanhOp>(b, x);
  if (n == "sigmoid")
    return createInferred<SigmoidOp>(b, x);
  if (n == "softsign")
    return createInferred<SoftsignOp>(b, x);
  if (n == "softplus")
    return createInferred<SoftplusOp>(b, x);
  if (n == "leakyrelu")
    return createInferred<LeakyReluOp>(b, x,
                                       builder.getF32FloatAttr(act.alpha));
  if (n == "elu")
    return createInferred<EluOp>(b, x, builder.getF32FloatAttr(act.alpha));
  if (n == "hardsigmoid")
    return createInferred<HardSigmoidOp>(b, x,
                                         builder.getF32FloatAttr(act.alpha),
                                         builder.getF32FloatAttr(act.beta));
  if (n == "affine")
    return add(b, mul(b, x, b.scalar(elementType, act.alpha)),
               b.scalar(elementType, act.beta));
  if (n == "scaledtanh")
    return mul(
        b,
        createInferred<TanhOp>(b, mul(b, x, b.scalar(elementType, act.beta))),
        b.scalar(elementType, act.alpha));
  // thresholdedrelu
  Value above =
      createInferred<GreaterOp>(b, x, b.scalar(elementType, act.alpha));
  return WhereOp::create(builder, b.loc(), typeOf(x), above, x,
                         b.scalar(elementType, 0.0));
}

enum class CellKind { RNN, GRU, LSTM };

/// Everything a recurrent node's attributes say.
struct CellSpec {
  CellKind kind;
  int64_t numGates, numFunctions;
  int64_t hidden, numDirections, layout;
  bool reverseOnly, linearBeforeReset, inputForget;
  std::optional<float> clip;
  /// numFunctions activations per direction, forward first.
  SmallVector<Activation> activations;
};

FailureOr<CellSpec> readCellSpec(NodeBinder &b, CellKind kind) {
  CellSpec s;
  s.kind = kind;
  s.numGates = kind == CellKind::RNN ? 1 : kind == CellKind::GRU ? 3 : 4;
  s.numFunctions = kind == CellKind::RNN ? 1 : kind == CellKind::GRU ? 2 : 3;
  SmallVector<StringRef> known{"activation_alpha", "activation_beta",
                               "activations",      "clip",
                               "direction",        "hidden_size"};
  if (b.opset() >= 14)
    known.push_back("layout");
  if (kind == CellKind::GRU)
    known.push_back("linear_before_reset");
  if (kind == CellKind::LSTM)
    known.push_back("input_forget");
  if (failed(b.rejectUnknownAttrs(known)))
    return failure();

  auto hidden = b.intAttr("hidden_size", -1);
  auto direction = b.stringAttr("direction", "forward");
  auto layout = b.intAttr("layout", 0);
  auto lbr = b.intAttr("linear_before_reset", 0);
  auto inputForget = b.intAttr("input_forget", 0);
  auto alphas = b.floatsAttr("activation_alpha");
  auto betas = b.floatsAttr("activation_beta");
  if (!hidden || !direction || !layout || !lbr || !inputForget || !alphas ||
      !betas)
    return failure();

  // hidden_size is optional in practice; R ([dirs, gates*hidden, hidden])
  // states it too.
  s.hidden = *hidden;
  RankedTensorType rType = b.inputType(2);
  if (!rType)
    return failure();
  if (rType.getRank() != 3)
    return b.fail("R must have rank 3");
  if (s.hidden < 0)
    s.hidden = rType.getDimSize(2);
  if (ShapedType::isDynamic(s.hidden) || s.hidden <= 0)
    return b.fail("needs a positive hidden_size (attribute or static R)");
  if (*direction == "forward" || *direction == "reverse") {
    s.numDirections = 1;
    s.reverseOnly = *direction == "reverse";
  } else if (*direction == "bidirectional") {
    s.numDirections = 2;
    s.reverseOnly = false;
  } else {
    return b.fail("direction '" + *direction + "' is not supported");
  }
  if (*layout != 0 && *layout != 1)
    return b.fail("layout must be 0 or 1");
  s.layout = *layout;
  s.linearBeforeReset = *lbr != 0;
  s.inputForget = *inputForget != 0;
  if (b.hasAttr("clip")) {
    auto clip = b.floatAttr("clip", 0.0f);
    if (!clip)
      return failure();
    if (!(*clip > 0.0f))
      return b.fail("clip must be positive");
    s.clip = *clip;
  }

  // Activation names: the cell's defaults, or the attribute (one list per
  // direction; a single list serves both directions).
  SmallVector<std::string> names;
  if (const onnx::AttributeProto *attr = nullptr; b.hasAttr("activations")) {
    for (const onnx::AttributeProto &a : b.node().attribute())
      if (a.name() == "activations")
        attr = &a;
    if (attr->type() != onnx::AttributeProto::STRINGS)
      return b.fail("attribute 'activations' must be a list of strings");
    for (const std::string &name : attr->strings())
      names.push_back(name);
    if (static_cast<int64_t>(names.size()) == s.numFunctions &&
        s.numDirections == 2)
      names.append(SmallVector<std::string>(names));
    if (static_cast<int64_t>(names.size()) != s.numFunctions * s.numDirections)
      return b.fail("expects " + Twine(s.numFunctions * s.numDirections) +
                    " activations, got " + Twine(attr->strings_size()));
  } else {
    for (int64_t d = 0; d < s.numDirections; ++d) {
      if (kind == CellKind::RNN) {
        names.push_back("Tanh");
      } else if (kind == CellKind::GRU) {
        names.append({"Sigmoid", "Tanh"});
      } else {
        names.append({"Sigmoid", "Tanh", "Tanh"});
      }
    }
  }
  // activation_alpha/beta are consumed in order by the functions that take
  // the parameter; missing ones take the operator defaults (onnxruntime).
  size_t nextAlpha = 0, nextBeta = 0;
  for (const std::string &name : names) {
    std::string lower = llvm::StringRef(name).lower();
    std::optional<ActivationInfo> info = activationInfo(lower);
    if (!info)
      return b.fail("activation function '" + name + "' is not supported");
    Activation act{lower, info->alpha, info->beta};
    if (info->hasAlpha && nextAlpha < alphas->size())
      act.alpha = (*alphas)[nextAlpha++];
    if (info->hasBeta && nextBeta < betas->size())
      act.beta = (*betas)[nextBeta++];
    s.activations.push_back(act);
  }
  return s;
}

/// The recurrent cells, unrolled over the time axis. With X in [seq, batch,
/// input] layout (layout 1 is transposed first), for direction d with
/// weights W = W[d], R = R[d], biases (Wb, Rb) = split(B[d]) and `.` the
/// elementwise product, step t computes (clip applies to every activation
/// input as min(max(x, -clip), clip)):
///
///   RNN:  H = f(X_t W^T + H R^T + Wb + Rb)
///   GRU:  z = f(X_t Wz^T + H Rz^T + Wbz + Rbz)
///         r = f(X_t Wr^T + H Rr^T + Wbr + Rbr)
///         h = g(X_t Wh^T + (r . H) Rh^T + Rbh + Wbh)     linear_before_reset=0
///         h = g(X_t Wh^T + r . (H Rh^T + Rbh) + Wbh)     linear_before_reset=1
///         H = (1 - z) . h + z . H
///   LSTM: i = f(X_t Wi^T + H Ri^T + Pi . C + Wbi + Rbi)
///         f = f(X_t Wf^T + H Rf^T + Pf . C + Wbf + Rbf)  (1 - i: input_forget)
///         c = g(X_t Wc^T + H Rc^T + Wbc + Rbc)
///         C = f . C + i . c
///         o = f(X_t Wo^T + H Ro^T + Po . C + Wbo + Rbo)
///         H = o . h(C)
///
/// Gate order in W/R/B is (i, o, f, c) for LSTM, (z, r, h) for GRU; P is
/// (Pi, Po, Pf). X W^T + Wb (+ Rb) is one matmul over all steps. The
/// reverse direction walks t from the end. An absent initial_h/initial_c
/// is zero, so the terms it would feed are left out of the first step
/// (which needs no static batch size). Y[t, d] is H after step t, Y_h the
/// last H of each direction, Y_c the last C. With sequence_lens (forward
/// only), a step t >= sequence_lens[n] leaves H and C of batch entry n
/// unchanged and sets Y[t, 0, n] to 0.
LogicalResult buildRecurrent(NodeBinder &b, CellKind kind) {
  FailureOr<CellSpec> spec = readCellSpec(b, kind);
  if (failed(spec))
    return failure();
  const CellSpec &s = *spec;
  Value x = b.input(0), w = b.input(1), r = b.input(2);
  if (!x || !w || !r)
    return failure();
  RankedTensorType xType = b.inputType(0);
  if (xType.getRank() != 3 || typeOf(w).getRank() != 3)
    return b.fail("X and W must have rank 3");
  if (!isa<FloatType>(xType.getElementType()))
    return b.fail("expects floating-point X");
  Type elementType = xType.getElementType();
  int64_t hidden = s.hidden, gates = s.numGates * hidden;
  auto checkDim = [&](Value v, int64_t dim, int64_t expected,
                      StringRef what) -> LogicalResult {
    int64_t size = typeOf(v).getDimSize(dim);
    if (!ShapedType::isDynamic(size) && size != expected)
      return b.fail(what + " has size " + Twine(size) + " in dimension " +
                    Twine(dim) + ", expected " + Twine(expected));
    return success();
  };
  if (failed(checkDim(w, 0, s.numDirections, "W")) ||
      failed(checkDim(w, 1, gates, "W")) ||
      failed(checkDim(r, 0, s.numDirections, "R")) ||
      failed(checkDim(r, 1, gates, "R")) || failed(checkDim(r, 2, hidden, "R")))
    return failure();

  if (s.layout == 1)
    x = transpose(b, x, {1, 0, 2});
  int64_t seqLength = typeOf(x).getDimSize(0);
  if (ShapedType::isDynamic(seqLength))
    return b.fail("needs a static sequence length to unroll the recurrence");
  if (seqLength == 0)
    return b.fail("an empty sequence is not supported");

  // sequence_lens equal to the full length everywhere changes nothing.
  // Otherwise a forward pass masks the steps past each sequence's end; a
  // reverse pass would have to start each sequence at its own end.
  Value seqLens;
  if (b.hasInput(4)) {
    std::optional<SmallVector<int64_t>> lens = b.constantInts(4);
    if (!lens ||
        llvm::any_of(*lens, [&](int64_t l) { return l != seqLength; })) {
      if (s.numDirections != 1 || s.reverseOnly)
        return b.fail("sequence_lens is only supported in the forward "
                      "direction, or when it is a constant equal to the "
                      "sequence length (" +
                      Twine(seqLength) + ")");
      seqLens = b.input(4);
      RankedTensorType lensType = b.inputType(4);
      if (lensType.getRank() != 1 ||
          !isa<IntegerType>(lensType.getElementType()))
        return b.fail("sequence_lens must be a 1-D integer tensor");
    }
  }

  Value bias = b.optionalInput(3);
  Value initialH = b.optionalInput(5);
  Value initialC, peephole;
  if (kind == CellKind::LSTM) {
    initialC = b.optionalInput(6);
    peephole = b.optionalInput(7);
  }
  if (bias && (typeOf(bias).getRank() != 2 ||
               failed(checkDim(bias, 1, 2 * gates, "B"))))
    return failure();
  if (peephole && (typeOf(peephole).getRank() != 2 ||
                   failed(checkDim(peephole, 1, 3 * hidden, "P"))))
    return failure();
  for (Value v : {initialH, initialC})
    if (v && typeOf(v).getRank() != 3)
      return b.fail("initial_h and initial_c must have rank 3");
  // initial_h/initial_c are [dirs, batch, hidden], or [batch, dirs, hidden]
  // in layout 1.
  int64_t stateDirAxis = s.layout == 1 ? 1 : 0;

  auto clip = [&](Value v) -> Value {
    if (!s.clip)
      return v;
    v = createInferred<MaxOp>(b, v, b.scalar(elementType, -*s.clip));
    return createInferred<MinOp>(b, v, b.scalar(elementType, *s.clip));
  };
  auto act = [&](int64_t d, int64_t which, Value v) -> Value {
    return applyActivation(b, s.activations[d * s.numFunctions + which],
                           clip(v));
  };
  auto one = [&]() { return b.scalar(elementType, 1.0); };

  SmallVector<SmallVector<Value>> outputs; // [direction][time] -> H
  SmallVector<Value> lastH, lastC;
  for (int64_t d = 0; d < s.numDirections; ++d) {
    bool reverse = s.reverseOnly || d == 1;
    Value wT = transpose(b, takeIndex(b, w, d, 0), {1, 0}); // [in, gates]
    Value rd = takeIndex(b, r, d, 0);                       // [gates, hid]
    Value xw = createInferred<MatMulOp>(b, x, wT); // [seq, batch, gates]

    // Recurrence weights: GRU's h gate multiplies r . H, so it is separate.
    Value rT, rzrT, rhT;
    if (kind == CellKind::GRU) {
      SmallVector<Value> parts = splitAlong(b, rd, 0, {2 * hidden, hidden});
      rzrT = transpose(b, parts[0], {1, 0});
      rhT = transpose(b, parts[1], {1, 0});
    } else {
      rT = transpose(b, rd, {1, 0});
    }

    // Biases: everything but GRU's Rbh (with linear_before_reset) is added
    // once to X W^T for all steps.
    Value rbh;
    if (bias) {
      SmallVector<Value> wr =
          splitAlong(b, takeIndex(b, bias, d, 0), 0, {gates, gates});
      Value rb = wr[1];
      if (kind == CellKind::GRU && s.linearBeforeReset) {
        SmallVector<Value> parts = splitAlong(b, rb, 0, {2 * hidden, hidden});
        rbh = parts[1];
        rb =
            concat(b,
                   {parts[0],
                    b.splat(RankedTensorType::get({hidden}, elementType), 0.0)},
                   0);
      }
      xw = add(b, xw, add(b, wr[0], rb));
    }

    Value pi, po, pf;
    if (peephole) {
      SmallVector<Value> p = splitAlong(b, takeIndex(b, peephole, d, 0), 0,
                                        {hidden, hidden, hidden});
      pi = p[0];
      po = p[1];
      pf = p[2];
    }

    Value h = initialH ? takeIndex(b, initialH, d, stateDirAxis) : Value();
    Value c = initialC ? takeIndex(b, initialC, d, stateDirAxis) : Value();
    SmallVector<Value> hs(seqLength);
    for (int64_t k = 0; k < seqLength; ++k) {
      int64_t t = reverse ? seqLength - 1 - k : k;
      Value hPrev = h, cPrev = c;
      Value xt = takeIndex(b, xw, t, 0); // [batch, gates]
      if (kind == CellKind::RNN) {
        Value pre = h ? add(b, xt, createInferred<MatMulOp>(b, h, rT)) : xt;
        h = act(d, 0, pre);
      } else if (kind == CellKind::LSTM) {
        Value pre = h ? add(b, xt, createInferred<MatMulOp>(b, h, rT)) : xt;
        SmallVector<Value> g =
            splitAlong(b, pre, 1, {hidden, hidden, hidden, hidden});
        Value i = g[0], o = g[1], f = g[2], cc = g[3];
        if (peephole && c) {
          i = add(b, i, mul(b, pi, c));
          f = add(b, f, mul(b, pf, c));
        }
        Value it = act(d, 0, i);
        Value ft =
            s.inputForget ? createInferred<SubOp>(b, one(), it) : act(d, 0, f);
        Value ct = act(d, 1, cc);
        Value cNew = mul(b, it, ct);
        if (c)
          cNew = add(b, mul(b, ft, c), cNew);
        if (peephole)
          o = add(b, o, mul(b, po, cNew));
        Value ot = act(d, 0, o);
        h = mul(b, ot, act(d, 2, cNew));
        c = cNew;
      } else {
        SmallVector<Value> xg = splitAlong(b, xt, 1, {hidden, hidden, hidden});
        Value z = xg[0], rr = xg[1], hx = xg[2];
        if (h) {
          SmallVector<Value> hg = splitAlong(
              b, createInferred<MatMulOp>(b, h, rzrT), 1, {hidden, hidden});
          z = add(b, z, hg[0]);
          rr = add(b, rr, hg[1]);
        }
        Value zt = act(d, 0, z);
        Value rt = act(d, 0, rr);
        Value pre = hx;
        if (s.linearBeforeReset) {
          Value hh = h ? createInferred<MatMulOp>(b, h, rhT) : Value();
          if (rbh)
            hh = hh ? add(b, hh, rbh) : rbh;
          if (hh)
            pre = add(b, pre, mul(b, rt, hh));
        } else if (h) {
          pre = add(b, pre, createInferred<MatMulOp>(b, mul(b, rt, h), rhT));
        }
        Value ht = act(d, 1, pre);
        Value hNew = mul(b, createInferred<SubOp>(b, one(), zt), ht);
        if (h)
          hNew = add(b, hNew, mul(b, zt, h));
        h = hNew;
      }
      hs[t] = h;
      if (seqLens) {
        // Past its end (t >= sequence_lens[batch]) a sequence outputs 0 and
        // keeps its state.
        Type lensElement = typeOf(seqLens).getElementType();
        Value live = unsqueeze(
            b, createInferred<LessOp>(b, b.scalar(lensElement, t), seqLens),
            {1}); // [batch, 1]
        Value zero = b.scalar(elementType, 0.0);
        hs[t] = createInferred<WhereOp>(b, live, h, zero);
        h = createInferred<WhereOp>(b, live, h, hPrev ? hPrev : zero);
        if (c)
          c = createInferred<WhereOp>(b, live, c, cPrev ? cPrev : zero);
      }
    }
    outputs.push_back(hs);
    lastH.push_back(h);
    lastC.push_back(c);
  }

  // Y: [seq, dirs, batch, hidden] (layout 1: [batch, seq, dirs, hidden]).
  if (b.hasOutput(0)) {
    SmallVector<Value> steps;
    for (int64_t t = 0; t < seqLength; ++t) {
      SmallVector<Value> perDirection;
      for (int64_t d = 0; d < s.numDirections; ++d)
        perDirection.push_back(unsqueeze(b, outputs[d][t], {0, 1}));
      steps.push_back(concat(b, perDirection, 1));
    }
    Value y = concat(b, steps, 0);
    if (s.layout == 1)
      y = transpose(b, y, {2, 0, 1, 3});
    RankedTensorType type = b.outputType(0);
    if (!type || failed(refineTo(b, y, type)))
      return failure();
    b.setOutput(0, y);
  }
  // Y_h, Y_c: [dirs, batch, hidden] (layout 1: [batch, dirs, hidden]).
  auto bindState = [&](size_t index, ArrayRef<Value> states) -> LogicalResult {
    if (!b.hasOutput(index))
      return success();
    SmallVector<Value> parts;
    for (Value v : states)
      parts.push_back(unsqueeze(b, v, {0}));
    Value state = concat(b, parts, 0);
    if (s.layout == 1)
      state = transpose(b, state, {1, 0, 2});
    RankedTensorType type = b.outputType(index);
    if (!type || failed(refineTo(b, state, type)))
      return failure();
    b.setOutput(index, state);
    return success();
  };
  if (failed(bindState(1, lastH)))
    return failure();
  if (kind == CellKind::LSTM)
    return bindState(2, lastC);
  return b.rejectOutputsFrom(2, "RNN and GRU have two outputs");
}

//===----------------------------------------------------------------------===//
// CausalConvWithState, LinearAttention (opset 27)
//===----------------------------------------------------------------------===//

/// CausalConvWithState: a depthwise causal Conv1d that carries its left
/// context. The input [B, C, L] is preceded by past_state [B, C, k - 1]
/// (zeros when absent), convolved with weight [C, 1, k] (group C, no pads),
/// the bias added and SiLU applied when `activation` is "silu" or "swish"
/// (in f32, as ONNX's reference, then converted back); present_state is the
/// last k - 1 positions of the padded input.
LogicalResult buildCausalConvWithState(NodeBinder &b) {
  if (failed(b.rejectUnknownAttrs({"activation"})))
    return failure();
  std::optional<std::string> activation = b.stringAttr("activation", "none");
  Value x = b.input(0), weight = b.input(1);
  if (!activation || !x || !weight)
    return failure();
  if (!llvm::is_contained({"none", "silu", "swish"}, *activation))
    return b.fail("activation \"" + *activation +
                  "\" is not one of \"none\", \"silu\" and \"swish\"");
  RankedTensorType in = typeOf(x), w = typeOf(weight);
  if (in.getRank() != 3 || w.getRank() != 3 || in.isDynamicDim(1) ||
      !w.hasStaticShape() || w.getDimSize(0) != in.getDimSize(1) ||
      w.getDimSize(1) != 1 || w.getDimSize(2) < 1)
    return b.emitError() << "expects input [B, C, L] with a static C and "
                            "weight [C, 1, k], got "
                         << in << " and " << w;
  int64_t channels = in.getDimSize(1), k = w.getDimSize(2);
  SmallVector<int64_t> stateShape = {in.getDimSize(0), channels, k - 1};
  Value bias = b.optionalInput(2), past = b.optionalInput(3);
  if (bias &&
      (typeOf(bias).getRank() != 1 || typeOf(bias).getDimSize(0) != channels))
    return b.emitError() << "expects bias [C] (C = " << channels << "), got "
                         << typeOf(bias);
  if (past) {
    RankedTensorType p = typeOf(past);
    if (p.getRank() != 3 || p.getElementType() != in.getElementType() ||
        p.isDynamicDim(1) || p.getDimSize(1) != channels || p.isDynamicDim(2) ||
        p.getDimSize(2) != k - 1)
      return b.emitError() << "expects past_state [B, C, k - 1] = [B, "
                           << channels << ", " << k - 1 << "], got " << p;
  } else if (!in.isDynamicDim(0)) {
    past = b.splat(in.clone(stateShape), 0);
  } else {
    // Zeros of the input's run-time batch: the input's first k - 1
    // positions times zero would carry NaNs, so build them by shape.
    Type i64 = b.builder().getI64Type();
    Value batchAndChannels = ShapeOp::create(
        b.builder(), b.loc(), RankedTensorType::get({2}, i64), x,
        b.builder().getI64IntegerAttr(0), b.builder().getI64IntegerAttr(2));
    Value shape = concat(b, {batchAndChannels, b.i64Tensor({k - 1})}, 0);
    past = ConstantOfShapeOp::create(
        b.builder(), b.loc(), in.clone(stateShape), shape,
        cast<TypedAttr>(b.builder().getZeroAttr(in.getElementType())));
  }
  Value padded = concat(b, {past, x}, 2);
  RankedTensorType paddedType = typeOf(padded);
  SmallVector<int64_t> outShape(in.getShape());
  OpBuilder &builder = b.builder();
  Value y = ConvOp::create(
      builder, b.loc(), in.clone(outShape), padded, weight, bias,
      builder.getDenseI64ArrayAttr({1}), builder.getDenseI64ArrayAttr({0, 0}),
      builder.getDenseI64ArrayAttr({1}), static_cast<uint64_t>(channels));
  if (*activation != "none") {
    Type f32 = builder.getF32Type();
    y = castTo(b, createInferred<SiluOp>(b, castTo(b, y, f32)),
               in.getElementType());
  }
  Value present;
  if (!paddedType.isDynamicDim(2)) {
    int64_t length = paddedType.getDimSize(2);
    present = SliceOp::create(builder, b.loc(), in.clone(stateShape), padded,
                              b.i64Tensor({length - (k - 1)}),
                              b.i64Tensor({length}), b.i64Tensor({2}), Value());
  } else {
    // The last k - 1 positions: a start counted from the end.
    present = SliceOp::create(
        builder, b.loc(), in.clone(stateShape), padded, b.i64Tensor({-(k - 1)}),
        b.i64Tensor({std::numeric_limits<int64_t>::max()}), b.i64Tensor({2}),
        Value());
  }
  if (failed(bindRefined(b, y)))
    return failure();
  if (b.hasOutput(1) && failed(bindRefined(b, present, 1)))
    return failure();
  return success();
}

/// Position `index` of `v` along `axis`, the axis kept (size 1).
Value positionAt(NodeBinder &b, Value v, int64_t axis, int64_t index) {
  RankedTensorType t = typeOf(v);
  SmallVector<int64_t> shape(t.getShape());
  shape[axis] = 1;
  return SliceOp::create(b.builder(), b.loc(), t.clone(shape), v,
                         b.i64Tensor({index}), b.i64Tensor({index + 1}),
                         b.i64Tensor({axis}), Value());
}

/// [B, T, H * D] -> [B, H, T, D] in f32 (LinearAttention's unpacking).
Value unpackHeads(NodeBinder &b, Value v, int64_t heads) {
  RankedTensorType t = typeOf(v);
  int64_t depth = t.getDimSize(2) / heads;
  auto type = RankedTensorType::get(
      {t.getDimSize(0), t.getDimSize(1), heads, depth}, t.getElementType());
  Value split = ReshapeOp::create(
      b.builder(), b.loc(), type, v,
      b.i64Tensor({t.getDimSize(0), t.getDimSize(1), heads, depth}),
      /*allowzero=*/false);
  return castTo(
      b, createInferred<TransposeOp>(b, split, ArrayRef<int64_t>{0, 2, 1, 3}),
      b.builder().getF32Type());
}

/// LinearAttention: the recurrent state S [B, H_kv, d_k, d_v] of linear
/// attention, unrolled over the (static) sequence. Per step t, in f32:
///   gated:  S *= exp(decay_t)              (per head or per key dimension)
///   delta:  v_t = beta_t * (v_t - k_t S)   (the delta rule)
///   S += k_t^T v_t;  o_t = scale * q_t S   (S repeated over the query
///   heads of a group, GQA)
/// "linear" does neither, "gated_delta" both. The output is [B, T, H_q *
/// d_v] in the query's type, present_state S in past_state's type (the
/// query's when absent). `chunk_size` is a tuning hint that does not change
/// the result.
LogicalResult buildLinearAttention(NodeBinder &b) {
  if (failed(b.rejectUnknownAttrs({"chunk_size", "kv_num_heads", "q_num_heads",
                                   "scale", "update_rule"})))
    return failure();
  std::optional<std::string> rule = b.stringAttr("update_rule", "gated_delta");
  std::optional<int64_t> qHeads = b.intAttr("q_num_heads", 0);
  std::optional<int64_t> kvHeads = b.intAttr("kv_num_heads", 0);
  std::optional<float> scaleAttr = b.floatAttr("scale", 0.0f);
  Value query = b.input(0), key = b.input(1), value = b.input(2);
  if (!rule || !qHeads || !kvHeads || !scaleAttr || !query || !key || !value)
    return failure();
  if (!llvm::is_contained({"linear", "gated", "delta", "gated_delta"}, *rule))
    return b.fail("update_rule \"" + *rule +
                  "\" is not one of \"linear\", \"gated\", \"delta\" and "
                  "\"gated_delta\"");
  if (!b.hasAttr("q_num_heads") || !b.hasAttr("kv_num_heads"))
    return b.fail("attributes 'q_num_heads' and 'kv_num_heads' are required");
  if (*qHeads <= 0 || *kvHeads <= 0 || *qHeads % *kvHeads != 0)
    return b.emitError() << "q_num_heads (" << *qHeads
                         << ") must be a positive multiple of kv_num_heads ("
                         << *kvHeads << ")";
  bool gating = *rule == "gated" || *rule == "gated_delta";
  bool deltaRule = *rule == "delta" || *rule == "gated_delta";
  Value past = b.optionalInput(3), decay = b.optionalInput(4),
        beta = b.optionalInput(5);
  if (gating != bool(decay))
    return b.fail("update_rule \"" + *rule + "\" " +
                  (gating ? "requires" : "forbids") + " the decay input");
  if (deltaRule != bool(beta))
    return b.fail("update_rule \"" + *rule + "\" " +
                  (deltaRule ? "requires" : "forbids") + " the beta input");
  RankedTensorType q = typeOf(query), k = typeOf(key), v = typeOf(value);
  for (RankedTensorType t : {q, k, v})
    if (t.getRank() != 3 || !t.hasStaticShape())
      return b.emitError() << "expects query, key and value [B, T, H * D] "
                              "with static sizes (the recurrence is unrolled "
                              "over T), got "
                           << q << ", " << k << " and " << v;
  int64_t batch = q.getDimSize(0), steps = q.getDimSize(1);
  // Each step is some twenty ops: a bound keeps the program (and its
  // compile time) in proportion to what a model file can ask for.
  constexpr int64_t kMaxSteps = 4096;
  if (steps > kMaxSteps)
    return b.emitError() << "a sequence of " << steps
                         << " steps is longer than the " << kMaxSteps
                         << " this unrolled recurrence supports";
  if (q.getDimSize(2) % *qHeads != 0 || k.getDimSize(2) % *kvHeads != 0 ||
      v.getDimSize(2) % *kvHeads != 0)
    return b.fail("the last dimensions of query, key and value must divide "
                  "by their numbers of heads");
  int64_t dk = q.getDimSize(2) / *qHeads, dv = v.getDimSize(2) / *kvHeads;
  if (k.getDimSize(2) / *kvHeads != dk || k.getDimSize(0) != batch ||
      v.getDimSize(0) != batch || k.getDimSize(1) != steps ||
      v.getDimSize(1) != steps)
    return b.emitError() << "query, key and value disagree: " << q << ", " << k
                         << " and " << v << " with " << *qHeads << " query and "
                         << *kvHeads << " key/value heads";
  Type f32 = b.builder().getF32Type();
  auto stateType = RankedTensorType::get({batch, *kvHeads, dk, dv}, f32);
  Type stateElement = q.getElementType();
  Value state;
  if (past) {
    RankedTensorType p = typeOf(past);
    if (p.getShape() != stateType.getShape())
      return b.emitError() << "expects past_state [" << batch << ", "
                           << *kvHeads << ", " << dk << ", " << dv << "], got "
                           << p;
    stateElement = p.getElementType();
    state = castTo(b, past, f32);
  } else {
    state = b.splat(stateType, 0);
  }
  Value q4 = unpackHeads(b, query, *qHeads), k4 = unpackHeads(b, key, *kvHeads),
        v4 = unpackHeads(b, value, *kvHeads);
  // decay [B, T, H_kv] or [B, T, H_kv * d_k] -> [B, H_kv, T, 1 or d_k].
  Value decay4, beta4;
  if (decay) {
    RankedTensorType d = typeOf(decay);
    if (d.getRank() != 3 ||
        d.getShape().take_front(2) != q.getShape().take_front(2) ||
        (d.getDimSize(2) != *kvHeads && d.getDimSize(2) != *kvHeads * dk))
      return b.emitError() << "expects decay [B, T, H_kv] or [B, T, H_kv * "
                              "d_k], got "
                           << d;
    decay4 = unpackHeads(b, decay, *kvHeads);
  }
  if (beta) {
    RankedTensorType t = typeOf(beta);
    if (t.getRank() != 3 ||
        t.getShape().take_front(2) != q.getShape().take_front(2) ||
        (t.getDimSize(2) != *kvHeads && t.getDimSize(2) != 1))
      return b.emitError() << "expects beta [B, T, H_kv] or [B, T, 1], got "
                           << t;
    beta4 = unpackHeads(b, beta, t.getDimSize(2));
  }
  float scale = *scaleAttr != 0.0f ? *scaleAttr
                                   : 1.0f / std::sqrt(static_cast<float>(dk));
  // Query head h reads key/value head h / group.
  int64_t group = *qHeads / *kvHeads;
  SmallVector<int64_t> kvHeadOf;
  for (int64_t h = 0; h < *qHeads; ++h)
    kvHeadOf.push_back(h / group);
  auto swapLast = [&](Value x) {
    return createInferred<TransposeOp>(b, x, ArrayRef<int64_t>{0, 1, 3, 2});
  };
  auto matmul = [&](Value x, Value y) {
    return createInferred<MatMulOp>(b, x, y);
  };
  SmallVector<Value> outputs;
  for (int64_t t = 0; t < steps; ++t) {
    Value qt = positionAt(b, q4, 2, t), kt = positionAt(b, k4, 2, t),
          vt = positionAt(b, v4, 2, t);
    if (gating)
      state =
          mul(b, state,
              swapLast(createInferred<ExpOp>(b, positionAt(b, decay4, 2, t))));
    if (deltaRule)
      vt = mul(b, positionAt(b, beta4, 2, t),
               createInferred<SubOp>(b, vt, matmul(kt, state)));
    state = add(b, state, matmul(swapLast(kt), vt));
    Value read = state;
    if (group != 1)
      read = GatherOp::create(
          b.builder(), b.loc(),
          RankedTensorType::get({batch, *qHeads, dk, dv}, f32), state,
          b.i64Tensor(kvHeadOf), b.builder().getI64IntegerAttr(1));
    outputs.push_back(mul(b, matmul(qt, read), b.scalar(f32, scale)));
  }
  Value heads = concat(b, outputs, 2);
  Value packed =
      createInferred<TransposeOp>(b, heads, ArrayRef<int64_t>{0, 2, 1, 3});
  auto outType = RankedTensorType::get({batch, steps, *qHeads * dv}, f32);
  Value output = ReshapeOp::create(b.builder(), b.loc(), outType, packed,
                                   b.i64Tensor({batch, steps, *qHeads * dv}),
                                   /*allowzero=*/false);
  if (failed(bindRefined(b, castTo(b, output, q.getElementType()))))
    return failure();
  if (b.hasOutput(1) &&
      failed(bindRefined(b, castTo(b, state, stateElement), 1)))
    return failure();
  return success();
}

} // namespace

void registerSequenceModelBuilders(OpTable &t) {
  for (int64_t version : {7, 14}) {
    t.add("", "RNN", version,
          [](NodeBinder &b) { return buildRecurrent(b, CellKind::RNN); });
    t.add("", "GRU", version,
          [](NodeBinder &b) { return buildRecurrent(b, CellKind::GRU); });
    t.add("", "LSTM", version,
          [](NodeBinder &b) { return buildRecurrent(b, CellKind::LSTM); });
  }
  t.add("", "CausalConvWithState", 27, buildCausalConvWithState);
  t.add("", "LinearAttention", 27, buildLinearAttention);
}

} // namespace loom::onnx_import
