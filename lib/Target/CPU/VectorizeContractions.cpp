//===- VectorizeContractions.cpp - Register-tiled contractions on the CPU -===//
//
// The schedule (measured in TOOLCHAIN.md to reach oneDNN's speed on one
// core): register tiles of 8 rows x 2 vector registers of columns x 1 step
// of K, K innermost; full tiles and static remainders; vectorization into
// vector.contract; memref alias folding and CSE, then hoisting of the
// accumulator transfers out of the K loops; contractions lowered to outer
// products.
//
//===----------------------------------------------------------------------===//

#include "loom/Target/CPU/Passes.h"

#include "HostVectors.h"

#include "mlir/Dialect/Linalg/Transforms/Hoisting.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace loom::cpu {
#define GEN_PASS_DEF_LOOMCPUVECTORIZECONTRACTIONSPASS
#include "loom/Target/CPU/Passes.h.inc"
} // namespace loom::cpu

using namespace mlir;

namespace loom::cpu {
namespace {

enum class Role { Batch, M, N, K };

/// A contraction C += A * B on buffers, and the loops its register tile
/// spans: `mv` (rows), `nv` (the vectorized columns, innermost in B and C)
/// and `kv` (the reduction step).
struct Contraction {
  linalg::GenericOp op;
  SmallVector<int64_t> ranges;
  SmallVector<Role> roles;
  SmallVector<AffineMap> maps; // A, B, C
  unsigned mv = 0, nv = 0, kv = 0;
};

/// yield(out + in0 * in1), in any operand order: floats, or integers (the
/// quantized contractions' exact i32 sums).
template <typename AddOp, typename MulOp>
bool isMultiplyAccumulateOf(linalg::GenericOp op) {
  Block *body = op.getBody();
  if (body->getNumArguments() != 3 ||
      !llvm::hasNItems(body->without_terminator(), 2))
    return false;
  auto add = body->getTerminator()->getOperand(0).getDefiningOp<AddOp>();
  if (!add)
    return false;
  Value acc = body->getArgument(2);
  Value product = add.getLhs() == acc   ? add.getRhs()
                  : add.getRhs() == acc ? add.getLhs()
                                        : Value();
  auto mul = product ? product.getDefiningOp<MulOp>() : nullptr;
  if (!mul)
    return false;
  Value x = body->getArgument(0), y = body->getArgument(1);
  return (mul.getLhs() == x && mul.getRhs() == y) ||
         (mul.getLhs() == y && mul.getRhs() == x);
}

bool isMultiplyAccumulate(linalg::GenericOp op) {
  return isMultiplyAccumulateOf<arith::AddFOp, arith::MulFOp>(op) ||
         isMultiplyAccumulateOf<arith::AddIOp, arith::MulIOp>(op);
}

bool innermostContiguous(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref)
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(memref.getStridesAndOffset(strides, offset)))
    return false;
  return strides.empty() || strides.back() == 1;
}

/// The buffer `value` views: through subviews, reshapes and casts, up to
/// an allocation, a function argument, or a `memref.view` (the memory
/// plan's views of its arena are disjoint while they live).
Value rootBuffer(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (isa<memref::ViewOp>(def))
      break;
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      break;
    value = view.getViewSource();
  }
  return value;
}

std::optional<Contraction> matchContraction(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1)
    return std::nullopt;
  Type element = getElementTypeOrSelf(op.getDpsInits()[0].getType());
  if (!element.isF32() && !element.isF64() && !element.isInteger(32))
    return std::nullopt;
  for (Value input : op.getDpsInputs())
    if (getElementTypeOrSelf(input.getType()) != element)
      return std::nullopt;
  if (!isMultiplyAccumulate(op))
    return std::nullopt;
  Contraction c;
  c.op = op;
  c.ranges = op.getStaticLoopRanges();
  if (llvm::any_of(c.ranges,
                   [](int64_t r) { return ShapedType::isDynamic(r) || r <= 0; }))
    return std::nullopt;
  c.maps = op.getIndexingMapsArray();
  unsigned numLoops = op.getNumLoops();
  SmallVector<std::array<bool, 3>> uses(numLoops, {false, false, false});
  for (auto [i, map] : llvm::enumerate(c.maps)) {
    for (AffineExpr expr : map.getResults()) {
      if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
        uses[dim.getPosition()][i] = true;
        continue;
      }
      auto cst = dyn_cast<AffineConstantExpr>(expr);
      if (!cst || cst.getValue() != 0)
        return std::nullopt;
    }
  }
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned d = 0; d < numLoops; ++d) {
    auto [inA, inB, inC] = uses[d];
    bool reduction = iterators[d] == utils::IteratorType::reduction;
    if (inC == reduction)
      return std::nullopt;
    if (inA && inB && inC)
      c.roles.push_back(Role::Batch);
    else if (inA && inC)
      c.roles.push_back(Role::M);
    else if (inB && inC)
      c.roles.push_back(Role::N);
    else if (inA && inB)
      c.roles.push_back(Role::K);
    else
      return std::nullopt;
  }
  auto lastDim = [](AffineMap map) -> std::optional<unsigned> {
    if (map.getNumResults() == 0)
      return std::nullopt;
    if (auto dim = dyn_cast<AffineDimExpr>(map.getResults().back()))
      return dim.getPosition();
    return std::nullopt;
  };
  std::optional<unsigned> nv = lastDim(c.maps[2]);
  if (!nv || c.roles[*nv] != Role::N || lastDim(c.maps[1]) != nv)
    return std::nullopt;
  c.nv = *nv;
  auto innermostOfRole = [&](AffineMap map,
                             Role role) -> std::optional<unsigned> {
    for (AffineExpr expr : llvm::reverse(map.getResults()))
      if (auto dim = dyn_cast<AffineDimExpr>(expr))
        if (c.roles[dim.getPosition()] == role)
          return dim.getPosition();
    return std::nullopt;
  };
  std::optional<unsigned> mv = innermostOfRole(c.maps[2], Role::M);
  std::optional<unsigned> kv = innermostOfRole(c.maps[0], Role::K);
  if (!mv || !kv)
    return std::nullopt;
  c.mv = *mv;
  c.kv = *kv;
  if (!innermostContiguous(op.getDpsInputs()[1].getType()) ||
      !innermostContiguous(op.getDpsInits()[0].getType()))
    return std::nullopt;
  // The accumulators live in registers across the K loop: C must not be
  // read through A or B.
  Value out = rootBuffer(op.getDpsInits()[0]);
  if (llvm::any_of(op.getDpsInputs(),
                   [&](Value in) { return rootBuffer(in) == out; }))
    return std::nullopt;
  return c;
}

/// Emits the tile loops of one contraction and, in their body, one
/// rank-reduced (m, n, k) generic per register tile.
class TileEmitter {
public:
  TileEmitter(Contraction c, int64_t mTile, int64_t nTile, int64_t blockBytes,
              int64_t parallelFlops, SmallVectorImpl<linalg::GenericOp> &tiles)
      : c(c), mTile(mTile), nTile(nTile), tiles(tiles),
        offsets(c.ranges.size()), sizes(c.ranges.size(), 1) {
    // One multiply and one add per point of the iteration space.
    int64_t flops = 2;
    for (int64_t range : c.ranges)
      flops =
          range > 0 && flops > INT64_MAX / range ? INT64_MAX : flops * range;
    parallelPending = parallelFlops > 0 && flops >= parallelFlops;
    MLIRContext *ctx = c.op.getContext();
    for (OpFoldResult &offset : offsets)
      offset = IntegerAttr::get(IndexType::get(ctx), 0);
    packOffsets = offsets;
    int64_t n = c.ranges[c.nv], k = c.ranges[c.kv], m = c.ranges[c.mv];
    unsigned bytes = elementType().getIntOrFloatBitWidth() / 8;
    // The cache tile: a panel of B of up to 8 register tiles of columns
    // by up to 256 steps of K, copied into a contiguous buffer once and
    // read by every row tile in turn (loop order n, k, m), when B is too
    // large to stay in cache and there are rows enough to reuse the panel.
    // The copy holds everything a tile reads of B when B's only reduction
    // dimension is kv.
    bool panelHoldsB = llvm::all_of(c.maps[1].getResults(), [&](AffineExpr e) {
      auto dim = dyn_cast<AffineDimExpr>(e);
      return !dim || c.roles[dim.getPosition()] != Role::K ||
             dim.getPosition() == c.kv;
    });
    if (n * k * bytes > blockBytes && m >= 4 * mTile && panelHoldsB) {
      nBlock = std::min(n, 8 * nTile);
      kBlock = std::min<int64_t>(k, 256);
      pack = true;
    }
  }

  void emit(OpBuilder &b) {
    memref::AllocOp shared;
    if (pack) {
      shared = allocPanel(b);
      packBuffer = shared;
    }
    emitOuter(b, 0);
    if (!pack)
      return;
    // A parallel loop around every panel copy has given each iteration
    // its own panel.
    if (shared->use_empty())
      shared->erase();
    else
      memref::DeallocOp::create(b, loc(), shared);
  }

private:
  Location loc() { return c.op.getLoc(); }
  Type elementType() {
    return getElementTypeOrSelf(c.op.getDpsInits()[0].getType());
  }
  int64_t nLength() { return nBlock ? nBlock : c.ranges[c.nv]; }
  int64_t kLength() { return kBlock ? kBlock : c.ranges[c.kv]; }

  /// Blocks of `block` over [0, total): full ones in a loop, then the
  /// remainder, each with its static length.
  void forBlocks(OpBuilder &b, int64_t total, int64_t block,
                 llvm::function_ref<void(OpBuilder &, Value, int64_t)> body,
                 bool parallel = true) {
    int64_t full = total / block * block;
    forRange(
        b, 0, full, block,
        [&](OpBuilder &b, Value base) { body(b, base, block); }, parallel);
    if (total > full)
      body(b, index(b, full), total - full);
  }

  memref::AllocOp allocPanel(OpBuilder &b) {
    auto type = MemRefType::get({kLength(), nLength()}, elementType());
    return memref::AllocOp::create(b, loc(), type, b.getI64IntegerAttr(64));
  }

  Value index(OpBuilder &b, int64_t value) {
    return arith::ConstantIndexOp::create(b, loc(), value);
  }

  /// base + iv, folding a zero base.
  OpFoldResult add(OpBuilder &b, OpFoldResult base, Value iv) {
    if (std::optional<int64_t> cst = getConstantIntValue(base))
      if (*cst == 0)
        return iv;
    return arith::AddIOp::create(b, loc(),
                                 getValueOrCreateConstantIndexOp(b, loc(), base),
                                 iv)
        .getResult();
  }

  /// for (iv = lo; iv < hi; iv += step) body(iv), with no loop for a
  /// single iteration. The first loop of two or more iterations whose
  /// iterations are independent (`parallel`) becomes an scf.parallel when
  /// the contraction is large enough (later lowered to an OpenMP
  /// work-sharing loop); only that one, so that the threads are forked
  /// once around as much work as possible.
  void forRange(OpBuilder &b, int64_t lo, int64_t hi, int64_t step,
                llvm::function_ref<void(OpBuilder &, Value)> body,
                bool parallel = true) {
    if (hi <= lo)
      return;
    if (hi - lo <= step) {
      body(b, index(b, lo));
      return;
    }
    if (parallel && parallelPending) {
      parallelPending = false;
      auto loop = scf::ParallelOp::create(b, loc(), ValueRange{index(b, lo)},
                                          ValueRange{index(b, hi)},
                                          ValueRange{index(b, step)});
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(loop.getBody()->getTerminator());
      // The panel of B is written inside the loop when the loop encloses
      // the copies: each iteration then needs its own.
      Value outerPanel = packBuffer;
      memref::AllocOp local;
      if (pack && !insidePanel) {
        local = allocPanel(b);
        packBuffer = local;
      }
      body(b, loop.getInductionVars()[0]);
      if (local)
        memref::DeallocOp::create(b, loc(), local);
      packBuffer = outerPanel;
      return;
    }
    auto loop = scf::ForOp::create(b, loc(), index(b, lo), index(b, hi),
                                   index(b, step));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    body(b, loop.getInductionVar());
  }

  /// Batch dimensions and the M and N dimensions the tile does not span,
  /// one step at a time, outermost.
  void emitOuter(OpBuilder &b, unsigned dim) {
    if (dim == c.ranges.size()) {
      emitBlocks(b);
      return;
    }
    bool outer = c.roles[dim] == Role::Batch ||
                 (c.roles[dim] == Role::M && dim != c.mv) ||
                 (c.roles[dim] == Role::N && dim != c.nv);
    if (!outer) {
      emitOuter(b, dim + 1);
      return;
    }
    forRange(b, 0, c.ranges[dim], 1, [&](OpBuilder &b, Value iv) {
      offsets[dim] = iv;
      emitOuter(b, dim + 1);
    });
  }

  void emitBlocks(OpBuilder &b) {
    forBlocks(b, c.ranges[c.nv], nLength(),
              [&](OpBuilder &b, Value nBase, int64_t nb) {
      forBlocks(b, c.ranges[c.kv], kLength(),
                [&](OpBuilder &b, Value kBase, int64_t kb) {
        if (pack) {
          // B's panel, copied once for every row tile to read.
          offsets[c.nv] = nBase;
          offsets[c.kv] = kBase;
          sizes[c.nv] = nb;
          sizes[c.kv] = kb;
          Value panel = view(b, c.op.getDpsInputs()[1], c.maps[1], offsets,
                             {c.kv, c.nv})
                            .first;
          Value target = packBuffer;
          if (nb != nLength() || kb != kLength())
            target = memref::SubViewOp::create(
                b, loc(), packBuffer, ArrayRef<int64_t>{0, 0},
                ArrayRef<int64_t>{kb, nb}, ArrayRef<int64_t>{1, 1});
          linalg::CopyOp::create(b, loc(), panel, target);
        }
        bool wasInside = insidePanel;
        insidePanel = true;
        emitRows(b, nBase, nb, kBase, kb);
        insidePanel = wasInside;
      }, /*parallel=*/false);
    });
  }

  void emitRows(OpBuilder &b, Value nBase, int64_t nLen, Value kBase,
                int64_t kLen) {
    int64_t m = c.ranges[c.mv];
    int64_t tileRows = std::min(mTile, m);
    int64_t full = m / tileRows * tileRows;
    forRange(b, 0, full, tileRows, [&](OpBuilder &b, Value m0) {
      offsets[c.mv] = m0;
      sizes[c.mv] = tileRows;
      emitColumns(b, nBase, nLen, kBase, kLen);
    });
    if (m > full) {
      offsets[c.mv] = index(b, full);
      sizes[c.mv] = m - full;
      emitColumns(b, nBase, nLen, kBase, kLen);
    }
  }

  /// Full tiles of nTile columns, then the remainder as power-of-two
  /// pieces (other vector widths are scalarized).
  void emitColumns(OpBuilder &b, Value nBase, int64_t nLen, Value kBase,
                   int64_t kLen) {
    int64_t start = 0;
    for (int64_t width = nTile; width >= 1; width /= 2) {
      int64_t end = start + (nLen - start) / width * width;
      forRange(b, start, end, width, [&](OpBuilder &b, Value n0) {
        offsets[c.nv] = add(b, nBase, n0);
        packOffsets[c.nv] = n0;
        sizes[c.nv] = width;
        emitReduction(b, 0, kBase, kLen);
      });
      start = end;
    }
  }

  /// The K dimensions other than kv, then kv innermost.
  void emitReduction(OpBuilder &b, unsigned dim, Value kBase, int64_t kLen) {
    if (dim == c.ranges.size()) {
      forRange(
          b, 0, kLen, 1,
          [&](OpBuilder &b, Value kk) {
            offsets[c.kv] = add(b, kBase, kk);
            packOffsets[c.kv] = kk;
            sizes[c.kv] = 1;
            emitTile(b);
          },
          /*parallel=*/false);
      return;
    }
    if (c.roles[dim] != Role::K || dim == c.kv) {
      emitReduction(b, dim + 1, kBase, kLen);
      return;
    }
    forRange(
        b, 0, c.ranges[dim], 1,
        [&](OpBuilder &b, Value iv) {
          offsets[dim] = iv;
          emitReduction(b, dim + 1, kBase, kLen);
        },
        /*parallel=*/false);
  }

  /// A view of `operand` (indexed through `map`) at `at` with the current
  /// sizes, keeping only the dimensions of `kept` (loop dimensions, in
  /// order of the tile's dimensions), and the view's indexing map in
  /// those dimensions.
  std::pair<Value, AffineMap> view(OpBuilder &b, Value operand, AffineMap map,
                                   ArrayRef<OpFoldResult> at,
                                   ArrayRef<unsigned> kept) {
    MLIRContext *ctx = b.getContext();
    auto type = cast<MemRefType>(operand.getType());
    SmallVector<OpFoldResult> offs, szs, strides;
    SmallVector<int64_t> keptShape;
    SmallVector<unsigned> keptPositions;
    SmallVector<AffineExpr> keptExprs;
    for (auto [pos, expr] : llvm::enumerate(map.getResults())) {
      strides.push_back(b.getIndexAttr(1));
      auto dim = dyn_cast<AffineDimExpr>(expr);
      if (!dim) {
        offs.push_back(b.getIndexAttr(0));
        szs.push_back(b.getIndexAttr(1));
        continue;
      }
      unsigned d = dim.getPosition();
      offs.push_back(at[d]);
      szs.push_back(b.getIndexAttr(sizes[d]));
      auto it = llvm::find(kept, d);
      if (it == kept.end())
        continue;
      keptShape.push_back(sizes[d]);
      keptPositions.push_back(pos);
      keptExprs.push_back(getAffineDimExpr(it - kept.begin(), ctx));
    }
    MemRefType full =
        memref::SubViewOp::inferResultType(type, offs, szs, strides);
    auto [fullStrides, offset] = full.getStridesAndOffset();
    SmallVector<int64_t> keptStrides;
    for (unsigned pos : keptPositions)
      keptStrides.push_back(fullStrides[pos]);
    auto reduced = MemRefType::get(
        keptShape, type.getElementType(),
        StridedLayoutAttr::get(ctx, offset, keptStrides),
        type.getMemorySpace());
    Value subview = memref::SubViewOp::create(b, loc(), reduced, operand,
                                              offs, szs, strides);
    return {subview, AffineMap::get(kept.size(), 0, keptExprs, ctx)};
  }

  void emitTile(OpBuilder &b) {
    SmallVector<unsigned> mnk{c.mv, c.nv, c.kv};
    auto [a, aMap] = view(b, c.op.getDpsInputs()[0], c.maps[0], offsets, mnk);
    Value bv;
    AffineMap bMap;
    if (pack) {
      MLIRContext *ctx = b.getContext();
      AffineMap panelMap = AffineMap::get(
          c.ranges.size(), 0,
          {getAffineDimExpr(c.kv, ctx), getAffineDimExpr(c.nv, ctx)}, ctx);
      std::tie(bv, bMap) = view(b, packBuffer, panelMap, packOffsets, mnk);
    } else {
      std::tie(bv, bMap) =
          view(b, c.op.getDpsInputs()[1], c.maps[1], offsets, mnk);
    }
    auto [cv, cMap] = view(b, c.op.getDpsInits()[0], c.maps[2], offsets, mnk);
    SmallVector<utils::IteratorType> iterators{utils::IteratorType::parallel,
                                               utils::IteratorType::parallel,
                                               utils::IteratorType::reduction};
    auto tile = linalg::GenericOp::create(
        b, loc(), TypeRange{}, ValueRange{a, bv}, ValueRange{cv},
        ArrayRef<AffineMap>{aMap, bMap, cMap}, iterators);
    IRMapping mapping;
    c.op.getRegion().cloneInto(&tile.getRegion(), mapping);
    tiles.push_back(tile);
  }

  Contraction c;
  int64_t mTile, nTile;
  int64_t nBlock = 0, kBlock = 0;
  bool pack = false;
  /// Whether the next loop of independent iterations is to be parallel.
  bool parallelPending = false;
  /// Whether the code being emitted runs after a panel copy, reading it.
  bool insidePanel = false;
  Value packBuffer;
  SmallVectorImpl<linalg::GenericOp> &tiles;
  SmallVector<OpFoldResult> offsets, packOffsets;
  SmallVector<int64_t> sizes;
};

class LoomCPUVectorizeContractionsPass
    : public impl::LoomCPUVectorizeContractionsPassBase<
          LoomCPUVectorizeContractionsPass> {
public:
  using LoomCPUVectorizeContractionsPassBase::
      LoomCPUVectorizeContractionsPassBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    MLIRContext *ctx = &getContext();
    auto [hostBits, hostRegisters] = hostVectorRegisters();
    unsigned bits = vectorBits ? unsigned(vectorBits) : hostBits;
    unsigned numRegisters = registers ? unsigned(registers) : hostRegisters;

    IRRewriter rewriter(ctx);
    // Named products (linalg.matmul, batch_matmul, ...) as generics.
    SmallVector<linalg::LinalgOp> named;
    func.walk([&](linalg::LinalgOp op) {
      if (isa<linalg::ContractionOpInterface>(op.getOperation()) &&
          !isa<linalg::GenericOp>(op))
        named.push_back(op);
    });
    for (linalg::LinalgOp op : named) {
      rewriter.setInsertionPoint(op);
      (void)linalg::generalizeNamedOp(rewriter, op);
    }

    SmallVector<Contraction> contractions;
    func.walk([&](linalg::GenericOp op) {
      if (std::optional<Contraction> c = matchContraction(op))
        contractions.push_back(*c);
    });
    if (contractions.empty())
      return;

    SmallVector<linalg::GenericOp> tiles;
    for (Contraction &c : contractions) {
      unsigned elementBits =
          getElementTypeOrSelf(c.op.getDpsInits()[0].getType())
              .getIntOrFloatBitWidth();
      // Two vector registers of columns; rows for half the registers less
      // a few for B's row and the broadcasts of A.
      int64_t nTile = 2 * bits / elementBits;
      int64_t mTile = std::clamp<int64_t>((numRegisters - 4) / 2, 1, 8);
      rewriter.setInsertionPoint(c.op);
      TileEmitter(c, mTile, nTile, blockBytes, parallelFlops, tiles)
          .emit(rewriter);
      rewriter.eraseOp(c.op);
    }

    for (linalg::GenericOp tile : tiles) {
      rewriter.setInsertionPoint(tile);
      FailureOr<linalg::VectorizationResult> result = linalg::vectorize(
          rewriter, tile, /*inputVectorSizes=*/{}, /*inputScalableVecDims=*/{},
          /*vectorizeNDExtract=*/false, /*flatten1DDepthwiseConv=*/false,
          /*assumeDynamicDimsMatchVecSizes=*/false,
          /*createNamedContraction=*/true);
      if (failed(result)) {
        tile.emitError("could not vectorize a contraction tile");
        return signalPassFailure();
      }
      rewriter.eraseOp(tile);
    }

    // Transfers on the tiles' views become transfers on the buffers
    // themselves, with common index arithmetic: only then can the
    // accumulator's read and write be seen to be the same, loop-invariant
    // access and hoisted out of the K loops.
    {
      RewritePatternSet patterns(ctx);
      // Broadcasting reads become a read and a vector.broadcast, which
      // folds into the contraction's indexing maps: a matrix-product
      // contraction over (m, n, k).
      vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
      vector::populateVectorReductionToContractPatterns(patterns);
      memref::populateFoldMemRefAliasOpPatterns(patterns);
      vector::TransferReadOp::getCanonicalizationPatterns(patterns, ctx);
      vector::TransferWriteOp::getCanonicalizationPatterns(patterns, ctx);
      // As upstream's fold-memref-alias-ops, whose patterns may report
      // progress on transfers of expand_shape views without changing them.
      (void)applyPatternsGreedily(func, std::move(patterns));
    }
    DominanceInfo dominance(func);
    eliminateCommonSubExpressions(rewriter, dominance, func);
    linalg::hoistRedundantVectorTransfers(func, /*verifyNonZeroTrip=*/true);

    if (!lowerContractions)
      return;
    RewritePatternSet patterns(ctx);
    // (convert-vector-to-llvm lowers the outer products to one FMA per
    // row.)
    vector::populateVectorContractLoweringPatterns(
        patterns, vector::VectorContractLowering::OuterProduct,
        /*benefit=*/1, /*disableOuterProductLowering=*/true);
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    if (failed(applyPatternsGreedily(func, std::move(patterns)))) {
      func.emitError("lowering the contractions did not converge");
      return signalPassFailure();
    }
  }
};

} // namespace
} // namespace loom::cpu
