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
#include "loom/Target/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
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

/// The static, unit-stride slice `slice` takes of `whole` (row-major
/// bytes), as a new constant of the slice's type.
static ElementsAttr sliceOf(ElementsAttr whole, tensor::ExtractSliceOp slice) {
  auto source = cast<ShapedType>(whole.getType());
  auto type = cast<RankedTensorType>(slice.getType());
  ArrayRef<int64_t> offsets = slice.getStaticOffsets();
  int64_t element = source.getElementTypeBitWidth() / 8;
  ArrayRef<char> from = weightBytes(whole);
  // Row-major strides of the source, in elements.
  SmallVector<int64_t> strides(source.getRank(), 1);
  for (int64_t d = source.getRank() - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * source.getDimSize(d + 1);
  std::vector<char> to;
  to.reserve(type.getNumElements() * element);
  SmallVector<int64_t> index(type.getRank(), 0);
  int64_t innermost = type.getRank() ? type.getShape().back() : 1;
  // Copy contiguous runs of the innermost dimension.
  for (int64_t run = 0,
               runs = type.getNumElements() / std::max<int64_t>(innermost, 1);
       run < runs; ++run) {
    int64_t at = 0;
    for (int64_t d = 0; d < type.getRank(); ++d)
      at +=
          (offsets[d] + (d + 1 == type.getRank() ? 0 : index[d])) * strides[d];
    to.insert(to.end(), from.begin() + at * element,
              from.begin() + (at + innermost) * element);
    // The next run: increment the index over all but the last dimension.
    for (int64_t d = type.getRank() - 2; d >= 0; --d) {
      if (++index[d] < type.getDimSize(d))
        break;
      index[d] = 0;
    }
  }
  return DenseElementsAttr::getFromRawBuffer(type, to);
}

/// Whether every use of `constant` is a static, unit-stride slice: a rank
/// of a partitioned program reads only its pieces of the weight.
static bool onlySliced(arith::ConstantOp constant) {
  return !constant->use_empty() &&
         llvm::all_of(constant->getUsers(), [](Operation *user) {
           auto slice = dyn_cast<tensor::ExtractSliceOp>(user);
           return slice && slice.hasUnitStride() &&
                  slice.getType().hasStaticShape() &&
                  !ShapedType::isDynamicShape(slice.getStaticOffsets()) &&
                  slice.getSourceType().getRank() == slice.getType().getRank();
         });
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
    auto parameterFor = [&](ElementsAttr value,
                            Location loc) -> FailureOr<BlockArgument> {
      BlockArgument &parameter = parameterOf[value];
      if (!parameter) {
        unsigned index = numInputs + weights.size();
        // Marked, so that later passes know the buffer is a constant.
        auto marker = DictionaryAttr::get(
            module.getContext(),
            {NamedAttribute(kWeightAttr, UnitAttr::get(module.getContext()))});
        if (failed(entry.insertArgument(index, value.getType(), marker, loc)))
          return failure();
        parameter = entry.getArgument(index);
        weights.push_back(value);
      }
      return parameter;
    };
    if (onlySliced(constant)) {
      // Keep only the pieces this program reads.
      for (Operation *user : llvm::make_early_inc_range(constant->getUsers())) {
        auto slice = cast<tensor::ExtractSliceOp>(user);
        ElementsAttr value = sliceOf(attr, slice);
        // A piece whose elements are all equal is a splat, held as one
        // element: it stays a constant of the code (a parameter would make
        // the code read a whole tensor from that one element's bytes).
        if (!isStoredDensely(value)) {
          OpBuilder b(slice);
          slice.replaceAllUsesWith(
              arith::ConstantOp::create(b, slice.getLoc(), value).getResult());
          slice.erase();
          continue;
        }
        FailureOr<BlockArgument> piece = parameterFor(value, slice.getLoc());
        if (failed(piece))
          return failure();
        slice.replaceAllUsesWith(*piece);
        slice.erase();
      }
      constant.erase();
      continue;
    }
    FailureOr<BlockArgument> parameter = parameterFor(attr, constant.getLoc());
    if (failed(parameter))
      return failure();
    constant.replaceAllUsesWith(*parameter);
    constant.erase();
  }
  return success();
}

} // namespace loom::cpu
