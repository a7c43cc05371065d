//===- LoomFusionOps.td - Kernel groups --------------------*- tablegen -*-===//
//
// The region op that kernel formation (-loom-form-kernels) wraps around a
// group of ops meant to become one kernel, and its terminator.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_IR_LOOMFUSIONOPS_TD
#define LOOM_DIALECT_LOOM_IR_LOOMFUSIONOPS_TD

include "loom/Dialect/Loom/IR/LoomBase.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

def Loom_FusionOp : Loom_Op<"fusion", [IsolatedFromAbove, SingleBlock,
    RecursiveMemoryEffects]> {
  let summary = "A group of loom ops that runs as one kernel";
  let description = [{
    Holds ops that a backend generates as a single kernel. The operands are
    the values the group reads from outside; the one block's arguments
    stand for them in order (the region is isolated from above, so a kernel
    can be compiled on its own). The block ends with `loom.yield`, whose
    operands become the results: the values that ops outside the group
    use.

    `kind` says how the group was formed (see docs/kernel-formation.md):
    `"elementwise"` (elementwise and broadcasting ops only), `"reduction"`
    (a reduction, softmax or normalization with the elementwise ops it
    absorbed or that follow it) or `"epilogue"` (a matmul, convolution or
    attention with the elementwise ops applied to its result).

    Example:

    ```mlir
    %y = loom.fusion "epilogue" ins(%x, %w, %b : tensor<4x8xf32>,
        tensor<8x16xf32>, tensor<16xf32>) -> tensor<4x16xf32> {
    ^bb0(%a: tensor<4x8xf32>, %c: tensor<8x16xf32>, %d: tensor<16xf32>):
      %0 = loom.matmul %a, %c : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
      %1 = loom.add %0, %d : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
      %2 = loom.gelu %1 : tensor<4x16xf32>
      loom.yield %2 : tensor<4x16xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$inputs, StrAttr:$kind);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $kind (`ins` `(` $inputs^ `:` type($inputs) `)`)?
    (`->` type($results)^)? attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
}

def Loom_YieldOp : Loom_Op<"yield", [Pure, Terminator, ReturnLike,
    ParentOneOf<["FusionOp", "PipelineStageOp", "IfOp", "LoopOp"]>]> {
  let summary = "Ends a loom region op (fusion, stage, branch, loop body)";
  let description = [{
    Example:

    ```mlir
    loom.yield %0, %1 : tensor<4xf32>, tensor<4xi1>
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

#endif // LOOM_DIALECT_LOOM_IR_LOOMFUSIONOPS_TD
