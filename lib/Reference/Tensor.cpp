//===- Tensor.cpp - Values of the reference executor ----------------------===//

#include "loom/Reference/Tensor.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir;

namespace loom::reference {

std::optional<ElementKind> getElementKind(Type type) {
  if (isa<Float8E4M3FNType>(type))
    return ElementKind::F8E4M3FN;
  if (isa<Float8E4M3FNUZType>(type))
    return ElementKind::F8E4M3FNUZ;
  if (isa<Float8E5M2Type>(type))
    return ElementKind::F8E5M2;
  if (isa<Float8E5M2FNUZType>(type))
    return ElementKind::F8E5M2FNUZ;
  if (isa<Float4E2M1FNType>(type))
    return ElementKind::F4E2M1FN;
  if (isa<Float8E8M0FNUType>(type))
    return ElementKind::F8E8M0FNU;
  if (type.isF16())
    return ElementKind::F16;
  if (type.isBF16())
    return ElementKind::BF16;
  if (type.isF32())
    return ElementKind::F32;
  if (type.isF64())
    return ElementKind::F64;
  auto integer = dyn_cast<IntegerType>(type);
  if (!integer)
    return std::nullopt;
  bool isUnsigned = integer.isUnsigned();
  switch (integer.getWidth()) {
  case 1:
    return ElementKind::I1;
  case 2:
    return isUnsigned ? ElementKind::U2 : ElementKind::I2;
  case 4:
    return isUnsigned ? ElementKind::U4 : ElementKind::I4;
  case 8:
    return isUnsigned ? ElementKind::U8 : ElementKind::I8;
  case 16:
    return isUnsigned ? ElementKind::U16 : ElementKind::I16;
  case 32:
    return isUnsigned ? ElementKind::U32 : ElementKind::I32;
  case 64:
    return isUnsigned ? ElementKind::U64 : ElementKind::I64;
  default:
    return std::nullopt;
  }
}

Type getMLIRType(MLIRContext *ctx, ElementKind kind) {
  switch (kind) {
  case ElementKind::F8E4M3FN:
    return Float8E4M3FNType::get(ctx);
  case ElementKind::F8E4M3FNUZ:
    return Float8E4M3FNUZType::get(ctx);
  case ElementKind::F8E5M2:
    return Float8E5M2Type::get(ctx);
  case ElementKind::F8E5M2FNUZ:
    return Float8E5M2FNUZType::get(ctx);
  case ElementKind::F4E2M1FN:
    return Float4E2M1FNType::get(ctx);
  case ElementKind::F8E8M0FNU:
    return Float8E8M0FNUType::get(ctx);
  case ElementKind::F16:
    return Float16Type::get(ctx);
  case ElementKind::BF16:
    return BFloat16Type::get(ctx);
  case ElementKind::F32:
    return Float32Type::get(ctx);
  case ElementKind::F64:
    return Float64Type::get(ctx);
  case ElementKind::I1:
    return IntegerType::get(ctx, 1);
  case ElementKind::I2:
  case ElementKind::I4:
  case ElementKind::I8:
  case ElementKind::I16:
  case ElementKind::I32:
  case ElementKind::I64:
    return IntegerType::get(ctx, getBitWidth(kind));
  case ElementKind::U2:
  case ElementKind::U4:
  case ElementKind::U8:
  case ElementKind::U16:
  case ElementKind::U32:
  case ElementKind::U64:
    return IntegerType::get(ctx, getBitWidth(kind), IntegerType::Unsigned);
  }
  return {};
}

const char *getElementKindName(ElementKind kind) {
  switch (kind) {
  case ElementKind::F8E4M3FN:
    return "f8E4M3FN";
  case ElementKind::F8E4M3FNUZ:
    return "f8E4M3FNUZ";
  case ElementKind::F8E5M2:
    return "f8E5M2";
  case ElementKind::F8E5M2FNUZ:
    return "f8E5M2FNUZ";
  case ElementKind::F4E2M1FN:
    return "f4E2M1FN";
  case ElementKind::F8E8M0FNU:
    return "f8E8M0FNU";
  case ElementKind::I2:
    return "i2";
  case ElementKind::I4:
    return "i4";
  case ElementKind::U2:
    return "ui2";
  case ElementKind::U4:
    return "ui4";
  case ElementKind::F16:
    return "f16";
  case ElementKind::BF16:
    return "bf16";
  case ElementKind::F32:
    return "f32";
  case ElementKind::F64:
    return "f64";
  case ElementKind::I1:
    return "i1";
  case ElementKind::I8:
    return "i8";
  case ElementKind::I16:
    return "i16";
  case ElementKind::I32:
    return "i32";
  case ElementKind::I64:
    return "i64";
  case ElementKind::U8:
    return "ui8";
  case ElementKind::U16:
    return "ui16";
  case ElementKind::U32:
    return "ui32";
  case ElementKind::U64:
    return "ui64";
  }
  return "?";
}

bool isNarrowFloatKind(ElementKind kind) {
  return kind == ElementKind::F8E4M3FN || kind == ElementKind::F8E4M3FNUZ ||
         kind == ElementKind::F8E5M2 || kind == ElementKind::F8E5M2FNUZ ||
         kind == ElementKind::F4E2M1FN || kind == ElementKind::F8E8M0FNU;
}

bool isFloatKind(ElementKind kind) {
  return isNarrowFloatKind(kind) || kind == ElementKind::F16 ||
         kind == ElementKind::BF16 || kind == ElementKind::F32 ||
         kind == ElementKind::F64;
}

bool isUnsignedKind(ElementKind kind) {
  return kind == ElementKind::U2 || kind == ElementKind::U4 ||
         kind == ElementKind::U8 || kind == ElementKind::U16 ||
         kind == ElementKind::U32 || kind == ElementKind::U64;
}

unsigned getBitWidth(ElementKind kind) {
  switch (kind) {
  case ElementKind::I1:
    return 1;
  case ElementKind::I2:
  case ElementKind::U2:
    return 2;
  case ElementKind::F4E2M1FN:
  case ElementKind::I4:
  case ElementKind::U4:
    return 4;
  case ElementKind::F8E4M3FN:
  case ElementKind::F8E4M3FNUZ:
  case ElementKind::F8E5M2:
  case ElementKind::F8E5M2FNUZ:
  case ElementKind::F8E8M0FNU:
  case ElementKind::I8:
  case ElementKind::U8:
    return 8;
  case ElementKind::F16:
  case ElementKind::BF16:
  case ElementKind::I16:
  case ElementKind::U16:
    return 16;
  case ElementKind::F32:
  case ElementKind::I32:
  case ElementKind::U32:
    return 32;
  case ElementKind::F64:
  case ElementKind::I64:
  case ElementKind::U64:
    return 64;
  }
  return 0;
}

size_t getByteSize(ElementKind kind) { return (getBitWidth(kind) + 7) / 8; }

/// The APFloat semantics of the float kinds narrower than f32.
static const llvm::fltSemantics &narrowSemantics(ElementKind kind) {
  switch (kind) {
  case ElementKind::F8E4M3FN:
    return llvm::APFloat::Float8E4M3FN();
  case ElementKind::F8E4M3FNUZ:
    return llvm::APFloat::Float8E4M3FNUZ();
  case ElementKind::F8E5M2:
    return llvm::APFloat::Float8E5M2();
  case ElementKind::F8E5M2FNUZ:
    return llvm::APFloat::Float8E5M2FNUZ();
  case ElementKind::F4E2M1FN:
    return llvm::APFloat::Float4E2M1FN();
  case ElementKind::F8E8M0FNU:
    return llvm::APFloat::Float8E8M0FNU();
  case ElementKind::BF16:
    return llvm::APFloat::BFloat();
  default:
    return llvm::APFloat::IEEEhalf();
  }
}

double getLargestFinite(ElementKind kind) {
  return llvm::APFloat::getLargest(narrowSemantics(kind)).convertToDouble();
}

/// The f8E8M0FNU code of `value` by ONNX's Cast-24 rule (see castTensor).
static uint64_t e8m0Bits(double value, bool saturate,
                         llvm::StringRef roundMode) {
  float f = static_cast<float>(value);
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  uint32_t exponent = (bits >> 23) & 0xff;
  if (exponent == 0xff)
    return 0xff;
  bool up = false;
  if (roundMode == "up")
    up = (bits & 0x7fffff) != 0;
  else if (roundMode == "nearest")
    up = (bits & 0x400000) &&
         ((bits & 0x200000) || (bits & 0x1fffff) || exponent > 0);
  if (saturate && exponent == 0xfe)
    up = false;
  return exponent + (up ? 1 : 0);
}

/// The bits of the narrow float nearest to `value` (ties to even). f4E2M1FN
/// has neither infinity nor NaN: beyond its range it saturates, and NaN
/// becomes -0 (onnx's reference implementation, through ml_dtypes, does the
/// same).
static uint64_t narrowFloatBits(ElementKind kind, double value) {
  if (kind == ElementKind::F8E8M0FNU)
    return e8m0Bits(value, /*saturate=*/true, "up");
  if (kind == ElementKind::F4E2M1FN) {
    if (std::isnan(value))
      return 0x8;
    double largest = getLargestFinite(kind);
    value = std::clamp(value, -largest, largest);
  }
  llvm::APFloat f(value);
  bool lost;
  f.convert(narrowSemantics(kind), llvm::APFloat::rmNearestTiesToEven, &lost);
  return f.bitcastToAPInt().getZExtValue();
}

/// The value of a narrow float's bits.
static double narrowFloatValue(ElementKind kind, uint64_t bits) {
  if (kind == ElementKind::F8E8M0FNU)
    return (bits & 0xff) == 0xff ? std::numeric_limits<double>::quiet_NaN()
                                 : std::ldexp(1.0, int(bits & 0xff) - 127);
  unsigned width = getBitWidth(kind);
  llvm::APFloat f(narrowSemantics(kind),
                  llvm::APInt(width, bits & ((uint64_t(1) << width) - 1)));
  bool lost;
  f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
            &lost);
  return f.convertToDouble();
}

double roundFloat(ElementKind kind, double value) {
  switch (kind) {
  case ElementKind::F64:
    return value;
  case ElementKind::F32:
    return static_cast<double>(static_cast<float>(value));
  case ElementKind::F8E4M3FN:
  case ElementKind::F8E4M3FNUZ:
  case ElementKind::F8E5M2:
  case ElementKind::F8E5M2FNUZ:
  case ElementKind::F4E2M1FN:
  case ElementKind::F8E8M0FNU:
  case ElementKind::F16:
  case ElementKind::BF16:
    return narrowFloatValue(kind, narrowFloatBits(kind, value));
  default:
    return value;
  }
}

int64_t wrapInteger(ElementKind kind, int64_t value) {
  unsigned width = getBitWidth(kind);
  if (kind == ElementKind::I1)
    return value != 0;
  if (width >= 64)
    return value;
  uint64_t mask = (uint64_t(1) << width) - 1;
  uint64_t bits = static_cast<uint64_t>(value) & mask;
  if (isUnsignedKind(kind))
    return static_cast<int64_t>(bits);
  // Sign-extend.
  uint64_t sign = uint64_t(1) << (width - 1);
  return static_cast<int64_t>((bits ^ sign) - sign);
}

Tensor::Tensor(ElementKind kind, llvm::ArrayRef<int64_t> shape)
    : elementKind(kind), dims(shape.begin(), shape.end()) {
  if (isFloatKind(kind))
    floatData.assign(numElements(), 0.0);
  else
    intData.assign(numElements(), 0);
}

int64_t Tensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

double Tensor::getDouble(int64_t i) const {
  if (isFloat())
    return floatData[i];
  if (elementKind == ElementKind::U64)
    return static_cast<double>(static_cast<uint64_t>(intData[i]));
  return static_cast<double>(intData[i]);
}

int64_t Tensor::getInt(int64_t i) const {
  if (!isFloat())
    return intData[i];
  double v = floatData[i];
  if (std::isnan(v))
    return 0;
  if (v >= 9.2233720368547758e18)
    return INT64_MAX;
  if (v <= -9.2233720368547758e18)
    return INT64_MIN;
  return static_cast<int64_t>(v);
}

void Tensor::setDouble(int64_t i, double value) {
  if (isFloat()) {
    floatData[i] = roundFloat(elementKind, value);
    return;
  }
  if (elementKind == ElementKind::I1) {
    intData[i] = value != 0.0;
    return;
  }
  int64_t v;
  if (std::isnan(value))
    v = 0;
  else if (isUnsignedKind(elementKind) && value >= 9.2233720368547758e18)
    v = static_cast<int64_t>(static_cast<uint64_t>(value));
  else if (value >= 9.2233720368547758e18)
    v = INT64_MAX;
  else if (value <= -9.2233720368547758e18)
    v = INT64_MIN;
  else
    v = static_cast<int64_t>(value);
  intData[i] = wrapInteger(elementKind, v);
}

void Tensor::setInt(int64_t i, int64_t value) {
  if (isFloat()) {
    double d = elementKind == ElementKind::U64
                   ? static_cast<double>(static_cast<uint64_t>(value))
                   : static_cast<double>(value);
    floatData[i] = roundFloat(elementKind, d);
    return;
  }
  intData[i] = wrapInteger(elementKind, value);
}

llvm::SmallVector<int64_t> Tensor::strides() const {
  llvm::SmallVector<int64_t> s(dims.size(), 1);
  for (int64_t d = static_cast<int64_t>(dims.size()) - 2; d >= 0; --d)
    s[d] = s[d + 1] * dims[d + 1];
  return s;
}

Tensor Tensor::reshaped(llvm::ArrayRef<int64_t> newShape) const {
  Tensor t = *this;
  t.dims.assign(newShape.begin(), newShape.end());
  return t;
}

std::string Tensor::typeString() const {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << getElementKindName(elementKind) << "[";
  llvm::interleaveComma(dims, os);
  os << "]";
  return s;
}

std::optional<Tensor> tensorFromBytes(ElementKind kind,
                                      llvm::ArrayRef<int64_t> shape,
                                      llvm::ArrayRef<char> bytes) {
  // The shape is checked against the bytes before anything is allocated:
  // files read here (.npy, .pb) state their shape in a header a few bytes
  // long, and a shape is not to be trusted until data backs it.
  size_t size = getByteSize(kind);
  uint64_t expected = size;
  bool overflowed = false;
  for (int64_t d : shape) {
    if (d < 0)
      return std::nullopt;
    expected = llvm::SaturatingMultiply(expected, static_cast<uint64_t>(d),
                                        &overflowed);
    if (overflowed)
      return std::nullopt;
  }
  if (bytes.size() != expected)
    return std::nullopt;
  Tensor t(kind, shape);
  int64_t n = t.numElements();
  for (int64_t i = 0; i < n; ++i) {
    const char *p = bytes.data() + i * size;
    uint64_t raw = 0;
    std::memcpy(&raw, p, size);
    switch (kind) {
    case ElementKind::F32: {
      float f;
      std::memcpy(&f, p, 4);
      t.setDouble(i, f);
      break;
    }
    case ElementKind::F64: {
      double d;
      std::memcpy(&d, p, 8);
      t.setDouble(i, d);
      break;
    }
    case ElementKind::F8E4M3FN:
    case ElementKind::F8E4M3FNUZ:
    case ElementKind::F8E5M2:
    case ElementKind::F8E5M2FNUZ:
    case ElementKind::F4E2M1FN:
    case ElementKind::F8E8M0FNU:
    case ElementKind::F16:
    case ElementKind::BF16:
      t.setDouble(i, narrowFloatValue(kind, raw));
      break;
    default:
      // setInt wraps and sign-extends to the element kind.
      t.setInt(i, static_cast<int64_t>(raw));
    }
  }
  return t;
}

std::vector<char> tensorToBytes(const Tensor &tensor) {
  size_t size = getByteSize(tensor.kind());
  int64_t n = tensor.numElements();
  std::vector<char> bytes(n * size);
  for (int64_t i = 0; i < n; ++i) {
    char *p = bytes.data() + i * size;
    switch (tensor.kind()) {
    case ElementKind::F32: {
      float f = static_cast<float>(tensor.getDouble(i));
      std::memcpy(p, &f, 4);
      break;
    }
    case ElementKind::F64: {
      double d = tensor.getDouble(i);
      std::memcpy(p, &d, 8);
      break;
    }
    case ElementKind::F8E4M3FN:
    case ElementKind::F8E4M3FNUZ:
    case ElementKind::F8E5M2:
    case ElementKind::F8E5M2FNUZ:
    case ElementKind::F4E2M1FN:
    case ElementKind::F8E8M0FNU:
    case ElementKind::F16:
    case ElementKind::BF16: {
      uint64_t raw = narrowFloatBits(tensor.kind(), tensor.getDouble(i));
      std::memcpy(p, &raw, size);
      break;
    }
    default: {
      int64_t v = tensor.getInt(i);
      std::memcpy(p, &v, size);
    }
    }
  }
  return bytes;
}

Tensor castTensor(const Tensor &input, ElementKind kind, bool saturate,
                  llvm::StringRef roundMode) {
  Tensor out(kind, input.shape());
  int64_t n = input.numElements();
  if (kind == ElementKind::I1) {
    for (int64_t i = 0; i < n; ++i)
      out.setInt(i, input.isFloat() ? input.getDouble(i) != 0.0
                                    : input.getInt(i) != 0);
    return out;
  }
  bool subByteInteger = !isFloatKind(kind) && getBitWidth(kind) < 8;
  unsigned width = getBitWidth(kind);
  double lowest = isUnsignedKind(kind) ? 0.0 : -std::ldexp(1.0, width - 1);
  double highest =
      std::ldexp(1.0, isUnsignedKind(kind) ? width : width - 1) - 1;
  bool clampToLargest =
      isNarrowFloatKind(kind) && kind != ElementKind::F8E8M0FNU && saturate;
  double largest = clampToLargest ? getLargestFinite(kind) : 0.0;
  for (int64_t i = 0; i < n; ++i) {
    if (kind == ElementKind::F8E8M0FNU) {
      out.setDouble(i, narrowFloatValue(kind, e8m0Bits(input.getDouble(i),
                                                       saturate, roundMode)));
    } else if (isFloatKind(kind)) {
      double v = input.getDouble(i);
      if (clampToLargest && !std::isnan(v))
        v = std::clamp(v, -largest, largest);
      out.setDouble(i, v);
    } else if (input.isFloat() && subByteInteger) {
      double v = std::trunc(input.getDouble(i));
      out.setInt(i, std::isnan(v) || v < lowest || v > highest
                        ? 0
                        : static_cast<int64_t>(v));
    } else if (input.isFloat()) {
      out.setDouble(i, input.getDouble(i));
    } else {
      out.setInt(i, input.getInt(i));
    }
  }
  return out;
}

} // namespace loom::reference
