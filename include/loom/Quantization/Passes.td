//===- Passes.td - Post-training quantization --------------*- tablegen -*-===//
//
// Quantization that needs the program's values: a calibration run of the
// reference executor on sample inputs decides the activation ranges.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_QUANTIZATION_PASSES_TD
#define LOOM_QUANTIZATION_PASSES_TD

include "mlir/Pass/PassBase.td"

def LoomQuantizePass : Pass<"loom-quantize", "::mlir::func::FuncOp"> {
  let summary = "Post-training quantization of matmuls and convolutions, "
                "calibrated on sample inputs";
  let description = [{
    Runs the function with the reference executor on every calibration
    sample, records the range of each activation that feeds a loom.matmul
    with a constant 2-D weight or (int8 only) a loom.conv with a constant
    weight, and rewrites those contractions to quantized ones:

    - `type=int8`: activations uint8, asymmetric, per tensor; weights int8,
      symmetric, per output channel (or per tensor with
      `per-channel=false`); the result is loom.qmatmul / loom.qconv.
    - `type=fp8`: matmuls only; activations and weights f8E4M3FN with one
      scale each (amax / 448); loom.qmatmul accumulates in f32.

    Ranges come from `calibration=minmax` (the observed minimum and maximum)
    or `calibration=percentile` (the `percentile`-th and
    (100 - `percentile`)-th percentiles of the observed values, which
    ignores outliers). Every range is widened to include 0. `inputs` names
    the samples: directories of input tensors (`input_N.pb` or `*.npy` in
    argument order), or directories whose subdirectories are such samples.
    Run it after -loom-simplify, so that weights are plain constants.
  }];
  let options = [
    Option<"type", "type", "::loom::QuantType",
           /*default=*/"::loom::QuantType::Int8",
           "The quantized type of the contractions",
           [{::llvm::cl::values(
               clEnumValN(::loom::QuantType::Int8, "int8",
                          "uint8 activations, int8 weights"),
               clEnumValN(::loom::QuantType::FP8, "fp8",
                          "f8E4M3FN activations and weights (matmul only)"))
           }]>,
    Option<"calibration", "calibration", "::loom::CalibrationMethod",
           /*default=*/"::loom::CalibrationMethod::MinMax",
           "How activation ranges are chosen from the observed values",
           [{::llvm::cl::values(
               clEnumValN(::loom::CalibrationMethod::MinMax, "minmax",
                          "observed minimum and maximum"),
               clEnumValN(::loom::CalibrationMethod::Percentile, "percentile",
                          "percentiles of the observed values"))
           }]>,
    Option<"percentile", "percentile", "double", /*default=*/"99.99",
           "Upper percentile kept with calibration=percentile (50..100)">,
    Option<"perChannel", "per-channel", "bool", /*default=*/"true",
           "int8 weights get one scale per output channel">,
    ListOption<"inputs", "inputs", "std::string",
               "Calibration samples: directories of input tensors, or "
               "directories of such directories">,
  ];
  let dependentDialects = ["::loom::LoomDialect"];
}

#endif // LOOM_QUANTIZATION_PASSES_TD
