//===- KVCacheInPlace.cpp - A decoder's key/value cache, in place ---------===//
//
// Hugging Face style decoder exports carry their key/value cache through
// the graph's inputs and outputs: `present = Concat(past, new)`. Served
// that way, every decode step copies the whole cache. This pass turns each
// past/present pair into one cache input of fixed capacity that the code
// appends to in place (loom.cache_append), with the filled length as a new
// scalar input; the runtime's caller keeps the buffers between calls.
//
// On a program partitioned by heads (tensor parallelism), each rank's
// past is its heads' slice of the whole input (shard.all_slice) and the
// present output gathers the ranks' concatenations (shard.all_gather).
// There, the cache input becomes the rank's own slice: each rank keeps
// and appends to its heads only, and nothing is gathered.
//
// Exports that manage the cache with ONNX's TensorScatter (opset 24) take
// a cache of fixed length and the write positions as inputs and return
// `present = TensorScatter(past, new, write_indices)`, imported as a
// loom.scatter_elements: such an input becomes state as it is, the scatter
// writes into it in place, and the present output goes.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/Transforms/Passes.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
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
  /// In a partitioned program, this rank's slice of the past (along an
  /// axis of static size other than the positions'); null otherwise.
  shard::AllSliceOp slice;
  ConcatOp concat;
  /// In a partitioned program, the gather of the ranks' concatenations
  /// (the slice's inverse) that is returned; null otherwise.
  shard::AllGatherOp gather;
  int64_t axis;
  /// The function results that return the Concat (or its gather).
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
  // The value the Concat takes: the past, or this rank's slice of it.
  // Besides the slice, a partitioned program may only read the whole
  // past's shape (exporters compute positions from it).
  Value local = past;
  for (Operation *user : past.getUsers())
    if (auto slice = dyn_cast<shard::AllSliceOp>(user)) {
      int64_t sliceAxis = slice.getSliceAxis().getSExtValue();
      if (slot.slice || sliceAxis < 0 ||
          sliceAxis >= slice.getResult().getType().getRank() ||
          slice.getResult().getType().isDynamicDim(sliceAxis))
        return std::nullopt;
      slot.slice = slice;
      local = slice.getResult();
    }
  if (slot.slice && llvm::any_of(past.getUsers(), [](Operation *user) {
        return !isa<shard::AllSliceOp, ShapeOp>(user);
      }))
    return std::nullopt;
  for (OpOperand &use : local.getUses()) {
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
  auto type = cast<RankedTensorType>(local.getType());
  int64_t axis = slot.concat.getAxis();
  slot.axis = axis < 0 ? axis + type.getRank() : axis;
  if (slot.axis < 0 || slot.axis >= type.getRank() ||
      !type.isDynamicDim(slot.axis))
    return std::nullopt;
  if (slot.slice && slot.slice.getSliceAxis().getSExtValue() == slot.axis)
    return std::nullopt;
  // What is returned: the Concat, or (partitioned) its gather, which must
  // undo the slice exactly.
  Value returned = slot.concat.getResult();
  if (slot.slice) {
    for (Operation *user : returned.getUsers()) {
      auto gather = dyn_cast<shard::AllGatherOp>(user);
      if (!gather || slot.gather)
        continue;
      if (gather.getGrid() != slot.slice.getGrid() ||
          gather.getGridAxes() != slot.slice.getGridAxes() ||
          gather.getGatherAxis().getSExtValue() !=
              slot.slice.getSliceAxis().getSExtValue() ||
          gather.getResult().getType() != past.getType())
        return std::nullopt;
      slot.gather = gather;
    }
    if (!slot.gather)
      return std::nullopt;
    returned = slot.gather.getResult();
  }
  for (OpOperand &use : returned.getUses())
    if (isa<func::ReturnOp>(use.getOwner()) &&
        nameOf(func.getResultAttrDict(use.getOperandNumber())) == present)
      slot.results.push_back(use.getOperandNumber());
  if (slot.results.empty())
    return std::nullopt;
  return slot;
}

/// An input that the program updates with a scatter and returns (ONNX
/// TensorScatter-24: a cache of fixed length and the write positions given
/// as inputs).
struct ScatterSlot {
  BlockArgument cache;
  ScatterElementsOp scatter;
  /// The function results that return the scatter.
  SmallVector<unsigned> results;
};

/// The slot of `cache` when its only use is the data of a scatter without
/// reduction whose result is returned.
std::optional<ScatterSlot> matchScatterSlot(func::FuncOp func,
                                            BlockArgument cache) {
  if (!cache.hasOneUse())
    return std::nullopt;
  auto scatter = dyn_cast<ScatterElementsOp>(*cache.getUsers().begin());
  if (!scatter || scatter.getData() != cache ||
      scatter.getReduction() != "none")
    return std::nullopt;
  ScatterSlot slot{cache, scatter, {}};
  for (OpOperand &use : scatter.getResult().getUses())
    if (isa<func::ReturnOp>(use.getOwner()))
      slot.results.push_back(use.getOperandNumber());
  if (slot.results.empty())
    return std::nullopt;
  return slot;
}

/// Replaces `shape`, a read of the whole past's dimensions, by the same
/// dimensions of `localPast` (this rank's filled slice), with the whole
/// (static) size along `sliceAxis`.
void replaceWholeShape(OpBuilder &b, ShapeOp shape, Value localPast,
                       int64_t sliceAxis) {
  auto wholeType = cast<RankedTensorType>(shape.getInput().getType());
  int64_t rank = wholeType.getRank();
  auto bound = [&](int64_t at) {
    return std::clamp<int64_t>(at < 0 ? at + rank : at, 0, rank);
  };
  int64_t start = bound(shape.getStart());
  int64_t end = bound(shape.getEnd().value_or(rank));
  b.setInsertionPoint(shape);
  Location loc = shape.getLoc();
  auto oneDim = RankedTensorType::get({1}, b.getI64Type());
  SmallVector<Value> dims;
  for (int64_t d = start; d < end; ++d) {
    if (d == sliceAxis) {
      dims.push_back(ConstantOp::create(
          b, loc,
          DenseElementsAttr::get(
              oneDim, ArrayRef<int64_t>{wholeType.getDimSize(sliceAxis)})));
      continue;
    }
    dims.push_back(ShapeOp::create(b, loc, oneDim, localPast,
                                   b.getI64IntegerAttr(d),
                                   b.getI64IntegerAttr(d + 1)));
  }
  Value replacement;
  if (dims.empty())
    replacement = ShapeOp::create(b, loc, shape.getType(), localPast,
                                  shape.getStartAttr(), shape.getEndAttr());
  else if (dims.size() == 1)
    replacement = dims.front();
  else
    replacement =
        ConcatOp::create(b, loc, shape.getType(), dims, b.getI64IntegerAttr(0));
  shape.replaceAllUsesWith(replacement);
  shape.erase();
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
    SmallVector<ScatterSlot> scatterSlots;
    for (BlockArgument argument : func.getArguments()) {
      if (std::optional<CacheSlot> slot = matchSlot(func, argument))
        slots.push_back(std::move(*slot));
      else if (std::optional<ScatterSlot> scatterSlot =
                   matchScatterSlot(func, argument))
        scatterSlots.push_back(std::move(*scatterSlot));
    }
    if (slots.empty() && scatterSlots.empty()) {
      func.emitError("no input past_key_values.* whose Concat with the new "
                     "keys/values is returned as present.*, nor an input "
                     "written by a TensorScatter and returned: this is not a "
                     "decoder exported with its cache (or, partitioned, "
                     "its cache is split along an axis other than the "
                     "heads)");
      return signalPassFailure();
    }

    MLIRContext *ctx = &getContext();
    OpBuilder b(ctx);
    Block &entry = func.getBody().front();
    llvm::BitVector erased(func.getNumResults());
    if (failed(keepScatteredInPlace(func, scatterSlots, erased)) ||
        failed(appendInPlace(func, slots, erased)))
      return signalPassFailure();

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
    // The gathers of the ranks' caches fed only the present outputs.
    for (CacheSlot &slot : slots)
      if (slot.gather && slot.gather.use_empty())
        slot.gather.erase();
  }

private:
  /// Scattered caches: state as they are (the model fixes their length,
  /// which must be the capacity asked for), written in place.
  LogicalResult keepScatteredInPlace(func::FuncOp func,
                                     ArrayRef<ScatterSlot> slots,
                                     llvm::BitVector &erased) {
    OpBuilder b(func.getContext());
    for (ScatterSlot slot : slots) {
      auto type = cast<RankedTensorType>(slot.cache.getType());
      auto axis = static_cast<int64_t>(slot.scatter.getAxis());
      axis = axis < 0 ? axis + type.getRank() : axis;
      StringRef name = nameOf(func.getArgAttrDict(slot.cache.getArgNumber()));
      // The runtime's session sizes a state's symbolic dimensions by the
      // batch: only the first may be symbolic.
      for (int64_t d = 1; d < type.getRank(); ++d)
        if (type.isDynamicDim(d))
          return func.emitError("input '")
                 << name << "' of type " << type
                 << " is written by a TensorScatter: a cache kept in place "
                    "needs static sizes after the batch";
      if (type.getDimSize(axis) != static_cast<int64_t>(capacity))
        return func.emitError("input '")
               << name << "' is a cache of " << type.getDimSize(axis)
               << " positions (the model's TensorScatter cache); --kv-cache "
                  "asks for "
               << static_cast<int64_t>(capacity);
      func.setArgAttr(slot.cache.getArgNumber(), "loom.state",
                      b.getI64IntegerAttr(axis));
      for (unsigned result : slot.results)
        erased.set(result);
    }
    return success();
  }

  /// Concatenated caches: a cache of `capacity` positions each, a new
  /// input cache_length, and each Concat an append in place.
  LogicalResult appendInPlace(func::FuncOp func,
                              MutableArrayRef<CacheSlot> slots,
                              llvm::BitVector &erased) {
    if (slots.empty())
      return success();
    OpBuilder b(func.getContext());
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
      return failure();
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

    for (CacheSlot &slot : slots) {
      // The value the program reads as the past: the whole input, or this
      // rank's slice of it, which is all that its cache holds.
      Value local = slot.slice ? slot.slice.getResult() : Value(slot.past);
      auto pastType = cast<RankedTensorType>(local.getType());
      SmallVector<int64_t> shape(pastType.getShape());
      shape[slot.axis] = capacity;
      auto cacheType = RankedTensorType::get(shape, pastType.getElementType());
      // The past value: the cache's filled positions.
      b.setInsertionPointAfter(lengthVector.getDefiningOp());
      auto past =
          SliceOp::create(b, loc, pastType, slot.past, indexVector(0),
                          lengthVector, indexVector(slot.axis), Value());
      if (slot.slice) {
        int64_t sliceAxis = slot.slice.getSliceAxis().getSExtValue();
        slot.slice.getResult().replaceAllUsesWith(past.getResult());
        slot.slice.erase();
        for (Operation *user : llvm::to_vector(slot.past.getUsers()))
          if (auto shape = dyn_cast<ShapeOp>(user))
            replaceWholeShape(b, shape, past, sliceAxis);
      } else {
        slot.past.replaceAllUsesExcept(past.getResult(), past);
      }
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
    return success();
  }
};

} // namespace
