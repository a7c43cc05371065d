//===- Recognize.cpp - Recognition of exported NN building blocks -------===//

#include "loom/Dialect/Loom/Transforms/Passes.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace loom {
#define GEN_PASS_DEF_LOOMRECOGNIZEPASS
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"
} // namespace loom

using namespace mlir;
using namespace loom;

namespace {

struct LoomRecognizePass : loom::impl::LoomRecognizePassBase<LoomRecognizePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateRecognitionPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void loom::populateRecognitionPatterns(RewritePatternSet &patterns) {}
