//===- MapToBlocks.cpp - Linalg ops as loops over blocks of threads -------===//

#include "loom/Target/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace loom::cuda {
#define GEN_PASS_DEF_LOOMCUDAMAPTOBLOCKSPASS
#include "loom/Target/CUDA/Passes.h.inc"
} // namespace loom::cuda

using namespace mlir;

namespace loom::cuda {
namespace {

/// `loop` (without reductions) as a nest of sequential loops: it runs in
/// its thread. (A parallel loop mapped "sequential" is not enough: the
/// upstream conversion to launches gives up on one nested in other loops.)
void toSequentialLoops(RewriterBase &rewriter, scf::ParallelOp loop) {
  rewriter.setInsertionPoint(loop);
  scf::buildLoopNest(
      rewriter, loop.getLoc(), loop.getLowerBound(), loop.getUpperBound(),
      loop.getStep(), [&](OpBuilder &b, Location, ValueRange ivs) {
        IRMapping mapping;
        mapping.map(loop.getInductionVars(), ivs);
        for (Operation &op : loop.getBody()->without_terminator())
          b.clone(op, mapping);
      });
  rewriter.eraseOp(loop);
}

/// Wraps `op` in a parallel loop of one iteration, so that an op with no
/// parallel dimension still becomes a kernel (of one thread).
void wrapInSingleIteration(RewriterBase &rewriter, linalg::LinalgOp op) {
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  auto loop = scf::ParallelOp::create(rewriter, loc, ValueRange{zero},
                                      ValueRange{one}, ValueRange{one});
  rewriter.moveOpBefore(op, loop.getBody()->getTerminator());
}

class LoomCUDAMapToBlocksPass
    : public impl::LoomCUDAMapToBlocksPassBase<LoomCUDAMapToBlocksPass> {
public:
  using LoomCUDAMapToBlocksPassBase::LoomCUDAMapToBlocksPassBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (blockSize < 1 || blockSize > 1024) {
      func.emitError("block-size must be 1 to 1024, got ") << blockSize;
      return signalPassFailure();
    }
    IRRewriter rewriter(&getContext());

    // Copies between buffers as linalg ops: strided views are then loops
    // like everything else (a device memcpy takes only contiguous bytes).
    SmallVector<memref::CopyOp> copies;
    func.walk([&](memref::CopyOp copy) { copies.push_back(copy); });
    for (memref::CopyOp copy : copies) {
      rewriter.setInsertionPoint(copy);
      rewriter.replaceOpWithNewOp<linalg::CopyOp>(copy, copy.getSource(),
                                                  copy.getTarget());
    }

    SmallVector<linalg::LinalgOp> ops;
    func.walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics())
        ops.push_back(op);
    });
    for (linalg::LinalgOp op : ops) {
      if (op.getNumParallelLoops() == 0)
        wrapInSingleIteration(rewriter, op);
      rewriter.setInsertionPoint(op);
      if (failed(linalg::linalgOpToParallelLoops(rewriter, op))) {
        op.emitError("the CUDA target cannot turn this op into loops");
        return signalPassFailure();
      }
      rewriter.eraseOp(op);
    }

    // The outermost parallel loops become grids; loops inside them run in
    // their thread.
    SmallVector<scf::ParallelOp> outermost;
    func.walk([&](scf::ParallelOp loop) {
      if (!loop->getParentOfType<scf::ParallelOp>())
        outermost.push_back(loop);
    });
    for (scf::ParallelOp loop : outermost) {
      if (loop.getNumLoops() > 1) {
        std::vector<unsigned> all(loop.getNumLoops());
        for (unsigned i = 0; i < all.size(); ++i)
          all[i] = i;
        rewriter.setInsertionPoint(loop);
        // collapseParallelLoops replaces the loop; find its replacement as
        // the op now before the old one's position.
        Operation *before = loop->getPrevNode();
        Block *block = loop->getBlock();
        collapseParallelLoops(rewriter, loop, {all});
        Operation *collapsed = before ? before->getNextNode() : &block->front();
        while (collapsed && !isa<scf::ParallelOp>(collapsed))
          collapsed = collapsed->getNextNode();
        if (!collapsed) {
          func.emitError("collapsing a parallel loop nest failed");
          return signalPassFailure();
        }
        loop = cast<scf::ParallelOp>(collapsed);
      }
      auto [blocks, threads] = scf::tileParallelLoop(loop, {blockSize},
                                                     /*noMinMaxBounds=*/true);
      mapToProcessor(blocks, gpu::Processor::BlockX);
      mapToProcessor(threads, gpu::Processor::ThreadX);
      // Innermost first: an outer loop's copy holds its inner loops' for
      // nests.
      SmallVector<scf::ParallelOp> inner;
      threads.getBody()->walk(
          [&](scf::ParallelOp nested) { inner.push_back(nested); });
      for (scf::ParallelOp nested : inner)
        toSequentialLoops(rewriter, nested);
    }
  }
};

} // namespace

void mapToProcessor(scf::ParallelOp loop, gpu::Processor processor) {
  AffineMap identity = AffineMap::getMultiDimIdentityMap(1, loop.getContext());
  (void)gpu::setMappingAttr(
      loop, {gpu::ParallelLoopDimMappingAttr::get(loop.getContext(), processor,
                                                  identity, identity)});
}

} // namespace loom::cuda
