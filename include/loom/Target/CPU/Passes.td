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

def LoomCPUContractionOrderPass
    : Pass<"loom-cpu-contraction-order", "::mlir::func::FuncOp"> {
  let summary = "Put the reduction loops of contractions outside the "
                "innermost output loop";
  let description = [{
    Loops lowered from linalg run in the order of the iteration space; for
    a matrix product that is (i, j, k), whose innermost loop walks the right
    operand with a stride of a whole row and accumulates into one element.
    This pass generalizes named contractions and convolutions and, in every
    generic whose innermost loop is a reduction, moves the reductions just
    outside the output's innermost dimension when an input walks along that
    dimension too: (i, k, j) for a matrix product. The innermost loop then
    reads and writes contiguous memory, which LLVM vectorizes. Each output
    element still sums its terms in the same order, so results are
    unchanged bit for bit.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def LoomCPUStaticShapesPass
    : Pass<"loom-cpu-static-shapes", "::mlir::func::FuncOp"> {
  let summary = "Make result types static where their values allow";
  let description = [{
    Code generation needs static shapes. In program order, each loom op
    whose stated result type has dynamic dimensions gets the more static
    type its type inference (or, for loom.one_hot, a constant depth) proves
    from its now static operands. The function's result types follow the
    returned values (a static result is what a compiled entry needs, and
    ops whose operand and result types must match would not verify
    otherwise). Ops inside loom.fusion regions are left alone.
  }];
}

def LoomCPUMemoryPlanPass
    : Pass<"loom-cpu-memory-plan", "::mlir::func::FuncOp"> {
  let summary = "Place a function's temporary buffers in one arena, reusing "
                "memory between buffers whose lifetimes do not overlap";
  let description = [{
    Runs on bufferized code, before deallocation is inserted. Every
    `memref.alloc` of a static, identity-layout buffer in the function's
    body (not inside loops) lives from its allocation to the last use of it
    or of any view of it, in program order. The buffers are placed, largest
    first, at the lowest 64-byte-aligned offset that no buffer live at the
    same time occupies, and each becomes a `memref.view` of one arena
    allocated once at the start of the function. A buffer whose address
    escapes as an integer (to a runtime call) stays a separate allocation.
    With `report`, prints the number of buffers, the sum of their sizes and
    the arena's size.
  }];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "Print the plan's figures to stderr">
  ];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

#endif // LOOM_TARGET_CPU_PASSES_TD
