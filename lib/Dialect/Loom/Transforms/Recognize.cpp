//===- Recognize.cpp - Recognition of exported NN building blocks -------===//
//
// Exporters (PyTorch's above all) spell layer norms, activations, softmax,
// attention and rotary embeddings as chains of elementwise ops, reductions
// and data movement. The patterns here match those chains, check every
// constant and axis the rewrite relies on, and replace them by the single
// loom op that later passes (fusion, lowering, sharding) want to see whole.
// Every pattern bails out on anything it has not proven, so an unmatched
// chain is left exactly as it was.
//
// Intermediates of a matched chain must have no users outside it: if one
// did, it would have to be computed anyway and the rewrite would duplicate
// work instead of removing it.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/Transforms/Passes.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <cstring>
#include <optional>

namespace loom {
#define GEN_PASS_DEF_LOOMRECOGNIZEPASS
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"
} // namespace loom

using namespace mlir;
using namespace loom;

namespace {

//===----------------------------------------------------------------------===//
// Matching helpers
//===----------------------------------------------------------------------===//

/// Relative tolerance for the constants of a spelled-out formula: exporters
/// print them with various precisions (0.7071067811865476, 0.70710678,
/// 1/1.41421354, ...).
constexpr double kConstantTolerance = 1e-4;

/// True when `value` is within the relative tolerance of `expected`.
bool isApprox(double value, double expected) {
  return std::abs(value - expected) <= kConstantTolerance * std::abs(expected);
}

/// The value of a constant whose elements all hold one value (float or
/// integer). Looks through `sqrt` of such a constant, which is how an
/// exporter spells `1 / sqrt(head_dim)` when it does not fold it.
std::optional<double> getSplatValue(Value value) {
  if (auto sqrt = value.getDefiningOp<SqrtOp>()) {
    std::optional<double> inner = getSplatValue(sqrt.getInput());
    if (!inner || *inner < 0)
      return std::nullopt;
    return std::sqrt(*inner);
  }
  DenseElementsAttr attr;
  if (!matchPattern(value, m_Constant(&attr)) || !attr.isSplat())
    return std::nullopt;
  Type type = attr.getElementType();
  if (isa<FloatType>(type)) {
    APFloat f = attr.getSplatValue<APFloat>();
    bool lost;
    f.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
    return f.convertToDouble();
  }
  if (type.isSignlessInteger() && type.getIntOrFloatBitWidth() > 1)
    return static_cast<double>(attr.getSplatValue<APInt>().getSExtValue());
  return std::nullopt;
}

/// True when `value` is a splat constant close to `expected`.
bool isSplatNear(Value value, double expected) {
  std::optional<double> v = getSplatValue(value);
  return v && isApprox(*v, expected);
}

/// The elements of a constant float tensor with a static shape, inline or a
/// resource blob (row-major, little-endian, as the importer writes them).
std::optional<SmallVector<double>> getConstantFloats(Value value) {
  ElementsAttr attr;
  if (!value || !matchPattern(value, m_Constant(&attr)))
    return std::nullopt;
  auto type = cast<ShapedType>(attr.getType());
  if (!type.hasStaticShape() || !isa<FloatType>(type.getElementType()))
    return std::nullopt;
  SmallVector<double> values;
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    for (APFloat f : dense.getValues<APFloat>()) {
      bool lost;
      f.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
      values.push_back(f.convertToDouble());
    }
    return values;
  }
  auto resource = dyn_cast<DenseResourceElementsAttr>(attr);
  if (!resource)
    return std::nullopt;
  AsmResourceBlob *blob = resource.getRawHandle().getBlob();
  if (!blob)
    return std::nullopt;
  ArrayRef<char> data = blob->getData();
  int64_t n = type.getNumElements();
  auto read = [&](auto zero) -> std::optional<SmallVector<double>> {
    using T = decltype(zero);
    if (static_cast<int64_t>(data.size()) !=
        n * static_cast<int64_t>(sizeof(T)))
      return std::nullopt;
    for (int64_t i = 0; i < n; ++i) {
      T v;
      std::memcpy(&v, data.data() + i * sizeof(T), sizeof(T));
      values.push_back(static_cast<double>(v));
    }
    return values;
  };
  if (type.getElementType().isF32())
    return read(float());
  if (type.getElementType().isF64())
    return read(double());
  return std::nullopt;
}

/// The elements of a constant integer tensor.
std::optional<SmallVector<int64_t>> getConstantInts(Value value) {
  DenseIntElementsAttr attr;
  if (!value || !matchPattern(value, m_Constant(&attr)))
    return std::nullopt;
  SmallVector<int64_t> values;
  for (const APInt &v : attr.getValues<APInt>())
    values.push_back(v.getSExtValue());
  return values;
}

RankedTensorType tensorType(Value value) {
  return dyn_cast<RankedTensorType>(value.getType());
}

bool isFloatTensor(Value value) {
  RankedTensorType type = tensorType(value);
  return type && isa<FloatType>(type.getElementType());
}

/// A product of values and splat constants: `constant * prod(factors) /
/// prod(divisors)`, read through the mul, div and reciprocal ops that only
/// feed the product.
struct Product {
  SmallVector<Value> factors;
  SmallVector<Value> divisors;
  double constant = 1.0;
  /// The mul, div and reciprocal ops that were read through.
  SmallVector<Operation *> ops;
};

void collectProduct(Value value, bool inverted, bool isRoot, Product &p) {
  if (std::optional<double> c = getSplatValue(value)) {
    p.constant = inverted ? p.constant / *c : p.constant * *c;
    return;
  }
  Operation *op = value.getDefiningOp();
  // A shared intermediate is a leaf: the product does not own it.
  if (op && (isRoot || value.hasOneUse())) {
    if (auto mul = dyn_cast<MulOp>(op)) {
      p.ops.push_back(op);
      collectProduct(mul.getLhs(), inverted, false, p);
      collectProduct(mul.getRhs(), inverted, false, p);
      return;
    }
    if (auto div = dyn_cast<DivOp>(op)) {
      p.ops.push_back(op);
      collectProduct(div.getLhs(), inverted, false, p);
      collectProduct(div.getRhs(), !inverted, false, p);
      return;
    }
    if (auto reciprocal = dyn_cast<ReciprocalOp>(op)) {
      p.ops.push_back(op);
      collectProduct(reciprocal.getInput(), !inverted, false, p);
      return;
    }
  }
  (inverted ? p.divisors : p.factors).push_back(value);
}

/// Reads `value` as a product. Only float tensors are read: integer division
/// truncates and does not reassociate.
std::optional<Product> getProduct(Value value) {
  if (!isFloatTensor(value))
    return std::nullopt;
  Product p;
  collectProduct(value, /*inverted=*/false, /*isRoot=*/true, p);
  return p;
}

/// Calls `fn(a, b)` with the operands of a binary op in both orders and
/// returns true on the first success.
template <typename Fn> bool eitherOrder(Value a, Value b, Fn fn) {
  return fn(a, b) || fn(b, a);
}

/// `base` when `value` is `base * base` or `pow(base, 2)`.
Value getSquareBase(Value value) {
  if (auto mul = value.getDefiningOp<MulOp>())
    return mul.getLhs() == mul.getRhs() ? mul.getLhs() : Value();
  if (auto pow = value.getDefiningOp<PowOp>())
    return isSplatNear(pow.getRhs(), 2.0) ? pow.getLhs() : Value();
  return {};
}

/// The first normalized axis when `axes` are exactly the trailing axes
/// `[axis, rank)` of a rank-`rank` tensor (all of them when empty).
std::optional<int64_t> getTrailingAxis(ArrayRef<int64_t> axes, int64_t rank) {
  if (rank == 0)
    return std::nullopt;
  if (axes.empty())
    return 0;
  SmallVector<int64_t> sorted(axes);
  llvm::sort(sorted);
  int64_t first = rank - static_cast<int64_t>(sorted.size());
  for (auto [i, a] : llvm::enumerate(sorted))
    if (a != first + static_cast<int64_t>(i))
      return std::nullopt;
  return first;
}

/// True when a norm parameter broadcasts to `normalized` without growing it,
/// as loom.layer_norm and loom.rms_norm require of scale and bias.
bool fitsNormalized(Value param, ArrayRef<int64_t> normalized,
                    Type elementType) {
  RankedTensorType type = tensorType(param);
  if (!type || type.getElementType() != elementType)
    return false;
  FailureOr<SmallVector<int64_t>> b =
      broadcastShapes(normalized, type.getShape());
  return succeeded(b) && b->size() == normalized.size() &&
         areShapesCompatible(*b, normalized);
}

/// True when every user of `value` is one of `ops`.
bool onlyUsedBy(Value value, ArrayRef<Operation *> ops) {
  return llvm::all_of(value.getUsers(), [&](Operation *user) {
    return llvm::is_contained(ops, user);
  });
}

//===----------------------------------------------------------------------===//
// LayerNorm and RMSNorm
//===----------------------------------------------------------------------===//

/// The pieces of `y * rstd(mean(y^2) + eps) [* scale]`, common to both norms.
struct NormMatch {
  /// The normalized value (x for RMSNorm, x - mean(x) for LayerNorm).
  Value input;
  /// The scale factor; null when the product has none.
  Value scale;
  double constant = 1.0;
  double epsilon = 0.0;
  int64_t axis = 0;
  /// The ops between `input` and the root, besides those of the product.
  SmallVector<Operation *> ops;
  Product product;
};

/// `value` as `var + eps` (or `var`, eps = 0) with `var = mean(y^2)` over
/// trailing axes with kept dimensions; fills input, epsilon, axis and ops.
bool matchMeanSquarePlusEps(Value value, NormMatch &m) {
  if (!value.hasOneUse())
    return false;
  Value var = value;
  if (auto add = value.getDefiningOp<AddOp>()) {
    bool ok = eitherOrder(add.getLhs(), add.getRhs(), [&](Value v, Value e) {
      std::optional<double> eps = getSplatValue(e);
      if (!eps || *eps < 0 || !v.hasOneUse())
        return false;
      var = v;
      m.epsilon = *eps;
      return true;
    });
    if (!ok)
      return false;
    m.ops.push_back(add);
  }
  auto mean = var.getDefiningOp<ReduceMeanOp>();
  if (!mean || !mean.getKeepdims() || !mean.getInput().hasOneUse())
    return false;
  Value base = getSquareBase(mean.getInput());
  if (!base)
    return false;
  std::optional<int64_t> axis =
      getTrailingAxis(mean.getAxes(), tensorType(base).getRank());
  if (!axis)
    return false;
  m.input = base;
  m.axis = *axis;
  m.ops.push_back(mean);
  m.ops.push_back(mean.getInput().getDefiningOp());
  return true;
}

/// Matches `root` as `y / sqrt(mean(y^2) + eps) [* scale]` and the spellings
/// with `rsqrt`, `reciprocal(sqrt)`, `1 / sqrt` and `pow(., -0.5)`.
std::optional<NormMatch> matchNorm(Value root) {
  std::optional<Product> p = getProduct(root);
  if (!p)
    return std::nullopt;
  NormMatch m;
  m.constant = p->constant;
  // The reciprocal standard deviation: a divisor sqrt(s) / pow(s, 0.5) or a
  // factor rsqrt(s) / pow(s, -0.5). Returns the index of the factor used.
  Value rstdOf;
  Operation *rstdOp = nullptr;
  std::optional<size_t> rstdFactor;
  if (p->divisors.size() == 1) {
    Value d = p->divisors.front();
    if (auto sqrt = d.getDefiningOp<SqrtOp>())
      rstdOf = sqrt.getInput(), rstdOp = sqrt;
    else if (auto pow = d.getDefiningOp<PowOp>();
             pow && isSplatNear(pow.getRhs(), 0.5))
      rstdOf = pow.getLhs(), rstdOp = pow;
  } else if (p->divisors.empty()) {
    for (auto [i, f] : llvm::enumerate(p->factors)) {
      if (auto rsqrt = f.getDefiningOp<RsqrtOp>())
        rstdOf = rsqrt.getInput(), rstdOp = rsqrt;
      else if (auto pow = f.getDefiningOp<PowOp>();
               pow && isSplatNear(pow.getRhs(), -0.5))
        rstdOf = pow.getLhs(), rstdOp = pow;
      if (rstdOp) {
        rstdFactor = i;
        break;
      }
    }
  }
  if (!rstdOp || !rstdOp->getResult(0).hasOneUse() ||
      !matchMeanSquarePlusEps(rstdOf, m))
    return std::nullopt;
  m.ops.push_back(rstdOp);
  // The remaining factors: the normalized value and at most one scale.
  SmallVector<Value> rest;
  for (auto [i, f] : llvm::enumerate(p->factors))
    if (i != rstdFactor)
      rest.push_back(f);
  auto inputIt = llvm::find(rest, m.input);
  if (inputIt == rest.end())
    return std::nullopt;
  rest.erase(inputIt);
  if (rest.size() > 1)
    return std::nullopt;
  if (!rest.empty())
    m.scale = rest.front();
  m.product = std::move(*p);
  return m;
}

/// `x` when `value` is `x - reduce_mean(x)` over trailing `axis` with kept
/// dimensions.
Value getCenteredInput(Value value, int64_t axis) {
  auto sub = value.getDefiningOp<SubOp>();
  if (!sub)
    return {};
  auto mean = sub.getRhs().getDefiningOp<ReduceMeanOp>();
  if (!mean || mean.getInput() != sub.getLhs() || !mean.getKeepdims())
    return {};
  std::optional<int64_t> meanAxis =
      getTrailingAxis(mean.getAxes(), tensorType(sub.getLhs()).getRank());
  if (meanAxis != axis)
    return {};
  return sub.getLhs();
}

/// The scale operand of a recognized norm: the matched scale factor, or a
/// scalar constant when the product had none (a splat gamma folded into the
/// product's constant). Fails when both are present and the constant is not
/// 1: that would need an extra multiply.
FailureOr<Value> getNormScale(PatternRewriter &rewriter, Location loc,
                              const NormMatch &m, ArrayRef<int64_t> normalized,
                              Type elementType) {
  if (m.scale) {
    if (!isApprox(m.constant, 1.0) ||
        !fitsNormalized(m.scale, normalized, elementType))
      return failure();
    return m.scale;
  }
  auto type = RankedTensorType::get({}, elementType);
  APFloat c(m.constant);
  bool lost;
  c.convert(cast<FloatType>(elementType).getFloatSemantics(),
            APFloat::rmNearestTiesToEven, &lost);
  return ConstantOp::create(rewriter, loc, DenseElementsAttr::get(type, c))
      .getResult();
}

/// True when the only user of `root` multiplies it by a scale that the norm
/// can take: the pattern then leaves the match to that outer root.
bool feedsNormScale(Value root, ArrayRef<int64_t> normalized,
                    Type elementType) {
  if (!root.hasOneUse() || !isa<MulOp, DivOp>(*root.getUsers().begin()))
    return false;
  std::optional<NormMatch> outer =
      matchNorm(root.getUsers().begin()->getResult(0));
  return outer && outer->scale && isApprox(outer->constant, 1.0) &&
         fitsNormalized(outer->scale, normalized, elementType);
}

/// True when the only user of `root` is `root + bias` with a bias that
/// loom.layer_norm can take: the bias pattern rooted at that add takes over.
bool feedsNormBias(Value root, ArrayRef<int64_t> normalized, Type elementType) {
  if (!root.hasOneUse())
    return false;
  auto add = dyn_cast<AddOp>(*root.getUsers().begin());
  if (!add)
    return false;
  Value bias = add.getLhs() == root ? add.getRhs() : add.getLhs();
  return fitsNormalized(bias, normalized, elementType);
}

/// Recognizes layer normalization with an optional bias.
///
///   %m = loom.reduce_mean %x {axes = [2]}        // keepdims
///   %d = loom.sub %x, %m
///   %q = loom.pow %d, %two                         // or loom.mul %d, %d
///   %v = loom.reduce_mean %q {axes = [2]}
///   %s = loom.add %v, %eps
///   %r = loom.sqrt %s
///   %n = loom.div %d, %r                           // or %d * rsqrt(%s), ...
///   %g = loom.mul %n, %gamma
///   %y = loom.add %g, %beta                        // optional
/// ->
///   %y = loom.layer_norm %x, %gamma, %beta {axis = 2, epsilon = eps}
///
/// Rooted at the mul or div (no bias) and at the add (bias).
template <typename RootOp> struct LayerNormPattern : OpRewritePattern<RootOp> {
  using OpRewritePattern<RootOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(RootOp root,
                                PatternRewriter &rewriter) const override {
    Value result = root.getResult();
    if (!isFloatTensor(result))
      return failure();
    auto resultType = tensorType(result);
    Value bias;
    std::optional<NormMatch> m;
    if constexpr (std::is_same_v<RootOp, AddOp>) {
      eitherOrder(root.getLhs(), root.getRhs(), [&](Value n, Value b) {
        if (!n.hasOneUse())
          return false;
        m = matchNorm(n);
        bias = b;
        return m.has_value();
      });
    } else {
      m = matchNorm(result);
    }
    if (!m)
      return rewriter.notifyMatchFailure(root, "not a normalized product");
    Value x = getCenteredInput(m->input, m->axis);
    if (!x || x.getType() != resultType)
      return rewriter.notifyMatchFailure(root, "input is not x - mean(x)");
    // d = x - mean(x) feeds the square and the product, nothing else.
    SmallVector<Operation *> owners(m->ops);
    llvm::append_range(owners, m->product.ops);
    if (!onlyUsedBy(m->input, owners) ||
        !m->input.getDefiningOp<SubOp>().getRhs().hasOneUse())
      return rewriter.notifyMatchFailure(root, "intermediate has other users");
    ArrayRef<int64_t> normalized = resultType.getShape().drop_front(m->axis);
    Type elementType = resultType.getElementType();
    if constexpr (!std::is_same_v<RootOp, AddOp>) {
      if (feedsNormBias(result, normalized, elementType) ||
          (!m->scale && feedsNormScale(result, normalized, elementType)))
        return rewriter.notifyMatchFailure(root, "the outer op is the root");
    } else {
      if (!fitsNormalized(bias, normalized, elementType))
        return rewriter.notifyMatchFailure(root, "bias does not fit");
    }
    if (m->scale && !fitsNormalized(m->scale, normalized, elementType))
      return rewriter.notifyMatchFailure(root, "scale does not fit");
    if (m->scale && !isApprox(m->constant, 1.0))
      return rewriter.notifyMatchFailure(root, "extra constant factor");
    FailureOr<Value> scale =
        getNormScale(rewriter, root.getLoc(), *m, normalized, elementType);
    if (failed(scale))
      return failure();
    rewriter.replaceOpWithNewOp<LayerNormOp>(
        root, resultType, x, *scale, bias, rewriter.getI64IntegerAttr(m->axis),
        rewriter.getF32FloatAttr(static_cast<float>(m->epsilon)));
    return success();
  }
};

/// Recognizes RMS normalization (Llama's LlamaRMSNorm, T5's LayerNorm).
///
///   %q = loom.pow %x, %two                         // or loom.mul %x, %x
///   %v = loom.reduce_mean %q {axes = [2]}          // keepdims
///   %s = loom.add %v, %eps
///   %r = loom.sqrt %s
///   %i = loom.div %one, %r                         // or rsqrt, reciprocal
///   %n = loom.mul %x, %i                           // or loom.div %x, %r
///   %y = loom.mul %n, %w
/// ->
///   %y = loom.rms_norm %x, %w {axis = 2, epsilon = eps}
template <typename RootOp> struct RMSNormPattern : OpRewritePattern<RootOp> {
  using OpRewritePattern<RootOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(RootOp root,
                                PatternRewriter &rewriter) const override {
    Value result = root.getResult();
    std::optional<NormMatch> m = matchNorm(result);
    if (!m)
      return rewriter.notifyMatchFailure(root, "not a normalized product");
    auto resultType = tensorType(result);
    if (m->input.getType() != resultType)
      return rewriter.notifyMatchFailure(root, "input type differs");
    // A mean-centered input makes this a layer norm, which its own pattern
    // recognizes with the bias.
    if (getCenteredInput(m->input, m->axis))
      return rewriter.notifyMatchFailure(root, "this is a layer norm");
    ArrayRef<int64_t> normalized = resultType.getShape().drop_front(m->axis);
    Type elementType = resultType.getElementType();
    if (!m->scale && feedsNormScale(result, normalized, elementType))
      return rewriter.notifyMatchFailure(root, "the outer op is the root");
    FailureOr<Value> scale =
        getNormScale(rewriter, root.getLoc(), *m, normalized, elementType);
    if (failed(scale))
      return rewriter.notifyMatchFailure(root, "scale does not fit");
    rewriter.replaceOpWithNewOp<RMSNormOp>(
        root, resultType, m->input, *scale, rewriter.getI64IntegerAttr(m->axis),
        rewriter.getF32FloatAttr(static_cast<float>(m->epsilon)));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// GELU and SiLU
//===----------------------------------------------------------------------===//

/// True when `value` is `x * k` (any spelling of the product, including
/// `x / (1/k)`) for a constant within tolerance of `k`.
bool isScaledBy(Value value, Value x, double k) {
  if (!value.hasOneUse())
    return false;
  std::optional<Product> p = getProduct(value);
  return p && p->divisors.empty() && p->factors.size() == 1 &&
         p->factors.front() == x && isApprox(p->constant, k);
}

/// True when `value` is `x^3`: `pow(x, 3)` or `x * x * x`, possibly with the
/// constant `k` multiplied in.
bool isScaledCube(Value value, Value x, double k) {
  if (!value.hasOneUse())
    return false;
  std::optional<Product> p = getProduct(value);
  if (!p || !p->divisors.empty() || !isApprox(p->constant, k))
    return false;
  if (p->factors.size() == 3)
    return llvm::all_of(p->factors, [&](Value f) { return f == x; });
  if (p->factors.size() != 1)
    return false;
  auto pow = p->factors.front().getDefiningOp<PowOp>();
  return pow && pow.getLhs() == x && pow.getResult().hasOneUse() &&
         isSplatNear(pow.getRhs(), 3.0);
}

/// True when `value` is `x + 0.044715 * x^3` scaled by sqrt(2/pi), the
/// argument of the tanh approximation.
bool isGeluTanhArgument(Value value, Value x) {
  if (!value.hasOneUse())
    return false;
  std::optional<Product> p = getProduct(value);
  if (!p || !p->divisors.empty() || p->factors.size() != 1 ||
      !isApprox(p->constant, std::sqrt(2.0 / llvm::numbers::pi)))
    return false;
  auto add = p->factors.front().getDefiningOp<AddOp>();
  if (!add || !add.getResult().hasOneUse())
    return false;
  return eitherOrder(add.getLhs(), add.getRhs(), [&](Value a, Value cube) {
    return a == x && isScaledCube(cube, x, 0.044715);
  });
}

/// Recognizes GELU in its exact (erf) and tanh forms.
///
///   %a = loom.div %x, %sqrt2                       // or x * 0.70710678
///   %e = loom.erf %a
///   %h = loom.mul %x, %half
///   %p = loom.add %e, %one
///   %y = loom.mul %h, %p                           // any order of x, 0.5, p
/// ->
///   %y = loom.gelu %x {approximate = "none"}
///
///   %c = loom.pow %x, %three                       // or x * x * x
///   %t = loom.tanh(sqrt(2/pi) * (x + 0.044715 * %c))
///   %y = 0.5 * x * (1 + %t)
/// ->
///   %y = loom.gelu %x {approximate = "tanh"}
struct GeluPattern : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MulOp root,
                                PatternRewriter &rewriter) const override {
    std::optional<Product> p = getProduct(root.getResult());
    if (!p || !p->divisors.empty() || p->factors.size() != 2 ||
        !isApprox(p->constant, 0.5))
      return rewriter.notifyMatchFailure(root, "not 0.5 * x * (1 + f)");
    StringRef approximate;
    Value x;
    eitherOrder(p->factors[0], p->factors[1], [&](Value v, Value onePlus) {
      auto add = onePlus.getDefiningOp<AddOp>();
      if (!add || !onePlus.hasOneUse())
        return false;
      return eitherOrder(add.getLhs(), add.getRhs(), [&](Value f, Value one) {
        if (!isSplatNear(one, 1.0) || !f.hasOneUse())
          return false;
        if (auto erf = f.getDefiningOp<ErfOp>();
            erf && isScaledBy(erf.getInput(), v, 1.0 / llvm::numbers::sqrt2)) {
          approximate = "none";
          x = v;
          return true;
        }
        if (auto tanh = f.getDefiningOp<TanhOp>();
            tanh && isGeluTanhArgument(tanh.getInput(), v)) {
          approximate = "tanh";
          x = v;
          return true;
        }
        return false;
      });
    });
    if (!x || x.getType() != root.getType())
      return rewriter.notifyMatchFailure(root, "not a GELU");
    rewriter.replaceOpWithNewOp<GeluOp>(root, root.getType(), x,
                                        rewriter.getStringAttr(approximate));
    return success();
  }
};

/// Recognizes SiLU (swish).
///
///   %s = loom.sigmoid %x
///   %y = loom.mul %x, %s                           // or loom.mul %s, %x
/// ->
///   %y = loom.silu %x
struct SiluPattern : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MulOp root,
                                PatternRewriter &rewriter) const override {
    Value x;
    eitherOrder(root.getLhs(), root.getRhs(), [&](Value v, Value s) {
      auto sigmoid = s.getDefiningOp<SigmoidOp>();
      if (!sigmoid || sigmoid.getInput() != v || !s.hasOneUse())
        return false;
      x = v;
      return true;
    });
    if (!x || x.getType() != root.getType())
      return rewriter.notifyMatchFailure(root, "not x * sigmoid(x)");
    rewriter.replaceOpWithNewOp<SiluOp>(root, root.getType(), x);
    return success();
  }
};

/// Recognizes SwiGLU gating (after SiLU is recognized):
///
///   %s = loom.silu %gate
///   %y = loom.mul %s, %up                          // or loom.mul %up, %s
/// ->
///   %y = loom.swiglu %gate, %up
struct SwigluPattern : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MulOp root,
                                PatternRewriter &rewriter) const override {
    Value gate, up;
    eitherOrder(root.getLhs(), root.getRhs(), [&](Value s, Value other) {
      auto silu = s.getDefiningOp<SiluOp>();
      if (!silu || !s.hasOneUse())
        return false;
      gate = silu.getInput();
      up = other;
      return true;
    });
    if (!gate || !isa<FloatType>(getElementTypeOrSelf(up.getType())))
      return rewriter.notifyMatchFailure(root, "not silu(gate) * up");
    rewriter.replaceOpWithNewOp<SwigluOp>(root, root.getType(), gate, up);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

/// The single reduced axis of a kept-dimensions reduction.
template <typename ReduceOpT>
std::optional<int64_t> getSingleAxis(ReduceOpT op) {
  if (!op.getKeepdims() || op.getAxes().size() != 1)
    return std::nullopt;
  return op.getAxes().front();
}

/// Recognizes softmax, with or without the max shift.
///
///   %m = loom.reduce_max %x {axes = [1]}           // keepdims; optional
///   %d = loom.sub %x, %m
///   %e = loom.exp %d
///   %s = loom.reduce_sum %e {axes = [1]}           // keepdims
///   %y = loom.div %e, %s                           // or %e * reciprocal(%s)
/// ->
///   %y = loom.softmax %x {axis = 1}
template <typename RootOp> struct SoftmaxPattern : OpRewritePattern<RootOp> {
  using OpRewritePattern<RootOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(RootOp root,
                                PatternRewriter &rewriter) const override {
    std::optional<Product> p = getProduct(root.getResult());
    if (!p || p->factors.size() != 1 || p->divisors.size() != 1 ||
        p->constant != 1.0)
      return rewriter.notifyMatchFailure(root, "not e / s");
    Value e = p->factors.front();
    auto exp = e.getDefiningOp<ExpOp>();
    auto sum = p->divisors.front().getDefiningOp<ReduceSumOp>();
    if (!exp || !sum || sum.getInput() != e || !sum.getResult().hasOneUse())
      return rewriter.notifyMatchFailure(root, "not exp / sum(exp)");
    std::optional<int64_t> axis = getSingleAxis(sum);
    if (!axis)
      return rewriter.notifyMatchFailure(root, "not a single kept axis");
    // exp(x) feeds the sum and the division, nothing else.
    SmallVector<Operation *> owners(p->ops);
    owners.push_back(sum);
    if (!onlyUsedBy(e, owners))
      return rewriter.notifyMatchFailure(root, "exp has other users");
    Value x = exp.getInput();
    if (auto sub = x.getDefiningOp<SubOp>()) {
      auto max = sub.getRhs().getDefiningOp<ReduceMaxOp>();
      if (max && max.getInput() == sub.getLhs()) {
        if (getSingleAxis(max) != axis || !x.hasOneUse() ||
            !sub.getRhs().hasOneUse())
          return rewriter.notifyMatchFailure(root, "max shift does not fit");
        x = sub.getLhs();
      }
    }
    if (x.getType() != root.getType())
      return rewriter.notifyMatchFailure(root, "type differs");
    rewriter.replaceOpWithNewOp<SoftmaxOp>(root, root.getType(), x,
                                           rewriter.getI64IntegerAttr(*axis));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

/// Peels splat-constant factors off `value`: returns the one non-constant
/// factor and multiplies `scale` by the constant.
Value peelScale(Value value, double &scale) {
  if (!value.hasOneUse())
    return value;
  std::optional<Product> p = getProduct(value);
  if (!p || p->factors.size() != 1 || !p->divisors.empty())
    return value;
  scale *= p->constant;
  return p->factors.front();
}

/// The `[B, Hkv, T, D]` tensor that the exporter's grouped-query repeat
/// turned into `[B, Hkv * n, T, D]`, and n; or `{value, 1}`.
///
///   unsqueeze {axes = [2]} -> expand to [B, Hkv, n, T, D] -> reshape
///   unsqueeze {axes = [2]} -> tile [1, 1, n, 1, 1]       -> reshape
///   expand or tile of [B, 1, T, D] along heads (multi-query)
///
/// The batch and length may be known only at run time (the exporter's
/// repeat then expands to sizes it reads from the tensor itself); the heads
/// and head size must be static. The attention's lowering checks at run
/// time that the keys' and values' batch is the queries'.
std::pair<Value, int64_t> unrepeatHeads(Value value) {
  auto type = tensorType(value);
  if (!type || type.getRank() != 4 || type.isDynamicDim(1) ||
      type.isDynamicDim(3))
    return {value, 1};
  auto repeated = [&](Value src, int64_t n) -> std::pair<Value, int64_t> {
    auto srcType = tensorType(src);
    if (!srcType || srcType.getRank() != 4 || n < 1 ||
        srcType.getDimSize(0) != type.getDimSize(0) ||
        srcType.isDynamicDim(1) ||
        srcType.getDimSize(1) * n != type.getDimSize(1) ||
        srcType.getDimSize(2) != type.getDimSize(2) ||
        srcType.getDimSize(3) != type.getDimSize(3))
      return {value, 1};
    return {src, n};
  };
  // Multi-query: one head broadcast or tiled along the heads axis.
  if (auto expand = value.getDefiningOp<ExpandOp>()) {
    auto srcType = tensorType(expand.getInput());
    if (srcType && srcType.getRank() == 4 && srcType.getDimSize(1) == 1)
      return repeated(expand.getInput(), type.getDimSize(1));
    return {value, 1};
  }
  if (auto tile = value.getDefiningOp<TileOp>()) {
    auto srcType = tensorType(tile.getInput());
    std::optional<SmallVector<int64_t>> reps =
        getConstantInts(tile.getRepeats());
    // Tiling more than one head along the heads axis orders the copies
    // h = r * Hkv + kvh, which is not attention's grouping; only one head
    // is safe.
    if (srcType && srcType.getRank() == 4 && srcType.getDimSize(1) == 1 &&
        reps && *reps == SmallVector<int64_t>{1, type.getDimSize(1), 1, 1})
      return repeated(tile.getInput(), type.getDimSize(1));
    return {value, 1};
  }
  auto reshape = value.getDefiningOp<ReshapeOp>();
  if (!reshape)
    return {value, 1};
  Value five = reshape.getInput();
  auto fiveType = tensorType(five);
  if (!fiveType || fiveType.getRank() != 5 || fiveType.isDynamicDim(1) ||
      fiveType.isDynamicDim(2) || fiveType.isDynamicDim(4))
    return {value, 1};
  int64_t n = fiveType.getDimSize(2);
  Value unsqueezed;
  if (auto expand = five.getDefiningOp<ExpandOp>()) {
    unsqueezed = expand.getInput();
  } else if (auto tile = five.getDefiningOp<TileOp>()) {
    std::optional<SmallVector<int64_t>> reps =
        getConstantInts(tile.getRepeats());
    if (!reps || *reps != SmallVector<int64_t>{1, 1, n, 1, 1})
      return {value, 1};
    unsqueezed = tile.getInput();
  } else {
    return {value, 1};
  }
  auto unsqueeze = unsqueezed.getDefiningOp<UnsqueezeOp>();
  if (!unsqueeze || unsqueeze.getAxes().size() != 1 ||
      unsqueeze.getAxes().front() != 2)
    return {value, 1};
  auto srcType = tensorType(unsqueeze.getInput());
  // The 5-D tensor must be [B, Hkv, n, T, D] for the reshape to merge the
  // copies next to their head.
  if (!srcType || srcType.getRank() != 4 ||
      fiveType.getDimSize(0) != srcType.getDimSize(0) ||
      fiveType.getDimSize(1) != srcType.getDimSize(1) ||
      fiveType.getDimSize(3) != srcType.getDimSize(2) ||
      fiveType.getDimSize(4) != srcType.getDimSize(3))
    return {value, 1};
  return repeated(unsqueeze.getInput(), n);
}

/// Mask values at or below this are "minus infinity": exp() of them
/// underflows to zero in every float type a model runs in.
constexpr double kMaskedOut = -1e4;

/// True when `mask` is a constant `[..., S, T]` additive causal mask: zero
/// where key j <= query i + (T - S), a large negative value elsewhere, and
/// size-1 leading dimensions.
bool isCausalMask(Value mask, int64_t s, int64_t t) {
  auto type = tensorType(mask);
  if (!type || type.getRank() < 2 || !type.hasStaticShape() || t < s)
    return false;
  ArrayRef<int64_t> shape = type.getShape();
  if (shape[shape.size() - 2] != s || shape.back() != t ||
      llvm::any_of(shape.drop_back(2), [](int64_t d) { return d != 1; }))
    return false;
  std::optional<SmallVector<double>> values = getConstantFloats(mask);
  if (!values)
    return false;
  for (int64_t i = 0; i < s; ++i)
    for (int64_t j = 0; j < t; ++j) {
      double v = (*values)[i * t + j];
      if (j <= i + (t - s) ? v != 0.0 : !(v <= kMaskedOut))
        return false;
    }
  return true;
}

/// Recognizes scaled dot-product attention on `[B, H, S, D]` heads.
///
///   %kt = loom.transpose %k {perm = [0, 1, 3, 2]}
///   %s  = loom.matmul %q, %kt
///   %ss = loom.mul %s, %scale                      // or div by sqrt(D)
///   %sm = loom.add %ss, %mask                      // optional
///   %p  = loom.softmax %sm {axis = 3}
///   %o  = loom.matmul %p, %v
/// ->
///   %o = loom.attention %q, %k, %v[, %mask] {scale, is_causal}
///
/// Scales applied to q or k before the product fold into `scale`; a key
/// transposed from another layout gets one transpose to [B, H, T, D]; keys
/// and values repeated for grouped-query heads are used un-repeated; a
/// constant causal mask becomes `is_causal`.
struct AttentionPattern : OpRewritePattern<MatMulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MatMulOp root,
                                PatternRewriter &rewriter) const override {
    auto softmax = root.getLhs().getDefiningOp<SoftmaxOp>();
    auto resultType = tensorType(root.getResult());
    if (!softmax || !softmax.getResult().hasOneUse() || !resultType ||
        resultType.getRank() != 4 ||
        !isa<FloatType>(resultType.getElementType()))
      return rewriter.notifyMatchFailure(root, "not softmax(.) @ v");
    int64_t rank = tensorType(softmax.getInput()).getRank();
    if (normalizeAxis(softmax.getAxis(), rank) != rank - 1)
      return rewriter.notifyMatchFailure(root, "softmax is not over keys");
    Value scores = softmax.getInput();
    if (!scores.hasOneUse())
      return rewriter.notifyMatchFailure(root, "scores have other users");

    // scores = qk * scale [+ mask]
    MatMulOp qk;
    Value mask;
    double scale = 1.0;
    auto matchScaled = [&](Value v) {
      double c = 1.0;
      Value f = peelScale(v, c);
      auto mm = f.getDefiningOp<MatMulOp>();
      if (!mm || !f.hasOneUse())
        return false;
      qk = mm;
      scale = c;
      return true;
    };
    if (!matchScaled(scores)) {
      auto add = scores.getDefiningOp<AddOp>();
      if (!add ||
          !eitherOrder(add.getLhs(), add.getRhs(), [&](Value s, Value m) {
            if (!s.hasOneUse() || !matchScaled(s))
              return false;
            mask = m;
            return true;
          }))
        return rewriter.notifyMatchFailure(root, "scores are not q @ k^T");
    }

    // q @ transpose(k): scales on either side fold into `scale`.
    Value q = peelScale(qk.getLhs(), scale);
    Value kt = peelScale(qk.getRhs(), scale);
    auto transpose = kt.getDefiningOp<TransposeOp>();
    if (!transpose || !kt.hasOneUse())
      return rewriter.notifyMatchFailure(root, "key is not transposed");
    ArrayRef<int64_t> perm = transpose.getPerm();
    if (perm.size() != 4)
      return rewriter.notifyMatchFailure(root, "not [B, H, S, D]");
    // k[b, h, t, d] = kt[b, h, d, t]: the permutation from the transpose's
    // input to [B, H, T, D] swaps the last two entries of `perm`.
    SmallVector<int64_t> keyPerm{perm[0], perm[1], perm[3], perm[2]};
    bool keyIsInput = keyPerm == SmallVector<int64_t>{0, 1, 2, 3};
    Value kSrc = keyIsInput ? peelScale(transpose.getInput(), scale)
                            : transpose.getInput();
    Value v = root.getRhs();

    auto qType = tensorType(q), ktType = tensorType(kt), vType = tensorType(v);
    if (!qType || !ktType || !vType || qType.getRank() != 4 ||
        ktType.getRank() != 4 || vType.getRank() != 4)
      return rewriter.notifyMatchFailure(root, "not [B, H, S, D]");
    if (!std::isfinite(scale) || scale == 0.0)
      return rewriter.notifyMatchFailure(root, "degenerate scale");

    // Grouped-query heads: use keys and values before the repeat when both
    // were repeated alike.
    Value k = kSrc, vSrc = v;
    if (keyIsInput) {
      auto [kIn, kn] = unrepeatHeads(kSrc);
      auto [vIn, vn] = unrepeatHeads(v);
      if (kn == vn && kn > 1)
        k = kIn, vSrc = vIn;
    }
    auto kType = keyIsInput ? tensorType(k)
                            : RankedTensorType::get(
                                  {ktType.getDimSize(0), ktType.getDimSize(1),
                                   ktType.getDimSize(3), ktType.getDimSize(2)},
                                  ktType.getElementType());
    auto vSrcType = tensorType(vSrc);
    int64_t b = qType.getDimSize(0), h = qType.getDimSize(1),
            s = qType.getDimSize(2), d = qType.getDimSize(3);
    int64_t hkv = kType.getDimSize(1), t = kType.getDimSize(2);
    if (ShapedType::isDynamic(h) || ShapedType::isDynamic(hkv) || hkv == 0 ||
        h % hkv != 0 || kType.getDimSize(0) != b || kType.getDimSize(3) != d ||
        vSrcType.getDimSize(0) != b || vSrcType.getDimSize(1) != hkv ||
        vSrcType.getDimSize(2) != t ||
        qType.getElementType() != resultType.getElementType())
      return rewriter.notifyMatchFailure(root, "shapes do not fit");
    auto expected = RankedTensorType::get({b, h, s, vSrcType.getDimSize(3)},
                                          resultType.getElementType());
    if (expected != resultType)
      return rewriter.notifyMatchFailure(root, "result type differs");

    bool causal = false;
    if (mask) {
      auto maskType = tensorType(mask);
      SmallVector<int64_t> scoreShape{b, h, s, t};
      if (!maskType || !isa<FloatType>(maskType.getElementType()))
        return rewriter.notifyMatchFailure(root, "mask is not additive");
      FailureOr<SmallVector<int64_t>> shape =
          broadcastShapes(scoreShape, maskType.getShape());
      if (failed(shape) || *shape != scoreShape)
        return rewriter.notifyMatchFailure(root, "mask does not broadcast");
      if (isCausalMask(mask, s, t)) {
        causal = true;
        mask = Value();
      }
    }

    Location loc = root.getLoc();
    if (!keyIsInput)
      k = TransposeOp::create(rewriter, loc, kType, kSrc,
                              rewriter.getDenseI64ArrayAttr(keyPerm));
    rewriter.replaceOpWithNewOp<AttentionOp>(
        root, resultType, q, k, vSrc, mask,
        rewriter.getF32FloatAttr(static_cast<float>(scale)),
        rewriter.getBoolAttr(causal));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Rotary embedding
//===----------------------------------------------------------------------===//

/// 0 when `value` is the first half of `x`'s last axis, 1 when the second,
/// taken by a slice or a two-way split.
std::optional<int> getHalfOf(Value value, Value &x) {
  if (auto split = value.getDefiningOp<SplitOp>()) {
    auto type = tensorType(split.getInput());
    if (!type || split.getNumResults() != 2 || type.getRank() == 0)
      return std::nullopt;
    int64_t dim = type.getShape().back();
    if (ShapedType::isDynamic(dim) ||
        normalizeAxis(split.getAxis(), type.getRank()) != type.getRank() - 1 ||
        llvm::any_of(split.getResults(), [&](Value r) {
          return tensorType(r).getShape().back() * 2 != dim;
        }))
      return std::nullopt;
    x = split.getInput();
    return cast<OpResult>(value).getResultNumber();
  }
  auto slice = value.getDefiningOp<SliceOp>();
  if (!slice)
    return std::nullopt;
  auto type = tensorType(slice.getInput());
  if (!type || type.getRank() == 0)
    return std::nullopt;
  int64_t rank = type.getRank(), dim = type.getShape().back();
  std::optional<SmallVector<int64_t>> starts =
      getConstantInts(slice.getStarts());
  std::optional<SmallVector<int64_t>> ends = getConstantInts(slice.getEnds());
  std::optional<SmallVector<int64_t>> axes =
      slice.getAxes()
          ? getConstantInts(slice.getAxes())
          : std::optional<SmallVector<int64_t>>(SmallVector<int64_t>{0});
  std::optional<SmallVector<int64_t>> steps =
      slice.getSteps()
          ? getConstantInts(slice.getSteps())
          : std::optional<SmallVector<int64_t>>(SmallVector<int64_t>{1});
  if (ShapedType::isDynamic(dim) || dim % 2 != 0 || !starts || !ends || !axes ||
      !steps || starts->size() != 1 || ends->size() != 1 || axes->size() != 1 ||
      steps->size() != 1 || steps->front() != 1 ||
      normalizeAxis(axes->front(), rank) != rank - 1)
    return std::nullopt;
  // ONNX Slice: negative bounds count from the end, then clamp to [0, dim].
  auto clampIndex = [&](int64_t i) {
    if (i < 0)
      i += dim;
    return std::clamp<int64_t>(i, 0, dim);
  };
  int64_t start = clampIndex(starts->front()), end = clampIndex(ends->front());
  x = slice.getInput();
  if (start == 0 && end == dim / 2)
    return 0;
  if (start == dim / 2 && end == dim)
    return 1;
  return std::nullopt;
}

/// `v` when `value` is `-v` (neg, or a product with -1).
Value getNegated(Value value) {
  if (!value.hasOneUse())
    return {};
  if (auto neg = value.getDefiningOp<NegOp>())
    return neg.getInput();
  std::optional<Product> p = getProduct(value);
  if (p && p->divisors.empty() && p->factors.size() == 1 && p->constant == -1.0)
    return p->factors.front();
  return {};
}

/// Whether `value` is a 0-D tensor.
bool isScalar(Value value) {
  auto type = tensorType(value);
  return type && type.getRank() == 0;
}

/// True when the two halves of `table`'s last axis are provably equal, so
/// that the `[..., D/2]` table the op wants is its first half. Follows the
/// ways models build the tables: constants, `concat(f, f)` of the angles,
/// cos/sin of those, and unsqueeze/gather of positions.
bool hasEqualHalves(Value table, int depth = 0) {
  auto type = tensorType(table);
  if (!type || type.getRank() == 0 || depth > 8)
    return false;
  int64_t rank = type.getRank(), dim = type.getShape().back();
  if (ShapedType::isDynamic(dim) || dim % 2 != 0)
    return false;
  if (auto concat = table.getDefiningOp<ConcatOp>())
    return concat.getInputs().size() == 2 &&
           concat.getInputs()[0] == concat.getInputs()[1] &&
           normalizeAxis(concat.getAxis(), rank) == rank - 1;
  if (auto cos = table.getDefiningOp<CosOp>())
    return hasEqualHalves(cos.getInput(), depth + 1);
  if (auto sin = table.getDefiningOp<SinOp>())
    return hasEqualHalves(sin.getInput(), depth + 1);
  // Scaled by a scalar (Llama's attention_scaling).
  if (auto mul = table.getDefiningOp<MulOp>())
    return isScalar(mul.getRhs()) && tensorType(mul.getLhs()) == type &&
           hasEqualHalves(mul.getLhs(), depth + 1);
  if (auto unsqueeze = table.getDefiningOp<UnsqueezeOp>())
    return !llvm::is_contained(unsqueeze.getAxes(), rank - 1) &&
           !llvm::is_contained(unsqueeze.getAxes(), -1) &&
           hasEqualHalves(unsqueeze.getInput(), depth + 1);
  if (auto gather = table.getDefiningOp<GatherOp>()) {
    int64_t dataRank = tensorType(gather.getData()).getRank();
    return normalizeAxis(gather.getAxis(), dataRank) != dataRank - 1 &&
           hasEqualHalves(gather.getData(), depth + 1);
  }
  std::optional<SmallVector<double>> values = getConstantFloats(table);
  if (!values)
    return false;
  int64_t half = dim / 2;
  for (int64_t row = 0, e = values->size() / dim; row < e; ++row)
    for (int64_t i = 0; i < half; ++i)
      if ((*values)[row * dim + i] != (*values)[row * dim + half + i])
        return false;
  return true;
}

/// Builds the first half of a table for which hasEqualHalves holds.
Value buildHalfTable(PatternRewriter &rewriter, Location loc, Value table) {
  auto type = tensorType(table);
  if (auto concat = table.getDefiningOp<ConcatOp>())
    return concat.getInputs()[0];
  if (auto cos = table.getDefiningOp<CosOp>())
    return CosOp::create(rewriter, loc,
                         buildHalfTable(rewriter, loc, cos.getInput()));
  if (auto sin = table.getDefiningOp<SinOp>())
    return SinOp::create(rewriter, loc,
                         buildHalfTable(rewriter, loc, sin.getInput()));
  if (auto mul = table.getDefiningOp<MulOp>())
    return MulOp::create(rewriter, loc,
                         buildHalfTable(rewriter, loc, mul.getLhs()),
                         mul.getRhs());
  if (auto unsqueeze = table.getDefiningOp<UnsqueezeOp>())
    return UnsqueezeOp::create(
        rewriter, loc, buildHalfTable(rewriter, loc, unsqueeze.getInput()),
        unsqueeze.getAxesAttr());
  if (auto gather = table.getDefiningOp<GatherOp>())
    return GatherOp::create(rewriter, loc,
                            buildHalfTable(rewriter, loc, gather.getData()),
                            gather.getIndices(), gather.getAxisAttr());
  SmallVector<double> values = *getConstantFloats(table);
  int64_t dim = type.getShape().back(), half = dim / 2;
  SmallVector<int64_t> shape(type.getShape());
  shape.back() = half;
  auto halfType = RankedTensorType::get(shape, type.getElementType());
  const llvm::fltSemantics &sem =
      cast<FloatType>(type.getElementType()).getFloatSemantics();
  SmallVector<APFloat> halfValues;
  for (int64_t row = 0, e = values.size() / dim; row < e; ++row)
    for (int64_t i = 0; i < half; ++i) {
      APFloat f(values[row * dim + i]);
      bool lost;
      f.convert(sem, APFloat::rmNearestTiesToEven, &lost);
      halfValues.push_back(f);
    }
  return ConstantOp::create(rewriter, loc,
                            DenseElementsAttr::get(halfType, halfValues));
}

/// Recognizes the rotary embedding of GPT-NeoX and Llama (rotate_half).
///
///   %x1 = loom.slice %x [0, D/2) on the last axis
///   %x2 = loom.slice %x [D/2, D)
///   %n  = loom.neg %x2
///   %r  = loom.concat %n, %x1 {axis = -1}
///   %a  = loom.mul %x, %cos                        // [S, D] tables
///   %b  = loom.mul %r, %sin
///   %y  = loom.add %a, %b
/// ->
///   %y = loom.rotary_embedding %x, %cos_half, %sin_half
///
/// The op takes `[..., S, D/2]` tables; full-width tables are accepted only
/// when their halves are provably equal (see hasEqualHalves).
struct RotaryEmbeddingPattern : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AddOp root,
                                PatternRewriter &rewriter) const override {
    Value x, cosTable, sinTable;
    eitherOrder(root.getLhs(), root.getRhs(), [&](Value a, Value b) {
      auto mulA = a.getDefiningOp<MulOp>();
      auto mulB = b.getDefiningOp<MulOp>();
      if (!mulA || !mulB || !a.hasOneUse() || !b.hasOneUse())
        return false;
      return eitherOrder(mulB.getLhs(), mulB.getRhs(), [&](Value r, Value sn) {
        auto concat = r.getDefiningOp<ConcatOp>();
        if (!concat || !r.hasOneUse() || concat.getInputs().size() != 2)
          return false;
        auto rType = tensorType(r);
        if (normalizeAxis(concat.getAxis(), rType.getRank()) !=
            rType.getRank() - 1)
          return false;
        Value x2 = getNegated(concat.getInputs()[0]);
        Value x1 = concat.getInputs()[1];
        Value src1, src2;
        if (!x2 || !x1.hasOneUse() || !x2.hasOneUse() ||
            getHalfOf(x1, src1) != 0 || getHalfOf(x2, src2) != 1 ||
            src1 != src2)
          return false;
        return eitherOrder(mulA.getLhs(), mulA.getRhs(),
                           [&](Value xv, Value c) {
                             if (xv != src1)
                               return false;
                             x = xv, cosTable = c, sinTable = sn;
                             return true;
                           });
      });
    });
    if (!x)
      return rewriter.notifyMatchFailure(root,
                                         "not x*cos + rotate_half(x)*sin");
    auto xType = tensorType(x);
    if (xType != root.getType() || xType.getRank() < 2)
      return rewriter.notifyMatchFailure(root, "type differs");
    int64_t dim = xType.getShape().back();
    for (Value table : {cosTable, sinTable}) {
      auto type = tensorType(table);
      if (!type || type.getRank() < 2 || type.getShape().back() != dim ||
          !hasEqualHalves(table))
        return rewriter.notifyMatchFailure(root, "tables are not rotate_half");
    }
    Location loc = root.getLoc();
    Value cosHalf = buildHalfTable(rewriter, loc, cosTable);
    Value sinHalf = buildHalfTable(rewriter, loc, sinTable);
    rewriter.replaceOpWithNewOp<RotaryEmbeddingOp>(
        root, xType, x, cosHalf, sinHalf, rewriter.getBoolAttr(false));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Mixture of experts
//===----------------------------------------------------------------------===//

/// Whether `axes` names exactly `axis` of a tensor of rank `rank`.
bool isSingleAxis(ArrayRef<int64_t> axes, int64_t axis, int64_t rank) {
  return axes.size() == 1 && normalizeAxis(axes[0], rank) == axis;
}

/// Whether `value` is a constant [0, 1] (one-hot off and on values).
bool isOffOn(Value value) {
  DenseFPElementsAttr attr;
  if (!matchPattern(value, m_Constant(&attr)) || attr.getNumElements() != 2)
    return false;
  SmallVector<double> values;
  for (const APFloat &v : attr.getValues<APFloat>())
    values.push_back(v.convertToDouble());
  return values[0] == 0.0 && values[1] == 1.0;
}

/// The expert activation that produces `hidden` ("relu", "gelu" with erf,
/// "silu"), with its input; "none" and `hidden` itself otherwise. Fails
/// (null value) when the activation has other users.
std::pair<Value, StringRef> matchExpertActivation(Value hidden) {
  Operation *act = hidden.getDefiningOp();
  if (!isa_and_nonnull<SiluOp, ReluOp>(act) &&
      !(isa_and_nonnull<GeluOp>(act) &&
        cast<GeluOp>(act).getApproximate() == "none"))
    return {hidden, "none"};
  if (!hidden.hasOneUse())
    return {Value(), ""};
  StringRef name = isa<SiluOp>(act)   ? "silu"
                   : isa<ReluOp>(act) ? "relu"
                                      : "gelu";
  return {act->getOperand(0), name};
}

/// The experts' hidden activations: activation(x @ w_in) through
/// `up`, or gated (SwiGLU), silu(x @ w_gate) * (x @ w_in) through `gate`
/// and `up`, both on the same x.
struct ExpertHidden {
  MatMulOp up, gate;
  StringRef activation;
};

std::optional<ExpertHidden> matchExpertHidden(Value value) {
  ExpertHidden hidden;
  if (auto swiglu = value.getDefiningOp<SwigluOp>()) {
    hidden.gate = swiglu.getLhs().getDefiningOp<MatMulOp>();
    hidden.up = swiglu.getRhs().getDefiningOp<MatMulOp>();
    hidden.activation = "silu";
    if (!value.hasOneUse() || !hidden.gate || !hidden.up ||
        !swiglu.getLhs().hasOneUse() || !swiglu.getRhs().hasOneUse() ||
        hidden.gate.getLhs() != hidden.up.getLhs() ||
        hidden.gate.getRhs().getType() != hidden.up.getRhs().getType())
      return std::nullopt;
    return hidden;
  }
  auto [pre, activation] = matchExpertActivation(value);
  if (!pre || !pre.hasOneUse())
    return std::nullopt;
  hidden.up = pre.getDefiningOp<MatMulOp>();
  hidden.activation = activation;
  if (!hidden.up)
    return std::nullopt;
  return hidden;
}

/// Whether every use of `value` is by the expert projections of `hidden`.
bool onlyFeedsExperts(Value value, ExpertHidden hidden) {
  return llvm::all_of(value.getUsers(), [&](Operation *user) {
    return user == hidden.up.getOperation() ||
           (hidden.gate && user == hidden.gate.getOperation());
  });
}

/// Top-k routing: `weights` are the k largest scores of a [T, E] tensor
/// (optionally divided by their sum) and `indices` their experts.
struct TopKRouting {
  TopKOp topk;
  bool normalize = false;
};

std::optional<TopKRouting> matchTopKRouting(Value weights, Value indices,
                                            int64_t experts, int64_t tokens) {
  TopKRouting routing;
  routing.topk = indices.getDefiningOp<TopKOp>();
  if (!routing.topk || indices != routing.topk.getIndices())
    return std::nullopt;
  Value values = routing.topk.getValues();
  if (auto div = weights.getDefiningOp<DivOp>()) {
    auto total = div.getRhs().getDefiningOp<ReduceSumOp>();
    if (!total || div.getLhs() != values || total.getInput() != values ||
        !total.getKeepdims() || !isSingleAxis(total.getAxes(), 1, 2))
      return std::nullopt;
    routing.normalize = true;
    weights = div.getLhs();
  }
  auto scoresType = cast<RankedTensorType>(routing.topk.getInput().getType());
  std::optional<double> k = getSplatValue(routing.topk.getK());
  if (weights != values || !routing.topk.getLargest() ||
      scoresType.getRank() != 2 ||
      normalizeAxis(routing.topk.getAxis(), 2) != 1 ||
      scoresType.getDimSize(1) != experts ||
      scoresType.getDimSize(0) != tokens || !k || *k < 1 || *k > experts)
    return std::nullopt;
  return routing;
}

/// Whether `wIn` [E, D, H] and `wOut` [E, H, D] are experts for tokens of
/// type `x` [T, D].
bool areExpertWeights(RankedTensorType x, Value wIn, Value wOut) {
  auto in = cast<RankedTensorType>(wIn.getType());
  auto out = cast<RankedTensorType>(wOut.getType());
  return x.getRank() == 2 && in.getRank() == 3 && out.getRank() == 3 &&
         in.hasStaticShape() && out.hasStaticShape() &&
         in.getDimSize(0) == out.getDimSize(0) &&
         in.getDimSize(1) == x.getDimSize(1) &&
         out.getDimSize(2) == x.getDimSize(1) &&
         in.getDimSize(2) == out.getDimSize(1);
}

/// Replaces `root` by `loom.moe` with `routing`.
void replaceWithMoE(PatternRewriter &rewriter, Operation *root, Value tokens,
                    TopKRouting routing, Value wIn, Value wOut, Value wGate,
                    StringRef activation) {
  std::optional<double> k = getSplatValue(routing.topk.getK());
  rewriter.replaceOpWithNewOp<MoEOp>(
      root, root->getResult(0).getType(), tokens, routing.topk.getInput(), wIn,
      wOut, wGate, rewriter.getI64IntegerAttr(static_cast<int64_t>(*k)),
      rewriter.getBoolAttr(routing.normalize),
      rewriter.getStringAttr(activation), FloatAttr());
}

/// `root` as the sum over `axis` of a rank-3 product (the axis dropped)
/// that nothing else uses: that product, or null. Both exported MoE forms
/// end in one (over the experts, or over the k choices).
static MulOp matchWeightedSum(ReduceSumOp root, int64_t axis) {
  auto rootType = cast<RankedTensorType>(root.getType());
  if (rootType.getRank() != 2 || root.getKeepdims() ||
      !isSingleAxis(root.getAxes(), axis, 3))
    return nullptr;
  auto weighted = root.getInput().getDefiningOp<MulOp>();
  return weighted && weighted->hasOneUse() ? weighted : MulOp();
}

/// Recognizes the dense mixture-of-experts form PyTorch exports (every
/// expert on every token, weighted by one-hot routing weights):
///
///   %v, %i = loom.topk %scores, k {axis = -1}       // [T, E] -> [T, k]
///   %w = %v, or loom.div %v, (loom.reduce_sum %v {axes = [-1]})
///   %m = loom.one_hot %i, E, [0, 1] {axis = -1}     // [T, k, E]
///   %c = loom.reduce_sum (loom.mul %m, (loom.unsqueeze %w [2])) {axes = [1],
///                         keepdims = false}         // [T, E]
///   %xe = loom.expand (loom.unsqueeze %x [0]), [E, T, D]
///   %h = act(loom.matmul %xe, %w_in)                // [E, T, H]
///   %o = loom.matmul %h, %w_out                     // [E, T, D]
///   %y = loom.reduce_sum (loom.mul %o, (loom.unsqueeze
///          (loom.transpose %c [1, 0]) [2])) {axes = [0], keepdims = false}
/// ->
///   %y = loom.moe %x, %scores, %w_in, %w_out {k, normalize, activation}
struct MoEPattern : OpRewritePattern<ReduceSumOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ReduceSumOp root,
                                PatternRewriter &rewriter) const override {
    auto fail = [&](const char *why) {
      return rewriter.notifyMatchFailure(root, why);
    };
    MulOp weighted = matchWeightedSum(root, /*axis=*/0);
    if (!weighted)
      return fail("not a sum of weighted expert outputs over experts of "
                  "[E, T, D]");
    MatMulOp down;
    Value combine;
    eitherOrder(weighted.getLhs(), weighted.getRhs(), [&](Value o, Value w) {
      down = o.getDefiningOp<MatMulOp>();
      auto unsqueeze = w.getDefiningOp<UnsqueezeOp>();
      auto transpose = unsqueeze
                           ? unsqueeze.getInput().getDefiningOp<TransposeOp>()
                           : TransposeOp();
      if (!down || !o.hasOneUse() || !transpose || !w.hasOneUse() ||
          !isSingleAxis(unsqueeze.getAxes(), 2, 3) ||
          transpose.getPerm() != ArrayRef<int64_t>{1, 0})
        return false;
      combine = transpose.getInput();
      return true;
    });
    if (!combine)
      return fail("no expert outputs weighted by transposed combine weights");

    // The experts: act(x @ w_in) @ w_out, batched over experts.
    Value wOut = down.getRhs();
    std::optional<ExpertHidden> hidden = matchExpertHidden(down.getLhs());
    if (!hidden || !down.getLhs().hasOneUse())
      return fail("no expert input projection (or one with other users)");
    Value wIn = hidden->up.getRhs(), tokens = hidden->up.getLhs();
    Value wGate = hidden->gate ? hidden->gate.getRhs() : Value();
    if (auto expand = tokens.getDefiningOp<ExpandOp>();
        expand && onlyFeedsExperts(tokens, *hidden))
      tokens = expand.getInput();
    if (auto unsqueeze = tokens.getDefiningOp<UnsqueezeOp>();
        unsqueeze && tokens.hasOneUse() &&
        isSingleAxis(unsqueeze.getAxes(), 0, 3))
      tokens = unsqueeze.getInput();
    auto xType = dyn_cast<RankedTensorType>(tokens.getType());
    if (!xType || xType != root.getType() ||
        !areExpertWeights(xType, wIn, wOut))
      return fail("experts are not [E, D, H] and [E, H, D] on tokens [T, D]");
    StringRef activation = hidden->activation;
    int64_t experts = cast<RankedTensorType>(wIn.getType()).getDimSize(0);

    // The combine weights: top-k weights scattered to their experts.
    auto sum = combine.getDefiningOp<ReduceSumOp>();
    if (!sum || !combine.hasOneUse() || sum.getKeepdims() ||
        !isSingleAxis(sum.getAxes(), 1, 3))
      return fail("combine weights are not a sum over the k choices");
    auto scatter = sum.getInput().getDefiningOp<MulOp>();
    if (!scatter || !sum.getInput().hasOneUse())
      return fail("combine weights are not one-hot masks times weights");
    OneHotOp oneHot;
    Value weights;
    eitherOrder(scatter.getLhs(), scatter.getRhs(), [&](Value m, Value w) {
      oneHot = m.getDefiningOp<OneHotOp>();
      auto unsqueeze = w.getDefiningOp<UnsqueezeOp>();
      if (!oneHot || !m.hasOneUse() || !unsqueeze || !w.hasOneUse() ||
          !isSingleAxis(unsqueeze.getAxes(), 2, 3))
        return false;
      weights = unsqueeze.getInput();
      return true;
    });
    if (!weights || normalizeAxis(oneHot.getAxis(), 3) != 2 ||
        getSplatValue(oneHot.getDepth()) != static_cast<double>(experts) ||
        !isOffOn(oneHot.getValues()))
      return fail("no one-hot [0, 1] mask over the experts");
    std::optional<TopKRouting> routing = matchTopKRouting(
        weights, oneHot.getIndices(), experts, xType.getDimSize(0));
    if (!routing)
      return fail("the routing is not the k largest of [T, E] scores");
    replaceWithMoE(rewriter, root, tokens, *routing, wIn, wOut, wGate,
                   activation);
    return success();
  }
};

/// Recognizes the form where each token gathers its experts' weights by
/// index (`W[indices]` in PyTorch), so only the chosen experts run:
///
///   %v, %i = loom.topk %scores, k {axis = -1}       // [T, E] -> [T, k]
///   %w = %v, or loom.div %v, (loom.reduce_sum %v {axes = [-1]})
///   %w1 = loom.gather %w_in, %i                     // [T, k, D, H]
///   %w2 = loom.gather %w_out, %i                    // [T, k, H, D]
///   %h = act(loom.matmul (loom.unsqueeze %x [1, 2]), %w1)   // [T, k, 1, H]
///   %o = loom.squeeze (loom.matmul %h, %w2) [2]     // [T, k, D]
///   %y = loom.reduce_sum (loom.mul %o, (loom.unsqueeze %w [2]))
///          {axes = [1], keepdims = false}
/// ->
///   %y = loom.moe %x, %scores, %w_in, %w_out {k, normalize, activation}
struct MoEGatherPattern : OpRewritePattern<ReduceSumOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ReduceSumOp root,
                                PatternRewriter &rewriter) const override {
    auto fail = [&](const char *why) {
      return rewriter.notifyMatchFailure(root, why);
    };
    MulOp weighted = matchWeightedSum(root, /*axis=*/1);
    if (!weighted)
      return fail("not a sum of weighted expert outputs over the k choices "
                  "of [T, k, D]");
    SqueezeOp squeeze;
    Value weights;
    eitherOrder(weighted.getLhs(), weighted.getRhs(), [&](Value o, Value w) {
      squeeze = o.getDefiningOp<SqueezeOp>();
      auto unsqueeze = w.getDefiningOp<UnsqueezeOp>();
      if (!squeeze || !o.hasOneUse() || !unsqueeze || !w.hasOneUse() ||
          squeeze.getAxes() != ArrayRef<int64_t>{2} ||
          !isSingleAxis(unsqueeze.getAxes(), 2, 3))
        return false;
      weights = unsqueeze.getInput();
      return true;
    });
    if (!weights)
      return fail("no [T, k, D] expert outputs weighted by [T, k] weights");
    auto down = squeeze.getInput().getDefiningOp<MatMulOp>();
    if (!down || !squeeze.getInput().hasOneUse())
      return fail("no expert output projection");
    std::optional<ExpertHidden> hidden = matchExpertHidden(down.getLhs());
    if (!hidden || !down.getLhs().hasOneUse())
      return fail("no expert input projection (or one with other users)");
    MatMulOp up = hidden->up;
    auto tokens = up.getLhs().getDefiningOp<UnsqueezeOp>();
    auto gatherIn = up.getRhs().getDefiningOp<GatherOp>();
    auto gatherOut = down.getRhs().getDefiningOp<GatherOp>();
    auto gatherGate = hidden->gate
                          ? hidden->gate.getRhs().getDefiningOp<GatherOp>()
                          : GatherOp();
    if (!tokens || !gatherIn || !gatherOut ||
        !onlyFeedsExperts(up.getLhs(), *hidden) || !up.getRhs().hasOneUse() ||
        !down.getRhs().hasOneUse() ||
        tokens.getAxes() != ArrayRef<int64_t>{1, 2} ||
        gatherIn.getAxis() != 0 || gatherOut.getAxis() != 0 ||
        gatherIn.getIndices() != gatherOut.getIndices() ||
        (hidden->gate && (!gatherGate || !hidden->gate.getRhs().hasOneUse() ||
                          gatherGate.getAxis() != 0 ||
                          gatherGate.getIndices() != gatherIn.getIndices())))
      return fail("the experts' weights are not gathered by the same indices");
    Value x = tokens.getInput(), wIn = gatherIn.getData(),
          wOut = gatherOut.getData();
    Value wGate = gatherGate ? gatherGate.getData() : Value();
    StringRef activation = hidden->activation;
    auto xType = dyn_cast<RankedTensorType>(x.getType());
    if (!xType || xType != root.getType() ||
        !areExpertWeights(xType, wIn, wOut))
      return fail("experts are not [E, D, H] and [E, H, D] on tokens [T, D]");
    int64_t experts = cast<RankedTensorType>(wIn.getType()).getDimSize(0);
    std::optional<TopKRouting> routing = matchTopKRouting(
        weights, gatherIn.getIndices(), experts, xType.getDimSize(0));
    if (!routing)
      return fail("the routing is not the k largest of [T, E] scores");
    replaceWithMoE(rewriter, root, x, *routing, wIn, wOut, wGate, activation);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

struct LoomRecognizePass
    : loom::impl::LoomRecognizePassBase<LoomRecognizePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateRecognitionPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void loom::populateRecognitionPatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<LayerNormPattern<AddOp>, LayerNormPattern<MulOp>,
               LayerNormPattern<DivOp>, RMSNormPattern<MulOp>,
               RMSNormPattern<DivOp>, GeluPattern, SiluPattern, SwigluPattern,
               SoftmaxPattern<DivOp>, SoftmaxPattern<MulOp>, AttentionPattern,
               RotaryEmbeddingPattern, MoEPattern, MoEGatherPattern>(ctx);
}
