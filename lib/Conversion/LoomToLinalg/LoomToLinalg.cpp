//===- LoomToLinalg.cpp - The convert-loom-to-linalg pass -----------------===//

#include "loom/Conversion/LoomToLinalg/LoomToLinalg.h"

#include "loom/Conversion/Passes.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "Utils.h"

#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"

namespace loom {
#define GEN_PASS_DEF_CONVERTLOOMTOLINALGPASS
#include "loom/Conversion/Passes.h.inc"
} // namespace loom

using namespace mlir;

namespace loom {
namespace {

/// A kernel group lowers as its body: the ops move in front of the fusion
/// op, which the yielded values replace; the moved ops lower on their own.
class FusionLowering : public OpConversionPattern<FusionOp> {
public:
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(FusionOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Block &body = op.getBody().front();
    auto yield = cast<YieldOp>(body.getTerminator());
    SmallVector<Value> results(yield.getValues());
    rewriter.inlineBlockBefore(&body, op, adaptor.getInputs());
    rewriter.replaceOp(op, results);
    rewriter.eraseOp(yield);
    return success();
  }
};

/// loom.if becomes scf.if on the condition's one element. Each branch's
/// block moves into the scf.if, its arguments replaced by the op's inputs
/// (scf.if's regions read the enclosing values directly); its ops lower on
/// their own, and its loom.yield becomes scf.yield (BranchYieldLowering),
/// once the values it yields have their lowered types.
class IfLowering : public OpConversionPattern<IfOp> {
public:
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(IfOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    SmallVector<Type> resultTypes;
    if (failed(
            getTypeConverter()->convertTypes(op.getResultTypes(), resultTypes)))
      return rewriter.notifyMatchFailure(op, "result type not converted");
    Location loc = op.getLoc();
    Value flag = lowering::scalarOf(rewriter, loc, adaptor.getCondition());
    auto lowered = scf::IfOp::create(rewriter, loc, resultTypes, flag,
                                     /*addThenBlock=*/false,
                                     /*addElseBlock=*/false);
    for (auto [from, to] : {std::pair<Region *, Region *>{
                                &op.getThenRegion(), &lowered.getThenRegion()},
                            {&op.getElseRegion(), &lowered.getElseRegion()}}) {
      Block *block = rewriter.createBlock(to);
      rewriter.inlineBlockBefore(&from->front(), block, block->end(),
                                 adaptor.getInputs());
    }
    rewriter.replaceOp(op, lowered.getResults());
    return success();
  }
};

/// The loom.yield of a branch that IfLowering moved into an scf.if.
class BranchYieldLowering : public OpConversionPattern<YieldOp> {
public:
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(YieldOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isa<scf::IfOp>(op->getParentOp()))
      return rewriter.notifyMatchFailure(op, "not in a lowered branch");
    rewriter.replaceOpWithNewOp<scf::YieldOp>(op, adaptor.getValues());
    return success();
  }
};

/// A tensor.cast between tensors whose element type lowers to another
/// (the importer's casts of unsigned tensors, a loop's growing scan
/// output): the same cast on the lowered types.
class TensorCastTypeConversion : public OpConversionPattern<tensor::CastOp> {
public:
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tensor::CastOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type type = getTypeConverter()->convertType(op.getType());
    if (!type)
      return rewriter.notifyMatchFailure(op, "result type not converted");
    rewriter.replaceOpWithNewOp<tensor::CastOp>(op, type, adaptor.getSource());
    return success();
  }
};

bool isSupportedElement(Type type) {
  return isa<FloatType>(type) || type.isSignlessInteger() ||
         type.isUnsignedInteger();
}

/// Narrow float tensors (the 8- and 4-bit floats) lower to their bits: the
/// quantization ops and casts encode and decode them, and data movement
/// copies them; ops that would compute on them as floats are not lowered.
bool acceptsNarrowFloats(Operation *op) {
  return isa<QuantizeOp, DequantizeOp, QMatMulOp, QConvOp, CastOp, BitcastOp,
             ConstantOp, ReshapeOp, SqueezeOp, UnsqueezeOp, TransposeOp,
             ExpandOp, ConcatOp, SplitOp, SliceOp, TileOp, GatherOp, FusionOp,
             YieldOp, IfOp>(op);
}

/// Whether `op`'s result sizes come from the values of its operands.
bool producesRunTimeSizes(Operation *op) {
  return isa<RangeOp, NonZeroOp, ConstantOfShapeOp, NonMaxSuppressionOp>(op);
}

/// Whether `op`'s lowering handles sizes known only at run time: the ops
/// whose result sizes come from data, and the elementwise ops, gather
/// (run-time indices), squeeze/unsqueeze and kernel groups that carry such
/// results on.
bool lowersRunTimeSizes(Operation *op) {
  if (op->hasTrait<OpTrait::Elementwise>() || producesRunTimeSizes(op))
    return true;
  return isa<
      AddOp, SubOp, MulOp, DivOp, PowOp, ModOp, MaxOp, MinOp, AndOp, OrOp,
      XorOp, BitShiftOp, EqualOp, GreaterOp, GreaterEqualOp, LessOp,
      LessEqualOp, WhereOp, SqueezeOp, UnsqueezeOp, FusionOp, YieldOp, IfOp,
      // Shapes and data movement.
      ShapeOp, SizeOp, ReshapeOp, TransposeOp, ExpandOp, TileOp, ConcatOp,
      CacheAppendOp, SplitOp, SliceOp, GatherOp, GatherElementsOp, GatherNDOp,
      SwigluOp, CumSumOp, CumProdOp, TopKOp, AttentionOp, ArgMaxOp, ArgMinOp,
      OneHotOp, RotaryEmbeddingOp, BatchNormOp, ScatterElementsOp, ScatterNDOp,
      // Windows (the batch only).
      ConvOp, MaxPoolOp, AvgPoolOp, ReduceMeanOp, ReduceSumOp, ReduceMaxOp,
      ReduceMinOp, ReduceProdOp,
      // Contractions, reductions and normalizations.
      MatMulOp, SoftmaxOp, LogSoftmaxOp, LayerNormOp, RMSNormOp>(op);
}

/// Whether the run-time sizes of `op` are where its lowering takes them:
/// gather's only in its indices.
bool acceptsRunTimeSizesOf(Operation *op, Type type, bool isOperand,
                           unsigned position) {

  // The ops whose results depend on data read small static operands;
  // non_zero and non_max_suppression take any input.
  if (producesRunTimeSizes(op))
    return !isOperand || isa<NonZeroOp, NonMaxSuppressionOp>(op);
  return lowersRunTimeSizes(op);
}

/// Where `value` got a size known only at run time: the op that made it
/// ("loom.range"), followed through the ops that carry sizes on.
std::string runTimeSizeOrigin(Value value) {
  for (int depth = 0; depth < 64; ++depth) {
    Operation *def = value.getDefiningOp();
    if (!def)
      return "an input of the function";
    if (producesRunTimeSizes(def))
      return def->getName().getStringRef().str();
    Value next;
    for (Value operand : def->getOperands()) {
      auto type = dyn_cast<RankedTensorType>(operand.getType());
      if (type && !type.hasStaticShape()) {
        next = operand;
        break;
      }
    }
    if (!next)
      return def->getName().getStringRef().str();
    value = next;
  }
  return "an earlier op";
}

class ConvertLoomToLinalgPass
    : public impl::ConvertLoomToLinalgPassBase<ConvertLoomToLinalgPass> {
public:
  using ConvertLoomToLinalgPassBase::ConvertLoomToLinalgPassBase;

  void runOnOperation() override {
    // Loops first: their bodies' loom ops then lower like any others.
    if (failed(lowerLoopsToWhile(getOperation())))
      return signalPassFailure();
    // Say which op stops the lowering and why, rather than leaving only the
    // driver's generic "failed to legalize".
    WalkResult unsupported = getOperation().walk([](Operation *op) {
      if (!isa<LoomDialect>(op->getDialect()))
        return WalkResult::advance();
      // top-k sorts rows of run-time length, but its k sets its results'
      // sizes at compile time.
      if (auto topk = dyn_cast<TopKOp>(op)) {
        auto values = cast<RankedTensorType>(topk.getValues().getType());
        int64_t axis = lowering::axisIndex(topk.getAxis(), values.getRank());
        if (values.isDynamicDim(axis) &&
            !cast<RankedTensorType>(topk.getInput().getType())
                 .isDynamicDim(axis)) {
          op->emitOpError("takes k known only at run time (")
              << values << "), which the CPU target does not support yet: "
              << "k must be a constant";
          return WalkResult::interrupt();
        }
      }
      for (auto [position, value] : llvm::enumerate(
               llvm::concat<Value>(op->getOperands(), op->getResults()))) {
        Type type = value.getType();
        auto tensor = dyn_cast<RankedTensorType>(type);
        bool isOperand = position < op->getNumOperands();
        if (tensor && !tensor.hasStaticShape() &&
            !acceptsRunTimeSizesOf(op, type, isOperand, position)) {
          op->emitOpError("has a size known only at run time (")
              << type << ", from " << runTimeSizeOrigin(value)
              << "); the CPU target supports run-time sizes in elementwise, "
                 "shape and data-movement ops (reshape, transpose, expand, "
                 "tile, "
                 "concat, split, slice, gather), matrix products, attention, "
                 "normalizations, softmax, reductions, cumsum, top-k, and "
                 "convolutions and pooling in the batch only (bind the "
                 "others with --input-shape)";
          return WalkResult::interrupt();
        }
        if (tensor && !isSupportedElement(tensor.getElementType())) {
          op->emitOpError("has elements of type ")
              << tensor.getElementType()
              << ", which the lowering to linalg does not support yet";
          return WalkResult::interrupt();
        }
        if (tensor && lowering::isNarrowFloat(tensor.getElementType()) &&
            !acceptsNarrowFloats(op)) {
          op->emitOpError("has elements of type ")
              << tensor.getElementType()
              << ", which the lowering to linalg supports only in "
                 "quantization ops, casts and data movement";
          return WalkResult::interrupt();
        }
      }
      return WalkResult::advance();
    });
    if (unsupported.wasInterrupted())
      return signalPassFailure();

    LoomToLinalgTypeConverter converter;
    ConversionTarget target(getContext());
    configureLoomToLinalgTarget(target, converter);
    RewritePatternSet patterns(&getContext());
    populateLoomToLinalgPatterns(converter, patterns, byteProducts);
    // Loops carrying unsigned tensors take their lowered types.
    scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                         target);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      return signalPassFailure();
    checkRefiningCasts();
  }

private:
  /// "output 'NAME'" (or "output N") when `cast` is what the function
  /// returns; empty otherwise.
  static std::string outputName(tensor::CastOp cast) {
    for (OpOperand &use : cast->getUses()) {
      auto ret = dyn_cast<func::ReturnOp>(use.getOwner());
      if (!ret)
        continue;
      auto func = ret->getParentOfType<func::FuncOp>();
      unsigned index = use.getOperandNumber();
      if (auto name = func.getResultAttrOfType<StringAttr>(index, "onnx.name"))
        return "output '" + name.getValue().str() + "'";
      return "output " + std::to_string(index);
    }
    return "";
  }

  /// A tensor.cast from a size known only at run time to a static one
  /// (the importer's, where the model states an output's shape) compares
  /// the sizes at run time.
  void checkRefiningCasts() {
    SmallVector<tensor::CastOp> casts;
    getOperation().walk([&](tensor::CastOp cast) {
      auto from = dyn_cast<RankedTensorType>(cast.getSource().getType());
      auto to = dyn_cast<RankedTensorType>(cast.getType());
      if (!from || !to || from.getRank() != to.getRank())
        return;
      for (int64_t d = 0; d < to.getRank(); ++d)
        if (from.isDynamicDim(d) && !to.isDynamicDim(d)) {
          casts.push_back(cast);
          return;
        }
    });
    for (tensor::CastOp refining : casts) {
      OpBuilder b(refining);
      Value checked = lowering::checkedCast(
          b, refining.getLoc(), refining, refining.getSource(),
          cast<RankedTensorType>(refining.getType()), outputName(refining));
      refining.replaceAllUsesWith(checked);
      refining.erase();
    }
  }
};

} // namespace

LoomToLinalgTypeConverter::LoomToLinalgTypeConverter() {
  addConversion([](Type type) { return type; });
  addConversion([](RankedTensorType type) -> Type {
    Type element = type.getElementType();
    if (!isSupportedElement(element))
      return nullptr;
    // LLVM has no 8- or 4-bit floats: their values travel as their bits, a
    // byte each. 2- and 4-bit integers travel as bytes too (sign-extended
    // for the signed ones): in memory LLVM gives a scalar i4 a byte but
    // packs vectors of them, so code that mixed the two would disagree.
    unsigned width = element.getIntOrFloatBitWidth();
    if (lowering::isNarrowFloat(element) ||
        (element.isInteger() && width > 1 && width < 8))
      return type.clone(IntegerType::get(type.getContext(), 8));
    // arith works on signless integers; ops whose meaning depends on the
    // sign read it from the original type.
    if (element.isUnsignedInteger())
      return type.clone(IntegerType::get(type.getContext(), width));
    return type;
  });
}

void configureLoomToLinalgTarget(ConversionTarget &target,
                                 const TypeConverter &converter) {
  target.addIllegalDialect<LoomDialect>();
  target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                         math::MathDialect, scf::SCFDialect,
                         tensor::TensorDialect>();
  // Run-time checks: their site descriptions (memref.global), and the call
  // of the runtime that reports a failed one.
  target.addLegalDialect<memref::MemRefDialect>();
  target.addLegalOp<func::CallOp>();
  // Signatures with unsigned tensors become signless.
  target.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp func) {
    return converter.isSignatureLegal(func.getFunctionType());
  });
  target.addDynamicallyLegalOp<func::ReturnOp>(
      [&](func::ReturnOp op) { return converter.isLegal(op); });
  target.addDynamicallyLegalOp<tensor::CastOp>(
      [&](tensor::CastOp op) { return converter.isLegal(op.getOperation()); });
}

void populateLoomToLinalgPatterns(const TypeConverter &converter,
                                  RewritePatternSet &patterns,
                                  bool byteProducts) {
  populateLoomElementwiseToLinalgPatterns(converter, patterns);
  populateLoomDataMovementToLinalgPatterns(converter, patterns);
  populateLoomReshapeToLinalgPatterns(converter, patterns);
  populateLoomIndexingToLinalgPatterns(converter, patterns);
  populateLoomNNToLinalgPatterns(converter, patterns);
  populateLoomPoolingToLinalgPatterns(converter, patterns);
  populateLoomNormalizationToLinalgPatterns(converter, patterns);
  populateLoomReductionsToLinalgPatterns(converter, patterns);
  populateLoomAttentionToLinalgPatterns(converter, patterns);
  populateLoomResizeToLinalgPatterns(converter, patterns);
  populateLoomGridSampleToLinalgPatterns(converter, patterns);
  populateLoomRoiAlignToLinalgPatterns(converter, patterns);
  populateLoomQuantToLinalgPatterns(converter, patterns, byteProducts);
  populateLoomRunTimeSizesToLinalgPatterns(converter, patterns);
  populateLoomNonMaxSuppressionToLinalgPatterns(converter, patterns);
  patterns.add<FusionLowering, IfLowering, BranchYieldLowering,
               TensorCastTypeConversion>(converter, patterns.getContext());
  populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns,
                                                                 converter);
  populateReturnOpTypeConversionPattern(patterns, converter);
}

} // namespace loom
