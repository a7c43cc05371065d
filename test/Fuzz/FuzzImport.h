//===- FuzzImport.h - Shared setup of the importer's fuzz harnesses -*- C++
//-*-===//
//
// Each input is imported in a fresh MLIRContext (a shared one would keep
// every type and attribute of every input, and grow until libFuzzer's memory
// limit), with its diagnostics dropped: a rejected input is the expected
// outcome, and printing it would be most of the time spent.
//
// One outcome is a finding even though it is a diagnostic: "the imported
// program does not verify" means a builder made invalid IR from input it
// accepted, which the importer promises never to do. The harness aborts on
// it, so libFuzzer records the input.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TEST_FUZZ_FUZZIMPORT_H
#define LOOM_TEST_FUZZ_FUZZIMPORT_H

#include "loom/Importer/ONNX/Importer.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <string>

namespace loom::fuzz {

/// Imports `buffer` as a model named `name` with external data anchored at
/// `baseDirectory` (empty: none allowed).
inline void importModel(llvm::StringRef buffer, llvm::StringRef name,
                        llvm::StringRef baseDirectory) {
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  std::string diagnostics;
  bool unverified = false;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    std::string message = d.str();
    // The whole message, not a substring: other diagnostics quote the
    // input, and the fuzzer soon learns to write these words into it.
    unverified |= message == "the imported program does not verify";
    diagnostics += message + "\n";
    return mlir::success();
  });
  ONNXImportOptions options;
  // Small enough that libFuzzer's default memory limit (2 GiB) is never the
  // reason an input stops; larger tensors take the same paths.
  options.maxTensorBytes = uint64_t(64) << 20;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      importONNXModelBuffer(buffer, name, baseDirectory, &context, options);
  if (unverified) {
    llvm::errs() << "the importer built IR that does not verify:\n"
                 << diagnostics;
    std::abort();
  }
}

} // namespace loom::fuzz

#endif // LOOM_TEST_FUZZ_FUZZIMPORT_H
