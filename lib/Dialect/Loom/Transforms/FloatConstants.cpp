//===- FloatConstants.cpp - Reading and writing float constants -----------===//

#include "loom/Dialect/Loom/Transforms/FloatConstants.h"

#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

/// The elements of a float constant widened to double, or nullopt when the
/// value is not a constant the pass can read: neither dense nor a resource
/// with data (an elided resource has none), or not of a float type.
std::optional<SmallVector<double>> loom::readFloatConstant(Value value) {
  ElementsAttr attr;
  if (!matchPattern(value, m_Constant(&attr)))
    return std::nullopt;
  return readFloatConstant(attr);
}

std::optional<SmallVector<double>> loom::readFloatConstant(ElementsAttr attr) {
  auto type = dyn_cast<RankedTensorType>(attr.getType());
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  auto floatType = dyn_cast<FloatType>(type.getElementType());
  if (!floatType)
    return std::nullopt;
  const llvm::fltSemantics &semantics = floatType.getFloatSemantics();
  auto toDouble = [](APFloat v) {
    bool lost;
    v.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
    return v.convertToDouble();
  };

  SmallVector<double> values;
  int64_t n = type.getNumElements();
  values.reserve(n);
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    for (const APFloat &v : dense.getValues<APFloat>())
      values.push_back(toDouble(v));
    return values;
  }
  auto resource = dyn_cast<DenseResourceElementsAttr>(attr);
  if (!resource)
    return std::nullopt;
  // Resource blobs hold little-endian, row-major elements of whole bytes
  // (the importer's layout, which the reference executor reads too).
  unsigned width = floatType.getWidth();
  if (width % 8 != 0 || width > 64)
    return std::nullopt;
  ArrayRef<char> data = resource.getData();
  size_t bytes = width / 8;
  if (data.size() != static_cast<size_t>(n) * bytes)
    return std::nullopt;
  for (int64_t i = 0; i < n; ++i) {
    uint64_t bits = 0;
    for (size_t b = 0; b < bytes; ++b)
      bits |= static_cast<uint64_t>(static_cast<uint8_t>(data[i * bytes + b]))
              << (8 * b);
    values.push_back(toDouble(APFloat(semantics, APInt(width, bits))));
  }
  return values;
}

/// A resource blob of `type` holding the low `bytes` bytes of each of
/// `bits` (little-endian), named after `like`'s blob plus `suffix`.
static ElementsAttr makeResource(RankedTensorType type, ArrayRef<uint64_t> bits,
                                 size_t bytes, DenseResourceElementsAttr like,
                                 StringRef suffix) {
  std::vector<char> data(bits.size() * bytes);
  for (auto [i, value] : llvm::enumerate(bits))
    for (size_t b = 0; b < bytes; ++b)
      data[i * bytes + b] = static_cast<char>((value >> (8 * b)) & 0xff);
  AsmResourceBlob blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(
      ArrayRef<char>(data), alignof(uint64_t));
  // The blob manager makes the name unique.
  std::string name = (like.getRawHandle().getKey() + suffix).str();
  return DenseResourceElementsAttr::get(type, name, std::move(blob));
}

/// Constants are resource blobs when `like` is one, so that folded weights
/// keep the importer's choice of storage (small and quick to print), else
/// dense. A new blob is named after `like`'s, so that it can be traced to
/// the initializer it came from.
ElementsAttr loom::makeFloatConstant(RankedTensorType type,
                                     ArrayRef<double> values, Attribute like,
                                     StringRef suffix) {
  const llvm::fltSemantics &semantics =
      cast<FloatType>(type.getElementType()).getFloatSemantics();
  SmallVector<APFloat> rounded;
  rounded.reserve(values.size());
  for (double v : values) {
    APFloat f(v);
    bool lost;
    f.convert(semantics, APFloat::rmNearestTiesToEven, &lost);
    rounded.push_back(f);
  }
  auto resource = dyn_cast_or_null<DenseResourceElementsAttr>(like);
  if (!resource)
    return DenseElementsAttr::get(type, rounded);
  SmallVector<uint64_t> bits;
  for (const APFloat &f : rounded)
    bits.push_back(f.bitcastToAPInt().getZExtValue());
  return makeResource(type, bits, APFloat::getSizeInBits(semantics) / 8,
                      resource, suffix);
}

ElementsAttr loom::makeIntegerConstant(RankedTensorType type,
                                       ArrayRef<int64_t> values, Attribute like,
                                       StringRef suffix) {
  unsigned width = type.getElementType().getIntOrFloatBitWidth();
  auto resource = dyn_cast_or_null<DenseResourceElementsAttr>(like);
  if (!resource) {
    SmallVector<APInt> ints;
    for (int64_t v : values)
      ints.push_back(APInt(width, static_cast<uint64_t>(v), /*isSigned=*/true,
                           /*implicitTrunc=*/true));
    return DenseElementsAttr::get(type, ints);
  }
  SmallVector<uint64_t> bits(values.begin(), values.end());
  return makeResource(type, bits, width / 8, resource, suffix);
}

/// Whether every element of `type` can be read and written by the two
/// helpers above: a float of whole bytes, at most 64 bits.
bool loom::isFoldableFloat(Type type) {
  auto floatType = dyn_cast<FloatType>(getElementTypeOrSelf(type));
  return floatType && floatType.getWidth() % 8 == 0 &&
         floatType.getWidth() <= 64;
}
