//===- Tensor.h - Values of the reference executor --------------*- C++ -*-===//
//
// The reference executor trades speed for obvious correctness: every
// floating-point element is held as a double and every integer or boolean
// element as an int64_t, and kernels compute in those types. At each op
// boundary a result is rounded to its element type:
//   - f32 and f64: IEEE round-to-nearest of the double;
//   - f16, bf16 and f8E4M3FN: computed in double, rounded to the narrow type
//     (so within one rounding of "computed in f32 and rounded at each op");
//     f8E4M3FN has no infinity: values beyond its range become NaN;
//   - signed integers: two's-complement wrap to the width;
//   - unsigned integers: modulo 2^width (ui64 keeps its bit pattern);
//   - i1: zero or one.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_REFERENCE_TENSOR_H
#define LOOM_REFERENCE_TENSOR_H

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <string>
#include <vector>

namespace loom::reference {

/// Element types the executor supports.
enum class ElementKind {
  F8E4M3FN,
  F16,
  BF16,
  F32,
  F64,
  I1,
  I8,
  I16,
  I32,
  I64,
  U8,
  U16,
  U32,
  U64
};

/// The element kind of an MLIR type, or nullopt when unsupported.
std::optional<ElementKind> getElementKind(mlir::Type type);
/// The MLIR type of an element kind.
mlir::Type getMLIRType(mlir::MLIRContext *ctx, ElementKind kind);
/// "f32", "ui8", ...
const char *getElementKindName(ElementKind kind);
bool isFloatKind(ElementKind kind);
bool isUnsignedKind(ElementKind kind);
/// Bit width (1 for i1).
unsigned getBitWidth(ElementKind kind);

/// Rounds a double to what `kind` can hold (see the file comment).
double roundFloat(ElementKind kind, double value);
/// Wraps an integer to `kind`'s width and signedness.
int64_t wrapInteger(ElementKind kind, int64_t value);

/// A dense row-major tensor.
class Tensor {
public:
  Tensor() = default;
  /// A zero-filled tensor.
  Tensor(ElementKind kind, llvm::ArrayRef<int64_t> shape);

  ElementKind kind() const { return elementKind; }
  llvm::ArrayRef<int64_t> shape() const { return dims; }
  int64_t rank() const { return dims.size(); }
  int64_t dim(int64_t i) const { return dims[i]; }
  int64_t numElements() const;
  bool isFloat() const { return isFloatKind(elementKind); }

  /// Element access as double / int64 (converting between the two when the
  /// tensor holds the other kind: floats truncate toward zero).
  double getDouble(int64_t i) const;
  int64_t getInt(int64_t i) const;
  /// Stores a value, rounding or wrapping it to the element kind.
  void setDouble(int64_t i, double value);
  void setInt(int64_t i, int64_t value);

  /// Row-major strides.
  llvm::SmallVector<int64_t> strides() const;

  /// Raw storage (one of the two is used, per isFloat()).
  std::vector<double> &floats() { return floatData; }
  std::vector<int64_t> &ints() { return intData; }
  const std::vector<double> &floats() const { return floatData; }
  const std::vector<int64_t> &ints() const { return intData; }

  /// Same data, new shape (element counts must agree).
  Tensor reshaped(llvm::ArrayRef<int64_t> newShape) const;

  /// "f32[2, 3]".
  std::string typeString() const;

private:
  ElementKind elementKind = ElementKind::F32;
  llvm::SmallVector<int64_t> dims;
  std::vector<double> floatData;
  std::vector<int64_t> intData;
};

/// A tensor from little-endian row-major bytes (one byte per i1 element);
/// nullopt when the byte count does not match.
std::optional<Tensor> tensorFromBytes(ElementKind kind,
                                      llvm::ArrayRef<int64_t> shape,
                                      llvm::ArrayRef<char> bytes);

/// The little-endian row-major bytes of a tensor (inverse of the above).
std::vector<char> tensorToBytes(const Tensor &tensor);

/// Converts a tensor to another element kind (ONNX Cast semantics: float to
/// integer truncates toward zero, NaN becomes 0, anything to i1 is != 0).
Tensor castTensor(const Tensor &input, ElementKind kind);

} // namespace loom::reference

#endif // LOOM_REFERENCE_TENSOR_H
