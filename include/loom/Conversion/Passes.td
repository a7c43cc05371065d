//===- Passes.td - Lowerings out of the loom dialect -------*- tablegen -*-===//

#ifndef LOOM_CONVERSION_PASSES_TD
#define LOOM_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertLoomToLinalgPass : Pass<"convert-loom-to-linalg",
                                   "::mlir::ModuleOp"> {
  let summary = "Lower loom ops to linalg, tensor, arith and math";
  let description = [{
    Lowers every supported loom op of a function with static shapes to
    upstream ops on tensors: named linalg ops where they exist (matmul,
    transpose, 2-D convolution), linalg.generic for broadcasting
    elementwise ops, reductions, softmax, normalizations, attention,
    pooling and gather, tensor ops for data movement, and scf loops over
    tensors where updates must apply in order (scatter). `loom.fusion`
    regions are inlined and their bodies lowered. An op that has no
    lowering yet (or a dynamic shape) fails the pass with a diagnostic
    that names it. The supported set is in docs/codegen.md. Ops that read
    data at run-time indices (gather, scatter and their _elements/_nd
    forms) first check them: an index outside its dimension makes the code
    call the runtime's `loom_rt_index_error` (loom/abi/checks.h), declared
    with the ops' descriptions as module symbols, hence a module pass.

    With `byte-products`, quantized products of an unsigned 8-bit
    activation and a constant signed 8-bit weight keep both operands as
    bytes, widened in the contraction's body, and subtract the
    activation's zero point in the epilogue (za times the weights' sum per
    output channel): the form a target that multiplies bytes (x86 VNNI)
    takes. The results are the same integers.
  }];
  let options = [
    Option<"byteProducts", "byte-products", "bool", /*default=*/"false",
           "Keep u8 x s8 quantized products in bytes">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

#endif // LOOM_CONVERSION_PASSES_TD
