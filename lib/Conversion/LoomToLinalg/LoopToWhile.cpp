//===- LoopToWhile.cpp - loom.loop as scf.while ---------------------------===//
//
// Before the conversion of loom ops, each loom.loop becomes an scf.while on
// tensors whose body still holds loom ops; the conversion then lowers those
// ops in place, and scf's structural type conversion the loop's types
// (unsigned elements become signless):
//
//   scf.while (%i = 0, %go = condition, %v = carried..., %acc = empty...) {
//     scf.condition(%i < trip_count && %go) %i, %go, %v..., %acc...
//   } do {
//     <the body, its arguments: %i and %go as 0-D tensors, %v..., the
//      inputs>
//     scf.yield %i + 1, <yielded condition>, <yielded carried values>,
//               loom.concat(%acc, loom.unsqueeze(<scan value>))...
//   }
//
// A scan output grows by one row per iteration (the number of iterations
// is known only when the loop ends), so each iteration copies what it has:
// quadratic in the number of iterations, which is right for the short
// loops of exported models and not for long ones.
//
//===----------------------------------------------------------------------===//

#include "loom/Conversion/LoomToLinalg/LoomToLinalg.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace loom::lowering;

namespace loom {
namespace {

LogicalResult lowerLoop(LoopOp loop) {
  Location loc = loop.getLoc();
  IRRewriter rewriter(loop);
  Type i64 = rewriter.getI64Type();
  unsigned numCarried = loop.getCarried().size();
  Block &body = loop.getBody().front();
  auto yield = cast<YieldOp>(body.getTerminator());

  // The scan outputs start empty; their rows need static sizes.
  SmallVector<Value> scansInitial;
  SmallVector<RankedTensorType> scanTypes;
  for (unsigned k = 0; k < loop.getNumScanOutputs(); ++k) {
    auto row =
        cast<RankedTensorType>(yield.getValues()[1 + numCarried + k].getType());
    if (!row.hasStaticShape())
      return loop.emitOpError("scan output ")
             << k << " has rows of sizes known only at run time (" << row
             << "); the CPU target stacks rows of static sizes";
    SmallVector<int64_t> empty{0}, stacked{ShapedType::kDynamic};
    llvm::append_range(empty, row.getShape());
    llvm::append_range(stacked, row.getShape());
    auto emptyType = RankedTensorType::get(empty, row.getElementType());
    auto stackedType = RankedTensorType::get(stacked, row.getElementType());
    Value none = ConstantOp::create(
        rewriter, loc,
        DenseElementsAttr::get(emptyType, ArrayRef<Attribute>{}));
    scansInitial.push_back(
        tensor::CastOp::create(rewriter, loc, stackedType, none));
    scanTypes.push_back(stackedType);
  }

  Value tripCount = scalarOf(rewriter, loc, loop.getTripCount());
  SmallVector<Value> state{arith::ConstantIntOp::create(rewriter, loc, i64, 0),
                           scalarOf(rewriter, loc, loop.getCondition())};
  llvm::append_range(state, loop.getCarried());
  llvm::append_range(state, scansInitial);
  SmallVector<Type> stateTypes = llvm::to_vector(ValueRange(state).getTypes());
  SmallVector<Location> stateLocs(state.size(), loc);

  auto whileOp = scf::WhileOp::create(rewriter, loc, stateTypes, state);
  Block *before =
      rewriter.createBlock(&whileOp.getBefore(), {}, stateTypes, stateLocs);
  Value more = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::slt,
                                     before->getArgument(0), tripCount);
  Value go = arith::AndIOp::create(rewriter, loc, more, before->getArgument(1));
  scf::ConditionOp::create(rewriter, loc, go, before->getArguments());

  Block *after =
      rewriter.createBlock(&whileOp.getAfter(), {}, stateTypes, stateLocs);
  SmallVector<Value> arguments{
      tensor::FromElementsOp::create(
          rewriter, loc, RankedTensorType::get({}, i64), after->getArgument(0)),
      tensor::FromElementsOp::create(
          rewriter, loc, RankedTensorType::get({}, rewriter.getI1Type()),
          after->getArgument(1))};
  llvm::append_range(arguments, after->getArguments().slice(2, numCarried));
  llvm::append_range(arguments, loop.getInputs());
  rewriter.inlineBlockBefore(&body, after, after->end(), arguments);

  rewriter.setInsertionPoint(yield);
  SmallVector<Value> next{
      arith::AddIOp::create(
          rewriter, loc, after->getArgument(0),
          arith::ConstantIntOp::create(rewriter, loc, i64, 1)),
      scalarOf(rewriter, loc, yield.getValues()[0])};
  llvm::append_range(next, yield.getValues().slice(1, numCarried));
  for (auto [k, type] : llvm::enumerate(scanTypes)) {
    Value row = yield.getValues()[1 + numCarried + k];
    auto rowType = cast<RankedTensorType>(row.getType());
    SmallVector<int64_t> one{1};
    llvm::append_range(one, rowType.getShape());
    Value unsqueezed = UnsqueezeOp::create(
        rewriter, loc, RankedTensorType::get(one, rowType.getElementType()),
        row, rewriter.getDenseI64ArrayAttr({0}));
    next.push_back(ConcatOp::create(
        rewriter, loc, type,
        ValueRange{after->getArgument(2 + numCarried + k), unsqueezed},
        rewriter.getI64IntegerAttr(0)));
  }
  scf::YieldOp::create(rewriter, loc, next);
  rewriter.eraseOp(yield);

  rewriter.setInsertionPointAfter(whileOp);
  SmallVector<Value> results(whileOp.getResults().slice(2, numCarried).begin(),
                             whileOp.getResults().slice(2, numCarried).end());
  for (unsigned k = 0; k < scanTypes.size(); ++k) {
    Value stacked = whileOp.getResult(2 + numCarried + k);
    Type wanted = loop.getResult(numCarried + k).getType();
    results.push_back(
        stacked.getType() == wanted
            ? stacked
            : tensor::CastOp::create(rewriter, loc, wanted, stacked)
                  .getResult());
  }
  rewriter.replaceOp(loop, results);
  return success();
}

} // namespace

LogicalResult lowerLoopsToWhile(Operation *root) {
  SmallVector<LoopOp> loops;
  root->walk([&](LoopOp loop) { loops.push_back(loop); });
  for (LoopOp loop : loops)
    if (failed(lowerLoop(loop)))
      return failure();
  return success();
}

} // namespace loom
