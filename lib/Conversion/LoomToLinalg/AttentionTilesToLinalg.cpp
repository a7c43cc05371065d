//===- AttentionTilesToLinalg.cpp - Attention in tiles --------------------===//
//
// loom.attention as flash attention: tiles of queries and keys with an
// online softmax, one batch item and key/value head per iteration of an
// scf.forall; the scores are never materialized.
//
//===----------------------------------------------------------------------===//

#include "loom/Conversion/LoomToLinalg/LoomToLinalg.h"

#include "Attention.h"
#include "Utils.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace loom::lowering {
namespace {

/// Query rows and keys per tile: the scores of one tile are
/// [B, H, kAttentionQueryTile, kAttentionKeyTile].
constexpr int64_t kAttentionQueryTile = 32;
constexpr int64_t kAttentionKeyTile = 128;
/// With query rows known only at run time, the whole tiles have this many
/// rows, a register tile's (VectorizeContractions: 8 on AVX-512 and AVX2),
/// and the rows left after them go one at a time (a decode step is one
/// such row). Tiles of 32 left a prompt of 16 tokens to single rows:
/// llama_dyn's attention at [2, 16] took 10.5 us a layer with tiles of 32,
/// 6.5 with tiles of 8, and the same at [1, 40] and [1, 128] (one thread,
/// loom-run --profile). Each tile shape is one more copy of the tile's
/// code: a third shape between these two doubled loomc's time for an
/// attention op (4 -> 9 s).
constexpr int64_t kAttentionRunTimeQueryTile = 8;
/// With keys known only at run time, the keys left after the whole tiles
/// go in tiles of this many.
constexpr int64_t kAttentionTailKeyTile = 16;

/// Whether lowerAttentionInTiles can take `mask`: with grouped query heads
/// the rows of a tile mix heads, so the mask must not vary by head.
bool maskFitsGroupedRows(Value mask, int64_t group) {
  if (!mask || group == 1)
    return true;
  auto shape = cast<RankedTensorType>(mask.getType()).getShape();
  return shape.size() < 3 || shape[shape.size() - 3] == 1;
}

/// Whether the tiled lowering can read `mask`'s part of each tile: every
/// dimension of the mask is 1 (broadcast), known only at run time (then
/// aligned with the scores by alignMaskToScores), or the scores' own
/// static size.
bool maskFitsTiles(Value mask, ArrayRef<int64_t> scoreShape) {
  if (!mask)
    return true;
  auto shape = cast<RankedTensorType>(mask.getType()).getShape();
  int64_t rank = shape.size();
  for (int64_t i = 0; i < rank; ++i) {
    int64_t scoreSize = scoreShape[4 - rank + i];
    if (shape[i] != 1 && !ShapedType::isDynamic(shape[i]) &&
        shape[i] != scoreSize)
      return false;
  }
  return true;
}

/// Flash-attention-style lowering of loom.attention of one batch item and
/// key/value head (lowerAttentionInTiles calls it for each).
///
/// The query heads that share a key/value head are stacked as rows: a tile
/// of `sq` query rows is [B, Hkv, R = group * sq, D], so both products are
/// plain batched matrix products -- scores [B, Hkv, R, tk] = Q tile x K^T
/// tile (K transposed once, [B, Hkv, D, T]) and acc += P x V tile -- which
/// the CPU target's register-tiled contractions take.
///
/// An scf.for over query tiles, and in it an scf.for over key tiles that
/// carries, per row, the running maximum `m`, the running sum of
/// exponentials `l` (both [B, Hkv, R, 1]) and the running weighted sum of
/// values `acc` ([B, Hkv, R, Dv]), updated in place. Each key tile rescales
/// them by exp(m_old - m_new); after the last, acc / l is the softmax-
/// weighted sum, and no score tensor larger than one tile ever exists.
/// Accumulation is in `element` (f32 for 16-bit floats).
///
/// Every tile has a static shape, so that the products stay register
/// tiles whatever the sizes. With S and T known at compile time, tiles
/// that do not divide them are one more, smaller tile after the loop.
/// With S known only at run time, query rows go in tiles of 8, then one
/// at a time (a decode step of one token is one tile of one row). With T
/// known only at run time, keys go in tiles of 128, then 16; a last tile
/// of 16 that reaches past T is read into zeros and its missing keys
/// masked.
Value lowerAttentionTilesOfBatch(OpBuilder &rewriter, Location loc,
                                 AttentionOp op, Value q, Value k, Value v,
                                 Value mask, Type resultElement, Type element,
                                 double scale) {
  MLIRContext *ctx = rewriter.getContext();
  auto qShape = cast<RankedTensorType>(q.getType()).getShape();
  auto kShape = cast<RankedTensorType>(k.getType()).getShape();
  auto vShape = cast<RankedTensorType>(v.getType()).getShape();
  int64_t batch = qShape[0], heads = qShape[1], s = qShape[2], d = qShape[3];
  int64_t kvHeads = kShape[1], t = kShape[2], dv = vShape[3];
  int64_t group = heads / kvHeads;
  bool causal = op.getIsCausal();
  bool positional = op.hasPositionalMask();
  int64_t leftWindow = op.leftWindowSize(), rightWindow = op.rightWindowSize();
  // Keys past a frontier (causal, or a right window) and before one (a left
  // window) are masked: their tiles are skipped.
  bool frontierAfter = causal || rightWindow >= 0;
  bool dynamicQueries = ShapedType::isDynamic(s);
  bool dynamicKeys = ShapedType::isDynamic(t);
  Type inputElement = cast<RankedTensorType>(q.getType()).getElementType();
  auto dim = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  auto index = [&](OpBuilder &b, int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  auto tensorOf = [&](ArrayRef<int64_t> shape, Type elementType) {
    return RankedTensorType::get(shape, elementType);
  };
  Value queries = indexDim(rewriter, loc, q, 2);
  Value keys = indexDim(rewriter, loc, k, 2);
  // Query row s0 + i stands at key position s0 + i + positionOffset:
  // T - S aligned to the end, 0 to the start.
  Value positionOffset;
  if (positional)
    positionOffset =
        op.getStartAligned()
            ? index(rewriter, 0)
            : Value(arith::SubIOp::create(rewriter, loc, keys, queries));
  // A slice of a 4-D tensor: `size` elements at `offset` in dimension
  // `sliced`, the other dimensions (static) whole.
  auto sliceOf = [&](OpBuilder &b, Value source, int64_t sliced, Value offset,
                     OpFoldResult size) {
    auto shape = cast<RankedTensorType>(source.getType()).getShape();
    SmallVector<OpFoldResult> offsets(4, b.getIndexAttr(0)), sizes;
    offsets[sliced] = offset;
    for (int64_t i = 0; i < 4; ++i)
      sizes.push_back(i == sliced ? size : b.getIndexAttr(shape[i]));
    SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
    return tensor::ExtractSliceOp::create(b, loc, source, offsets, sizes,
                                          strides)
        .getResult();
  };
  // `tile`, whose dimension `padded` holds `count` (< `width`) elements,
  // as a tile of `width` there, the rest zeros.
  auto zeroPadded = [&](OpBuilder &b, Value tile, int64_t padded, Value count,
                        int64_t width) {
    auto tileType = cast<RankedTensorType>(tile.getType());
    SmallVector<int64_t> shape(tileType.getShape());
    shape[padded] = width;
    Value full = zeroFilled(b, loc, tensorOf(shape, tileType.getElementType()));
    int64_t rank = shape.size();
    SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), sizes;
    for (int64_t i = 0; i < rank; ++i)
      sizes.push_back(i == padded ? OpFoldResult(count)
                                  : b.getIndexAttr(shape[i]));
    SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
    return tensor::InsertSliceOp::create(b, loc, tile, full, offsets, sizes,
                                         strides)
        .getResult();
  };
  // K^T, [B, Hkv, D, T], once: its tiles are the products' right operands.
  SmallVector<Value> keySizes;
  if (dynamicKeys)
    keySizes.push_back(keys);
  Value keysT = linalg::TransposeOp::create(
                    rewriter, loc, k,
                    tensor::EmptyOp::create(
                        rewriter, loc, ArrayRef<int64_t>{batch, kvHeads, d, t},
                        inputElement, keySizes),
                    ArrayRef<int64_t>{0, 1, 3, 2})
                    .getResult()[0];
  SmallVector<utils::IteratorType> parallel4(4, utils::IteratorType::parallel);
  SmallVector<utils::IteratorType> reduce4(3, utils::IteratorType::parallel);
  reduce4.push_back(utils::IteratorType::reduction);
  SmallVector<utils::IteratorType> contract5(parallel4);
  contract5.push_back(utils::IteratorType::reduction);
  AffineMap id4 = AffineMap::getMultiDimIdentityMap(4, ctx);
  // Per-row state is [B, Hkv, R, 1], so that it broadcasts against tiles.
  AffineMap rows4 = AffineMap::get(
      4, 0, {dim(0), dim(1), dim(2), getAffineConstantExpr(0, ctx)}, ctx);
  SmallVector<AffineMap> productMaps{
      AffineMap::get(5, 0, {dim(0), dim(1), dim(2), dim(4)}, ctx),
      AffineMap::get(5, 0, {dim(0), dim(1), dim(4), dim(3)}, ctx),
      AffineMap::get(5, 0, {dim(0), dim(1), dim(2), dim(3)}, ctx)};
  auto product = [&](OpBuilder &b, Value lhs, Value rhs, Value init) {
    return linalg::GenericOp::create(
               b, loc, TypeRange{init.getType()}, ValueRange{lhs, rhs},
               ValueRange{init}, productMaps, contract5,
               [](B &b, L loc, V x) {
                 linalg::YieldOp::create(
                     b, loc, multiplyAccumulate(b, loc, x[0], x[1], x[2]));
               })
        .getResult(0);
  };
  // `combine(input, target)` into `target`, in place.
  auto update = [&](OpBuilder &b, Value target, Value input, AffineMap inputMap,
                    AffineMap targetMap,
                    ArrayRef<utils::IteratorType> iterators,
                    function_ref<Value(B &, L, Value, Value)> combine) {
    return linalg::GenericOp::create(
               b, loc, TypeRange{target.getType()}, ValueRange{input},
               ValueRange{target}, SmallVector<AffineMap>{inputMap, targetMap},
               iterators,
               [&](B &b, L loc, V x) {
                 linalg::YieldOp::create(b, loc, combine(b, loc, x[0], x[1]));
               })
        .getResult(0);
  };
  Value minusInf = extremeValue(rewriter, loc, element, /*lowest=*/true);
  Value zero = scalarConstant(rewriter, loc, element, 0);
  // exp(x - m) with m = -inf (a row with nothing seen yet) taken as 0.
  auto shiftedExp = [&](OpBuilder &b, Value x, Value m) -> Value {
    Value unseen =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, m, minusInf);
    Value base = arith::SelectOp::create(b, loc, unseen, zero, m);
    return math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, x, base));
  };

  // One key tile of `tk` keys from t0: updates (m, l, acc) of the query
  // tile `qTile`. With `count` set, only that many keys are left (fewer
  // than tk): the tile is read into zeros and the keys past T masked.
  auto keyTile = [&](OpBuilder &b, Value s0, int64_t sq, Value qTile, Value t0,
                     int64_t tk, Value count, ValueRange state) {
    Value m = state[0], l = state[1], acc = state[2];
    int64_t rows = group * sq;
    OpFoldResult keysRead = count ? OpFoldResult(count) : b.getIndexAttr(tk);
    auto scoreType = tensorOf({batch, kvHeads, rows, tk}, element);
    // A tile of K^T or V: `tk` keys from t0 in `dimension`, zeros past T.
    auto keysOf = [&](Value source, int64_t dimension) {
      Value tile = sliceOf(b, source, dimension, t0, keysRead);
      return count ? zeroPadded(b, tile, dimension, count, tk) : tile;
    };
    Value keyTileT = keysOf(keysT, 3);
    Value scores = product(b, qTile, keyTileT, zeroFilled(b, loc, scoreType));
    // Row r of the tile is query row s0 + r mod sq (of head r floordiv sq
    // in the group).
    AffineExpr queryRow = group == 1 ? dim(2) : dim(2) % sq;
    SmallVector<Value> inputs{scores};
    SmallVector<AffineMap> maps{id4};
    if (mask) {
      // The mask's part for these query rows and keys; the dimensions it
      // broadcasts (size 1) stay whole. Its other dimensions are the
      // scores' (lowerAttentionInTiles aligns those known at run time).
      auto shape = cast<RankedTensorType>(mask.getType()).getShape();
      int64_t rank = shape.size();
      SmallVector<int64_t> tileSizes{batch, heads, sq, tk};
      SmallVector<OpFoldResult> offsets, sizes;
      SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
      SmallVector<AffineExpr> exprs;
      int64_t colsAt = -1;
      for (int64_t i = 0; i < rank; ++i) {
        int64_t scoreDim = 4 - rank + i;
        bool broadcast = shape[i] == 1;
        bool rowsDim = scoreDim == 2 && !broadcast;
        bool colsDim = scoreDim == 3 && !broadcast;
        if (colsDim)
          colsAt = i;
        offsets.push_back(rowsDim   ? OpFoldResult(s0)
                          : colsDim ? OpFoldResult(t0)
                                    : OpFoldResult(b.getIndexAttr(0)));
        sizes.push_back(broadcast ? OpFoldResult(b.getIndexAttr(1))
                        : colsDim ? keysRead
                                  : b.getIndexAttr(tileSizes[scoreDim]));
        // Heads broadcast (maskFitsGroupedRows) or, ungrouped, are the
        // tile's own; batch is the tile's.
        exprs.push_back(broadcast       ? getAffineConstantExpr(0, ctx)
                        : scoreDim == 2 ? queryRow
                                        : dim(scoreDim));
      }
      Value maskTile =
          tensor::ExtractSliceOp::create(b, loc, mask, offsets, sizes, strides);
      if (count && colsAt >= 0)
        maskTile = zeroPadded(b, maskTile, colsAt, count, tk);
      inputs.push_back(maskTile);
      maps.push_back(AffineMap::get(4, 0, exprs, ctx));
    }
    maps.push_back(id4);
    scores =
        linalg::GenericOp::create(
            b, loc, TypeRange{scoreType}, inputs,
            ValueRange{
                tensor::EmptyOp::create(b, loc, scoreType.getShape(), element)},
            maps, parallel4,
            [&](B &b, L loc, V x) {
              Value score = arith::MulFOp::create(
                  b, loc, x[0], scalarConstant(b, loc, element, scale));
              if (mask) {
                if (x[1].getType().isInteger(1))
                  score =
                      arith::SelectOp::create(b, loc, x[1], score, minusInf);
                else
                  score = arith::AddFOp::create(
                      b, loc, score, castScalar(b, loc, x[1], element));
              }
              if (!positional && !count) {
                linalg::YieldOp::create(b, loc, score);
                return;
              }
              Value col = arith::AddIOp::create(
                  b, loc, linalg::IndexOp::create(b, loc, 3), t0);
              if (positional) {
                Value i = linalg::IndexOp::create(b, loc, 2);
                if (group > 1)
                  i = arith::RemUIOp::create(b, loc, i, index(b, sq));
                Value row = arith::AddIOp::create(b, loc, i, s0);
                score = maskByPosition(b, loc, op, row, col, positionOffset,
                                       score, minusInf);
              }
              if (count) {
                // The zeros read past T are no keys.
                Value missing = arith::CmpIOp::create(
                    b, loc, arith::CmpIPredicate::sge, col, keys);
                score =
                    arith::SelectOp::create(b, loc, missing, minusInf, score);
              }
              linalg::YieldOp::create(b, loc, score);
            })
            .getResult(0);
    // The tile's row maxima, then exp(m - m') from the old m, then m.
    auto rowType = tensorOf({batch, kvHeads, rows, 1}, element);
    Value tileMax =
        update(b, filledTensor(b, loc, rowType, minusInf), scores, id4, rows4,
               reduce4, [](B &b, L loc, Value x, Value acc) {
                 return Value(arith::MaximumFOp::create(b, loc, x, acc));
               });
    // exp(m - m') with m' = max(m, tile max): the old sums' scale (1 while
    // nothing has been seen).
    Value rescale = buildElementwise(
        b, loc, rowType, ValueRange{m, tileMax},
        [&](B &b, L loc, V x) -> Value {
          return shiftedExp(b, x[0],
                            arith::MaximumFOp::create(b, loc, x[0], x[1]));
        });
    Value newMax =
        update(b, m, tileMax, id4, id4, parallel4,
               [](B &b, L loc, Value x, Value old) {
                 return Value(arith::MaximumFOp::create(b, loc, x, old));
               });
    Value probabilities = buildElementwise(
        b, loc, scoreType, ValueRange{scores, newMax},
        [&](B &b, L loc, V x) -> Value { return shiftedExp(b, x[0], x[1]); });
    auto scaleBy = [](B &b, L loc, Value factor, Value old) {
      return Value(arith::MulFOp::create(b, loc, old, factor));
    };
    // l' = l * rescale + rowsum(p).
    Value newSum = update(
        b, update(b, l, rescale, id4, id4, parallel4, scaleBy), probabilities,
        id4, rows4, reduce4, [](B &b, L loc, Value x, Value acc) {
          return Value(arith::AddFOp::create(b, loc, acc, x));
        });
    // acc' = acc * rescale + p @ v.
    Value newAcc =
        product(b, probabilities, keysOf(v, 2),
                update(b, acc, rescale, rows4, id4, parallel4, scaleBy));
    return SmallVector<Value>{newMax, newSum, newAcc};
  };

  // Key tiles of `tk` from `from` to `to` (a multiple of tk apart), each
  // `tile(b, t0, state)`, carrying `state`.
  auto tileLoop = [&](OpBuilder &b, Value from, Value to, int64_t tk,
                      SmallVector<Value> state,
                      function_ref<SmallVector<Value>(B &, Value, V)> tile) {
    auto loop =
        scf::ForOp::create(b, loc, from, to, index(b, tk), state,
                           [&](B &b, L, Value t0, V carried) {
                             scf::YieldOp::create(b, loc, tile(b, t0, carried));
                           });
    return SmallVector<Value>(loop.getResults());
  };
  // `n` rounded down to a multiple of `multiple`.
  auto roundDown = [&](OpBuilder &b, Value n, int64_t multiple) -> Value {
    Value m = index(b, multiple);
    return arith::MulIOp::create(b, loc, arith::DivUIOp::create(b, loc, n, m),
                                 m);
  };

  // One query tile: every key tile, then acc / l into `out`.
  auto queryTile = [&](OpBuilder &b, Value s0, int64_t sq, Value out) {
    int64_t rows = group * sq;
    // [B, H, sq, D] -> [B, Hkv, group, sq, D] -> [B, Hkv, group * sq, D].
    Value qTile = sliceOf(b, q, 2, s0, b.getIndexAttr(sq));
    if (group > 1) {
      Value split = tensor::ExpandShapeOp::create(
          b, loc, tensorOf({batch, kvHeads, group, sq, d}, inputElement), qTile,
          SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});
      qTile = tensor::CollapseShapeOp::create(
          b, loc, split,
          SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}, {4}});
    }
    auto rowType = tensorOf({batch, kvHeads, rows, 1}, element);
    auto accType = tensorOf({batch, kvHeads, rows, dv}, element);
    SmallVector<Value> state{filledTensor(b, loc, rowType, minusInf),
                             filledTensor(b, loc, rowType, zero),
                             filledTensor(b, loc, accType, zero)};
    auto fullKeyTile = [&](int64_t tk) {
      return [&, tk](B &b, Value t0, V carried) {
        return keyTile(b, s0, sq, qTile, t0, tk, Value(), carried);
      };
    };
    // With a causal mask (or a right window), the keys from `visible` on
    // are past the frontier of every row of this tile, and with a left
    // window those before `firstVisible`: their tiles are skipped (about
    // half of a causal prefill's work; all but the window's with one).
    Value visible, firstVisible;
    if (frontierAfter) {
      Value last = arith::AddIOp::create(
          b, loc, arith::AddIOp::create(b, loc, s0, index(b, sq)),
          positionOffset);
      if (!causal)
        last = arith::AddIOp::create(b, loc, last, index(b, rightWindow));
      visible = arith::MinSIOp::create(
          b, loc, arith::MaxSIOp::create(b, loc, last, index(b, 0)), keys);
    }
    if (leftWindow >= 0) {
      Value first = arith::SubIOp::create(
          b, loc, arith::AddIOp::create(b, loc, s0, positionOffset),
          index(b, leftWindow));
      firstVisible = arith::MaxSIOp::create(b, loc, first, index(b, 0));
    }
    // `start` rounded down to a tile of `tk`, or more where the tiles of
    // `tk` from there are all before the left window.
    auto from = [&](Value start, int64_t tk) -> Value {
      if (!firstVisible)
        return start;
      return arith::MaxUIOp::create(b, loc, start,
                                    roundDown(b, firstVisible, tk));
    };
    // `end`, or less where the tiles of `tk` from there are all in the
    // future.
    auto upTo = [&](Value end, int64_t tk) -> Value {
      if (!frontierAfter)
        return end;
      Value m = index(b, tk);
      Value roundedUp = arith::MulIOp::create(
          b, loc,
          arith::DivUIOp::create(
              b, loc, arith::AddIOp::create(b, loc, visible, index(b, tk - 1)),
              m),
          m);
      return arith::MinUIOp::create(b, loc, end, roundedUp);
    };
    if (dynamicKeys) {
      Value wholeTiles =
          upTo(roundDown(b, keys, kAttentionKeyTile), kAttentionKeyTile);
      state =
          tileLoop(b, from(index(b, 0), kAttentionKeyTile), wholeTiles,
                   kAttentionKeyTile, state, fullKeyTile(kAttentionKeyTile));
      // The rest in tiles of kAttentionTailKeyTile, the last one padded.
      state =
          tileLoop(b, from(wholeTiles, kAttentionTailKeyTile),
                   upTo(keys, kAttentionTailKeyTile), kAttentionTailKeyTile,
                   state, [&](B &b, Value t0, V carried) {
                     Value left = arith::SubIOp::create(b, loc, keys, t0);
                     Value full = arith::CmpIOp::create(
                         b, loc, arith::CmpIPredicate::uge, left,
                         index(b, kAttentionTailKeyTile));
                     auto ifOp = scf::IfOp::create(
                         b, loc, full,
                         [&](B &b, L) {
                           scf::YieldOp::create(b, loc,
                                                keyTile(b, s0, sq, qTile, t0,
                                                        kAttentionTailKeyTile,
                                                        Value(), carried));
                         },
                         [&](B &b, L) {
                           scf::YieldOp::create(b, loc,
                                                keyTile(b, s0, sq, qTile, t0,
                                                        kAttentionTailKeyTile,
                                                        left, carried));
                         });
                     return SmallVector<Value>(ifOp.getResults());
                   });
    } else {
      int64_t tk = std::min(kAttentionKeyTile, t);
      int64_t fullTiles = t / tk, rest = t % tk;
      if (fullTiles > 1 || (positional && fullTiles == 1))
        state = tileLoop(b, from(index(b, 0), tk),
                         upTo(index(b, fullTiles * tk), tk), tk, state,
                         fullKeyTile(tk));
      else if (fullTiles == 1)
        state = keyTile(b, s0, sq, qTile, index(b, 0), tk, Value(), state);
      if (rest && frontierAfter) {
        // The last, smaller tile only when some of it is visible.
        Value seen = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                           visible, index(b, fullTiles * tk));
        state = SmallVector<Value>(
            scf::IfOp::create(
                b, loc, seen,
                [&](B &b, L) {
                  scf::YieldOp::create(b, loc,
                                       keyTile(b, s0, sq, qTile,
                                               index(b, fullTiles * tk), rest,
                                               Value(), state));
                },
                [&](B &b, L) { scf::YieldOp::create(b, loc, state); })
                .getResults());
      } else if (rest) {
        state = keyTile(b, s0, sq, qTile, index(b, fullTiles * tk), rest,
                        Value(), state);
      }
    }
    Value tileOut = buildElementwise(
        b, loc, tensorOf({batch, kvHeads, rows, dv}, resultElement),
        ValueRange{state[2], state[1]}, [&](B &b, L loc, V x) -> Value {
          // A row that saw no key (all masked) has l = 0: zeros.
          Value none = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                             x[1], zero);
          Value mean = arith::SelectOp::create(
              b, loc, none, zero, arith::DivFOp::create(b, loc, x[0], x[1]));
          return castScalar(b, loc, mean, resultElement);
        });
    if (group > 1) {
      // [B, Hkv, group * sq, Dv] -> [B, Hkv, group, sq, Dv] -> [B, H, sq, Dv].
      Value split = tensor::ExpandShapeOp::create(
          b, loc, tensorOf({batch, kvHeads, group, sq, dv}, resultElement),
          tileOut, SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}, {4}});
      tileOut = tensor::CollapseShapeOp::create(
          b, loc, split,
          SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});
    }
    SmallVector<OpFoldResult> offsets{b.getIndexAttr(0), b.getIndexAttr(0), s0,
                                      b.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes{b.getIndexAttr(batch),
                                    b.getIndexAttr(heads), b.getIndexAttr(sq),
                                    b.getIndexAttr(dv)};
    SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
    return tensor::InsertSliceOp::create(b, loc, tileOut, out, offsets, sizes,
                                         strides)
        .getResult();
  };
  // Query tiles of `sq` rows from `from` to `to` (a multiple of sq apart).
  auto queryLoop = [&](Value from, Value to, int64_t sq, Value out) {
    return scf::ForOp::create(
               rewriter, loc, from, to, index(rewriter, sq), ValueRange{out},
               [&](B &b, L, Value s0, V carried) {
                 scf::YieldOp::create(b, loc, queryTile(b, s0, sq, carried[0]));
               })
        .getResult(0);
  };

  SmallVector<Value> outSizes;
  if (dynamicQueries)
    outSizes.push_back(queries);
  Value out = tensor::EmptyOp::create(rewriter, loc,
                                      ArrayRef<int64_t>{batch, heads, s, dv},
                                      resultElement, outSizes);
  if (dynamicQueries) {
    // Rows in tiles of kAttentionRunTimeQueryTile, then one at a time.
    Value whole = roundDown(rewriter, queries, kAttentionRunTimeQueryTile);
    out = queryLoop(index(rewriter, 0), whole, kAttentionRunTimeQueryTile, out);
    return queryLoop(whole, queries, 1, out);
  }
  int64_t sq = std::min(kAttentionQueryTile, s);
  int64_t fullTiles = s / sq, rest = s % sq;
  if (fullTiles > 1)
    out =
        queryLoop(index(rewriter, 0), index(rewriter, fullTiles * sq), sq, out);
  else if (fullTiles == 1)
    out = queryTile(rewriter, index(rewriter, 0), sq, out);
  if (rest)
    out = queryTile(rewriter, index(rewriter, fullTiles * sq), rest, out);
  return out;
}

/// `mask` with every dimension known only at run time equal to the
/// scores' size there (`scoreSizes`, [B, H, S, T]): a size of 1 is
/// stretched (a copy, made only then), any other size that differs is
/// reported and the mask replaced by zeros, so that the tiles' reads stay
/// inside it.
Value alignMaskToScores(OpBuilder &b, Location loc, Operation *op, Value mask,
                        ArrayRef<Value> scoreSizes) {
  auto type = cast<RankedTensorType>(mask.getType());
  int64_t rank = type.getRank();
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value stretch, mismatch;
  SmallVector<int64_t> dims;
  SmallVector<Value> targets;
  auto orInto = [&](Value &into, Value condition) {
    into =
        into ? Value(arith::OrIOp::create(b, loc, into, condition)) : condition;
  };
  for (int64_t i = 0; i < rank; ++i) {
    if (!type.isDynamicDim(i))
      continue;
    Value target = scoreSizes[4 - rank + i];
    Value size = tensor::DimOp::create(b, loc, mask, i);
    Value isOne =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, size, one);
    Value differs =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, size, target);
    orInto(stretch, arith::AndIOp::create(b, loc, isOne, differs));
    Value notOne =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, size, one);
    orInto(mismatch, arith::AndIOp::create(b, loc, notOne, differs));
    dims.push_back(i);
    targets.push_back(target);
  }
  if (dims.empty())
    return mask;
  checkCondition(b, loc, op, mismatch,
                 "the mask's sizes known only at run time do not broadcast "
                 "to the scores");
  auto stretched = scf::IfOp::create(
      b, loc, stretch,
      [&](OpBuilder &then, Location thenLoc) {
        scf::YieldOp::create(then, thenLoc,
                             broadcastCopy(then, thenLoc, mask, dims, targets));
      },
      [&](OpBuilder &otherwise, Location otherwiseLoc) {
        scf::YieldOp::create(otherwise, otherwiseLoc, mask);
      });
  return zerosWhere(b, loc, mismatch, stretched.getResult(0), targets);
}

} // namespace

bool attentionFitsTiles(Value mask, int64_t group,
                        ArrayRef<int64_t> scoreShape) {
  return maskFitsGroupedRows(mask, group) && maskFitsTiles(mask, scoreShape);
}

Value lowerAttentionInTiles(OpBuilder &rewriter, Location loc, AttentionOp op,
                            Value q, Value k, Value v, Value mask,
                            RankedTensorType type, Type element, double scale) {
  Type resultElement = type.getElementType();
  if (mask) {
    SmallVector<Value> scoreSizes{
        indexDim(rewriter, loc, q, 0), indexDim(rewriter, loc, q, 1),
        indexDim(rewriter, loc, q, 2), indexDim(rewriter, loc, k, 2)};
    mask = alignMaskToScores(rewriter, loc, op, mask, scoreSizes);
  }
  int64_t heads = cast<RankedTensorType>(q.getType()).getDimSize(1);
  int64_t kvHeads = cast<RankedTensorType>(k.getType()).getDimSize(1);
  int64_t group = heads / kvHeads;
  // `source`'s dimensions 0 and 1 at `item` and `head` with sizes 1 and
  // `headCount`, the others whole.
  auto itemOf = [&](OpBuilder &b, Value source, OpFoldResult item,
                    OpFoldResult head, int64_t headCount) {
    SmallVector<OpFoldResult> offsets{item, head},
        sizes{b.getIndexAttr(1), b.getIndexAttr(headCount)};
    for (int64_t i = 2; i < 4; ++i) {
      offsets.push_back(b.getIndexAttr(0));
      sizes.push_back(tensor::getMixedSize(b, loc, source, i));
    }
    SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
    return tensor::ExtractSliceOp::create(b, loc, source, offsets, sizes,
                                          strides)
        .getResult();
  };
  // The mask's part for one item and key/value head: its batch and head
  // dimensions are sliced where it does not broadcast them (a mask that
  // varies by head has one query head per key/value head,
  // maskFitsGroupedRows).
  auto maskOf = [&](OpBuilder &b, OpFoldResult item,
                    OpFoldResult kvHead) -> Value {
    auto maskType = cast<RankedTensorType>(mask.getType());
    int64_t rank = maskType.getRank();
    SmallVector<OpFoldResult> offsets, sizes;
    bool sliced = false;
    for (int64_t i = 0; i < rank; ++i) {
      int64_t scoreDim = 4 - rank + i;
      if (scoreDim < 2 && maskType.getDimSize(i) != 1) {
        offsets.push_back(scoreDim == 0 ? item : kvHead);
        sizes.push_back(b.getIndexAttr(1));
        sliced = true;
        continue;
      }
      offsets.push_back(b.getIndexAttr(0));
      sizes.push_back(tensor::getMixedSize(b, loc, mask, i));
    }
    if (!sliced)
      return mask;
    SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
    return tensor::ExtractSliceOp::create(b, loc, mask, offsets, sizes, strides)
        .getResult();
  };
  OpFoldResult batch = tensor::getMixedSize(rewriter, loc, q, 0);
  SmallVector<Value> outSizes;
  if (type.isDynamicDim(0))
    outSizes.push_back(cast<Value>(batch));
  if (type.isDynamicDim(2))
    outSizes.push_back(indexDim(rewriter, loc, q, 2));
  Value out = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                      resultElement, outSizes);
  SmallVector<OpFoldResult> bounds{batch, rewriter.getIndexAttr(kvHeads)};
  auto loop = scf::ForallOp::create(rewriter, loc, bounds, ValueRange{out},
                                    /*mapping=*/std::nullopt);
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToStart(loop.getBody());
  Value item = loop.getInductionVar(0), kvHead = loop.getInductionVar(1);
  OpFoldResult firstHead = kvHead;
  if (group > 1)
    firstHead = arith::MulIOp::create(
                    rewriter, loc, kvHead,
                    arith::ConstantIndexOp::create(rewriter, loc, group))
                    .getResult();
  Value itemOut = lowerAttentionTilesOfBatch(
      rewriter, loc, op, itemOf(rewriter, q, item, firstHead, group),
      itemOf(rewriter, k, item, kvHead, 1),
      itemOf(rewriter, v, item, kvHead, 1),
      mask ? maskOf(rewriter, item, kvHead) : Value(), resultElement, element,
      scale);
  SmallVector<OpFoldResult> offsets{item, firstHead, rewriter.getIndexAttr(0),
                                    rewriter.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes;
  for (int64_t i = 0; i < 4; ++i)
    sizes.push_back(tensor::getMixedSize(rewriter, loc, itemOut, i));
  SmallVector<OpFoldResult> strides(4, rewriter.getIndexAttr(1));
  // The terminator's region holds the parallel inserts alone.
  rewriter.setInsertionPointToStart(loop.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(rewriter, loc, itemOut,
                                        loop.getRegionIterArgs()[0], offsets,
                                        sizes, strides);
  return loop.getResult(0);
}

} // namespace loom::lowering
