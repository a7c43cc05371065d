//===- ExpandRunTimeShapes.cpp - expand_shape with run-time group sizes ---===//
//
// A reshape of [batch * sequence, 64] into [batch, sequence, 64] is an
// expand_shape whose first group has two sizes known only at run time.
// Upstream expand-strided-metadata (MLIR 22) derives a group's sizes from
// its source, which only works with at most one dynamic size per group,
// and crashes otherwise. Of a contiguous buffer, such an expand_shape is
// the same memory viewed at the given sizes with row-major strides: a
// memref.reinterpret_cast, which the later passes handle.
//
//===----------------------------------------------------------------------===//

#include "loom/Target/CPU/Passes.h"

#include "TargetUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace loom::cpu {
#define GEN_PASS_DEF_LOOMCPUEXPANDRUNTIMESHAPESPASS
#include "loom/Target/CPU/Passes.h.inc"
} // namespace loom::cpu

using namespace mlir;

namespace loom::cpu {
namespace {

/// Whether a group of `op` has more than one dynamic size.
bool hasSeveralDynamicSizesInAGroup(memref::ExpandShapeOp op) {
  MemRefType type = op.getResultType();
  for (const ReassociationIndices &group : op.getReassociationIndices()) {
    int64_t dynamic =
        llvm::count_if(group, [&](int64_t d) { return type.isDynamicDim(d); });
    if (dynamic > 1)
      return true;
  }
  return false;
}

struct LoomCPUExpandRunTimeShapesPass
    : impl::LoomCPUExpandRunTimeShapesPassBase<LoomCPUExpandRunTimeShapesPass> {
  void runOnOperation() override {
    SmallVector<memref::ExpandShapeOp> candidates;
    getOperation().walk([&](memref::ExpandShapeOp op) {
      if (hasSeveralDynamicSizesInAGroup(op))
        candidates.push_back(op);
    });
    for (memref::ExpandShapeOp op : candidates)
      if (failed(rewrite(op)))
        return signalPassFailure();
  }

  LogicalResult rewrite(memref::ExpandShapeOp op) {
    MemRefType source = op.getSrcType(), result = op.getResultType();
    if (!source.getLayout().isIdentity() || !result.getLayout().isIdentity())
      return op.emitOpError("expands a buffer that is not contiguous into "
                            "several sizes known only at run time in one "
                            "group (not supported)");
    OpBuilder b(op);
    Location loc = op.getLoc();
    Value view =
        contiguousView(b, loc, result, op.getSrc(), op.getMixedOutputShape());
    op.replaceAllUsesWith(view);
    op.erase();
    return success();
  }
};

} // namespace
} // namespace loom::cpu
