//===- RunTimeSizedArguments.cpp - Inputs with symbolic dimensions --------===//
//
// The bare-pointer calling convention passes a memref as one pointer, which
// only works when the callee knows the shape. An input the model declares
// with a symbolic dimension (batch, sequence) gets its sizes from the
// caller at run time: the argument becomes a rank-0 memref (the pointer to
// the data), reinterpreted inside the function at the sizes read from one
// trailing array of i64 that holds every such dimension in order. The rest
// of the function sees the dynamically shaped memref it had before.
//
//===----------------------------------------------------------------------===//

#include "loom/Target/CPU/Passes.h"

#include "TargetUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace loom::cpu {
#define GEN_PASS_DEF_LOOMCPURUNTIMESIZEDARGUMENTSPASS
#include "loom/Target/CPU/Passes.h.inc"
} // namespace loom::cpu

using namespace mlir;

namespace loom::cpu {
namespace {

struct LoomCPURunTimeSizedArgumentsPass
    : impl::LoomCPURunTimeSizedArgumentsPassBase<
          LoomCPURunTimeSizedArgumentsPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal() || func.isPrivate())
        continue;
      if (failed(convert(func)))
        return signalPassFailure();
    }
  }

  LogicalResult convert(func::FuncOp func) {
    int64_t numSizes = 0;
    for (Type type : func.getArgumentTypes()) {
      auto memref = dyn_cast<MemRefType>(type);
      if (memref && !memref.hasStaticShape())
        numSizes += memref.getNumDynamicDims();
    }
    if (numSizes == 0)
      return success();
    Location loc = func.getLoc();
    auto sizesType =
        MemRefType::get({numSizes}, IntegerType::get(func.getContext(), 64));
    if (failed(func.insertArgument(func.getNumArguments(), sizesType,
                                   /*argAttrs=*/{}, loc)))
      return failure();
    Block &entry = func.getBody().front();
    BlockArgument sizes = entry.getArguments().back();
    OpBuilder b = OpBuilder::atBlockBegin(&entry);

    SmallVector<Type> inputs;
    int64_t next = 0;
    for (BlockArgument arg : entry.getArguments().drop_back()) {
      auto type = dyn_cast<MemRefType>(arg.getType());
      if (!type || type.hasStaticShape()) {
        inputs.push_back(arg.getType());
        continue;
      }
      if (!type.getLayout().isIdentity())
        return func.emitError("argument ")
               << arg.getArgNumber() << " has sizes known only at run time "
               << "and a layout other than the identity: " << type;
      // The sizes known only at run time from the array (contiguousView
      // takes the static ones from the type).
      SmallVector<OpFoldResult> dims;
      for (int64_t d = 0; d < type.getRank(); ++d) {
        if (!type.isDynamicDim(d)) {
          dims.push_back(b.getIndexAttr(type.getDimSize(d)));
          continue;
        }
        Value size = memref::LoadOp::create(
            b, loc, sizes,
            ValueRange{arith::ConstantIndexOp::create(b, loc, next++)});
        dims.push_back(
            arith::IndexCastOp::create(b, loc, b.getIndexType(), size)
                .getResult());
      }
      auto pointerType = MemRefType::get({}, type.getElementType());
      arg.setType(pointerType);
      Value view = contiguousView(b, loc, type, arg, dims);
      arg.replaceAllUsesExcept(view, view.getDefiningOp());
      inputs.push_back(pointerType);
    }
    inputs.push_back(sizesType);
    func.setFunctionType(b.getFunctionType(inputs, func.getResultTypes()));
    return success();
  }
};

} // namespace
} // namespace loom::cpu
