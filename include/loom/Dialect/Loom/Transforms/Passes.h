//===- Passes.h - Loom graph passes -----------------------------*- C++ -*-===//

#ifndef LOOM_DIALECT_LOOM_TRANSFORMS_PASSES_H
#define LOOM_DIALECT_LOOM_TRANSFORMS_PASSES_H

#include "loom/Dialect/Loom/IR/LoomDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

namespace loom {

/// The low-precision type of `-loom-precision`.
enum class Precision { FP16, BF16 };

#define GEN_PASS_DECL
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"

/// Patterns that turn exported op sequences into loom.layer_norm,
/// loom.rms_norm, loom.gelu, loom.silu, loom.softmax, loom.attention and
/// loom.rotary_embedding.
void populateRecognitionPatterns(mlir::RewritePatternSet &patterns);

/// Conv + batch-norm folding and data-movement simplifications.
void populateSimplificationPatterns(mlir::RewritePatternSet &patterns);

/// Mixture-of-experts products of weights gathered per token
/// (gather_nd(W) @ x) computed as one product with every expert, then the
/// token's expert's results gathered; part of the simplification patterns.
void populateDenseExpertPatterns(mlir::RewritePatternSet &patterns);

/// cast(cast(x)) -> cast(x) (or x) when the first cast is exact; part of the
/// simplification patterns, and used by the precision patterns to remove
/// low -> f32 -> low round trips between contractions.
void populateCastChainPatterns(mlir::RewritePatternSet &patterns);

/// Automatic mixed precision: matmul, conv, conv_transpose and attention on
/// f32 compute on operands of `lowType` (f16 or bf16) and return f32; casts
/// of constants fold into `lowType` constants and low -> f32 -> low round
/// trips cancel.
void populatePrecisionPatterns(mlir::RewritePatternSet &patterns,
                               mlir::Type lowType);

/// dequantize -> matmul/conv into loom.qmatmul / loom.qconv, and
/// transposes of dequantized values onto the quantized values.
void populateQDQFoldingPatterns(mlir::RewritePatternSet &patterns);

/// Size limits of constant folding (see -loom-fold-constants).
struct ConstantFoldingLimits {
  /// Largest number of elements of a folded result.
  int64_t maxElements = 1024;
  /// Largest number of elements of an operand that is read.
  int64_t maxOperandElements = 65536;
};

/// Replaces loom ops whose operands are all constants by constants holding
/// the values the reference executor's kernels compute, within `limits`.
void populateConstantFoldingPatterns(mlir::RewritePatternSet &patterns,
                                     const ConstantFoldingLimits &limits);

/// The values of `op`'s results when it is a loom op whose operands are all
/// constants within `limits`, computed by its reference kernel (each with
/// the static shape it has, which may refine a dynamic result type);
/// failure when it is not one or its kernel fails.
mlir::FailureOr<llvm::SmallVector<mlir::DenseElementsAttr>>
evaluateOnConstants(mlir::Operation *op, const ConstantFoldingLimits &limits);

#define GEN_PASS_REGISTRATION
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"

} // namespace loom

#endif // LOOM_DIALECT_LOOM_TRANSFORMS_PASSES_H
