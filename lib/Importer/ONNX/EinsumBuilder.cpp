//===- EinsumBuilder.cpp - Einsum -----------------------------------------===//
//
// Einsum becomes transposes, reshapes, reductions and batched matmuls.
//
//===----------------------------------------------------------------------===//

#include "BuilderUtils.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <map>

using namespace mlir;

namespace loom::onnx_import {
namespace {

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

} // namespace

void registerEinsumBuilders(OpTable &t) {
  t.add("", "Einsum", 12, buildEinsum);
}

} // namespace loom::onnx_import
