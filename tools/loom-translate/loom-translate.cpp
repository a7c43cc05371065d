//===- loom-translate.cpp - Translations into and out of loom IR ----------===//
//
// `loom-translate --import-onnx model.onnx` prints the model as loom IR; the
// ONNX text syntax is accepted too, so lit tests carry models inline.
//
//===----------------------------------------------------------------------===//

#include "loom/Importer/ONNX/Importer.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  loom::registerImportONNXTranslation();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "Loom translation driver\n"));
}
