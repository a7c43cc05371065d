//===- LibraryConvolutions.cpp - Convolutions through a kernel library ----===//
//
// The shape class where oneDNN beats the generated im2col product (3x3 and
// larger windows of enough work; docs/codegen.md) is computed by the
// library: loom-cpu-select-library-convolutions marks those convolutions
// on tensors, and loom-cpu-library-convolutions turns them into calls of
// the runtime's loom_rt_conv2d_f32 once they operate on buffers.
//
//===----------------------------------------------------------------------===//

#include "loom/Target/CPU/Passes.h"

#include "loom/abi/kernels.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace loom::cpu {
#define GEN_PASS_DEF_LOOMCPUSELECTLIBRARYCONVOLUTIONSPASS
#define GEN_PASS_DEF_LOOMCPULIBRARYCONVOLUTIONSPASS
#include "loom/Target/CPU/Passes.h.inc"
} // namespace loom::cpu

using namespace mlir;

namespace loom::cpu {
namespace {

constexpr StringLiteral kConvEntry = "loom_rt_conv2d_f32";

/// 2 x the multiply-adds of `conv` (static shapes).
int64_t convolutionFlops(linalg::Conv2DNchwFchwOp conv) {
  auto filter = cast<ShapedType>(conv.getInputs()[1].getType());
  auto output = cast<ShapedType>(conv.getOutputs()[0].getType());
  return 2 * output.getNumElements() * filter.getNumElements() /
         filter.getDimSize(0);
}

class LoomCPUSelectLibraryConvolutionsPass
    : public impl::LoomCPUSelectLibraryConvolutionsPassBase<
          LoomCPUSelectLibraryConvolutionsPass> {
public:
  using LoomCPUSelectLibraryConvolutionsPassBase::
      LoomCPUSelectLibraryConvolutionsPassBase;

  void runOnOperation() override {
    getOperation().walk([&](linalg::Conv2DNchwFchwOp conv) {
      if (!conv.hasPureTensorSemantics())
        return;
      auto input = cast<ShapedType>(conv.getInputs()[0].getType());
      auto filter = cast<ShapedType>(conv.getInputs()[1].getType());
      auto output = cast<ShapedType>(conv.getOutputs()[0].getType());
      if (!input.hasStaticShape() || !filter.hasStaticShape() ||
          !output.hasStaticShape() || !input.getElementType().isF32() ||
          !filter.getElementType().isF32() || !output.getElementType().isF32())
        return;
      // 1x1 windows are plain matrix products, generated as fast as the
      // library computes them (docs/codegen.md).
      if (filter.getDimSize(2) * filter.getDimSize(3) < 2)
        return;
      if (convolutionFlops(conv) < minFlops)
        return;
      conv->setAttr(kLibraryAttr, StringAttr::get(&getContext(), "onednn"));
    });
  }
};

/// Declares `name(i64...)` once.
func::FuncOp declareRuntimeFunction(ModuleOp module, StringRef name,
                                    unsigned numArguments) {
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  OpBuilder b(module.getBodyRegion());
  b.setInsertionPointToStart(module.getBody());
  SmallVector<Type> inputs(numArguments, b.getI64Type());
  auto f = func::FuncOp::create(b, module.getLoc(), name,
                                b.getFunctionType(inputs, {}));
  f.setPrivate();
  return f;
}

/// Whether `buffer` is dense, row-major and starts at its aligned pointer
/// (what the library reads through one address).
bool isDenseRowMajor(Value buffer) {
  auto type = dyn_cast<MemRefType>(buffer.getType());
  if (!type || !type.hasStaticShape())
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) || offset != 0)
    return false;
  int64_t expected = 1;
  for (int64_t d = type.getRank() - 1; d >= 0; --d) {
    if (type.getDimSize(d) != 1 && strides[d] != expected)
      return false;
    expected *= type.getDimSize(d);
  }
  return true;
}

/// Follows view-like ops (casts, reshapes) to the buffer they view.
Value viewedBuffer(Value buffer) {
  while (auto view = buffer.getDefiningOp<ViewLikeOpInterface>()) {
    if (isa<memref::ViewOp>(view.getOperation()))
      break;
    buffer = view.getViewSource();
  }
  return buffer;
}

/// Whether `filter` always holds the same values: a constant global, or a
/// weight parameter of the entry (externalizeWeights marks them).
bool isConstantFilter(Value filter) {
  Value source = viewedBuffer(filter);
  if (auto global = source.getDefiningOp<memref::GetGlobalOp>()) {
    auto module = global->getParentOfType<ModuleOp>();
    auto decl = module.lookupSymbol<memref::GlobalOp>(global.getNameAttr());
    return decl && decl.getConstant();
  }
  if (auto argument = dyn_cast<BlockArgument>(source)) {
    auto f = dyn_cast<func::FuncOp>(argument.getOwner()->getParentOp());
    return f && argument.getOwner()->isEntryBlock() &&
           f.getArgAttr(argument.getArgNumber(), kWeightAttr);
  }
  return false;
}

/// A zero-filled buffer the input was copied into at an offset: what
/// tensor.pad with zeros bufferizes to. Its parts, to remove them.
struct ZeroPadding {
  Value source;
  int64_t top = 0, left = 0, bottom = 0, right = 0;
  SmallVector<Operation *> ops; // the fill, the subview, the copy
};

bool isZero(Value value) {
  return matchPattern(value, m_AnyZeroFloat()) ||
         matchPattern(value, m_Zero());
}

/// Whether `op` writes zeros to all of `buffer`: a linalg.fill of zero, or
/// a linalg op without inputs whose body yields zero (tensor.pad's
/// bufferized fill is a linalg.map).
bool isZeroFill(Operation *op, Value buffer) {
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    return fill.getOutputs()[0] == buffer && isZero(fill.getInputs()[0]);
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || linalgOp.getNumDpsInputs() != 0 ||
      linalgOp.getNumDpsInits() != 1 ||
      linalgOp.getDpsInitOperand(0)->get() != buffer ||
      linalgOp.getNumParallelLoops() != linalgOp.getNumLoops())
    return false;
  auto yield = dyn_cast<linalg::YieldOp>(
      linalgOp->getRegion(0).front().getTerminator());
  return yield && yield.getNumOperands() == 1 && isZero(yield.getOperand(0));
}

/// Matches `buffer` = fill(0); copy(source, subview(buffer)) with the
/// subview covering all of dims 0 and 1 and a window of dims 2 and 3, and
/// nothing else touching `buffer` before `conv`.
std::optional<ZeroPadding> matchZeroPadding(Value buffer, Operation *conv) {
  ZeroPadding padding;
  Operation *fill = nullptr;
  memref::SubViewOp window;
  for (Operation *user : buffer.getUsers()) {
    if (user == conv)
      continue;
    if (isZeroFill(user, buffer)) {
      if (fill)
        return std::nullopt;
      fill = user;
    } else if (auto s = dyn_cast<memref::SubViewOp>(user)) {
      if (window)
        return std::nullopt;
      window = s;
    } else {
      return std::nullopt;
    }
  }
  if (!fill || !window || !window->hasOneUse() ||
      fill->getBlock() != conv->getBlock() ||
      !fill->isBeforeInBlock(conv))
    return std::nullopt;
  auto copy = dyn_cast<linalg::CopyOp>(*window->getUsers().begin());
  if (!copy || copy.getOutputs()[0] != window.getResult() ||
      copy->getBlock() != conv->getBlock() || !copy->isBeforeInBlock(conv) ||
      !fill->isBeforeInBlock(copy))
    return std::nullopt;
  auto outer = cast<MemRefType>(buffer.getType());
  auto offsets = getConstantIntValues(window.getMixedOffsets());
  auto sizes = getConstantIntValues(window.getMixedSizes());
  if (!offsets || !sizes || !window.hasUnitStride() ||
      (*offsets)[0] != 0 || (*offsets)[1] != 0 ||
      (*sizes)[0] != outer.getDimSize(0) || (*sizes)[1] != outer.getDimSize(1))
    return std::nullopt;
  padding.source = copy.getInputs()[0];
  if (!isDenseRowMajor(padding.source))
    return std::nullopt;
  padding.top = (*offsets)[2];
  padding.left = (*offsets)[3];
  padding.bottom = outer.getDimSize(2) - (*offsets)[2] - (*sizes)[2];
  padding.right = outer.getDimSize(3) - (*offsets)[3] - (*sizes)[3];
  padding.ops = {copy, window, fill};
  return padding;
}

/// The fill of zeros into `output` just before `conv` (ops in between do
/// not touch memory), if any.
Operation *zeroFillBefore(Operation *conv, Value output) {
  for (Operation *op = conv->getPrevNode(); op; op = op->getPrevNode()) {
    if (isZeroFill(op, output))
      return op;
    if (!isMemoryEffectFree(op))
      return nullptr;
  }
  return nullptr;
}

class LoomCPULibraryConvolutionsPass
    : public impl::LoomCPULibraryConvolutionsPassBase<
          LoomCPULibraryConvolutionsPass> {
public:
  using LoomCPULibraryConvolutionsPassBase::LoomCPULibraryConvolutionsPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<linalg::Conv2DNchwFchwOp> convs;
    module.walk([&](linalg::Conv2DNchwFchwOp conv) {
      if (conv->hasAttr(kLibraryAttr) && conv.hasPureBufferSemantics())
        convs.push_back(conv);
    });
    for (linalg::Conv2DNchwFchwOp conv : convs)
      rewrite(module, conv);
  }

private:
  unsigned callSites = 0;

  void rewrite(ModuleOp module, linalg::Conv2DNchwFchwOp conv) {
    Value input = conv.getInputs()[0], filter = conv.getInputs()[1];
    Value output = conv.getOutputs()[0];
    if (!isDenseRowMajor(filter) || !isDenseRowMajor(output)) {
      conv.emitWarning("library convolution: the filter or output is not a "
                       "dense row-major buffer; generating loops instead");
      conv->removeAttr(kLibraryAttr);
      return;
    }
    std::optional<ZeroPadding> padding = matchZeroPadding(input, conv);
    if (!padding && !isDenseRowMajor(input)) {
      conv.emitWarning("library convolution: the input is not a dense "
                       "row-major buffer; generating loops instead");
      conv->removeAttr(kLibraryAttr);
      return;
    }
    Value source = padding ? padding->source : input;
    auto sourceType = cast<MemRefType>(source.getType());
    auto filterType = cast<MemRefType>(filter.getType());
    auto outputType = cast<MemRefType>(output.getType());
    auto strides = llvm::to_vector(conv.getStrides().getValues<int64_t>());
    auto dilations = llvm::to_vector(conv.getDilations().getValues<int64_t>());

    Operation *zeroFill = zeroFillBefore(conv, output);
    int64_t flags = zeroFill ? 0 : LOOM_CONV_ACCUMULATE;
    if (isConstantFilter(filter))
      flags |= LOOM_CONV_CONSTANT_FILTER;

    SmallVector<int64_t> desc(LOOM_CONV_DESC_SIZE, 0);
    desc[LOOM_CONV_VERSION] = LOOM_CONV_DESC_VERSION;
    desc[LOOM_CONV_N] = sourceType.getDimSize(0);
    desc[LOOM_CONV_C] = sourceType.getDimSize(1);
    desc[LOOM_CONV_H] = sourceType.getDimSize(2);
    desc[LOOM_CONV_W] = sourceType.getDimSize(3);
    desc[LOOM_CONV_F] = filterType.getDimSize(0);
    desc[LOOM_CONV_KH] = filterType.getDimSize(2);
    desc[LOOM_CONV_KW] = filterType.getDimSize(3);
    desc[LOOM_CONV_OH] = outputType.getDimSize(2);
    desc[LOOM_CONV_OW] = outputType.getDimSize(3);
    desc[LOOM_CONV_STRIDE_H] = strides[0];
    desc[LOOM_CONV_STRIDE_W] = strides[1];
    desc[LOOM_CONV_DILATION_H] = dilations[0];
    desc[LOOM_CONV_DILATION_W] = dilations[1];
    if (padding) {
      desc[LOOM_CONV_PAD_TOP] = padding->top;
      desc[LOOM_CONV_PAD_LEFT] = padding->left;
      desc[LOOM_CONV_PAD_BOTTOM] = padding->bottom;
      desc[LOOM_CONV_PAD_RIGHT] = padding->right;
    }
    desc[LOOM_CONV_GROUPS] = 1;
    desc[LOOM_CONV_FLAGS] = flags;

    // The call site's descriptor (constant) and slot (written by the
    // library on the first call).
    unsigned site = callSites++;
    OpBuilder moduleBuilder(module.getBodyRegion());
    moduleBuilder.setInsertionPointToStart(module.getBody());
    Location loc = conv.getLoc();
    auto i64 = moduleBuilder.getI64Type();
    auto descType = MemRefType::get({LOOM_CONV_DESC_SIZE}, i64);
    auto slotType = MemRefType::get({1}, i64);
    std::string descName = "__loom_conv_desc_" + std::to_string(site);
    std::string slotName = "__loom_conv_slot_" + std::to_string(site);
    memref::GlobalOp::create(
        moduleBuilder, loc, descName, moduleBuilder.getStringAttr("private"),
        descType,
        DenseElementsAttr::get(
            RankedTensorType::get({LOOM_CONV_DESC_SIZE}, i64),
            ArrayRef<int64_t>(desc)),
        /*constant=*/true, /*alignment=*/nullptr);
    memref::GlobalOp::create(
        moduleBuilder, loc, slotName, moduleBuilder.getStringAttr("private"),
        slotType,
        DenseElementsAttr::get(RankedTensorType::get({1}, i64),
                               ArrayRef<int64_t>{0}),
        /*constant=*/false, moduleBuilder.getI64IntegerAttr(8));

    OpBuilder b(conv);
    auto addressOf = [&](Value buffer) -> Value {
      Value index = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
      return arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
    };
    Value descBuffer = memref::GetGlobalOp::create(b, loc, descType, descName);
    Value slotBuffer = memref::GetGlobalOp::create(b, loc, slotType, slotName);
    func::FuncOp callee =
        declareRuntimeFunction(module, kConvEntry, /*numArguments=*/5);
    func::CallOp::create(b, loc, callee,
                         ValueRange{addressOf(source), addressOf(filter),
                                    addressOf(output), addressOf(descBuffer),
                                    addressOf(slotBuffer)});
    conv.erase();
    if (zeroFill)
      zeroFill->erase();
    if (padding)
      for (Operation *op : padding->ops)
        op->erase();
  }
};

} // namespace
} // namespace loom::cpu
