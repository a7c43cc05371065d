//===- Pipelines.cpp - Named pass pipelines -------------------------------===//

#include "loom/Pipelines/Pipelines.h"

#include "loom/Dialect/Loom/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace loom {

void buildGraphOptimizationPipeline(OpPassManager &pm,
                                    const GraphOptimizationOptions &options) {
  OpPassManager &func = pm.nest<func::FuncOp>();
  // Quantized models (QDQ) compute in integers: dequantize -> conv/matmul
  // becomes loom.qconv/qmatmul before the canonicalizer folds the weights'
  // dequantize into f32 constants, so 8-bit weights stay 8-bit in the
  // engine and are neither widened nor dequantized on any call.
  func.addPass(createLoomFoldQDQPass());
  func.addPass(createCanonicalizerPass());
  func.addPass(createLoomRecognizePass());
  func.addPass(createLoomSimplifyPass());
  func.addPass(createCanonicalizerPass());
  func.addPass(createCSEPass());
  if (options.precision != ContractionPrecision::F32) {
    LoomPrecisionPassOptions precision;
    precision.precision = options.precision == ContractionPrecision::FP16
                              ? Precision::FP16
                              : Precision::BF16;
    func.addPass(createLoomPrecisionPass(precision));
  }
  if (options.formKernels) {
    LoomFormKernelsPassOptions kernels;
    kernels.report = options.reportKernels;
    func.addPass(createLoomFormKernelsPass(kernels));
  }
}

void registerLoomPipelines() {
  PassPipelineRegistration<GraphOptimizationOptions>(
      "loom-graph-optimize",
      "Loom's graph pipeline: canonicalize, recognize, simplify, CSE, "
      "precision and (optionally) kernel formation",
      buildGraphOptimizationPipeline);
}

} // namespace loom
