//===- ExpandBFloat16.cpp - bf16 conversions without a libcall ------------===//

#include "loom/Target/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace loom::cpu {
#define GEN_PASS_DEF_LOOMCPUEXPANDBFLOAT16PASS
#include "loom/Target/CPU/Passes.h.inc"
} // namespace loom::cpu

using namespace mlir;

namespace loom::cpu {
namespace {

class LoomCPUExpandBFloat16Pass
    : public impl::LoomCPUExpandBFloat16PassBase<LoomCPUExpandBFloat16Pass> {
public:
  void runOnOperation() override {
    SmallVector<Operation *> conversions;
    getOperation().walk([&](Operation *op) {
      if (isa<arith::TruncFOp, arith::ExtFOp>(op))
        conversions.push_back(op);
    });
    if (conversions.empty())
      return;
    RewritePatternSet patterns(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    // The conversions alone (the patterns match bf16 ones only), and not
    // the rest of the function.
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    if (failed(
            applyOpPatternsGreedily(conversions, std::move(patterns), config)))
      signalPassFailure();
  }
};

} // namespace
} // namespace loom::cpu
