//===- VectorizeElementwise.cpp - Elementwise and reduction ops as vectors ===//
//
// What loom-cpu-vectorize-contractions and loom-cpu-vectorize-copies leave
// as linalg ops (elementwise chains, normalizations, softmax, reductions,
// masks) would otherwise become scalar loops, and LLVM's loop vectorizer
// rarely takes them: the arena's buffers are views of one allocation that
// it cannot tell apart, a sum in order is not reassociable, and a value
// read once per row is reloaded for every element. A LayerNorm's last
// loop ran at 3 GB/s with one vsqrtss and one vdivss per element.
//
// Here each such op becomes loops over all but its innermost loop and, for
// the innermost, vector pieces: each operand that walks it contiguously
// is a vector transfer, each that does not is one scalar load broadcast
// (hoisted out of the innermost loop by construction), and the body's
// arithmetic is cloned on vectors. When the innermost loop is a reduction,
// the pieces accumulate into a vector that is reduced once per output
// element (sums change their order of addition; see docs/numerics.md).
//
//===----------------------------------------------------------------------===//

#include "loom/Target/CPU/Passes.h"

#include "HostVectors.h"
#include "TargetUtils.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/TypeSwitch.h"

namespace loom::cpu {
#define GEN_PASS_DEF_LOOMCPUVECTORIZEELEMENTWISEPASS
#include "loom/Target/CPU/Passes.h.inc"
} // namespace loom::cpu

using namespace mlir;

namespace loom::cpu {
namespace {

/// How an operand is read along the innermost loop.
enum class Access {
  /// Its last index is the innermost loop itself, over contiguous memory.
  Contiguous,
  /// The innermost loop does not appear in its indices.
  Invariant,
  /// An input whose last index steps by a small constant (2 to
  /// kMaxStride) along the innermost loop, over contiguous memory: a
  /// strided pooling window's row. Read as the contiguous run from its
  /// first element to its last and compacted by a shuffle.
  Strided,
};

/// The largest step of a Strided input.
constexpr int64_t kMaxStride = 4;

/// The combining kind of a reduction body `out = combiner(x, out)`.
std::optional<vector::CombiningKind> combiningKind(Operation *op) {
  using Kind = vector::CombiningKind;
  return llvm::TypeSwitch<Operation *, std::optional<Kind>>(op)
      .Case<arith::AddFOp, arith::AddIOp>([](auto) { return Kind::ADD; })
      .Case<arith::MulFOp, arith::MulIOp>([](auto) { return Kind::MUL; })
      .Case<arith::MaximumFOp>([](auto) { return Kind::MAXIMUMF; })
      .Case<arith::MinimumFOp>([](auto) { return Kind::MINIMUMF; })
      .Case<arith::MaxNumFOp>([](auto) { return Kind::MAXNUMF; })
      .Case<arith::MinNumFOp>([](auto) { return Kind::MINNUMF; })
      .Case<arith::MaxSIOp>([](auto) { return Kind::MAXSI; })
      .Case<arith::MinSIOp>([](auto) { return Kind::MINSI; })
      .Case<arith::MaxUIOp>([](auto) { return Kind::MAXUI; })
      .Case<arith::MinUIOp>([](auto) { return Kind::MINUI; })
      .Case<arith::AndIOp>([](auto) { return Kind::AND; })
      .Case<arith::OrIOp>([](auto) { return Kind::OR; })
      .Case<arith::XOrIOp>([](auto) { return Kind::XOR; })
      .Default([](Operation *) { return std::nullopt; });
}

/// One output of a reduction over the innermost loop: the body computes
/// `combiner(partial, out)` with `partial` independent of `out`.
struct Reduction {
  Operation *combiner;
  vector::CombiningKind kind;
  /// The combiner's operand that is not the output's block argument.
  Value partial;
};

/// An op this pass takes, with what it needs to emit it.
struct Plan {
  linalg::GenericOp op;
  unsigned innermost;
  bool reduces;
  SmallVector<Access> access;
  /// Per operand: the step of a Strided one's last index, else 1.
  SmallVector<int64_t> strides;
  SmallVector<Reduction> reductions;
  int64_t width;
  /// Body ops whose operands the innermost loop changes nowhere (a
  /// gather's index arithmetic, loads at such indices): computed once per
  /// row as scalars, before its pieces, and broadcast where a vector op
  /// uses them.
  llvm::DenseSet<Operation *> rowUniform;
};

bool isScalar(Type type) { return type.isIntOrIndexOrFloat(); }

/// Arithmetic that has a vector form down to LLVM: arith, and the math
/// ops with LLVM intrinsics (the others become libm calls, which the
/// pipeline only makes of scalars).
bool hasVectorForm(Operation *op) {
  if (isa<arith::ArithDialect>(op->getDialect()))
    return true;
  return isa<math::AbsFOp, math::AbsIOp, math::CeilOp, math::CopySignOp,
             math::CosOp, math::SinOp, math::ExpOp, math::Exp2Op, math::FloorOp,
             math::FmaOp, math::LogOp, math::Log10Op, math::Log2Op,
             math::PowFOp, math::RoundEvenOp, math::RoundOp, math::RsqrtOp,
             math::SqrtOp, math::TruncOp, math::CountLeadingZerosOp,
             math::CountTrailingZerosOp, math::CtPopOp>(op);
}

std::optional<Plan> planFor(linalg::GenericOp op, unsigned vectorBits) {
  if (!op.hasPureBufferSemantics() || op.getNumLoops() == 0 ||
      op.getNumDpsInits() == 0)
    return std::nullopt;
  Plan plan;
  plan.op = op;
  plan.innermost = op.getNumLoops() - 1;
  plan.reduces =
      op.getIteratorTypesArray().back() == utils::IteratorType::reduction;
  AffineExpr inner = getAffineDimExpr(plan.innermost, op.getContext());
  unsigned widestBits = 8, computedBits = 8;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    // Booleans are bytes in memory but bits in a vector register: LLVM
    // would load and store vectors of i1 packed.
    if (!type || !isScalar(type.getElementType()) ||
        type.getElementType().isInteger(1))
      return std::nullopt;
    AffineMap map = op.getMatchingIndexingMap(&operand);
    bool walks = map.isFunctionOfDim(plan.innermost);
    if (!walks) {
      plan.access.push_back(Access::Invariant);
      plan.strides.push_back(1);
      continue;
    }
    // The vectors' width follows the widest element read or written along
    // the innermost loop (a gather's i64 index, read once per row, does not
    // halve the f32 rows). Wider values computed in between take several
    // registers each, up to four: an f32 program's f64 steps (the
    // quantized products' exact epilogues) do not halve its rows, whose
    // long chains of dependent operations need the independent work.
    if (!type.getElementType().isIndex())
      widestBits =
          std::max(widestBits, type.getElementType().getIntOrFloatBitWidth());
    // Walked: only in the last index, over contiguous memory; by itself,
    // or (inputs) times a small constant plus what other loops give.
    if (llvm::any_of(
            map.getResults().drop_back(),
            [&](AffineExpr e) { return e.isFunctionOfDim(plan.innermost); }) ||
        !innermostContiguous(operand.get().getType()))
      return std::nullopt;
    AffineExpr last = map.getResults().back();
    int64_t stride = 1;
    if (last != inner) {
      stride = 0;
      for (int64_t s = 2; s <= kMaxStride && op.isDpsInput(&operand); ++s)
        if (!simplifyAffineExpr(last - inner * s, map.getNumDims(), 0)
                 .isFunctionOfDim(plan.innermost)) {
          stride = s;
          break;
        }
      if (!stride)
        return std::nullopt;
    }
    // An output written along a reduction loop is not a reduction.
    if (plan.reduces && op.isDpsInit(&operand))
      return std::nullopt;
    plan.access.push_back(stride == 1 ? Access::Contiguous : Access::Strided);
    plan.strides.push_back(stride);
  }
  // Nothing walks the innermost loop: vectors would only repeat values.
  if (!llvm::is_contained(plan.access, Access::Contiguous) &&
      !llvm::is_contained(plan.access, Access::Strided))
    return std::nullopt;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    // An input that is an output's buffer is read at the elements written
    // only (the rows' loads are hoisted above the writes).
    for (OpOperand *input : op.getDpsInputOperands())
      if (input->get() == init.get() &&
          op.getMatchingIndexingMap(input) != op.getMatchingIndexingMap(&init))
        return std::nullopt;
  }
  // The body: arithmetic on scalars that maps elementwise onto vectors,
  // constants, loop indices, and loads from buffers defined outside (a
  // gather's table) at indices the innermost loop does not change but for
  // the last, which is that loop's index (a contiguous row) or also does
  // not change. Values that vary along the innermost loop are tracked to
  // tell.
  Block *body = op.getBody();
  llvm::DenseSet<Value> varying;
  for (OpOperand &operand : op->getOpOperands())
    if (plan.access[operand.getOperandNumber()] != Access::Invariant)
      varying.insert(op.getMatchingBlockArgument(&operand));
  // Values known before a row's pieces: from above the op, the block
  // arguments of inputs read once per row (not a reduction's outputs,
  // which the pieces carry), outer loop indices, and ops of those.
  auto knownPerRow = [&](Value v) {
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg)
      return v.getParentBlock() != body ||
             plan.rowUniform.contains(v.getDefiningOp());
    if (arg.getOwner() != body)
      return true;
    OpOperand *operand = op.getMatchingOpOperand(arg);
    return plan.access[operand->getOperandNumber()] == Access::Invariant &&
           !(plan.reduces && op.isDpsInit(operand));
  };
  for (Operation &inner : body->without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
      if (index.getDim() == plan.innermost)
        varying.insert(index.getResult());
      else
        plan.rowUniform.insert(&inner);
      continue;
    }
    bool anyVarying = llvm::any_of(
        inner.getOperands(), [&](Value v) { return varying.contains(v); });
    if (anyVarying)
      varying.insert(inner.getResults().begin(), inner.getResults().end());
    if (isa<arith::ConstantOp>(inner))
      continue;
    // Besides scalars, a row's ops may make memrefs: bufferization
    // rewrites the index arithmetic of a gather whose indices were
    // reshaped with run-time sizes into memref.extract_strided_metadata
    // and affine.(de)linearize_index of the buffer's sizes. Those memrefs
    // are only ever read per row (a vector op or a load inside the body
    // from one is refused below).
    bool perRow = inner.getNumRegions() == 0 && inner.getNumResults() > 0 &&
                  llvm::all_of(inner.getResultTypes(),
                               [](Type type) {
                                 return isScalar(type) || isa<MemRefType>(type);
                               }) &&
                  llvm::all_of(inner.getOperands(), knownPerRow);
    if (perRow && isPure(&inner)) {
      plan.rowUniform.insert(&inner);
      continue;
    }
    if (auto load = dyn_cast<memref::LoadOp>(inner)) {
      Value table = load.getMemRef();
      // Not a buffer the op writes: its rows would be read ahead of the
      // writes.
      if (table.getParentBlock() == body || !isScalar(load.getType()) ||
          load.getType().isInteger(1) ||
          llvm::is_contained(op.getDpsInits(), table))
        return std::nullopt;
      ValueRange indices = load.getIndices();
      if (indices.empty() || llvm::any_of(indices.drop_back(), [&](Value v) {
            return varying.contains(v);
          }))
        return std::nullopt;
      if (varying.contains(indices.back())) {
        auto index = indices.back().getDefiningOp<linalg::IndexOp>();
        if (!index || index.getDim() != plan.innermost ||
            !innermostContiguous(table.getType()))
          return std::nullopt;
      }
      if (!load.getType().isIndex() && varying.contains(load.getResult()))
        widestBits =
            std::max(widestBits, load.getType().getIntOrFloatBitWidth());
      if (perRow)
        plan.rowUniform.insert(&inner);
      continue;
    }
    if (!OpTrait::hasElementwiseMappableTraits(&inner) ||
        !hasVectorForm(&inner) || inner.getNumRegions() != 0 ||
        !llvm::all_of(inner.getResultTypes(), isScalar) ||
        !llvm::all_of(inner.getOperandTypes(), isScalar))
      return std::nullopt;
    if (anyVarying)
      for (Type type : inner.getResultTypes())
        if (!type.isIndex())
          computedBits = std::max(computedBits, type.getIntOrFloatBitWidth());
  }
  if (!plan.reduces) {
    // An output the parallel innermost loop does not walk (elementwise
    // fusion keeps a broadcast producer's own result this way) is the
    // same value at every step: it must not vary along the loop. It is
    // computed from the row's values and stored once per piece.
    auto yield = cast<linalg::YieldOp>(body->getTerminator());
    for (OpOperand &init : op.getDpsInitsMutable())
      if (plan.access[init.getOperandNumber()] == Access::Invariant &&
          varying.contains(
              yield.getOperand(init.getOperandNumber() - op.getNumDpsInputs())))
        return std::nullopt;
  }
  if (plan.reduces) {
    // Each output: yield(combiner(partial, out)), the output's argument
    // used by the combiner alone.
    auto yield = cast<linalg::YieldOp>(body->getTerminator());
    for (OpOperand &init : op.getDpsInitsMutable()) {
      BlockArgument out = op.getMatchingBlockArgument(&init);
      Value yielded =
          yield.getOperand(init.getOperandNumber() - op.getNumDpsInputs());
      Operation *combiner = yielded.getDefiningOp();
      if (!combiner || combiner->getBlock() != body ||
          combiner->getNumOperands() != 2 || !out.hasOneUse() ||
          out.getUses().begin()->getOwner() != combiner)
        return std::nullopt;
      std::optional<vector::CombiningKind> kind = combiningKind(combiner);
      if (!kind || !combiner->hasOneUse())
        return std::nullopt;
      Value partial = combiner->getOperand(0) == out ? combiner->getOperand(1)
                                                     : combiner->getOperand(0);
      if (partial == out)
        return std::nullopt;
      plan.reductions.push_back({combiner, *kind, partial});
    }
  }
  // At most four registers for the widest value computed.
  plan.width = std::max<int64_t>(
      1, std::min(vectorBits / widestBits, 4 * vectorBits / computedBits));
  return plan;
}

/// The neutral element of `kind` for `type` (a vector's element type).
TypedAttr neutralElement(vector::CombiningKind kind, Type type) {
  using Kind = vector::CombiningKind;
  if (auto floatType = dyn_cast<FloatType>(type)) {
    const llvm::fltSemantics &semantics = floatType.getFloatSemantics();
    switch (kind) {
    case Kind::ADD:
      return FloatAttr::get(type, 0.0);
    case Kind::MUL:
      return FloatAttr::get(type, 1.0);
    case Kind::MAXIMUMF:
    case Kind::MAXNUMF:
      return FloatAttr::get(
          type, llvm::APFloat::getInf(semantics, /*Negative=*/true));
    case Kind::MINIMUMF:
    case Kind::MINNUMF:
      return FloatAttr::get(type, llvm::APFloat::getInf(semantics));
    default:
      return {};
    }
  }
  unsigned bits = type.getIntOrFloatBitWidth();
  switch (kind) {
  case Kind::ADD:
  case Kind::OR:
  case Kind::XOR:
  case Kind::MAXUI:
    return IntegerAttr::get(type, 0);
  case Kind::MUL:
    return IntegerAttr::get(type, 1);
  case Kind::AND:
  case Kind::MINUI:
    return IntegerAttr::get(type, llvm::APInt::getAllOnes(bits));
  case Kind::MAXSI:
    return IntegerAttr::get(type, llvm::APInt::getSignedMinValue(bits));
  case Kind::MINSI:
    return IntegerAttr::get(type, llvm::APInt::getSignedMaxValue(bits));
  default:
    return {};
  }
}

/// Emits one plan: loops over the outer loops, vector pieces of the
/// innermost.
class Emitter {
public:
  Emitter(const Plan &plan, OpBuilder &b)
      : plan(plan), op(plan.op), loc(op.getLoc()), b(b), ivs(op.getNumLoops()) {
  }

  void emit() {
    ranges = cast<linalg::LinalgOp>(op.getOperation()).createLoopRanges(b, loc);
    outerLoops(0);
  }

private:
  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }

  void outerLoops(unsigned dim) {
    if (dim == plan.innermost)
      return innermostLoop();
    Value size = getValueOrCreateConstantIndexOp(b, loc, ranges[dim].size);
    auto loop = scf::ForOp::create(b, loc, index(0), size, index(1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    ivs[dim] = loop.getInductionVar();
    outerLoops(dim + 1);
  }

  /// Pieces of `width` elements from `lo` to `hi` (multiples of it).
  void pieces(Value lo, Value hi, int64_t width, bool oneStep) {
    if (oneStep) {
      ivs[plan.innermost] = lo;
      piece(width);
      return;
    }
    auto loop = scf::ForOp::create(b, loc, lo, hi, index(width), accumulators);
    OpBuilder::InsertionGuard guard(b);
    ivs[plan.innermost] = loop.getInductionVar();
    if (accumulators.empty()) {
      b.setInsertionPoint(loop.getBody()->getTerminator());
      piece(width);
      return;
    }
    b.setInsertionPointToStart(loop.getBody());
    accumulators.assign(loop.getRegionIterArgs().begin(),
                        loop.getRegionIterArgs().end());
    piece(width);
    scf::YieldOp::create(b, loc, accumulators);
    b.setInsertionPointAfter(loop);
    accumulators.assign(loop.getResults().begin(), loop.getResults().end());
  }

  void innermostLoop() {
    // Operands the innermost loop does not walk: one load per row, before
    // its pieces (an index into them may use any value of the innermost
    // loop's variable).
    ivs[plan.innermost] = index(0);
    invariantScalars.clear();
    for (OpOperand &operand : op->getOpOperands()) {
      BlockArgument arg = op.getMatchingBlockArgument(&operand);
      if (plan.access[operand.getOperandNumber()] != Access::Invariant ||
          arg.use_empty() || (plan.reduces && op.isDpsInit(&operand)))
        continue;
      invariantScalars[operand.getOperandNumber()] = memref::LoadOp::create(
          b, loc, operand.get(), operandIndices(&operand));
    }
    rowScalars();
    OpFoldResult size = ranges[plan.innermost].size;
    std::optional<int64_t> staticSize = getConstantIntValue(size);
    // Reductions: one vector accumulator per output, full pieces only;
    // the remainder is added after the horizontal reduction.
    accumulators.clear();
    if (plan.reduces)
      for (const Reduction &r : plan.reductions) {
        Type element = r.partial.getType();
        auto type = VectorType::get({plan.width}, element);
        accumulators.push_back(arith::ConstantOp::create(
            b, loc, type,
            SplatElementsAttr::get(type, neutralElement(r.kind, element))));
      }
    Value full;
    if (staticSize) {
      int64_t fullSize = *staticSize / plan.width * plan.width;
      if (fullSize > 0)
        pieces(index(0), index(fullSize), plan.width, fullSize == plan.width);
      full = index(fullSize);
      if (plan.reduces)
        reduceAccumulators();
      // The remainder as halving pieces.
      int64_t start = fullSize;
      for (int64_t w = plan.width / 2; w >= 1; w /= 2) {
        int64_t end = start + (*staticSize - start) / w * w;
        if (end > start)
          pieces(index(start), index(end), w, end - start == w);
        start = end;
      }
    } else {
      Value n = getValueOrCreateConstantIndexOp(b, loc, size);
      Value width = index(plan.width);
      full = arith::MulIOp::create(
          b, loc, arith::DivUIOp::create(b, loc, n, width), width);
      pieces(index(0), full, plan.width, false);
      if (plan.reduces)
        reduceAccumulators();
      pieces(full, n, 1, false);
    }
    if (plan.reduces) {
      ivs[plan.innermost] = index(0);
      storeReductions();
    }
  }

  /// The body's row-uniform ops as scalars, once per row: outer loop
  /// indices are the loops' variables, inputs read once per row their
  /// loaded scalars.
  void rowScalars() {
    perRow.clear();
    for (auto [number, scalar] : invariantScalars)
      perRow.map(op.getMatchingBlockArgument(&op->getOpOperand(number)),
                 scalar);
    for (Operation &inner : op.getBody()->without_terminator()) {
      if (!plan.rowUniform.contains(&inner))
        continue;
      if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
        perRow.map(index.getResult(), ivs[index.getDim()]);
        continue;
      }
      b.clone(inner, perRow);
    }
  }

  /// The vector accumulators reduced to scalars; the remainder pieces
  /// combine into those.
  void reduceAccumulators() {
    for (auto [i, r] : llvm::enumerate(plan.reductions)) {
      Value scalar =
          vector::ReductionOp::create(b, loc, r.kind, accumulators[i]);
      // Carried as a one-element vector, like the remainder's pieces.
      accumulators[i] = vector::BroadcastOp::create(
          b, loc, VectorType::get({1}, scalar.getType()), scalar);
    }
  }

  /// out = combiner(partial sum, out) for each output.
  void storeReductions() {
    for (auto [i, r] : llvm::enumerate(plan.reductions)) {
      OpOperand *init = op.getDpsInitOperand(i);
      SmallVector<Value> indices = operandIndices(init);
      Value old = memref::LoadOp::create(b, loc, init->get(), indices);
      Value partial = vector::ExtractOp::create(b, loc, accumulators[i],
                                                ArrayRef<int64_t>{0});
      IRMapping mapping;
      BlockArgument out = op.getMatchingBlockArgument(init);
      Value first = r.combiner->getOperand(0) == out ? old : partial;
      Value second = r.combiner->getOperand(0) == out ? partial : old;
      OperationState state(loc, r.combiner->getName());
      state.addOperands({first, second});
      state.addTypes(old.getType());
      state.addAttributes(r.combiner->getAttrs());
      Value combined = b.create(state)->getResult(0);
      memref::StoreOp::create(b, loc, combined, init->get(), indices);
    }
  }

  /// A value the innermost loop does not change, as a scalar: itself
  /// when defined outside the body, its row scalar when row-uniform, else
  /// lane 0 of its vector.
  Value uniformScalar(IRMapping &mapping, Value value) {
    Value mapped = mapping.lookupOrNull(value);
    if (!mapped)
      return perRow.lookupOrDefault(value);
    return vector::ExtractOp::create(b, loc, mapped, ArrayRef<int64_t>{0});
  }

  SmallVector<Value> operandIndices(OpOperand *operand) {
    AffineMap map = op.getMatchingIndexingMap(operand);
    SmallVector<Value> indices;
    for (unsigned i = 0; i < map.getNumResults(); ++i)
      indices.push_back(
          affine::AffineApplyOp::create(b, loc, map.getSubMap({i}), ivs));
    return indices;
  }

  /// One piece of `width` elements at ivs[innermost].
  void piece(int64_t width) {
    Block *body = op.getBody();
    IRMapping mapping;
    auto vectorOf = [&](Type type) { return VectorType::get({width}, type); };
    // Reductions' pieces narrower than the accumulators (remainders)
    // are reduced right away and combined into the running scalars.
    for (OpOperand &operand : op->getOpOperands()) {
      BlockArgument arg = op.getMatchingBlockArgument(&operand);
      if (arg.use_empty() || (plan.reduces && op.isDpsInit(&operand)))
        continue;
      Type element = arg.getType();
      Value value;
      if (plan.access[operand.getOperandNumber()] != Access::Invariant) {
        SmallVector<Value> indices = operandIndices(&operand);
        int64_t stride = plan.strides[operand.getOperandNumber()];
        if (stride == 1) {
          AffineMap minor =
              AffineMap::getMinorIdentityMap(indices.size(), 1, b.getContext());
          value = vector::TransferReadOp::create(
              b, loc, vectorOf(element), operand.get(), indices,
              /*padding=*/std::nullopt, minor, ArrayRef<bool>{true});
        } else {
          value = readStridedRow(b, loc, operand.get(), indices, width, stride);
        }
      } else {
        value = vector::BroadcastOp::create(
            b, loc, vectorOf(element),
            invariantScalars.lookup(operand.getOperandNumber()));
      }
      mapping.map(arg, value);
    }
    for (Operation &inner : body->without_terminator()) {
      // Computed before the row's pieces; broadcast where used.
      if (plan.rowUniform.contains(&inner))
        continue;
      if (auto constant = dyn_cast<arith::ConstantOp>(inner)) {
        auto type = vectorOf(constant.getType());
        mapping.map(constant.getResult(),
                    arith::ConstantOp::create(
                        b, loc, type,
                        SplatElementsAttr::get(type, constant.getValue())));
        continue;
      }
      if (auto load = dyn_cast<memref::LoadOp>(inner)) {
        // A row of the table (last index the innermost loop's) or one
        // element for every lane.
        SmallVector<Value> indices;
        ValueRange scalarIndices = load.getIndices();
        auto row = scalarIndices.back().getDefiningOp<linalg::IndexOp>();
        bool walksRow = row && row.getDim() == plan.innermost;
        for (Value index : walksRow ? scalarIndices.drop_back() : scalarIndices)
          indices.push_back(uniformScalar(mapping, index));
        Value value;
        if (walksRow) {
          indices.push_back(ivs[plan.innermost]);
          AffineMap minor =
              AffineMap::getMinorIdentityMap(indices.size(), 1, b.getContext());
          value = vector::TransferReadOp::create(
              b, loc, vectorOf(load.getType()), load.getMemRef(), indices,
              /*padding=*/std::nullopt, minor, ArrayRef<bool>{true});
        } else {
          value = vector::BroadcastOp::create(
              b, loc, vectorOf(load.getType()),
              memref::LoadOp::create(b, loc, load.getMemRef(), indices));
        }
        mapping.map(load.getResult(), value);
        continue;
      }
      if (auto indexOp = dyn_cast<linalg::IndexOp>(inner)) {
        Value base = ivs[indexOp.getDim()];
        Value vector = vector::BroadcastOp::create(
            b, loc, vectorOf(b.getIndexType()), base);
        if (indexOp.getDim() == plan.innermost)
          vector = arith::AddIOp::create(
              b, loc, vector,
              vector::StepOp::create(b, loc, vectorOf(b.getIndexType())));
        mapping.map(indexOp.getResult(), vector);
        continue;
      }
      if (plan.reduces &&
          llvm::any_of(plan.reductions, [&](const Reduction &r) {
            return r.combiner == &inner;
          }))
        continue;
      SmallVector<Value> operands;
      for (Value operand : inner.getOperands()) {
        if (Value mapped = mapping.lookupOrNull(operand)) {
          operands.push_back(mapped);
          continue;
        }
        // Defined above the op or row-uniform: the same scalar in every
        // lane.
        operands.push_back(
            vector::BroadcastOp::create(b, loc, vectorOf(operand.getType()),
                                        perRow.lookupOrDefault(operand)));
      }
      OperationState state(loc, inner.getName());
      state.addOperands(operands);
      for (Type type : inner.getResultTypes())
        state.addTypes(vectorOf(type));
      state.addAttributes(inner.getAttrs());
      Operation *vectorOp = b.create(state);
      mapping.map(inner.getResults(), vectorOp->getResults());
    }
    auto valueOf = [&](Value scalar) -> Value {
      if (Value mapped = mapping.lookupOrNull(scalar))
        return mapped;
      return vector::BroadcastOp::create(b, loc, vectorOf(scalar.getType()),
                                         perRow.lookupOrDefault(scalar));
    };
    if (plan.reduces) {
      for (auto [i, r] : llvm::enumerate(plan.reductions)) {
        Value partial = valueOf(r.partial);
        auto accumulatorType = cast<VectorType>(accumulators[i].getType());
        if (accumulatorType.getDimSize(0) != width) {
          // A remainder piece: its own sum, into the scalar carried as
          // vector<1>.
          Value scalar = vector::ReductionOp::create(b, loc, r.kind, partial);
          partial =
              vector::BroadcastOp::create(b, loc, accumulatorType, scalar);
        }
        OperationState state(loc, r.combiner->getName());
        state.addOperands({accumulators[i], partial});
        state.addTypes(accumulatorType);
        state.addAttributes(r.combiner->getAttrs());
        accumulators[i] = b.create(state)->getResult(0);
      }
      return;
    }
    auto yield = cast<linalg::YieldOp>(body->getTerminator());
    for (OpOperand &init : op.getDpsInitsMutable()) {
      Value yielded =
          yield.getOperand(init.getOperandNumber() - op.getNumDpsInputs());
      if (plan.access[init.getOperandNumber()] == Access::Invariant) {
        memref::StoreOp::create(b, loc, uniformScalar(mapping, yielded),
                                init.get(), operandIndices(&init));
        continue;
      }
      vector::TransferWriteOp::create(b, loc, valueOf(yielded), init.get(),
                                      operandIndices(&init),
                                      ArrayRef<bool>{true});
    }
  }

  const Plan &plan;
  linalg::GenericOp op;
  Location loc;
  OpBuilder &b;
  SmallVector<Range> ranges;
  SmallVector<Value> ivs;
  SmallVector<Value> accumulators;
  /// Per operand number: the scalar of an operand the innermost loop does
  /// not walk, loaded once per row.
  llvm::DenseMap<unsigned, Value> invariantScalars;
  /// The row-uniform body values of the current row, as scalars.
  IRMapping perRow;
};

/// Where `map` reads the loops [first, numLoops): the position of its
/// result `first`, those loops being consecutive results in order; -1 when
/// it reads none of them; nullopt when it reads them otherwise.
std::optional<int64_t> trailingLoopsPosition(AffineMap map, unsigned first,
                                             unsigned numLoops) {
  std::optional<unsigned> position =
      map.getResultPosition(getAffineDimExpr(first, map.getContext()));
  if (!position)
    return llvm::none_of(map.getResults(),
                         [&](AffineExpr e) {
                           auto dim = dyn_cast<AffineDimExpr>(e);
                           return dim && dim.getPosition() >= first;
                         })
               ? std::optional<int64_t>(-1)
               : std::nullopt;
  for (unsigned d = first; d < numLoops; ++d) {
    unsigned r = *position + d - first;
    if (r >= map.getNumResults() ||
        map.getResult(r) != getAffineDimExpr(d, map.getContext()))
      return std::nullopt;
  }
  // Not read again elsewhere.
  for (auto [r, e] : llvm::enumerate(map.getResults())) {
    auto dim = dyn_cast<AffineDimExpr>(e);
    if (dim && dim.getPosition() >= first &&
        (r < *position || r >= *position + numLoops - first))
      return std::nullopt;
  }
  return *position;
}

/// The memref reassociation that merges `count` results of a map from
/// `first` and keeps the others.
SmallVector<ReassociationIndices> mergedResults(unsigned numResults,
                                                int64_t first, int64_t count) {
  SmallVector<ReassociationIndices> groups;
  for (int64_t r = 0; r < numResults; ++r) {
    if (r > first && r < first + count) {
      groups.back().push_back(r);
      continue;
    }
    groups.push_back({r});
  }
  return groups;
}

/// An elementwise op whose rows are shorter than a vector (a CNN's deep
/// layers: rows of 2 to 8 of a 2x2 to 8x8 feature map) is vectorized along
/// its innermost loop only, a few lanes wide. Its trailing loops are
/// merged into one instead, as far as every operand walks them together
/// over contiguous memory (a per-channel scale that reads none of them
/// does not stop the merge): a [1, C, 4, 4] SiLU becomes [1, C, 16], one
/// vector per channel (efficientnet_b0: 296 -> 251 us per run). Done here,
/// on the ops as the earlier passes left them, so that the library
/// convolutions' epilogue matching (loom-cpu-library-convolutions) still
/// sees the program's shapes.
void mergeShortRows(RewriterBase &rewriter, linalg::GenericOp op,
                    unsigned vectorBits) {
  unsigned numLoops = op.getNumLoops();
  if (!op.hasPureBufferSemantics() || numLoops < 2 ||
      op.getNumReductionLoops() != 0 ||
      !op.getBody()->getOps<linalg::IndexOp>().empty())
    return;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return;
  unsigned widestBits = 8;
  for (Value operand : op->getOperands()) {
    auto type = dyn_cast<MemRefType>(operand.getType());
    if (!type || !type.getElementType().isIntOrFloat())
      return;
    widestBits =
        std::max(widestBits, type.getElementType().getIntOrFloatBitWidth());
  }
  int64_t width = std::max<int64_t>(1, vectorBits / widestBits);
  if (ranges.back() >= width)
    return;
  // Windows and other index arithmetic (d1 + d4) are not rows; a
  // broadcast operand's constant indices ((d1, 0, 0)) are fine.
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (!llvm::all_of(maps, [](AffineMap map) {
        return map.isProjectedPermutation(/*allowZeroInResults=*/true);
      }))
    return;
  // Whether the loops [first, numLoops) can be one: every operand reads
  // them as consecutive results, in order, of a memref contiguous there,
  // or reads none of them.
  auto mergeable = [&](unsigned first) {
    for (OpOperand &operand : op->getOpOperands()) {
      AffineMap map = maps[operand.getOperandNumber()];
      std::optional<int64_t> position =
          trailingLoopsPosition(map, first, numLoops);
      if (!position)
        return false;
      if (*position >= 0 &&
          !memref::CollapseShapeOp::isGuaranteedCollapsible(
              cast<MemRefType>(operand.get().getType()),
              mergedResults(map.getNumResults(), *position, numLoops - first)))
        return false;
    }
    return true;
  };
  unsigned first = numLoops - 1;
  while (first > 0 && mergeable(first - 1))
    --first;
  if (first == numLoops - 1)
    return;
  // The merged op: loops [0, first] with the last the merged ones, each
  // operand collapsed where it reads them.
  MLIRContext *ctx = op.getContext();
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  SmallVector<Value> operands;
  SmallVector<AffineMap> mergedMaps;
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = maps[operand.getOperandNumber()];
    int64_t position = *trailingLoopsPosition(map, first, numLoops);
    SmallVector<AffineExpr> results;
    for (auto [r, e] : llvm::enumerate(map.getResults())) {
      if (position >= 0 && int64_t(r) > position &&
          int64_t(r) < position + numLoops - first)
        continue;
      results.push_back(e);
    }
    mergedMaps.push_back(AffineMap::get(first + 1, 0, results, ctx));
    Value value = operand.get();
    if (position >= 0)
      value = memref::CollapseShapeOp::create(
          rewriter, loc, value,
          mergedResults(map.getNumResults(), position, numLoops - first));
    operands.push_back(value);
  }
  unsigned numInputs = op.getNumDpsInputs();
  auto merged = linalg::GenericOp::create(
      rewriter, loc, TypeRange{},
      ArrayRef<Value>(operands).take_front(numInputs),
      ArrayRef<Value>(operands).drop_front(numInputs), mergedMaps,
      SmallVector<utils::IteratorType>(first + 1,
                                       utils::IteratorType::parallel));
  rewriter.inlineRegionBefore(op.getRegion(), merged.getRegion(),
                              merged.getRegion().end());
  rewriter.eraseOp(op);
}

class LoomCPUVectorizeElementwisePass
    : public impl::LoomCPUVectorizeElementwisePassBase<
          LoomCPUVectorizeElementwisePass> {
public:
  using LoomCPUVectorizeElementwisePassBase::
      LoomCPUVectorizeElementwisePassBase;

  void runOnOperation() override {
    unsigned bits =
        vectorBits ? unsigned(vectorBits) : hostVectorRegisters().first;
    IRRewriter rewriter(&getContext());
    SmallVector<linalg::GenericOp> generics;
    getOperation().walk([&](linalg::GenericOp op) { generics.push_back(op); });
    for (linalg::GenericOp op : generics)
      mergeShortRows(rewriter, op, bits);
    SmallVector<Plan> plans;
    getOperation().walk([&](linalg::GenericOp op) {
      if (std::optional<Plan> plan = planFor(op, bits))
        plans.push_back(*plan);
    });
    for (const Plan &plan : plans) {
      rewriter.setInsertionPoint(plan.op);
      Emitter(plan, rewriter).emit();
      rewriter.eraseOp(plan.op);
    }
  }
};

} // namespace
} // namespace loom::cpu
