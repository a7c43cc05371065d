//===- loom-opt.cpp - Loom's optimizer driver -----------------------------===//
//
// mlir-opt with the loom dialect, the upstream dialects Loom uses, the
// upstream passes and every Loom pass.
//
//===----------------------------------------------------------------------===//

#include "loom/Conversion/Passes.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"
#include "loom/InitAllDialects.h"
#include "loom/Pipelines/Pipelines.h"
#include "loom/Quantization/Quantize.h"
#include "loom/Target/CPU/CPUTarget.h"
#include "loom/Target/CPU/Passes.h"
#include "loom/Target/CUDA/CUDATarget.h"
#include "loom/Target/CUDA/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  loom::registerLoomPasses();
  loom::registerLoomQuantizationPasses();
  loom::registerLoomConversionPasses();
  loom::cpu::registerLoomCPUPasses();
  loom::cpu::registerCPUPipelines();
  loom::cuda::registerLoomCUDAPasses();
  loom::cuda::registerCUDAPipelines();
  loom::registerLoomPipelines();
  mlir::DialectRegistry registry;
  loom::registerAllDialects(registry);
  loom::cuda::registerCUDADialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Loom optimizer driver\n", registry));
}
