//===- LoomToLinalg.cpp - The convert-loom-to-linalg pass -----------------===//

#include "loom/Conversion/LoomToLinalg/LoomToLinalg.h"

#include "loom/Conversion/Passes.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

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

bool isSupportedElement(Type type) {
  return isa<FloatType>(type) || type.isSignlessInteger() ||
         type.isUnsignedInteger();
}

/// f8E4M3FN tensors lower to their bits (i8): the quantization ops encode
/// and decode them, and data movement copies them; ops that would compute
/// on them as floats are not lowered.
bool acceptsF8(Operation *op) {
  return isa<QuantizeOp, DequantizeOp, QMatMulOp, QConvOp, ConstantOp,
             ReshapeOp, SqueezeOp, UnsqueezeOp, TransposeOp, ExpandOp, ConcatOp,
             SplitOp, SliceOp, TileOp, GatherOp, FusionOp, YieldOp>(op);
}

class ConvertLoomToLinalgPass
    : public impl::ConvertLoomToLinalgPassBase<ConvertLoomToLinalgPass> {
public:
  void runOnOperation() override {
    // Say which op stops the lowering and why, rather than leaving only the
    // driver's generic "failed to legalize".
    WalkResult unsupported = getOperation().walk([](Operation *op) {
      if (!isa<LoomDialect>(op->getDialect()))
        return WalkResult::advance();
      for (Type type : llvm::concat<Type>(op->getOperandTypes(),
                                          op->getResultTypes())) {
        auto tensor = dyn_cast<RankedTensorType>(type);
        if (tensor && !tensor.hasStaticShape()) {
          op->emitOpError("has a dynamic shape (")
              << type << "); lowering to linalg needs static shapes";
          return WalkResult::interrupt();
        }
        if (tensor && !isSupportedElement(tensor.getElementType())) {
          op->emitOpError("has elements of type ")
              << tensor.getElementType()
              << ", which the lowering to linalg does not support yet";
          return WalkResult::interrupt();
        }
        if (tensor && isa<Float8E4M3FNType>(tensor.getElementType()) &&
            !acceptsF8(op)) {
          op->emitOpError("has elements of type ")
              << tensor.getElementType()
              << ", which the lowering to linalg supports only in "
                 "quantization ops and data movement";
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
    populateLoomToLinalgPatterns(converter, patterns);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

LoomToLinalgTypeConverter::LoomToLinalgTypeConverter() {
  addConversion([](Type type) { return type; });
  addConversion([](RankedTensorType type) -> Type {
    Type element = type.getElementType();
    if (!type.hasStaticShape() || !isSupportedElement(element))
      return nullptr;
    // arith works on signless integers; ops whose meaning depends on the
    // sign read it from the original type.
    if (element.isUnsignedInteger())
      return type.clone(IntegerType::get(type.getContext(),
                                         element.getIntOrFloatBitWidth()));
    // LLVM has no 8-bit floats: f8E4M3FN values travel as their bits.
    if (isa<Float8E4M3FNType>(element))
      return type.clone(IntegerType::get(type.getContext(), 8));
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
}

void populateLoomToLinalgPatterns(const TypeConverter &converter,
                                  RewritePatternSet &patterns) {
  populateLoomElementwiseToLinalgPatterns(converter, patterns);
  populateLoomNNToLinalgPatterns(converter, patterns);
  populateLoomQuantToLinalgPatterns(converter, patterns);
  patterns.add<FusionLowering>(converter, patterns.getContext());
  populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns,
                                                                 converter);
  populateReturnOpTypeConversionPattern(patterns, converter);
}

} // namespace loom
