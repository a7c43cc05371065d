//===- RunTimeSizedResults.cpp - Outputs whose sizes the data decides -----===//
//
// A result of the entry whose shape has a dimension the data decides (the
// rows non_max_suppression selects, the coordinates non_zero finds) cannot
// be a caller-allocated buffer of a size known in advance. Such a result
// becomes a record of 1 + rank i64 values instead, static, so that it is
// an ordinary out-parameter: slot 0 holds the address of a copy of the
// data that the runtime allocated (loom_rt_copy_output, loom/abi/
// outputs.h) and the caller then owns, slots 1.. the sizes. The code frees
// its own buffer as it frees any other.
//
//===----------------------------------------------------------------------===//

#include "loom/Target/CPU/Passes.h"

#include "TargetUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace loom::cpu {
#define GEN_PASS_DEF_LOOMCPURUNTIMESIZEDRESULTSPASS
#include "loom/Target/CPU/Passes.h.inc"
} // namespace loom::cpu

using namespace mlir;

namespace loom::cpu {
namespace {

constexpr llvm::StringLiteral kCopyOutput = "loom_rt_copy_output";

struct LoomCPURunTimeSizedResultsPass
    : impl::LoomCPURunTimeSizedResultsPassBase<LoomCPURunTimeSizedResultsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal() || func.isPrivate())
        continue;
      if (failed(convert(module, func)))
        return signalPassFailure();
    }
  }

  LogicalResult convert(ModuleOp module, func::FuncOp func) {
    SmallVector<Type> results(func.getResultTypes());
    bool any = false;
    for (Type type : results) {
      auto memref = dyn_cast<MemRefType>(type);
      any |= memref && !memref.hasStaticShape();
    }
    if (!any)
      return success();
    if (!func.getBody().hasOneBlock())
      return func.emitError("a function with run-time sized results must "
                            "have one block");
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    OpBuilder b(ret);
    Location loc = ret.getLoc();
    Type i64 = b.getI64Type();
    // (data address, bytes) -> address of the runtime's copy.
    if (!module.lookupSymbol(kCopyOutput)) {
      OpBuilder top(module.getBodyRegion());
      top.setInsertionPointToStart(module.getBody());
      auto f = func::FuncOp::create(top, loc, kCopyOutput,
                                    top.getFunctionType({i64, i64}, {i64}));
      f.setPrivate();
    }
    SmallVector<Value> operands(ret.getOperands());
    for (auto [i, value] : llvm::enumerate(operands)) {
      auto type = dyn_cast<MemRefType>(value.getType());
      if (!type || type.hasStaticShape())
        continue;
      if (!type.getLayout().isIdentity() ||
          !type.getElementType().isIntOrFloat())
        return func.emitError("result ")
               << i << " has sizes known only at run time and a layout or "
               << "element type the runtime cannot copy: " << type;
      int64_t rank = type.getRank();
      auto recordType = MemRefType::get({1 + rank}, i64);
      Value record = memref::AllocOp::create(b, loc, recordType);
      unsigned width = type.getElementTypeBitWidth();
      Value bytes = arith::ConstantIntOp::create(
          b, loc, std::max<unsigned>(1, (width + 7) / 8), 64);
      for (int64_t d = 0; d < rank; ++d) {
        Value size = arith::IndexCastOp::create(
            b, loc, i64, memref::DimOp::create(b, loc, value, d));
        bytes = arith::MulIOp::create(b, loc, bytes, size);
        memref::StoreOp::create(
            b, loc, size, record,
            ValueRange{arith::ConstantIndexOp::create(b, loc, 1 + d)});
      }
      Value copy =
          func::CallOp::create(b, loc, kCopyOutput, TypeRange{i64},
                               ValueRange{addressOf(b, loc, value), bytes})
              .getResult(0);
      memref::StoreOp::create(
          b, loc, copy, record,
          ValueRange{arith::ConstantIndexOp::create(b, loc, 0)});
      operands[i] = record;
      results[i] = recordType;
    }
    ret->setOperands(operands);
    func.setFunctionType(b.getFunctionType(func.getArgumentTypes(), results));
    return success();
  }
};

} // namespace
} // namespace loom::cpu
