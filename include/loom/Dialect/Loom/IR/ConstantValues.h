//===- ConstantValues.h - Reading the elements of constants -----*- C++ -*-===//
//
// Weights come as dense elements or, for anything large, as dense resource
// blobs; passes that compute with a constant's values read both through
// these helpers.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_IR_CONSTANTVALUES_H
#define LOOM_DIALECT_LOOM_IR_CONSTANTVALUES_H

#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/Support/LLVM.h"
#include <optional>

namespace loom {

/// The elements of an integer constant of 8 to 64 bits (dense elements or
/// a dense resource) widened to int64: zero-extended when `zeroExtend` says
/// so (by default: for unsigned element types), else sign-extended. nullopt
/// for other types, a dynamic shape or a resource whose blob is missing or
/// of the wrong size.
std::optional<llvm::SmallVector<int64_t>>
getIntegerValues(mlir::ElementsAttr attr,
                 std::optional<bool> zeroExtend = std::nullopt);

/// The elements of a floating-point constant (f16, bf16, f32 or f64 dense
/// elements; f32 or f64 dense resources) as doubles, exactly. nullopt for
/// other types, a dynamic shape or a resource whose blob is missing or of
/// the wrong size.
std::optional<llvm::SmallVector<double>>
getFloatValues(mlir::ElementsAttr attr);

} // namespace loom

#endif // LOOM_DIALECT_LOOM_IR_CONSTANTVALUES_H
