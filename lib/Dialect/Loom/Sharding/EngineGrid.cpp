//===- EngineGrid.cpp - The device grid a program runs on -----------------===//

#include "loom/Dialect/Loom/Sharding/EngineGrid.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"

using namespace mlir;

namespace loom {

FailureOr<std::optional<SmallVector<int64_t>>>
engineGridShape(ModuleOp module) {
  auto grids = llvm::to_vector(module.getOps<shard::GridOp>());
  if (grids.empty())
    return std::optional<SmallVector<int64_t>>();
  if (grids.size() != 1 ||
      llvm::any_of(grids.front().getShape(), ShapedType::isDynamic))
    return grids.front().emitError(
        "engines support one device grid of static size");
  return std::optional<SmallVector<int64_t>>(
      llvm::to_vector(grids.front().getShape()));
}

FailureOr<std::optional<int64_t>> engineGridSize(ModuleOp module) {
  FailureOr<std::optional<SmallVector<int64_t>>> shape =
      engineGridShape(module);
  if (failed(shape))
    return failure();
  if (!*shape)
    return std::optional<int64_t>();
  int64_t n = 1;
  for (int64_t d : **shape)
    n *= d;
  return std::optional<int64_t>(n);
}

} // namespace loom
