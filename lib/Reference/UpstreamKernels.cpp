//===- UpstreamKernels.cpp - Kernels for upstream graph-level ops ---------===//

#include "KernelUtils.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace loom::reference {

void registerUpstreamKernels(KernelRegistry &r) {
  // tensor.cast only refines or relaxes static dimensions; the interpreter
  // checks the value against the new type.
  r.add("tensor.cast",
        [](Operation *, ArrayRef<const Tensor *> in,
           SmallVectorImpl<Tensor> &out) -> LogicalResult {
          out.push_back(*in[0]);
          return success();
        });
  // An empty tensor is only a shape (the buffer of a shard.recv); zeros.
  r.add("tensor.empty",
        [](Operation *op, ArrayRef<const Tensor *>,
           SmallVectorImpl<Tensor> &out) -> LogicalResult {
          auto type = cast<RankedTensorType>(op->getResult(0).getType());
          std::optional<ElementKind> kind =
              getElementKind(type.getElementType());
          if (!kind || !type.hasStaticShape())
            return op->emitError() << "unsupported type " << type;
          out.push_back(Tensor(*kind, type.getShape()));
          return success();
        });
  r.add("loom.constant",
        [](Operation *op, ArrayRef<const Tensor *>,
           SmallVectorImpl<Tensor> &out) -> LogicalResult {
          FailureOr<Tensor> t = tensorFromAttr(
              cast<loom::ConstantOp>(op).getValue(), op->getLoc());
          if (failed(t))
            return failure();
          out.push_back(std::move(*t));
          return success();
        });
}

} // namespace loom::reference
