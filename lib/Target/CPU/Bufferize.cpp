//===- Bufferize.cpp - One-shot bufferization for the CPU target ----------===//

#include "loom/Target/CPU/Passes.h"

#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotModuleBufferize.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/Transforms/AllocationOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"

namespace loom::cpu {
#define GEN_PASS_DEF_LOOMCPUBUFFERIZEPASS
#include "loom/Target/CPU/Passes.h.inc"
} // namespace loom::cpu

using namespace mlir;

namespace loom::cpu {
namespace {

class LoomCPUBufferizePass
    : public impl::LoomCPUBufferizePassBase<LoomCPUBufferizePass> {
public:
  void getDependentDialects(DialectRegistry &registry) const override {
    LoomCPUBufferizePassBase::getDependentDialects(registry);
    arith::registerBufferizableOpInterfaceExternalModels(registry);
    bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
        registry);
    linalg::registerBufferizableOpInterfaceExternalModels(registry);
    scf::registerBufferizableOpInterfaceExternalModels(registry);
    tensor::registerBufferizableOpInterfaceExternalModels(registry);
    // Lets later passes see memref.alloc as an allocation (hoisting result
    // buffers into out-parameters, deallocation).
    memref::registerAllocationOpInterfaceExternalModels(registry);
  }

  void runOnOperation() override {
    // The entry's tensor arguments are the caller's inputs and the weights,
    // which the runtime maps read-only from the engine file: an op that
    // updates a buffer in place (scatter, insert_slice, a loop-carried
    // tensor) must write into a copy of them, never into them. One-shot
    // bufferization assumes function arguments writable unless told; an
    // argument already marked either way keeps its mark.
    // The exception: a key/value cache input (loom.state, made by
    // -loom-kv-cache-in-place) is the caller's buffer, kept between calls,
    // and the code appends to it in place.
    MLIRContext *ctx = &getContext();
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal() || !func.isPublic())
        continue;
      for (BlockArgument argument : func.getArguments())
        if (func.getArgAttr(argument.getArgNumber(), "loom.state"))
          func.setArgAttr(
              argument.getArgNumber(),
              bufferization::BufferizationDialect::kWritableAttrName,
              BoolAttr::get(ctx, true));
      for (BlockArgument argument : func.getArguments())
        if (isa<TensorType>(argument.getType()) &&
            !func.getArgAttr(
                argument.getArgNumber(),
                bufferization::BufferizationDialect::kWritableAttrName))
          func.setArgAttr(
              argument.getArgNumber(),
              bufferization::BufferizationDialect::kWritableAttrName,
              BoolAttr::get(ctx, false));
    }
    bufferization::OneShotBufferizationOptions options;
    options.bufferizeFunctionBoundaries = true;
    // A loop (ONNX Loop's scf.while) may carry a new buffer into the next
    // iteration, a scan output that grew by a row: buffer deallocation
    // frees the one it replaces.
    options.allowReturnAllocsFromLoops = true;
    options.setFunctionBoundaryTypeConversion(
        bufferization::LayoutMapOption::IdentityLayoutMap);
    options.memCpyFn = [](OpBuilder &b, Location loc, Value from, Value to) {
      linalg::CopyOp::create(b, loc, from, to);
      return success();
    };
    bufferization::BufferizationState state;
    if (failed(bufferization::runOneShotModuleBufferize(getOperation(), options,
                                                        state))) {
      signalPassFailure();
      return;
    }
    eraseSelfCopies();
  }

private:
  /// An op that wrote its result in place into a slice of a loop-carried
  /// buffer (loom-cpu-batch-loops' tensor.insert_slice of the op's result
  /// into the slice it came from) bufferizes to a copy of that slice onto
  /// the same slice, taken twice: the copy is removed.
  void eraseSelfCopies() {
    auto sameSlice = [](Value a, Value b) {
      auto x = a.getDefiningOp<memref::SubViewOp>();
      auto y = b.getDefiningOp<memref::SubViewOp>();
      return x && y && x.getSource() == y.getSource() &&
             x.getType() == y.getType() &&
             x.getMixedOffsets() == y.getMixedOffsets() &&
             x.getMixedSizes() == y.getMixedSizes() &&
             x.getMixedStrides() == y.getMixedStrides();
    };
    SmallVector<linalg::CopyOp> selfCopies;
    getOperation().walk([&](linalg::CopyOp copy) {
      if (copy.hasPureBufferSemantics() &&
          (copy.getInputs()[0] == copy.getOutputs()[0] ||
           sameSlice(copy.getInputs()[0], copy.getOutputs()[0])))
        selfCopies.push_back(copy);
    });
    for (linalg::CopyOp copy : selfCopies)
      copy.erase();
  }
};

} // namespace
} // namespace loom::cpu
