//===- MergeKernelModules.cpp - One gpu.module for all kernels ------------===//

#include "loom/Target/CUDA/Passes.h"

#include "mlir/IR/SymbolTable.h"

namespace loom::cuda {
#define GEN_PASS_DEF_LOOMCUDAMERGEKERNELMODULESPASS
#include "loom/Target/CUDA/Passes.h.inc"
} // namespace loom::cuda

using namespace mlir;

namespace loom::cuda {
namespace {

class LoomCUDAMergeKernelModulesPass
    : public impl::LoomCUDAMergeKernelModulesPassBase<
          LoomCUDAMergeKernelModulesPass> {
public:
  using LoomCUDAMergeKernelModulesPassBase::LoomCUDAMergeKernelModulesPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> kernels(module.getOps<gpu::GPUModuleOp>());
    if (kernels.size() < 2)
      return;
    gpu::GPUModuleOp merged = kernels.front();
    SymbolTable mergedSymbols(merged);
    // (old module, old function) -> the function's name in `merged`.
    llvm::DenseMap<std::pair<StringAttr, StringAttr>, StringAttr> renamed;
    for (gpu::GPUModuleOp other : llvm::drop_begin(kernels)) {
      for (Operation &op :
           llvm::make_early_inc_range(other.getBody()->without_terminator())) {
        auto symbol = dyn_cast<SymbolOpInterface>(op);
        if (!symbol) {
          op.emitError("a kernel module holds an op that is not a symbol");
          return signalPassFailure();
        }
        StringAttr oldName = symbol.getNameAttr();
        // Insert renames the symbol if the merged module has the name.
        op.remove();
        StringAttr newName = mergedSymbols.insert(&op);
        if (isa<gpu::GPUFuncOp>(op))
          renamed[{other.getNameAttr(), oldName}] = newName;
        else if (newName != oldName) {
          // A declaration (libdevice function) both modules need: keep one.
          mergedSymbols.erase(&op);
          Operation *existing = mergedSymbols.lookup(oldName);
          if (!existing) {
            module.emitError("merging kernel modules lost ") << oldName;
            return signalPassFailure();
          }
        }
      }
    }
    module.walk([&](gpu::LaunchFuncOp launch) {
      SymbolRefAttr kernel = launch.getKernel();
      auto it =
          renamed.find({kernel.getRootReference(), kernel.getLeafReference()});
      if (it == renamed.end())
        return;
      launch.setKernelAttr(SymbolRefAttr::get(
          merged.getNameAttr(), {FlatSymbolRefAttr::get(it->second)}));
    });
    for (gpu::GPUModuleOp other : llvm::drop_begin(kernels))
      other.erase();
  }
};

} // namespace
} // namespace loom::cuda
