//===- LoomElementwiseOps.td - Elementwise loom ops --------*- tablegen -*-===//
//
// Unary math, activations, broadcasting arithmetic, comparisons, logic,
// select and cast.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_IR_LOOMELEMENTWISEOPS_TD
#define LOOM_DIALECT_LOOM_IR_LOOMELEMENTWISEOPS_TD

include "loom/Dialect/Loom/IR/LoomBase.td"

//===----------------------------------------------------------------------===//
// Unary math
//===----------------------------------------------------------------------===//

def Loom_AbsOp : Loom_UnaryOp<"abs", "Abs (opset 6-13)", "Absolute value">;
def Loom_NegOp : Loom_UnaryOp<"neg", "Neg (opset 6-13)", "Negation">;
def Loom_SignOp : Loom_UnaryOp<"sign", "Sign (opset 9-13)",
    "Sign: -1, 0 or 1 (0 for NaN inputs is not guaranteed)">;
def Loom_ExpOp : Loom_UnaryOp<"exp", "Exp (opset 6-13)", "Natural exponential",
    Loom_FloatTensor>;
def Loom_LogOp : Loom_UnaryOp<"log", "Log (opset 6-13)", "Natural logarithm",
    Loom_FloatTensor>;
def Loom_SqrtOp : Loom_UnaryOp<"sqrt", "Sqrt (opset 6-13)", "Square root",
    Loom_FloatTensor>;
def Loom_RsqrtOp : Loom_UnaryOp<"rsqrt", "none (formed from 1/Sqrt by passes)",
    "Reciprocal square root", Loom_FloatTensor>;
def Loom_ReciprocalOp : Loom_UnaryOp<"reciprocal", "Reciprocal (opset 6-13)",
    "Reciprocal 1/x", Loom_FloatTensor>;
def Loom_SinOp : Loom_UnaryOp<"sin", "Sin (opset 7)", "Sine", Loom_FloatTensor>;
def Loom_CosOp : Loom_UnaryOp<"cos", "Cos (opset 7)", "Cosine",
    Loom_FloatTensor>;
def Loom_TanOp : Loom_UnaryOp<"tan", "Tan (opset 7)", "Tangent",
    Loom_FloatTensor>;
def Loom_AsinOp : Loom_UnaryOp<"asin", "Asin (opset 7)", "Arcsine",
    Loom_FloatTensor>;
def Loom_AcosOp : Loom_UnaryOp<"acos", "Acos (opset 7)", "Arccosine",
    Loom_FloatTensor>;
def Loom_AtanOp : Loom_UnaryOp<"atan", "Atan (opset 7)", "Arctangent",
    Loom_FloatTensor>;
def Loom_SinhOp : Loom_UnaryOp<"sinh", "Sinh (opset 9)", "Hyperbolic sine",
    Loom_FloatTensor>;
def Loom_CoshOp : Loom_UnaryOp<"cosh", "Cosh (opset 9)", "Hyperbolic cosine",
    Loom_FloatTensor>;
def Loom_AsinhOp : Loom_UnaryOp<"asinh", "Asinh (opset 9)",
    "Inverse hyperbolic sine", Loom_FloatTensor>;
def Loom_AcoshOp : Loom_UnaryOp<"acosh", "Acosh (opset 9)",
    "Inverse hyperbolic cosine", Loom_FloatTensor>;
def Loom_AtanhOp : Loom_UnaryOp<"atanh", "Atanh (opset 9)",
    "Inverse hyperbolic tangent", Loom_FloatTensor>;
def Loom_TanhOp : Loom_UnaryOp<"tanh", "Tanh (opset 6-13)", "Hyperbolic tangent",
    Loom_FloatTensor>;
def Loom_ErfOp : Loom_UnaryOp<"erf", "Erf (opset 9-13)", "Gauss error function",
    Loom_FloatTensor>;
def Loom_FloorOp : Loom_UnaryOp<"floor", "Floor (opset 6-13)", "Round down",
    Loom_FloatTensor>;
def Loom_CeilOp : Loom_UnaryOp<"ceil", "Ceil (opset 6-13)", "Round up",
    Loom_FloatTensor>;
def Loom_RoundOp : Loom_UnaryOp<"round", "Round (opset 11)",
    "Round half to even", Loom_FloatTensor>;
def Loom_NotOp : Loom_UnaryOp<"not", "Not (opset 1)", "Logical negation",
    Loom_BoolTensor>;
def Loom_BitwiseNotOp : Loom_UnaryOp<"bitwise_not", "BitwiseNot (opset 18)",
    "Bitwise complement", Loom_IntegerTensor>;

//===----------------------------------------------------------------------===//
// Activations
//===----------------------------------------------------------------------===//

def Loom_ReluOp : Loom_UnaryOp<"relu", "Relu (opset 6-14)", "max(x, 0)">;
def Loom_SigmoidOp : Loom_UnaryOp<"sigmoid", "Sigmoid (opset 6-13)",
    "Logistic sigmoid 1 / (1 + exp(-x))", Loom_FloatTensor>;
def Loom_SoftplusOp : Loom_UnaryOp<"softplus", "Softplus (opset 1)",
    "log(exp(x) + 1)", Loom_FloatTensor>;
def Loom_SoftsignOp : Loom_UnaryOp<"softsign", "Softsign (opset 1)",
    "x / (1 + |x|)", Loom_FloatTensor>;
def Loom_SiluOp : Loom_UnaryOp<"silu", "none (x * Sigmoid(x), recognized)",
    "SiLU / swish: x * sigmoid(x)", Loom_FloatTensor>;

/// An activation with floating-point parameters.
class Loom_ParamActivationOp<string mnemonic, string onnx, string what,
                             dag params, string exampleAttrs>
    : Loom_Op<mnemonic, [Pure, Elementwise, SameOperandsAndResultType,
                         InferTypeOpInterface]> {
  let summary = what;
  let description = Loom_OpDoc<what, onnx,
      "%y = loom." # mnemonic # " %x {" # exampleAttrs # "} : tensor<8xf32>">.text;
  let arguments = !con((ins Loom_FloatTensor:$input), params);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Loom_LeakyReluOp : Loom_ParamActivationOp<"leaky_relu",
    "LeakyRelu (opset 6-16)", "x if x >= 0 else alpha * x",
    (ins DefaultValuedAttr<F32Attr, "0.01">:$alpha), "alpha = 0.1 : f32">;
def Loom_EluOp : Loom_ParamActivationOp<"elu", "Elu (opset 6)",
    "x if x > 0 else alpha * (exp(x) - 1)",
    (ins DefaultValuedAttr<F32Attr, "1.0">:$alpha), "alpha = 1.0 : f32">;
def Loom_SeluOp : Loom_ParamActivationOp<"selu", "Selu (opset 6)",
    "gamma * (x if x > 0 else alpha * (exp(x) - 1))",
    (ins DefaultValuedAttr<F32Attr, "1.67326319217681884765625">:$alpha,
         DefaultValuedAttr<F32Attr, "1.05070102214813232421875">:$gamma),
    "alpha = 1.6 : f32, gamma = 1.0 : f32">;
def Loom_HardSigmoidOp : Loom_ParamActivationOp<"hard_sigmoid",
    "HardSigmoid (opset 6)", "max(0, min(1, alpha * x + beta))",
    (ins DefaultValuedAttr<F32Attr, "0.2">:$alpha,
         DefaultValuedAttr<F32Attr, "0.5">:$beta),
    "alpha = 0.2 : f32, beta = 0.5 : f32">;
def Loom_GeluOp : Loom_ParamActivationOp<"gelu",
    "Gelu (opset 20); recognized from the erf and tanh spellings",
    "Gaussian error linear unit; `approximate` is \"none\" (erf) or \"tanh\"",
    (ins DefaultValuedStrAttr<StrAttr, "none">:$approximate),
    "approximate = \"tanh\""> {
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Classification
//===----------------------------------------------------------------------===//

def Loom_IsNaNOp : Loom_Op<"is_nan", [Pure, Elementwise,
                                       SameOperandsAndResultShape]> {
  let summary = "True where the input is NaN";
  let description = Loom_OpDoc<summary, "IsNaN (opset 9-13)",
      "%m = loom.is_nan %x : tensor<4xf32> -> tensor<4xi1>">.text;
  let arguments = (ins Loom_FloatTensor:$input);
  let results = (outs Loom_BoolTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Loom_IsInfOp : Loom_Op<"is_inf", [Pure, Elementwise,
                                       SameOperandsAndResultShape]> {
  let summary = "True where the input is an infinity of a selected sign";
  let description = Loom_OpDoc<summary, "IsInf (opset 10)",
      "%m = loom.is_inf %x {detect_negative = false} : tensor<4xf32> -> tensor<4xi1>">.text;
  let arguments = (ins Loom_FloatTensor:$input,
                       DefaultValuedAttr<BoolAttr, "true">:$detect_negative,
                       DefaultValuedAttr<BoolAttr, "true">:$detect_positive);
  let results = (outs Loom_BoolTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

//===----------------------------------------------------------------------===//
// Broadcasting arithmetic, logic and comparison
//===----------------------------------------------------------------------===//

def Loom_AddOp : Loom_ArithBinaryOp<"add", "Add (opset 7-14), Sum", "Addition",
    [Commutative]> {
  let hasFolder = 1;
}
def Loom_SubOp : Loom_ArithBinaryOp<"sub", "Sub (opset 7-14)", "Subtraction"> {
  let hasFolder = 1;
}
def Loom_MulOp : Loom_ArithBinaryOp<"mul", "Mul (opset 7-14)", "Multiplication",
    [Commutative]> {
  let hasFolder = 1;
}
def Loom_DivOp : Loom_ArithBinaryOp<"div", "Div (opset 7-14)",
    "Division (integer division truncates toward zero)"> {
  let hasFolder = 1;
}
def Loom_SwigluOp : Loom_BroadcastBinaryOp<"swiglu",
    "SwiGLU (opset 28, alpha = 1; also recognized from SiLU(gate) * up)",
    "SwiGLU gating: silu(lhs) * rhs, with lhs the gate and rhs the up projection",
    Loom_FloatTensor, Loom_FloatTensor>;
def Loom_PowOp : Loom_ArithBinaryOp<"pow", "Pow (opset 7-15)",
    "Power; the exponent may have another element type (ONNX Pow-12)"> {
  let hasVerifier = 0;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *ctx, std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::loom::inferBroadcastResult(ctx, loc, adaptor.getLhs().getType(),
          adaptor.getRhs().getType(), false, types);
    }
    bool $cppClass::isCompatibleReturnTypes(::mlir::TypeRange l,
                                            ::mlir::TypeRange r) {
      return ::loom::areRefinedTypesCompatible(l, r);
    }
  }];
}
def Loom_MaxOp : Loom_ArithBinaryOp<"max", "Max (opset 8-13)",
    "Elementwise maximum (NaN propagates)", [Commutative]>;
def Loom_MinOp : Loom_ArithBinaryOp<"min", "Min (opset 8-13)",
    "Elementwise minimum (NaN propagates)", [Commutative]>;
def Loom_ModOp : Loom_ArithBinaryOp<"mod", "Mod (opset 10-13)",
    "Remainder: with `fmod` the sign follows the dividend (C fmod), "
    "otherwise the divisor (Python %)"> {
  let arguments = (ins Loom_NumericTensor:$lhs, Loom_NumericTensor:$rhs,
                       DefaultValuedAttr<BoolAttr, "false">:$fmod);
}
def Loom_BitShiftOp : Loom_BroadcastBinaryOp<"bit_shift", "BitShift (opset 11)",
    "Logical shift of unsigned integers; `direction` is \"LEFT\" or \"RIGHT\"",
    Loom_IntegerTensor, Loom_IntegerTensor> {
  let arguments = (ins Loom_IntegerTensor:$lhs, Loom_IntegerTensor:$rhs,
                       StrAttr:$direction);
}
def Loom_AndOp : Loom_LogicBinaryOp<"and", "And (opset 7), BitwiseAnd (opset 18)",
    "Logical and of booleans, bitwise and of integers", [Commutative]>;
def Loom_OrOp : Loom_LogicBinaryOp<"or", "Or (opset 7), BitwiseOr (opset 18)",
    "Logical or of booleans, bitwise or of integers", [Commutative]>;
def Loom_XorOp : Loom_LogicBinaryOp<"xor", "Xor (opset 7), BitwiseXor (opset 18)",
    "Logical xor of booleans, bitwise xor of integers", [Commutative]>;
def Loom_EqualOp : Loom_CompareOp<"equal", "Equal (opset 7-13)", "a == b",
    [Commutative]>;
def Loom_LessOp : Loom_CompareOp<"less", "Less (opset 7-13)", "a < b">;
def Loom_LessEqualOp : Loom_CompareOp<"less_equal", "LessOrEqual (opset 12-16)",
    "a <= b">;
def Loom_GreaterOp : Loom_CompareOp<"greater", "Greater (opset 7-13)", "a > b">;
def Loom_GreaterEqualOp : Loom_CompareOp<"greater_equal",
    "GreaterOrEqual (opset 12-16)", "a >= b">;

//===----------------------------------------------------------------------===//
// Select and cast
//===----------------------------------------------------------------------===//

def Loom_WhereOp : Loom_Op<"where", [Pure,
                                     InferTypeOpAdaptorWithIsCompatible]> {
  let summary = "Select with three-way broadcasting";
  let description = Loom_OpDoc<
      "Picks `on_true` where `condition` holds, `on_false` elsewhere; the three "
      "operands broadcast together.",
      "Where (opset 9-16)",
      "%r = loom.where %c, %a, %b : tensor<4x1xi1>, tensor<4x3xf32>, "
      "tensor<3xf32> -> tensor<4x3xf32>">.text;
  let arguments = (ins Loom_BoolTensor:$condition, Loom_Tensor:$on_true,
                       Loom_Tensor:$on_false);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = [{
    $condition `,` $on_true `,` $on_false attr-dict `:` type($condition) `,`
    type($on_true) `,` type($on_false) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Loom_CastOp : Loom_Op<"cast", [Pure, Elementwise,
                                   SameOperandsAndResultShape]> {
  let summary = "Element type conversion";
  let description = Loom_OpDoc<[{
    Converts each element to the result's element type. Float to integer
    truncates toward zero; to `i1`, non-zero becomes true; a float beyond
    the range of `i2`/`i4`/`ui2`/`ui4` becomes 0. To the 8-bit floats,
    `saturate` (on unless the attribute says false) clamps values beyond the
    range, infinities included, to the largest finite value; without it
    they become infinity (`f8E5M2`) or NaN. `f4E2M1FN` always saturates
    (it has no infinity) and turns NaN into -0. To `f8E8M0FNU` (powers of
    two) the f32 value's exponent is kept, plus one when `round_mode` is
    "up" (the default) and a mantissa bit is set, or "nearest" and the
    guard bit and (the round bit, a sticky bit or a non-zero exponent) are;
    "down" keeps it; saturated, 2^127 does not round up to NaN.}],
    "Cast (opset 6-25), CastLike (opset 15-25)",
    "%y = loom.cast %x {saturate = false} : tensor<4xf32> to tensor<4xf8E5M2>">.text;
  let arguments = (ins Loom_Tensor:$input,
                       DefaultValuedAttr<BoolAttr, "true">:$saturate,
                       DefaultValuedAttr<StrAttr, "\"up\"">:$round_mode);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasFolder = 1;
}

def Loom_BitcastOp : Loom_Op<"bitcast", [Pure, Elementwise,
                                         SameOperandsAndResultShape]> {
  let summary = "Reinterpretation of each element's bits";
  let description = Loom_OpDoc<[{
    Reads each element's bits as the result's element type, which must have
    the same width; `i1` counts as a byte (a boolean is a byte holding 0 or
    1), and a byte becomes `i1` true when non-zero.}],
    "BitCast (opset 26)",
    "%y = loom.bitcast %x : tensor<4xf32> to tensor<4xi32>">.text;
  let arguments = (ins Loom_Tensor:$input);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasVerifier = 1;
}

#endif // LOOM_DIALECT_LOOM_IR_LOOMELEMENTWISEOPS_TD
