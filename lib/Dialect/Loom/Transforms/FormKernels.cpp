//===- FormKernels.cpp - Group loom ops into loom.fusion kernels ----------===//
//
// Kernel formation: decides which ops a backend generates as one kernel and
// wraps each such group in a loom.fusion. The policy (also in
// docs/kernel-formation.md):
//
// * Ops are visited once, in program order, and each joins at most one
//   group: nothing is ever recomputed, so fusion cannot change the numbers
//   or the amount of work.
// * An elementwise or broadcasting op (unary, binary, where, cast,
//   activations) joins the group of a producer that is elementwise, or of a
//   producer that is a root (matmul, convolution, attention, reduction,
//   softmax, normalization) whose only user it is: an epilogue applied to
//   the root's result while it is still in registers.
// * A reduction, softmax or normalization starts a group, or joins the
//   root-less group of an elementwise producer whose only user it is (a
//   prologue computed while the reduction reads its input). A producer with
//   other users stays where it is: absorbing it would mean computing it
//   twice or writing it out anyway.
// * Matmul, convolution and attention always start a group; a group holds
//   at most one root.
// * A group stops growing at 16 ops, which bounds register pressure and
//   compile time of the generated kernel.
// * Constants are never grouped; they become operands of the fusion.
// * An op joins a group only when all its other operands were defined
//   before the group's first op (or are constants). The fusion then sits
//   where the group's first op was, its operands dominate it, and no value
//   can leave the group and come back into it (which would be a cycle).
//
// Every group of at least two ops becomes a loom.fusion.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/Transforms/Passes.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/raw_ostream.h"

namespace loom {
#define GEN_PASS_DEF_LOOMFORMKERNELSPASS
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"
} // namespace loom

using namespace mlir;
using namespace loom;

namespace {

/// The most ops one kernel holds.
constexpr size_t kMaxGroupSize = 16;

enum class OpClass {
  /// Not grouped (shape ops, gathers, constants, other dialects).
  None,
  /// Elementwise and broadcasting ops.
  Elementwise,
  /// Roots that only take epilogues: matmul, convolution, attention.
  Contraction,
  /// Roots that also absorb elementwise producers: reductions, softmax,
  /// normalizations.
  Reduction,
  /// Layout changes (reshape, transpose, squeeze, unsqueeze). They only
  /// join the kernel that produces their input, as the last steps of its
  /// epilogue: the kernel then writes its result in the new layout, which
  /// costs an index remapping, not a pass over memory. A layout op that
  /// cannot join stays on its own.
  Layout,
};

OpClass classify(Operation *op) {
  if (!isa<LoomDialect>(op->getDialect()) ||
      op->hasTrait<OpTrait::ConstantLike>() || isa<FusionOp, YieldOp>(op))
    return OpClass::None;
  if (isa<MatMulOp, ConvOp, ConvTransposeOp, AttentionOp, QMatMulOp, QConvOp>(
          op))
    return OpClass::Contraction;
  if (isa<ReshapeOp, TransposeOp, SqueezeOp, UnsqueezeOp>(op))
    return OpClass::Layout;
  if (isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp, ReduceProdOp,
          SoftmaxOp, LogSoftmaxOp, LayerNormOp, RMSNormOp, BatchNormOp,
          InstanceNormOp>(op))
    return OpClass::Reduction;
  // Unary ops, activations, is_nan/is_inf and cast carry the Elementwise
  // trait; the broadcasting ops do not (their operands may differ in shape).
  if (op->hasTrait<OpTrait::Elementwise>() ||
      isa<AddOp, SubOp, MulOp, DivOp, PowOp, MaxOp, MinOp, ModOp, BitShiftOp,
          AndOp, OrOp, XorOp, EqualOp, LessOp, LessEqualOp, GreaterOp,
          GreaterEqualOp, WhereOp, SwigluOp, QuantizeOp, DequantizeOp>(op))
    return OpClass::Elementwise;
  return OpClass::None;
}

bool isConstant(Operation *op) {
  return op && op->hasTrait<OpTrait::ConstantLike>();
}

struct Group {
  SmallVector<Operation *> ops;
  Operation *root = nullptr;
};

class KernelFormer {
public:
  explicit KernelFormer(Block &block) : block(block) {}

  /// Decides the groups (the IR is not changed).
  void formGroups();
  /// Wraps every group of two or more ops in a loom.fusion.
  void materialize();

private:
  /// Whether every operand of `op` is in group `g`, a constant, or defined
  /// before the group's first op.
  bool canJoin(unsigned g, Operation *op) const;
  /// Whether `user` is the only op that uses `producer`'s results.
  static bool isOnlyUser(Operation *producer, Operation *user) {
    return llvm::all_of(producer->getUsers(),
                        [&](Operation *u) { return u == user; });
  }
  void join(unsigned g, Operation *op) {
    groups[g].ops.push_back(op);
    groupOf[op] = g;
  }
  void startGroup(Operation *op, bool isRoot) {
    groupOf[op] = groups.size();
    groups.push_back({{op}, isRoot ? op : nullptr});
  }
  /// The group of the op that defines `v`, if it has one with room left.
  std::optional<unsigned> openGroupOf(Value v) const;
  void materialize(const Group &group);

  Block &block;
  llvm::DenseMap<Operation *, unsigned> position;
  llvm::DenseMap<Operation *, unsigned> groupOf;
  std::vector<Group> groups;
};

std::optional<unsigned> KernelFormer::openGroupOf(Value v) const {
  Operation *def = v.getDefiningOp();
  if (!def)
    return std::nullopt;
  auto it = groupOf.find(def);
  if (it == groupOf.end() || groups[it->second].ops.size() >= kMaxGroupSize)
    return std::nullopt;
  return it->second;
}

bool KernelFormer::canJoin(unsigned g, Operation *op) const {
  unsigned start = position.lookup(groups[g].ops.front());
  return llvm::all_of(op->getOperands(), [&](Value v) {
    Operation *def = v.getDefiningOp();
    if (!def || isConstant(def))
      return true;
    auto group = groupOf.find(def);
    if (group != groupOf.end() && group->second == g)
      return true;
    // Values from other blocks (not expected in a function body) have no
    // position and count as defined before the group.
    auto pos = position.find(def);
    return pos == position.end() || pos->second < start;
  });
}

void KernelFormer::formGroups() {
  for (Operation &op : block)
    position[&op] = position.size();

  for (Operation &op : block) {
    switch (classify(&op)) {
    case OpClass::None:
      break;
    case OpClass::Contraction:
      startGroup(&op, /*isRoot=*/true);
      break;
    case OpClass::Elementwise: {
      // The first operand whose producer's group may take this op.
      std::optional<unsigned> chosen;
      for (Value v : op.getOperands()) {
        std::optional<unsigned> g = openGroupOf(v);
        if (!g)
          continue;
        Operation *producer = v.getDefiningOp();
        bool producerOk =
            classify(producer) == OpClass::Elementwise ||
            (producer == groups[*g].root && isOnlyUser(producer, &op));
        if (producerOk && canJoin(*g, &op)) {
          chosen = g;
          break;
        }
      }
      if (chosen)
        join(*chosen, &op);
      else
        startGroup(&op, /*isRoot=*/false);
      break;
    }
    case OpClass::Layout: {
      // Only the data operand's producer can take it, and only when this op
      // is that producer's single user (nothing is computed twice).
      Value data = op.getOperand(0);
      std::optional<unsigned> g = openGroupOf(data);
      if (g && isOnlyUser(data.getDefiningOp(), &op) && canJoin(*g, &op))
        join(*g, &op);
      break;
    }
    case OpClass::Reduction: {
      // A root-less group whose elementwise result only this op reads.
      std::optional<unsigned> chosen;
      for (Value v : op.getOperands()) {
        std::optional<unsigned> g = openGroupOf(v);
        if (!g || groups[*g].root)
          continue;
        if (isOnlyUser(v.getDefiningOp(), &op) && canJoin(*g, &op)) {
          chosen = g;
          break;
        }
      }
      if (chosen) {
        join(*chosen, &op);
        groups[*chosen].root = &op;
      } else {
        startGroup(&op, /*isRoot=*/true);
      }
      break;
    }
    }
  }
}

void KernelFormer::materialize(const Group &group) {
  llvm::SmallPtrSet<Operation *, 16> members(group.ops.begin(),
                                             group.ops.end());
  llvm::SetVector<Value> inputs;
  SmallVector<Value> outputs;
  SmallVector<Location> locs;
  for (Operation *op : group.ops) {
    locs.push_back(op->getLoc());
    for (Value v : op->getOperands())
      if (!members.contains(v.getDefiningOp()))
        inputs.insert(v);
    for (Value r : op->getResults())
      if (llvm::any_of(r.getUsers(),
                       [&](Operation *u) { return !members.contains(u); }))
        outputs.push_back(r);
  }

  Operation *first = group.ops.front();
  // canJoin let constants be defined anywhere; they have no operands, so
  // moving them up is always safe.
  for (Value v : inputs) {
    Operation *def = v.getDefiningOp();
    if (isConstant(def) && def->getBlock() == first->getBlock() &&
        first->isBeforeInBlock(def))
      def->moveBefore(first);
  }

  StringRef kind = "elementwise";
  if (group.root)
    kind =
        classify(group.root) == OpClass::Contraction ? "epilogue" : "reduction";
  OpBuilder builder(first);
  Location loc = builder.getFusedLoc(locs);
  auto fusion = FusionOp::create(builder, loc, ValueRange(outputs).getTypes(),
                                 inputs.getArrayRef(), kind);
  SmallVector<Location> argLocs;
  for (Value v : inputs)
    argLocs.push_back(v.getLoc());
  Block *body =
      builder.createBlock(&fusion.getBody(), {},
                          ValueRange(inputs.getArrayRef()).getTypes(), argLocs);
  IRMapping mapping;
  mapping.map(inputs.getArrayRef(), body->getArguments());
  for (Operation *op : group.ops)
    builder.clone(*op, mapping);
  SmallVector<Value> yielded;
  for (Value v : outputs)
    yielded.push_back(mapping.lookup(v));
  YieldOp::create(builder, loc, yielded);

  for (auto [output, result] : llvm::zip(outputs, fusion.getResults()))
    output.replaceUsesWithIf(result, [&](OpOperand &use) {
      return !members.contains(use.getOwner());
    });
  for (Operation *op : llvm::reverse(group.ops))
    op->erase();
}

void KernelFormer::materialize() {
  for (const Group &group : groups)
    if (group.ops.size() >= 2)
      materialize(group);
}

/// A kernel is a loom op outside any fusion, or a fusion; constants are
/// data, not kernels.
bool countsAsKernel(Operation *op) {
  return isa<LoomDialect>(op->getDialect()) && !isConstant(op) &&
         !isa<YieldOp>(op) && !op->getParentOfType<FusionOp>();
}

struct LoomFormKernelsPass
    : public loom::impl::LoomFormKernelsPassBase<LoomFormKernelsPass> {
  using LoomFormKernelsPassBase::LoomFormKernelsPassBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    unsigned before = 0;
    func.walk([&](Operation *op) { before += countsAsKernel(op); });

    // Only the function body is grouped; ops in nested regions stay as
    // they are (loom programs have none, and their blocks would need
    // their own dominance reasoning).
    for (Block &block : func.getBody()) {
      KernelFormer former(block);
      former.formGroups();
      former.materialize();
    }

    if (!report)
      return;
    unsigned after = 0, unfused = 0;
    llvm::StringMap<unsigned> byKind;
    func.walk([&](Operation *op) {
      if (!countsAsKernel(op))
        return;
      ++after;
      if (auto fusion = dyn_cast<FusionOp>(op))
        ++byKind[fusion.getKind()];
      else
        ++unfused;
    });
    llvm::errs() << "loom-form-kernels: @" << func.getSymName() << ": ";
    // The importer records the exported model's node count.
    if (auto nodes = func->getAttrOfType<IntegerAttr>("onnx.node_count"))
      llvm::errs() << nodes.getInt() << " ONNX nodes, ";
    llvm::errs() << before << " ops -> " << after << " kernels ("
                 << after - unfused << " fusions: " << byKind["elementwise"]
                 << " elementwise, " << byKind["reduction"] << " reduction, "
                 << byKind["epilogue"] << " epilogue; " << unfused
                 << " unfused ops)\n";
  }
};

} // namespace
