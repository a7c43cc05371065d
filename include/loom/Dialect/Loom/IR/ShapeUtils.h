//===- ShapeUtils.h - Shape rules shared by loom ops ------------*- C++ -*-===//
//
// Shape inference and verification helpers that several op families share.
// They are also used by the importer, so a rule lives in one place.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_IR_SHAPEUTILS_H
#define LOOM_DIALECT_LOOM_IR_SHAPEUTILS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/TypeRange.h"
#include "mlir/Support/LLVM.h"
#include <optional>

namespace loom {

/// Broadcasts two shapes with numpy rules. A dynamic dimension against 1 or
/// another dynamic dimension stays dynamic; against a static size s > 1 it
/// becomes s (it must be s or 1 at run time). Fails on static mismatches.
mlir::FailureOr<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> lhs, llvm::ArrayRef<int64_t> rhs);

/// True when every pair of types is equal, or the same ranked tensor element
/// type and rank with dimensions that agree wherever both are static, or
/// tensors of one element type where either is unranked. Lets an op's stated
/// result type refine what inference alone can prove.
bool areRefinedTypesCompatible(mlir::TypeRange lhs, mlir::TypeRange rhs);

/// True when two shapes agree wherever both are static.
bool areShapesCompatible(llvm::ArrayRef<int64_t> lhs,
                         llvm::ArrayRef<int64_t> rhs);

/// Result type of a broadcasting binary op: the lhs element type (or i1).
mlir::LogicalResult
inferBroadcastResult(mlir::MLIRContext *ctx, std::optional<mlir::Location> loc,
                     mlir::Type lhs, mlir::Type rhs, bool boolResult,
                     llvm::SmallVectorImpl<mlir::Type> &inferredTypes);

/// Verifies that both operands of a broadcasting op have one element type
/// and shapes that broadcast to the result's.
mlir::LogicalResult verifyBroadcastOperands(mlir::Operation *op);

/// Result type of a reduction over `axes` (all axes when empty).
mlir::LogicalResult
inferReductionResult(mlir::MLIRContext *ctx, std::optional<mlir::Location> loc,
                     mlir::Type input, llvm::ArrayRef<int64_t> axes,
                     bool keepdims, mlir::Type resultElementType,
                     llvm::SmallVectorImpl<mlir::Type> &inferredTypes);

/// Checks that reduction axes are in range and unique.
mlir::LogicalResult verifyReductionAxes(mlir::Operation *op,
                                        llvm::ArrayRef<int64_t> axes);

/// Checks `axis` in [-rank, rank).
mlir::LogicalResult verifyAxis(mlir::Operation *op, int64_t axis, int64_t rank);

/// Maps a possibly negative axis into [0, rank); nullopt if out of range.
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank);

} // namespace loom

#endif // LOOM_DIALECT_LOOM_IR_SHAPEUTILS_H
