//===- LoomReductionOps.td - Reductions, scans and top-k ---*- tablegen -*-===//

#ifndef LOOM_DIALECT_LOOM_IR_LOOMREDUCTIONOPS_TD
#define LOOM_DIALECT_LOOM_IR_LOOMREDUCTIONOPS_TD

include "loom/Dialect/Loom/IR/LoomBase.td"

def Loom_ReduceSumOp : Loom_ReduceOp<"reduce_sum", "ReduceSum (opset 1-13), "
    "ReduceSumSquare, ReduceL1, ReduceL2, ReduceLogSum(Exp) via decomposition",
    "Sum over axes">;
def Loom_ReduceMeanOp : Loom_ReduceOp<"reduce_mean", "ReduceMean (opset 1-18), "
    "GlobalAveragePool", "Arithmetic mean over axes">;
def Loom_ReduceMaxOp : Loom_ReduceOp<"reduce_max", "ReduceMax (opset 1-18), "
    "GlobalMaxPool", "Maximum over axes">;
def Loom_ReduceMinOp : Loom_ReduceOp<"reduce_min", "ReduceMin (opset 1-18)",
    "Minimum over axes">;
def Loom_ReduceProdOp : Loom_ReduceOp<"reduce_prod", "ReduceProd (opset 1-18)",
    "Product over axes">;

class Loom_ArgReduceOp<string mnemonic, string what, string onnx>
    : Loom_Op<mnemonic, [Pure, InferTypeOpAdaptorWithIsCompatible]> {
  let summary = what;
  let description = Loom_OpDoc<what # [{ along `axis`, as i64 indices. Ties
    resolve to the first occurrence, or the last with `select_last_index`.}],
    onnx,
    "%i = loom." # mnemonic # " %x {axis = 1 : i64, keepdims = false} : tensor<2x8xf32> -> tensor<2xi64>">.text;
  let arguments = (ins Loom_NumericTensor:$input, I64Attr:$axis,
                       DefaultValuedAttr<BoolAttr, "true">:$keepdims,
                       DefaultValuedAttr<BoolAttr, "false">:$select_last_index);
  let results = (outs RankedTensorOf<[I64]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Loom_ArgMaxOp : Loom_ArgReduceOp<"argmax", "Index of the maximum",
    "ArgMax (opset 1-13)">;
def Loom_ArgMinOp : Loom_ArgReduceOp<"argmin", "Index of the minimum",
    "ArgMin (opset 1-13)">;

/// A running sum or product along `axis`.
class Loom_CumulativeOp<string mnemonic, string what, string onnx>
    : Loom_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let summary = what;
  let description = Loom_OpDoc<what # [{ along `axis`, inclusive;
    `exclusive` shifts it by one element (the first is the identity),
    `reverse` runs from the end.}], onnx,
    "%y = loom." # mnemonic # " %x {axis = 0 : i64} : tensor<5xf32>">.text;
  let arguments = (ins Loom_NumericTensor:$input, I64Attr:$axis,
                       DefaultValuedAttr<BoolAttr, "false">:$exclusive,
                       DefaultValuedAttr<BoolAttr, "false">:$reverse);
  let results = (outs Loom_NumericTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Loom_CumSumOp : Loom_CumulativeOp<"cumsum", "Cumulative sum",
    "CumSum (opset 11-14)">;
def Loom_CumProdOp : Loom_CumulativeOp<"cumprod", "Cumulative product",
    "CumProd (opset 26)">;

def Loom_TopKOp : Loom_Op<"topk", [Pure]> {
  let summary = "The k largest (or smallest) elements along an axis";
  let description = Loom_OpDoc<[{
    Returns values and i64 indices of the `k` largest (`largest`) or smallest
    elements along `axis`, sorted when `sorted`. Equal values keep the lower
    index first. `k` is a 1-element i64 tensor. The result types are stated:
    they depend on the value of `k`.}], "TopK (opset 1-11)",
    "%v, %i = loom.topk %x, %k {axis = -1 : i64} : tensor<3x8xf32>, tensor<1xi64> -> tensor<3x2xf32>, tensor<3x2xi64>">.text;
  let arguments = (ins Loom_NumericTensor:$input, Loom_ShapeTensor:$k,
                       DefaultValuedAttr<I64Attr, "-1">:$axis,
                       DefaultValuedAttr<BoolAttr, "true">:$largest,
                       DefaultValuedAttr<BoolAttr, "true">:$sorted);
  let results = (outs Loom_NumericTensor:$values,
                      RankedTensorOf<[I64]>:$indices);
  let assemblyFormat = [{
    $input `,` $k attr-dict `:` type($input) `,` type($k) `->` type($values)
    `,` type($indices)
  }];
  let hasVerifier = 1;
}

#endif // LOOM_DIALECT_LOOM_IR_LOOMREDUCTIONOPS_TD
