//===- Tensor.h - Values of the reference executor --------------*- C++ -*-===//
//
// The reference executor trades speed for obvious correctness: every
// floating-point element is held as a double and every integer or boolean
// element as an int64_t, and kernels compute in those types. At each op
// boundary a result is rounded to its element type:
//   - f32 and f64: IEEE round-to-nearest of the double;
//   - f16, bf16 and the 8- and 4-bit floats (f8E4M3FN, f8E4M3FNUZ, f8E5M2,
//     f8E5M2FNUZ, f4E2M1FN): computed in double, rounded to the narrow type
//     (so within one rounding of "computed in f32 and rounded at each op");
//     the 8-bit types without infinities turn values beyond their range into
//     NaN, f4E2M1FN (no infinity, no NaN) into its largest value, +-6;
//   - signed integers (i2 and i4 among them): two's-complement wrap to the
//     width;
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
  F8E4M3FNUZ,
  F8E5M2,
  F8E5M2FNUZ,
  F4E2M1FN,
  F8E8M0FNU, // a power of two 2^(e - 127), or NaN; no zero, no sign
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
  U64,
  // Sub-byte integers: one element per byte in memory (the value in the
  // low bits, sign-extended for the signed ones); ONNX files pack them.
  I2,
  I4,
  U2,
  U4
};

/// The element kind of an MLIR type, or nullopt when unsupported.
std::optional<ElementKind> getElementKind(mlir::Type type);
/// The MLIR type of an element kind.
mlir::Type getMLIRType(mlir::MLIRContext *ctx, ElementKind kind);
/// "f32", "ui8", ...
const char *getElementKindName(ElementKind kind);
bool isFloatKind(ElementKind kind);
bool isUnsignedKind(ElementKind kind);
/// Bit width (1 for i1, 4 for i4 and f4E2M1FN).
unsigned getBitWidth(ElementKind kind);
/// Bytes per element in memory: the bit width rounded up to whole bytes.
size_t getByteSize(ElementKind kind);
/// Whether `kind` is one of the 8- and 4-bit floats.
bool isNarrowFloatKind(ElementKind kind);
/// The largest finite value of a narrow float kind.
double getLargestFinite(ElementKind kind);

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

/// A tensor from little-endian row-major bytes (one byte per i1, i2, i4 and
/// f4E2M1FN element);
/// nullopt when the byte count does not match.
std::optional<Tensor> tensorFromBytes(ElementKind kind,
                                      llvm::ArrayRef<int64_t> shape,
                                      llvm::ArrayRef<char> bytes);

/// The little-endian row-major bytes of a tensor (inverse of the above).
std::vector<char> tensorToBytes(const Tensor &tensor);

/// Converts a tensor to another element kind (ONNX Cast semantics: float to
/// integer truncates toward zero, NaN becomes 0, anything to i1 is != 0;
/// a float beyond the range of i2/i4/ui2/ui4 becomes 0, as onnx's reference
/// implementation does). To the 8-bit floats, `saturate` (Cast-19's
/// attribute, default on) clamps values beyond the range, infinities
/// included, to the largest finite value; without it they become infinity
/// (f8E5M2) or NaN. f4E2M1FN always saturates and turns NaN into -0, as
/// onnx's reference implementation does.
///
/// To f8E8M0FNU (the MX scale type) ONNX's Cast-24 rule on the f32 bits:
/// the exponent, plus one with `roundMode` "up" when any mantissa bit is
/// set, or "nearest" when the guard bit and (the round bit, a sticky bit
/// or a non-zero exponent) are; "down" keeps it; with `saturate` 2^127 does
/// not round up to NaN.
Tensor castTensor(const Tensor &input, ElementKind kind, bool saturate = true,
                  llvm::StringRef roundMode = "up");

} // namespace loom::reference

#endif // LOOM_REFERENCE_TENSOR_H
