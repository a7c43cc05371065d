//===- LoomControlFlowOps.td - Control flow ----------------*- tablegen -*-===//
//
// ONNX's If and Loop: region ops lowered to scf.if and scf.while. Like
// loom.fusion, their regions are isolated from above: the values a region
// reads from the enclosing program are operands, so every pass sees the
// op's data flow in its operand list and a region can be reasoned about on
// its own.
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

def Loom_LoopOp : Loom_Op<"loop", [IsolatedFromAbove, RecursiveMemoryEffects,
    AttrSizedOperandSegments]> {
  let summary = "Runs its body while a count and a condition allow";
  let description = [{
    ONNX's Loop. The body runs for iterations 0, 1, ... while the iteration
    number is below `trip_count` (a scalar i64) and the condition is true:
    `condition` before the first iteration, then what the body yields
    first. The body's block takes the iteration number (tensor<i64>), the
    condition (tensor<i1>), the carried values (`carried`, then what the
    previous iteration yielded for them) and the inputs (`inputs`: what the
    body reads from the enclosing program). It yields the condition, the
    carried values, then one value per scan output. The results are the
    carried values after the last iteration (the initial ones when none
    ran), then each scan output: the values the iterations yielded for it,
    stacked along a new first dimension.

    A carried value's type is the same at every iteration (its sizes may
    be `?` where iterations change them); a scan output's result type is
    its per-iteration type with a first dimension added.

    ONNX: Loop (opset 1 and later) with tensor values. An absent trip count
    is the largest i64, an absent condition true.

    Example:

    ```mlir
    %y, %s = loom.loop %n, %c : tensor<i64>, tensor<i1>
        carried(%y0 : tensor<1xf32>) ins(%x : tensor<5xf32>)
        -> tensor<1xf32>, tensor<?x1xf32> {
    ^bb0(%i: tensor<i64>, %go: tensor<i1>, %y: tensor<1xf32>, %x: tensor<5xf32>):
      %0 = loom.add %y, %y : tensor<1xf32>, tensor<1xf32> -> tensor<1xf32>
      loom.yield %go, %0, %0 : tensor<i1>, tensor<1xf32>, tensor<1xf32>
    }
    ```
  }];
  let arguments = (ins Loom_IndexTensor:$trip_count, Loom_BoolTensor:$condition,
                       Variadic<AnyType>:$carried, Variadic<AnyType>:$inputs);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $trip_count `,` $condition `:` type($trip_count) `,` type($condition)
    (`carried` `(` $carried^ `:` type($carried) `)`)?
    (`ins` `(` $inputs^ `:` type($inputs) `)`)?
    (`->` type($results)^)? attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The number of scan outputs (results after the carried values).
    unsigned getNumScanOutputs() {
      return getNumResults() - getCarried().size();
    }
  }];
}

#endif // LOOM_DIALECT_LOOM_IR_LOOMCONTROLFLOWOPS_TD
