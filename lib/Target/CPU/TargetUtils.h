//===- TargetUtils.h - Helpers shared by the CPU target's passes -*- C++
//-*-===//
//
// Small queries and builders more than one pass of lib/Target/CPU needs:
// runtime calls (collectives, library kernels) and contraction matching.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_TARGET_CPU_TARGETUTILS_H
#define LOOM_LIB_TARGET_CPU_TARGETUTILS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringMap.h"

#include <cassert>
#include <cstdint>

namespace loom::cpu {

/// Declares the runtime function `name(inputs...) -> ()` in `module` once
/// (private, at the module's start) and returns it.
mlir::func::FuncOp declareRuntimeFunction(mlir::ModuleOp module,
                                          llvm::StringRef name,
                                          mlir::TypeRange inputs);

/// The address of `buffer`'s data as i64 (what runtime calls take): its
/// aligned pointer, which is its first element's only when its offset is 0.
mlir::Value addressOf(mlir::OpBuilder &b, mlir::Location loc,
                      mlir::Value buffer);

/// The address of `buffer`'s first element as i64: its aligned pointer,
/// plus its offset (static or known only at run time) when that is not 0.
mlir::Value firstElementAddress(mlir::OpBuilder &b, mlir::Location loc,
                                mlir::Value buffer);

/// `base`'s memory viewed as `type` (identity layout) at `sizes` (one per
/// dimension; the type's static sizes are taken from it) with row-major
/// strides: a memref.reinterpret_cast at offset 0.
mlir::Value contiguousView(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::MemRefType type, mlir::Value base,
                           llvm::ArrayRef<mlir::OpFoldResult> sizes);

/// The buffer `value` views: through subviews, reshapes and casts, up to
/// an allocation, a function argument, a global, or a `memref.view` (the
/// memory plan's views of its arena are distinct buffers while they live).
mlir::Value viewedBuffer(mlir::Value value);

/// Where `buffer` lies in the memory plan's arena: the arena and the byte
/// range, for a memref.view at a constant offset.
std::optional<std::tuple<mlir::Value, int64_t, int64_t>>
arenaRange(mlir::Value buffer);

/// Whether writing `a` could change what `b` holds. Distinct arena views
/// are compared by their byte ranges; the entry function's parameters
/// (inputs, weights, outputs: the caller's own buffers) and constant
/// globals never overlap arena views or each other; a buffer of its own
/// (memref.alloc/alloca) overlaps only the views taken of it; anything
/// else might.
bool mayOverlap(mlir::Value a, mlir::Value b);

/// Whether `op`'s body is yield(out + in0 * in1), in any operand order:
/// floats, or integers (the quantized contractions' exact i32 sums).
bool isMultiplyAccumulate(mlir::linalg::LinalgOp op);

/// Whether `op`'s body is yield(out + extf(in0) * extf(in1)), the inputs
/// widened to the accumulator's float type (bf16 or f16 products summed in
/// f32, as loom-precision makes them).
bool isWideningMultiplyAccumulate(mlir::linalg::LinalgOp op);

/// When `op`'s body is a byte product's, yield(out + zext(x) * sext(y))
/// with i8 inputs and an i32 output (convert-loom-to-linalg's byte-products
/// form), the position of its unsigned input x (0 or 1).
std::optional<unsigned> byteProductUnsignedInput(mlir::linalg::LinalgOp op);

/// Replaces `op` (a product on tensors) by a generic computing the same
/// thing from `rhs`, read through `rhsMap`, instead of its second input: a
/// weight stored in the layout the tiles read.
void replaceRightOperand(mlir::RewriterBase &rewriter,
                         mlir::linalg::LinalgOp op, mlir::Value rhs,
                         mlir::AffineMap rhsMap);

/// An input index of a convolution window, `e` (over `numDims` loops), as
/// `d(out) * stride + d(kernel) * dilation`: the stride and the dilation,
/// or failure.
llvm::FailureOr<std::pair<int64_t, int64_t>>
convolutionWindowTerms(mlir::AffineExpr e, unsigned out, unsigned kernel,
                       unsigned numDims);

/// Private constant globals holding strings and a NUL, which the code
/// passes to the runtime by address (check messages, kernel labels): one
/// global per distinct text, named `prefix` followed by the first free
/// number. Names are looked up in a symbol table built once, so a pass can
/// add one global per op of a large model (densenet121 under
/// `--runtime-checks` has tens of thousands of checks) in linear time.
class StringGlobals {
public:
  StringGlobals(mlir::ModuleOp module, llvm::StringRef prefix);

  /// The global holding `text`, created at the module's start on first use.
  mlir::memref::GlobalOp get(mlir::OpBuilder &b, llvm::StringRef text);

private:
  mlir::ModuleOp module;
  mlir::SymbolTable symbols;
  std::string prefix;
  unsigned nextNumber = 0;
  llvm::StringMap<mlir::memref::GlobalOp> byText;
};

/// `a * b` for static sizes and counts of work (both non-negative),
/// saturating at INT64_MAX instead of overflowing: the passes compare these
/// with thresholds, and a huge iteration space must not wrap to a small one.
inline int64_t saturatingMultiply(int64_t a, int64_t b) {
  assert(a >= 0 && b >= 0 && "a count of work is a static size");
  return b != 0 && a > INT64_MAX / b ? INT64_MAX : a * b;
}

/// The product of `values` (static sizes), saturating as
/// saturatingMultiply.
inline int64_t saturatingProduct(llvm::ArrayRef<int64_t> values) {
  int64_t product = 1;
  for (int64_t v : values)
    product = saturatingMultiply(product, v);
  return product;
}

/// Whether `type` is a memref whose innermost dimension is contiguous
/// (stride 1); a rank-0 memref counts as contiguous when `allowScalar`.
bool innermostContiguous(mlir::Type type, bool allowScalar = false);

/// `width` elements of `buffer`'s innermost dimension, `stride` apart,
/// from `indices` on (the innermost dimension contiguous): the run from
/// the first to the last read with a masked load of the next power of two
/// (no element outside the run is touched, and the load is one
/// instruction where a vector of the run's odd length was split into
/// pieces), compacted by a shuffle (one vpmovwb or vpermb for bytes).
mlir::Value readStridedRow(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value buffer, mlir::ValueRange indices,
                           int64_t width, int64_t stride);

/// A constant of `type` holding `data` (row-major bytes), stored as `like`
/// is: a resource blob named after `like`'s with `suffix` appended when it
/// is one (the importer's storage of large weights), else dense.
mlir::ElementsAttr constantLike(mlir::ElementsAttr like,
                                mlir::RankedTensorType type,
                                llvm::ArrayRef<char> data,
                                llvm::StringRef suffix);

/// The bytes of a constant tensor, row-major, when it is stored densely
/// (a dense attribute that is not a splat, or a resource blob); empty
/// otherwise.
llvm::ArrayRef<char> denseBytes(mlir::ElementsAttr attr);

} // namespace loom::cpu

#endif // LOOM_LIB_TARGET_CPU_TARGETUTILS_H
