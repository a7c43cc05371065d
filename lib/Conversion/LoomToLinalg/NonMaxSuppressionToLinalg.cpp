//===- NonMaxSuppressionToLinalg.cpp - loom.non_max_suppression -----------===//
//
// loom.non_max_suppression selects what the reference executor selects
// (nonMaxSuppressionKernel, lib/Reference/NNKernels.cpp), in its order:
//
//  - The result has at most B * C * N rows (every box of every class of
//    every batch; sizes known only at run time are read then): the rows
//    are written into a tensor<(B*C*N)x3xi64> by an scf.for nest over
//    batch and class, the
//    number written so far carried as an index, and the result is the
//    first `count` rows (tensor.extract_slice to tensor<?x3xi64>).
//  - Per class, a mask marks the candidates (score above score_threshold,
//    or every box without one). The boxes are sorted once (a stable merge
//    sort, buildStableOrder: O(N log N)) into the reference's order,
//    highest score first and equal scores by the lower box index, and the
//    candidates among them visited in that order.
//  - A candidate is kept while fewer than max_output_boxes_per_class boxes
//    are kept in its class and no kept box of the class overlaps it by an
//    IoU above iou_threshold. The IoU is the reference's suppressedByIoU:
//    in f64, in its order, with std::min/std::max as compare-and-select.
//
// Missing scalar operands take ONNX's defaults, as in the reference: no
// max_output_boxes_per_class selects nothing, no iou_threshold is 0, no
// score_threshold drops nothing. NaN scores make the reference's sort
// ill-defined; their order here is not promised.
//
//===----------------------------------------------------------------------===//

#include "loom/Conversion/LoomToLinalg/LoomToLinalg.h"

#include "Utils.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace loom::lowering;

namespace loom {
namespace {

class NonMaxSuppressionLowering : public LoomLowering<NonMaxSuppressionOp> {
public:
  using LoomLowering::LoomLowering;
  LogicalResult
  matchAndRewrite(NonMaxSuppressionOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    // The result's row count is dynamic by definition; only its operands
    // must convert. Their sizes may be known only at run time (boxes that
    // survived a score filter): the loops and the bound take them as
    // values.
    for (Value operand : op->getOperands())
      if (!convertedType(operand))
        return rewriter.notifyMatchFailure(op, "operand type not converted");
    Value boxes = adaptor.getBoxes(), scores = adaptor.getScores();
    auto boxesType = cast<RankedTensorType>(boxes.getType());
    auto scoresType = cast<RankedTensorType>(scores.getType());
    if (boxesType.getRank() != 3 || scoresType.getRank() != 3)
      return rewriter.notifyMatchFailure(op,
                                         "needs boxes and scores of rank 3");
    auto resultType = cast<RankedTensorType>(op.getResult().getType());
    if (resultType.getRank() != 2 || !resultType.getElementType().isInteger(64))
      return failure();

    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    Type f64 = b.getF64Type(), i64 = b.getI64Type(), i1 = b.getI1Type();
    Type indexType = b.getIndexType();
    auto ci = [&](OpBuilder &b, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    auto sizeOf = [&](Value tensor, int64_t dim) -> Value {
      auto type = cast<RankedTensorType>(tensor.getType());
      if (!type.isDynamicDim(dim))
        return ci(b, type.getDimSize(dim));
      return tensor::DimOp::create(b, loc, tensor, dim);
    };
    Value numBatches = sizeOf(boxes, 0), numBoxes = sizeOf(boxes, 1);
    Value numClasses = sizeOf(scores, 1);
    // Every box of every class of every batch: the most rows there can be,
    // a static size when the operands' sizes are.
    int64_t staticBound = ShapedType::kDynamic;
    if (boxesType.hasStaticShape() && scoresType.hasStaticShape())
      staticBound = boxesType.getDimSize(0) * scoresType.getDimSize(1) *
                    boxesType.getDimSize(1);
    SmallVector<Value> boundSize, maskSize;
    if (ShapedType::isDynamic(staticBound))
      boundSize.push_back(arith::MulIOp::create(
          b, loc, arith::MulIOp::create(b, loc, numBatches, numClasses),
          numBoxes));
    if (boxesType.isDynamicDim(1))
      maskSize.push_back(numBoxes);
    auto toI64 = [&](OpBuilder &b, Value index) -> Value {
      return arith::IndexCastOp::create(b, loc, i64, index);
    };
    auto boolean = [&](OpBuilder &b, bool v) -> Value {
      return arith::ConstantIntOp::create(b, loc, i1, v);
    };

    // The scalars, read at run time (ONNX's defaults when absent).
    Value maxPerClass =
        adaptor.getMaxOutputBoxesPerClass()
            ? scalarOf(b, loc, adaptor.getMaxOutputBoxesPerClass())
            : arith::ConstantIntOp::create(b, loc, i64, 0).getResult();
    Value iouThreshold =
        adaptor.getIouThreshold()
            ? castScalar(b, loc, scalarOf(b, loc, adaptor.getIouThreshold()),
                         f64)
            : scalarConstant(b, loc, f64, 0.0);
    Value scoreThreshold =
        adaptor.getScoreThreshold()
            ? castScalar(b, loc, scalarOf(b, loc, adaptor.getScoreThreshold()),
                         f64)
            : Value();
    bool centerPointBox = op.getCenterPointBox();

    // A box's corners [yMin, xMin, yMax, xMax] in f64, as the reference
    // computes them.
    auto corners = [&](OpBuilder &b, Value batch,
                       Value box) -> std::array<Value, 4> {
      FloatArith f(b, loc);
      Value v[4];
      for (int k = 0; k < 4; ++k)
        v[k] = castScalar(b, loc,
                          tensor::ExtractOp::create(
                              b, loc, boxes, ValueRange{batch, box, ci(b, k)}),
                          f64);
      if (centerPointBox) {
        // [x_center, y_center, width, height]
        Value two = scalarConstant(b, loc, f64, 2.0);
        Value halfW = f.div(v[2], two), halfH = f.div(v[3], two);
        return {f.sub(v[1], halfH), f.sub(v[0], halfW), f.add(v[1], halfH),
                f.add(v[0], halfW)};
      }
      // std::min(x, y) = y < x ? y : x; std::max(x, y) = x < y ? y : x.
      auto stdMin = [&](Value x, Value y) {
        return f.select(f.lt(y, x), y, x);
      };
      auto stdMax = [&](Value x, Value y) {
        return f.select(f.lt(x, y), y, x);
      };
      return {stdMin(v[0], v[2]), stdMin(v[1], v[3]), stdMax(v[0], v[2]),
              stdMax(v[1], v[3])};
    };
    // A box's area from its corners, as suppressedByIoU computes it.
    auto area = [&](OpBuilder &b, const std::array<Value, 4> &c) -> Value {
      FloatArith f(b, loc);
      return f.mul(f.sub(c[3], c[1]), f.sub(c[2], c[0]));
    };
    // Whether boxes `a` and `o` (corners and areas) overlap by an IoU above
    // the threshold: suppressedByIoU.
    auto suppresses = [&](OpBuilder &b, const std::array<Value, 4> &a,
                          Value areaA, const std::array<Value, 4> &o,
                          Value areaO) -> Value {
      FloatArith f(b, loc);
      auto stdMin = [&](Value x, Value y) {
        return f.select(f.lt(y, x), y, x);
      };
      auto stdMax = [&](Value x, Value y) {
        return f.select(f.lt(x, y), y, x);
      };
      // !(x <= y), NaN included.
      auto notLE = [&](Value x, Value y) -> Value {
        return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UGT, x, y);
      };
      auto both = [&](Value x, Value y) -> Value {
        return arith::AndIOp::create(b, loc, x, y);
      };
      Value ix0 = stdMax(a[1], o[1]), ix1 = stdMin(a[3], o[3]);
      Value iy0 = stdMax(a[0], o[0]), iy1 = stdMin(a[2], o[2]);
      Value intersection = f.mul(f.sub(ix1, ix0), f.sub(iy1, iy0));
      Value unionArea = f.sub(f.add(areaA, areaO), intersection);
      Value zero = scalarConstant(b, loc, f64, 0.0);
      Value valid = both(notLE(ix1, ix0), notLE(iy1, iy0));
      valid = both(valid, notLE(intersection, zero));
      valid = both(valid, notLE(areaA, zero));
      valid = both(valid, notLE(areaO, zero));
      valid = both(valid, notLE(unionArea, zero));
      Value above =
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT,
                                f.div(intersection, unionArea), iouThreshold);
      return both(valid, above);
    };

    auto rowsType = RankedTensorType::get({staticBound, 3}, i64);
    Value rows = emptyTensor(b, loc, rowsType, boundSize);
    Value mask = emptyTensor(
        b, loc, RankedTensorType::get({boxesType.getDimSize(1)}, i1), maskSize);
    // The boxes kept so far in the current class, by the order they were
    // kept: their corners and area in f64, one row each, so that the test
    // of a candidate against them reads consecutive numbers (the boxes
    // themselves would be gathered and their corners recomputed per pair).
    Value keptBoxes = emptyTensor(
        b, loc, RankedTensorType::get({5, boxesType.getDimSize(1)}, f64),
        maskSize);
    Value zeroIndex = ci(b, 0), oneIndex = ci(b, 1);

    auto batchLoop = scf::ForOp::create(
        b, loc, zeroIndex, numBatches, oneIndex,
        ValueRange{rows, zeroIndex, mask, keptBoxes},
        [&](OpBuilder &b, Location loc, Value batch, ValueRange state) {
          auto classLoop = scf::ForOp::create(
              b, loc, ci(b, 0), numClasses, ci(b, 1), state,
              [&](OpBuilder &b, Location loc, Value cls, ValueRange state) {
                Value rows = state[0], start = state[1], mask = state[2];
                Value keptBoxes = state[3];
                auto score = [&](OpBuilder &b, Value box) -> Value {
                  return tensor::ExtractOp::create(b, loc, scores,
                                                   ValueRange{batch, cls, box});
                };
                // The candidates: mask and count.
                auto candidates = scf::ForOp::create(
                    b, loc, ci(b, 0), numBoxes, ci(b, 1),
                    ValueRange{mask, ci(b, 0)},
                    [&](OpBuilder &b, Location loc, Value box, ValueRange acc) {
                      Value keep = boolean(b, true);
                      if (scoreThreshold)
                        keep = arith::CmpFOp::create(
                            b, loc, arith::CmpFPredicate::OGT,
                            castScalar(b, loc, score(b, box), f64),
                            scoreThreshold);
                      Value m = tensor::InsertOp::create(b, loc, keep, acc[0],
                                                         ValueRange{box});
                      Value n = arith::AddIOp::create(
                          b, loc, acc[1],
                          arith::IndexCastOp::create(
                              b, loc, indexType,
                              arith::ExtUIOp::create(b, loc, i64, keep)));
                      scf::YieldOp::create(b, loc, ValueRange{m, n});
                    });
                // The boxes in the reference's order: highest score
                // first, equal scores by the lower box index.
                Value order = buildStableOrder(
                    b, loc, numBoxes,
                    [&](OpBuilder &b, Location loc, Value left, Value right) {
                      return Value(arith::CmpFOp::create(
                          b, loc, arith::CmpFPredicate::OGT, score(b, right),
                          score(b, left)));
                    });
                Value candidateMask = candidates.getResult(0);
                // One visit per box in that order; the candidates among
                // them are considered.
                auto visits = scf::ForOp::create(
                    b, loc, ci(b, 0), numBoxes, ci(b, 1),
                    ValueRange{rows, start, keptBoxes},
                    [&](OpBuilder &b, Location loc, Value position,
                        ValueRange state) {
                      Value rows = state[0], count = state[1];
                      Value keptBoxes = state[2];
                      Value box = arith::IndexCastOp::create(
                          b, loc, indexType,
                          tensor::ExtractOp::create(b, loc, order, position));
                      Value kept =
                          toI64(b, arith::SubIOp::create(b, loc, count, start));
                      Value room = arith::AndIOp::create(
                          b, loc,
                          arith::CmpIOp::create(b, loc,
                                                arith::CmpIPredicate::slt, kept,
                                                maxPerClass),
                          tensor::ExtractOp::create(b, loc, candidateMask,
                                                    ValueRange{box}));
                      auto visit = scf::IfOp::create(
                          b, loc, room,
                          [&](OpBuilder &b, Location loc) {
                            // Suppressed by a box kept before in this
                            // class?
                            std::array<Value, 4> candidate =
                                corners(b, batch, box);
                            Value candidateArea = area(b, candidate);
                            Value keptCount =
                                arith::SubIOp::create(b, loc, count, start);
                            auto overlap = scf::ForOp::create(
                                b, loc, ci(b, 0), keptCount, ci(b, 1),
                                ValueRange{boolean(b, false)},
                                [&](OpBuilder &b, Location loc, Value slot,
                                    ValueRange acc) {
                                  Value other[5];
                                  for (int k = 0; k < 5; ++k)
                                    other[k] = tensor::ExtractOp::create(
                                        b, loc, keptBoxes,
                                        ValueRange{ci(b, k), slot});
                                  Value hit = suppresses(
                                      b, candidate, candidateArea,
                                      {other[0], other[1], other[2], other[3]},
                                      other[4]);
                                  scf::YieldOp::create(
                                      b, loc,
                                      ValueRange{arith::OrIOp::create(
                                          b, loc, acc[0], hit)});
                                });
                            auto keep = scf::IfOp::create(
                                b, loc, overlap.getResult(0),
                                [&](OpBuilder &b, Location loc) {
                                  scf::YieldOp::create(
                                      b, loc,
                                      ValueRange{rows, count, keptBoxes});
                                },
                                [&](OpBuilder &b, Location loc) {
                                  Value kept = keptBoxes;
                                  Value keptFields[5] = {
                                      candidate[0], candidate[1], candidate[2],
                                      candidate[3], candidateArea};
                                  for (int k = 0; k < 5; ++k)
                                    kept = tensor::InsertOp::create(
                                        b, loc, keptFields[k], kept,
                                        ValueRange{ci(b, k), keptCount});
                                  Value r = rows;
                                  Value fields[3] = {toI64(b, batch),
                                                     toI64(b, cls),
                                                     toI64(b, box)};
                                  for (int k = 0; k < 3; ++k)
                                    r = tensor::InsertOp::create(
                                        b, loc, fields[k], r,
                                        ValueRange{count, ci(b, k)});
                                  Value next = arith::AddIOp::create(
                                      b, loc, count, ci(b, 1));
                                  scf::YieldOp::create(
                                      b, loc, ValueRange{r, next, kept});
                                });
                            scf::YieldOp::create(b, loc, keep.getResults());
                          },
                          [&](OpBuilder &b, Location loc) {
                            scf::YieldOp::create(
                                b, loc, ValueRange{rows, count, keptBoxes});
                          });
                      scf::YieldOp::create(b, loc, visit.getResults());
                    });
                scf::YieldOp::create(
                    b, loc,
                    ValueRange{visits.getResult(0), visits.getResult(1),
                               candidateMask, visits.getResult(2)});
              });
          scf::YieldOp::create(b, loc, classLoop.getResults());
        });

    Value count = batchLoop.getResult(1);
    Value selected = tensor::ExtractSliceOp::create(
        b, loc, RankedTensorType::get({ShapedType::kDynamic, 3}, i64),
        batchLoop.getResult(0),
        ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{count, b.getIndexAttr(3)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
    if (selected.getType() != resultType)
      selected = tensor::CastOp::create(b, loc, resultType, selected);
    rewriter.replaceOp(op, selected);
    return success();
  }
};

} // namespace

void populateLoomNonMaxSuppressionToLinalgPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<NonMaxSuppressionLowering>(converter, patterns.getContext());
}

} // namespace loom
