//===- LoomControlFlowOps.td - Control flow ----------------*- tablegen -*-===//
//
// ONNX's If: a region op per branch, lowered to scf.if. Like loom.fusion,
// the branches are isolated from above: the values a branch reads from
// the enclosing program are operands, so every pass sees the op's data
// flow in its operand list and a branch can be reasoned about on its own.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_IR_LOOMCONTROLFLOWOPS_TD
#define LOOM_DIALECT_LOOM_IR_LOOMCONTROLFLOWOPS_TD

include "loom/Dialect/Loom/IR/LoomBase.td"

def Loom_IfOp : Loom_Op<"if", [IsolatedFromAbove, RecursiveMemoryEffects]> {
  let summary = "Runs one of two regions, chosen by a boolean at run time";
  let description = [{
    Runs `then` when the single element of `condition` is true and `else`
    otherwise; the results are what the branch that ran yields. The inputs
    are the values either branch reads from the enclosing program; each
    region's one block has one argument per input, in order. The two
    branches may yield values of different static shapes (ONNX allows it
    from If-11 on): the results have every size on which they agree, `?`
    elsewhere, and a branch casts what it yields to that type.

    ONNX: If (opset 1 and later) with tensor outputs. A condition known at
    import time does not make an op: the importer imports the branch it
    selects in place.

    Example:

    ```mlir
    %r = loom.if %c : tensor<i1> ins(%x : tensor<4xf32>) -> tensor<?xf32> {
    ^bb0(%a: tensor<4xf32>):
      %0 = tensor.cast %a : tensor<4xf32> to tensor<?xf32>
      loom.yield %0 : tensor<?xf32>
    } else {
    ^bb0(%a: tensor<4xf32>):
      %0 = loom.constant dense<> : tensor<0xf32>
      %1 = tensor.cast %0 : tensor<0xf32> to tensor<?xf32>
      loom.yield %1 : tensor<?xf32>
    }
    ```
  }];
  let arguments = (ins Loom_BoolTensor:$condition, Variadic<AnyType>:$inputs);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$thenRegion,
                 SizedRegion<1>:$elseRegion);
  let assemblyFormat = [{
    $condition `:` type($condition)
    (`ins` `(` $inputs^ `:` type($inputs) `)`)?
    (`->` type($results)^)? attr-dict-with-keyword
    $thenRegion `else` $elseRegion
  }];
  let hasVerifier = 1;
}

#endif // LOOM_DIALECT_LOOM_IR_LOOMCONTROLFLOWOPS_TD
