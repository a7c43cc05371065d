//===- Compiler.h - The library behind loomc --------------------*- C++ -*-===//

#ifndef LOOM_COMPILER_COMPILER_H
#define LOOM_COMPILER_COMPILER_H

#include "loom/Importer/ONNX/Importer.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/CommandLine.h"

#include <string>

namespace loom {

/// Reads a model: `.mlir` (loom IR) or `-` (loom IR on standard input) is
/// parsed, anything else imported as ONNX (binary or text) with
/// `importOptions`. Null, with a diagnostic, on failure.
mlir::OwningOpRef<mlir::ModuleOp>
loadModel(llvm::StringRef path, mlir::MLIRContext *context,
          const ONNXImportOptions &importOptions = {});

/// The function a model runs: @main, or the module's only function; null
/// when there is neither.
mlir::func::FuncOp findEntry(mlir::ModuleOp module);

/// The command-line flag `--input-shape NAME=D0xD1...` (repeatable), shared
/// by loomc and loom-run: binds symbolic dimensions of ONNX graph inputs.
struct InputShapeFlags {
  explicit InputShapeFlags(
      llvm::cl::OptionCategory &category = llvm::cl::getGeneralCategory());
  llvm::cl::list<std::string> shapes;
  /// The import options for the flags; failure, with an error printed, when
  /// one is malformed.
  mlir::FailureOr<ONNXImportOptions> resolve() const;
};

/// Registers every target this build has (the CPU, and with
/// LOOM_INCLUDE_TESTS the test target) and their command-line options.
void registerAllTargets();

/// Hides every command-line option outside `categories` from --help (the
/// hundreds of LLVM backend options); --help-hidden lists them.
void hideOtherOptions(
    llvm::ArrayRef<const llvm::cl::OptionCategory *> categories);

/// Runs loomc's command line: parses flags, compiles, writes the output.
/// Returns the process exit code.
int loomcMain(int argc, char **argv);

} // namespace loom

#endif // LOOM_COMPILER_COMPILER_H
