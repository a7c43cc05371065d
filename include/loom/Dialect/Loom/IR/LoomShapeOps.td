//===- LoomShapeOps.td - Constants, data movement, shapes --*- tablegen -*-===//

#ifndef LOOM_DIALECT_LOOM_IR_LOOMSHAPEOPS_TD
#define LOOM_DIALECT_LOOM_IR_LOOMSHAPEOPS_TD

include "loom/Dialect/Loom/IR/LoomBase.td"

def Loom_ConstantOp : Loom_Op<"constant", [ConstantLike, Pure,
                                           AllTypesMatch<["value", "result"]>]> {
  let summary = "A constant tensor: small values inline, weights as resources";
  let description = Loom_OpDoc<[{
    Holds a constant tensor. The importer stores initializers larger than a
    few elements as `dense_resource` blobs so that a model with gigabytes of
    weights imports quickly and prints small.}],
    "Constant (opset 1-13), initializers",
    "%w = loom.constant dense_resource<fc1_weight> : tensor<512x512xf32>">.text;
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = "$value attr-dict";
  let hasFolder = 1;
  let builders = [OpBuilder<(ins "::mlir::ElementsAttr":$value), [{
    build($_builder, $_state, value.getType(), value);
  }]>];
}

def Loom_ReshapeOp : Loom_Op<"reshape", [Pure]> {
  let summary = "Reshape to a shape given as a tensor";
  let description = Loom_OpDoc<[{
    ONNX Reshape: `shape` may hold one -1 (inferred) and, unless `allowzero`,
    zeros that copy the input dimension. The result type is stated: it
    depends on the values of `shape`; the canonicalizer folds a constant
    `shape` that matches it.}],
    "Reshape (opset 5-14), Flatten, Squeeze/Unsqueeze of static shapes",
    "%y = loom.reshape %x, %s : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<6x4xf32>">.text;
  let arguments = (ins Loom_Tensor:$input, Loom_ShapeTensor:$shape,
                       DefaultValuedAttr<BoolAttr, "false">:$allowzero);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = "$input `,` $shape attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Loom_TransposeOp : Loom_Op<"transpose",
    [Pure, InferTypeOpAdaptorWithIsCompatible]> {
  let summary = "Permute dimensions";
  let description = Loom_OpDoc<[{
    Result dimension `i` is input dimension `perm[i]`.}],
    "Transpose (opset 1-13)",
    "%y = loom.transpose %x {perm = array<i64: 0, 2, 1>} : tensor<2x3x4xf32> -> tensor<2x4x3xf32>">.text;
  let arguments = (ins Loom_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Loom_ConcatOp : Loom_Op<"concat", [Pure,
                                       InferTypeOpAdaptorWithIsCompatible]> {
  let summary = "Concatenate along an axis";
  let description = Loom_OpDoc<"Joins the operands along `axis`.",
    "Concat (opset 4-13)",
    "%y = loom.concat %a, %b {axis = 0 : i64} : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<5x4xf32>">.text;
  let arguments = (ins Variadic<Loom_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type($inputs, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Loom_CacheAppendOp : Loom_Op<"cache_append"> {
  let summary = "Append to a key/value cache in place";
  let description = Loom_OpDoc<[{
    `cache` holds up to its size along `axis` positions (its capacity), of
    which the first `length` (a scalar) are filled. The op writes `update`
    after them, at positions `length` to `length + update.shape[axis]`, and
    returns the first `length + update.shape[axis]` positions. It replaces
    a decoder export's `present = Concat(past, update)` when the cache is an
    engine input that the runtime keeps between calls
    (loom-kv-cache-in-place): compiled, the write goes into the cache's
    buffer, so a decode step copies only the new positions. Not pure: the
    write is the point, even where the result goes unused. A `length` or
    update that does not fit the capacity is an error at run time.}],
    "Concat of past and present keys/values (loom-kv-cache-in-place)",
    "%kv = loom.cache_append %cache, %new, %len {axis = 2 : i64} : (tensor<1x2x512x16xf32>, tensor<1x2x1x16xf32>, tensor<i64>) -> tensor<1x2x?x16xf32>">.text;
  let arguments = (ins Loom_Tensor:$cache, Loom_Tensor:$update,
                       RankedTensorOf<[I64]>:$length, I64Attr:$axis);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = "$cache `,` $update `,` $length attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Loom_SplitOp : Loom_Op<"split", [Pure]> {
  let summary = "Split along an axis";
  let description = Loom_OpDoc<[{
    Cuts `input` along `axis` into consecutive pieces of `sizes`; without
    `sizes` the pieces are equal (the last may be smaller, as ONNX Split-18).
    The result types are stated, because without `sizes` their number is
    not in the operand types or attributes; the verifier checks them against
    `sizes` or the equal split, and a builder infers them from `sizes`.}],
    "Split (opset 2-13)",
    "%a, %b = loom.split %x {axis = 1 : i64, sizes = array<i64: 2, 6>} : tensor<4x8xf32> -> (tensor<4x2xf32>, tensor<4x6xf32>)">.text;
  let arguments = (ins Loom_Tensor:$input, I64Attr:$axis,
                       OptionalAttr<DenseI64ArrayAttr>:$sizes);
  let results = (outs Variadic<Loom_Tensor>:$results);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($results)";
  let hasVerifier = 1;
  let builders = [
    // Infers one result per size.
    OpBuilder<(ins "::mlir::Value":$input, "int64_t":$axis,
                   "::llvm::ArrayRef<int64_t>":$sizes)>
  ];
}

def Loom_SliceOp : Loom_Op<"slice", [Pure, AttrSizedOperandSegments]> {
  let summary = "Strided slice with ONNX clamping semantics";
  let description = Loom_OpDoc<[{
    `starts`, `ends`, and the optional `axes` and `steps` are 1-D tensors
    (i32 or i64) of one length. Negative indices count from the end;
    out-of-range values clamp (ONNX Slice-13). The result type is stated: it
    depends on the values of `starts`, `ends`, `axes` and `steps`.}],
    "Slice (opset 1-13)",
    "%y = loom.slice %x, %starts, %ends, %axes, %steps : (tensor<8x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<8x4xf32>">.text;
  let arguments = (ins Loom_Tensor:$input, Loom_IndexTensor:$starts,
                       Loom_IndexTensor:$ends, Optional<Loom_IndexTensor>:$axes,
                       Optional<Loom_IndexTensor>:$steps);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $starts `,` $ends (`,` $axes^)? (`,` $steps^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Loom_GatherOp : Loom_Op<"gather", [Pure,
                                       InferTypeOpAdaptorWithIsCompatible]> {
  let summary = "Gather slices along an axis (numpy take)";
  let description = Loom_OpDoc<[{
    Result shape: `data.shape[:axis] + indices.shape + data.shape[axis+1:]`.
    Negative indices count from the end.}],
    "Gather (opset 1-13)",
    "%y = loom.gather %emb, %ids {axis = 0 : i64} : tensor<1000x64xf32>, tensor<2x8xi64> -> tensor<2x8x64xf32>">.text;
  let arguments = (ins Loom_Tensor:$data, Loom_IndexTensor:$indices,
                       DefaultValuedAttr<I64Attr, "0">:$axis);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = [{
    $data `,` $indices attr-dict `:` type($data) `,` type($indices) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Loom_GatherElementsOp : Loom_Op<"gather_elements",
    [Pure, InferTypeOpAdaptorWithIsCompatible]> {
  let summary = "Gather single elements along an axis (torch.gather)";
  let description = Loom_OpDoc<[{
    `out[i][j] = data[indices[i][j]][j]` for axis 0, likewise for others; the
    result has the shape of `indices`.}],
    "GatherElements (opset 11-13)",
    "%y = loom.gather_elements %x, %i {axis = 1 : i64} : tensor<3x4xf32>, tensor<3x2xi64> -> tensor<3x2xf32>">.text;
  let arguments = (ins Loom_Tensor:$data, Loom_IndexTensor:$indices,
                       DefaultValuedAttr<I64Attr, "0">:$axis);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = [{
    $data `,` $indices attr-dict `:` type($data) `,` type($indices) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Loom_GatherNDOp : Loom_Op<"gather_nd",
    [Pure, InferTypeOpAdaptorWithIsCompatible]> {
  let summary = "Gather slices addressed by index tuples";
  let description = Loom_OpDoc<[{
    The last dimension of `indices` addresses the leading dimensions of
    `data` after `batch_dims` shared batch dimensions. When the length of
    the index tuples is dynamic, so is the result rank: inference then gives
    an unranked type that the stated result type refines.}],
    "GatherND (opset 11-13)",
    "%y = loom.gather_nd %x, %i : tensor<2x2xf32>, tensor<2x2xi64> -> tensor<2xf32>">.text;
  let arguments = (ins Loom_Tensor:$data, Loom_IndexTensor:$indices,
                       DefaultValuedAttr<I64Attr, "0">:$batch_dims);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = [{
    $data `,` $indices attr-dict `:` type($data) `,` type($indices) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Loom_ScatterElementsOp : Loom_Op<"scatter_elements", [Pure,
                                         AllTypesMatch<["data", "result"]>]> {
  let summary = "Scatter single elements along an axis";
  let description = Loom_OpDoc<[{
    A copy of `data` where `updates[i][j]` goes to `[indices[i][j]][j]` (axis
    0). `reduction` is "none", "add", "mul", "max" or "min".}],
    "ScatterElements (opset 11-16), Scatter (opset 9-10)",
    "%y = loom.scatter_elements %x, %i, %u {axis = 0 : i64} : tensor<3x3xf32>, tensor<2x3xi64>, tensor<2x3xf32> -> tensor<3x3xf32>">.text;
  let arguments = (ins Loom_Tensor:$data, Loom_IndexTensor:$indices,
                       Loom_Tensor:$updates,
                       DefaultValuedAttr<I64Attr, "0">:$axis,
                       DefaultValuedStrAttr<StrAttr, "none">:$reduction);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = [{
    $data `,` $indices `,` $updates attr-dict `:` type($data) `,`
    type($indices) `,` type($updates) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Loom_ScatterNDOp : Loom_Op<"scatter_nd", [Pure,
                                   AllTypesMatch<["data", "result"]>]> {
  let summary = "Scatter slices addressed by index tuples";
  let description = Loom_OpDoc<[{
    A copy of `data` with the slices addressed by the last dimension of
    `indices` replaced (or combined, per `reduction`) by `updates`.}],
    "ScatterND (opset 11-16)",
    "%y = loom.scatter_nd %x, %i, %u : tensor<8xf32>, tensor<4x1xi64>, tensor<4xf32> -> tensor<8xf32>">.text;
  let arguments = (ins Loom_Tensor:$data, Loom_IndexTensor:$indices,
                       Loom_Tensor:$updates,
                       DefaultValuedStrAttr<StrAttr, "none">:$reduction);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = [{
    $data `,` $indices `,` $updates attr-dict `:` type($data) `,`
    type($indices) `,` type($updates) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Loom_PadOp : Loom_Op<"pad", [Pure]> {
  let summary =
      "Pad with a constant, by reflection, edge replication or wrapping";
  let description = Loom_OpDoc<[{
    `pads` is a 1-D i64 tensor holding the begin pads of every axis, then the
    end pads; negative pads crop. `mode` is "constant", "reflect", "edge" or
    "wrap"; `constant_value` is a scalar tensor (zero when absent). The result
    type is stated: it depends on the values of `pads`.}],
    "Pad (opset 2-13)",
    "%y = loom.pad %x, %p : (tensor<2x3xf32>, tensor<4xi64>) -> tensor<4x7xf32>">.text;
  let arguments = (ins Loom_Tensor:$input, Loom_ShapeTensor:$pads,
                       Optional<Loom_Tensor>:$constant_value,
                       DefaultValuedStrAttr<StrAttr, "constant">:$mode);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $pads (`,` $constant_value^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Loom_ExpandOp : Loom_Op<"expand", [Pure]> {
  let summary = "Broadcast to a shape given as a tensor";
  let description = Loom_OpDoc<[{
    The result shape is the numpy broadcast of the input shape and `shape`
    (so dimensions of 1 in `shape` keep the input's size). The result type is
    stated: it depends on the values of `shape`.}],
    "Expand (opset 8-13)",
    "%y = loom.expand %x, %s : (tensor<3x1xf32>, tensor<2xi64>) -> tensor<3x4xf32>">.text;
  let arguments = (ins Loom_Tensor:$input, Loom_ShapeTensor:$shape);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = "$input `,` $shape attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Loom_TileOp : Loom_Op<"tile", [Pure]> {
  let summary = "Repeat the input along each axis";
  let description = Loom_OpDoc<[{
    Result dimension `i` is `input.shape[i] * repeats[i]`. The result type is
    stated: it depends on the values of `repeats`.}],
    "Tile (opset 6-13)",
    "%y = loom.tile %x, %r : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<4x3xf32>">.text;
  let arguments = (ins Loom_Tensor:$input, Loom_ShapeTensor:$repeats);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = "$input `,` $repeats attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

class Loom_AxesReshapeOp<string mnemonic, string what, string onnx,
                         string example>
    : Loom_Op<mnemonic, [Pure, InferTypeOpAdaptorWithIsCompatible]> {
  let summary = what;
  let description = Loom_OpDoc<what, onnx, example>.text;
  let arguments = (ins Loom_Tensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Loom_SqueezeOp : Loom_AxesReshapeOp<"squeeze",
    "Remove the listed dimensions of size 1 (all size-1 dimensions if empty)",
    "Squeeze (opset 1-13)",
    "%y = loom.squeeze %x {axes = array<i64: 1>} : tensor<2x1x3xf32> -> tensor<2x3xf32>">;
def Loom_UnsqueezeOp : Loom_AxesReshapeOp<"unsqueeze",
    "Insert dimensions of size 1 at the listed result positions",
    "Unsqueeze (opset 1-13)",
    "%y = loom.unsqueeze %x {axes = array<i64: 0>} : tensor<3xf32> -> tensor<1x3xf32>">;

def Loom_ShapeOp : Loom_Op<"shape", [Pure,
                                     InferTypeOpAdaptorWithIsCompatible]> {
  let summary = "The shape of a tensor as a 1-D i64 tensor";
  let description = Loom_OpDoc<[{
    Dimensions `[start, end)` of the input shape (negative bounds count from
    the end and clamp). Folds to a constant when those dimensions are static.}],
    "Shape (opset 1-15)",
    "%s = loom.shape %x : tensor<?x3xf32> -> tensor<2xi64>">.text;
  let arguments = (ins Loom_Tensor:$input,
                       DefaultValuedAttr<I64Attr, "0">:$start,
                       OptionalAttr<I64Attr>:$end);
  let results = (outs Loom_ShapeTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Loom_SizeOp : Loom_Op<"size", [Pure, InferTypeOpAdaptorWithIsCompatible]> {
  let summary = "The number of elements as a 0-D i64 tensor";
  let description = Loom_OpDoc<summary, "Size (opset 1-13)",
    "%n = loom.size %x : tensor<2x?xf32> -> tensor<i64>">.text;
  let arguments = (ins Loom_Tensor:$input);
  let results = (outs 0DTensorOf<[I64]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
}

def Loom_RangeOp : Loom_Op<"range", [Pure]> {
  let summary = "Evenly spaced values: start, start + delta, ... < limit";
  let description = Loom_OpDoc<[{
    The three operands are 0-D tensors of the result's element type; the
    length is `max(ceil((limit - start) / delta), 0)`. The result type is
    stated: it depends on the values of `start`, `limit` and `delta`.}],
    "Range (opset 11)",
    "%r = loom.range %s, %l, %d : tensor<i64>, tensor<i64>, tensor<i64> -> tensor<?xi64>">.text;
  let arguments = (ins Loom_Tensor:$start, Loom_Tensor:$limit,
                       Loom_Tensor:$delta);
  let results = (outs 1DTensorOf<[AnyType]>:$result);
  let assemblyFormat = [{
    $start `,` $limit `,` $delta attr-dict `:` type($start) `,` type($limit)
    `,` type($delta) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Loom_ConstantOfShapeOp : Loom_Op<"constant_of_shape", [Pure]> {
  let summary = "A tensor of a given shape filled with one value";
  let description = Loom_OpDoc<summary # [{. The result type is stated: it
    depends on the values of `shape`.}], "ConstantOfShape (opset 9-20)",
    "%z = loom.constant_of_shape %s {value = 0.0 : f32} : tensor<2xi64> -> tensor<?x4xf32>">.text;
  let arguments = (ins Loom_ShapeTensor:$shape, TypedAttrInterface:$value);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = "$shape attr-dict `:` type($shape) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Loom_OneHotOp : Loom_Op<"one_hot", [Pure]> {
  let summary = "One-hot encoding";
  let description = Loom_OpDoc<[{
    Inserts a dimension of size `depth` at `axis`; `values` is `[off, on]`.
    Negative indices count from `depth`; out-of-range indices give all-off.
    The result type is stated: it depends on the value of `depth`.}],
    "OneHot (opset 9-11)",
    "%y = loom.one_hot %i, %d, %v {axis = -1 : i64} : tensor<4xi64>, tensor<i64>, tensor<2xf32> -> tensor<4x10xf32>">.text;
  let arguments = (ins Loom_Tensor:$indices, Loom_Tensor:$depth,
                       Loom_Tensor:$values,
                       DefaultValuedAttr<I64Attr, "-1">:$axis);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = [{
    $indices `,` $depth `,` $values attr-dict `:` type($indices) `,`
    type($depth) `,` type($values) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Loom_TriluOp : Loom_Op<"trilu", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "Keep the upper or lower triangle of the last two axes";
  let description = Loom_OpDoc<[{
    Keeps elements on and above (`upper`) or on and below the `k`-th
    diagonal; `k` is an optional 0-D i64 tensor (0 when absent).}],
    "Trilu (opset 14)",
    "%y = loom.trilu %x {upper = false} : (tensor<4x4xf32>) -> tensor<4x4xf32>">.text;
  let arguments = (ins Loom_Tensor:$input, Optional<Loom_Tensor>:$k,
                       DefaultValuedAttr<BoolAttr, "true">:$upper);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = [{
    $input (`,` $k^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Loom_NonZeroOp : Loom_Op<"non_zero", [Pure]> {
  let summary = "Indices of the non-zero elements";
  let description = Loom_OpDoc<[{
    A `[rank, count]` i64 tensor of the coordinates of non-zero elements in
    row-major order; `count` is only known at run time. The result type is
    stated: it depends on the values of `input`.}],
    "NonZero (opset 9-13)",
    "%i = loom.non_zero %x : tensor<3x4xf32> -> tensor<2x?xi64>">.text;
  let arguments = (ins Loom_Tensor:$input);
  let results = (outs 2DTensorOf<[I64]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

#endif // LOOM_DIALECT_LOOM_IR_LOOMSHAPEOPS_TD
