//===- ConstantValues.cpp - Reading the elements of constants -------------===//

#include "loom/Dialect/Loom/IR/ConstantValues.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cstring>

using namespace mlir;

namespace loom {

std::optional<SmallVector<int64_t>>
getIntegerValues(ElementsAttr attr, std::optional<bool> zeroExtendOption) {
  auto type = dyn_cast<ShapedType>(attr.getType());
  auto element = type ? dyn_cast<IntegerType>(type.getElementType()) : nullptr;
  if (!element || !type.hasStaticShape() || element.getWidth() < 8 ||
      element.getWidth() > 64 || element.getWidth() % 8)
    return std::nullopt;
  bool zeroExtend = zeroExtendOption.value_or(element.isUnsigned());
  SmallVector<int64_t> values;
  if (auto dense = dyn_cast<DenseIntElementsAttr>(attr)) {
    values.reserve(dense.getNumElements());
    for (const APInt &v : dense.getValues<APInt>())
      values.push_back(zeroExtend ? int64_t(v.getZExtValue())
                                  : v.getSExtValue());
    return values;
  }
  auto resource = dyn_cast<DenseResourceElementsAttr>(attr);
  AsmResourceBlob *blob =
      resource ? resource.getRawHandle().getBlob() : nullptr;
  unsigned bytes = element.getWidth() / 8;
  int64_t n = type.getNumElements();
  if (!blob || int64_t(blob->getData().size()) != n * bytes)
    return std::nullopt;
  const char *data = blob->getData().data();
  values.resize(n);
  for (int64_t i = 0; i < n; ++i) {
    uint64_t raw = 0;
    // Little-endian hosts, as everywhere the blobs are read.
    std::memcpy(&raw, data + i * bytes, bytes);
    APInt v(element.getWidth(), raw);
    values[i] = zeroExtend ? int64_t(v.getZExtValue()) : v.getSExtValue();
  }
  return values;
}

std::optional<SmallVector<double>> getFloatValues(ElementsAttr attr) {
  auto type = dyn_cast<ShapedType>(attr.getType());
  auto element = type ? dyn_cast<FloatType>(type.getElementType()) : nullptr;
  if (!element || !type.hasStaticShape())
    return std::nullopt;
  SmallVector<double> values;
  if (auto dense = dyn_cast<DenseFPElementsAttr>(attr)) {
    if (!element.isF16() && !element.isBF16() && !element.isF32() &&
        !element.isF64())
      return std::nullopt;
    values.reserve(dense.getNumElements());
    for (APFloat v : dense.getValues<APFloat>()) {
      bool lost = false;
      // Widening to double is exact for these types.
      v.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
      values.push_back(v.convertToDouble());
    }
    return values;
  }
  auto resource = dyn_cast<DenseResourceElementsAttr>(attr);
  AsmResourceBlob *blob =
      resource ? resource.getRawHandle().getBlob() : nullptr;
  int64_t n = type.getNumElements();
  if (!blob || (!element.isF32() && !element.isF64()))
    return std::nullopt;
  unsigned bytes = element.getWidth() / 8;
  if (int64_t(blob->getData().size()) != n * bytes)
    return std::nullopt;
  const char *data = blob->getData().data();
  values.resize(n);
  for (int64_t i = 0; i < n; ++i) {
    if (element.isF32()) {
      float v;
      std::memcpy(&v, data + i * bytes, bytes);
      values[i] = v;
    } else {
      std::memcpy(&values[i], data + i * bytes, bytes);
    }
  }
  return values;
}

} // namespace loom
