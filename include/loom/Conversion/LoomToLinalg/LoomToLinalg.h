//===- LoomToLinalg.h - Lowering loom ops to linalg -------------*- C++ -*-===//

#ifndef LOOM_CONVERSION_LOOMTOLINALG_LOOMTOLINALG_H
#define LOOM_CONVERSION_LOOMTOLINALG_LOOMTOLINALG_H

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

namespace loom {

/// Patterns lowering elementwise and broadcasting ops and casts to one
/// linalg.generic each.
void populateLoomElementwiseToLinalgPatterns(
    const mlir::TypeConverter &converter, mlir::RewritePatternSet &patterns);

/// Patterns lowering constants and data movement (transpose, expand,
/// concat, split, slice, pad, tile, trilu, the KV-cache append) to tensor
/// slices, linalg.transpose and linalg.generic.
void populateLoomDataMovementToLinalgPatterns(
    const mlir::TypeConverter &converter, mlir::RewritePatternSet &patterns);

/// Patterns lowering reshape, squeeze and unsqueeze (views), shape and
/// size.
void populateLoomReshapeToLinalgPatterns(const mlir::TypeConverter &converter,
                                         mlir::RewritePatternSet &patterns);

/// Patterns lowering the ops that read or write at positions taken from
/// data: gather, gather_elements, gather_nd, one_hot, scatter_elements and
/// scatter_nd, their indices checked at run time.
void populateLoomIndexingToLinalgPatterns(const mlir::TypeConverter &converter,
                                          mlir::RewritePatternSet &patterns);

/// Patterns lowering contractions, convolutions, rotary embeddings and
/// mixtures of experts.
void populateLoomNNToLinalgPatterns(const mlir::TypeConverter &converter,
                                    mlir::RewritePatternSet &patterns);

/// Patterns lowering max and average pooling (with or without indices).
void populateLoomPoolingToLinalgPatterns(const mlir::TypeConverter &converter,
                                         mlir::RewritePatternSet &patterns);

/// Patterns lowering layer, instance, RMS and batch normalization.
void populateLoomNormalizationToLinalgPatterns(
    const mlir::TypeConverter &converter, mlir::RewritePatternSet &patterns);

/// Patterns lowering reductions (sum, mean, max, min, prod, arg-max,
/// arg-min), softmax and log-softmax, cumsum and top-k.
void populateLoomReductionsToLinalgPatterns(
    const mlir::TypeConverter &converter, mlir::RewritePatternSet &patterns);

/// The pattern lowering loom.attention: in tiles with an online softmax
/// when its shapes are static and its scores many, whole otherwise.
void populateLoomAttentionToLinalgPatterns(const mlir::TypeConverter &converter,
                                           mlir::RewritePatternSet &patterns);

/// The pattern lowering loom.resize: one generic over the output and the
/// sampling taps, its tables of source indices and weights constant when
/// the scales are static, computed at run time otherwise.
void populateLoomResizeToLinalgPatterns(const mlir::TypeConverter &converter,
                                        mlir::RewritePatternSet &patterns);

/// The pattern lowering loom.grid_sample: one generic over the output and
/// the sampling taps reading the grid and the image with tensor.extract.
void populateLoomGridSampleToLinalgPatterns(
    const mlir::TypeConverter &converter, mlir::RewritePatternSet &patterns);

/// The pattern lowering loom.roi_align: one generic over the pooled result
/// walking each bin's sampling grid with an scf.for nest.
void populateLoomRoiAlignToLinalgPatterns(const mlir::TypeConverter &converter,
                                          mlir::RewritePatternSet &patterns);

/// Patterns lowering loom.quantize and loom.dequantize to elementwise
/// generics, and the quantized contractions (loom.qmatmul, loom.qconv) to
/// exact integer (or, for f8E4M3FN, f64) accumulation and an f64 scaling
/// epilogue. With `byteProducts`, products of unsigned 8-bit activations and
/// constant signed 8-bit weights keep their operands as bytes (see
/// QuantToLinalg.cpp).
void populateLoomQuantToLinalgPatterns(const mlir::TypeConverter &converter,
                                       mlir::RewritePatternSet &patterns,
                                       bool byteProducts = false);

/// Patterns lowering the ops whose result sizes come from data (range,
/// constant_of_shape, non_zero): the size computed at run time, checked
/// against a static size the model states.
void populateLoomRunTimeSizesToLinalgPatterns(
    const mlir::TypeConverter &converter, mlir::RewritePatternSet &patterns);

/// The pattern lowering loom.non_max_suppression: an scf loop nest over
/// batches and classes writing the selections into a tensor of the static
/// upper bound (B * C * N rows), of which the result is the first rows.
void populateLoomNonMaxSuppressionToLinalgPatterns(
    const mlir::TypeConverter &converter, mlir::RewritePatternSet &patterns);

/// Rewrites every loom.loop under `root` into an scf.while on tensors whose
/// body keeps its loom ops (the conversion lowers them afterwards); fails,
/// reported, on a loop the CPU target cannot run.
mlir::LogicalResult lowerLoopsToWhile(mlir::Operation *root);

/// All of the above plus the inlining of `loom.fusion` regions and the
/// conversion of function signatures (unsigned tensors become signless).
/// `byteProducts` as for populateLoomQuantToLinalgPatterns.
void populateLoomToLinalgPatterns(const mlir::TypeConverter &converter,
                                  mlir::RewritePatternSet &patterns,
                                  bool byteProducts = false);

/// Marks the loom dialect illegal, the dialects it lowers to legal, and
/// functions legal once their signatures are converted.
void configureLoomToLinalgTarget(mlir::ConversionTarget &target,
                                 const mlir::TypeConverter &converter);

/// The unit attribute on a tensor.extract_slice that views an elementwise
/// op's input at the result's run-time size: the identity unless the
/// inputs' run-time sizes disagree (a reported error after which the code
/// must still read in bounds). Code generation may move such a view above
/// the input's producer.
inline constexpr llvm::StringLiteral kRunTimeBoundView = "loom.run_time_bound";

/// Statically shaped tensors of float and signless integer elements stay
/// as they are; unsigned integer elements become signless of the same
/// width, and f8E4M3FN elements i8 (their bits). Dynamic sizes are kept:
/// which ops may have them is checked by the pass before the conversion.
class LoomToLinalgTypeConverter : public mlir::TypeConverter {
public:
  LoomToLinalgTypeConverter();
};

} // namespace loom

namespace loom::lowering {

/// When `failed` (an i1) holds at run time, the runtime reports "SITE:
/// `problem`" (loom_rt_check_failed, loom/abi/checks.h), SITE being `site`
/// or, when it is empty, the ONNX node of `op`'s location. The code goes
/// on: the caller makes sure it stays inside its tensors.
void checkCondition(mlir::OpBuilder &b, mlir::Location loc, mlir::Operation *op,
                    mlir::Value failed, llvm::StringRef problem,
                    llvm::StringRef site = {});

} // namespace loom::lowering

#endif // LOOM_CONVERSION_LOOMTOLINALG_LOOMTOLINALG_H
