//===- Quantize.h - Post-training quantization ------------------*- C++ -*-===//
//
// Calibration (running the program on sample inputs and recording the range
// of each activation) and the rewrite of matmuls and convolutions into
// quantized contractions with the ranges found.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_QUANTIZATION_QUANTIZE_H
#define LOOM_QUANTIZATION_QUANTIZE_H

#include "loom/Reference/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

#include <string>

namespace loom {

/// The quantized type of `-loom-quantize`.
enum class QuantType { Int8, FP8 };
/// How `-loom-quantize` turns observed values into a range.
enum class CalibrationMethod { MinMax, Percentile };

struct QuantizeOptions {
  QuantType type = QuantType::Int8;
  CalibrationMethod calibration = CalibrationMethod::MinMax;
  /// With CalibrationMethod::Percentile: the upper percentile kept.
  double percentile = 99.99;
  /// int8 weights: one scale per output channel (else per tensor).
  bool perChannel = true;
};

/// One calibration sample: a tensor per function argument.
using CalibrationSample = llvm::SmallVector<reference::Tensor>;

/// Reads the samples named by `paths` (directories of input tensors, or
/// directories of such directories) for the arguments of `func`. Errors are
/// emitted at `func`.
mlir::FailureOr<llvm::SmallVector<CalibrationSample>>
loadCalibrationSamples(mlir::func::FuncOp func,
                       llvm::ArrayRef<std::string> paths);

/// Quantizes the contractions of `func` that `options` covers, with
/// activation ranges observed on `samples`. Errors (a failing calibration
/// run) are emitted at `func`.
mlir::LogicalResult
quantizeContractions(mlir::func::FuncOp func,
                     llvm::ArrayRef<CalibrationSample> samples,
                     const QuantizeOptions &options);

#define GEN_PASS_DECL
#include "loom/Quantization/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "loom/Quantization/Passes.h.inc"

} // namespace loom

#endif // LOOM_QUANTIZATION_QUANTIZE_H
