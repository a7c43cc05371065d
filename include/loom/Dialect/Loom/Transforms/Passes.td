//===- Passes.td - Loom graph passes -----------------------*- tablegen -*-===//
//
// Every pass is a thin driver over a pattern library
// (`populate...Patterns`) that other passes and pipelines can reuse.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_TRANSFORMS_PASSES_TD
#define LOOM_DIALECT_LOOM_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def LoomRecognizePass : Pass<"loom-recognize", "::mlir::func::FuncOp"> {
  let summary = "Recognize exported spellings of NN building blocks";
  let description = [{
    Rewrites the op sequences that exporters (PyTorch's above all) emit for
    layer normalization, RMS normalization, GELU (erf and tanh forms), SiLU,
    softmax, scaled dot-product attention (with causal or additive masks and
    grouped-query heads) and rotary embeddings into the single loom ops that
    later passes see whole.
  }];
  let dependentDialects = ["::loom::LoomDialect"];
}

def LoomSimplifyPass : Pass<"loom-simplify", "::mlir::func::FuncOp"> {
  let summary = "Fold batch-norm into convolutions and remove redundant "
                "data movement";
  let description = [{
    Folds inference batch normalization into the preceding convolution's
    weights and bias, cancels inverse transposes and chained reshapes, and
    removes casts that round-trip.
  }];
  let dependentDialects = ["::loom::LoomDialect"];
}

def LoomFormKernelsPass : Pass<"loom-form-kernels", "::mlir::func::FuncOp"> {
  let summary = "Group ops into loom.fusion kernels";
  let description = [{
    Greedy producer-consumer grouping in program order (the policy is in
    docs/kernel-formation.md): elementwise ops join the group of their
    elementwise producer, or of a matmul, convolution, attention,
    reduction, softmax or normalization whose only user they are (an
    epilogue); reductions, softmax and normalizations absorb elementwise
    producers that have no other user. Groups stop at 16 ops, constants stay
    outside as operands, and every group of two or more ops becomes a
    `loom.fusion`. Nothing is recomputed: each op lands in one kernel.
  }];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "Print the number of ops before and kernels after to stderr">
  ];
  let dependentDialects = ["::loom::LoomDialect"];
}

#endif // LOOM_DIALECT_LOOM_TRANSFORMS_PASSES_TD
