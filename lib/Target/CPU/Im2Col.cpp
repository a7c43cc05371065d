//===- Im2Col.cpp - Convolutions as matrix products on the CPU ------------===//

#include "loom/Target/CPU/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"

namespace loom::cpu {
#define GEN_PASS_DEF_LOOMCPUIM2COLPASS
#include "loom/Target/CPU/Passes.h.inc"
} // namespace loom::cpu

using namespace mlir;

namespace loom::cpu {
namespace {

/// conv_2d_nchw_fchw as col[n, c, kh, kw, oh, ow] = in[n, c, oh*sh + kh*dh,
/// ow*sw + kw*dw] (a copy whose innermost loop walks a row of the input)
/// and out[n, f, oh*ow] += w[f, c*kh*kw] * col[n, c*kh*kw, oh*ow]. f32, and
/// i32 (the quantized convolutions' exact accumulation).
LogicalResult rewriteAsIm2Col(RewriterBase &rewriter,
                              linalg::Conv2DNchwFchwOp conv) {
  Location loc = conv.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  Value input = conv.getInputs()[0], filter = conv.getInputs()[1];
  Value init = conv.getOutputs()[0];
  auto inputType = cast<RankedTensorType>(input.getType());
  auto filterType = cast<RankedTensorType>(filter.getType());
  auto outputType = cast<RankedTensorType>(init.getType());
  Type element = outputType.getElementType();
  if (inputType.getElementType() != element ||
      filterType.getElementType() != element || !inputType.hasStaticShape() ||
      !filterType.hasStaticShape())
    return failure();
  int64_t n = outputType.getDimSize(0), oh = outputType.getDimSize(2),
          ow = outputType.getDimSize(3);
  int64_t c = filterType.getDimSize(1), kh = filterType.getDimSize(2),
          kw = filterType.getDimSize(3);
  auto strides = llvm::to_vector(conv.getStrides().getValues<int64_t>());
  auto dilations = llvm::to_vector(conv.getDilations().getValues<int64_t>());

  // The copy: loops (n, c, kh, kw, oh, ow); none for a 1x1 window with
  // unit strides, whose input already is the column matrix.
  Value col2;
  if (kh == 1 && kw == 1 && strides[0] == 1 && strides[1] == 1 &&
      inputType.getDimSize(2) == oh && inputType.getDimSize(3) == ow) {
    col2 = tensor::CollapseShapeOp::create(
        rewriter, loc, input,
        SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
  } else {
    AffineExpr dn, dc, dkh, dkw, doh, dow;
    bindDims(ctx, dn, dc, dkh, dkw, doh, dow);
    auto colType = RankedTensorType::get({n, c, kh, kw, oh, ow}, element);
    Value colInit = tensor::EmptyOp::create(rewriter, loc,
                                            colType.getShape(), element);
    SmallVector<AffineMap> copyMaps{
        AffineMap::get(6, 0,
                       {dn, dc, doh * strides[0] + dkh * dilations[0],
                        dow * strides[1] + dkw * dilations[1]},
                       ctx),
        AffineMap::getMultiDimIdentityMap(6, ctx)};
    Value col =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{colType}, ValueRange{input},
            ValueRange{colInit}, copyMaps,
            SmallVector<utils::IteratorType>(6, utils::IteratorType::parallel),
            [](OpBuilder &b, Location loc, ValueRange args) {
              linalg::YieldOp::create(b, loc, args[0]);
            })
            .getResult(0);
    col2 = tensor::CollapseShapeOp::create(
        rewriter, loc, col,
        SmallVector<ReassociationIndices>{{0}, {1, 2, 3}, {4, 5}});
  }

  // The product: loops (n, f, p, k) with p = oh*ow and k = c*kh*kw.
  Value filter2 = tensor::CollapseShapeOp::create(
      rewriter, loc, filter, SmallVector<ReassociationIndices>{{0}, {1, 2, 3}});
  SmallVector<ReassociationIndices> outGroups{{0}, {1}, {2, 3}};
  Value init2 =
      tensor::CollapseShapeOp::create(rewriter, loc, init, outGroups);
  AffineExpr mn, mf, mp, mk;
  bindDims(ctx, mn, mf, mp, mk);
  SmallVector<AffineMap> productMaps{AffineMap::get(4, 0, {mf, mk}, ctx),
                                     AffineMap::get(4, 0, {mn, mk, mp}, ctx),
                                     AffineMap::get(4, 0, {mn, mf, mp}, ctx)};
  SmallVector<utils::IteratorType> iterators(3, utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  Value product =
      linalg::GenericOp::create(
          rewriter, loc, TypeRange{init2.getType()}, ValueRange{filter2, col2},
          ValueRange{init2}, productMaps, iterators,
          [](OpBuilder &b, Location loc, ValueRange args) {
            Value sum;
            if (isa<FloatType>(args[2].getType())) {
              Value mul = arith::MulFOp::create(b, loc, args[0], args[1]);
              sum = arith::AddFOp::create(b, loc, args[2], mul);
            } else {
              Value mul = arith::MulIOp::create(b, loc, args[0], args[1]);
              sum = arith::AddIOp::create(b, loc, args[2], mul);
            }
            linalg::YieldOp::create(b, loc, sum);
          })
          .getResult(0);
  rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(conv, outputType, product,
                                                     outGroups);
  return success();
}

class LoomCPUIm2ColPass
    : public impl::LoomCPUIm2ColPassBase<LoomCPUIm2ColPass> {
public:
  using LoomCPUIm2ColPassBase::LoomCPUIm2ColPassBase;

  void runOnOperation() override {
    SmallVector<linalg::Conv2DNchwFchwOp> convs;
    getOperation().walk([&](linalg::Conv2DNchwFchwOp conv) {
      auto output = dyn_cast<RankedTensorType>(conv.getOutputs()[0].getType());
      if (!conv.hasPureTensorSemantics() || !output ||
          conv->hasAttr(kLibraryAttr) ||
          !output.hasStaticShape() ||
          !(output.getElementType().isF32() ||
            output.getElementType().isInteger(32)))
        return;
      if (output.getDimSize(2) * output.getDimSize(3) >= minColumns)
        convs.push_back(conv);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::Conv2DNchwFchwOp conv : convs) {
      rewriter.setInsertionPoint(conv);
      (void)rewriteAsIm2Col(rewriter, conv);
    }
  }
};

} // namespace
} // namespace loom::cpu
