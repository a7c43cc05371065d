//===- DeviceBuffers.cpp - The entry's buffers in device memory -----------===//
//
// loom-cuda-device-buffers moves every buffer the kernels touch to the
// device, and loom-cuda-check-host-code proves that nothing left on the
// host touches one.
//
//===----------------------------------------------------------------------===//

#include "loom/Target/CPU/Passes.h"
#include "loom/Target/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

namespace loom::cuda {
#define GEN_PASS_DEF_LOOMCUDADEVICEBUFFERSPASS
#define GEN_PASS_DEF_LOOMCUDACHECKHOSTCODEPASS
#include "loom/Target/CUDA/Passes.h.inc"
} // namespace loom::cuda

using namespace mlir;

namespace loom::cuda {
namespace {

/// A device buffer of `type` (identity layout, its dynamic sizes taken
/// from `like`).
Value allocateLike(OpBuilder &b, Location loc, MemRefType type, Value like) {
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      sizes.push_back(memref::DimOp::create(b, loc, like, d));
  auto alloc = gpu::AllocOp::create(b, loc, type, /*asyncToken=*/Type(),
                                    ValueRange{}, sizes, ValueRange{});
  return alloc.getMemref();
}

/// Whether `buffer` is host memory: a view of a constant kept in the code
/// or of a buffer on the host's stack.
bool isHostBuffer(Value buffer) {
  while (Operation *def = buffer.getDefiningOp()) {
    if (isa<memref::GetGlobalOp, memref::AllocaOp>(def))
      return true;
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      return false;
    buffer = view.getViewSource();
  }
  return false;
}

/// Whether `op` runs on the device: inside a loop that becomes a kernel.
bool onDevice(Operation *op) {
  return op->getParentOfType<scf::ParallelOp>() ||
         op->getParentOfType<gpu::LaunchOp>();
}

/// A one-iteration parallel loop mapped to one block of one thread, its
/// body built by `body`: a kernel that moves one element.
void singleThreadKernel(RewriterBase &rewriter, Location loc,
                        llvm::function_ref<void(OpBuilder &)> body) {
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  auto loop = scf::ParallelOp::create(
      rewriter, loc, ValueRange{zero}, ValueRange{one}, ValueRange{one},
      [&](OpBuilder &b, Location, ValueRange) { body(b); });
  mapToProcessor(loop, gpu::Processor::BlockX);
}

/// A load or store of one element of a device buffer by host code (a size
/// or an index a check looks at, a value put into a tensor): the element
/// moves through a one-element device buffer (a kernel of one thread
/// copies it) and a one-element buffer on the host's stack (a copy between
/// them). Device copies take whole identity-layout buffers only.
void stageScalarAccess(RewriterBase &rewriter, Operation *op) {
  Location loc = op->getLoc();
  rewriter.setInsertionPoint(op);
  auto load = dyn_cast<memref::LoadOp>(op);
  auto store = dyn_cast<memref::StoreOp>(op);
  Value buffer = load ? load.getMemref() : store.getMemref();
  SmallVector<Value> indices(load ? load.getIndices() : store.getIndices());
  Type element = cast<MemRefType>(buffer.getType()).getElementType();
  auto scalarType = MemRefType::get({1}, element);
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value device = gpu::AllocOp::create(rewriter, loc, scalarType, Type(),
                                      ValueRange{}, ValueRange{}, ValueRange{})
                     .getMemref();
  Value host = memref::AllocaOp::create(rewriter, loc, scalarType);
  if (load) {
    singleThreadKernel(rewriter, loc, [&](OpBuilder &b) {
      Value value = memref::LoadOp::create(b, loc, buffer, indices);
      memref::StoreOp::create(b, loc, value, device, ValueRange{zero});
    });
    gpu::MemcpyOp::create(rewriter, loc, Type(), ValueRange{}, host, device);
    gpu::DeallocOp::create(rewriter, loc, Type(), ValueRange{}, device);
    rewriter.replaceOpWithNewOp<memref::LoadOp>(load, host, ValueRange{zero});
    return;
  }
  memref::StoreOp::create(rewriter, loc, store.getValue(), host,
                          ValueRange{zero});
  gpu::MemcpyOp::create(rewriter, loc, Type(), ValueRange{}, device, host);
  singleThreadKernel(rewriter, loc, [&](OpBuilder &b) {
    Value value = memref::LoadOp::create(b, loc, device, ValueRange{zero});
    memref::StoreOp::create(b, loc, value, buffer, indices);
  });
  gpu::DeallocOp::create(rewriter, loc, Type(), ValueRange{}, device);
  rewriter.eraseOp(store);
}

class LoomCUDADeviceBuffersPass
    : public impl::LoomCUDADeviceBuffersPassBase<LoomCUDADeviceBuffersPass> {
public:
  using LoomCUDADeviceBuffersPassBase::LoomCUDADeviceBuffersPassBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    IRRewriter rewriter(&getContext());

    // Host allocations become device allocations, wherever they are.
    SmallVector<Operation *> allocs;
    func.walk([&](Operation *op) {
      if (isa<memref::AllocOp, memref::DeallocOp, memref::AllocaOp>(op))
        allocs.push_back(op);
    });
    for (Operation *op : allocs) {
      rewriter.setInsertionPoint(op);
      if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
        auto device = gpu::AllocOp::create(
            rewriter, alloc.getLoc(), alloc.getType(), Type(), ValueRange{},
            alloc.getDynamicSizes(), alloc.getSymbolOperands());
        rewriter.replaceOp(alloc, device.getMemref());
      } else if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
        gpu::DeallocOp::create(rewriter, dealloc.getLoc(), Type(), ValueRange{},
                               dealloc.getMemref());
        rewriter.eraseOp(dealloc);
      } else {
        op->emitError("the CUDA target does not support stack buffers "
                      "(memref.alloca) yet");
        return signalPassFailure();
      }
    }

    // Buffers of the call: made at its start, released (and outputs copied
    // back) before each return.
    Block &entry = func.getBody().front();
    SmallVector<std::pair<Value, Value>> copiedBack; // (device, caller's)
    SmallVector<Value> released;
    rewriter.setInsertionPointToStart(&entry);
    for (BlockArgument arg : func.getArguments()) {
      auto type = dyn_cast<MemRefType>(arg.getType());
      if (!type || arg.use_empty())
        continue;
      if (func.getArgAttr(arg.getArgNumber(), cpu::kWeightAttr))
        continue;
      if (!type.getLayout().isIdentity()) {
        func.emitError("the CUDA target needs identity-layout parameters, "
                       "got ")
            << type;
        return signalPassFailure();
      }
      Location loc = arg.getLoc();
      Value device = allocateLike(rewriter, loc, type, arg);
      Operation *upload = nullptr;
      if (func.getArgAttr(arg.getArgNumber(), kInputAttr))
        upload = gpu::MemcpyOp::create(rewriter, loc, Type(), ValueRange{},
                                       device, arg);
      else
        copiedBack.push_back({device, arg});
      released.push_back(device);
      rewriter.replaceAllUsesExcept(arg, device, upload);
      // The sizes of a dynamic buffer still come from the caller's.
      if (Operation *alloc = device.getDefiningOp())
        for (OpOperand &operand : alloc->getOpOperands())
          if (auto dim = operand.get().getDefiningOp<memref::DimOp>())
            if (dim.getSource() == device)
              dim.getSourceMutable().assign(arg);
    }

    // Constants the code keeps: copied with the inputs.
    SmallVector<memref::GetGlobalOp> globals;
    func.walk([&](memref::GetGlobalOp get) {
      if (llvm::any_of(get->getUsers(),
                       [](Operation *user) { return onDevice(user); }))
        globals.push_back(get);
    });
    for (memref::GetGlobalOp get : globals) {
      rewriter.setInsertionPointAfter(get);
      Value device =
          allocateLike(rewriter, get.getLoc(), get.getType(), get.getResult());
      gpu::MemcpyOp::create(rewriter, get.getLoc(), Type(), ValueRange{},
                            device, get);
      // Host code (a check's message, a scalar read) keeps the constant.
      rewriter.replaceUsesWithIf(get.getResult(), device, [](OpOperand &use) {
        return onDevice(use.getOwner());
      });
      if (get->getBlock() != &entry) {
        // Released where it was made: at the end of its block.
        rewriter.setInsertionPoint(get->getBlock()->getTerminator());
        gpu::DeallocOp::create(rewriter, get.getLoc(), Type(), ValueRange{},
                               device);
        continue;
      }
      released.push_back(device);
    }

    // Scalars the host code reads or writes (a size or an index a check
    // looks at, a value put into a tensor): through one-element copies.
    SmallVector<Operation *> hostAccesses;
    func.walk([&](Operation *op) {
      if (!isa<memref::LoadOp, memref::StoreOp>(op) || onDevice(op))
        return;
      Value buffer = isa<memref::LoadOp>(op)
                         ? cast<memref::LoadOp>(op).getMemref()
                         : cast<memref::StoreOp>(op).getMemref();
      if (!isHostBuffer(buffer))
        hostAccesses.push_back(op);
    });
    for (Operation *op : hostAccesses)
      stageScalarAccess(rewriter, op);

    func.walk([&](func::ReturnOp ret) {
      rewriter.setInsertionPoint(ret);
      for (auto [device, caller] : copiedBack)
        gpu::MemcpyOp::create(rewriter, ret.getLoc(), Type(), ValueRange{},
                              caller, device);
      for (Value device : released)
        gpu::DeallocOp::create(rewriter, ret.getLoc(), Type(), ValueRange{},
                               device);
    });
  }
};

class LoomCUDACheckHostCodePass
    : public impl::LoomCUDACheckHostCodePassBase<LoomCUDACheckHostCodePass> {
public:
  using LoomCUDACheckHostCodePassBase::LoomCUDACheckHostCodePassBase;

  void runOnOperation() override {
    WalkResult result =
        getOperation().walk<WalkOrder::PreOrder>([](Operation *op) {
          if (isa<gpu::LaunchOp>(op))
            return WalkResult::skip();
          if (auto load = dyn_cast<memref::LoadOp>(op))
            if (isHostBuffer(load.getMemref()))
              return WalkResult::advance();
          if (auto store = dyn_cast<memref::StoreOp>(op))
            if (isHostBuffer(store.getMemref()))
              return WalkResult::advance();
          if (isa<memref::LoadOp, memref::StoreOp, memref::CopyOp,
                  linalg::LinalgOp, vector::TransferReadOp,
                  vector::TransferWriteOp, vector::LoadOp, vector::StoreOp>(
                  op)) {
            op->emitError("the CUDA target would run this op on the host, "
                          "against device memory; it has no device form yet");
            return WalkResult::interrupt();
          }
          return WalkResult::advance();
        });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
} // namespace loom::cuda
