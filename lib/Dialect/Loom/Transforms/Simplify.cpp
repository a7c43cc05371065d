//===- Simplify.cpp - Conv+BN folding and data-movement cleanup ---------===//

#include "loom/Dialect/Loom/Transforms/Passes.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace loom {
#define GEN_PASS_DEF_LOOMSIMPLIFYPASS
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"
} // namespace loom

using namespace mlir;
using namespace loom;

namespace {

struct LoomSimplifyPass : loom::impl::LoomSimplifyPassBase<LoomSimplifyPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateSimplificationPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void loom::populateSimplificationPatterns(RewritePatternSet &patterns) {}
