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

/// --conv-library: which convolutions the runtime's oneDNN kernel library
/// computes (docs/codegen.md, "Library convolutions").
enum class ConvLibrary {
  /// oneDNN for its shape class when its plugin loads on this machine.
  Auto,
  /// oneDNN for its shape class, loadable here or not (the runtime checks
  /// where the engine runs).
  OneDNN,
  /// Every convolution generated.
  None,
};

/// The command-line flags `--conv-library` and `--library-conv-flops`,
/// shared by loomc and loom-run (construct once in the tool's main).
struct ConvLibraryFlags {
  ConvLibraryFlags();
  llvm::cl::opt<ConvLibrary> library;
  llvm::cl::opt<int64_t> minFlops;
  /// cpu::CompileOptions::libraryConvolutionFlops for the flags (negative:
  /// none); failure, with an error printed, when they are invalid.
  mlir::FailureOr<int64_t> resolve() const;
};

/// The command-line flag `--input-shape NAME=D0xD1...` (repeatable), shared
/// by loomc and loom-run: binds symbolic dimensions of ONNX graph inputs.
struct InputShapeFlags {
  InputShapeFlags();
  llvm::cl::list<std::string> shapes;
  /// The import options for the flags; failure, with an error printed, when
  /// one is malformed.
  mlir::FailureOr<ONNXImportOptions> resolve() const;
};

/// Runs loomc's command line: parses flags, compiles, writes the output.
/// Returns the process exit code.
int loomcMain(int argc, char **argv);

} // namespace loom

#endif // LOOM_COMPILER_COMPILER_H
