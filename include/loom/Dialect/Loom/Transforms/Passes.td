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

#endif // LOOM_DIALECT_LOOM_TRANSFORMS_PASSES_TD
