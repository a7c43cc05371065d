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

#include "TargetUtils.h"

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

/// A 2-D NCHW convolution the library can compute: an ungrouped
/// linalg.conv_2d_nchw_fchw, or the generic convert-loom-to-linalg builds
/// for a grouped one (depthwise included), on tensors or on buffers.
struct Convolution {
  linalg::LinalgOp op;
  Value input, filter, output;
  int64_t strides[2] = {1, 1}, dilations[2] = {1, 1};
  int64_t groups = 1;

  /// 2 x the multiply-adds.
  int64_t flops() const {
    auto f = cast<ShapedType>(filter.getType());
    auto o = cast<ShapedType>(output.getType());
    return 2 * o.getNumElements() * (f.getNumElements() / f.getDimSize(0));
  }
};

/// The grouped convolution generic: loops (n, m, oh, ow, c, kh, kw), the
/// input read at (n, (m floordiv M/G) * C/G + c, oh * s + kh * d, ...),
/// the filter at (m, c, kh, kw), the output written at (n, m, oh, ow).
std::optional<Convolution> matchGroupedConvolution(linalg::GenericOp generic) {
  if (generic.getNumDpsInputs() != 2 || generic.getNumDpsInits() != 1 ||
      generic.getNumLoops() != 7 || !isMultiplyAccumulate(generic))
    return std::nullopt;
  using utils::IteratorType;
  SmallVector<IteratorType> iterators = generic.getIteratorTypesArray();
  for (unsigned i = 0; i < 7; ++i)
    if (iterators[i] !=
        (i < 4 ? IteratorType::parallel : IteratorType::reduction))
      return std::nullopt;
  Convolution conv;
  conv.op = generic;
  conv.input = generic.getDpsInputOperand(0)->get();
  conv.filter = generic.getDpsInputOperand(1)->get();
  conv.output = generic.getDpsInitOperand(0)->get();
  auto inputType = dyn_cast<ShapedType>(conv.input.getType());
  auto filterType = dyn_cast<ShapedType>(conv.filter.getType());
  auto outputType = dyn_cast<ShapedType>(conv.output.getType());
  if (!inputType || !filterType || !outputType || inputType.getRank() != 4 ||
      filterType.getRank() != 4 || outputType.getRank() != 4 ||
      !inputType.hasStaticShape() || !filterType.hasStaticShape())
    return std::nullopt;
  int64_t channelsPerGroup = filterType.getDimSize(1);
  if (inputType.getDimSize(1) % channelsPerGroup)
    return std::nullopt;
  conv.groups = inputType.getDimSize(1) / channelsPerGroup;
  int64_t filters = filterType.getDimSize(0);
  if (filters % conv.groups || outputType.getDimSize(1) != filters)
    return std::nullopt;

  MLIRContext *ctx = generic.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  if (maps[1] != AffineMap::get(7, 0, {d(1), d(4), d(5), d(6)}, ctx) ||
      maps[2] != AffineMap::get(7, 0, {d(0), d(1), d(2), d(3)}, ctx))
    return std::nullopt;
  AffineMap in = maps[0];
  AffineExpr channel = d(4);
  if (conv.groups > 1)
    channel = d(1).floorDiv(filters / conv.groups) * channelsPerGroup + d(4);
  if (in.getNumResults() != 4 || in.getResult(0) != d(0) ||
      simplifyAffineExpr(in.getResult(1), 7, 0) !=
          simplifyAffineExpr(channel, 7, 0))
    return std::nullopt;
  for (unsigned i = 0; i < 2; ++i) {
    auto terms = convolutionWindowTerms(in.getResult(2 + i), 2 + i, 5 + i, 7);
    if (failed(terms))
      return std::nullopt;
    conv.strides[i] = terms->first;
    conv.dilations[i] = terms->second;
  }
  return conv;
}

/// How many times larger than other ungrouped convolutions a 1x1 one must
/// be to go to the library: 2^25 operations at the default threshold of
/// 2^20. Generated, a 1x1 convolution is a plain matrix product (no window
/// copy), and it won or tied up to 26 MFLOP at one and two threads; the
/// library wins from some 100 MFLOP (1024 x 14 x 14 to 256 channels).
/// docs/codegen.md, "Library convolutions", has the figures.
constexpr int64_t kPointwiseThresholdFactor = 32;

/// Whether the library is expected to beat the generated code on `conv`,
/// an ungrouped convolution, with `minFlops` the threshold of windowed
/// ones (--library-conv-flops; 1x1 windows scale with it, so that 0 sends
/// every convolution to the library).
bool libraryWinsUngrouped(const Convolution &conv, int64_t minFlops) {
  int64_t flops = conv.flops();
  auto filter = cast<ShapedType>(conv.filter.getType());
  if (filter.getDimSize(2) == 1 && filter.getDimSize(3) == 1)
    return flops >= saturatingMultiply(minFlops, kPointwiseThresholdFactor);
  return flops >= minFlops;
}

std::optional<Convolution> matchConvolution(Operation *op) {
  if (auto named = dyn_cast<linalg::Conv2DNchwFchwOp>(op)) {
    Convolution conv;
    conv.op = named;
    conv.input = named.getInputs()[0];
    conv.filter = named.getInputs()[1];
    conv.output = named.getOutputs()[0];
    auto strides = named.getStrides().getValues<int64_t>();
    auto dilations = named.getDilations().getValues<int64_t>();
    for (unsigned i = 0; i < 2; ++i) {
      conv.strides[i] = strides[i];
      conv.dilations[i] = dilations[i];
    }
    return conv;
  }
  if (auto generic = dyn_cast<linalg::GenericOp>(op))
    return matchGroupedConvolution(generic);
  return std::nullopt;
}

class LoomCPUSelectLibraryConvolutionsPass
    : public impl::LoomCPUSelectLibraryConvolutionsPassBase<
          LoomCPUSelectLibraryConvolutionsPass> {
public:
  using LoomCPUSelectLibraryConvolutionsPassBase::
      LoomCPUSelectLibraryConvolutionsPassBase;

  void runOnOperation() override {
    getOperation().walk([&](linalg::LinalgOp op) {
      if (!op.hasPureTensorSemantics())
        return;
      std::optional<Convolution> conv = matchConvolution(op);
      if (!conv)
        return;
      auto input = cast<ShapedType>(conv->input.getType());
      auto filter = cast<ShapedType>(conv->filter.getType());
      auto output = cast<ShapedType>(conv->output.getType());
      if (!input.hasStaticShape() || !filter.hasStaticShape() ||
          !output.hasStaticShape() || !input.getElementType().isF32() ||
          !filter.getElementType().isF32() || !output.getElementType().isF32())
        return;
      // Depthwise convolutions (one input channel per group) are vector
      // row pieces when generated (loom-cpu-vectorize-depthwise), 2-6x
      // faster than the library's reorders around its blocked kernel.
      if (conv->groups > 1 && filter.getDimSize(1) == 1)
        return;
      // Other grouped convolutions are windowed loops when generated: the
      // library wins at every size measured (docs/codegen.md). Ungrouped
      // ones from `minFlops` on, 1x1 windows from more.
      if (conv->groups == 1 && !libraryWinsUngrouped(*conv, minFlops))
        return;
      op->setAttr(kLibraryAttr, StringAttr::get(&getContext(), "onednn"));
    });
  }
};

/// Whether `buffer` is dense and row-major (what the library reads through
/// one address, firstElementAddress). Its offset may be a run-time one: one
/// batch element of a larger buffer (loom-cpu-batch-loops).
bool isDenseRowMajor(Value buffer) {
  auto type = dyn_cast<MemRefType>(buffer.getType());
  if (!type || !type.hasStaticShape())
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return false;
  int64_t expected = 1;
  for (int64_t d = type.getRank() - 1; d >= 0; --d) {
    if (type.getDimSize(d) != 1 && strides[d] != expected)
      return false;
    expected *= type.getDimSize(d);
  }
  return true;
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
  return matchPattern(value, m_AnyZeroFloat()) || matchPattern(value, m_Zero());
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
  auto yield =
      dyn_cast<linalg::YieldOp>(linalgOp->getRegion(0).front().getTerminator());
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
      fill->getBlock() != conv->getBlock() || !fill->isBeforeInBlock(conv))
    return std::nullopt;
  auto copy = dyn_cast<linalg::CopyOp>(*window->getUsers().begin());
  if (!copy || copy.getOutputs()[0] != window.getResult() ||
      copy->getBlock() != conv->getBlock() || !copy->isBeforeInBlock(conv) ||
      !fill->isBeforeInBlock(copy))
    return std::nullopt;
  auto outer = cast<MemRefType>(buffer.getType());
  auto offsets = getConstantIntValues(window.getMixedOffsets());
  auto sizes = getConstantIntValues(window.getMixedSizes());
  if (!offsets || !sizes || !window.hasUnitStride() || (*offsets)[0] != 0 ||
      (*offsets)[1] != 0 || (*sizes)[0] != outer.getDimSize(0) ||
      (*sizes)[1] != outer.getDimSize(1))
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

/// The elementwise op right after a convolution that only adds a bias per
/// output channel and perhaps applies ReLU, writing a new buffer: what
/// oneDNN can do on the way out (its bias and an eltwise post-op).
struct Epilogue {
  linalg::GenericOp op;
  Value bias, result;
  bool relu = false;
};

/// Whether `value` is `x > 0 ? x : 0` (or max(x, 0)) of `x`.
bool isReluOf(Value value, Value x) {
  if (auto max = value.getDefiningOp<arith::MaximumFOp>())
    return (max.getLhs() == x && isZero(max.getRhs())) ||
           (max.getRhs() == x && isZero(max.getLhs()));
  auto select = value.getDefiningOp<arith::SelectOp>();
  if (!select || select.getTrueValue() != x || !isZero(select.getFalseValue()))
    return false;
  auto compare = select.getCondition().getDefiningOp<arith::CmpFOp>();
  return compare && compare.getLhs() == x && isZero(compare.getRhs()) &&
         (compare.getPredicate() == arith::CmpFPredicate::OGT ||
          compare.getPredicate() == arith::CmpFPredicate::UGT);
}

std::optional<Epilogue> matchEpilogue(Operation *conv, Operation *zeroFill,
                                      Value output) {
  Operation *next = conv->getNextNode();
  while (next && isMemoryEffectFree(next) && !isa<linalg::LinalgOp>(next))
    next = next->getNextNode();
  auto generic = dyn_cast_or_null<linalg::GenericOp>(next);
  if (!generic || generic.getNumDpsInputs() != 2 ||
      generic.getNumDpsInits() != 1 || generic.getNumLoops() != 4 ||
      generic.getNumReductionLoops() != 0)
    return std::nullopt;
  // The convolution's output must be read here and nowhere else.
  for (Operation *user : output.getUsers())
    if (user != conv && user != zeroFill && user != generic.getOperation())
      return std::nullopt;
  auto outputType = cast<MemRefType>(output.getType());
  int64_t channels = outputType.getDimSize(1);
  MLIRContext *ctx = generic.getContext();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(4, ctx);
  Epilogue epilogue;
  epilogue.op = generic;
  epilogue.result = generic.getDpsInitOperand(0)->get();
  // Written like the output (the same sizes, dense rows), though perhaps
  // at another offset: one image of a larger buffer (loom-cpu-batch-loops).
  auto resultType = dyn_cast<MemRefType>(epilogue.result.getType());
  if (!resultType || resultType.getShape() != outputType.getShape() ||
      resultType.getElementType() != outputType.getElementType() ||
      !isDenseRowMajor(epilogue.result) ||
      generic.getMatchingIndexingMap(generic.getDpsInitOperand(0)) != identity)
    return std::nullopt;
  Block &body = generic.getRegion().front();
  Value convArgument, biasArgument;
  for (OpOperand *input : generic.getDpsInputOperands()) {
    AffineMap map = generic.getMatchingIndexingMap(input);
    BlockArgument argument = body.getArgument(input->getOperandNumber());
    if (input->get() == output && map == identity) {
      convArgument = argument;
      continue;
    }
    // The bias: one value per channel, read by the channel loop alone.
    auto type = dyn_cast<MemRefType>(input->get().getType());
    unsigned dims = 0;
    bool perChannel =
        type && type.hasStaticShape() && type.getNumElements() == channels &&
        isDenseRowMajor(input->get()) && type.getElementType().isF32();
    for (AffineExpr e : map.getResults()) {
      if (auto dim = dyn_cast<AffineDimExpr>(e))
        perChannel &= dim.getPosition() == 1 && ++dims == 1;
      else
        perChannel &= isa<AffineConstantExpr>(e) &&
                      cast<AffineConstantExpr>(e).getValue() == 0;
    }
    if (!perChannel || dims != 1)
      return std::nullopt;
    epilogue.bias = input->get();
    biasArgument = argument;
  }
  if (!convArgument || !biasArgument)
    return std::nullopt;
  Value yielded = body.getTerminator()->getOperand(0);
  auto isBiasAdd = [&](Value v) {
    auto add = v.getDefiningOp<arith::AddFOp>();
    return add &&
           ((add.getLhs() == convArgument && add.getRhs() == biasArgument) ||
            (add.getLhs() == biasArgument && add.getRhs() == convArgument));
  };
  if (isBiasAdd(yielded))
    return epilogue;
  for (Operation &op : body.without_terminator())
    if (op.getNumResults() == 1 && isBiasAdd(op.getResult(0)) &&
        isReluOf(yielded, op.getResult(0))) {
      epilogue.relu = true;
      return epilogue;
    }
  return std::nullopt;
}

class LoomCPULibraryConvolutionsPass
    : public impl::LoomCPULibraryConvolutionsPassBase<
          LoomCPULibraryConvolutionsPass> {
public:
  using LoomCPULibraryConvolutionsPassBase::LoomCPULibraryConvolutionsPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Convolution> convs;
    module.walk([&](linalg::LinalgOp op) {
      if (!op->hasAttr(kLibraryAttr) || !op.hasPureBufferSemantics())
        return;
      if (std::optional<Convolution> conv = matchConvolution(op))
        convs.push_back(*conv);
      else
        op->emitWarning("marked for a kernel library but no longer a "
                        "convolution it computes; generating loops");
    });
    for (const Convolution &conv : convs)
      rewrite(module, conv);
    if (report && callSites > 0)
      llvm::errs() << "loom-cpu-library-convolutions: " << callSites
                   << " convolutions to oneDNN (" << fusedEpilogues
                   << " with their bias/ReLU epilogue)\n";
  }

private:
  unsigned callSites = 0, fusedEpilogues = 0;

  void rewrite(ModuleOp module, const Convolution &convolution) {
    Operation *conv = convolution.op;
    Value input = convolution.input, filter = convolution.filter;
    Value output = convolution.output;
    if (!isDenseRowMajor(filter) || !isDenseRowMajor(output)) {
      conv->emitWarning("library convolution: the filter or output is not a "
                        "dense row-major buffer; generating loops instead");
      conv->removeAttr(kLibraryAttr);
      return;
    }
    std::optional<ZeroPadding> padding = matchZeroPadding(input, conv);
    if (!padding && !isDenseRowMajor(input)) {
      conv->emitWarning("library convolution: the input is not a dense "
                        "row-major buffer; generating loops instead");
      conv->removeAttr(kLibraryAttr);
      return;
    }
    Value source = padding ? padding->source : input;
    auto sourceType = cast<MemRefType>(source.getType());
    auto filterType = cast<MemRefType>(filter.getType());
    auto outputType = cast<MemRefType>(output.getType());
    const int64_t *strides = convolution.strides;
    const int64_t *dilations = convolution.dilations;

    Operation *zeroFill = zeroFillBefore(conv, output);
    int64_t flags = zeroFill ? 0 : LOOM_CONV_ACCUMULATE;
    if (isConstantFilter(filter))
      flags |= LOOM_CONV_CONSTANT_FILTER;
    // A bias (and ReLU) after a convolution that overwrites its output is
    // applied by the library as it writes the epilogue's buffer, provided
    // that buffer is not memory the convolution still reads.
    std::optional<Epilogue> epilogue;
    if (zeroFill)
      epilogue = matchEpilogue(conv, zeroFill, output);
    if (epilogue && (mayOverlap(epilogue->result, source) ||
                     mayOverlap(epilogue->result, filter) ||
                     mayOverlap(epilogue->result, epilogue->bias)))
      epilogue.reset();
    Value destination = output;
    if (epilogue) {
      flags |= LOOM_CONV_BIAS;
      if (epilogue->relu)
        flags |= LOOM_CONV_RELU;
      destination = epilogue->result;
    }

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
    desc[LOOM_CONV_GROUPS] = convolution.groups;
    desc[LOOM_CONV_FLAGS] = flags;

    // The call site's descriptor (constant) and slot (written by the
    // library on the first call).
    unsigned site = callSites++;
    OpBuilder moduleBuilder(module.getBodyRegion());
    moduleBuilder.setInsertionPointToStart(module.getBody());
    Location loc = conv->getLoc();
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

    // With an epilogue, the call takes its place: its buffer may be
    // defined between the two (only ops without memory effects are).
    OpBuilder b(epilogue ? epilogue->op.getOperation() : conv);
    Value descBuffer = memref::GetGlobalOp::create(b, loc, descType, descName);
    Value slotBuffer = memref::GetGlobalOp::create(b, loc, slotType, slotName);
    func::FuncOp callee = declareRuntimeFunction(
        module, kConvEntry, SmallVector<Type>(6, moduleBuilder.getI64Type()));
    Value bias = epilogue
                     ? firstElementAddress(b, loc, epilogue->bias)
                     : arith::ConstantIntOp::create(b, loc, 0, 64).getResult();
    func::CallOp::create(b, loc, callee,
                         ValueRange{firstElementAddress(b, loc, source),
                                    firstElementAddress(b, loc, filter), bias,
                                    firstElementAddress(b, loc, destination),
                                    addressOf(b, loc, descBuffer),
                                    addressOf(b, loc, slotBuffer)});
    conv->erase();
    if (epilogue) {
      epilogue->op.erase();
      ++fusedEpilogues;
    }
    if (zeroFill)
      zeroFill->erase();
    if (padding)
      for (Operation *op : padding->ops)
        op->erase();
  }
};

} // namespace
} // namespace loom::cpu
