//===- ElementwiseKernels.cpp - Reference kernels for elementwise ops -----===//

#include "KernelUtils.h"

#include <cmath>

using namespace mlir;

namespace loom::reference {
namespace {

using FloatFn = double (*)(double);

/// A unary op on floating-point tensors.
Kernel unaryFloat(std::function<double(Operation *, double)> fn) {
  return [fn](Operation *op, ArrayRef<const Tensor *> in,
              SmallVectorImpl<Tensor> &out) -> LogicalResult {
    const Tensor &x = *in[0];
    Tensor y(resultKind(op), x.shape());
    for (int64_t i = 0, n = x.numElements(); i < n; ++i)
      y.setDouble(i, fn(op, x.getDouble(i)));
    out.push_back(std::move(y));
    return success();
  };
}

Kernel unaryFloat(FloatFn fn) {
  return unaryFloat([fn](Operation *, double x) { return fn(x); });
}

/// A unary op defined for floats and integers alike. Integers are held in
/// an int64: a uint64 of 2^63 or more reads as negative there, so an op
/// whose answer depends on the sign takes `unsignedFn` for unsigned kinds.
Kernel unaryNumeric(FloatFn floatFn, int64_t (*intFn)(int64_t),
                    int64_t (*unsignedFn)(uint64_t) = nullptr) {
  return [=](Operation *op, ArrayRef<const Tensor *> in,
             SmallVectorImpl<Tensor> &out) -> LogicalResult {
    const Tensor &x = *in[0];
    Tensor y(resultKind(op), x.shape());
    bool isUnsigned = unsignedFn && isUnsignedKind(x.kind());
    for (int64_t i = 0, n = x.numElements(); i < n; ++i) {
      if (x.isFloat())
        y.setDouble(i, floatFn(x.getDouble(i)));
      else if (isUnsigned)
        y.setInt(i, unsignedFn(static_cast<uint64_t>(x.getInt(i))));
      else
        y.setInt(i, intFn(x.getInt(i)));
    }
    out.push_back(std::move(y));
    return success();
  };
}

/// Broadcasting binary op. `fn(op, a, b, i, out)` stores element `i`.
using BinaryFn =
    std::function<LogicalResult(Operation *, const Tensor &, int64_t,
                                const Tensor &, int64_t, Tensor &, int64_t)>;

Kernel broadcastBinary(BinaryFn fn) {
  return [fn](Operation *op, ArrayRef<const Tensor *> in,
              SmallVectorImpl<Tensor> &out) -> LogicalResult {
    const Tensor &a = *in[0], &b = *in[1];
    auto shape = broadcastShapes(a.shape(), b.shape());
    if (!shape)
      return op->emitError() << "operand shapes " << a.typeString() << " and "
                             << b.typeString() << " do not broadcast";
    Tensor y(resultKind(op), *shape);
    LogicalResult status = success();
    forEachIndex(*shape, [&](int64_t linear, ArrayRef<int64_t> index) {
      if (failed(status))
        return;
      status = fn(op, a, broadcastSourceIndex(index, a.shape()), b,
                  broadcastSourceIndex(index, b.shape()), y, linear);
    });
    if (failed(status))
      return failure();
    out.push_back(std::move(y));
    return success();
  };
}

/// Arithmetic with separate float and integer rules.
Kernel
arithmetic(std::function<double(double, double)> floatFn,
           std::function<std::optional<int64_t>(int64_t, int64_t, bool)> intFn,
           StringRef intError = "") {
  return broadcastBinary([=](Operation *op, const Tensor &a, int64_t ia,
                             const Tensor &b, int64_t ib, Tensor &y,
                             int64_t i) -> LogicalResult {
    if (y.isFloat()) {
      y.setDouble(i, floatFn(a.getDouble(ia), b.getDouble(ib)));
      return success();
    }
    std::optional<int64_t> v =
        intFn(a.getInt(ia), b.getInt(ib), isUnsignedKind(y.kind()));
    if (!v)
      return op->emitError() << intError;
    y.setInt(i, *v);
    return success();
  });
}

/// Comparison producing i1, in the operands' own domain.
Kernel comparison(bool (*floatCmp)(double, double),
                  bool (*signedCmp)(int64_t, int64_t),
                  bool (*unsignedCmp)(uint64_t, uint64_t)) {
  return broadcastBinary([=](Operation *, const Tensor &a, int64_t ia,
                             const Tensor &b, int64_t ib, Tensor &y,
                             int64_t i) -> LogicalResult {
    bool r;
    if (a.isFloat())
      r = floatCmp(a.getDouble(ia), b.getDouble(ib));
    else if (isUnsignedKind(a.kind()))
      r = unsignedCmp(static_cast<uint64_t>(a.getInt(ia)),
                      static_cast<uint64_t>(b.getInt(ib)));
    else
      r = signedCmp(a.getInt(ia), b.getInt(ib));
    y.setInt(i, r);
    return success();
  });
}

/// And/or/xor: bitwise on the integers' bits, which on booleans (0 or 1)
/// is the logical operation.
Kernel logic(int64_t (*fn)(int64_t, int64_t)) {
  return broadcastBinary([=](Operation *, const Tensor &a, int64_t ia,
                             const Tensor &b, int64_t ib, Tensor &y,
                             int64_t i) -> LogicalResult {
    y.setInt(i, fn(a.getInt(ia), b.getInt(ib)));
    return success();
  });
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

/// NaN-propagating max/min (ONNX Max/Min, numpy semantics).
double nanMax(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
}
double nanMin(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
}

int64_t signOf(int64_t x) { return (x > 0) - (x < 0); }

/// Python-style remainder: the sign follows the divisor.
double pythonMod(double a, double b) {
  double r = std::fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0)))
    r += b;
  return r;
}

} // namespace

void registerElementwiseKernels(KernelRegistry &r) {
  // Unary math.
  auto unsignedIdentity = [](uint64_t x) { return static_cast<int64_t>(x); };
  r.add("loom.abs", unaryNumeric([](double x) { return std::fabs(x); },
                                 [](int64_t x) { return x < 0 ? -x : x; },
                                 unsignedIdentity));
  r.add("loom.neg", unaryNumeric([](double x) { return -x; },
                                 [](int64_t x) { return -x; }));
  r.add("loom.sign",
        unaryNumeric([](double x) { return double((x > 0) - (x < 0)); }, signOf,
                     [](uint64_t x) { return int64_t(x != 0); }));
  r.add("loom.relu", unaryNumeric([](double x) { return x > 0 ? x : 0.0; },
                                  [](int64_t x) { return x > 0 ? x : 0; },
                                  unsignedIdentity));
  r.add("loom.exp", unaryFloat([](double x) { return std::exp(x); }));
  r.add("loom.log", unaryFloat([](double x) { return std::log(x); }));
  r.add("loom.sqrt", unaryFloat([](double x) { return std::sqrt(x); }));
  r.add("loom.rsqrt", unaryFloat([](double x) { return 1.0 / std::sqrt(x); }));
  r.add("loom.reciprocal", unaryFloat([](double x) { return 1.0 / x; }));
  r.add("loom.sin", unaryFloat([](double x) { return std::sin(x); }));
  r.add("loom.cos", unaryFloat([](double x) { return std::cos(x); }));
  r.add("loom.tan", unaryFloat([](double x) { return std::tan(x); }));
  r.add("loom.asin", unaryFloat([](double x) { return std::asin(x); }));
  r.add("loom.acos", unaryFloat([](double x) { return std::acos(x); }));
  r.add("loom.atan", unaryFloat([](double x) { return std::atan(x); }));
  r.add("loom.sinh", unaryFloat([](double x) { return std::sinh(x); }));
  r.add("loom.cosh", unaryFloat([](double x) { return std::cosh(x); }));
  r.add("loom.asinh", unaryFloat([](double x) { return std::asinh(x); }));
  r.add("loom.acosh", unaryFloat([](double x) { return std::acosh(x); }));
  r.add("loom.atanh", unaryFloat([](double x) { return std::atanh(x); }));
  r.add("loom.tanh", unaryFloat([](double x) { return std::tanh(x); }));
  r.add("loom.erf", unaryFloat([](double x) { return std::erf(x); }));
  r.add("loom.floor", unaryFloat([](double x) { return std::floor(x); }));
  r.add("loom.ceil", unaryFloat([](double x) { return std::ceil(x); }));
  // nearbyint in the default rounding mode rounds half to even.
  r.add("loom.round", unaryFloat([](double x) { return std::nearbyint(x); }));
  r.add("loom.not", unaryNumeric([](double x) { return double(x == 0); },
                                 [](int64_t x) -> int64_t { return x == 0; }));
  r.add("loom.bitwise_not",
        unaryNumeric([](double x) { return x; }, [](int64_t x) { return ~x; }));

  // Activations.
  r.add("loom.sigmoid", unaryFloat(sigmoid));
  r.add("loom.softplus",
        unaryFloat([](double x) { return std::log1p(std::exp(x)); }));
  r.add("loom.softsign",
        unaryFloat([](double x) { return x / (1.0 + std::fabs(x)); }));
  r.add("loom.silu", unaryFloat([](double x) { return x * sigmoid(x); }));
  r.add("loom.leaky_relu", unaryFloat([](Operation *op, double x) {
          double alpha = cast<LeakyReluOp>(op).getAlpha().convertToDouble();
          return x >= 0 ? x : alpha * x;
        }));
  r.add("loom.elu", unaryFloat([](Operation *op, double x) {
          double alpha = cast<EluOp>(op).getAlpha().convertToDouble();
          return x > 0 ? x : alpha * (std::exp(x) - 1.0);
        }));
  r.add("loom.selu", unaryFloat([](Operation *op, double x) {
          auto selu = cast<SeluOp>(op);
          double alpha = selu.getAlpha().convertToDouble();
          double gamma = selu.getGamma().convertToDouble();
          return gamma * (x > 0 ? x : alpha * (std::exp(x) - 1.0));
        }));
  r.add("loom.hard_sigmoid", unaryFloat([](Operation *op, double x) {
          auto hs = cast<HardSigmoidOp>(op);
          double v = hs.getAlpha().convertToDouble() * x +
                     hs.getBeta().convertToDouble();
          return std::max(0.0, std::min(1.0, v));
        }));
  r.add("loom.gelu", unaryFloat([](Operation *op, double x) {
          if (cast<GeluOp>(op).getApproximate() == "tanh")
            return 0.5 * x *
                   (1.0 + std::tanh(std::sqrt(2.0 / M_PI) *
                                    (x + 0.044715 * x * x * x)));
          return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
        }));

  // Classification.
  r.add("loom.is_nan",
        [](Operation *op, ArrayRef<const Tensor *> in,
           SmallVectorImpl<Tensor> &out) -> LogicalResult {
          Tensor y(ElementKind::I1, in[0]->shape());
          for (int64_t i = 0, n = in[0]->numElements(); i < n; ++i)
            y.setInt(i, std::isnan(in[0]->getDouble(i)));
          out.push_back(std::move(y));
          return success();
        });
  r.add("loom.is_inf",
        [](Operation *op, ArrayRef<const Tensor *> in,
           SmallVectorImpl<Tensor> &out) -> LogicalResult {
          auto isInf = cast<IsInfOp>(op);
          Tensor y(ElementKind::I1, in[0]->shape());
          for (int64_t i = 0, n = in[0]->numElements(); i < n; ++i) {
            double x = in[0]->getDouble(i);
            y.setInt(i,
                     std::isinf(x) && ((x > 0 && isInf.getDetectPositive()) ||
                                       (x < 0 && isInf.getDetectNegative())));
          }
          out.push_back(std::move(y));
          return success();
        });

  // Broadcasting arithmetic.
  r.add("loom.add", arithmetic([](double a, double b) { return a + b; },
                               [](int64_t a, int64_t b, bool) {
                                 return std::optional<int64_t>(
                                     int64_t(uint64_t(a) + uint64_t(b)));
                               }));
  r.add("loom.sub", arithmetic([](double a, double b) { return a - b; },
                               [](int64_t a, int64_t b, bool) {
                                 return std::optional<int64_t>(
                                     int64_t(uint64_t(a) - uint64_t(b)));
                               }));
  r.add("loom.mul", arithmetic([](double a, double b) { return a * b; },
                               [](int64_t a, int64_t b, bool) {
                                 return std::optional<int64_t>(
                                     int64_t(uint64_t(a) * uint64_t(b)));
                               }));
  r.add("loom.div",
        arithmetic([](double a, double b) { return a / b; },
                   [](int64_t a, int64_t b,
                      bool isUnsigned) -> std::optional<int64_t> {
                     if (b == 0)
                       return std::nullopt;
                     if (isUnsigned)
                       return int64_t(uint64_t(a) / uint64_t(b));
                     if (a == INT64_MIN && b == -1)
                       return a;
                     return a / b; // C++ truncates toward zero, as ONNX.
                   },
                   "integer division by zero"));
  r.add("loom.swiglu",
        broadcastBinary([](Operation *, const Tensor &gate, int64_t ig,
                           const Tensor &up, int64_t iu, Tensor &y,
                           int64_t i) -> LogicalResult {
          double g = gate.getDouble(ig);
          y.setDouble(i, g * sigmoid(g) * up.getDouble(iu));
          return success();
        }));
  r.add("loom.pow", broadcastBinary([](Operation *, const Tensor &a, int64_t ia,
                                       const Tensor &b, int64_t ib, Tensor &y,
                                       int64_t i) -> LogicalResult {
          y.setDouble(i, std::pow(a.getDouble(ia), b.getDouble(ib)));
          return success();
        }));
  r.add("loom.max", arithmetic(nanMax, [](int64_t a, int64_t b, bool u) {
          return std::optional<int64_t>(
              u ? int64_t(std::max(uint64_t(a), uint64_t(b))) : std::max(a, b));
        }));
  r.add("loom.min", arithmetic(nanMin, [](int64_t a, int64_t b, bool u) {
          return std::optional<int64_t>(
              u ? int64_t(std::min(uint64_t(a), uint64_t(b))) : std::min(a, b));
        }));
  r.add("loom.mod", broadcastBinary([](Operation *op, const Tensor &a,
                                       int64_t ia, const Tensor &b, int64_t ib,
                                       Tensor &y, int64_t i) -> LogicalResult {
          bool cStyle = cast<ModOp>(op).getFmod();
          if (y.isFloat()) {
            double x = a.getDouble(ia), d = b.getDouble(ib);
            y.setDouble(i, cStyle ? std::fmod(x, d) : pythonMod(x, d));
            return success();
          }
          int64_t x = a.getInt(ia), d = b.getInt(ib);
          if (d == 0)
            return op->emitError() << "integer remainder by zero";
          if (isUnsignedKind(y.kind())) {
            y.setInt(i, int64_t(uint64_t(x) % uint64_t(d)));
            return success();
          }
          // Any integer is a multiple of -1; INT64_MIN % -1 would trap.
          int64_t rem = d == -1 ? 0 : x % d;
          if (!cStyle && rem != 0 && ((rem < 0) != (d < 0)))
            rem += d;
          y.setInt(i, rem);
          return success();
        }));
  r.add("loom.bit_shift",
        broadcastBinary([](Operation *op, const Tensor &a, int64_t ia,
                           const Tensor &b, int64_t ib, Tensor &y,
                           int64_t i) -> LogicalResult {
          // Signed values shift right arithmetically (their sign fills
          // every bit when the shift is the width or more); otherwise such
          // a shift gives 0. A negative amount reads as a large unsigned one.
          bool left = cast<BitShiftOp>(op).getDirection() == "LEFT";
          int64_t x = a.getInt(ia);
          uint64_t s = uint64_t(b.getInt(ib));
          unsigned width = getBitWidth(y.kind());
          if (!left && !isUnsignedKind(y.kind())) {
            y.setInt(i, x >> std::min<uint64_t>(s, 63));
            return success();
          }
          uint64_t bits = uint64_t(x);
          y.setInt(i, s >= width ? 0 : int64_t(left ? bits << s : bits >> s));
          return success();
        }));
  r.add("loom.and", logic([](int64_t a, int64_t b) { return a & b; }));
  r.add("loom.or", logic([](int64_t a, int64_t b) { return a | b; }));
  r.add("loom.xor", logic([](int64_t a, int64_t b) { return a ^ b; }));
  r.add("loom.equal",
        comparison([](double a, double b) { return a == b; },
                   [](int64_t a, int64_t b) { return a == b; },
                   [](uint64_t a, uint64_t b) { return a == b; }));
  r.add("loom.less", comparison([](double a, double b) { return a < b; },
                                [](int64_t a, int64_t b) { return a < b; },
                                [](uint64_t a, uint64_t b) { return a < b; }));
  r.add("loom.less_equal",
        comparison([](double a, double b) { return a <= b; },
                   [](int64_t a, int64_t b) { return a <= b; },
                   [](uint64_t a, uint64_t b) { return a <= b; }));
  r.add("loom.greater",
        comparison([](double a, double b) { return a > b; },
                   [](int64_t a, int64_t b) { return a > b; },
                   [](uint64_t a, uint64_t b) { return a > b; }));
  r.add("loom.greater_equal",
        comparison([](double a, double b) { return a >= b; },
                   [](int64_t a, int64_t b) { return a >= b; },
                   [](uint64_t a, uint64_t b) { return a >= b; }));

  // Select and cast.
  r.add("loom.where",
        [](Operation *op, ArrayRef<const Tensor *> in,
           SmallVectorImpl<Tensor> &out) -> LogicalResult {
          const Tensor &c = *in[0], &t = *in[1], &f = *in[2];
          auto tf = broadcastShapes(t.shape(), f.shape());
          auto shape = tf ? broadcastShapes(c.shape(), *tf) : std::nullopt;
          if (!shape)
            return op->emitError() << "operand shapes do not broadcast";
          Tensor y(resultKind(op), *shape);
          forEachIndex(*shape, [&](int64_t linear, ArrayRef<int64_t> index) {
            const Tensor &src =
                c.getInt(broadcastSourceIndex(index, c.shape())) ? t : f;
            int64_t j = broadcastSourceIndex(index, src.shape());
            if (y.isFloat())
              y.setDouble(linear, src.getDouble(j));
            else
              y.setInt(linear, src.getInt(j));
          });
          out.push_back(std::move(y));
          return success();
        });
  // The element's bytes read as the result's kind (one byte per i1).
  r.add("loom.bitcast",
        [](Operation *op, ArrayRef<const Tensor *> in,
           SmallVectorImpl<Tensor> &out) -> LogicalResult {
          std::optional<Tensor> y = tensorFromBytes(
              resultKind(op), in[0]->shape(), tensorToBytes(*in[0]));
          if (!y)
            return op->emitError("the element types differ in width");
          out.push_back(std::move(*y));
          return success();
        });
  r.add("loom.cast",
        [](Operation *op, ArrayRef<const Tensor *> in,
           SmallVectorImpl<Tensor> &out) -> LogicalResult {
          auto saturate = op->getAttrOfType<BoolAttr>("saturate");
          auto roundMode = op->getAttrOfType<StringAttr>("round_mode");
          out.push_back(castTensor(*in[0], resultKind(op),
                                   !saturate || saturate.getValue(),
                                   roundMode ? roundMode.getValue() : "up"));
          return success();
        });
}

} // namespace loom::reference
