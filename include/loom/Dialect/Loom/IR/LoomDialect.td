//===- LoomDialect.td - The loom dialect -------------------*- tablegen -*-===//
//
// The loom dialect: Loom's graph-level vocabulary for neural networks.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_IR_LOOMDIALECT_TD
#define LOOM_DIALECT_LOOM_IR_LOOMDIALECT_TD

include "mlir/IR/OpBase.td"

def Loom_Dialect : Dialect {
  let name = "loom";
  let cppNamespace = "::loom";
  let summary = "Graph-level operations on ranked tensors for neural networks";
  let description = [{
    The loom dialect is the compact core that the ONNX importer targets and
    that every graph pass, the reference executor, the sharding rules and the
    lowerings cover. It works on ranked tensors of builtin element types; a
    dimension may be dynamic (`?`) where the model has a symbolic dimension.

    Element types follow ONNX: signed integers are signless `iN`, unsigned
    integers are `uiN`, booleans are `i1`, floats are `f16`, `bf16`, `f32`
    and `f64`.

    Ops whose ONNX form takes shape-like tensors (Reshape's shape, Slice's
    starts, ...) keep them as operands: the canonicalizer folds constant shape
    arithmetic so that exported `Shape -> Gather -> Concat -> Reshape` chains
    become constants.
  }];
  let useDefaultAttributePrinterParser = 0;
  let hasConstantMaterializer = 1;
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

#endif // LOOM_DIALECT_LOOM_IR_LOOMDIALECT_TD
