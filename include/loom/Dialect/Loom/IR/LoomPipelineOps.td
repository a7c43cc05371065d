//===- LoomPipelineOps.td - Pipeline stages ----------------*- tablegen -*-===//
//
// The region op that pipeline parallelism (-loom-partition with a "pp" grid
// axis) wraps around the ops of one stage for one micro-batch. The shard
// dialect has send and recv but no way to say that only some ranks run a
// piece of the program; this op is that word.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_IR_LOOMPIPELINEOPS_TD
#define LOOM_DIALECT_LOOM_IR_LOOMPIPELINEOPS_TD

include "loom/Dialect/Loom/IR/LoomBase.td"
include "mlir/IR/SymbolInterfaces.td"

def Loom_PipelineStageOp : Loom_Op<"pipeline_stage", [IsolatedFromAbove,
    SingleBlock, RecursiveMemoryEffects,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "The ops of one pipeline stage, run only by that stage's ranks";
  let description = [{
    Runs its region on the ranks of `grid` whose coordinate along
    `grid_axis` is `stage`; every other rank skips it, and its results there
    are zeros of the result types (pipeline partitioning only reads them on
    the stage's own ranks, and broadcasts the last stage's results).

    The operands are the values the stage reads from outside (the inputs of
    its micro-batch and the weights); the one block's arguments stand for
    them in order (the region is isolated from above, so a rank's program
    can keep its own stages and drop the others). Activations between
    stages do not flow through operands: the region receives them from the
    previous stage with `shard.recv` and sends what later stages need with
    `shard.send`, both along `grid_axis`. `micro_batch` says which
    micro-batch of the GPipe schedule the region computes; it does not change
    what the region does.

    Example (stage 1 of 2, micro-batch 0):

    ```mlir
    %y = loom.pipeline_stage @grid axis 0 stage 1 micro_batch 0
        ins(%w : tensor<16x16xf32>) -> tensor<2x16xf32> {
    ^bb0(%weight: tensor<16x16xf32>):
      %buffer = tensor.empty() : tensor<2x16xf32>
      %h = shard.recv %buffer on @grid grid_axes = [0] source = [0]
          : (tensor<2x16xf32>) -> tensor<2x16xf32>
      %0 = loom.matmul %h, %weight : tensor<2x16xf32>, tensor<16x16xf32> -> tensor<2x16xf32>
      loom.yield %0 : tensor<2x16xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$inputs, FlatSymbolRefAttr:$grid,
      I64Attr:$grid_axis, I64Attr:$stage, I64Attr:$micro_batch);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $grid `axis` $grid_axis `stage` $stage `micro_batch` $micro_batch
    (`ins` `(` $inputs^ `:` type($inputs) `)`)?
    (`->` type($results)^)? attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getGridAxisIndex() { return getGridAxisAttr().getInt(); }
    int64_t getStageIndex() { return getStageAttr().getInt(); }
    int64_t getMicroBatchIndex() { return getMicroBatchAttr().getInt(); }
  }];
}

#endif // LOOM_DIALECT_LOOM_IR_LOOMPIPELINEOPS_TD
