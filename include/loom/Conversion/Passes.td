//===- Passes.td - Lowerings out of the loom dialect -------*- tablegen -*-===//

#ifndef LOOM_CONVERSION_PASSES_TD
#define LOOM_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertLoomToLinalgPass : Pass<"convert-loom-to-linalg",
                                   "::mlir::func::FuncOp"> {
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
    that names it. The supported set is in docs/codegen.md.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

#endif // LOOM_CONVERSION_PASSES_TD
