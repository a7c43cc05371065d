//===- KVCacheInPlace.cpp - A decoder's key/value cache, in place ---------===//
//
// Hugging Face style decoder exports carry their key/value cache through
// the graph's inputs and outputs: `present = Concat(past, new)`. Served
// that way, every decode step copies the whole cache. This pass turns each
// past/present pair into one cache input of fixed capacity that the code
// appends to in place (loom.cache_append), with the filled length as a new
// scalar input; the runtime's caller keeps the buffers between calls.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/Transforms/Passes.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/BitVector.h"

namespace loom {
#define GEN_PASS_DEF_LOOMKVCACHEINPLACEPASS
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"
} // namespace loom

using namespace mlir;
using namespace loom;

namespace {

constexpr llvm::StringLiteral kPastPrefix = "past_key_values.";
constexpr llvm::StringLiteral kPresentPrefix = "present.";

/// One past input whose Concat with the new positions is returned.
struct CacheSlot {
  BlockArgument past;
  ConcatOp concat;
  int64_t axis;
  /// The function results that return the Concat.
  SmallVector<unsigned> results;
};

StringRef nameOf(DictionaryAttr attrs) {
  auto name =
      attrs ? dyn_cast_or_null<StringAttr>(attrs.get("onnx.name")) : nullptr;
  return name ? name.getValue() : StringRef();
}

/// The slot of `past` when it follows the pattern: its one Concat (as the
/// first of two operands) along a symbolic axis is returned as
/// `present.<suffix>`; its other uses only read it.
std::optional<CacheSlot> matchSlot(func::FuncOp func, BlockArgument past) {
  StringRef name = nameOf(func.getArgAttrDict(past.getArgNumber()));
  if (!name.starts_with(kPastPrefix))
    return std::nullopt;
  std::string present =
      (kPresentPrefix + name.drop_front(kPastPrefix.size())).str();
  CacheSlot slot;
  slot.past = past;
  for (OpOperand &use : past.getUses()) {
    auto concat = dyn_cast<ConcatOp>(use.getOwner());
    if (!concat)
      continue;
    if (slot.concat || use.getOperandNumber() != 0 ||
        concat.getInputs().size() != 2)
      return std::nullopt;
    slot.concat = concat;
  }
  if (!slot.concat)
    return std::nullopt;
  auto type = cast<RankedTensorType>(past.getType());
  int64_t axis = slot.concat.getAxis();
  slot.axis = axis < 0 ? axis + type.getRank() : axis;
  if (slot.axis < 0 || slot.axis >= type.getRank() ||
      !type.isDynamicDim(slot.axis))
    return std::nullopt;
  for (OpOperand &use : slot.concat.getResult().getUses())
    if (isa<func::ReturnOp>(use.getOwner()) &&
        nameOf(func.getResultAttrDict(use.getOperandNumber())) == present)
      slot.results.push_back(use.getOperandNumber());
  if (slot.results.empty())
    return std::nullopt;
  return slot;
}

class LoomKVCacheInPlacePass
    : public loom::impl::LoomKVCacheInPlacePassBase<LoomKVCacheInPlacePass> {
public:
  using LoomKVCacheInPlacePassBase::LoomKVCacheInPlacePassBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal() || !func.isPublic())
      return;
    if (capacity <= 0) {
      func.emitError("the key/value cache's capacity must be positive");
      return signalPassFailure();
    }
    // Exporters pass the past through a Concat of itself alone; look
    // through it.
    func.walk([](ConcatOp concat) {
      if (concat.getInputs().size() == 1 &&
          concat.getInputs()[0].getType() == concat.getType() &&
          isa<BlockArgument>(concat.getInputs()[0])) {
        concat.replaceAllUsesWith(concat.getInputs()[0]);
        concat.erase();
      }
    });
    SmallVector<CacheSlot> slots;
    for (BlockArgument argument : func.getArguments())
      if (std::optional<CacheSlot> slot = matchSlot(func, argument))
        slots.push_back(std::move(*slot));
    if (slots.empty()) {
      func.emitError("no input past_key_values.* whose Concat with the new "
                     "keys/values is returned as present.*: this is not a "
                     "decoder exported with its cache");
      return signalPassFailure();
    }

    MLIRContext *ctx = &getContext();
    OpBuilder b(ctx);
    Block &entry = func.getBody().front();
    Location loc = func.getLoc();
    // The filled length, a new last input.
    auto lengthType = RankedTensorType::get({}, b.getI64Type());
    unsigned lengthIndex = func.getNumArguments();
    if (failed(func.insertArgument(
            lengthIndex, lengthType,
            b.getDictionaryAttr(
                b.getNamedAttr("onnx.name", b.getStringAttr("cache_length"))),
            loc)))
      return signalPassFailure();
    Value length = func.getArgument(lengthIndex);
    b.setInsertionPointToStart(&entry);
    auto indexVector = [&](int64_t value) {
      return ConstantOp::create(
          b, loc,
          DenseElementsAttr::get(RankedTensorType::get({1}, b.getI64Type()),
                                 ArrayRef<int64_t>{value}));
    };
    Value lengthVector =
        ReshapeOp::create(b, loc, RankedTensorType::get({1}, b.getI64Type()),
                          length, indexVector(1));

    llvm::BitVector erased(func.getNumResults());
    for (CacheSlot &slot : slots) {
      auto pastType = cast<RankedTensorType>(slot.past.getType());
      SmallVector<int64_t> shape(pastType.getShape());
      shape[slot.axis] = capacity;
      auto cacheType = RankedTensorType::get(shape, pastType.getElementType());
      // The past value: the cache's filled positions.
      b.setInsertionPointAfter(lengthVector.getDefiningOp());
      auto past =
          SliceOp::create(b, loc, pastType, slot.past, indexVector(0),
                          lengthVector, indexVector(slot.axis), Value());
      slot.past.replaceAllUsesExcept(past.getResult(), past);
      slot.past.setType(cacheType);
      unsigned index = slot.past.getArgNumber();
      func.setArgAttr(index, "loom.state", b.getI64IntegerAttr(slot.axis));
      // present = Concat(past, new) -> the append, in place.
      b.setInsertionPoint(slot.concat);
      auto append = CacheAppendOp::create(
          b, slot.concat.getLoc(), slot.concat.getType(), slot.past,
          slot.concat.getInputs()[1], length, slot.axis);
      slot.concat.replaceAllUsesWith(append.getResult());
      slot.concat.erase();
      for (unsigned result : slot.results)
        erased.set(result);
    }
    // The present outputs go: the caches hold them.
    auto ret = cast<func::ReturnOp>(entry.getTerminator());
    SmallVector<Value> kept;
    for (auto [i, value] : llvm::enumerate(ret.getOperands()))
      if (!erased.test(i))
        kept.push_back(value);
    b.setInsertionPoint(ret);
    func::ReturnOp::create(b, ret.getLoc(), kept);
    ret.erase();
    SmallVector<Type> inputs(entry.getArgumentTypes());
    if (failed(func.eraseResults(erased)))
      return signalPassFailure();
    func.setType(
        FunctionType::get(ctx, inputs, func.getFunctionType().getResults()));
  }
};

} // namespace
