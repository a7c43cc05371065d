//===- TargetUtils.cpp - Helpers shared by the CPU target's passes --------===//

#include "TargetUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;

namespace loom::cpu {

func::FuncOp declareRuntimeFunction(ModuleOp module, StringRef name,
                                    TypeRange inputs) {
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  OpBuilder b(module.getBodyRegion());
  b.setInsertionPointToStart(module.getBody());
  auto f = func::FuncOp::create(b, module.getLoc(), name,
                                b.getFunctionType(inputs, {}));
  f.setPrivate();
  return f;
}

Value addressOf(OpBuilder &b, Location loc, Value buffer) {
  Value index =
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
}

Value viewedBuffer(Value value) {
  while (auto view = value.getDefiningOp<ViewLikeOpInterface>()) {
    if (isa<memref::ViewOp>(view.getOperation()))
      break;
    value = view.getViewSource();
  }
  return value;
}

namespace {

template <typename AddOp, typename MulOp>
bool isMultiplyAccumulateOf(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  if (body->getNumArguments() != 3 ||
      !llvm::hasNItems(body->without_terminator(), 2))
    return false;
  auto add = body->getTerminator()->getOperand(0).getDefiningOp<AddOp>();
  if (!add)
    return false;
  Value acc = body->getArgument(2);
  Value product = add.getLhs() == acc   ? add.getRhs()
                  : add.getRhs() == acc ? add.getLhs()
                                        : Value();
  auto mul = product ? product.getDefiningOp<MulOp>() : nullptr;
  if (!mul)
    return false;
  Value x = body->getArgument(0), y = body->getArgument(1);
  return (mul.getLhs() == x && mul.getRhs() == y) ||
         (mul.getLhs() == y && mul.getRhs() == x);
}

} // namespace

bool isMultiplyAccumulate(linalg::LinalgOp op) {
  return isMultiplyAccumulateOf<arith::AddFOp, arith::MulFOp>(op) ||
         isMultiplyAccumulateOf<arith::AddIOp, arith::MulIOp>(op);
}

} // namespace loom::cpu
