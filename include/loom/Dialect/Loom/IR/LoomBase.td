//===- LoomBase.td - Base classes for loom ops -------------*- tablegen -*-===//

#ifndef LOOM_DIALECT_LOOM_IR_LOOMBASE_TD
#define LOOM_DIALECT_LOOM_IR_LOOMBASE_TD

include "loom/Dialect/Loom/IR/LoomDialect.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/CommonTypeConstraints.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Loom_Float : AnyTypeOf<[F16, BF16, F32, F64]>;
def Loom_Integer : AnyTypeOf<[AnySignlessInteger, AnyUnsignedInteger]>;
def Loom_Bool : I<1>;

def Loom_Tensor : RankedTensorOf<[AnyType]>;
def Loom_FloatTensor : RankedTensorOf<[Loom_Float]>;
def Loom_NumericTensor : RankedTensorOf<[Loom_Float, Loom_Integer]>;
def Loom_IntegerTensor : RankedTensorOf<[Loom_Integer]>;
def Loom_BoolTensor : RankedTensorOf<[Loom_Bool]>;
def Loom_IndexTensor : RankedTensorOf<[I32, I64]>;
// A 1-D tensor of i64 values that describes a shape, axes, pads, ...
def Loom_ShapeTensor : 1DTensorOf<[I64]>;
// A tensor holding one i64 scalar (rank 0 or shape [1]).
def Loom_ScalarTensor : RankedTensorOf<[AnyType]>;

//===----------------------------------------------------------------------===//
// Op base classes
//===----------------------------------------------------------------------===//

class Loom_Op<string mnemonic, list<Trait> traits = []>
    : Op<Loom_Dialect, mnemonic, traits>;

/// Builds the common description of a generated op.
class Loom_OpDoc<string what, string onnx, string example> {
  string text = !strconcat(what, "\n\n    ONNX: ", onnx,
                           "\n\n    Example:\n\n    ```mlir\n    ", example,
                           "\n    ```\n");
}

/// Elementwise op whose result has exactly the operand type.
class Loom_UnaryOp<string mnemonic, string onnx, string what,
                   Type operandType = Loom_NumericTensor,
                   list<Trait> traits = []>
    : Loom_Op<mnemonic, !listconcat(traits,
          [Pure, Elementwise, SameOperandsAndResultType,
           InferTypeOpInterface])> {
  let summary = what;
  let description = Loom_OpDoc<what, onnx,
      "%y = loom." # mnemonic # " %x : tensor<2x?xf32>">.text;
  let arguments = (ins operandType:$input);
  let results = (outs operandType:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

/// Elementwise op with two operands and numpy-style multidirectional
/// broadcasting (ONNX broadcasting, opset 7 and later).
class Loom_BroadcastBinaryOp<string mnemonic, string onnx, string what,
                             Type operandType, Type resultType,
                             bit boolResult = 0, list<Trait> traits = []>
    : Loom_Op<mnemonic, !listconcat(traits,
          [Pure, InferTypeOpAdaptorWithIsCompatible])> {
  let summary = what;
  let description = Loom_OpDoc<what, onnx,
      "%z = loom." # mnemonic # " %x, %y : tensor<4x1xf32>, tensor<3xf32> -> "
      # "tensor<4x3x" # !if(boolResult, "i1", "f32") # ">">.text;
  let arguments = (ins operandType:$lhs, operandType:$rhs);
  let results = (outs resultType:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
  bit resultIsBool = boolResult;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *ctx, std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::loom::inferBroadcastResult(ctx, loc, adaptor.getLhs().getType(),
          adaptor.getRhs().getType(), }] # !if(boolResult, "true", "false") # [{,
          types);
    }
    bool $cppClass::isCompatibleReturnTypes(::mlir::TypeRange l,
                                            ::mlir::TypeRange r) {
      return ::loom::areRefinedTypesCompatible(l, r);
    }
    ::llvm::LogicalResult $cppClass::verify() {
      return ::loom::verifyBroadcastOperands(getOperation());
    }
  }];
}

class Loom_ArithBinaryOp<string mnemonic, string onnx, string what,
                         list<Trait> traits = []>
    : Loom_BroadcastBinaryOp<mnemonic, onnx, what, Loom_NumericTensor,
                             Loom_NumericTensor, 0, traits>;

/// Logical on booleans (i1), bitwise on wider integers: the two coincide
/// on i1, so ONNX's And/Or/Xor and BitwiseAnd/Or/Xor are one op each.
class Loom_LogicBinaryOp<string mnemonic, string onnx, string what,
                         list<Trait> traits = []>
    : Loom_BroadcastBinaryOp<mnemonic, onnx, what, Loom_IntegerTensor,
                             Loom_IntegerTensor, 0, traits>;

class Loom_CompareOp<string mnemonic, string onnx, string what,
                     list<Trait> traits = []>
    : Loom_BroadcastBinaryOp<mnemonic, onnx, what, Loom_Tensor,
                             Loom_BoolTensor, 1, traits>;

/// Reduction over a static list of axes; an empty list reduces every axis
/// (ONNX's default), unless `noop_with_empty_axes` is set.
class Loom_ReduceOp<string mnemonic, string onnx, string what>
    : Loom_Op<mnemonic, [Pure, InferTypeOpAdaptorWithIsCompatible]> {
  let summary = what;
  let description = Loom_OpDoc<what # [{

    `axes` lists the reduced dimensions (negative values are not allowed:
    the importer normalizes them). With `keepdims` the reduced dimensions
    stay with size 1. An empty `axes` reduces all dimensions.}], onnx,
      "%y = loom." # mnemonic # " %x {axes = array<i64: 1>, keepdims = true} : "
      # "tensor<2x8xf32> -> tensor<2x1xf32>">.text;
  let arguments = (ins Loom_NumericTensor:$input,
                       DenseI64ArrayAttr:$axes,
                       DefaultValuedAttr<BoolAttr, "true">:$keepdims);
  let results = (outs Loom_NumericTensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *ctx, std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::loom::inferReductionResult(ctx, loc,
          adaptor.getInput().getType(), adaptor.getAxes(),
          adaptor.getKeepdims(), /*resultElementType=*/nullptr, types);
    }
    bool $cppClass::isCompatibleReturnTypes(::mlir::TypeRange l,
                                            ::mlir::TypeRange r) {
      return ::loom::areRefinedTypesCompatible(l, r);
    }
    ::llvm::LogicalResult $cppClass::verify() {
      return ::loom::verifyReductionAxes(getOperation(), getAxes());
    }
  }];
}

#endif // LOOM_DIALECT_LOOM_IR_LOOMBASE_TD
