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

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  loom::registerLoomPasses();
  loom::registerLoomConversionPasses();
  loom::registerLoomPipelines();
  mlir::DialectRegistry registry;
  loom::registerAllDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Loom optimizer driver\n", registry));
}
