//===- VectorizeDotProducts.cpp - Products on dot-product instructions ----===//
//
// Products whose operands are narrower than their sums, on the x86
// instructions that multiply a short group of such operands per lane and
// add the group's products into one 32-bit lane:
//
// - byte products (convert-loom-to-linalg's byte-products form, the
//   products of quantized models): C[m, n] += zext(A[m, k]) * sext(B[k, n]),
//   A and B of i8, C of i32. AVX512-VNNI's vpdpbusd multiplies 64 unsigned
//   bytes by 64 signed bytes and adds each group of four products into one
//   of 16 i32 lanes: 64 multiply-adds per instruction, against 16 for i32
//   operands (vpmulld + vpaddd), on operands a quarter of the size;
// - bf16 products summed in f32 (loom-precision's bf16 contractions):
//   C[m, n] += extf(A[m, k]) * extf(B[k, n]). AVX512-BF16's vdpbf16ps
//   multiplies 32 pairs of bf16 and adds each pair's products into one of
//   16 f32 lanes: 32 multiply-adds per instruction, against 16 for an f32
//   FMA, on operands half the size and with no conversions.
//
// Both read a 512-bit register of B as 16 lanes of one 32-bit group of
// K steps (four bytes, two bf16), so the layout, the tiles and the packing
// are one: loom-cpu-pack-dot-product-weights stores a constant B the way
// the instruction reads it, lane j of a register holding the group
// B[G g .. G g + G-1][16 b + j], so B becomes [ceil(N / 16), ceil(K / G),
// 16, G]; a B that is not a constant (a convolution's channel-major
// columns, an activation) is interleaved the same way at run time, one
// panel per pair of column blocks. The register tiles
// (loom-cpu-vectorize-dot-products) are 8 rows x 2 registers of 16
// columns, K innermost: per group of G steps of K, two 64-byte loads of B
// and, per row, one 32-bit group of A broadcast to the 16 lanes and two
// dot-product instructions. Sixteen accumulators, two B registers and a
// broadcast fit the 32 registers.
//
// On hosts with AMX the same products (byte products only with a packed
// weight) run on AMX tiles instead, which read B's packed blocks as they
// are: a block's 16 group rows of 64 bytes are one B tile (AMXDotTiles;
// docs/design/dot-products-amx.md).
//
//===----------------------------------------------------------------------===//

#include "loom/Target/CPU/Passes.h"

#include "TargetUtils.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cstring>

namespace loom::cpu {
#define GEN_PASS_DEF_LOOMCPUPACKDOTPRODUCTWEIGHTSPASS
#define GEN_PASS_DEF_LOOMCPUVECTORIZEDOTPRODUCTSPASS
#include "loom/Target/CPU/Passes.h.inc"
} // namespace loom::cpu

using namespace mlir;

namespace loom::cpu {
namespace {

/// The instructions' lanes: 16 32-bit sums, each of one group of products.
constexpr int64_t kLanes = 16;
/// Bytes of one lane's group of operands.
constexpr int64_t kGroupBytes = 4;
/// Rows of a register tile and its registers of columns.
constexpr int64_t kTileRows = 8;
constexpr int64_t kTileRegisters = 2;

enum class DotKind {
  /// u8 x s8 into i32 (vpdpbusd).
  Bytes,
  /// bf16 x bf16 into f32 (vdpbf16ps).
  BFloat16,
};

/// A 2-D product on a dot-product instruction, possibly inside leading
/// batch loops, and the loops of its rows (m), columns (n) and reduction
/// (k), with their static sizes.
struct DotProduct {
  linalg::LinalgOp op;
  DotKind kind;
  /// The batch loops, outermost first: leading in C, and in A and B
  /// where they are batched (each operand has all of them or none).
  SmallVector<unsigned> batch;
  unsigned m, n, k;
  int64_t rows, columns, depth;
  bool batchedA, batchedB;
  /// Whether B is read packed, through (n floordiv 16, k floordiv G,
  /// n mod 16, k mod G); otherwise plainly, through (batch..., k, n).
  bool packed;
  /// Byte products: whether A is the unsigned operand (an activation's
  /// rows; B is then the signed weight) or B is (an activation's columns,
  /// A the weight). vpdpbusd's first operand is the unsigned one.
  bool unsignedRows;

  /// Operands per lane's group: four bytes, two bf16.
  int64_t group() const { return kind == DotKind::Bytes ? 4 : 2; }
};

AffineMap packedMap(unsigned numLoops, unsigned n, unsigned k, int64_t group,
                    MLIRContext *ctx) {
  AffineExpr dn = getAffineDimExpr(n, ctx), dk = getAffineDimExpr(k, ctx);
  return AffineMap::get(
      numLoops, 0,
      {dn.floorDiv(kLanes), dk.floorDiv(group), dn % kLanes, dk % group}, ctx);
}

/// The kind of dot product `op`'s body and element types make, if any;
/// `unsignedInput` is set for byte products.
std::optional<DotKind> dotKindOf(linalg::LinalgOp op,
                                 std::optional<unsigned> &unsignedInput) {
  unsignedInput = byteProductUnsignedInput(op);
  if (unsignedInput)
    return DotKind::Bytes;
  Block *body = op.getBlock();
  if (body->getNumArguments() == 3 && body->getArgument(0).getType().isBF16() &&
      body->getArgument(1).getType().isBF16() &&
      body->getArgument(2).getType().isF32() &&
      isWideningMultiplyAccumulate(op))
    return DotKind::BFloat16;
  return std::nullopt;
}

std::optional<DotProduct> matchDotProduct(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op.getNumLoops() < 3)
    return std::nullopt;
  std::optional<unsigned> unsignedInput;
  std::optional<DotKind> kind = dotKindOf(op, unsignedInput);
  if (!kind)
    return std::nullopt;
  DotProduct p;
  p.op = op;
  p.kind = *kind;
  p.unsignedRows = unsignedInput == 0u;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  unsigned numLoops = op.getNumLoops();
  // C is (batch..., m, n): every parallel loop, each once, the batch first.
  AffineMap cMap = maps[2];
  if (!cMap.isProjectedPermutation() || cMap.getNumResults() != numLoops - 1)
    return std::nullopt;
  for (unsigned i = 0; i + 2 < cMap.getNumResults(); ++i)
    p.batch.push_back(cMap.getDimPosition(i));
  p.m = cMap.getDimPosition(cMap.getNumResults() - 2);
  p.n = cMap.getDimPosition(cMap.getNumResults() - 1);
  std::optional<unsigned> k;
  for (unsigned d = 0; d < numLoops; ++d)
    if (!cMap.isFunctionOfDim(d))
      k = d;
  if (!k || iterators[*k] != utils::IteratorType::reduction)
    return std::nullopt;
  p.k = *k;
  for (unsigned d = 0; d < numLoops; ++d)
    if (d != p.k && iterators[d] != utils::IteratorType::parallel)
      return std::nullopt;
  MLIRContext *ctx = op.getContext();
  auto plain = [&](ArrayRef<unsigned> last, bool batched) {
    SmallVector<AffineExpr> results;
    if (batched)
      for (unsigned d : p.batch)
        results.push_back(getAffineDimExpr(d, ctx));
    for (unsigned d : last)
      results.push_back(getAffineDimExpr(d, ctx));
    return AffineMap::get(numLoops, 0, results, ctx);
  };
  auto matchesPlain = [&](AffineMap map, ArrayRef<unsigned> last,
                          bool &batched) {
    for (bool withBatch : {true, false})
      if (map == plain(last, withBatch)) {
        batched = withBatch && !p.batch.empty();
        return true;
      }
    return false;
  };
  if (!matchesPlain(maps[0], {p.m, p.k}, p.batchedA))
    return std::nullopt;
  p.batchedB = false;
  if (maps[1] == packedMap(numLoops, p.n, p.k, p.group(), ctx))
    p.packed = true;
  else if (matchesPlain(maps[1], {p.k, p.n}, p.batchedB))
    p.packed = false;
  else
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(
          ranges, [](int64_t r) { return ShapedType::isDynamic(r) || r <= 0; }))
    return std::nullopt;
  p.rows = ranges[p.m];
  p.columns = ranges[p.n];
  p.depth = ranges[p.k];
  return p;
}

//===----------------------------------------------------------------------===//
// loom-cpu-pack-dot-product-weights
//===----------------------------------------------------------------------===//

/// [K, N] elements of `elementBytes` as [ceil(N / 16), groups, 16, G],
/// zero-padded (groups >= ceil(K / G)).
std::vector<char> packForDotProducts(ArrayRef<char> from, int64_t k, int64_t n,
                                     int64_t group, int64_t groups,
                                     int64_t elementBytes) {
  int64_t blocks = llvm::divideCeil(n, kLanes);
  std::vector<char> to(blocks * groups * kLanes * group * elementBytes, 0);
  for (int64_t row = 0; row < k; ++row)
    for (int64_t column = 0; column < n; ++column) {
      int64_t block = column / kLanes, lane = column % kLanes;
      int64_t g = row / group, step = row % group;
      int64_t at = ((block * groups + g) * kLanes + lane) * group + step;
      std::memcpy(&to[at * elementBytes],
                  &from[(row * n + column) * elementBytes], elementBytes);
    }
  return to;
}

class LoomCPUPackDotProductWeightsPass
    : public impl::LoomCPUPackDotProductWeightsPassBase<
          LoomCPUPackDotProductWeightsPass> {
public:
  using LoomCPUPackDotProductWeightsPassBase::
      LoomCPUPackDotProductWeightsPassBase;

  void runOnOperation() override {
    SmallVector<DotProduct> products;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (!op.hasPureTensorSemantics())
        return;
      std::optional<DotProduct> p = matchDotProduct(op);
      // A constant weight on the right: the signed one of a byte product.
      if (p && !p->packed && !p->batchedB && enabled(p->kind) &&
          (p->kind != DotKind::Bytes || p->unsignedRows) &&
          op.getDpsInputs()[1].getDefiningOp<arith::ConstantOp>())
        products.push_back(*p);
    });
    // One packed constant per weight, however many products read it.
    llvm::DenseMap<Attribute, Value> packedOf;
    IRRewriter rewriter(&getContext());
    MLIRContext *ctx = &getContext();
    for (DotProduct &p : products) {
      linalg::LinalgOp op = p.op;
      auto constant = op.getDpsInputs()[1].getDefiningOp<arith::ConstantOp>();
      auto attr = dyn_cast<ElementsAttr>(constant.getValue());
      int64_t elementBytes = kGroupBytes / p.group();
      ArrayRef<char> data = attr ? denseBytes(attr) : ArrayRef<char>();
      if (data.size() != size_t(p.depth * p.columns * elementBytes))
        continue;
      Value &packed = packedOf[attr];
      if (!packed) {
        // AMX tiles read K in whole steps of 64 bytes.
        bool amx = p.kind == DotKind::Bytes ? amxBytes : amxBFloat16;
        int64_t stepDepth = amx ? 64 / elementBytes : p.group();
        int64_t groups = llvm::alignTo(p.depth, stepDepth) / p.group();
        auto type =
            RankedTensorType::get({int64_t(llvm::divideCeil(p.columns, kLanes)),
                                   groups, kLanes, p.group()},
                                  attr.getElementType());
        // The weight's storage stays the importer's choice.
        ElementsAttr value =
            constantLike(attr, type,
                         packForDotProducts(data, p.depth, p.columns, p.group(),
                                            groups, elementBytes),
                         p.kind == DotKind::Bytes ? "_vnni" : "_dpbf16");
        rewriter.setInsertionPointAfter(constant);
        packed = arith::ConstantOp::create(rewriter, constant.getLoc(),
                                           cast<TypedAttr>(value));
      }
      replaceRightOperand(
          rewriter, op, packed,
          packedMap(op.getNumLoops(), p.n, p.k, p.group(), ctx));
      if (constant->use_empty())
        rewriter.eraseOp(constant);
    }
  }

private:
  bool enabled(DotKind kind) const {
    return kind == DotKind::Bytes ? bytes : bfloat16;
  }
};

//===----------------------------------------------------------------------===//
// loom-cpu-vectorize-dot-products
//===----------------------------------------------------------------------===//

/// Emits the tiles of one 2-D dot product on buffers (one batch element's
/// views of A, B and C, 2-D each), a pair of blocks of 16 columns at a
/// time. With B packed at compile time (a constant weight), B's blocks are
/// read from it; otherwise each pair's panel of B is interleaved at run
/// time into the same layout, [blocks, ceil(K / G), 16 G], and read from
/// there by every row tile. The tiles themselves are the subclasses':
/// vector registers (VectorDotTiles) or AMX tiles (AMXDotTiles).
class DotTileEmitter {
public:
  DotTileEmitter(OpBuilder &b, DotProduct p, Value a, Value plainB,
                 Value packedB, Value c)
      : b(b), p(p), loc(p.op.getLoc()), a(a), plainB(plainB), packedB(packedB),
        c(c) {
    Block *body = p.op.getBlock();
    element = body->getArgument(0).getType();
    accumulator = body->getArgument(2).getType();
  }
  virtual ~DotTileEmitter() = default;

  /// Every tile; one loop of them shared among threads when `parallel`.
  void emit(bool parallel) {
    int64_t fullBlocks = p.columns / kLanes;
    int64_t pairs = fullBlocks / kTileRegisters;
    int64_t lastLanes = p.columns % kLanes;
    // The pairs of blocks are the shared loop when there are two or more;
    // else the row tiles of each block are.
    bool shareColumns = parallel && pairs >= 2;
    bool shareRows = parallel && !shareColumns;
    forRange(pairs, shareColumns, [&](Value pair) {
      Value block = arith::MulIOp::create(b, loc, pair, index(kTileRegisters));
      emitRows(block, kTileRegisters, kLanes, shareRows);
    });
    if (fullBlocks % kTileRegisters)
      emitRows(index(fullBlocks - 1), 1, kLanes, shareRows);
    if (lastLanes)
      emitRows(index(fullBlocks), 1, lastLanes, shareRows);
  }

protected:
  /// The row tiles of the columns from block `block` on, `registers`
  /// blocks wide, the last one `lastLanes` lanes; B's blocks are
  /// bBlocks[blockOf(block, j)].
  virtual void emitRowTiles(Value block, int64_t registers, int64_t lastLanes,
                            bool parallel) = 0;

  /// The groups of K of a run-time panel's blocks (those past K zero).
  virtual int64_t panelGroups() const {
    return llvm::divideCeil(p.depth, p.group());
  }

  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }

  Value add(Value x, int64_t y) {
    if (y == 0)
      return x;
    return arith::AddIOp::create(b, loc, x, index(y));
  }

  /// for (iv = 0; iv < count; iv += step) body(iv): a parallel loop when
  /// `parallel` and there are two iterations or more; no loop for one.
  void forRange(int64_t count, int64_t step, bool parallel,
                function_ref<void(Value)> body) {
    if (count <= 0)
      return;
    if (count <= step) {
      body(index(0));
      return;
    }
    Operation *loop;
    Value iv;
    if (parallel) {
      auto forked = scf::ParallelOp::create(b, loc, ValueRange{index(0)},
                                            ValueRange{index(count)},
                                            ValueRange{index(step)});
      loop = forked;
      iv = forked.getInductionVars()[0];
    } else {
      auto serial =
          scf::ForOp::create(b, loc, index(0), index(count), index(step));
      loop = serial;
      iv = serial.getInductionVar();
    }
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(loop->getRegion(0).front().getTerminator());
    body(iv);
  }
  void forRange(int64_t count, bool parallel, function_ref<void(Value)> body) {
    forRange(count, 1, parallel, body);
  }

  /// The lanes of block `j` of a tile `registers` blocks wide whose last
  /// block holds `lastLanes` columns.
  static int64_t lanesOf(int64_t j, int64_t registers, int64_t lastLanes) {
    return j + 1 == registers ? lastLanes : kLanes;
  }

  /// The index in bBlocks of block `j` of the columns from `block` on.
  Value blockOf(Value block, int64_t j) {
    return p.packed ? add(block, j) : index(j);
  }

  Value zerosOf(VectorType type) {
    return arith::ConstantOp::create(
        b, loc, type,
        DenseElementsAttr::get(type, b.getZeroAttr(type.getElementType())));
  }

  /// A mask of the first `lanes` of `length`.
  Value mask(int64_t length, int64_t lanes) {
    return vector::ConstantMaskOp::create(
        b, loc, VectorType::get({length}, b.getI1Type()),
        ArrayRef<int64_t>{lanes});
  }

  OpBuilder &b;
  DotProduct p;
  Location loc;
  Value a, plainB, packedB, c;
  /// B as [blocks, ceil(K / G), 16 G]: the packed weight, or the current
  /// pair of blocks' panel.
  Value bBlocks;
  Type element, accumulator;

private:
  void emitRows(Value block, int64_t registers, int64_t lastLanes,
                bool parallel) {
    memref::AllocOp allocated;
    if (p.packed) {
      bBlocks = packedB;
    } else {
      auto type = MemRefType::get(
          {registers, panelGroups(), kLanes * p.group()}, element);
      allocated =
          memref::AllocOp::create(b, loc, type, b.getI64IntegerAttr(64));
      bBlocks = allocated;
      packPanel(block, registers, lastLanes);
    }
    emitRowTiles(block, registers, lastLanes, parallel);
    if (allocated)
      memref::DeallocOp::create(b, loc, allocated);
  }

  /// `rows` (G vectors of 16 elements, one per step of K) interleaved
  /// lane by lane: lane j's group is rows[0][j], ..., rows[G-1][j]. Each
  /// round merges neighbours' groups of `width` elements into groups of
  /// twice as many.
  Value interleave(SmallVector<Value> rows) {
    for (int64_t width = 1; rows.size() > 1; width *= 2) {
      SmallVector<int64_t> merged;
      for (int64_t lane = 0; lane < kLanes; ++lane) {
        for (int64_t t = 0; t < width; ++t)
          merged.push_back(lane * width + t);
        for (int64_t t = 0; t < width; ++t)
          merged.push_back(kLanes * width + lane * width + t);
      }
      SmallVector<Value> next;
      for (size_t i = 0; i < rows.size(); i += 2)
        next.push_back(
            vector::ShuffleOp::create(b, loc, rows[i], rows[i + 1], merged));
      rows = std::move(next);
    }
    return rows.front();
  }

  /// B's columns from block `block` on, `registers` blocks (the last one
  /// `lastLanes` columns wide, the others 16), interleaved into the panel:
  /// panel[j, g] holds, for each column of block j, its G elements of rows
  /// G g .. G g + G-1, zero past K and past the columns.
  void packPanel(Value block, int64_t registers, int64_t lastLanes) {
    VectorType row = VectorType::get({kLanes}, element);
    Value zeros = zerosOf(row);
    int64_t g = p.group();
    auto packGroup = [&](Value groupIndex, int64_t validRows) {
      Value k0 = arith::MulIOp::create(b, loc, groupIndex, index(g));
      for (int64_t j = 0; j < registers; ++j) {
        int64_t lanes = lanesOf(j, registers, lastLanes);
        Value column =
            arith::MulIOp::create(b, loc, add(block, j), index(kLanes));
        SmallVector<Value> rows;
        for (int64_t t = 0; t < g; ++t) {
          SmallVector<Value> at{add(k0, t), column};
          if (t >= validRows)
            rows.push_back(zeros);
          else if (lanes == kLanes)
            rows.push_back(vector::LoadOp::create(b, loc, row, plainB, at));
          else
            rows.push_back(vector::MaskedLoadOp::create(
                b, loc, row, plainB, at, mask(kLanes, lanes), zeros));
        }
        vector::StoreOp::create(b, loc, interleave(rows), bBlocks,
                                ValueRange{index(j), groupIndex, index(0)});
      }
    };
    int64_t fullGroups = p.depth / g;
    forRange(fullGroups, /*parallel=*/false,
             [&](Value groupIndex) { packGroup(groupIndex, g); });
    if (int64_t valid = p.depth % g)
      packGroup(index(fullGroups), valid);
    Value zeroGroup = zerosOf(VectorType::get({kLanes * g}, element));
    int64_t groups = llvm::divideCeil(p.depth, g);
    forRange(panelGroups() - groups, /*parallel=*/false, [&](Value extra) {
      for (int64_t j = 0; j < registers; ++j)
        vector::StoreOp::create(
            b, loc, zeroGroup, bBlocks,
            ValueRange{index(j), add(extra, groups), index(0)});
    });
  }
};

/// Register tiles of 8 rows x `registers` vector registers of sums, K
/// innermost, on vpdpbusd or vdpbf16ps.
class VectorDotTiles : public DotTileEmitter {
public:
  VectorDotTiles(OpBuilder &b, DotProduct p, Value a, Value plainB,
                 Value packedB, Value c)
      : DotTileEmitter(b, p, a, plainB, packedB, c) {
    sums = VectorType::get({kLanes}, accumulator);
    operands = VectorType::get({kLanes * p.group()}, element);
    group = VectorType::get({p.group()}, element);
  }

private:
  void emitRowTiles(Value block, int64_t registers, int64_t lastLanes,
                    bool parallel) override {
    int64_t full = p.rows / kTileRows * kTileRows;
    forRange(full, kTileRows, parallel && full >= 2 * kTileRows,
             [&](Value row) {
               emitTile(row, kTileRows, block, registers, lastLanes);
             });
    if (p.rows > full)
      emitTile(index(full), p.rows - full, block, registers, lastLanes);
  }

  /// The group A[row, k0 .. k0+G-1] (the first `valid` of it; the others
  /// read as 0) in each of the 16 lanes: 32 bits broadcast.
  Value broadcastA(Value row, Value k0, int64_t valid) {
    Value elements;
    if (valid == p.group())
      elements = vector::LoadOp::create(b, loc, group, a, ValueRange{row, k0});
    else
      elements =
          vector::MaskedLoadOp::create(b, loc, group, a, ValueRange{row, k0},
                                       mask(p.group(), valid), zerosOf(group));
    Type i32 = b.getI32Type();
    Value word =
        vector::BitCastOp::create(b, loc, VectorType::get({1}, i32), elements);
    Value scalar = vector::ExtractOp::create(b, loc, word, int64_t(0));
    Value splat = vector::BroadcastOp::create(
        b, loc, VectorType::get({kLanes}, i32), scalar);
    return vector::BitCastOp::create(b, loc, operands, splat);
  }

  /// One step of the tile: the group of G steps of K at `kGroupIndex`,
  /// accumulated into `accs` (row-major, `registers` per row).
  void step(Value firstRow, int64_t tileRows, Value block, int64_t registers,
            Value kGroupIndex, int64_t valid, SmallVectorImpl<Value> &accs) {
    SmallVector<Value> bRegisters;
    for (int64_t j = 0; j < registers; ++j)
      bRegisters.push_back(vector::LoadOp::create(
          b, loc, operands, bBlocks,
          ValueRange{blockOf(block, j), kGroupIndex, index(0)}));
    Value k0 = arith::MulIOp::create(b, loc, kGroupIndex, index(p.group()));
    StringAttr intrinsic = b.getStringAttr(
        p.kind == DotKind::Bytes ? "llvm.x86.avx512.vpdpbusd.512"
                                 : "llvm.x86.avx512bf16.dpbf16ps.512");
    for (int64_t r = 0; r < tileRows; ++r) {
      Value aGroup = broadcastA(add(firstRow, r), k0, valid);
      for (int64_t j = 0; j < registers; ++j) {
        Value &acc = accs[r * registers + j];
        // vpdpbusd's first source is the unsigned one; vdpbf16ps's order
        // does not matter.
        SmallVector<Value, 3> sources{acc, aGroup, bRegisters[j]};
        if (p.kind == DotKind::Bytes && !p.unsignedRows)
          std::swap(sources[1], sources[2]);
        acc = LLVM::CallIntrinsicOp::create(b, loc, sums, intrinsic, sources)
                  .getResult(0);
      }
    }
  }

  void emitTile(Value firstRow, int64_t tileRows, Value block,
                int64_t registers, int64_t lastLanes) {
    auto columnOf = [&](int64_t j) {
      return arith::MulIOp::create(b, loc, add(block, j), index(kLanes))
          .getResult();
    };
    Value zeroSums = zerosOf(sums);
    auto lanes = [&](int64_t j) { return lanesOf(j, registers, lastLanes); };
    SmallVector<Value> accs;
    for (int64_t r = 0; r < tileRows; ++r)
      for (int64_t j = 0; j < registers; ++j) {
        SmallVector<Value> indices{add(firstRow, r), columnOf(j)};
        accs.push_back(
            lanes(j) == kLanes
                ? vector::LoadOp::create(b, loc, sums, c, indices).getResult()
                : vector::MaskedLoadOp::create(b, loc, sums, c, indices,
                                               mask(kLanes, lanes(j)), zeroSums)
                      .getResult());
      }
    int64_t fullGroups = p.depth / p.group();
    if (fullGroups > 0) {
      auto loop = scf::ForOp::create(b, loc, index(0), index(fullGroups),
                                     index(1), accs);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(loop.getBody());
        SmallVector<Value> carried(loop.getRegionIterArgs());
        step(firstRow, tileRows, block, registers, loop.getInductionVar(),
             p.group(), carried);
        scf::YieldOp::create(b, loc, carried);
      }
      accs.assign(loop.getResults().begin(), loop.getResults().end());
    }
    if (int64_t valid = p.depth % p.group())
      step(firstRow, tileRows, block, registers, index(fullGroups), valid,
           accs);
    for (int64_t r = 0; r < tileRows; ++r)
      for (int64_t j = 0; j < registers; ++j) {
        SmallVector<Value> indices{add(firstRow, r), columnOf(j)};
        Value acc = accs[r * registers + j];
        if (lanes(j) == kLanes)
          vector::StoreOp::create(b, loc, acc, c, indices);
        else
          vector::MaskedStoreOp::create(b, loc, c, indices,
                                        mask(kLanes, lanes(j)), acc);
      }
  }

  VectorType sums, operands, group;
};

/// AMX tiles, all of one shape, 16 rows x 64 bytes: a C tile is 16 x 16
/// sums, an A tile 16 rows x 64 bytes of K, a B tile 16 groups x 16
/// columns (a packed block's 16 group rows, 64 bytes each). Each step of K
/// multiplies up to 2 A tiles by 2 B tiles into up to 2 x 2 C tiles held
/// across K (tdpbf16ps for bf16, tdpbusd for bytes), one B tile live at a
/// time: at most 7 of the 8 tile registers.
///
/// One shape for every tile because LLVM configures the tile registers
/// once per function (ldtilecfg) and gives each physical register one
/// shape: tiles of several edge shapes in one function run out of
/// registers. So the edges are padded instead: B's blocks hold K rounded
/// up to whole steps (zeros), A is copied into a zero-padded buffer when
/// its rows or K are not whole tiles, and C into one when its rows or
/// columns are not. The tiles are values of LLVM's x86_amx type, read and
/// written through addresses computed from the buffers' strided metadata;
/// LLVM writes the configuration and releases the tiles at the function's
/// end.
class AMXDotTiles : public DotTileEmitter {
public:
  /// Rows of a tile; bytes of a tile's row.
  static constexpr int64_t kRows = 16;
  static constexpr int64_t kRowBytes = 64;

  AMXDotTiles(OpBuilder &b, DotProduct p, Value a, Value plainB, Value packedB,
              Value c)
      : DotTileEmitter(b, p, a, plainB, packedB, c) {
    int64_t elementBytes = kGroupBytes / p.group();
    stepDepth = kRowBytes / elementBytes;
    paddedDepth = llvm::alignTo(p.depth, stepDepth);
    paddedRows = llvm::alignTo(p.rows, kRows);
    paddedColumns = llvm::alignTo(p.columns, kLanes);
    tileType = LLVM::LLVMX86AMXType::get(b.getContext());
  }

  /// The groups of K a B block needs for AMX tiles: K in whole steps.
  static int64_t paddedGroups(const DotProduct &p) {
    int64_t depth = kRowBytes / (kGroupBytes / p.group());
    return llvm::alignTo(p.depth, depth) / p.group();
  }

  void run(bool parallel) {
    aTiles = a;
    if (p.rows != paddedRows || p.depth != paddedDepth)
      aTiles = padded(a, paddedRows, paddedDepth, /*copyIn=*/true);
    cTiles = c;
    if (p.rows != paddedRows || p.columns != paddedColumns)
      cTiles = padded(c, paddedRows, paddedColumns, /*copyIn=*/true);
    emit(parallel);
    if (cTiles != c) {
      linalg::CopyOp::create(b, loc, corner(cTiles, p.rows, p.columns), c);
      memref::DeallocOp::create(b, loc, cTiles);
    }
    if (aTiles != a)
      memref::DeallocOp::create(b, loc, aTiles);
  }

private:
  int64_t panelGroups() const override { return paddedGroups(p); }

  /// The top-left `rows` x `columns` of `buffer`.
  Value corner(Value buffer, int64_t rows, int64_t columns) {
    SmallVector<OpFoldResult> offsets(2, b.getIndexAttr(0)),
        sizes{b.getIndexAttr(rows), b.getIndexAttr(columns)},
        strides(2, b.getIndexAttr(1));
    return memref::SubViewOp::create(b, loc, buffer, offsets, sizes, strides);
  }

  /// A zeroed `rows` x `columns` buffer holding `from` in its corner.
  Value padded(Value from, int64_t rows, int64_t columns, bool copyIn) {
    Type type = cast<MemRefType>(from.getType()).getElementType();
    Value buffer =
        memref::AllocOp::create(b, loc, MemRefType::get({rows, columns}, type),
                                b.getI64IntegerAttr(kRowBytes));
    Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(type));
    linalg::FillOp::create(b, loc, zero, buffer);
    auto fromType = cast<MemRefType>(from.getType());
    if (copyIn)
      linalg::CopyOp::create(
          b, loc, from,
          corner(buffer, fromType.getDimSize(0), fromType.getDimSize(1)));
    return buffer;
  }

  /// A buffer's address, as an index, and its row stride in bytes.
  struct Rows {
    Value base, stride;
    int64_t elementBytes;
  };

  Rows rowsOf(Value buffer) {
    auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, buffer);
    Value pointer = memref::ExtractAlignedPointerAsIndexOp::create(
        b, loc, metadata.getBaseBuffer());
    int64_t bytes =
        cast<MemRefType>(buffer.getType()).getElementTypeBitWidth() / 8;
    Value offset =
        arith::MulIOp::create(b, loc, metadata.getOffset(), index(bytes));
    auto strides = metadata.getStrides();
    Value stride = arith::MulIOp::create(b, loc, strides[strides.size() - 2],
                                         index(bytes));
    return {arith::AddIOp::create(b, loc, pointer, offset), stride, bytes};
  }

  Value i16(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI16Type(), v);
  }

  /// tileloadd64's or tilestored64's operands for the tile whose top-left
  /// element is (row, column) of `rows`: shape, address, row stride.
  SmallVector<Value> tileOperands(const Rows &rows, Value row, Value column) {
    Value at = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, row, rows.stride),
        arith::MulIOp::create(b, loc, column, index(rows.elementBytes)));
    Type i64 = b.getI64Type();
    Value address = arith::IndexCastUIOp::create(
        b, loc, i64, arith::AddIOp::create(b, loc, rows.base, at));
    Value pointer = LLVM::IntToPtrOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext()), address);
    Value stride = arith::IndexCastUIOp::create(b, loc, i64, rows.stride);
    return {i16(kRows), i16(kRowBytes), pointer, stride};
  }

  Value load(const Rows &rows, Value row, Value column) {
    return LLVM::CallIntrinsicOp::create(
               b, loc, tileType,
               b.getStringAttr("llvm.x86.tileloadd64.internal"),
               tileOperands(rows, row, column))
        .getResult(0);
  }

  void store(const Rows &rows, Value row, Value column, Value tile) {
    SmallVector<Value> operands = tileOperands(rows, row, column);
    operands.push_back(tile);
    LLVM::CallIntrinsicOp::create(
        b, loc, b.getStringAttr("llvm.x86.tilestored64.internal"), operands);
  }

  void emitRowTiles(Value block, int64_t registers, int64_t /*lastLanes*/,
                    bool parallel) override {
    Rows aRows = rowsOf(aTiles), cRows = rowsOf(cTiles);
    // B's blocks as rows of 64 bytes: [blocks x groups, 16 G].
    Value bFlat = memref::CollapseShapeOp::create(
        b, loc, bBlocks, SmallVector<ReassociationIndices>{{0, 1}, {2}});
    Rows bRows = rowsOf(bFlat);
    int64_t groups = cast<MemRefType>(bBlocks.getType()).getDimSize(1);
    int64_t pairRows = 2 * kRows;
    int64_t full = paddedRows / pairRows * pairRows;
    forRange(full, pairRows, parallel && full >= 2 * pairRows, [&](Value row) {
      emitTile(aRows, bRows, cRows, groups, row, 2, block, registers);
    });
    if (paddedRows > full)
      emitTile(aRows, bRows, cRows, groups, index(full), 1, block, registers);
  }

  /// The C tiles of rows `firstRow` on (`rowTiles` tiles) by `registers`
  /// blocks of columns from `block` on.
  void emitTile(const Rows &aRows, const Rows &bRows, const Rows &cRows,
                int64_t groups, Value firstRow, int64_t rowTiles, Value block,
                int64_t registers) {
    auto rowOf = [&](int64_t i) { return add(firstRow, i * kRows); };
    auto columnOf = [&](int64_t j) {
      return arith::MulIOp::create(b, loc, add(block, j), index(kLanes))
          .getResult();
    };
    SmallVector<Value> sums;
    for (int64_t i = 0; i < rowTiles; ++i)
      for (int64_t j = 0; j < registers; ++j)
        sums.push_back(load(cRows, rowOf(i), columnOf(j)));
    // Byte products reach AMX with B a packed weight: signed, A unsigned.
    StringAttr multiply = b.getStringAttr(p.kind == DotKind::BFloat16
                                              ? "llvm.x86.tdpbf16ps.internal"
                                              : "llvm.x86.tdpbusd.internal");
    auto loop = scf::ForOp::create(b, loc, index(0), index(paddedDepth),
                                   index(stepDepth), sums);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value k0 = loop.getInductionVar();
      SmallVector<Value> carried(loop.getRegionIterArgs());
      SmallVector<Value> aTilesNow;
      for (int64_t i = 0; i < rowTiles; ++i)
        aTilesNow.push_back(load(aRows, rowOf(i), k0));
      Value g0 = arith::DivUIOp::create(b, loc, k0, index(p.group()));
      for (int64_t j = 0; j < registers; ++j) {
        Value blockRow = arith::AddIOp::create(
            b, loc,
            arith::MulIOp::create(b, loc, blockOf(block, j), index(groups)),
            g0);
        Value bTile = load(bRows, blockRow, index(0));
        for (int64_t i = 0; i < rowTiles; ++i) {
          Value &sum = carried[i * registers + j];
          sum = LLVM::CallIntrinsicOp::create(
                    b, loc, tileType, multiply,
                    ValueRange{i16(kRows), i16(kRowBytes), i16(kRowBytes), sum,
                               aTilesNow[i], bTile})
                    .getResult(0);
        }
      }
      scf::YieldOp::create(b, loc, carried);
    }
    for (int64_t i = 0; i < rowTiles; ++i)
      for (int64_t j = 0; j < registers; ++j)
        store(cRows, rowOf(i), columnOf(j), loop.getResult(i * registers + j));
  }

  int64_t stepDepth, paddedDepth, paddedRows, paddedColumns;
  Value aTiles, cTiles;
  Type tileType;
};

/// The 2-D view of `buffer` at batch element `batchIndices` (its leading
/// dimensions), or `buffer` itself with no batch.
Value batchElement(OpBuilder &b, Location loc, Value buffer,
                   ValueRange batchIndices) {
  if (batchIndices.empty())
    return buffer;
  auto type = cast<MemRefType>(buffer.getType());
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> offsets(batchIndices.begin(), batchIndices.end());
  SmallVector<OpFoldResult> sizes(batchIndices.size(), b.getIndexAttr(1));
  for (int64_t d = rank - 2; d < rank; ++d) {
    offsets.push_back(b.getIndexAttr(0));
    sizes.push_back(b.getIndexAttr(type.getDimSize(d)));
  }
  SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
  MemRefType viewType = memref::SubViewOp::inferRankReducedResultType(
      type.getShape().take_back(2), type, offsets, sizes, strides);
  return memref::SubViewOp::create(b, loc, viewType, buffer, offsets, sizes,
                                   strides);
}

class LoomCPUVectorizeDotProductsPass
    : public impl::LoomCPUVectorizeDotProductsPassBase<
          LoomCPUVectorizeDotProductsPass> {
public:
  using LoomCPUVectorizeDotProductsPassBase::
      LoomCPUVectorizeDotProductsPassBase;

  void runOnOperation() override {
    SmallVector<DotProduct> products;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (!op.hasPureBufferSemantics())
        return;
      std::optional<DotProduct> p = matchDotProduct(op);
      if (!p || !enabled(p->kind))
        return;
      // A packed byte weight is the signed operand; B's panels otherwise
      // take either.
      if (p->packed && p->kind == DotKind::Bytes && !p->unsignedRows)
        return;
      // A's rows are read a group at a time, B's plain rows and C's a
      // register at a time: all innermost-contiguous. A packed B is the
      // packed constant's buffer.
      Type bType = op.getDpsInputs()[1].getType();
      if (!innermostContiguous(op.getDpsInputs()[0].getType()) ||
          !innermostContiguous(op.getDpsInits()[0].getType()) ||
          (p->packed ? !cast<MemRefType>(bType).getLayout().isIdentity()
                     : !innermostContiguous(bType)))
        return;
      // C in registers across K: A and B must not be C.
      Value out = viewedBuffer(op.getDpsInits()[0]);
      if (llvm::any_of(op.getDpsInputs(),
                       [&](Value in) { return viewedBuffer(in) == out; }))
        return;
      products.push_back(*p);
    });
    IRRewriter rewriter(&getContext());
    for (DotProduct &p : products) {
      linalg::LinalgOp op = p.op;
      Location loc = op.getLoc();
      rewriter.setInsertionPoint(op);
      Value packedB;
      if (p.packed)
        packedB = memref::CollapseShapeOp::create(
            rewriter, loc, op.getDpsInputs()[1],
            SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
      int64_t flops = 2 * p.rows * p.columns * p.depth;
      bool nested = op->getParentOfType<scf::ParallelOp>() != nullptr;
      bool parallel = parallelFlops > 0 && flops >= parallelFlops && !nested;
      // The batch elements one after another, each a 2-D product on views.
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      SmallVector<Value> batchIndices;
      for (unsigned d : p.batch) {
        Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
        Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
        Value count = arith::ConstantIndexOp::create(rewriter, loc, ranges[d]);
        auto loop = scf::ForOp::create(rewriter, loc, zero, count, one);
        rewriter.setInsertionPoint(loop.getBody()->getTerminator());
        batchIndices.push_back(loop.getInductionVar());
      }
      ValueRange none;
      Value a = batchElement(rewriter, loc, op.getDpsInputs()[0],
                             p.batchedA ? ValueRange(batchIndices) : none);
      Value plainB;
      if (!p.packed)
        plainB = batchElement(rewriter, loc, op.getDpsInputs()[1],
                              p.batchedB ? ValueRange(batchIndices) : none);
      Value c = batchElement(rewriter, loc, op.getDpsInits()[0], batchIndices);
      if (usesAMX(p))
        AMXDotTiles(rewriter, p, a, plainB, packedB, c).run(parallel);
      else
        VectorDotTiles(rewriter, p, a, plainB, packedB, c).emit(parallel);
      rewriter.eraseOp(op);
    }
  }

private:
  bool enabled(DotKind kind) const {
    return kind == DotKind::Bytes ? bytes : bfloat16;
  }

  /// Whether `p` runs on AMX tiles.
  bool usesAMX(DotProduct p) const {
    bool amx = p.kind == DotKind::Bytes ? amxBytes : amxBFloat16;
    if (!amx)
      return false;
    // Byte products whose B is interleaved at run time (the channel-major
    // convolutions) measured slower on AMX than on vpdpbusd (resnet50_int8:
    // conv1, 8 x 147 weight rows, 17.2 -> 21.9 us): their few weight rows
    // fill half a tile, and the panels cost the same on both.
    if (p.kind == DotKind::Bytes && !p.packed)
      return false;
    // A packed B must hold K in whole steps (the packing's amx option).
    if (p.packed)
      return cast<MemRefType>(p.op.getDpsInputs()[1].getType()).getDimSize(1) >=
             AMXDotTiles::paddedGroups(p);
    return true;
  }
};

} // namespace
} // namespace loom::cpu
