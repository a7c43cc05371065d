//===- Compiler.h - The library behind loomc --------------------*- C++ -*-===//

#ifndef LOOM_COMPILER_COMPILER_H
#define LOOM_COMPILER_COMPILER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>

namespace loom {

/// Reads a model: `.mlir` (loom IR) or `-` (loom IR on standard input) is
/// parsed, anything else imported as ONNX (binary or text). Null, with a diagnostic, on failure.
mlir::OwningOpRef<mlir::ModuleOp> loadModel(llvm::StringRef path,
                                            mlir::MLIRContext *context);

/// The function a model runs: @main, or the module's only function; null
/// when there is neither.
mlir::func::FuncOp findEntry(mlir::ModuleOp module);

/// Runs loomc's command line: parses flags, compiles, writes the output.
/// Returns the process exit code.
int loomcMain(int argc, char **argv);

} // namespace loom

#endif // LOOM_COMPILER_COMPILER_H
