//===- ReportFailedChecks.cpp - Failed run-time checks through the runtime ===//

#include "loom/Target/CPU/Passes.h"

#include "TargetUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace loom::cpu {
#define GEN_PASS_DEF_LOOMCPUREPORTFAILEDCHECKSPASS
#include "loom/Target/CPU/Passes.h.inc"
} // namespace loom::cpu

using namespace mlir;

namespace loom::cpu {
namespace {

constexpr llvm::StringLiteral kFatalCheckEntry = "loom_rt_check_fatal";

class LoomCPUReportFailedChecksPass
    : public impl::LoomCPUReportFailedChecksPassBase<
          LoomCPUReportFailedChecksPass> {
public:
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<cf::AssertOp> asserts;
    module.walk([&](cf::AssertOp op) { asserts.push_back(op); });
    if (asserts.empty())
      return;
    OpBuilder b(module.getContext());
    declareRuntimeFunction(module, kFatalCheckEntry, {b.getI64Type()});
    for (cf::AssertOp op : asserts) {
      Location loc = op.getLoc();
      memref::GlobalOp global =
          stringGlobal(b, module, "__loom_failed_check_", op.getMsg());
      b.setInsertionPoint(op);
      Value ok = op.getArg();
      Value failed = arith::XOrIOp::create(
          b, loc, ok, arith::ConstantIntOp::create(b, loc, 1, 1));
      scf::IfOp::create(b, loc, failed, [&](OpBuilder &nested, Location loc) {
        Value text = memref::GetGlobalOp::create(nested, loc, global.getType(),
                                                 global.getSymName());
        func::CallOp::create(nested, loc, kFatalCheckEntry, TypeRange{},
                             ValueRange{addressOf(nested, loc, text)});
        scf::YieldOp::create(nested, loc);
      });
      op.erase();
    }
  }
};

} // namespace
} // namespace loom::cpu
