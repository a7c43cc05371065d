//===- LoomDialect.h - The loom dialect -------------------------*- C++ -*-===//

#ifndef LOOM_DIALECT_LOOM_IR_LOOMDIALECT_H
#define LOOM_DIALECT_LOOM_IR_LOOMDIALECT_H

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dialect.h"

#include "loom/Dialect/Loom/IR/LoomOpsDialect.h.inc"

#endif // LOOM_DIALECT_LOOM_IR_LOOMDIALECT_H
