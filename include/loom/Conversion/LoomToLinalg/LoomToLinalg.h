//===- LoomToLinalg.h - Lowering loom ops to linalg -------------*- C++ -*-===//

#ifndef LOOM_CONVERSION_LOOMTOLINALG_LOOMTOLINALG_H
#define LOOM_CONVERSION_LOOMTOLINALG_LOOMTOLINALG_H

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

namespace loom {

/// Patterns lowering loom ops on statically shaped tensors to linalg,
/// tensor, arith and math ops: elementwise and broadcasting ops, casts,
/// constants and data movement.
void populateLoomElementwiseToLinalgPatterns(
    const mlir::TypeConverter &converter, mlir::RewritePatternSet &patterns);

/// Patterns lowering contractions, convolutions, pooling, reductions,
/// softmax, normalizations and attention.
void populateLoomNNToLinalgPatterns(const mlir::TypeConverter &converter,
                                    mlir::RewritePatternSet &patterns);

/// All of the above plus the inlining of `loom.fusion` regions.
void populateLoomToLinalgPatterns(const mlir::TypeConverter &converter,
                                  mlir::RewritePatternSet &patterns);

/// Marks the loom dialect illegal and the dialects it lowers to legal.
void configureLoomToLinalgTarget(mlir::ConversionTarget &target);

/// The identity on statically shaped tensors of signless or float
/// elements; other types (unsigned or dynamically shaped tensors) have no
/// conversion yet, so the ops that use them fail to lower.
class LoomToLinalgTypeConverter : public mlir::TypeConverter {
public:
  LoomToLinalgTypeConverter();
};

} // namespace loom

#endif // LOOM_CONVERSION_LOOMTOLINALG_LOOMTOLINALG_H
