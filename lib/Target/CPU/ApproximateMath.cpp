//===- ApproximateMath.cpp - Vectorizable math functions on the CPU -------===//

#include "loom/Target/CPU/Passes.h"

#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace loom::cpu {
#define GEN_PASS_DEF_LOOMCPUAPPROXIMATEMATHPASS
#include "loom/Target/CPU/Passes.h.inc"
} // namespace loom::cpu

using namespace mlir;

namespace loom::cpu {
namespace {

bool approximated(llvm::StringRef name) {
  name.consume_front("math.");
  return llvm::is_contained({"exp", "expm1", "erf", "tanh"}, name);
}

class LoomCPUApproximateMathPass
    : public impl::LoomCPUApproximateMathPassBase<LoomCPUApproximateMathPass> {
public:
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<math::MathDialect>(op->getDialect()) &&
          approximated(op->getName().getStringRef()))
        ops.push_back(op);
    });
    if (ops.empty())
      return;
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns, approximated);
    // Only these ops and what their rewrites create.
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    (void)applyOpPatternsGreedily(ops, std::move(patterns), config);
  }
};

} // namespace
} // namespace loom::cpu
