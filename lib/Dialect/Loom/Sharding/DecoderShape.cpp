//===- DecoderShape.cpp - A decoder's shape, read from its program --------===//

#include "loom/Dialect/Loom/Sharding/DecoderShape.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cstring>
#include <optional>

using namespace mlir;

namespace loom {
namespace {

func::FuncOp entryOf(ModuleOp module) {
  func::FuncOp only;
  int count = 0;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.getName() == "main")
      return func;
    only = func, ++count;
  }
  return count == 1 ? only : func::FuncOp();
}

llvm::Error missing(llvm::StringRef name, const llvm::Twine &what) {
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      (name + ": not a decoder Loom recognizes: " + what).str());
}

/// The f32 values of a constant, however it is stored; none for other
/// element types.
std::optional<llvm::SmallVector<float>> floatValues(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  ElementsAttr attr = constant.getValue();
  auto type = cast<ShapedType>(attr.getType());
  if (!type.hasStaticShape() || !type.getElementType().isF32())
    return std::nullopt;
  llvm::SmallVector<float> values;
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    llvm::append_range(values, dense.getValues<float>());
    return values;
  }
  auto resource = dyn_cast<DenseResourceElementsAttr>(attr);
  if (!resource)
    return std::nullopt;
  AsmResourceBlob *blob = resource.getRawHandle().getBlob();
  if (!blob || int64_t(blob->getData().size()) !=
                   type.getNumElements() * int64_t(sizeof(float)))
    return std::nullopt;
  values.resize(type.getNumElements());
  std::memcpy(values.data(), blob->getData().data(),
              values.size() * sizeof(float));
  return values;
}

/// Whether `head` ([hidden, vocab], or the table itself through a
/// transpose) holds the embedding `table` ([vocab, hidden]) transposed.
bool sameWeights(Value table, Value head) {
  if (auto transpose = head.getDefiningOp<TransposeOp>())
    if (transpose.getInput() == table)
      return true;
  std::optional<llvm::SmallVector<float>> rows = floatValues(table);
  std::optional<llvm::SmallVector<float>> columns = floatValues(head);
  if (!rows || !columns || rows->size() != columns->size())
    return false;
  auto tableType = cast<ShapedType>(table.getType());
  auto headType = cast<ShapedType>(head.getType());
  if (headType.getRank() != 2 ||
      headType.getDimSize(0) != tableType.getDimSize(1))
    return false;
  int64_t vocab = tableType.getDimSize(0), hidden = tableType.getDimSize(1);
  for (int64_t v = 0; v < vocab; ++v)
    for (int64_t h = 0; h < hidden; ++h)
      if ((*rows)[v * hidden + h] != (*columns)[h * vocab + v])
        return false;
  return true;
}

int64_t lastDim(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasRank() || shaped.getRank() == 0)
    return ShapedType::kDynamic;
  return shaped.getDimSize(shaped.getRank() - 1);
}

/// The width of the projection that computes `value` (the keys of an
/// attention op): walks back through reshapes, transposes, rotations and
/// the repetition of grouped key/value heads (an exporter may expand them
/// to the query heads before the attention op) to the product with a
/// constant weight, and returns that weight's output width.
std::optional<int64_t> projectionWidth(Value value) {
  for (int depth = 0; depth < 16 && value; ++depth) {
    Operation *op = value.getDefiningOp();
    if (!op || op->getNumOperands() == 0)
      return std::nullopt;
    if (auto matmul = dyn_cast<MatMulOp>(op)) {
      Value weight = matmul.getOperand(1);
      if (auto transpose = weight.getDefiningOp<TransposeOp>())
        weight = transpose.getInput();
      if (!weight.getDefiningOp<ConstantOp>())
        return std::nullopt;
      int64_t width = lastDim(matmul.getResult().getType());
      return width > 0 ? std::optional<int64_t>(width) : std::nullopt;
    }
    // A cache's concatenation: the new keys come last.
    if (isa<ConcatOp>(op)) {
      value = op->getOperands().back();
      continue;
    }
    if (op->getNumResults() != 1)
      return std::nullopt;
    value = op->getOperand(0);
  }
  return std::nullopt;
}

} // namespace

llvm::Expected<plan::ModelShape> recognizeDecoder(ModuleOp module,
                                                  llvm::StringRef name) {
  func::FuncOp entry = entryOf(module);
  if (!entry)
    return missing(name, "no @main function");
  plan::ModelShape shape;
  shape.name = name.str();

  // Layers, heads and head size: one attention op per layer, all alike.
  llvm::SmallVector<AttentionOp> attentions;
  entry.walk([&](AttentionOp op) { attentions.push_back(op); });
  if (attentions.empty())
    return missing(name, "no attention (loom.attention) was recognized");
  auto query = cast<RankedTensorType>(attentions.front().getQuery().getType());
  auto key = cast<RankedTensorType>(attentions.front().getKey().getType());
  if (query.getRank() != 4 || query.isDynamicDim(1) || query.isDynamicDim(3) ||
      key.isDynamicDim(1))
    return missing(name, "attention heads of unknown count or size");
  for (AttentionOp op : attentions) {
    auto q = cast<RankedTensorType>(op.getQuery().getType());
    auto k = cast<RankedTensorType>(op.getKey().getType());
    if (q.getDimSize(1) != query.getDimSize(1) ||
        q.getDimSize(3) != query.getDimSize(3) ||
        k.getDimSize(1) != key.getDimSize(1))
      return missing(name, "its attention layers differ in heads");
  }
  shape.layers = attentions.size();
  shape.heads = query.getDimSize(1);
  shape.headDim = query.getDimSize(3);
  shape.kvHeads = key.getDimSize(1);
  // Key/value heads repeated up to the query heads before the attention
  // op: the key projection's width says how many there are.
  if (std::optional<int64_t> width =
          projectionWidth(attentions.front().getKey()))
    if (*width % shape.headDim == 0 && *width / shape.headDim >= 1 &&
        *width / shape.headDim < shape.kvHeads &&
        shape.heads % (*width / shape.headDim) == 0)
      shape.kvHeads = *width / shape.headDim;

  // Hidden size: the normalized width.
  entry.walk([&](Operation *op) {
    if (shape.hidden || !isa<RMSNormOp, LayerNormOp>(op))
      return;
    shape.hidden = lastDim(op->getOperand(0).getType());
  });
  if (shape.hidden <= 0)
    return missing(name, "no layer or RMS normalization of a known width");

  // MLP: gated (SwiGLU's product) or a plain activation of a width other
  // than the hidden size.
  int64_t gated = 0, plain = 0;
  entry.walk([&](Operation *op) {
    int64_t width = op->getNumResults() == 1
                        ? lastDim(op->getResult(0).getType())
                        : ShapedType::kDynamic;
    if (width <= 0 || width == shape.hidden)
      return;
    if (isa<SwigluOp>(op))
      gated = std::max(gated, width);
    else if (isa<GeluOp, ReluOp, SiluOp>(op))
      plain = std::max(plain, width);
  });
  // Mixture of experts: loom.moe, or the router's top-k over experts.
  entry.walk([&](Operation *op) {
    if (auto moe = dyn_cast<MoEOp>(op)) {
      shape.experts = moe.getNumExperts();
      auto win = cast<RankedTensorType>(moe.getWIn().getType());
      shape.expertsPerToken = moe.getK();
      if (!win.isDynamicDim(2))
        gated = moe.getWGate() ? win.getDimSize(2) : 0,
        plain = moe.getWGate() ? 0 : win.getDimSize(2);
      return;
    }
    auto topk = dyn_cast<TopKOp>(op);
    if (!topk || shape.experts)
      return;
    int64_t choices = lastDim(topk.getInput().getType());
    int64_t chosen = lastDim(topk.getValues().getType());
    if (choices > 1 && chosen > 0 && chosen < choices &&
        choices != shape.hidden)
      shape.experts = choices, shape.expertsPerToken = chosen;
  });
  if (gated) {
    shape.intermediate = gated;
    shape.gatedMLP = true;
  } else if (plain) {
    shape.intermediate = plain;
    shape.gatedMLP = false;
  } else {
    return missing(name, "no MLP activation (SwiGLU, GELU, ReLU or SiLU) of "
                         "a width other than the hidden size");
  }

  // Vocabulary: the largest embedding table [V, hidden] a gather reads,
  // and logits of that width among the outputs.
  Value table;
  entry.walk([&](GatherOp gather) {
    auto type = dyn_cast<RankedTensorType>(gather.getData().getType());
    if (!type || type.getRank() != 2 || !type.hasStaticShape() ||
        type.getDimSize(1) != shape.hidden ||
        !gather.getData().getDefiningOp<ConstantOp>())
      return;
    if (!table || type.getDimSize(0) >
                      cast<RankedTensorType>(table.getType()).getDimSize(0))
      table = gather.getData();
  });
  if (!table)
    return missing(name, "no embedding table [vocabulary, " +
                             llvm::Twine(shape.hidden) + "] is gathered");
  shape.vocab = cast<RankedTensorType>(table.getType()).getDimSize(0);
  bool logits = llvm::any_of(entry.getResultTypes(), [&](Type type) {
    return lastDim(type) == shape.vocab;
  });
  if (!logits)
    return missing(name, "no output of the vocabulary's width (" +
                             llvm::Twine(shape.vocab) +
                             "): an encoder, or a model without its head");
  // Tied embeddings: the head's product reads the table's values.
  entry.walk([&](MatMulOp matmul) {
    if (lastDim(matmul.getResult().getType()) == shape.vocab &&
        sameWeights(table, matmul.getOperand(1)))
      shape.tiedEmbeddings = true;
  });

  if (shape.heads % shape.kvHeads)
    return missing(name, llvm::Twine(shape.heads) +
                             " query heads are not a multiple of " +
                             llvm::Twine(shape.kvHeads) + " key/value heads");
  return shape;
}

llvm::Expected<DecoderCall> describeDecoderCall(ModuleOp module) {
  func::FuncOp entry = entryOf(module);
  AttentionOp attention;
  if (entry)
    entry.walk([&](AttentionOp op) {
      if (!attention)
        attention = op;
    });
  if (!attention)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the program has no attention op");
  auto query = cast<RankedTensorType>(attention.getQuery().getType());
  auto key = cast<RankedTensorType>(attention.getKey().getType());
  if (query.isDynamicDim(0) || query.isDynamicDim(2) || key.isDynamicDim(2))
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "the attention's batch and lengths are not static (give "
        "--input-shape)");
  DecoderCall call;
  call.batch = query.getDimSize(0);
  call.queryTokens = query.getDimSize(2);
  call.keyTokens = key.getDimSize(2);
  call.valueBytes =
      std::max<int64_t>(1, query.getElementType().getIntOrFloatBitWidth() / 8);
  for (Type type : entry.getResultTypes())
    if (auto shaped = dyn_cast<RankedTensorType>(type);
        shaped && shaped.hasStaticShape() &&
        shaped.getElementType().isIntOrFloat())
      call.outputBytes +=
          double(shaped.getNumElements()) *
          std::max<unsigned>(8, shaped.getElementTypeBitWidth()) / 8;
  entry.walk([&](ConstantOp constant) {
    auto type = cast<ShapedType>(constant.getType());
    if (!isa<FloatType>(type.getElementType()) || !type.hasStaticShape())
      return;
    call.parameters += type.getNumElements();
    call.parameterBytes += double(type.getNumElements()) *
                           type.getElementType().getIntOrFloatBitWidth() / 8;
  });
  return call;
}

} // namespace loom
