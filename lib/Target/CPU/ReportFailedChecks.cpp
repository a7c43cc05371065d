//===- ReportFailedChecks.cpp - Failed run-time checks through the runtime ===//

#include "loom/Target/CPU/Passes.h"

#include "TargetUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace loom::cpu {
#define GEN_PASS_DEF_LOOMCPUREPORTFAILEDCHECKSPASS
#include "loom/Target/CPU/Passes.h.inc"
} // namespace loom::cpu

using namespace mlir;

namespace loom::cpu {
namespace {

constexpr llvm::StringLiteral kCheckEntry = "loom_rt_check_or_abort";

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
    Type i32 = b.getI32Type();
    declareRuntimeFunction(module, kCheckEntry, {i32, b.getI64Type()});
    StringGlobals strings(module, "__loom_failed_check_");
    for (cf::AssertOp op : asserts) {
      // The outcome goes to the runtime as an argument: no branch per
      // check (a branch each would split the enclosing block at every
      // check, which is quadratic in the lowering to control flow).
      Location loc = op.getLoc();
      memref::GlobalOp global = strings.get(b, op.getMsg());
      b.setInsertionPoint(op);
      Value ok = arith::ExtUIOp::create(b, loc, i32, op.getArg());
      Value text = memref::GetGlobalOp::create(b, loc, global.getType(),
                                               global.getSymName());
      func::CallOp::create(b, loc, kCheckEntry, TypeRange{},
                           ValueRange{ok, addressOf(b, loc, text)});
      op.erase();
    }
  }
};

} // namespace
} // namespace loom::cpu
