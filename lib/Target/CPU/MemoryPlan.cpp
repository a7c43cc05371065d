//===- MemoryPlan.cpp - One arena for a function's temporaries ------------===//
//
// A static memory plan: liveness in program order, then greedy placement
// (largest buffer first, lowest offset free during its whole lifetime),
// then every planned allocation becomes a view of one arena. Only buffers
// whose every use is visible are planned: an address taken as an integer
// (extract_aligned_pointer_as_index, for runtime calls) may be used by code
// the plan cannot see, so those buffers keep their own allocation.
//
//===----------------------------------------------------------------------===//

#include "loom/Target/CPU/Passes.h"
#include "loom/Target/Target.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/raw_ostream.h"

namespace loom::cpu {
#define GEN_PASS_DEF_LOOMCPUMEMORYPLANPASS
#include "loom/Target/CPU/Passes.h.inc"
} // namespace loom::cpu

using namespace mlir;

namespace loom::cpu {
namespace {

constexpr int64_t kAlignment = 64;

struct Buffer {
  memref::AllocOp alloc;
  int64_t bytes = 0;
  size_t first = 0, last = 0; // positions in the body, inclusive
  int64_t offset = -1;
};

int64_t alignUp(int64_t v) {
  return (v + kAlignment - 1) / kAlignment * kAlignment;
}

/// The last position (in `body`) where `value` or a value that may alias
/// it (any memref result of an op using it) is used; nullopt when its
/// address escapes as an integer.
std::optional<size_t>
lastUse(Value value, Block &body,
        const llvm::DenseMap<Operation *, size_t> &position) {
  size_t last = 0;
  SmallVector<Value> worklist{value};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (isa<memref::ExtractAlignedPointerAsIndexOp>(user))
        return std::nullopt;
      // Any memref an op returns may alias its memref operands (views, but
      // also loop and branch results carrying the buffer): follow them all.
      for (Value result : user->getResults())
        if (isa<BaseMemRefType>(result.getType()))
          worklist.push_back(result);
      Operation *top = body.findAncestorOpInBlock(*user);
      if (!top)
        return std::nullopt;
      last = std::max(last, position.lookup(top));
    }
  }
  return last;
}

/// The first ONNX node name in `loc`, or "".
std::string nodeName(Location loc) {
  std::string name;
  loc->walk([&](Location inner) {
    if (auto named = dyn_cast<NameLoc>(inner)) {
      name = named.getName().str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return name;
}

struct LoomCPUMemoryPlanPass
    : impl::LoomCPUMemoryPlanPassBase<LoomCPUMemoryPlanPass> {
  using LoomCPUMemoryPlanPassBase::LoomCPUMemoryPlanPassBase;

  LoomCPUMemoryPlanPass(const LoomCPUMemoryPlanPassOptions &options,
                        MemoryPlanObserver observer)
      : LoomCPUMemoryPlanPassBase(options), observer(std::move(observer)) {}

  /// Told the plan, for reports (may be empty).
  MemoryPlanObserver observer;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal() || !func.getBody().hasOneBlock())
      return;
    Block &body = func.getBody().front();
    llvm::DenseMap<Operation *, size_t> position;
    for (auto [i, op] : llvm::enumerate(body))
      position[&op] = i;

    std::vector<Buffer> buffers;
    for (Operation &op : body) {
      auto alloc = dyn_cast<memref::AllocOp>(op);
      if (!alloc)
        continue;
      MemRefType type = alloc.getType();
      if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
          type.getMemorySpace() || !type.getElementType().isIntOrFloat())
        continue;
      std::optional<size_t> last = lastUse(alloc, body, position);
      if (!last)
        continue;
      Buffer b;
      b.alloc = alloc;
      b.bytes = alignUp(
          type.getNumElements() *
          std::max<int64_t>(1, (type.getElementTypeBitWidth() + 7) / 8));
      b.first = position[&op];
      b.last = std::max(*last, b.first);
      buffers.push_back(b);
    }
    if (buffers.empty())
      return;

    // Largest first; each at the lowest offset free during its lifetime.
    std::vector<Buffer *> order;
    for (Buffer &b : buffers)
      order.push_back(&b);
    // Ties in program order, so the plan does not depend on the sort.
    llvm::sort(order, [](Buffer *a, Buffer *b) {
      return a->bytes != b->bytes ? a->bytes > b->bytes : a->first < b->first;
    });
    std::vector<Buffer *> placed;
    int64_t arena = 0, total = 0;
    for (Buffer *b : order) {
      std::vector<std::pair<int64_t, int64_t>> busy;
      for (Buffer *p : placed)
        if (p->first <= b->last && b->first <= p->last)
          busy.push_back({p->offset, p->offset + p->bytes});
      llvm::sort(busy);
      int64_t offset = 0;
      for (auto [begin, end] : busy) {
        if (offset + b->bytes <= begin)
          break;
        offset = std::max(offset, end);
      }
      b->offset = offset;
      placed.push_back(b);
      arena = std::max(arena, offset + b->bytes);
      total += b->bytes;
    }

    if (observer) {
      MemoryPlanRecord record;
      record.function = func.getSymName().str();
      record.steps = static_cast<int64_t>(position.size());
      record.arenaBytes = arena;
      for (Buffer &b : buffers)
        record.buffers.push_back(
            {b.offset, b.bytes, static_cast<int64_t>(b.first),
             static_cast<int64_t>(b.last), nodeName(b.alloc.getLoc())});
      observer(record);
    }

    OpBuilder builder(&body, body.begin());
    Location loc = func.getLoc();
    auto arenaType = MemRefType::get({arena}, builder.getI8Type());
    Value arenaBuffer =
        memref::AllocOp::create(builder, loc, arenaType, ValueRange{},
                                builder.getI64IntegerAttr(kAlignment));
    for (Buffer &b : buffers) {
      builder.setInsertionPoint(b.alloc);
      Value offset =
          arith::ConstantIndexOp::create(builder, b.alloc.getLoc(), b.offset);
      Value view =
          memref::ViewOp::create(builder, b.alloc.getLoc(), b.alloc.getType(),
                                 arenaBuffer, offset, ValueRange{});
      b.alloc.replaceAllUsesWith(view);
      b.alloc.erase();
    }
    if (report)
      llvm::errs() << "loom-cpu-memory-plan: @" << func.getSymName() << ": "
                   << buffers.size() << " buffers, " << total
                   << " bytes in all, arena " << arena << " bytes\n";
  }
};

} // namespace

std::unique_ptr<Pass>
createLoomCPUMemoryPlanPass(const LoomCPUMemoryPlanPassOptions &options,
                            MemoryPlanObserver observer) {
  return std::make_unique<LoomCPUMemoryPlanPass>(options, std::move(observer));
}

} // namespace loom::cpu
