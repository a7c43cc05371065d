//===- ExternalWeights.cpp - Weights as parameters of the entry -----------===//
//
// Engines keep each rank's weights in a page-aligned weights section of the
// engine file, which the runtime maps read-only and passes to the code,
// rather than as read-only data inside the code: the code stays small, the
// weights are mapped once however many times the code is loaded, and a
// rank's weights are data a tool can inspect (and one day replace) without
// recompiling. Runs on linalg-on-tensors IR, where every constant tensor is
// an arith.constant of the entry.
//
//===----------------------------------------------------------------------===//

#include "loom/Target/CPU/CPUTarget.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;

namespace loom::cpu {

/// Whether `attr` is stored element by element, row-major, with whole
/// bytes per element: what the code reads through a plain pointer.
static bool isStoredDensely(ElementsAttr attr) {
  auto type = cast<ShapedType>(attr.getType());
  int64_t bits = type.getElementTypeBitWidth();
  if (!type.hasStaticShape() || bits % 8 != 0 ||
      !type.getElementType().isIntOrFloat())
    return false;
  if (auto dense = dyn_cast<DenseElementsAttr>(attr))
    return !dense.isSplat();
  return isa<DenseResourceElementsAttr>(attr);
}

ArrayRef<char> weightBytes(ElementsAttr attr) {
  if (auto dense = dyn_cast<DenseElementsAttr>(attr))
    return dense.getRawData();
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr))
    if (AsmResourceBlob *blob = resource.getRawHandle().getBlob())
      return blob->getData();
  return {};
}

LogicalResult externalizeWeights(ModuleOp module, int64_t minBytes,
                                 SmallVectorImpl<ElementsAttr> &weights) {
  auto entry = module.lookupSymbol<func::FuncOp>(kMainSymbol);
  if (!entry || entry.getBody().empty())
    return module.emitError("no @") << kMainSymbol << " to take weights from";
  unsigned numInputs = entry.getNumArguments();
  llvm::DenseMap<Attribute, BlockArgument> parameterOf;
  for (auto constant : llvm::make_early_inc_range(
           entry.getBody().front().getOps<arith::ConstantOp>())) {
    auto attr = dyn_cast<ElementsAttr>(constant.getValue());
    if (!attr || !isStoredDensely(attr))
      continue;
    auto type = cast<ShapedType>(attr.getType());
    int64_t bytes = type.getNumElements() * type.getElementTypeBitWidth() / 8;
    if (bytes < minBytes || weightBytes(attr).size() != size_t(bytes))
      continue;
    BlockArgument &parameter = parameterOf[attr];
    if (!parameter) {
      unsigned index = numInputs + weights.size();
      if (failed(entry.insertArgument(index, constant.getType(), {},
                                      constant.getLoc())))
        return failure();
      parameter = entry.getArgument(index);
      weights.push_back(attr);
    }
    constant.replaceAllUsesWith(parameter);
    constant.erase();
  }
  return success();
}

} // namespace loom::cpu
