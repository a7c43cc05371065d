//===- Im2Col.cpp - Convolutions as matrix products on the CPU ------------===//

#include "loom/Target/CPU/Passes.h"

#include "TargetUtils.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/DialectResourceBlobManager.h"

namespace loom::cpu {
#define GEN_PASS_DEF_LOOMCPUIM2COLPASS
#include "loom/Target/CPU/Passes.h.inc"
} // namespace loom::cpu

using namespace mlir;

namespace loom::cpu {
namespace {

/// What both im2col forms read off the convolution: operands, types and
/// sizes; nullopt unless its element types agree and the input and filter
/// are static.
struct Convolution {
  Value input, filter, init;
  RankedTensorType outputType;
  Type element;
  int64_t n, f, oh, ow, c, kh, kw;
  SmallVector<int64_t> strides, dilations;
};

/// The convolution of `input` [N, C, H, W] with `filter` [F, C, KH, KW]
/// into `init`; nullopt unless all three are static and, with
/// `sameElements`, of one element type.
std::optional<Convolution> convolutionFrom(Value input, Value filter,
                                           Value init,
                                           ArrayRef<int64_t> strides,
                                           ArrayRef<int64_t> dilations,
                                           bool sameElements) {
  Convolution cv;
  cv.input = input;
  cv.filter = filter;
  cv.init = init;
  auto inputType = dyn_cast<RankedTensorType>(input.getType());
  auto filterType = dyn_cast<RankedTensorType>(filter.getType());
  cv.outputType = dyn_cast<RankedTensorType>(init.getType());
  if (!inputType || !filterType || !cv.outputType ||
      !inputType.hasStaticShape() || !filterType.hasStaticShape())
    return std::nullopt;
  cv.element = cv.outputType.getElementType();
  // One element type, or 16-bit float operands summed in f32 (the form
  // convert-loom-to-linalg gives fp16/bf16 convolutions).
  Type operands = inputType.getElementType();
  bool widening = cv.element.isF32() && (operands.isBF16() || operands.isF16());
  if (sameElements && (filterType.getElementType() != operands ||
                       (operands != cv.element && !widening)))
    return std::nullopt;
  cv.n = cv.outputType.getDimSize(0);
  cv.f = cv.outputType.getDimSize(1);
  cv.oh = cv.outputType.getDimSize(2);
  cv.ow = cv.outputType.getDimSize(3);
  cv.c = filterType.getDimSize(1);
  cv.kh = filterType.getDimSize(2);
  cv.kw = filterType.getDimSize(3);
  cv.strides.assign(strides.begin(), strides.end());
  cv.dilations.assign(dilations.begin(), dilations.end());
  return cv;
}

std::optional<Convolution> convolutionOf(linalg::Conv2DNchwFchwOp conv) {
  return convolutionFrom(
      conv.getInputs()[0], conv.getInputs()[1], conv.getOutputs()[0],
      llvm::to_vector(conv.getStrides().getValues<int64_t>()),
      llvm::to_vector(conv.getDilations().getValues<int64_t>()),
      /*sameElements=*/true);
}

/// The byte convolution convert-loom-to-linalg builds: a generic over
/// (n, f, oh, ow, c, kh, kw) with the maps of conv_2d_nchw_fchw (checked
/// against the strides and dilations linalg infers) and the byte body.
std::optional<Convolution> byteConvolutionOf(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || op.getNumLoops() != 7 ||
      byteProductUnsignedInput(op) != 0u)
    return std::nullopt;
  FailureOr<linalg::ConvolutionDimensions> dims =
      linalg::inferConvolutionDims(op);
  if (failed(dims) || dims->strides.size() != 2 || dims->dilations.size() != 2)
    return std::nullopt;
  MLIRContext *ctx = op.getContext();
  AffineExpr n, f, oh, ow, c, kh, kw;
  bindDims(ctx, n, f, oh, ow, c, kh, kw);
  SmallVector<AffineMap> expected{
      AffineMap::get(7, 0,
                     {n, c, oh * dims->strides[0] + kh * dims->dilations[0],
                      ow * dims->strides[1] + kw * dims->dilations[1]},
                     ctx),
      AffineMap::get(7, 0, {f, c, kh, kw}, ctx),
      AffineMap::get(7, 0, {n, f, oh, ow}, ctx)};
  if (op.getIndexingMapsArray() != expected)
    return std::nullopt;
  std::optional<Convolution> cv = convolutionFrom(
      op.getDpsInputs()[0], op.getDpsInputs()[1], op.getDpsInits()[0],
      dims->strides, dims->dilations, /*sameElements=*/false);
  if (!cv || !cv->outputType.hasStaticShape())
    return std::nullopt;
  return cv;
}

/// The body of a product: out + lhs * rhs, in floats or (the quantized
/// convolutions' exact accumulation) integers.
void multiplyAccumulateBody(OpBuilder &b, Location loc, ValueRange args) {
  Value sum;
  if (auto accType = dyn_cast<FloatType>(args[2].getType())) {
    // 16-bit operands are widened to the f32 accumulator.
    auto widened = [&](Value v) -> Value {
      return v.getType() == accType
                 ? v
                 : arith::ExtFOp::create(b, loc, accType, v).getResult();
    };
    Value mul =
        arith::MulFOp::create(b, loc, widened(args[0]), widened(args[1]));
    sum = arith::AddFOp::create(b, loc, args[2], mul);
  } else {
    Value mul = arith::MulIOp::create(b, loc, args[0], args[1]);
    sum = arith::AddIOp::create(b, loc, args[2], mul);
  }
  linalg::YieldOp::create(b, loc, sum);
}

/// The windows of `cv`'s input copied into col[n, oh, ow, c, kh, kw]
/// (`positionMajor`) or col[n, c, kh, kw, oh, ow], each element in[n, c,
/// oh*sh + kh*dh, ow*sw + kw*dw], in the input's element type.
Value copyWindows(RewriterBase &rewriter, Location loc, const Convolution &cv,
                  bool positionMajor) {
  MLIRContext *ctx = rewriter.getContext();
  Type element = cast<RankedTensorType>(cv.input.getType()).getElementType();
  ArrayRef<int64_t> strides = cv.strides, dilations = cv.dilations;
  AffineExpr dn, doh, dow, dc, dkh, dkw;
  SmallVector<int64_t> shape;
  if (positionMajor) {
    bindDims(ctx, dn, doh, dow, dc, dkh, dkw);
    shape = {cv.n, cv.oh, cv.ow, cv.c, cv.kh, cv.kw};
  } else {
    bindDims(ctx, dn, dc, dkh, dkw, doh, dow);
    shape = {cv.n, cv.c, cv.kh, cv.kw, cv.oh, cv.ow};
  }
  auto colType = RankedTensorType::get(shape, element);
  Value colInit = tensor::EmptyOp::create(rewriter, loc, shape, element);
  SmallVector<AffineMap> copyMaps{
      AffineMap::get(6, 0,
                     {dn, dc, doh * strides[0] + dkh * dilations[0],
                      dow * strides[1] + dkw * dilations[1]},
                     ctx),
      AffineMap::getMultiDimIdentityMap(6, ctx)};
  return linalg::GenericOp::create(
             rewriter, loc, TypeRange{colType}, ValueRange{cv.input},
             ValueRange{colInit}, copyMaps,
             SmallVector<utils::IteratorType>(6, utils::IteratorType::parallel),
             [](OpBuilder &b, Location loc, ValueRange args) {
               linalg::YieldOp::create(b, loc, args[0]);
             })
      .getResult(0);
}

/// conv_2d_nchw_fchw as col[n, c, kh, kw, oh, ow] = in[n, c, oh*sh + kh*dh,
/// ow*sw + kw*dw] (a copy whose innermost loop walks a row of the input)
/// and out[n, f, oh*ow] += w[f, c*kh*kw] * col[n, c*kh*kw, oh*ow]. f32, and
/// i32 (the quantized convolutions' exact accumulation).
LogicalResult rewriteAsIm2Col(RewriterBase &rewriter,
                              linalg::Conv2DNchwFchwOp conv) {
  std::optional<Convolution> cv = convolutionOf(conv);
  if (!cv)
    return failure();
  Location loc = conv.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  Value input = cv->input, filter = cv->filter, init = cv->init;
  RankedTensorType outputType = cv->outputType;
  auto inputType = cast<RankedTensorType>(input.getType());
  int64_t oh = cv->oh, ow = cv->ow, kh = cv->kh, kw = cv->kw;
  ArrayRef<int64_t> strides = cv->strides;

  // The copy: loops (n, c, kh, kw, oh, ow); none for a 1x1 window with
  // unit strides, whose input already is the column matrix.
  Value col2;
  if (kh == 1 && kw == 1 && strides[0] == 1 && strides[1] == 1 &&
      inputType.getDimSize(2) == oh && inputType.getDimSize(3) == ow) {
    col2 = tensor::CollapseShapeOp::create(
        rewriter, loc, input,
        SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
  } else {
    Value col = copyWindows(rewriter, loc, *cv, /*positionMajor=*/false);
    col2 = tensor::CollapseShapeOp::create(
        rewriter, loc, col,
        SmallVector<ReassociationIndices>{{0}, {1, 2, 3}, {4, 5}});
  }

  // The product: loops (n, f, p, k) with p = oh*ow and k = c*kh*kw.
  Value filter2 = tensor::CollapseShapeOp::create(
      rewriter, loc, filter, SmallVector<ReassociationIndices>{{0}, {1, 2, 3}});
  SmallVector<ReassociationIndices> outGroups{{0}, {1}, {2, 3}};
  Value init2 = tensor::CollapseShapeOp::create(rewriter, loc, init, outGroups);
  AffineExpr mn, mf, mp, mk;
  bindDims(ctx, mn, mf, mp, mk);
  SmallVector<AffineMap> productMaps{AffineMap::get(4, 0, {mf, mk}, ctx),
                                     AffineMap::get(4, 0, {mn, mk, mp}, ctx),
                                     AffineMap::get(4, 0, {mn, mf, mp}, ctx)};
  SmallVector<utils::IteratorType> iterators(3, utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  Value product =
      linalg::GenericOp::create(rewriter, loc, TypeRange{init2.getType()},
                                ValueRange{filter2, col2}, ValueRange{init2},
                                productMaps, iterators, multiplyAccumulateBody)
          .getResult(0);
  rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(conv, outputType, product,
                                                     outGroups);
  return success();
}

/// The filter [F, C, KH, KW] as the matrix [C*KH*KW, F]: transposed here,
/// once, when it is a constant stored densely (a weight), else by a
/// linalg.transpose in the program.
Value transposedFilter(RewriterBase &rewriter, Location loc, Value filter) {
  auto type = cast<RankedTensorType>(filter.getType());
  int64_t f = type.getDimSize(0), k = type.getNumElements() / f;
  auto matrixType = RankedTensorType::get({k, f}, type.getElementType());
  if (auto constant = filter.getDefiningOp<arith::ConstantOp>()) {
    auto attr = dyn_cast<ElementsAttr>(constant.getValue());
    ArrayRef<char> bytes = attr ? denseBytes(attr) : ArrayRef<char>();
    if (!bytes.empty()) {
      int64_t element = type.getElementTypeBitWidth() / 8;
      std::vector<char> data(bytes.size());
      for (int64_t row = 0; row < f; ++row)
        for (int64_t column = 0; column < k; ++column)
          std::memcpy(data.data() + (column * f + row) * element,
                      bytes.data() + (row * k + column) * element, element);
      ElementsAttr value = constantLike(attr, matrixType, data, "_transposed");
      return arith::ConstantOp::create(rewriter, loc, cast<TypedAttr>(value));
    }
  }
  Value matrix = tensor::CollapseShapeOp::create(
      rewriter, loc, filter, SmallVector<ReassociationIndices>{{0}, {1, 2, 3}});
  Value init = tensor::EmptyOp::create(rewriter, loc, matrixType.getShape(),
                                       matrixType.getElementType());
  return linalg::TransposeOp::create(rewriter, loc, matrix, init,
                                     ArrayRef<int64_t>{1, 0})
      ->getResult(0);
}

/// Convolutions with few output positions (a deep layer's 2x2 or 4x4
/// maps) leave the column-major product's register tiles mostly empty:
/// its columns are the positions. Here the positions are the rows
/// instead: col[n, oh, ow, c, kh, kw] = in[n, c, oh*sh + kh*dh, ow*sw +
/// kw*dw], out'[n, p, f] += col[n, p, c*kh*kw] * w'[c*kh*kw, f] with the
/// filter transposed (at compile time for a weight), and out' transposed
/// back: the tiles' columns are the output channels.
LogicalResult rewriteAsPositionMajorIm2Col(RewriterBase &rewriter,
                                           linalg::Conv2DNchwFchwOp conv) {
  std::optional<Convolution> cv = convolutionOf(conv);
  if (!cv)
    return failure();
  Location loc = conv.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  Value filter = cv->filter, init = cv->init;
  RankedTensorType outputType = cv->outputType;
  Type element = cv->element;
  int64_t n = cv->n, f = cv->f, oh = cv->oh, ow = cv->ow;
  int64_t p = oh * ow;

  Value col = copyWindows(rewriter, loc, *cv, /*positionMajor=*/true);
  Value col2 = tensor::CollapseShapeOp::create(
      rewriter, loc, col,
      SmallVector<ReassociationIndices>{{0}, {1, 2}, {3, 4, 5}});
  Value filter2 = transposedFilter(rewriter, loc, filter);

  // The accumulator [n, p, f]: the convolution's init transposed, or a
  // fill of the same value when it is one (the usual zeros).
  auto productType = RankedTensorType::get({n, p, f}, element);
  Value productInit =
      tensor::EmptyOp::create(rewriter, loc, productType.getShape(), element);
  if (auto fill = init.getDefiningOp<linalg::FillOp>()) {
    productInit =
        linalg::FillOp::create(rewriter, loc, fill.getInputs()[0], productInit)
            ->getResult(0);
  } else {
    Value init2 = tensor::CollapseShapeOp::create(
        rewriter, loc, init,
        SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
    productInit = linalg::TransposeOp::create(rewriter, loc, init2, productInit,
                                              ArrayRef<int64_t>{0, 2, 1})
                      ->getResult(0);
  }
  AffineExpr mn, mp, mf, mk;
  bindDims(ctx, mn, mp, mf, mk);
  SmallVector<AffineMap> productMaps{AffineMap::get(4, 0, {mn, mp, mk}, ctx),
                                     AffineMap::get(4, 0, {mk, mf}, ctx),
                                     AffineMap::get(4, 0, {mn, mp, mf}, ctx)};
  SmallVector<utils::IteratorType> iterators(3, utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  Value product = linalg::GenericOp::create(
                      rewriter, loc, TypeRange{productType},
                      ValueRange{col2, filter2}, ValueRange{productInit},
                      productMaps, iterators, multiplyAccumulateBody)
                      .getResult(0);
  auto channelMajorType = RankedTensorType::get({n, f, p}, element);
  Value channelMajor =
      linalg::TransposeOp::create(
          rewriter, loc, product,
          tensor::EmptyOp::create(rewriter, loc, channelMajorType.getShape(),
                                  element),
          ArrayRef<int64_t>{0, 2, 1})
          ->getResult(0);
  rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(
      conv, outputType, channelMajor,
      SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
  return success();
}

/// A byte convolution as a byte product, position-major:
/// col[n*oh*ow, c*kh*kw] (bytes) times the filter as [c*kh*kw, f]
/// (transposed at compile time for a weight) into [n*oh*ow, f] in i32,
/// with the convolution's body, then transposed to [n, f, oh, ow]: the
/// form for few positions (a deep layer's 2x2) or a batch of images. The
/// register tiles broadcast four bytes of a row (a position) and read the
/// filter packed by loom-cpu-pack-dot-product-weights, 16 output channels per
/// register.
LogicalResult rewriteByteConvolution(RewriterBase &rewriter,
                                     linalg::GenericOp conv,
                                     const Convolution &cv) {
  Location loc = conv.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  int64_t n = cv.n, f = cv.f, oh = cv.oh, ow = cv.ow;
  int64_t rows = n * oh * ow;
  if (!cv.init.getDefiningOp<linalg::FillOp>())
    return failure();

  Value col = copyWindows(rewriter, loc, cv, /*positionMajor=*/true);
  Value col2 = tensor::CollapseShapeOp::create(
      rewriter, loc, col,
      SmallVector<ReassociationIndices>{{0, 1, 2}, {3, 4, 5}});
  Value filter2 = transposedFilter(rewriter, loc, cv.filter);

  auto productType = RankedTensorType::get({rows, f}, cv.element);
  Value fillValue = cv.init.getDefiningOp<linalg::FillOp>().getInputs()[0];
  Value empty = tensor::EmptyOp::create(rewriter, loc, productType.getShape(),
                                        cv.element);
  Value productInit =
      linalg::FillOp::create(rewriter, loc, fillValue, empty)->getResult(0);
  AffineExpr mm, mf, mk;
  bindDims(ctx, mm, mf, mk);
  auto product = linalg::GenericOp::create(
      rewriter, loc, TypeRange{productType}, ValueRange{col2, filter2},
      ValueRange{productInit},
      SmallVector<AffineMap>{AffineMap::get(3, 0, {mm, mk}, ctx),
                             AffineMap::get(3, 0, {mk, mf}, ctx),
                             AffineMap::get(3, 0, {mm, mf}, ctx)},
      {utils::IteratorType::parallel, utils::IteratorType::parallel,
       utils::IteratorType::reduction});
  IRMapping mapping;
  conv.getRegion().cloneInto(&product.getRegion(), mapping);

  Value positionMajor = tensor::ExpandShapeOp::create(
      rewriter, loc, RankedTensorType::get({n, oh * ow, f}, cv.element),
      product.getResult(0), SmallVector<ReassociationIndices>{{0, 1}, {2}});
  auto channelMajorType = RankedTensorType::get({n, f, oh * ow}, cv.element);
  Value channelMajor =
      linalg::TransposeOp::create(
          rewriter, loc, positionMajor,
          tensor::EmptyOp::create(rewriter, loc, channelMajorType.getShape(),
                                  cv.element),
          ArrayRef<int64_t>{0, 2, 1})
          ->getResult(0);
  rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(
      conv, cv.outputType, channelMajor,
      SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
  return success();
}

/// A byte convolution of one image as a byte product, channel-major, the
/// form of rewriteAsIm2Col: w[f, c*kh*kw] times col[c*kh*kw, oh*ow] (bytes;
/// for a 1x1 window with unit strides, the input itself) into [f, oh*ow]
/// in i32, which is already the NCHW result. The register tiles broadcast
/// four bytes of a filter row and read the columns (positions) in panels
/// interleaved for vpdpbusd at run time (loom-cpu-vectorize-dot-products).
LogicalResult rewriteByteConvolutionChannelMajor(RewriterBase &rewriter,
                                                 linalg::GenericOp conv,
                                                 const Convolution &cv) {
  Location loc = conv.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  auto inputType = cast<RankedTensorType>(cv.input.getType());
  if (cv.n != 1)
    return failure();
  Value col2;
  if (cv.kh == 1 && cv.kw == 1 && cv.strides[0] == 1 && cv.strides[1] == 1 &&
      inputType.getDimSize(2) == cv.oh && inputType.getDimSize(3) == cv.ow) {
    col2 = tensor::CollapseShapeOp::create(
        rewriter, loc, cv.input,
        SmallVector<ReassociationIndices>{{0, 1}, {2, 3}});
  } else {
    Value col = copyWindows(rewriter, loc, cv, /*positionMajor=*/false);
    col2 = tensor::CollapseShapeOp::create(
        rewriter, loc, col,
        SmallVector<ReassociationIndices>{{0, 1, 2, 3}, {4, 5}});
  }
  Value filter2 = tensor::CollapseShapeOp::create(
      rewriter, loc, cv.filter,
      SmallVector<ReassociationIndices>{{0}, {1, 2, 3}});
  SmallVector<ReassociationIndices> outGroups{{0, 1}, {2, 3}};
  Value init2 =
      tensor::CollapseShapeOp::create(rewriter, loc, cv.init, outGroups);
  AffineExpr mf, mp, mk;
  bindDims(ctx, mf, mp, mk);
  Value product =
      linalg::GenericOp::create(
          rewriter, loc, TypeRange{init2.getType()}, ValueRange{filter2, col2},
          ValueRange{init2},
          SmallVector<AffineMap>{AffineMap::get(3, 0, {mf, mk}, ctx),
                                 AffineMap::get(3, 0, {mk, mp}, ctx),
                                 AffineMap::get(3, 0, {mf, mp}, ctx)},
          {utils::IteratorType::parallel, utils::IteratorType::parallel,
           utils::IteratorType::reduction},
          [](OpBuilder &b, Location loc, ValueRange args) {
            Type i32 = b.getI32Type();
            Value w = arith::ExtSIOp::create(b, loc, i32, args[0]);
            Value x = arith::ExtUIOp::create(b, loc, i32, args[1]);
            Value mul = arith::MulIOp::create(b, loc, w, x);
            Value sum = arith::AddIOp::create(b, loc, args[2], mul);
            linalg::YieldOp::create(b, loc, sum);
          })
          .getResult(0);
  rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(conv, cv.outputType,
                                                     product, outGroups);
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
          conv->hasAttr(kLibraryAttr) || !output.hasStaticShape() ||
          !(output.getElementType().isF32() ||
            output.getElementType().isInteger(32)))
        return;
      convs.push_back(conv);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::Conv2DNchwFchwOp conv : convs) {
      rewriter.setInsertionPoint(conv);
      auto output = cast<RankedTensorType>(conv.getOutputs()[0].getType());
      if (output.getDimSize(2) * output.getDimSize(3) >= minColumns)
        (void)rewriteAsIm2Col(rewriter, conv);
      else
        (void)rewriteAsPositionMajorIm2Col(rewriter, conv);
    }
    SmallVector<std::pair<linalg::GenericOp, Convolution>> byteConvs;
    getOperation().walk([&](linalg::GenericOp op) {
      if (std::optional<Convolution> cv = byteConvolutionOf(op))
        byteConvs.push_back({op, *cv});
    });
    for (auto &[conv, cv] : byteConvs) {
      rewriter.setInsertionPoint(conv);
      // As for other convolutions, few positions are the rows instead.
      if (cv.oh * cv.ow < minColumns ||
          failed(rewriteByteConvolutionChannelMajor(rewriter, conv, cv)))
        (void)rewriteByteConvolution(rewriter, conv, cv);
    }
  }
};

} // namespace
} // namespace loom::cpu
