//===- VectorizeContractions.cpp - Register-tiled contractions on the CPU -===//
//
// The schedule (measured in TOOLCHAIN.md to reach oneDNN's speed on one
// core): register tiles of 8 rows x 2 vector registers of columns x 1 step
// of K, K innermost; full tiles and static remainders (rows known only at
// run time: full tiles, then tiles of one row); vectorization into
// vector.contract; memref alias folding and CSE, then hoisting of the
// accumulator transfers out of the K loops; contractions lowered to outer
// products.
//
// Also loom-cpu-pack-constant-weights, which shares the recognition of
// contractions and the choice of panels: constant right operands that
// would be copied in panels on every call are stored, once, in blocks of
// a register tile's columns, which the tiles read with no copy.
//
//===----------------------------------------------------------------------===//

#include "loom/Target/CPU/Passes.h"

#include "TargetUtils.h"

#include "HostVectors.h"

#include "mlir/Dialect/Linalg/Transforms/Hoisting.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cstring>

namespace loom::cpu {
#define GEN_PASS_DEF_LOOMCPUPACKCONSTANTWEIGHTSPASS
#define GEN_PASS_DEF_LOOMCPUVECTORIZECONTRACTIONSPASS
#include "loom/Target/CPU/Passes.h.inc"
} // namespace loom::cpu

using namespace mlir;

namespace loom::cpu {
namespace {

enum class Role { Batch, M, N, K };

/// A contraction C += A * B, and the loops its register tile spans: `mv`
/// (rows), `nv` (the vectorized columns, innermost in B and C) and `kv`
/// (the reduction step).
struct Contraction {
  linalg::LinalgOp op;
  SmallVector<int64_t> ranges;
  SmallVector<Role> roles;
  /// A, B, C. For a B packed into blocks, B's map as if it were not
  /// (`[..., kv, nv]`).
  SmallVector<AffineMap> maps;
  unsigned mv = 0, nv = 0, kv = 0;
  /// The columns of B's blocks when B is stored packed, one block per
  /// register tile of columns (`[..., ceil(N / T), K, T]`, read through
  /// `[..., nv floordiv T, kv, nv mod T]`); 0 when B is plain.
  int64_t packedColumns = 0;
};

/// The register tile for `elementBits`-wide elements with `numRegisters`
/// vector registers of `bits`: {rows, columns}. Two vector registers of
/// columns; rows for half the registers less a few for B's row and the
/// broadcasts of A.
std::pair<int64_t, int64_t> registerTile(unsigned elementBits, unsigned bits,
                                         unsigned numRegisters) {
  int64_t nTile = 2 * bits / elementBits;
  int64_t mTile = std::clamp<int64_t>((int64_t(numRegisters) - 4) / 2, 1, 8);
  return {mTile, nTile};
}

/// The cache tile: a panel of B of up to 8 register tiles of columns by up
/// to 256 steps of K ({columns, steps}), when B is too large to stay in
/// cache, there are rows enough to reuse the panel, and the panel holds
/// everything a tile reads of B (B's only reduction dimension is kv).
std::optional<std::pair<int64_t, int64_t>> panelShape(const Contraction &c,
                                                      int64_t mTile,
                                                      int64_t nTile,
                                                      int64_t blockBytes) {
  int64_t n = c.ranges[c.nv], k = c.ranges[c.kv], m = c.ranges[c.mv];
  linalg::LinalgOp op = c.op;
  // B's bytes (16-bit floats for widening products).
  unsigned bytes = getElementTypeOrSelf(op.getDpsInputs()[1].getType())
                       .getIntOrFloatBitWidth() /
                   8;
  bool panelHoldsB = llvm::all_of(c.maps[1].getResults(), [&](AffineExpr e) {
    auto dim = dyn_cast<AffineDimExpr>(e);
    return !dim || c.roles[dim.getPosition()] != Role::K ||
           dim.getPosition() == c.kv;
  });
  // Rows known only at run time may be many (a prompt): the panel is
  // worth it when B is stored packed at compile time (TileEmitter copies
  // no panel per call for them).
  if (n * k * bytes > blockBytes &&
      (ShapedType::isDynamic(m) || m >= 4 * mTile) && panelHoldsB)
    return std::make_pair(std::min(n, 8 * nTile), std::min<int64_t>(k, 256));
  return std::nullopt;
}

/// B's map `[..., d floordiv T, k, d mod T]` (B packed into blocks of T
/// columns): the map of the plain B, `[..., k, d]`, and T.
std::optional<std::pair<AffineMap, int64_t>> unpackedMap(AffineMap map) {
  ArrayRef<AffineExpr> results = map.getResults();
  if (results.size() < 3)
    return std::nullopt;
  auto div = dyn_cast<AffineBinaryOpExpr>(results[results.size() - 3]);
  auto mod = dyn_cast<AffineBinaryOpExpr>(results.back());
  auto k = dyn_cast<AffineDimExpr>(results[results.size() - 2]);
  if (!div || !mod || !k || div.getKind() != AffineExprKind::FloorDiv ||
      mod.getKind() != AffineExprKind::Mod)
    return std::nullopt;
  auto n = dyn_cast<AffineDimExpr>(div.getLHS());
  auto columns = dyn_cast<AffineConstantExpr>(div.getRHS());
  auto modColumns = dyn_cast<AffineConstantExpr>(mod.getRHS());
  if (!n || !columns || !modColumns || mod.getLHS() != n ||
      columns.getValue() <= 0 || modColumns.getValue() != columns.getValue())
    return std::nullopt;
  SmallVector<AffineExpr> plain(results.drop_back(3));
  plain.push_back(k);
  plain.push_back(n);
  return std::make_pair(AffineMap::get(map.getNumDims(), map.getNumSymbols(),
                                       plain, map.getContext()),
                        columns.getValue());
}

/// The contraction `op` computes, on buffers or (for packing B) tensors.
std::optional<Contraction> matchContraction(linalg::LinalgOp op) {
  bool buffers = op.hasPureBufferSemantics();
  if ((!buffers && !op.hasPureTensorSemantics()) || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1)
    return std::nullopt;
  Type element = getElementTypeOrSelf(op.getDpsInits()[0].getType());
  if (!element.isF32() && !element.isF64() && !element.isInteger(32))
    return std::nullopt;
  // Operands of C's type, or 16-bit floats summed in f32 (widened as they
  // are read; the tile computes in f32).
  bool widening =
      element.isF32() && llvm::all_of(op.getDpsInputs(), [](Value in) {
        Type t = getElementTypeOrSelf(in.getType());
        return t.isBF16() || t.isF16();
      });
  if (!widening)
    for (Value input : op.getDpsInputs())
      if (getElementTypeOrSelf(input.getType()) != element)
        return std::nullopt;
  if (widening ? !isWideningMultiplyAccumulate(op) : !isMultiplyAccumulate(op))
    return std::nullopt;
  Contraction c;
  c.op = op;
  c.ranges = op.getStaticLoopRanges();
  // Sizes known only at run time: the rows' (mv, checked below) alone.
  if (llvm::any_of(c.ranges, [](int64_t r) {
        return !ShapedType::isDynamic(r) && r <= 0;
      }))
    return std::nullopt;
  c.maps = op.getIndexingMapsArray();
  if (auto plain = unpackedMap(c.maps[1]))
    std::tie(c.maps[1], c.packedColumns) = *plain;
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
  for (auto [d, range] : llvm::enumerate(c.ranges))
    if (ShapedType::isDynamic(range) && d != c.mv)
      return std::nullopt;
  // A packed B is read block by block: its K dimension must be kv, and its
  // only one.
  if (c.packedColumns) {
    ArrayRef<AffineExpr> results = c.maps[1].getResults();
    if (results[results.size() - 2] != getAffineDimExpr(c.kv, op.getContext()))
      return std::nullopt;
    for (AffineExpr e : results.drop_back(2))
      if (auto dim = dyn_cast<AffineDimExpr>(e))
        if (c.roles[dim.getPosition()] == Role::K)
          return std::nullopt;
  }
  if (!buffers)
    return c;
  if (!innermostContiguous(op.getDpsInputs()[1].getType(),
                           /*allowScalar=*/true) ||
      !innermostContiguous(op.getDpsInits()[0].getType(),
                           /*allowScalar=*/true))
    return std::nullopt;
  // The accumulators live in registers across the K loop: C must not be
  // read through A or B.
  Value out = viewedBuffer(op.getDpsInits()[0]);
  if (llvm::any_of(op.getDpsInputs(),
                   [&](Value in) { return viewedBuffer(in) == out; }))
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
    // One multiply and one add per point of the iteration space. With rows
    // known only at run time, a register tile's rows stand for them: a
    // batch or column-block loop is parallel when those are enough work;
    // where the row tiles are the loop to share, that is decided at run
    // time (emitRunTimeRows).
    dynamicRows = ShapedType::isDynamic(c.ranges[c.mv]);
    int64_t flops = 2;
    for (auto [dim, range] : llvm::enumerate(c.ranges)) {
      if (dynamicRows && dim == c.mv)
        range = mTile;
      flops = saturatingMultiply(flops, range);
    }
    this->parallelFlops = parallelFlops;
    outerLoopsShared = parallelFlops > 0 && flops >= parallelFlops;
    parallelPending = dynamicRows ? parallelFlops > 0 : outerLoopsShared;
    MLIRContext *ctx = c.op.getContext();
    for (OpFoldResult &offset : offsets)
      offset = IntegerAttr::get(IndexType::get(ctx), 0);
    packOffsets = offsets;
    // The cache tile: a panel of B copied into a contiguous buffer once
    // and read by every row tile in turn (loop order n, k, m). A B packed
    // at compile time (loom-cpu-pack-constant-weights) is read in place,
    // with the same loops: each register tile of columns reads its own
    // contiguous block, whose width is then the tile's.
    if (c.packedColumns) {
      this->nTile = c.packedColumns;
      nBlock = std::min(c.ranges[c.nv], 8 * this->nTile);
      kBlock = std::min<int64_t>(c.ranges[c.kv], 256);
      prepacked = true;
    } else if (auto panel = panelShape(c, mTile, nTile, blockBytes);
               panel && !dynamicRows) {
      std::tie(nBlock, kBlock) = *panel;
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
    if (!shared)
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
  /// B's element type, which a panel copies (C's, or a 16-bit float that
  /// the tile widens).
  Type panelElementType() {
    return getElementTypeOrSelf(c.op.getDpsInputs()[1].getType());
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
    auto type = MemRefType::get({kLength(), nLength()}, panelElementType());
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
    return arith::AddIOp::create(
               b, loc(), getValueOrCreateConstantIndexOp(b, loc(), base), iv)
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
    if (parallel && parallelPending && outerLoopsShared) {
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
                forBlocks(
                    b, c.ranges[c.kv], kLength(),
                    [&](OpBuilder &b, Value kBase, int64_t kb) {
                      if (pack) {
                        // B's panel, copied once for every row tile to read.
                        offsets[c.nv] = nBase;
                        offsets[c.kv] = kBase;
                        sizes[c.nv] = nb;
                        sizes[c.kv] = kb;
                        Value panel = view(b, c.op.getDpsInputs()[1], c.maps[1],
                                           offsets, {c.kv, c.nv})
                                          .first;
                        Value target = packBuffer;
                        if (nb != nLength() || kb != kLength())
                          target = memref::SubViewOp::create(
                              b, loc(), packBuffer, ArrayRef<int64_t>{0, 0},
                              ArrayRef<int64_t>{kb, nb},
                              ArrayRef<int64_t>{1, 1});
                        linalg::CopyOp::create(b, loc(), panel, target);
                      }
                      bool wasInside = insidePanel;
                      insidePanel = true;
                      emitRows(b, nBase, nb, kBase, kb);
                      insidePanel = wasInside;
                    },
                    /*parallel=*/false);
              });
  }

  void emitRows(OpBuilder &b, Value nBase, int64_t nLen, Value kBase,
                int64_t kLen) {
    if (dynamicRows) {
      emitRunTimeRows(b, nBase, nLen, kBase, kLen);
      return;
    }
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

  /// Rows known only at run time: full tiles of mTile rows, then the
  /// remaining rows one at a time (tiles of one row), in serial loops.
  void emitRunTimeRows(OpBuilder &b, Value nBase, int64_t nLen, Value kBase,
                       int64_t kLen) {
    Value out = c.op.getDpsInits()[0];
    std::optional<unsigned> position =
        c.maps[2].getResultPosition(getAffineDimExpr(c.mv, b.getContext()));
    Value rows = memref::DimOp::create(b, loc(), out, *position);
    Value tile = index(b, mTile);
    Value full = arith::MulIOp::create(
        b, loc(), arith::DivUIOp::create(b, loc(), rows, tile), tile);
    // Tiles of `step` rows from `lo` to `hi`, shared among threads when
    // `parallel`.
    auto rowLoop = [&](Value lo, Value hi, int64_t step, bool parallel) {
      Value stepValue = step == mTile ? tile : index(b, step);
      Operation *loop;
      Value row;
      if (parallel) {
        auto forked = scf::ParallelOp::create(
            b, loc(), ValueRange{lo}, ValueRange{hi}, ValueRange{stepValue});
        loop = forked;
        row = forked.getInductionVars()[0];
      } else {
        auto serial = scf::ForOp::create(b, loc(), lo, hi, stepValue);
        loop = serial;
        row = serial.getInductionVar();
      }
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(loop->getRegion(0).front().getTerminator());
      offsets[c.mv] = row;
      sizes[c.mv] = step;
      emitColumns(b, nBase, nLen, kBase, kLen);
    };
    if (!parallelPending) {
      rowLoop(index(b, 0), full, mTile, /*parallel=*/false);
    } else {
      // No loop around these rows is parallel: the whole row tiles are,
      // when there are two or more and their work is worth a fork (a
      // decoding step's few rows run on the calling thread).
      parallelPending = false;
      // A row's work in this block: its columns, times every K dimension
      // (those other than kv are loops inside the tile).
      int64_t perRow = 2 * nLen * kLen;
      for (auto [dim, range] : llvm::enumerate(c.ranges))
        if (c.roles[dim] == Role::K && dim != c.kv)
          perRow = saturatingMultiply(perRow, range);
      Value worth = arith::AndIOp::create(
          b, loc(),
          arith::CmpIOp::create(
              b, loc(), arith::CmpIPredicate::uge, rows,
              index(b, llvm::divideCeil(parallelFlops,
                                        std::max<int64_t>(perRow, 1)))),
          arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::uge, full,
                                index(b, 2 * mTile)));
      auto ifOp = scf::IfOp::create(b, loc(), worth, /*withElseRegion=*/true);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
        rowLoop(index(b, 0), full, mTile, /*parallel=*/true);
        b.setInsertionPoint(ifOp.elseBlock()->getTerminator());
        rowLoop(index(b, 0), full, mTile, /*parallel=*/false);
      }
    }
    rowLoop(full, rows, 1, /*parallel=*/false);
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
        if (prepacked) {
          // The tile's block of a packed B, and its first column there
          // (tiles never straddle blocks: full tiles are blocks, and the
          // power-of-two remainders follow each other in the last one).
          packedBlock = divide<arith::DivUIOp>(b, offsets[c.nv], nTile);
          packedLane = divide<arith::RemUIOp>(b, offsets[c.nv], nTile);
        }
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

  /// `value` / `divisor` or `value` % `divisor` (DivUI or RemUI), folded
  /// for a constant value.
  template <typename DivOp>
  OpFoldResult divide(OpBuilder &b, OpFoldResult value, int64_t divisor) {
    if (std::optional<int64_t> cst = getConstantIntValue(value))
      return b.getIndexAttr(std::is_same_v<DivOp, arith::DivUIOp>
                                ? *cst / divisor
                                : *cst % divisor);
    return DivOp::create(b, loc(),
                         getValueOrCreateConstantIndexOp(b, loc(), value),
                         index(b, divisor))
        .getResult();
  }

  /// A unit-stride subview of `operand` at `offs` of sizes `szs`, keeping
  /// only the dimensions at `keptPositions` (the others have size 1).
  Value subview(OpBuilder &b, Value operand, ArrayRef<OpFoldResult> offs,
                ArrayRef<int64_t> szs, ArrayRef<unsigned> keptPositions) {
    MLIRContext *ctx = b.getContext();
    auto type = cast<MemRefType>(operand.getType());
    SmallVector<OpFoldResult> sizeAttrs, strides(szs.size(), b.getIndexAttr(1));
    for (int64_t size : szs)
      sizeAttrs.push_back(b.getIndexAttr(size));
    MemRefType full =
        memref::SubViewOp::inferResultType(type, offs, sizeAttrs, strides);
    auto [fullStrides, offset] = full.getStridesAndOffset();
    SmallVector<int64_t> keptShape, keptStrides;
    for (unsigned pos : keptPositions) {
      keptShape.push_back(szs[pos]);
      keptStrides.push_back(fullStrides[pos]);
    }
    auto reduced =
        MemRefType::get(keptShape, type.getElementType(),
                        StridedLayoutAttr::get(ctx, offset, keptStrides),
                        type.getMemorySpace());
    return memref::SubViewOp::create(b, loc(), reduced, operand, offs,
                                     sizeAttrs, strides);
  }

  /// The tile's row of a packed B (`[1, width]` at the tile's block, step
  /// of K and first column), and its indexing map in (m, n, k).
  std::pair<Value, AffineMap> packedView(OpBuilder &b) {
    MLIRContext *ctx = b.getContext();
    ArrayRef<AffineExpr> results = c.op.getIndexingMapsArray()[1].getResults();
    SmallVector<OpFoldResult> offs;
    SmallVector<int64_t> szs;
    for (AffineExpr expr : results.drop_back(3)) {
      auto dim = dyn_cast<AffineDimExpr>(expr);
      offs.push_back(dim ? offsets[dim.getPosition()] : b.getIndexAttr(0));
      szs.push_back(1);
    }
    offs.append({packedBlock, offsets[c.kv], packedLane});
    szs.append({1, sizes[c.kv], sizes[c.nv]});
    unsigned rank = results.size();
    Value row =
        subview(b, c.op.getDpsInputs()[1], offs, szs, {rank - 2, rank - 1});
    return {row, AffineMap::get(
                     3, 0, {getAffineDimExpr(2, ctx), getAffineDimExpr(1, ctx)},
                     ctx)};
  }

  /// A view of `operand` (indexed through `map`) at `at` with the current
  /// sizes, keeping only the dimensions of `kept` (loop dimensions, in
  /// order of the tile's dimensions), and the view's indexing map in
  /// those dimensions.
  std::pair<Value, AffineMap> view(OpBuilder &b, Value operand, AffineMap map,
                                   ArrayRef<OpFoldResult> at,
                                   ArrayRef<unsigned> kept) {
    MLIRContext *ctx = b.getContext();
    SmallVector<OpFoldResult> offs;
    SmallVector<int64_t> szs;
    SmallVector<unsigned> keptPositions;
    SmallVector<AffineExpr> keptExprs;
    for (auto [pos, expr] : llvm::enumerate(map.getResults())) {
      auto dim = dyn_cast<AffineDimExpr>(expr);
      if (!dim) {
        offs.push_back(b.getIndexAttr(0));
        szs.push_back(1);
        continue;
      }
      unsigned d = dim.getPosition();
      offs.push_back(at[d]);
      szs.push_back(sizes[d]);
      auto it = llvm::find(kept, d);
      if (it == kept.end())
        continue;
      keptPositions.push_back(pos);
      keptExprs.push_back(getAffineDimExpr(it - kept.begin(), ctx));
    }
    return {subview(b, operand, offs, szs, keptPositions),
            AffineMap::get(kept.size(), 0, keptExprs, ctx)};
  }

  void emitTile(OpBuilder &b) {
    SmallVector<unsigned> mnk{c.mv, c.nv, c.kv};
    auto [a, aMap] = view(b, c.op.getDpsInputs()[0], c.maps[0], offsets, mnk);
    Value bv;
    AffineMap bMap;
    if (prepacked) {
      std::tie(bv, bMap) = packedView(b);
    } else if (pack) {
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
    c.op->getRegion(0).cloneInto(&tile.getRegion(), mapping);
    tiles.push_back(tile);
  }

  Contraction c;
  int64_t mTile, nTile;
  int64_t nBlock = 0, kBlock = 0;
  bool pack = false;
  /// Whether B is stored packed: each tile reads its block in place.
  bool prepacked = false;
  /// Whether the next loop of independent iterations is to be parallel.
  bool parallelPending = false;
  /// Operations from which a contraction is shared by threads.
  int64_t parallelFlops = 0;
  /// Whether a loop with a static number of iterations may be the shared
  /// one: the contraction is large enough (with rows known only at run
  /// time, for a register tile's rows). Otherwise only the run-time rows'
  /// loop may be, decided at run time.
  bool outerLoopsShared = false;
  /// Whether the rows' count (mv) is known only at run time.
  bool dynamicRows = false;
  /// Whether the code being emitted runs after a panel copy, reading it.
  bool insidePanel = false;
  Value packBuffer;
  SmallVectorImpl<linalg::GenericOp> &tiles;
  SmallVector<OpFoldResult> offsets, packOffsets;
  /// With a packed B: the current tile's block and first column in it.
  OpFoldResult packedBlock, packedLane;
  SmallVector<int64_t> sizes;
};

/// `[outer..., K, N]` (row-major bytes of `element` bytes each) as
/// `[outer..., ceil(N / columns), K, columns]`, the columns past N zero.
std::vector<char> packPanels(ArrayRef<char> from, int64_t outer, int64_t k,
                             int64_t n, int64_t columns, int64_t element) {
  int64_t blocks = llvm::divideCeil(n, columns);
  std::vector<char> to(outer * blocks * k * columns * element, 0);
  char *out = to.data();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t p = 0; p < blocks; ++p) {
      int64_t width = std::min(columns, n - p * columns);
      for (int64_t r = 0; r < k; ++r, out += columns * element)
        std::memcpy(out,
                    from.data() + ((o * k + r) * n + p * columns) * element,
                    width * element);
    }
  return to;
}

class LoomCPUPackConstantWeightsPass
    : public impl::LoomCPUPackConstantWeightsPassBase<
          LoomCPUPackConstantWeightsPass> {
public:
  using LoomCPUPackConstantWeightsPassBase::LoomCPUPackConstantWeightsPassBase;

  void runOnOperation() override {
    auto [hostBits, hostRegisters] = hostVectorRegisters();
    unsigned bits = vectorBits ? unsigned(vectorBits) : hostBits;
    unsigned numRegisters = registers ? unsigned(registers) : hostRegisters;
    SmallVector<linalg::LinalgOp> candidates;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.hasPureTensorSemantics() && op.getNumDpsInputs() == 2 &&
          op.getDpsInputs()[1].getDefiningOp<arith::ConstantOp>() &&
          (isa<linalg::GenericOp>(op) ||
           isa<linalg::ContractionOpInterface>(op.getOperation())))
        candidates.push_back(op);
    });
    // One packed constant per weight and block width, however many
    // products read it.
    llvm::DenseMap<std::pair<Attribute, int64_t>, Value> packedOf;
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : candidates) {
      std::optional<Contraction> c = matchContraction(op);
      if (!c || c->packedColumns)
        continue;
      auto constant = op.getDpsInputs()[1].getDefiningOp<arith::ConstantOp>();
      auto attr = dyn_cast<ElementsAttr>(constant.getValue());
      ArrayRef<char> bytes = attr ? denseBytes(attr) : ArrayRef<char>();
      if (bytes.empty())
        continue;
      // B as [outer..., kv, nv], each dimension a loop of its own.
      AffineMap bMap = c->maps[1];
      if (!bMap.isProjectedPermutation(/*allowZeroInResults=*/false) ||
          bMap.getNumResults() < 2 ||
          bMap.getResults().drop_back().back() !=
              getAffineDimExpr(c->kv, &getContext()))
        continue;
      unsigned elementBits =
          getElementTypeOrSelf(attr.getType()).getIntOrFloatBitWidth();
      auto [mTile, nTile] = registerTile(elementBits, bits, numRegisters);
      std::optional<std::pair<int64_t, int64_t>> panel =
          panelShape(*c, mTile, nTile, blockBytes);
      if (!panel)
        continue;
      // One block of columns per register tile: a tile's reads of B, one
      // row of its block per step of K, are contiguous.
      int64_t columns = nTile;
      ArrayRef<int64_t> shape = cast<ShapedType>(attr.getType()).getShape();
      int64_t k = shape[shape.size() - 2], n = shape.back();
      int64_t outer = 1;
      for (int64_t d : shape.drop_back(2))
        outer *= d;

      Value &packed = packedOf[{attr, columns}];
      if (!packed) {
        SmallVector<int64_t> packedShape(shape.drop_back(2));
        packedShape.append({int64_t(llvm::divideCeil(n, columns)), k, columns});
        auto type = RankedTensorType::get(packedShape,
                                          getElementTypeOrSelf(attr.getType()));
        std::vector<char> data =
            packPanels(bytes, outer, k, n, columns, elementBits / 8);
        // The weight's storage stays the importer's choice.
        ElementsAttr value = constantLike(attr, type, data, "_packed");
        rewriter.setInsertionPointAfter(constant);
        packed = arith::ConstantOp::create(rewriter, constant.getLoc(),
                                           cast<TypedAttr>(value));
      }

      MLIRContext *ctx = &getContext();
      SmallVector<AffineExpr> results(bMap.getResults().drop_back(2));
      AffineExpr nDim = getAffineDimExpr(c->nv, ctx);
      results.append({nDim.floorDiv(columns), getAffineDimExpr(c->kv, ctx),
                      nDim % columns});
      replaceRightOperand(rewriter, op, packed,
                          AffineMap::get(bMap.getNumDims(), 0, results, ctx));
      if (constant->use_empty())
        rewriter.eraseOp(constant);
    }
  }
};

/// Whether `op`, or an op nested in it, may read or write memory that
/// `buffer` holds, apart from `except` (the accumulator's own transfers).
bool mayTouch(Operation *op, Value buffer, ArrayRef<Operation *> except) {
  WalkResult result = op->walk([&](Operation *inner) {
    if (llvm::is_contained(except, inner))
      return WalkResult::advance();
    auto effects = dyn_cast<MemoryEffectOpInterface>(inner);
    if (!effects) {
      // Ops without the interface are fine only when they hold regions
      // whose ops are checked (loops) or are known to be pure.
      if (inner->hasTrait<OpTrait::HasRecursiveMemoryEffects>() ||
          isPure(inner))
        return WalkResult::advance();
      return WalkResult::interrupt();
    }
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    for (const MemoryEffects::EffectInstance &effect : instances) {
      if (isa<MemoryEffects::Allocate, MemoryEffects::Free>(effect.getEffect()))
        continue;
      Value value = effect.getValue();
      if (!value || !isa<BaseMemRefType>(value.getType()) ||
          mayOverlap(value, buffer))
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return result.wasInterrupted();
}

/// Carries the accumulators of register tiles through their reduction
/// loops in registers: a transfer_read and a transfer_write of the same
/// loop-invariant element range, with nothing else in the loop touching
/// memory that range may share, become one read before the loop, a value
/// the loop carries, and one write after it. Upstream's
/// hoistRedundantVectorTransfers leaves them in the loop whenever the
/// buffer is a view (as every arena buffer of the memory plan is), which
/// made every product writing into the arena load and store its whole
/// tile at each step of K. Loops run at least once (constant bounds).
/// One accumulator of `loop` hoisted: the loop that replaces it, or null.
Operation *hoistOneAccumulator(RewriterBase &rewriter, scf::ForOp loop) {
  std::optional<int64_t> lo = getConstantIntValue(loop.getLowerBound());
  std::optional<int64_t> hi = getConstantIntValue(loop.getUpperBound());
  if (!lo || !hi || *lo >= *hi)
    return nullptr;
  Block *body = loop.getBody();
  auto definedOutside = [&](Value v) {
    return !loop->isAncestor(v.getParentBlock()->getParentOp());
  };
  for (auto read : body->getOps<vector::TransferReadOp>()) {
    if (read.getMask() || !llvm::all_of(read->getOperands(), definedOutside))
      continue;
    vector::TransferWriteOp write;
    for (auto candidate : body->getOps<vector::TransferWriteOp>())
      if (candidate.getBase() == read.getBase() &&
          candidate.getIndices() == read.getIndices() &&
          candidate.getVectorType() == read.getVectorType() &&
          candidate.getPermutationMap() == read.getPermutationMap() &&
          candidate.getInBounds() == read.getInBounds() &&
          !candidate.getMask() && read->isBeforeInBlock(candidate)) {
        write = candidate;
        break;
      }
    if (!write || mayTouch(loop, read.getBase(), {read, write}))
      continue;
    rewriter.moveOpBefore(read, loop);
    FailureOr<LoopLikeOpInterface> hoisted = loop.replaceWithAdditionalYields(
        rewriter, ValueRange{read.getResult()},
        /*replaceInitOperandUsesInLoop=*/true,
        [&](OpBuilder &, Location, ArrayRef<BlockArgument>) {
          return SmallVector<Value>{write.getVector()};
        });
    if (failed(hoisted)) {
      rewriter.moveOpBefore(read, &body->front());
      return nullptr;
    }
    Operation *newLoop = hoisted->getOperation();
    rewriter.moveOpAfter(write, newLoop);
    rewriter.modifyOpInPlace(write, [&] {
      write.getValueToStoreMutable().assign(newLoop->getResults().back());
    });
    return newLoop;
  }
  return nullptr;
}

void hoistAccumulators(RewriterBase &rewriter, func::FuncOp func) {
  // Inner loops first, so that an accumulator hoisted out of one is seen
  // by the loop around it.
  SmallVector<scf::ForOp> loops;
  func.walk([&](scf::ForOp loop) { loops.push_back(loop); });
  for (scf::ForOp loop : loops) {
    Operation *current = loop;
    while (Operation *next =
               hoistOneAccumulator(rewriter, cast<scf::ForOp>(current)))
      current = next;
  }
}

/// Upstream's fold of a vector transfer through a memref.expand_shape
/// (fold-memref-alias-ops, LLVM 22) moves it onto the source with a minor
/// identity map of the vector's rank. That is right only when each of the
/// view's trailing dimensions the vector spans comes from a source
/// dimension of its own: a vector<8x1> read of a [2, 4, 8] buffer viewed
/// [2, 4, 8, 1] became a read of the source's [4, 8] dimensions (a silent
/// wrong answer, found by the newer ONNX node suite). Such transfers go
/// through an equivalent memref.reinterpret_cast instead, which no pattern
/// folds, before the upstream pattern can match them.
template <typename TransferOp>
struct KeepUnfoldableExpandShapeTransfer : OpRewritePattern<TransferOp> {
  explicit KeepUnfoldableExpandShapeTransfer(MLIRContext *ctx)
      : OpRewritePattern<TransferOp>(ctx, /*benefit=*/2) {}

  LogicalResult matchAndRewrite(TransferOp op,
                                PatternRewriter &rewriter) const override {
    auto expand = op.getBase().template getDefiningOp<memref::ExpandShapeOp>();
    if (!expand)
      return failure();
    int64_t rank = expand.getResultType().getRank();
    int64_t firstSpanned = rank - op.getVectorType().getRank();
    bool foldable = firstSpanned >= 0;
    for (const ReassociationIndices &group : expand.getReassociationIndices())
      if (group.size() != 1 && group.back() >= firstSpanned)
        foldable = false;
    if (foldable)
      return failure();
    Location loc = op.getLoc();
    auto metadata =
        memref::ExtractStridedMetadataOp::create(rewriter, loc, expand);
    Value view = memref::ReinterpretCastOp::create(
        rewriter, loc, expand.getResultType(), metadata.getBaseBuffer(),
        metadata.getConstifiedMixedOffset(), metadata.getConstifiedMixedSizes(),
        metadata.getConstifiedMixedStrides());
    rewriter.modifyOpInPlace(op, [&] { op.getBaseMutable().assign(view); });
    return success();
  }
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
      auto [mTile, nTile] = registerTile(elementBits, bits, numRegisters);
      rewriter.setInsertionPoint(c.op);
      // Inside a parallel loop (attention's items) the threads are busy
      // already: a nested fork would only add its cost.
      bool nested = c.op->getParentOfType<scf::ParallelOp>() != nullptr;
      TileEmitter(c, mTile, nTile, blockBytes, nested ? 0 : parallelFlops,
                  tiles)
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
      // 16-bit operands summed in f32: the widening folds into the
      // contraction, so that A's broadcast does too (and is widened one
      // element per row, not as the whole broadcast tile).
      vector::populateFoldArithExtensionPatterns(patterns);
      memref::populateFoldMemRefAliasOpPatterns(patterns);
      patterns.add<KeepUnfoldableExpandShapeTransfer<vector::TransferReadOp>,
                   KeepUnfoldableExpandShapeTransfer<vector::TransferWriteOp>>(
          ctx);
      vector::TransferReadOp::getCanonicalizationPatterns(patterns, ctx);
      vector::TransferWriteOp::getCanonicalizationPatterns(patterns, ctx);
      // As upstream's fold-memref-alias-ops, whose patterns may report
      // progress on transfers of expand_shape views without changing them.
      (void)applyPatternsGreedily(func, std::move(patterns));
    }
    DominanceInfo dominance(func);
    eliminateCommonSubExpressions(rewriter, dominance, func);
    linalg::hoistRedundantVectorTransfers(func, /*verifyNonZeroTrip=*/true);
    hoistAccumulators(rewriter, func);

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
