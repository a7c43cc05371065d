//===- VectorizeByteProducts.cpp - Quantized products on VNNI -------------===//
//
// Byte products (convert-loom-to-linalg's byte-products form, the products
// of quantized models): C[m, n] += zext(A[m, k]) * sext(B[k, n]), A and B
// of i8, C of i32. AVX512-VNNI's vpdpbusd multiplies 64 unsigned bytes by
// 64 signed bytes and adds each group of four products into one of 16 i32
// lanes: 64 multiply-adds per instruction, against 16 for i32 operands
// (vpmulld + vpaddd), on operands a quarter of the size.
//
// loom-cpu-pack-byte-weights stores a constant B the way vpdpbusd reads
// it: lane j of a register holds the four bytes B[4g .. 4g+3][16b + j],
// so B becomes [ceil(N / 16), ceil(K / 4), 16, 4]; an activation's columns
// (a convolution's channel-major form) are interleaved the same way at run
// time, one panel per tile column. The register tiles
// (loom-cpu-vectorize-byte-products) are 8 rows x 2 registers of 16
// columns, K innermost: per group of four steps of K, two 64-byte loads of
// B and, per row, four bytes of A broadcast to the 16 lanes and two
// vpdpbusd. Sixteen accumulators, two B registers and a broadcast fit the
// 32 registers.
//
//===----------------------------------------------------------------------===//

#include "loom/Target/CPU/Passes.h"

#include "TargetUtils.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cstring>

namespace loom::cpu {
#define GEN_PASS_DEF_LOOMCPUPACKBYTEWEIGHTSPASS
#define GEN_PASS_DEF_LOOMCPUVECTORIZEBYTEPRODUCTSPASS
#include "loom/Target/CPU/Passes.h.inc"
} // namespace loom::cpu

using namespace mlir;

namespace loom::cpu {
namespace {

/// vpdpbusd's lanes: 16 i32 sums, each of four byte products.
constexpr int64_t kLanes = 16;
constexpr int64_t kGroup = 4;
/// Rows of a register tile and its registers of columns.
constexpr int64_t kTileRows = 8;
constexpr int64_t kTileRegisters = 2;

/// A 2-D byte product and the loops of its rows (m), columns (n) and
/// reduction (k), with their static sizes.
struct ByteProduct {
  linalg::GenericOp op;
  unsigned m, n, k;
  int64_t rows, columns, depth;
  /// Whether B is read packed, through (n floordiv 16, k floordiv 4,
  /// n mod 16, k mod 4); otherwise plainly, through (k, n).
  bool packed;
  /// Whether A is the unsigned operand (an activation's rows; B is then the
  /// signed weight) or B is (an activation's columns, A the weight).
  bool unsignedRows;
};

AffineMap packedMap(unsigned n, unsigned k, MLIRContext *ctx) {
  AffineExpr dn = getAffineDimExpr(n, ctx), dk = getAffineDimExpr(k, ctx);
  return AffineMap::get(
      3, 0,
      {dn.floorDiv(kLanes), dk.floorDiv(kGroup), dn % kLanes, dk % kGroup},
      ctx);
}

std::optional<ByteProduct> matchByteProduct(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op.getNumLoops() != 3)
    return std::nullopt;
  std::optional<unsigned> unsignedInput = byteProductUnsignedInput(op);
  if (!unsignedInput)
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  auto dims = [](AffineMap map) -> std::optional<SmallVector<unsigned>> {
    SmallVector<unsigned> positions;
    for (AffineExpr e : map.getResults()) {
      auto dim = dyn_cast<AffineDimExpr>(e);
      if (!dim)
        return std::nullopt;
      positions.push_back(dim.getPosition());
    }
    return positions;
  };
  std::optional<SmallVector<unsigned>> a = dims(maps[0]), c = dims(maps[2]);
  if (!a || !c || a->size() != 2 || c->size() != 2 || (*a)[0] != (*c)[0])
    return std::nullopt;
  ByteProduct p;
  p.op = op;
  p.unsignedRows = *unsignedInput == 0;
  p.m = (*c)[0];
  p.n = (*c)[1];
  p.k = (*a)[1];
  if (p.k == p.m || p.k == p.n || p.m == p.n)
    return std::nullopt;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (iterators[p.k] != utils::IteratorType::reduction ||
      iterators[p.m] != utils::IteratorType::parallel ||
      iterators[p.n] != utils::IteratorType::parallel)
    return std::nullopt;
  MLIRContext *ctx = op.getContext();
  if (maps[1] == packedMap(p.n, p.k, ctx))
    p.packed = true;
  else if (maps[1] == AffineMap::get(3, 0,
                                     {getAffineDimExpr(p.k, ctx),
                                      getAffineDimExpr(p.n, ctx)},
                                     ctx))
    p.packed = false;
  else
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  p.rows = ranges[p.m];
  p.columns = ranges[p.n];
  p.depth = ranges[p.k];
  if (llvm::any_of(
          ranges, [](int64_t r) { return ShapedType::isDynamic(r) || r <= 0; }))
    return std::nullopt;
  return p;
}

//===----------------------------------------------------------------------===//
// loom-cpu-pack-byte-weights
//===----------------------------------------------------------------------===//

/// [K, N] bytes as [ceil(N / 16), ceil(K / 4), 16, 4], zero-padded.
std::vector<char> packForDotProducts(ArrayRef<char> from, int64_t k,
                                     int64_t n) {
  int64_t blocks = llvm::divideCeil(n, kLanes);
  int64_t groups = llvm::divideCeil(k, kGroup);
  std::vector<char> to(blocks * groups * kLanes * kGroup, 0);
  for (int64_t row = 0; row < k; ++row)
    for (int64_t column = 0; column < n; ++column) {
      int64_t block = column / kLanes, lane = column % kLanes;
      int64_t group = row / kGroup, step = row % kGroup;
      to[((block * groups + group) * kLanes + lane) * kGroup + step] =
          from[row * n + column];
    }
  return to;
}

class LoomCPUPackByteWeightsPass
    : public impl::LoomCPUPackByteWeightsPassBase<LoomCPUPackByteWeightsPass> {
public:
  void runOnOperation() override {
    SmallVector<ByteProduct> products;
    getOperation().walk([&](linalg::GenericOp op) {
      if (!op.hasPureTensorSemantics())
        return;
      std::optional<ByteProduct> p = matchByteProduct(op);
      if (p && !p->packed && p->unsignedRows &&
          op.getDpsInputs()[1].getDefiningOp<arith::ConstantOp>())
        products.push_back(*p);
    });
    // One packed constant per weight, however many products read it.
    llvm::DenseMap<Attribute, Value> packedOf;
    IRRewriter rewriter(&getContext());
    MLIRContext *ctx = &getContext();
    for (ByteProduct &p : products) {
      linalg::GenericOp op = p.op;
      auto constant = op.getDpsInputs()[1].getDefiningOp<arith::ConstantOp>();
      auto attr = dyn_cast<ElementsAttr>(constant.getValue());
      ArrayRef<char> bytes = attr ? denseBytes(attr) : ArrayRef<char>();
      if (bytes.size() != size_t(p.depth * p.columns))
        continue;
      Value &packed = packedOf[attr];
      if (!packed) {
        auto type = RankedTensorType::get(
            {int64_t(llvm::divideCeil(p.columns, kLanes)),
             int64_t(llvm::divideCeil(p.depth, kGroup)), kLanes, kGroup},
            rewriter.getI8Type());
        // The weight's storage stays the importer's choice.
        ElementsAttr value = constantLike(
            attr, type, packForDotProducts(bytes, p.depth, p.columns), "_vnni");
        rewriter.setInsertionPointAfter(constant);
        packed = arith::ConstantOp::create(rewriter, constant.getLoc(),
                                           cast<TypedAttr>(value));
      }
      replaceRightOperand(rewriter, op, packed, packedMap(p.n, p.k, ctx));
      if (constant->use_empty())
        rewriter.eraseOp(constant);
    }
  }
};

//===----------------------------------------------------------------------===//
// loom-cpu-vectorize-byte-products
//===----------------------------------------------------------------------===//

/// Emits the register tiles of one byte product on buffers. With unsigned
/// rows (an activation times a weight packed at compile time), B's
/// registers are read from the packed weight; with unsigned columns (a
/// weight times an activation's columns, a convolution's channel-major
/// form), each tile column's panel of B is interleaved at run time into
/// the same layout, [ceil(K / 4), registers, 64], and read from there by
/// every row tile.
class ByteTileEmitter {
public:
  ByteTileEmitter(OpBuilder &b, ByteProduct p, Value packedB)
      : b(b), p(p), loc(p.op.getLoc()), a(p.op.getDpsInputs()[0]),
        plainB(p.op.getDpsInputs()[1]), packedB(packedB),
        c(p.op.getDpsInits()[0]) {
    i8 = b.getI8Type();
    i32 = b.getI32Type();
    sums = VectorType::get({kLanes}, i32);
    bytes = VectorType::get({kLanes * kGroup}, i8);
    group = VectorType::get({kGroup}, i8);
  }

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

private:
  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }

  /// for (iv = 0; iv < count; ++iv) body(iv): a parallel loop when
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

  /// The row tiles of the columns from block `block` on, `registers`
  /// registers wide, the last one `lastLanes` lanes.
  void emitRows(Value block, int64_t registers, int64_t lastLanes,
                bool parallel) {
    memref::AllocOp allocated;
    if (!p.unsignedRows) {
      auto type = MemRefType::get({int64_t(llvm::divideCeil(p.depth, kGroup)),
                                   registers, kLanes * kGroup},
                                  i8);
      allocated =
          memref::AllocOp::create(b, loc, type, b.getI64IntegerAttr(64));
      panel = allocated;
      packPanel(block, registers, lastLanes);
    }
    int64_t full = p.rows / kTileRows * kTileRows;
    forRange(full, kTileRows, parallel && full >= 2 * kTileRows,
             [&](Value row) {
               emitTile(row, kTileRows, block, registers, lastLanes);
             });
    if (p.rows > full)
      emitTile(index(full), p.rows - full, block, registers, lastLanes);
    if (allocated)
      memref::DeallocOp::create(b, loc, allocated);
  }

  /// The lanes of C register `j` of a tile `registers` wide whose last
  /// register holds `lastLanes` columns.
  static int64_t lanesOf(int64_t j, int64_t registers, int64_t lastLanes) {
    return j + 1 == registers ? lastLanes : kLanes;
  }

  /// B's columns from block `block` on, `registers` blocks (the last one
  /// `lastLanes` columns wide, the others 16), interleaved into `panel`:
  /// panel[g, j] holds, for each column of block j, its four bytes of rows
  /// 4g .. 4g+3, zero past K and past the columns.
  void packPanel(Value block, int64_t registers, int64_t lastLanes) {
    VectorType row = VectorType::get({kLanes}, i8);
    Value zeros = arith::ConstantOp::create(
        b, loc, row, DenseElementsAttr::get(row, b.getI8IntegerAttr(0)));
    SmallVector<int64_t> pairs, quads;
    for (int64_t i = 0; i < kLanes; ++i) {
      pairs.append({i, kLanes + i});
      quads.append(
          {2 * i, 2 * i + 1, 2 * kLanes + 2 * i, 2 * kLanes + 2 * i + 1});
    }
    auto packGroup = [&](Value g, int64_t validRows) {
      Value k0 = arith::MulIOp::create(b, loc, g, index(kGroup));
      for (int64_t j = 0; j < registers; ++j) {
        int64_t lanes = lanesOf(j, registers, lastLanes);
        Value column =
            arith::MulIOp::create(b, loc, add(block, j), index(kLanes));
        SmallVector<Value> rows;
        for (int64_t t = 0; t < kGroup; ++t) {
          SmallVector<Value> at{add(k0, t), column};
          if (t >= validRows)
            rows.push_back(zeros);
          else if (lanes == kLanes)
            rows.push_back(vector::LoadOp::create(b, loc, row, plainB, at));
          else
            rows.push_back(vector::MaskedLoadOp::create(
                b, loc, row, plainB, at, mask(kLanes, lanes), zeros));
        }
        Value low = vector::ShuffleOp::create(b, loc, rows[0], rows[1], pairs);
        Value high = vector::ShuffleOp::create(b, loc, rows[2], rows[3], pairs);
        Value interleaved = vector::ShuffleOp::create(b, loc, low, high, quads);
        vector::StoreOp::create(b, loc, interleaved, panel,
                                ValueRange{g, index(j), index(0)});
      }
    };
    int64_t fullGroups = p.depth / kGroup;
    forRange(fullGroups, /*parallel=*/false,
             [&](Value g) { packGroup(g, kGroup); });
    if (int64_t valid = p.depth % kGroup)
      packGroup(index(fullGroups), valid);
  }

  Value add(Value x, int64_t y) {
    if (y == 0)
      return x;
    return arith::AddIOp::create(b, loc, x, index(y));
  }

  /// A mask of the first `lanes` of `length`.
  Value mask(int64_t length, int64_t lanes) {
    return vector::ConstantMaskOp::create(
        b, loc, VectorType::get({length}, b.getI1Type()),
        ArrayRef<int64_t>{lanes});
  }

  /// The four bytes A[row, k0 .. k0+3] (the first `valid` of them; the
  /// others read as 0) in each of the 16 lanes.
  Value broadcastA(Value row, Value k0, int64_t valid) {
    Value four;
    if (valid == kGroup) {
      four = vector::LoadOp::create(b, loc, group, a, ValueRange{row, k0});
    } else {
      Value zeros = arith::ConstantOp::create(
          b, loc, group, DenseElementsAttr::get(group, b.getI8IntegerAttr(0)));
      four = vector::MaskedLoadOp::create(b, loc, group, a, ValueRange{row, k0},
                                          mask(kGroup, valid), zeros);
    }
    Value word =
        vector::BitCastOp::create(b, loc, VectorType::get({1}, i32), four);
    Value scalar = vector::ExtractOp::create(b, loc, word, int64_t(0));
    Value splat = vector::BroadcastOp::create(b, loc, sums, scalar);
    return vector::BitCastOp::create(b, loc, bytes, splat);
  }

  /// One step of the tile: the group of four steps of K at `kGroupIndex`,
  /// accumulated into `accs` (row-major, `registers` per row).
  void step(Value firstRow, int64_t tileRows, Value block, int64_t registers,
            Value kGroupIndex, int64_t valid, SmallVectorImpl<Value> &accs) {
    SmallVector<Value> bRegisters;
    for (int64_t j = 0; j < registers; ++j)
      bRegisters.push_back(
          p.unsignedRows ? vector::LoadOp::create(
                               b, loc, bytes, packedB,
                               ValueRange{add(block, j), kGroupIndex, index(0)})
                         : vector::LoadOp::create(
                               b, loc, bytes, panel,
                               ValueRange{kGroupIndex, index(j), index(0)}));
    Value k0 = arith::MulIOp::create(b, loc, kGroupIndex, index(kGroup));
    StringAttr vpdpbusd = b.getStringAttr("llvm.x86.avx512.vpdpbusd.512");
    for (int64_t r = 0; r < tileRows; ++r) {
      Value aBytes = broadcastA(add(firstRow, r), k0, valid);
      for (int64_t j = 0; j < registers; ++j) {
        Value &acc = accs[r * registers + j];
        // vpdpbusd's first operand is the unsigned one.
        SmallVector<Value, 3> operands{acc, aBytes, bRegisters[j]};
        if (!p.unsignedRows)
          std::swap(operands[1], operands[2]);
        acc = LLVM::CallIntrinsicOp::create(b, loc, sums, vpdpbusd, operands)
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
    Value zeroSums = arith::ConstantOp::create(
        b, loc, sums, DenseElementsAttr::get(sums, b.getI32IntegerAttr(0)));
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
    int64_t fullGroups = p.depth / kGroup;
    if (fullGroups > 0) {
      auto loop = scf::ForOp::create(b, loc, index(0), index(fullGroups),
                                     index(1), accs);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(loop.getBody());
        SmallVector<Value> carried(loop.getRegionIterArgs());
        step(firstRow, tileRows, block, registers, loop.getInductionVar(),
             kGroup, carried);
        scf::YieldOp::create(b, loc, carried);
      }
      accs.assign(loop.getResults().begin(), loop.getResults().end());
    }
    if (int64_t valid = p.depth % kGroup)
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

  OpBuilder &b;
  ByteProduct p;
  Location loc;
  Value a, plainB, packedB, c;
  /// With unsigned columns: the current tile column's interleaved panel.
  Value panel;
  Type i8, i32;
  VectorType sums, bytes, group;
};

class LoomCPUVectorizeByteProductsPass
    : public impl::LoomCPUVectorizeByteProductsPassBase<
          LoomCPUVectorizeByteProductsPass> {
public:
  using LoomCPUVectorizeByteProductsPassBase::
      LoomCPUVectorizeByteProductsPassBase;

  void runOnOperation() override {
    SmallVector<ByteProduct> products;
    getOperation().walk([&](linalg::GenericOp op) {
      if (!op.hasPureBufferSemantics())
        return;
      std::optional<ByteProduct> p = matchByteProduct(op);
      // Unsigned rows read B packed at compile time; unsigned columns
      // interleave B's panels themselves.
      if (!p || p->packed != p->unsignedRows)
        return;
      // A's rows are read four bytes at a time, B's plain rows and C's a
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
    for (ByteProduct &p : products) {
      linalg::GenericOp op = p.op;
      rewriter.setInsertionPoint(op);
      Value packedB;
      if (p.packed)
        packedB = memref::CollapseShapeOp::create(
            rewriter, op.getLoc(), op.getDpsInputs()[1],
            SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
      int64_t flops = 2 * p.rows * p.columns * p.depth;
      bool nested = op->getParentOfType<scf::ParallelOp>() != nullptr;
      bool parallel = parallelFlops > 0 && flops >= parallelFlops && !nested;
      ByteTileEmitter(rewriter, p, packedB).emit(parallel);
      rewriter.eraseOp(op);
    }
  }
};

} // namespace
} // namespace loom::cpu
