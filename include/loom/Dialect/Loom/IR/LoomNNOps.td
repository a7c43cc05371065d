//===- LoomNNOps.td - Neural-network loom ops --------------*- tablegen -*-===//
//
// Contractions, convolutions, pooling, normalizations, softmax, attention,
// rotary embeddings and resizing: the ops that passes must see whole.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_IR_LOOMNNOPS_TD
#define LOOM_DIALECT_LOOM_IR_LOOMNNOPS_TD

include "loom/Dialect/Loom/IR/LoomBase.td"

def Loom_MatMulOp : Loom_Op<"matmul", [Pure,
                                       InferTypeOpAdaptorWithIsCompatible]> {
  let summary = "Matrix product with numpy semantics";
  let description = Loom_OpDoc<[{
    numpy.matmul: 1-D operands are promoted to matrices and the added
    dimension removed from the result; leading (batch) dimensions broadcast.
    Gemm is imported as matmul plus transposes, scaling and bias.}],
    "MatMul (opset 1-13), Gemm (opset 7-13)",
    "%c = loom.matmul %a, %b : tensor<2x4x8xf32>, tensor<8x16xf32> -> tensor<2x4x16xf32>">.text;
  let arguments = (ins Loom_NumericTensor:$lhs, Loom_NumericTensor:$rhs);
  let results = (outs Loom_NumericTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Loom_ConvOp : Loom_Op<"conv", [Pure, InferTypeOpAdaptorWithIsCompatible]> {
  let summary = "N-d grouped convolution (cross-correlation), NCHW layout";
  let description = Loom_OpDoc<[{
    Input `[N, C, D1..Dk]`, weight `[M, C/group, K1..Kk]`, optional bias `[M]`.
    `pads` holds the begin pads of every spatial axis, then the end pads;
    ONNX's `auto_pad` is resolved to explicit pads by the importer.}],
    "Conv (opset 1-11)",
    "%y = loom.conv %x, %w, %b {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>) -> tensor<1x16x8x8xf32>">.text;
  let arguments = (ins Loom_NumericTensor:$input, Loom_NumericTensor:$weight,
                       Optional<Loom_NumericTensor>:$bias,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations,
                       DefaultValuedAttr<I64Attr, "1">:$group);
  let results = (outs Loom_NumericTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Loom_ConvTransposeOp : Loom_Op<"conv_transpose",
    [Pure, InferTypeOpAdaptorWithIsCompatible]> {
  let summary = "N-d grouped transposed convolution, NCHW layout";
  let description = Loom_OpDoc<[{
    Input `[N, C, D1..Dk]`, weight `[C, M/group, K1..Kk]`, optional bias `[M]`.
    Output size per axis: `stride*(in-1) + output_padding + (k-1)*dilation + 1
    - pad_begin - pad_end`. `output_shape` and `auto_pad` are resolved to
    pads by the importer.}],
    "ConvTranspose (opset 1-11)",
    "%y = loom.conv_transpose %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, group = 1 : i64} : (tensor<1x4x3x3xf32>, tensor<4x2x3x3xf32>) -> tensor<1x2x7x7xf32>">.text;
  let arguments = (ins Loom_NumericTensor:$input, Loom_NumericTensor:$weight,
                       Optional<Loom_NumericTensor>:$bias,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations,
                       DenseI64ArrayAttr:$output_padding,
                       DefaultValuedAttr<I64Attr, "1">:$group);
  let results = (outs Loom_NumericTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

class Loom_PoolOp<string mnemonic, string what, string onnx, dag extra>
    : Loom_Op<mnemonic, [Pure, InferTypeOpAdaptorWithIsCompatible]> {
  let summary = what;
  let description = Loom_OpDoc<what # [{

    Windows slide over the spatial axes of an `[N, C, D1..Dk]` input.
    `pads` holds begin pads then end pads; `ceil_mode` rounds the output size
    up as ONNX does, dropping the last window when it would start in the end
    padding. Padded positions never win a max and, unless `count_include_pad`,
    are not counted by an average.}], onnx,
    "%y = loom." # mnemonic # " %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>">.text;
  let arguments = !con((ins Loom_NumericTensor:$input,
                            DenseI64ArrayAttr:$kernel_shape,
                            DenseI64ArrayAttr:$strides,
                            DenseI64ArrayAttr:$pads,
                            DenseI64ArrayAttr:$dilations,
                            DefaultValuedAttr<BoolAttr, "false">:$ceil_mode),
                       extra);
  let results = (outs Loom_NumericTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Loom_MaxPoolOp : Loom_PoolOp<"max_pool", "Max pooling",
    "MaxPool (opset 1-12; with Indices: loom.max_pool_with_indices)", (ins)>;
def Loom_AvgPoolOp : Loom_PoolOp<"avg_pool", "Average pooling",
    "AveragePool (opset 1-11)",
    (ins DefaultValuedAttr<BoolAttr, "false">:$count_include_pad)>;

def Loom_MaxPoolWithIndicesOp : Loom_Op<"max_pool_with_indices",
    [Pure, InferTypeOpAdaptorWithIsCompatible]> {
  let summary = "Max pooling that also returns where each maximum came from";
  let description = Loom_OpDoc<[{
    loom.max_pool with a second result: for each output element, the flat
    index of the input element that won the max, counted over the whole
    input `[N, C, D1..Dk]` (batch and channels included) and ignoring pads,
    as ONNX MaxPool's `Indices` output (what MaxUnpool consumes). With
    `storage_order` 1 the spatial positions are numbered column-major;
    the batch and channel offsets stay row-major.

    This is a separate op, not an optional result of loom.max_pool, because
    computing the indices changes how the pool lowers (it tracks an argmax)
    and every pass that matches loom.max_pool would otherwise have to check
    for, and preserve, the second result. Models rarely ask for the indices
    (SegNet-style unpooling); the plain op stays simple for everyone else.}],
    "MaxPool (opset 8-12) with the Indices output",
    "%y, %i = loom.max_pool_with_indices %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>, tensor<1x3x4x4xi64>">.text;
  let arguments = (ins Loom_NumericTensor:$input,
                       DenseI64ArrayAttr:$kernel_shape,
                       DenseI64ArrayAttr:$strides,
                       DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations,
                       DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                       DefaultValuedAttr<I64Attr, "0">:$storage_order);
  let results = (outs Loom_NumericTensor:$result,
                      RankedTensorOf<[I64]>:$indices);
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `->` type($result) `,` type($indices)
  }];
  let hasVerifier = 1;
}

def Loom_BatchNormOp : Loom_Op<"batch_norm", [Pure,
                                              AllTypesMatch<["input", "result"]>]> {
  let summary = "Batch normalization with running statistics (inference)";
  let description = Loom_OpDoc<[{
    `(x - mean) / sqrt(var + epsilon) * scale + bias` per channel (axis 1).}],
    "BatchNormalization (opset 6-15, inference mode)",
    "%y = loom.batch_norm %x, %s, %b, %m, %v {epsilon = 1.0e-05 : f32} : tensor<1x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32> -> tensor<1x3x4x4xf32>">.text;
  let arguments = (ins Loom_FloatTensor:$input, Loom_FloatTensor:$scale,
                       Loom_FloatTensor:$bias, Loom_FloatTensor:$mean,
                       Loom_FloatTensor:$variance,
                       DefaultValuedAttr<F32Attr, "1e-5">:$epsilon);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale `,` $bias `,` $mean `,` $variance attr-dict `:`
    type($input) `,` type($scale) `,` type($bias) `,` type($mean) `,`
    type($variance) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Loom_InstanceNormOp : Loom_Op<"instance_norm", [Pure,
                                      AllTypesMatch<["input", "result"]>]> {
  let summary = "Instance normalization";
  let description = Loom_OpDoc<[{
    Normalizes each (sample, channel) over the spatial axes, then applies a
    per-channel `scale` and `bias`.}],
    "InstanceNormalization (opset 6)",
    "%y = loom.instance_norm %x, %s, %b {epsilon = 1.0e-05 : f32} : tensor<1x3x4x4xf32>, tensor<3xf32>, tensor<3xf32> -> tensor<1x3x4x4xf32>">.text;
  let arguments = (ins Loom_FloatTensor:$input, Loom_FloatTensor:$scale,
                       Loom_FloatTensor:$bias,
                       DefaultValuedAttr<F32Attr, "1e-5">:$epsilon);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale `,` $bias attr-dict `:` type($input) `,` type($scale)
    `,` type($bias) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Loom_LayerNormOp : Loom_Op<"layer_norm", [Pure,
                                  AllTypesMatch<["input", "result"]>]> {
  let summary = "Layer normalization over the trailing axes from `axis`";
  let description = Loom_OpDoc<[{
    `(x - mean) / sqrt(var + epsilon) * scale + bias` with statistics over
    axes `[axis, rank)`; `scale` and the optional `bias` broadcast against the
    normalized shape. Statistics are computed in at least f32.}],
    "LayerNormalization (opset 17; Mean/InvStdDev outputs unsupported)",
    "%y = loom.layer_norm %x, %g, %b {axis = 2 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x8x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x8x64xf32>">.text;
  let arguments = (ins Loom_FloatTensor:$input, Loom_FloatTensor:$scale,
                       Optional<Loom_FloatTensor>:$bias,
                       DefaultValuedAttr<I64Attr, "-1">:$axis,
                       DefaultValuedAttr<F32Attr, "1e-5">:$epsilon);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale (`,` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Loom_RMSNormOp : Loom_Op<"rms_norm", [Pure,
                                 AllTypesMatch<["input", "result"]>]> {
  let summary = "Root-mean-square normalization (Llama)";
  let description = Loom_OpDoc<[{
    `x / sqrt(mean(x^2 over [axis, rank)) + epsilon) * scale`.}],
    "RMSNormalization (opset 23); recognized from Pow/ReduceMean/Sqrt/Div chains",
    "%y = loom.rms_norm %x, %g {axis = -1 : i64, epsilon = 1.0e-06 : f32} : tensor<2x8x64xf32>, tensor<64xf32> -> tensor<2x8x64xf32>">.text;
  let arguments = (ins Loom_FloatTensor:$input, Loom_FloatTensor:$scale,
                       DefaultValuedAttr<I64Attr, "-1">:$axis,
                       DefaultValuedAttr<F32Attr, "1e-5">:$epsilon);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale attr-dict `:` type($input) `,` type($scale) `->` type($result)
  }];
  let hasVerifier = 1;
}

class Loom_SoftmaxBase<string mnemonic, string what, string onnx>
    : Loom_Op<mnemonic, [Pure, SameOperandsAndResultType, InferTypeOpInterface]> {
  let summary = what;
  let description = Loom_OpDoc<what # [{ along one axis (opset-13 semantics;
    the importer rewrites the older flatten-to-2-D form).}], onnx,
    "%y = loom." # mnemonic # " %x {axis = -1 : i64} : tensor<2x10xf32>">.text;
  let arguments = (ins Loom_FloatTensor:$input,
                       DefaultValuedAttr<I64Attr, "-1">:$axis);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() {
      return ::loom::verifyAxis(getOperation(), getAxis(),
          ::llvm::cast<::mlir::RankedTensorType>(getInput().getType()).getRank());
    }
  }];
}

def Loom_SoftmaxOp : Loom_SoftmaxBase<"softmax", "Softmax",
    "Softmax (opset 1-13)">;
def Loom_LogSoftmaxOp : Loom_SoftmaxBase<"log_softmax", "Log of softmax",
    "LogSoftmax (opset 1-13)">;

def Loom_AttentionOp : Loom_Op<"attention",
    [Pure, InferTypeOpAdaptorWithIsCompatible]> {
  let summary = "Scaled dot-product attention with grouped-query heads";
  let description = Loom_OpDoc<[{
    `softmax(Q K^T * scale + mask) V` on `[B, H, S, D]` queries and
    `[B, Hkv, T, D]` keys/values, where `H` is a multiple of `Hkv`
    (grouped-query and multi-query attention). `mask` is additive (floats) or
    boolean (true keeps) and broadcasts to `[B, H, S, T]`. A query row whose
    keys are all masked gives zeros (ONNX Attention-23's rule; softmax alone
    would give 0 / 0). `scale` defaults to `1/sqrt(D)`.

    Query `i` stands at key position `p(i) = i + T - S` (the queries are the
    last `S` of the `T` keys, as in a decode step after a cache), or
    `p(i) = i` with `start_aligned` (ONNX Attention's frontier without a
    cache, whatever `S` and `T`). `is_causal` masks the keys after `p(i)`;
    `left_window` (when `>= 0`) the keys more than that many positions
    before it (a sliding window: `left_window + 1` keys up to the query's
    own), and `right_window` (when `>= 0`) those more than that many after
    it.}],
    "Attention (opset 23); recognized from MatMul/Softmax/MatMul chains",
    "%o = loom.attention %q, %k, %v {is_causal = true} : (tensor<1x8x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>) -> tensor<1x8x16x64xf32>">.text;
  let arguments = (ins Loom_FloatTensor:$query, Loom_FloatTensor:$key,
                       Loom_FloatTensor:$value,
                       Optional<Loom_Tensor>:$mask,
                       OptionalAttr<F32Attr>:$scale,
                       DefaultValuedAttr<BoolAttr, "false">:$is_causal,
                       DefaultValuedAttr<BoolAttr, "false">:$start_aligned,
                       DefaultValuedAttr<I64Attr, "-1">:$left_window,
                       DefaultValuedAttr<I64Attr, "-1">:$right_window);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`,` $mask^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// The windows, -1 for none (I64Attr's getters return them unsigned).
    int64_t leftWindowSize() { return static_cast<int64_t>(getLeftWindow()); }
    int64_t rightWindowSize() {
      return static_cast<int64_t>(getRightWindow());
    }
    /// Whether keys are masked by their position relative to the query's:
    /// causal, or a window on either side.
    bool hasPositionalMask() {
      return getIsCausal() || leftWindowSize() >= 0 || rightWindowSize() >= 0;
    }
    /// Whether query `row` (of `queries`) may attend key `column` (of
    /// `keys`) by position alone.
    bool keyVisible(int64_t row, int64_t column, int64_t queries,
                    int64_t keys) {
      int64_t position = getStartAligned() ? row : row + keys - queries;
      if (getIsCausal() && column > position)
        return false;
      if (leftWindowSize() >= 0 && column < position - leftWindowSize())
        return false;
      return rightWindowSize() < 0 || column <= position + rightWindowSize();
    }
  }];
  let hasVerifier = 1;
}

def Loom_RotaryEmbeddingOp : Loom_Op<"rotary_embedding", [Pure,
                                         AllTypesMatch<["input", "result"]>]> {
  let summary = "Rotary position embedding";
  let description = Loom_OpDoc<[{
    Rotates pairs of features of `input` `[B, H, S, D]` by angles whose
    cosines and sines are given as `[S, D/2]` (broadcasting over batch and
    heads). With `interleaved`, pairs are `(2i, 2i+1)`; otherwise the
    halves `(i, i + D/2)` (the GPT-NeoX / Llama convention).}],
    "RotaryEmbedding (opset 23); recognized from Slice/Neg/Concat/Mul/Add",
    "%y = loom.rotary_embedding %x, %cos, %sin : tensor<1x8x16x64xf32>, tensor<16x32xf32>, tensor<16x32xf32> -> tensor<1x8x16x64xf32>">.text;
  let arguments = (ins Loom_FloatTensor:$input, Loom_FloatTensor:$cos,
                       Loom_FloatTensor:$sin,
                       DefaultValuedAttr<BoolAttr, "false">:$interleaved);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $cos `,` $sin attr-dict `:` type($input) `,` type($cos) `,`
    type($sin) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Loom_MoEOp : Loom_Op<"moe", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "Mixture-of-experts layer with top-k routing";
  let description = Loom_OpDoc<[{
    Routes each token (row of `input`, `[T, D]`) to the `k` experts with the
    highest routing scores (`scores`, `[T, E]`, e.g. softmax probabilities;
    equal scores keep the lower expert first) and sums the experts' outputs
    weighted by those scores. With `normalize`, the `k` weights of a token
    are divided by their sum. Expert `e` is the MLP
    `activation(x @ w_in[e]) @ w_out[e]` with `w_in` `[E, D, H]` and `w_out`
    `[E, H, D]`; `activation` is one of "relu", "gelu", "silu", "none".
    With the optional `w_gate` `[E, D, H]` the expert is gated (SwiGLU with
    "silu"): `(activation(x @ w_gate[e]) * (x @ w_in[e])) @ w_out[e]`.

    Without `capacity_factor` no assignment is dropped. With it, each expert
    takes at most `C = ceil(capacity_factor * T * k / E)` assignments (at
    most `T`): first choices of all tokens in token order, then second
    choices, and so on; assignments beyond `C` are dropped and contribute
    nothing (the token's other weights are not rescaled; a token with all
    its assignments dropped gets zeros). Expert parallelism applies the
    capacity to each rank's tokens.}],
    "none; recognized from TopK/OneHot routing with dense expert MLPs",
    "%y = loom.moe %x, %p, %w1, %w2 {k = 2 : i64, activation = \"silu\", normalize = true} : (tensor<6x16xf32>, tensor<6x4xf32>, tensor<4x16x32xf32>, tensor<4x32x16xf32>) -> tensor<6x16xf32>">.text;
  let arguments = (ins Loom_FloatTensor:$input, Loom_FloatTensor:$scores,
                       Loom_FloatTensor:$w_in, Loom_FloatTensor:$w_out,
                       Optional<Loom_FloatTensor>:$w_gate,
                       I64Attr:$k,
                       DefaultValuedAttr<BoolAttr, "false">:$normalize,
                       DefaultValuedAttr<StrAttr, "\"none\"">:$activation,
                       OptionalAttr<F64Attr>:$capacity_factor);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $scores `,` $w_in `,` $w_out (`gate` $w_gate^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The number of experts (dimension 0 of `w_in`).
    int64_t getNumExperts() {
      return ::llvm::cast<::mlir::RankedTensorType>(getWIn().getType())
          .getDimSize(0);
    }
    /// The capacity of each expert for `tokens` tokens: the number of
    /// assignments it takes before dropping (`tokens` without a capacity
    /// factor: a token chooses an expert at most once).
    int64_t getCapacity(int64_t tokens);
  }];
}

def Loom_ResizeOp : Loom_Op<"resize", [Pure]> {
  let summary = "Resize the trailing axes by interpolation";
  let description = Loom_OpDoc<[{
    Resizes `input` to the result shape. `scales` is a 1-D f32 tensor with
    one factor per axis (output = floor(input * scale) unless ONNX sizes were
    given: the importer then passes sizes / input for static input shapes).
    The optional `roi` holds `2 * rank` f32 values (begins, then ends, in
    normalized coordinates) and is used by "tf_crop_and_resize", which
    requires it. Both are operands, as in ONNX, so that models computing
    them at run time import; the importer makes them `loom.constant`s when
    they are known. A pass that needs static scales (or roi) matches a
    constant operand, e.g. with `getStaticScales()`, and leaves the op alone
    otherwise.

    `mode` is "nearest", "linear" or "cubic"; `coordinate_transformation_mode`
    and `nearest_mode` follow ONNX Resize-13, `cubic_coeff_a`,
    `exclude_outside` and `extrapolation_value` too. Resize-10 and Upsample
    are expressed with "asymmetric" coordinates. The result type is stated:
    it depends on the values of `scales` (and `roi`).}],
    "Resize (opset 10-13), Upsample (opset 7-9)",
    "%s = loom.constant dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>\n    "
    "%y = loom.resize %x, %s {mode = \"linear\"} : (tensor<1x3x4x4xf32>, tensor<4xf32>) -> tensor<1x3x8x8xf32>">.text;
  let arguments = (ins Loom_NumericTensor:$input,
                       1DTensorOf<[F32]>:$scales,
                       Optional<1DTensorOf<[F32]>>:$roi,
                       DefaultValuedStrAttr<StrAttr, "nearest">:$mode,
                       DefaultValuedStrAttr<StrAttr, "half_pixel">:$coordinate_transformation_mode,
                       DefaultValuedStrAttr<StrAttr, "round_prefer_floor">:$nearest_mode,
                       DefaultValuedAttr<F32Attr, "-0.75">:$cubic_coeff_a,
                       DefaultValuedAttr<BoolAttr, "false">:$exclude_outside,
                       DefaultValuedAttr<F32Attr, "0.0">:$extrapolation_value);
  let results = (outs Loom_NumericTensor:$result);
  let assemblyFormat = [{
    $input `,` $scales (`,` $roi^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The scales when `scales` is a constant, else nullopt.
    std::optional<::llvm::SmallVector<float>> getStaticScales();
    /// The roi when it is given and a constant, else nullopt.
    std::optional<::llvm::SmallVector<float>> getStaticRoi();
  }];
}

#endif // LOOM_DIALECT_LOOM_IR_LOOMNNOPS_TD
