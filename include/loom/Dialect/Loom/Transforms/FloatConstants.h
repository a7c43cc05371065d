//===- FloatConstants.h - Reading and writing float constants --*- C++ -*-===//
//
// Passes that compute new weights (batch-norm folding, precision
// conversion, quantization) read float constants, dense or
// `dense_resource`, as doubles and write the results back in the same kind
// of storage.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_TRANSFORMS_FLOATCONSTANTS_H
#define LOOM_DIALECT_LOOM_TRANSFORMS_FLOATCONSTANTS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace loom {

/// The elements of a float constant widened to double, or nullopt when it is
/// neither dense nor a resource with data (an elided resource has none), or
/// not of a float type of whole bytes.
std::optional<llvm::SmallVector<double>>
readFloatConstant(mlir::ElementsAttr attr);
/// The same for the constant that defines `value`.
std::optional<llvm::SmallVector<double>> readFloatConstant(mlir::Value value);

/// A float constant of `type` holding `values` rounded (to nearest even) to
/// its element type. It is a resource blob when `like` is one, named after
/// `like`'s blob plus `suffix` so that it can be traced to its initializer,
/// and dense otherwise.
mlir::ElementsAttr makeFloatConstant(mlir::RankedTensorType type,
                                     llvm::ArrayRef<double> values,
                                     mlir::Attribute like,
                                     llvm::StringRef suffix);

/// An integer constant of `type` (at most 64 bits, whole bytes) holding
/// `values` truncated to its width, stored like `makeFloatConstant` does.
mlir::ElementsAttr makeIntegerConstant(mlir::RankedTensorType type,
                                       llvm::ArrayRef<int64_t> values,
                                       mlir::Attribute like,
                                       llvm::StringRef suffix);

/// Whether the helpers above can read and write elements of `type`: a float
/// of whole bytes, at most 64 bits.
bool isFoldableFloat(mlir::Type type);

} // namespace loom

#endif // LOOM_DIALECT_LOOM_TRANSFORMS_FLOATCONSTANTS_H
