//===- Pipelines.h - Named pass pipelines -----------------------*- C++ -*-===//
//
// Loom's pipelines, built in C++ and registered so that `loom-opt` can
// replay them by name.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_PIPELINES_PIPELINES_H
#define LOOM_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace loom {

/// The type contractions compute in after the graph pipeline.
enum class ContractionPrecision { F32, FP16, BF16 };

/// Options of the graph-optimization pipeline.
struct GraphOptimizationOptions
    : public mlir::PassPipelineOptions<GraphOptimizationOptions> {
  Option<ContractionPrecision> precision{
      *this, "precision", llvm::cl::desc("Precision of the contractions"),
      llvm::cl::init(ContractionPrecision::F32),
      llvm::cl::values(
          clEnumValN(ContractionPrecision::F32, "f32", "keep f32"),
          clEnumValN(ContractionPrecision::FP16, "fp16", "AMP with f16"),
          clEnumValN(ContractionPrecision::BF16, "bf16", "AMP with bf16"))};
  Option<bool> formKernels{
      *this, "form-kernels",
      llvm::cl::desc("Group ops into loom.fusion kernels (only for programs "
                     "that will not be partitioned any more)"),
      llvm::cl::init(false)};
  Option<bool> reportKernels{
      *this, "report-kernels",
      llvm::cl::desc("With form-kernels: print the fusion report (ONNX nodes "
                     "in, loom ops, kernels out by kind) to stderr"),
      llvm::cl::init(false)};
};

/// The graph-level pipeline on a module of loom functions, in the order
/// DESIGN.md fixes: fold and clean up, recognize building blocks, choose
/// precision — all before partitioning — and, when asked, form kernels,
/// which belongs after partitioning, on per-rank programs.
void buildGraphOptimizationPipeline(mlir::OpPassManager &pm,
                                    const GraphOptimizationOptions &options);

/// Registers `loom-graph-optimize` with mlir-opt style drivers.
void registerLoomPipelines();

} // namespace loom

#endif // LOOM_PIPELINES_PIPELINES_H
