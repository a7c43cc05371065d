//===- ResizeToLinalg.cpp - Resize ----------------------------------------===//
//
// loom.resize becomes one generic over the output and the sampling taps:
// the tables of source indices and weights per resized axis are constants
// when the scales (and roi) are static, computed by a generic at run time
// otherwise.
//
//===----------------------------------------------------------------------===//

#include "loom/Conversion/LoomToLinalg/LoomToLinalg.h"

#include "Utils.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/IR/ResizeSampling.h"

#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace loom::lowering;

namespace loom {
namespace {

/// With static scales (and roi) the sampling of every output position is
/// known when compiling (ResizeSampling.h): per resized axis, constant
/// tables of source indices and weights [out, taps]. One generic runs over
/// (output dims..., one tap dim per resized axis), reads the input with
/// tensor.extract and sums weight products; nearest sampling has one tap
/// and copies. Cropped-out positions get the extrapolation value after.
/// The sampling tables of one resized axis: source indices [out, taps]
/// (i64), weights [out, taps] (absent for nearest) and the cropped-out
/// flags ([out], or [out, taps] with equal entries when computed at run
/// time).
struct ResizeAxisTables {
  int64_t dim, taps;
  Value indices, weights, outside;
  bool outsidePerTap;
};

/// Tables computed at run time from the scales (and roi) operands: a
/// generic over [out, taps] evaluates, in f64, the sampling of
/// ResizeSampling.cpp (coordinate transformation, neighbour window, its
/// sliding into the edge padding, exclude_outside).
ResizeAxisTables buildRuntimeResizeTables(OpBuilder &b, Location loc,
                                          const ResizeSampling &sampling,
                                          ResizeOp::Adaptor adaptor, int64_t d,
                                          int64_t inLen, int64_t outLen,
                                          Type element) {
  Type f64 = b.getF64Type(), i64 = b.getI64Type();
  auto c = [&](double v) { return scalarConstant(b, loc, f64, v); };
  StringRef mode = sampling.mode, coordinateMode = sampling.coordinateMode;
  bool nearest = mode == "nearest", cubic = mode == "cubic";
  int64_t neighbours = cubic ? 4 : 2;
  int64_t taps = nearest ? 1 : neighbours;
  // The scale: the exact out / in when the f32 scale rounds it.
  Value scaleF32 = scalarOf(b, loc, adaptor.getScales(), d);
  double ratio = static_cast<double>(outLen) / static_cast<double>(inLen);
  Value exact = arith::CmpFOp::create(
      b, loc, arith::CmpFPredicate::OEQ, scaleF32,
      scalarConstant(b, loc, scaleF32.getType(), static_cast<float>(ratio)));
  Value scale = arith::SelectOp::create(
      b, loc, exact, c(ratio), arith::ExtFOp::create(b, loc, f64, scaleF32));
  Value roiStart = c(0), roiEnd = c(1);
  if (adaptor.getRoi()) {
    int64_t rank =
        cast<RankedTensorType>(adaptor.getInput().getType()).getRank();
    roiStart = arith::ExtFOp::create(b, loc, f64,
                                     scalarOf(b, loc, adaptor.getRoi(), d));
    roiEnd = arith::ExtFOp::create(
        b, loc, f64, scalarOf(b, loc, adaptor.getRoi(), rank + d));
  }
  auto tableType = [&](Type t) {
    return RankedTensorType::get({outLen, taps}, t);
  };
  Type weightType = isa<FloatType>(element) ? element : f64;
  SmallVector<AffineMap> maps(3, b.getMultiDimIdentityMap(2));
  SmallVector<utils::IteratorType> iterators(2, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc,
      TypeRange{tableType(i64), tableType(weightType),
                tableType(b.getI1Type())},
      ValueRange{},
      ValueRange{emptyTensor(b, loc, tableType(i64)),
                 emptyTensor(b, loc, tableType(weightType)),
                 emptyTensor(b, loc, tableType(b.getI1Type()))},
      maps, iterators, [&](OpBuilder &b, Location loc, ValueRange) {
        auto add = [&](Value x, Value y) -> Value {
          return arith::AddFOp::create(b, loc, x, y);
        };
        auto sub = [&](Value x, Value y) -> Value {
          return arith::SubFOp::create(b, loc, x, y);
        };
        auto mul = [&](Value x, Value y) -> Value {
          return arith::MulFOp::create(b, loc, x, y);
        };
        auto div = [&](Value x, Value y) -> Value {
          return arith::DivFOp::create(b, loc, x, y);
        };
        auto cmp = [&](arith::CmpFPredicate p, Value x, Value y) -> Value {
          return arith::CmpFOp::create(b, loc, p, x, y);
        };
        auto select = [&](Value cond, Value x, Value y) -> Value {
          return arith::SelectOp::create(b, loc, cond, x, y);
        };
        Value o = arith::SIToFPOp::create(
            b, loc, f64,
            arith::IndexCastOp::create(b, loc, i64,
                                       linalg::IndexOp::create(b, loc, 0)));
        Value tap = linalg::IndexOp::create(b, loc, 1);
        Value in = c(inLen), out = c(outLen);
        Value outWidth = mul(scale, in);
        Value widthIsOne = cmp(arith::CmpFPredicate::OEQ, outWidth, c(1));
        Value halfPixel = sub(div(add(o, c(0.5)), scale), c(0.5));
        Value coord;
        if (coordinateMode == "align_corners") {
          coord = select(widthIsOne, c(0),
                         div(mul(o, sub(in, c(1))), sub(outWidth, c(1))));
        } else if (coordinateMode == "asymmetric") {
          coord = div(o, scale);
        } else if (coordinateMode == "tf_crop_and_resize") {
          Value extent = mul(sub(roiEnd, roiStart), sub(in, c(1)));
          coord = add(select(widthIsOne, div(extent, c(2)),
                             div(mul(o, extent), sub(outWidth, c(1)))),
                      mul(roiStart, sub(in, c(1))));
        } else if (coordinateMode == "pytorch_half_pixel") {
          coord = select(widthIsOne, c(-0.5), halfPixel);
        } else if (coordinateMode == "tf_half_pixel_for_nn") {
          coord = div(add(o, c(0.5)), scale);
        } else if (coordinateMode == "half_pixel_symmetric") {
          Value adjustment = div(out, outWidth);
          Value offset = mul(c(inLen / 2.0), sub(c(1), adjustment));
          coord = add(offset, halfPixel);
        } else {
          coord = halfPixel;
        }
        Value outside = arith::OrIOp::create(
            b, loc, cmp(arith::CmpFPredicate::OLT, coord, c(0)),
            cmp(arith::CmpFPredicate::OGT, coord, c(inLen - 1)));
        if (!sampling.crop)
          outside = arith::ConstantOp::create(b, loc, b.getBoolAttr(false));
        Value floorC = math::FloorOp::create(b, loc, coord);
        Value integral = cmp(arith::CmpFPredicate::OEQ, coord, floorC);
        Value r = select(integral, c(1), sub(coord, floorC));
        // The first neighbour (before sliding) and the coefficients.
        Value first =
            sub(floorC, select(integral, c(cubic ? 2 : 1), c(cubic ? 1 : 0)));
        SmallVector<Value> coeffs;
        Value right;
        if (nearest) {
          StringRef nearestMode = sampling.nearestMode;
          if (nearestMode == "round_prefer_ceil")
            right = cmp(arith::CmpFPredicate::OGE, r, c(0.5));
          else if (nearestMode == "floor")
            right = arith::ConstantOp::create(b, loc, b.getBoolAttr(false));
          else if (nearestMode == "ceil")
            right = arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
          else
            right = cmp(arith::CmpFPredicate::OGT, r, c(0.5));
          right = arith::OrIOp::create(b, loc, integral, right);
        } else if (cubic) {
          double a = sampling.cubicA;
          Value r1 = add(r, c(1)), q = sub(c(1), r), q1 = sub(c(2), r);
          auto outer = [&](Value x) {
            return sub(
                mul(add(mul(sub(mul(c(a), x), c(5 * a)), x), c(8 * a)), x),
                c(4 * a));
          };
          auto inner = [&](Value x) {
            return add(mul(sub(mul(c(a + 2), x), c(a + 3)), mul(x, x)), c(1));
          };
          coeffs = {outer(r1), inner(r), inner(q), outer(q1)};
        } else {
          coeffs = {sub(c(1), r), r};
        }
        // The window slides to fit [-pad, in + pad).
        int64_t pad = (neighbours + 1) / 2;
        first = arith::MaximumFOp::create(b, loc, first, c(-pad));
        first = arith::MinimumFOp::create(b, loc, first,
                                          c(inLen + pad - neighbours));
        auto clampIndex = [&](Value position) -> Value {
          Value clamped = arith::MaximumFOp::create(
              b, loc, arith::MinimumFOp::create(b, loc, position, c(inLen - 1)),
              c(0));
          return arith::FPToSIOp::create(b, loc, i64, clamped);
        };
        Value index, weight;
        if (nearest) {
          index = clampIndex(add(first, select(right, c(1), c(0))));
          weight = c(1);
        } else {
          Value tapF = arith::SIToFPOp::create(
              b, loc, f64, arith::IndexCastOp::create(b, loc, i64, tap));
          index = clampIndex(add(first, tapF));
          Value total = c(0);
          SmallVector<Value> kept;
          for (auto [i, coeff] : llvm::enumerate(coeffs)) {
            Value w = coeff;
            if (sampling.excludeOutside) {
              Value position = add(first, c(i));
              Value inside = arith::AndIOp::create(
                  b, loc, cmp(arith::CmpFPredicate::OGE, position, c(0)),
                  cmp(arith::CmpFPredicate::OLT, position, c(inLen)));
              w = select(inside, w, c(0));
            }
            kept.push_back(w);
            total = add(total, w);
          }
          weight = kept.back();
          for (int64_t i = static_cast<int64_t>(kept.size()) - 2; i >= 0; --i) {
            Value here = arith::CmpIOp::create(
                b, loc, arith::CmpIPredicate::eq, tap,
                arith::ConstantIndexOp::create(b, loc, i));
            weight = select(here, kept[i], weight);
          }
          if (sampling.excludeOutside)
            weight = div(weight, total);
        }
        linalg::YieldOp::create(
            b, loc,
            ValueRange{index, castScalar(b, loc, weight, weightType), outside});
      });
  ResizeAxisTables tables{
      d, taps, generic.getResult(0), nullptr, generic.getResult(2), true};
  if (!nearest)
    tables.weights = generic.getResult(1);
  return tables;
}

class ResizeLowering : public LoomLowering<ResizeOp> {
public:
  using LoomLowering::LoomLowering;
  LogicalResult
  matchAndRewrite(ResizeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = resultType(op);
    std::optional<SmallVector<float>> scales = op.getStaticScales();
    std::optional<SmallVector<float>> roi;
    if (op.getRoi())
      roi = op.getStaticRoi();
    if (!type)
      return failure();
    bool runtime = !scales || (op.getRoi() && !roi);
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value input = adaptor.getInput();
    auto inputShape = cast<RankedTensorType>(input.getType()).getShape();
    int64_t rank = type.getRank();
    Type element = type.getElementType();
    bool nearest = op.getMode() == "nearest";
    if (!nearest && !isa<FloatType>(element))
      return rewriter.notifyMatchFailure(op, "interpolating integers");
    ResizeSampling sampling{op.getMode(),
                            op.getCoordinateTransformationMode(),
                            op.getNearestMode(),
                            op.getCubicCoeffA().convertToDouble(),
                            op.getExcludeOutside(),
                            op.getCoordinateTransformationMode() ==
                                "tf_crop_and_resize"};

    SmallVector<ResizeAxisTables> axes;
    bool anyOutside = false;
    if (runtime) {
      // Scales (or roi) known only at run time: every axis gets tables
      // computed at run time; an axis that is not resized samples itself.
      for (int64_t d = 0; d < rank; ++d)
        axes.push_back(buildRuntimeResizeTables(rewriter, loc, sampling,
                                                adaptor, d, inputShape[d],
                                                type.getDimSize(d), element));
      anyOutside = sampling.crop;
    }
    for (int64_t d = 0; d < rank && !runtime; ++d) {
      int64_t outLen = type.getDimSize(d);
      SmallVector<ResizeSample> samples = resizeAxisSamples(
          sampling, (*scales)[d], inputShape[d], outLen, roi ? (*roi)[d] : 0.0,
          roi ? (*roi)[rank + d] : 1.0);
      bool identity = llvm::all_of(llvm::enumerate(samples), [](auto it) {
        const ResizeSample &s = it.value();
        return !s.outside && s.index.size() == 1 &&
               s.index[0] == static_cast<int64_t>(it.index()) &&
               s.weight[0] == 1.0;
      });
      if (identity)
        continue;
      // Nearest weights are 0 or 1: keep the one source.
      if (nearest)
        for (ResizeSample &s : samples)
          for (auto [i, w] : llvm::enumerate(s.weight))
            if (w == 1.0) {
              s.index = {s.index[i]};
              s.weight = {1.0};
              break;
            }
      int64_t taps = 1;
      for (const ResizeSample &s : samples)
        taps = std::max<int64_t>(taps, s.index.size());
      SmallVector<int64_t> indexValues;
      SmallVector<double> weightValues;
      SmallVector<bool> outsideValues;
      for (const ResizeSample &s : samples) {
        for (int64_t t = 0; t < taps; ++t) {
          bool present = t < static_cast<int64_t>(s.index.size());
          indexValues.push_back(present ? s.index[t] : 0);
          weightValues.push_back(present ? s.weight[t] : 0.0);
        }
        outsideValues.push_back(s.outside);
        anyOutside |= s.outside;
      }
      auto tableType = [&](Type t) {
        return RankedTensorType::get({outLen, taps}, t);
      };
      ResizeAxisTables axis{d, taps, nullptr, nullptr, nullptr, false};
      axis.indices = arith::ConstantOp::create(
          rewriter, loc,
          DenseElementsAttr::get(tableType(rewriter.getI64Type()),
                                 ArrayRef<int64_t>(indexValues)));
      if (!nearest) {
        auto weightType = tableType(element);
        SmallVector<Attribute> weights;
        for (double w : weightValues)
          weights.push_back(rewriter.getFloatAttr(element, w));
        axis.weights = arith::ConstantOp::create(
            rewriter, loc, DenseElementsAttr::get(weightType, weights));
      }
      axis.outside = arith::ConstantOp::create(
          rewriter, loc,
          DenseElementsAttr::get(
              RankedTensorType::get({outLen}, rewriter.getI1Type()),
              ArrayRef<bool>(outsideValues)));
      axes.push_back(axis);
    }

    int64_t numDims = rank + axes.size();
    SmallVector<Value> inputs;
    SmallVector<AffineMap> maps;
    for (auto [t, axis] : llvm::enumerate(axes)) {
      AffineMap table = AffineMap::get(
          numDims, 0,
          {getAffineDimExpr(axis.dim, ctx), getAffineDimExpr(rank + t, ctx)},
          ctx);
      inputs.push_back(axis.indices);
      maps.push_back(table);
      if (axis.weights) {
        inputs.push_back(axis.weights);
        maps.push_back(table);
      }
    }
    SmallVector<AffineExpr> outExprs;
    for (int64_t d = 0; d < rank; ++d)
      outExprs.push_back(getAffineDimExpr(d, ctx));
    maps.push_back(AffineMap::get(numDims, 0, outExprs, ctx));
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    iterators.append(axes.size(), utils::IteratorType::reduction);
    Value result =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{type}, inputs,
            ValueRange{zeroFilled(rewriter, loc, type)}, maps, iterators,
            [&](B &b, L loc, V args) {
              SmallVector<Value> coords;
              for (int64_t d = 0; d < rank; ++d)
                coords.push_back(linalg::IndexOp::create(b, loc, d));
              Value weight;
              int64_t arg = 0;
              for (const ResizeAxisTables &axis : axes) {
                coords[axis.dim] = arith::IndexCastOp::create(
                    b, loc, b.getIndexType(), args[arg++]);
                if (!axis.weights)
                  continue;
                weight = weight ? Value(arith::MulFOp::create(b, loc, weight,
                                                              args[arg]))
                                : args[arg];
                ++arg;
              }
              Value x = tensor::ExtractOp::create(b, loc, input, coords);
              if (!weight) {
                linalg::YieldOp::create(b, loc, x);
                return;
              }
              linalg::YieldOp::create(
                  b, loc,
                  Value(arith::AddFOp::create(
                      b, loc, args.back(),
                      arith::MulFOp::create(b, loc, weight, x))));
            })
            .getResult(0);
    if (anyOutside) {
      SmallVector<Value> flags{result};
      SmallVector<AffineMap> flagMaps{rewriter.getMultiDimIdentityMap(rank)};
      for (const ResizeAxisTables &axis : axes) {
        flags.push_back(axis.outside);
        SmallVector<AffineExpr> exprs{getAffineDimExpr(axis.dim, ctx)};
        if (axis.outsidePerTap)
          exprs.push_back(getAffineConstantExpr(0, ctx));
        flagMaps.push_back(AffineMap::get(rank, 0, exprs, ctx));
      }
      flagMaps.push_back(rewriter.getMultiDimIdentityMap(rank));
      double extrapolation = op.getExtrapolationValue().convertToDouble();
      result = linalg::GenericOp::create(
                   rewriter, loc, TypeRange{type}, flags,
                   ValueRange{emptyTensor(rewriter, loc, type)}, flagMaps,
                   SmallVector<utils::IteratorType>(
                       rank, utils::IteratorType::parallel),
                   [&](B &b, L loc, V args) {
                     Value outside = args[1];
                     for (size_t i = 2; i + 1 < args.size(); ++i)
                       outside = arith::OrIOp::create(b, loc, outside, args[i]);
                     linalg::YieldOp::create(
                         b, loc,
                         Value(arith::SelectOp::create(
                             b, loc, outside,
                             scalarConstant(b, loc, element, extrapolation),
                             args[0])));
                   })
                   .getResult(0);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateLoomResizeToLinalgPatterns(const TypeConverter &converter,
                                        RewritePatternSet &patterns) {
  patterns.add<ResizeLowering>(converter, patterns.getContext());
}

} // namespace loom
