//===- Passes.td - Passes of the CPU target ----------------*- tablegen -*-===//

#ifndef LOOM_TARGET_CPU_PASSES_TD
#define LOOM_TARGET_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def LoomCPUBufferizePass : Pass<"loom-cpu-bufferize", "::mlir::ModuleOp"> {
  let summary = "One-shot bufferization with the CPU target's policy";
  let description = [{
    Runs one-shot module bufferization with function boundaries bufferized
    to identity-layout memrefs (what the bare-pointer calling convention
    needs) and every buffer copy emitted as `linalg.copy`, so that copies
    between strided views lower to loops like the rest of the program and
    the object code needs no MLIR runtime library.
  }];
  let dependentDialects = [
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::memref::MemRefDialect",
  ];
}

#endif // LOOM_TARGET_CPU_PASSES_TD
