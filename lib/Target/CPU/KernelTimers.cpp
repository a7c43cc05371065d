//===- KernelTimers.cpp - Timer calls around each kernel ------------------===//
//
// `loomc --kernel-timers`: every op at the top level of a function that
// does work (a linalg op, a copy, a loop nest, a runtime call) gets a call
// of the runtime's loom_rt_kernel_begin before it and loom_rt_kernel_end
// after it (loom/abi/profile.h). The end call passes a label (the op's
// kind and the ONNX node names of its location), and the floating-point
// operations and bytes one run of it does, counted here on the static
// shapes, so the runtime can print achieved GFLOP/s and GB/s beside each
// kernel's time. Later passes transform the op in place (vectorized
// tiles, parallel loops, library calls), so what runs between the two
// calls is the kernel the op became.
//
//===----------------------------------------------------------------------===//

#include "loom/Target/CPU/Passes.h"

#include "TargetUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace loom::cpu {
#define GEN_PASS_DEF_LOOMCPUKERNELTIMERSPASS
#include "loom/Target/CPU/Passes.h.inc"
} // namespace loom::cpu

using namespace mlir;

namespace loom::cpu {
namespace {

constexpr llvm::StringLiteral kBeginEntry = "loom_rt_kernel_begin";
constexpr llvm::StringLiteral kEndEntry = "loom_rt_kernel_end";

/// Ops that do work when they run; views, sizes and allocations do not.
bool isKernel(Operation *op) {
  if (op->hasTrait<OpTrait::IsTerminator>() || isMemoryEffectFree(op))
    return false;
  // Scalar loads (a gather's index, a run-time size) feed the kernels.
  return !isa<memref::AllocOp, memref::AllocaOp, memref::DeallocOp,
              memref::AssumeAlignmentOp, memref::GetGlobalOp, memref::LoadOp>(
      op);
}

/// Whether `op` multiplies and accumulates: float or integer products,
/// 16-bit floats summed in f32, and byte products (u8 x s8 into i32).
bool isProduct(linalg::LinalgOp op) {
  return isMultiplyAccumulate(op) || isWideningMultiplyAccumulate(op) ||
         byteProductUnsignedInput(op);
}

/// The kind of work, for the label: "matmul", "conv_2d_nchw_fchw",
/// "contraction", "reduction", "elementwise", "copy", "loops", or a
/// runtime call's name.
std::string kindOf(Operation *op) {
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    std::string kind;
    if (isa<linalg::GenericOp>(op)) {
      bool reduces = linalgOp.getNumReductionLoops() > 0;
      kind = reduces ? (isProduct(linalgOp) ? "contraction" : "reduction")
                     : "elementwise";
    } else {
      kind = op->getName().stripDialect().str();
    }
    if (auto library = op->getAttrOfType<StringAttr>(kLibraryAttr))
      kind += " (" + library.str() + ")";
    return kind;
  }
  if (isa<memref::CopyOp>(op))
    return "copy";
  if (auto call = dyn_cast<func::CallOp>(op))
    return call.getCallee().str();
  if (op->getNumRegions() > 0)
    return "loops";
  return op->getName().getStringRef().str();
}

/// "KIND NODE" or "KIND NODE (+N nodes)": the first ONNX node name of the
/// op's location and how many more it was fused from.
std::string labelOf(Operation *op) {
  llvm::SetVector<StringRef> names;
  op->getLoc()->walk([&](Location loc) {
    if (auto name = dyn_cast<NameLoc>(loc))
      names.insert(name.getName().strref());
    return WalkResult::advance();
  });
  std::string label = kindOf(op);
  if (!names.empty())
    label += " " + names.front().str();
  if (names.size() > 1)
    label += " (+" + std::to_string(names.size() - 1) + " nodes)";
  return label;
}

/// Bytes of a static memref, or nullopt.
std::optional<int64_t> bytesOf(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref || !memref.hasStaticShape() ||
      !memref.getElementType().isIntOrFloat())
    return std::nullopt;
  return memref.getNumElements() * ((memref.getElementTypeBitWidth() + 7) / 8);
}

/// The floating-point (or integer multiply-add) operations of one run:
/// 2 per multiply-accumulate of products and convolutions, 0 for other
/// ops and for run-time sizes.
int64_t flopsOf(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || linalgOp.getNumReductionLoops() == 0 || !isProduct(linalgOp))
    return 0;
  int64_t iterations = 1;
  for (int64_t range : linalgOp.getStaticLoopRanges()) {
    if (ShapedType::isDynamic(range))
      return 0;
    iterations *= range;
  }
  return 2 * iterations;
}

/// The bytes the op's operands span (each read or written once), 0 when a
/// size is known only at run time or the op is not a linalg op or copy.
int64_t bytesMovedBy(Operation *op) {
  if (!isa<linalg::LinalgOp, memref::CopyOp>(op))
    return 0;
  int64_t total = 0;
  for (Value operand : op->getOperands()) {
    if (!isa<MemRefType>(operand.getType()))
      continue;
    std::optional<int64_t> bytes = bytesOf(operand.getType());
    if (!bytes)
      return 0;
    total += *bytes;
  }
  return total;
}

class LoomCPUKernelTimersPass
    : public impl::LoomCPUKernelTimersPassBase<LoomCPUKernelTimersPass> {
public:
  void runOnOperation() override {
    ModuleOp module = getOperation();
    OpBuilder b(module.getContext());
    Type i64 = b.getI64Type();
    SmallVector<Operation *> kernels;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal())
        for (Operation &op : func.getBody().front())
          if (isKernel(&op))
            kernels.push_back(&op);
    if (kernels.empty())
      return;
    declareRuntimeFunction(module, kBeginEntry, {i64});
    declareRuntimeFunction(module, kEndEntry, {i64, i64, i64, i64});
    StringGlobals strings(module, "__loom_kernel_label_");
    unsigned index = 0;
    for (Operation *op : kernels) {
      Location loc = op->getLoc();
      memref::GlobalOp label = strings.get(b, labelOf(op));
      b.setInsertionPoint(op);
      Value id = arith::ConstantIntOp::create(b, loc, i64, index);
      func::CallOp::create(b, loc, kBeginEntry, TypeRange{}, ValueRange{id});
      b.setInsertionPointAfter(op);
      Value text = memref::GetGlobalOp::create(b, loc, label.getType(),
                                               label.getSymName());
      Value flops = arith::ConstantIntOp::create(b, loc, i64, flopsOf(op));
      Value bytes = arith::ConstantIntOp::create(b, loc, i64, bytesMovedBy(op));
      func::CallOp::create(
          b, loc, kEndEntry, TypeRange{},
          ValueRange{id, addressOf(b, loc, text), flops, bytes});
      ++index;
    }
  }
};

} // namespace
} // namespace loom::cpu
