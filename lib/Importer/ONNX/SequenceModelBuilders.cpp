//===- SequenceModelBuilders.cpp - Recurrent cells and Einsum -------------===//
//
// RNN, GRU and LSTM are unrolled over their (static) time axis into matmuls,
// elementwise ops and activations; Einsum becomes transposes, reshapes,
// reductions and batched matmuls; Compress becomes a gather.
//
//===----------------------------------------------------------------------===//

#include "BuilderUtils.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <map>

using namespace mlir;

namespace loom::onnx_import {
namespace {

//===----------------------------------------------------------------------===//
// Small value helpers
//===----------------------------------------------------------------------===//

RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

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

Value transpose(NodeBinder &b, Value v, ArrayRef<int64_t> perm) {
  return createInferred<TransposeOp>(b, v, perm);
}

Value unsqueeze(NodeBinder &b, Value v, ArrayRef<int64_t> axes) {
  return createInferred<UnsqueezeOp>(b, v, axes);
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
// Einsum
//===----------------------------------------------------------------------===//

/// Labels are letters; the dimensions an ellipsis stands for get labels
/// from kEllipsisLabel on, aligned to the right as numpy broadcasts them.
constexpr int64_t kEllipsisLabel = 1000;

/// An operand (or intermediate result) with one label per dimension.
struct Term {
  Value value;
  SmallVector<int64_t> labels;
};

/// Parses one side of an equation term into letters and an ellipsis
/// position (-1 when absent).
LogicalResult parseTerm(NodeBinder &b, StringRef text,
                        SmallVector<int64_t> &letters, int64_t &ellipsisAt) {
  ellipsisAt = -1;
  for (size_t i = 0; i < text.size();) {
    if (text.substr(i).starts_with("...")) {
      if (ellipsisAt >= 0)
        return b.fail("einsum term '" + text + "' has two ellipses");
      ellipsisAt = letters.size();
      i += 3;
      continue;
    }
    char ch = text[i++];
    if (!llvm::isAlpha(ch))
      return b.fail("einsum term '" + text + "' has the invalid character '" +
                    Twine(ch) + "'");
    letters.push_back(ch);
  }
  return success();
}

/// Replaces a repeated label by its diagonal: the two dimensions move to
/// the end, merge into one of n*n elements and a gather picks k*(n+1).
LogicalResult takeDiagonal(NodeBinder &b, Term &term, size_t p, size_t q) {
  RankedTensorType t = typeOf(term.value);
  int64_t n = t.getDimSize(p);
  if (ShapedType::isDynamic(n) || t.getDimSize(q) != n)
    return b.fail("einsum diagonals need equal static sizes");
  SmallVector<int64_t> perm, labels, shape;
  for (size_t i = 0; i < term.labels.size(); ++i)
    if (i != p && i != q) {
      perm.push_back(i);
      labels.push_back(term.labels[i]);
      shape.push_back(t.getDimSize(i));
    }
  perm.append({static_cast<int64_t>(p), static_cast<int64_t>(q)});
  labels.push_back(term.labels[p]);
  Value v = term.value;
  if (!llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    v = transpose(b, v, perm);
  // Zeros copy the leading dimensions, which may be dynamic.
  SmallVector<int64_t> target(shape.size(), 0);
  target.push_back(n * n);
  SmallVector<int64_t> flatShape(shape);
  flatShape.push_back(n * n);
  v = ReshapeOp::create(b.builder(), b.loc(),
                        RankedTensorType::get(flatShape, t.getElementType()), v,
                        b.i64Tensor(target), false);
  SmallVector<int64_t> indices;
  for (int64_t k = 0; k < n; ++k)
    indices.push_back(k * (n + 1));
  shape.push_back(n);
  term.value = GatherOp::create(
      b.builder(), b.loc(), RankedTensorType::get(shape, t.getElementType()), v,
      b.i64Tensor(indices), b.builder().getI64IntegerAttr(shape.size() - 1));
  term.labels = labels;
  return success();
}

/// Sums out the labels of `term` that `keep` does not hold.
void reduceLabels(NodeBinder &b, Term &term,
                  llvm::function_ref<bool(int64_t)> keep) {
  SmallVector<int64_t> axes, labels;
  for (auto [i, l] : llvm::enumerate(term.labels)) {
    if (keep(l))
      labels.push_back(l);
    else
      axes.push_back(i);
  }
  if (axes.empty())
    return;
  term.value = createInferred<ReduceSumOp>(
      b, term.value, b.builder().getDenseI64ArrayAttr(axes),
      b.builder().getBoolAttr(false));
  term.labels = labels;
}

/// Reshapes `v`, whose dimensions form consecutive groups of `counts`, so
/// that each group becomes one dimension (empty groups become 1). With
/// `split`, the inverse: one dimension per group becomes the group's
/// dimensions `sizes`. Zeros in the shape copy the leading single-label
/// groups, which may be dynamic; one dynamic group becomes -1.
FailureOr<Value> regroup(NodeBinder &b, Value v, ArrayRef<int64_t> sizes,
                         ArrayRef<int64_t> counts, bool split) {
  if (llvm::all_of(counts, [](int64_t c) { return c == 1; }))
    return v;
  // Without multi-label groups only size-1 dimensions come or go.
  if (llvm::all_of(counts, [](int64_t c) { return c <= 1; })) {
    SmallVector<int64_t> axes;
    for (auto [i, count] : llvm::enumerate(counts))
      if (count == 0)
        axes.push_back(i);
    if (split)
      return createInferred<SqueezeOp>(b, v, axes);
    return unsqueeze(b, v, axes);
  }
  RankedTensorType t = typeOf(v);
  SmallVector<int64_t> shape, target;
  int64_t dynamicGroups = 0;
  size_t at = 0;
  bool leading = true;
  for (int64_t count : counts) {
    ArrayRef<int64_t> group = sizes.slice(at, count);
    at += count;
    if (split) {
      for (int64_t size : group) {
        shape.push_back(size);
        target.push_back(ShapedType::isDynamic(size) ? -1 : size);
        dynamicGroups += ShapedType::isDynamic(size);
      }
      continue;
    }
    if (count == 1 && leading) {
      shape.push_back(group[0]);
      target.push_back(0);
      continue;
    }
    leading = false;
    int64_t product = 1;
    for (int64_t size : group)
      product = ShapedType::isDynamic(size) || ShapedType::isDynamic(product)
                    ? ShapedType::kDynamic
                    : product * size;
    shape.push_back(product);
    target.push_back(ShapedType::isDynamic(product) ? -1 : product);
    dynamicGroups += ShapedType::isDynamic(product);
  }
  if (split) {
    // The leading single-label groups (batch dims) are copied with zeros.
    for (size_t i = 0; i < counts.size() && counts[i] == 1; ++i) {
      if (ShapedType::isDynamic(target[i]))
        --dynamicGroups;
      target[i] = 0;
    }
  }
  if (dynamicGroups > 1)
    return b.fail("einsum needs static sizes to merge or split several "
                  "dynamic dimensions");
  return Value(ReshapeOp::create(
      b.builder(), b.loc(), RankedTensorType::get(shape, t.getElementType()), v,
      b.i64Tensor(target), false));
}

/// Contracts two terms into one labelled [batch, lhs-free, rhs-free]:
/// labels in both that `keep` holds are batch dimensions, the other shared
/// labels are summed by a batched matmul of
///   lhs [batch, lhsFree, shared] x rhs [batch, shared, rhsFree].
FailureOr<Term> contract(NodeBinder &b, Term lhs, Term rhs,
                         llvm::function_ref<bool(int64_t)> keep) {
  auto in = [](const Term &t, int64_t l) {
    return llvm::is_contained(t.labels, l);
  };
  // Labels only one side has and nobody needs can be summed right away.
  reduceLabels(b, lhs, [&](int64_t l) { return keep(l) || in(rhs, l); });
  reduceLabels(b, rhs, [&](int64_t l) { return keep(l) || in(lhs, l); });
  SmallVector<int64_t> batch, shared, lhsFree, rhsFree;
  for (int64_t l : lhs.labels) {
    if (!in(rhs, l))
      lhsFree.push_back(l);
    else if (keep(l))
      batch.push_back(l);
    else
      shared.push_back(l);
  }
  for (int64_t l : rhs.labels)
    if (!in(lhs, l))
      rhsFree.push_back(l);

  auto sizeOf = [](const Term &t, int64_t l) {
    return typeOf(t.value).getDimSize(llvm::find(t.labels, l) -
                                      t.labels.begin());
  };
  for (int64_t l : shared) {
    int64_t a = sizeOf(lhs, l), c = sizeOf(rhs, l);
    if (!ShapedType::isDynamic(a) && !ShapedType::isDynamic(c) && a != c)
      return b.fail("einsum sums a dimension of sizes " + Twine(a) + " and " +
                    Twine(c) +
                    " (broadcasting summed dimensions is not "
                    "supported)");
  }
  for (int64_t l : batch) {
    int64_t a = sizeOf(lhs, l), c = sizeOf(rhs, l);
    if (!ShapedType::isDynamic(a) && !ShapedType::isDynamic(c) && a != c &&
        a != 1 && c != 1)
      return b.fail("einsum operands disagree on a dimension: " + Twine(a) +
                    " vs " + Twine(c));
  }

  // Orders `t` as the label lists `order` and groups them per `counts`.
  auto arrange =
      [&](const Term &t,
          ArrayRef<SmallVector<int64_t> *> order) -> FailureOr<Value> {
    SmallVector<int64_t> perm, sizes, counts;
    for (SmallVector<int64_t> *group : order) {
      counts.push_back(group->size());
      for (int64_t l : *group) {
        perm.push_back(llvm::find(t.labels, l) - t.labels.begin());
        sizes.push_back(sizeOf(t, l));
      }
    }
    Value v = t.value;
    if (!llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
      v = transpose(b, v, perm);
    SmallVector<int64_t> groupCounts(batch.size(), 1);
    llvm::append_range(groupCounts, ArrayRef<int64_t>(counts).drop_front());
    return regroup(b, v, sizes, groupCounts, false);
  };
  FailureOr<Value> a = arrange(lhs, {&batch, &lhsFree, &shared});
  FailureOr<Value> c = arrange(rhs, {&batch, &shared, &rhsFree});
  if (failed(a) || failed(c))
    return failure();
  Value product = createInferred<MatMulOp>(b, *a, *c);

  // Back to one dimension per label.
  RankedTensorType pt = typeOf(product);
  SmallVector<int64_t> sizes(pt.getShape().take_front(batch.size()));
  for (int64_t l : lhsFree)
    sizes.push_back(sizeOf(lhs, l));
  for (int64_t l : rhsFree)
    sizes.push_back(sizeOf(rhs, l));
  SmallVector<int64_t> counts(batch.size(), 1);
  counts.append({static_cast<int64_t>(lhsFree.size()),
                 static_cast<int64_t>(rhsFree.size())});
  FailureOr<Value> result = regroup(b, product, sizes, counts, true);
  if (failed(result))
    return failure();
  Term out{*result, batch};
  llvm::append_range(out.labels, lhsFree);
  llvm::append_range(out.labels, rhsFree);
  return out;
}

/// Einsum: each operand first loses repeated labels (diagonals) and the
/// labels no other operand or the output has (summed); operands are then
/// contracted left to right by batched matmuls, keeping the labels the
/// output or a later operand needs; a final transpose orders the output.
LogicalResult buildEinsum(NodeBinder &b) {
  if (failed(b.rejectUnknownAttrs({"equation"})))
    return failure();
  auto equation = b.stringAttr("equation", "");
  if (!equation)
    return failure();
  std::string eq;
  for (char ch : *equation)
    if (!llvm::isSpace(ch))
      eq.push_back(ch);
  StringRef text(eq);
  auto [lhsText, rhsText] = text.split("->");
  bool explicitOutput = text.contains("->");
  SmallVector<StringRef> inputTexts;
  lhsText.split(inputTexts, ',');
  SmallVector<Value> inputs = b.variadicInputs();
  if (inputTexts.size() != inputs.size() || b.numInputs() != inputs.size())
    return b.fail("equation '" + *equation + "' names " +
                  Twine(inputTexts.size()) + " operands, the node has " +
                  Twine(b.numInputs()));

  // Operand labels; ellipsis dimensions are right-aligned across operands.
  SmallVector<SmallVector<int64_t>> letters(inputs.size());
  SmallVector<int64_t> ellipsisAt(inputs.size()), ellipsisRank(inputs.size());
  int64_t maxEllipsis = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (failed(parseTerm(b, inputTexts[i], letters[i], ellipsisAt[i])))
      return failure();
    int64_t rank = typeOf(inputs[i]).getRank();
    int64_t extra = rank - static_cast<int64_t>(letters[i].size());
    if (extra < 0 || (ellipsisAt[i] < 0 && extra != 0))
      return b.fail("einsum term '" + inputTexts[i] + "' does not match an " +
                    "operand of rank " + Twine(rank));
    ellipsisRank[i] = extra;
    maxEllipsis = std::max(maxEllipsis, extra);
  }
  SmallVector<Term> terms;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Term t{inputs[i], {}};
    for (size_t k = 0; k <= letters[i].size(); ++k) {
      if (static_cast<int64_t>(k) == ellipsisAt[i])
        for (int64_t e = 0; e < ellipsisRank[i]; ++e)
          t.labels.push_back(kEllipsisLabel + maxEllipsis - ellipsisRank[i] +
                             e);
      if (k < letters[i].size())
        t.labels.push_back(letters[i][k]);
    }
    terms.push_back(t);
  }

  // Output labels: explicit, or the ellipsis then the letters that occur
  // once, in alphabetical order.
  SmallVector<int64_t> outLabels;
  bool anyEllipsis = llvm::any_of(ellipsisAt, [](int64_t a) { return a >= 0; });
  if (explicitOutput) {
    SmallVector<int64_t> outLetters;
    int64_t outEllipsis;
    if (failed(parseTerm(b, rhsText, outLetters, outEllipsis)))
      return failure();
    for (size_t k = 0; k <= outLetters.size(); ++k) {
      if (static_cast<int64_t>(k) == outEllipsis)
        for (int64_t e = 0; e < maxEllipsis; ++e)
          outLabels.push_back(kEllipsisLabel + e);
      if (k < outLetters.size())
        outLabels.push_back(outLetters[k]);
    }
  } else {
    if (anyEllipsis)
      for (int64_t e = 0; e < maxEllipsis; ++e)
        outLabels.push_back(kEllipsisLabel + e);
    std::map<int64_t, int> occurrences;
    for (const SmallVector<int64_t> &ls : letters)
      for (int64_t l : ls)
        ++occurrences[l];
    for (auto [l, n] : occurrences)
      if (n == 1)
        outLabels.push_back(l);
  }
  for (size_t i = 0; i < outLabels.size(); ++i) {
    int64_t l = outLabels[i];
    if (llvm::is_contained(ArrayRef(outLabels).take_front(i), l))
      return b.fail("einsum output repeats a label");
    if (!llvm::any_of(terms, [&](const Term &t) {
          return llvm::is_contained(t.labels, l);
        }))
      return b.fail("einsum output label is not in any operand");
  }

  // Diagonals, then labels private to one operand.
  for (Term &t : terms) {
    for (size_t p = 0; p < t.labels.size(); ++p) {
      for (size_t q = p + 1; q < t.labels.size(); ++q) {
        if (t.labels[p] != t.labels[q])
          continue;
        if (failed(takeDiagonal(b, t, p, q)))
          return failure();
        p = static_cast<size_t>(-1); // labels moved: rescan
        break;
      }
    }
  }
  auto inOutput = [&](int64_t l) { return llvm::is_contained(outLabels, l); };
  for (size_t i = 0; i < terms.size(); ++i)
    reduceLabels(b, terms[i], [&](int64_t l) {
      if (inOutput(l))
        return true;
      for (size_t j = 0; j < terms.size(); ++j)
        if (j != i && llvm::is_contained(terms[j].labels, l))
          return true;
      return false;
    });

  Term result = terms[0];
  for (size_t i = 1; i < terms.size(); ++i) {
    auto keep = [&](int64_t l) {
      if (inOutput(l))
        return true;
      for (size_t j = i + 1; j < terms.size(); ++j)
        if (llvm::is_contained(terms[j].labels, l))
          return true;
      return false;
    };
    FailureOr<Term> next = contract(b, result, terms[i], keep);
    if (failed(next))
      return failure();
    result = *next;
  }
  reduceLabels(b, result, inOutput);

  SmallVector<int64_t> perm;
  for (int64_t l : outLabels)
    perm.push_back(llvm::find(result.labels, l) - result.labels.begin());
  Value y = result.value;
  if (!llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    y = transpose(b, y, perm);
  RankedTensorType type = b.outputType(0);
  if (!type || failed(refineTo(b, y, type)))
    return failure();
  b.setOutput(0, y);
  return success();
}

//===----------------------------------------------------------------------===//
// Compress
//===----------------------------------------------------------------------===//

/// Compress(x, cond, axis) = gather(x, indices of the true elements of
/// cond, axis), where x is flattened first when there is no axis. A
/// constant condition gives constant indices; otherwise loom.non_zero
/// finds them at run time and the selected dimension is dynamic.
LogicalResult buildCompress(NodeBinder &b) {
  if (failed(b.rejectUnknownAttrs({"axis"})))
    return failure();
  Value x = b.input(0), condition = b.input(1);
  RankedTensorType type = b.outputType(0);
  if (!x || !condition || !type)
    return failure();
  RankedTensorType condType = b.inputType(1);
  if (condType.getRank() != 1 || !condType.getElementType().isInteger(1))
    return b.fail("condition must be a 1-D bool tensor");
  RankedTensorType xType = b.inputType(0);
  int64_t axis = 0;
  if (b.hasAttr("axis")) {
    auto a = b.intAttr("axis", 0);
    if (!a)
      return failure();
    std::optional<int64_t> normalized =
        normalizeAxisOrFail(b, *a, xType.getRank());
    if (!normalized)
      return failure();
    axis = *normalized;
  } else {
    int64_t n =
        xType.hasStaticShape() ? xType.getNumElements() : ShapedType::kDynamic;
    x = ReshapeOp::create(b.builder(), b.loc(),
                          RankedTensorType::get({n}, xType.getElementType()), x,
                          b.i64Tensor({-1}), false);
    xType = typeOf(x);
  }
  SmallVector<int64_t> shape(xType.getShape());
  Value indices;
  if (std::optional<SmallVector<int64_t>> cond = b.constantInts(1)) {
    SmallVector<int64_t> picked;
    for (auto [i, v] : llvm::enumerate(*cond))
      if (v != 0)
        picked.push_back(i);
    int64_t size = shape[axis];
    if (!picked.empty() && !ShapedType::isDynamic(size) &&
        picked.back() >= size)
      return b.fail("condition selects index " + Twine(picked.back()) +
                    " beyond the axis size " + Twine(size));
    indices = b.i64Tensor(picked);
    shape[axis] = picked.size();
  } else {
    Type i64 = b.builder().getI64Type();
    Value nonZero = NonZeroOp::create(
        b.builder(), b.loc(),
        RankedTensorType::get({1, ShapedType::kDynamic}, i64), condition);
    indices = createInferred<SqueezeOp>(b, nonZero, ArrayRef<int64_t>{0});
    shape[axis] = ShapedType::kDynamic;
  }
  Value y =
      GatherOp::create(b.builder(), b.loc(),
                       RankedTensorType::get(shape, xType.getElementType()), x,
                       indices, b.builder().getI64IntegerAttr(axis));
  if (failed(refineTo(b, y, type)))
    return failure();
  b.setOutput(0, y);
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
  t.add("", "Einsum", 12, buildEinsum);
  t.add("", "Compress", 9, buildCompress);
  t.add("", "Compress", 11, buildCompress);
}

} // namespace loom::onnx_import
