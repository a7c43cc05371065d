//===- StaticShapes.cpp - Static result types for code generation ---------===//

#include "loom/Dialect/Loom/Transforms/Passes.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"

namespace loom {
#define GEN_PASS_DEF_LOOMSTATICSHAPESPASS
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"
} // namespace loom

using namespace mlir;

namespace loom {
namespace {

/// The result types `op` can prove, or an empty vector.
SmallVector<Type> provableTypes(Operation *op) {
  if (auto oneHot = dyn_cast<OneHotOp>(op)) {
    DenseIntElementsAttr depth;
    auto indices = dyn_cast<RankedTensorType>(oneHot.getIndices().getType());
    auto result = dyn_cast<RankedTensorType>(oneHot.getType());
    if (!indices || !result ||
        !matchPattern(oneHot.getDepth(), m_Constant(&depth)) ||
        depth.getNumElements() != 1)
      return {};
    SmallVector<int64_t> shape(indices.getShape());
    int64_t axis = static_cast<int64_t>(oneHot.getAxis());
    if (axis < 0)
      axis += shape.size() + 1;
    shape.insert(shape.begin() + axis,
                 (*depth.getValues<APInt>().begin()).getSExtValue());
    return {RankedTensorType::get(shape, result.getElementType())};
  }
  auto infer = dyn_cast<InferTypeOpInterface>(op);
  if (!infer)
    return {};
  SmallVector<Type> types;
  if (failed(infer.inferReturnTypes(op->getContext(), op->getLoc(),
                                    op->getOperands(), op->getAttrDictionary(),
                                    op->getPropertiesStorage(),
                                    op->getRegions(), types)))
    return {};
  return types;
}

/// Whether `refined` is a static ranked tensor type that agrees with every
/// static dimension of the dynamic `current`.
bool refines(Type refined, Type current) {
  auto next = dyn_cast<RankedTensorType>(refined);
  auto now = dyn_cast<RankedTensorType>(current);
  if (!next || !now || now.hasStaticShape() || !next.hasStaticShape() ||
      next.getRank() != now.getRank() ||
      next.getElementType() != now.getElementType())
    return false;
  for (auto [a, b] : llvm::zip(next.getShape(), now.getShape()))
    if (!ShapedType::isDynamic(b) && a != b)
      return false;
  return true;
}

class LoomStaticShapesPass
    : public impl::LoomStaticShapesPassBase<LoomStaticShapesPass> {
public:
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    // Program order: operands are refined before their users.
    for (Operation &op : func.getBody().getOps()) {
      if (!isa<LoomDialect>(op.getDialect()) || isa<FusionOp>(op))
        continue;
      SmallVector<Type> types = provableTypes(&op);
      if (types.size() != op.getNumResults())
        continue;
      for (auto [result, type] : llvm::zip(op.getResults(), types))
        if (refines(type, result.getType()))
          result.setType(type);
    }
    // Ops whose operand and result types must match would not verify with
    // a dynamic returned type: the signature takes the refined types too.
    auto ret = dyn_cast<func::ReturnOp>(func.getBody().back().getTerminator());
    if (!ret)
      return;
    func.setFunctionType(FunctionType::get(
        &getContext(), func.getArgumentTypes(), ret.getOperandTypes()));
  }
};

} // namespace
} // namespace loom
