//===- Attention.h - Attention's lowerings, shared --------------*- C++ -*-===//
//
// What the whole-matrix lowering of loom.attention (AttentionToLinalg.cpp)
// and its tiled lowering (AttentionTilesToLinalg.cpp) share.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_CONVERSION_LOOMTOLINALG_ATTENTION_H
#define LOOM_LIB_CONVERSION_LOOMTOLINALG_ATTENTION_H

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/IR/Builders.h"

namespace loom::lowering {

/// Attention of static shapes with at least this many scores
/// ([B, H, S, T]) runs in tiles with an online softmax and never
/// materializes them. The tiles are faster from small sizes on (measured
/// with bench/compare_onnxruntime.py: [1, 12, 128, 128] x 64 7.0 -> 1.9 ms,
/// [2, 4, 64, 64] x 16 0.54 -> 0.44 ms); below this the whole-matrix form,
/// one pass of each op, is kept for the smallest graphs.
constexpr int64_t kTiledAttentionScoreElements = int64_t(1) << 12;

/// `score` of query `row` for key `col`, or `minusInf` where the key is
/// outside what the query's position (`row + positionOffset`) lets it see:
/// after it (causal), more than the left window before it or the right
/// window after it.
mlir::Value maskByPosition(mlir::OpBuilder &b, mlir::Location loc,
                           AttentionOp op, mlir::Value row, mlir::Value col,
                           mlir::Value positionOffset, mlir::Value score,
                           mlir::Value minusInf);

/// Whether the tiled lowering can take `mask` with `group` query heads per
/// key/value head and scores of `scoreShape` ([B, H, S, T]): with grouped
/// heads the mask must not vary by head (a tile's rows mix heads), and each
/// of its dimensions must broadcast (1), be known only at run time, or be
/// the scores' own size.
bool attentionFitsTiles(mlir::Value mask, int64_t group,
                        llvm::ArrayRef<int64_t> scoreShape);

/// Attention in tiles (lowerAttentionTilesOfBatch), one batch item and
/// key/value head (with the query heads that share it) at a time, in an
/// scf.forall: the items are independent, so the target may run them on
/// several threads, and each item's tiles ([1, 1, rows, keys]) stay in
/// the core's caches. (Tiles spanning the whole batch and every head were
/// [B, Hkv, 32, 128]: 256 KB at gpt2's [4, 4] heads, read and written by
/// each of the softmax's passes, and one thread did them all.)
mlir::Value lowerAttentionInTiles(mlir::OpBuilder &rewriter, mlir::Location loc,
                                  AttentionOp op, mlir::Value q, mlir::Value k,
                                  mlir::Value v, mlir::Value mask,
                                  mlir::RankedTensorType type,
                                  mlir::Type element, double scale);

} // namespace loom::lowering

#endif // LOOM_LIB_CONVERSION_LOOMTOLINALG_ATTENTION_H
