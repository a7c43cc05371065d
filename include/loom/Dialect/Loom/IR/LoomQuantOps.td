//===- LoomQuantOps.td - Quantization ops ------------------*- tablegen -*-===//
//
// Quantized values are plain tensors of a narrow element type (integers of
// 2 to 16 bits, the 8-bit floats, f4E2M1FN) that travel with their scale and zero point as separate
// operands: the quantization parameters are data, not part of the type, so
// every other pass, the reference executor and the lowerings see ordinary
// tensors. Activations are quantized per tensor; weights per tensor or per
// output channel.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_IR_LOOMQUANTOPS_TD
#define LOOM_DIALECT_LOOM_IR_LOOMQUANTOPS_TD

include "loom/Dialect/Loom/IR/LoomBase.td"

def Loom_QuantElement : AnyTypeOf<[AnySignlessInteger, AnyUnsignedInteger,
                                   F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ,
                                   F4E2M1FN]>;
def Loom_QuantTensor : RankedTensorOf<[Loom_QuantElement]>;
// A contraction operand: 8-bit integers or fp8 (e4m3).
def Loom_Quant8Tensor : RankedTensorOf<[I8, UI8, F8E4M3FN]>;

def Loom_QuantizeOp : Loom_Op<"quantize", [Pure]> {
  let summary = "Affine quantization of a float tensor";
  let description = Loom_OpDoc<[{
    Integer results: `saturate(round(x / scale) + zero_point)`, with `round`
    half to even and `x / scale` computed in the scale's float type.
    Float results (the 8-bit floats, f4E2M1FN): `x / scale` rounded to
    nearest even in the result type, no zero point; with `saturate` (the
    default) values beyond the range become the largest finite value (+-448
    for f8E4M3FN), without it infinity (f8E5M2) or NaN; f4E2M1FN always
    saturates. `scale` and `zero_point` broadcast against `x` (per-axis and
    blocked parameters are reshaped or gathered so that they do), and
    `zero_point` has the result's element type; without it the zero point
    is 0.}],
    "QuantizeLinear (opset 10-25)",
    "%q = loom.quantize %x, %scale, %zp : (tensor<4x8xf32>, tensor<f32>, tensor<i8>) -> tensor<4x8xi8>">.text;
  let arguments = (ins Loom_FloatTensor:$input, Loom_FloatTensor:$scale,
                       Optional<Loom_QuantTensor>:$zero_point,
                       DefaultValuedAttr<BoolAttr, "true">:$saturate);
  let results = (outs Loom_QuantTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale (`,` $zero_point^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Loom_DequantizeOp : Loom_Op<"dequantize", [Pure]> {
  let summary = "Affine dequantization to a float tensor";
  let description = Loom_OpDoc<[{
    `(x - zero_point) * scale` in the result's (the scale's) float type.
    `scale` and `zero_point` broadcast against `x`; `zero_point` has `x`'s
    element type, and without it the zero point is 0.}],
    "DequantizeLinear (opset 10-25)",
    "%x = loom.dequantize %q, %scale, %zp : (tensor<4x8xi8>, tensor<8xf32>, tensor<8xi8>) -> tensor<4x8xf32>">.text;
  let arguments = (ins Loom_QuantTensor:$input, Loom_FloatTensor:$scale,
                       Optional<Loom_QuantTensor>:$zero_point);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale (`,` $zero_point^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
  // Small constants wider than 8 bits (a QDQ model's i32 biases) fold to
  // floats. 8-bit constants are quantized weights: -loom-fold-qdq keeps
  // them 8-bit in quantized contractions and evaluates the others.
  let hasFolder = 1;
  let extraClassDeclaration = [{
    /// `(input - zero_point) * scale` on constants, in `type` (the
    /// result's): each element computed in double and rounded once, as
    /// the reference executor computes it. `input` and `zeroPoint` are
    /// integer dense elements or resources; `zeroPoint` may be null.
    static ::mlir::DenseElementsAttr
    evaluate(::mlir::ElementsAttr input, ::mlir::DenseElementsAttr scale,
             ::mlir::ElementsAttr zeroPoint, ::mlir::RankedTensorType type);
  }];
}

def Loom_QMatMulOp : Loom_Op<"qmatmul", [Pure, AttrSizedOperandSegments]> {
  let summary = "Matrix product of quantized operands with a float result";
  let description = Loom_OpDoc<[{
    `result[..., m, n] = lhs_scale * rhs_scale[n] *
       sum_k (lhs[..., m, k] - lhs_zp) * (rhs[k, n] - rhs_zp[n])`.
    `lhs` `[..., M, K]` is an activation quantized per tensor (`lhs_scale`
    and `lhs_zero_point` are 0-D); `rhs` `[K, N]` is a weight quantized per
    tensor (0-D parameters) or per output column (`[N]`). Integer operands
    (i8/ui8) accumulate exactly (i32 in a kernel); f8E4M3FN operands
    accumulate in f32 and take no zero points. Zero points come both or
    neither. Formed from QDQ patterns by `-loom-fold-qdq`.}],
    "MatMul between DequantizeLinear nodes (QDQ), QLinearMatMul (opset 10)",
    "%y = loom.qmatmul %a, %w scales(%sa, %sw) zero_points(%za, %zw) : (tensor<4x16xui8>, tensor<16x8xi8>, tensor<f32>, tensor<8xf32>, tensor<ui8>, tensor<8xi8>) -> tensor<4x8xf32>">.text;
  let arguments = (ins Loom_Quant8Tensor:$lhs, Loom_Quant8Tensor:$rhs,
                       Loom_FloatTensor:$lhs_scale, Loom_FloatTensor:$rhs_scale,
                       Optional<Loom_QuantTensor>:$lhs_zero_point,
                       Optional<Loom_QuantTensor>:$rhs_zero_point);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs `scales` `(` $lhs_scale `,` $rhs_scale `)`
    (`zero_points` `(` $lhs_zero_point^ `,` $rhs_zero_point `)`)? attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Loom_QConvOp : Loom_Op<"qconv", [Pure, AttrSizedOperandSegments]> {
  let summary = "Convolution of quantized operands with a float result";
  let description = Loom_OpDoc<[{
    `loom.conv` of `(input - input_zp)` and `(weight - weight_zp[m])`,
    accumulated exactly, times `input_scale * weight_scale[m]`, plus the
    optional float `bias` `[M]`. `input` is quantized per tensor (0-D
    parameters), `weight` `[M, C/group, K...]` per tensor or per output
    channel (`[M]`). Attributes as for `loom.conv`; zero points come both or
    neither (none for f8E4M3FN).}],
    "Conv between DequantizeLinear nodes (QDQ), QLinearConv (opset 10)",
    "%y = loom.qconv %x, %w scales(%sx, %sw) zero_points(%zx, %zw) bias(%b) {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x3x8x8xui8>, tensor<16x3x3x3xi8>, tensor<f32>, tensor<16xf32>, tensor<ui8>, tensor<16xi8>, tensor<16xf32>) -> tensor<1x16x8x8xf32>">.text;
  let arguments = (ins Loom_Quant8Tensor:$input, Loom_Quant8Tensor:$weight,
                       Loom_FloatTensor:$input_scale,
                       Loom_FloatTensor:$weight_scale,
                       Optional<Loom_QuantTensor>:$input_zero_point,
                       Optional<Loom_QuantTensor>:$weight_zero_point,
                       Optional<Loom_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations,
                       DefaultValuedAttr<I64Attr, "1">:$group);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight `scales` `(` $input_scale `,` $weight_scale `)`
    (`zero_points` `(` $input_zero_point^ `,` $weight_zero_point `)`)?
    (`bias` `(` $bias^ `)`)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // LOOM_DIALECT_LOOM_IR_LOOMQUANTOPS_TD
