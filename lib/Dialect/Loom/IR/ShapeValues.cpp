//===- ShapeValues.cpp - What is known of shape arithmetic ----------------===//

#include "loom/Dialect/Loom/IR/ShapeValues.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace loom {
namespace {

using Elements = SmallVector<ShapeElement>;

/// Exporters' shape arithmetic is a few ops deep; deeper chains are not
/// followed.
constexpr int kMaxDepth = 12;
/// Shape values hold one element per dimension; longer 1-D tensors are not
/// followed (their static size may be any number a model states: a
/// Reshape to 3 * 2^32 - 1 elements once made an Elements vector that
/// size).
constexpr int64_t kMaxElements = 1024;

/// `value` before the partitioner's annotations (shard.shard, which only
/// say how a value is split while shardings propagate; matched by name:
/// the dialect does not depend on the shard dialect).
Value throughAnnotations(Value value) {
  while (Operation *op = value.getDefiningOp()) {
    if (op->getName().getStringRef() != "shard.shard")
      break;
    value = op->getOperand(0);
  }
  return value;
}

ShapeElement known(int64_t value) {
  ShapeElement e;
  e.constant = value;
  return e;
}

std::optional<Elements> evaluate(Value shape, int depth);

/// `lhs` op `rhs` elementwise (numpy broadcasting of one element), with
/// `combine` on two constants; anything else is unknown.
std::optional<Elements>
combineElements(Value lhs, Value rhs, int depth,
                function_ref<std::optional<ShapeElement>(const ShapeElement &,
                                                         const ShapeElement &)>
                    combine) {
  std::optional<Elements> a = evaluate(lhs, depth + 1);
  std::optional<Elements> b = evaluate(rhs, depth + 1);
  if (!a || !b || (a->size() != b->size() && a->size() != 1 && b->size() != 1))
    return std::nullopt;
  size_t n = std::max(a->size(), b->size());
  Elements out;
  for (size_t i = 0; i < n; ++i) {
    const ShapeElement &x = (*a)[a->size() == 1 ? 0 : i];
    const ShapeElement &y = (*b)[b->size() == 1 ? 0 : i];
    out.push_back(combine(x, y).value_or(ShapeElement()));
  }
  return out;
}

std::optional<Elements> evaluate(Value shape, int depth) {
  shape = throughAnnotations(shape);
  auto type = dyn_cast<RankedTensorType>(shape.getType());
  if (!type || type.getRank() > 1 || !type.hasStaticShape() ||
      !type.getElementType().isInteger())
    return std::nullopt;
  int64_t count = type.getNumElements();
  if (count > kMaxElements)
    return std::nullopt;
  DenseIntElementsAttr constant;
  if (matchPattern(shape, m_Constant(&constant))) {
    Elements out;
    for (const APInt &v : constant.getValues<APInt>())
      out.push_back(known(v.getSExtValue()));
    return out;
  }
  Operation *op = shape.getDefiningOp();
  if (!op || depth > kMaxDepth)
    return std::nullopt;
  auto unknown = [&] { return Elements(count); };
  if (auto shapeOp = dyn_cast<ShapeOp>(op)) {
    auto input = cast<RankedTensorType>(shapeOp.getInput().getType());
    int64_t rank = input.getRank();
    auto clamp = [&](int64_t v) {
      v = v < 0 ? v + rank : v;
      return std::clamp<int64_t>(v, 0, rank);
    };
    // I64Attr's getters return the values unsigned.
    int64_t start = clamp(static_cast<int64_t>(shapeOp.getStart()));
    int64_t end = shapeOp.getEnd()
                      ? clamp(static_cast<int64_t>(*shapeOp.getEnd()))
                      : rank;
    Elements out;
    for (int64_t d = start; d < end; ++d) {
      if (!input.isDynamicDim(d)) {
        out.push_back(known(input.getDimSize(d)));
        continue;
      }
      ShapeElement e;
      e.of = shapeOp.getInput();
      e.dim = d;
      out.push_back(e);
    }
    if (static_cast<int64_t>(out.size()) != count)
      return std::nullopt;
    return out;
  }
  if (auto concat = dyn_cast<ConcatOp>(op)) {
    Elements out;
    for (Value input : concat.getInputs()) {
      std::optional<Elements> part = evaluate(input, depth + 1);
      if (!part)
        return unknown();
      out.append(*part);
    }
    return static_cast<int64_t>(out.size()) == count ? std::optional(out)
                                                     : std::nullopt;
  }
  if (isa<UnsqueezeOp, SqueezeOp, ReshapeOp, CastOp>(op)) {
    if (isa<CastOp>(op) && !cast<RankedTensorType>(op->getOperand(0).getType())
                                .getElementType()
                                .isInteger(64))
      return unknown();
    std::optional<Elements> in = evaluate(op->getOperand(0), depth + 1);
    if (!in || static_cast<int64_t>(in->size()) != count)
      return unknown();
    return in;
  }
  if (auto gather = dyn_cast<GatherOp>(op)) {
    std::optional<Elements> data = evaluate(gather.getData(), depth + 1);
    DenseIntElementsAttr indices;
    if (!data || gather.getAxis() != 0 ||
        !matchPattern(throughAnnotations(gather.getIndices()),
                      m_Constant(&indices)))
      return unknown();
    Elements out;
    int64_t n = data->size();
    for (const APInt &v : indices.getValues<APInt>()) {
      int64_t i = v.getSExtValue();
      i = i < 0 ? i + n : i;
      if (i < 0 || i >= n)
        return unknown();
      out.push_back((*data)[i]);
    }
    return static_cast<int64_t>(out.size()) == count ? std::optional(out)
                                                     : std::nullopt;
  }
  if (auto slice = dyn_cast<SliceOp>(op)) {
    // `shape[start:end:step]` with constant bounds (`x.shape[1:]`).
    std::optional<Elements> data = evaluate(slice.getInput(), depth + 1);
    DenseIntElementsAttr starts, ends, axes, steps;
    if (!data ||
        !matchPattern(throughAnnotations(slice.getStarts()),
                      m_Constant(&starts)) ||
        !matchPattern(throughAnnotations(slice.getEnds()), m_Constant(&ends)) ||
        starts.getNumElements() != 1 || ends.getNumElements() != 1 ||
        (slice.getAxes() && (!matchPattern(throughAnnotations(slice.getAxes()),
                                           m_Constant(&axes)) ||
                             axes.getValues<APInt>()[0].getSExtValue() != 0)) ||
        (slice.getSteps() && !matchPattern(throughAnnotations(slice.getSteps()),
                                           m_Constant(&steps))))
      return unknown();
    int64_t n = data->size();
    int64_t step = steps ? steps.getValues<APInt>()[0].getSExtValue() : 1;
    if (step <= 0)
      return unknown();
    auto clamp = [&](int64_t v) {
      return std::clamp<int64_t>(v < 0 ? v + n : v, 0, n);
    };
    int64_t start = clamp(starts.getValues<APInt>()[0].getSExtValue());
    int64_t end = clamp(ends.getValues<APInt>()[0].getSExtValue());
    Elements out;
    for (int64_t i = start; i < end; i += step)
      out.push_back((*data)[i]);
    return static_cast<int64_t>(out.size()) == count ? std::optional(out)
                                                     : std::nullopt;
  }
  auto arithmetic = [&](auto apply) {
    return combineElements(
        op->getOperand(0), op->getOperand(1), depth,
        [&](const ShapeElement &x,
            const ShapeElement &y) -> std::optional<ShapeElement> {
          if (x.constant && y.constant)
            if (std::optional<int64_t> v = apply(*x.constant, *y.constant))
              return known(*v);
          return std::nullopt;
        });
  };
  if (isa<MulOp>(op))
    return arithmetic(
        [](int64_t x, int64_t y) -> std::optional<int64_t> { return x * y; });
  if (isa<AddOp>(op))
    return arithmetic(
        [](int64_t x, int64_t y) -> std::optional<int64_t> { return x + y; });
  if (isa<SubOp>(op))
    return arithmetic(
        [](int64_t x, int64_t y) -> std::optional<int64_t> { return x - y; });
  if (isa<DivOp>(op))
    return arithmetic([](int64_t x, int64_t y) -> std::optional<int64_t> {
      if (y == 0)
        return std::nullopt;
      return x / y;
    });
  if (isa<EqualOp>(op)) {
    // 1 or 0; a run-time size is never negative, so it differs from a
    // negative constant (torch's Where(Equal(shape, -1), 1, shape)).
    return combineElements(
        op->getOperand(0), op->getOperand(1), depth,
        [](const ShapeElement &x,
           const ShapeElement &y) -> std::optional<ShapeElement> {
          if (x.constant && y.constant)
            return known(*x.constant == *y.constant);
          if ((x.isSizeOf() && y.constant && *y.constant < 0) ||
              (y.isSizeOf() && x.constant && *x.constant < 0))
            return known(0);
          return std::nullopt;
        });
  }
  if (auto where = dyn_cast<WhereOp>(op)) {
    std::optional<Elements> c = evaluate(where->getOperand(0), depth + 1);
    std::optional<Elements> x = evaluate(where->getOperand(1), depth + 1);
    std::optional<Elements> y = evaluate(where->getOperand(2), depth + 1);
    if (!c || !x || !y)
      return unknown();
    auto at = [&](const Elements &e, int64_t i) -> const ShapeElement * {
      if (e.size() == 1)
        return &e[0];
      return static_cast<int64_t>(e.size()) == count ? &e[i] : nullptr;
    };
    Elements out;
    for (int64_t i = 0; i < count; ++i) {
      const ShapeElement *ci = at(*c, i), *xi = at(*x, i), *yi = at(*y, i);
      if (!ci || !xi || !yi)
        return unknown();
      out.push_back(!ci->constant ? ShapeElement() : *ci->constant ? *xi : *yi);
    }
    return out;
  }
  return unknown();
}

/// Follows dimension `dim` of `value` back through the ops that keep it.
std::pair<Value, int64_t> rootOfSize(Value value, int64_t dim) {
  for (int steps = 0; steps < 64; ++steps) {
    value = throughAnnotations(value);
    Operation *op = value.getDefiningOp();
    if (!op)
      break;
    auto rank = [](Value v) {
      return cast<RankedTensorType>(v.getType()).getRank();
    };
    if (auto matmul = dyn_cast<MatMulOp>(op)) {
      // Rows and batch dimensions come from the left operand when the right
      // one is a matrix (or vector): nothing broadcasts against them.
      if (rank(matmul.getRhs()) > 2 || rank(matmul.getLhs()) != rank(value) ||
          dim >= rank(value) - 1)
        break;
      value = matmul.getLhs();
      continue;
    }
    if (auto transpose = dyn_cast<TransposeOp>(op)) {
      dim = transpose.getPerm()[dim];
      value = transpose.getInput();
      continue;
    }
    if (auto split = dyn_cast<SplitOp>(op)) {
      // The pieces share every dimension but the split one.
      if (static_cast<int64_t>(split.getAxis()) == dim)
        break;
      value = split.getInput();
      continue;
    }
    if (auto reshape = dyn_cast<ReshapeOp>(op)) {
      // A target element that is a run-time size is that size (were it 0
      // at run time, the input's size would be copied instead; such a
      // tensor has no elements either way).
      std::optional<Elements> target = evaluate(reshape.getShape(), 0);
      if (!target || dim >= static_cast<int64_t>(target->size()) ||
          !(*target)[dim].isSizeOf())
        break;
      ShapeElement size = (*target)[dim];
      value = size.of;
      dim = size.dim;
      continue;
    }
    if (op->hasTrait<OpTrait::Elementwise>() && op->getNumOperands() == 2) {
      // A binary op's dimension is its operand's of the result's rank when
      // the other operand does not reach that dimension or is 1 there (a
      // bias, a scale, a mask row).
      auto broadcastsThere = [&](Value other) {
        int64_t at = dim - (rank(value) - rank(other));
        return at < 0 ||
               cast<RankedTensorType>(other.getType()).getDimSize(at) == 1;
      };
      Value lhs = op->getOperand(0), rhs = op->getOperand(1);
      if (rank(lhs) == rank(value) && broadcastsThere(rhs)) {
        value = lhs;
        continue;
      }
      if (rank(rhs) == rank(value) && broadcastsThere(lhs)) {
        value = rhs;
        continue;
      }
      break;
    }
    if (auto attention = dyn_cast<AttentionOp>(op)) {
      // [batch, heads, queries, value size]: all but the last the query's.
      if (dim == 3)
        break;
      value = attention.getQuery();
      continue;
    }
    bool keepsShape =
        isa<CastOp, RMSNormOp, LayerNormOp, SoftmaxOp, RotaryEmbeddingOp>(op) ||
        (op->hasTrait<OpTrait::Elementwise>() && op->getNumOperands() == 1);
    if (keepsShape && op->getNumOperands() >= 1 &&
        rank(op->getOperand(0)) == rank(value)) {
      value = op->getOperand(0);
      continue;
    }
    break;
  }
  return {value, dim};
}

} // namespace

std::optional<SmallVector<ShapeElement>> shapeElements(Value shape) {
  return evaluate(shape, 0);
}

bool sameRunTimeSize(Value a, int64_t dimA, Value b, int64_t dimB) {
  return rootOfSize(a, dimA) == rootOfSize(b, dimB);
}

} // namespace loom
