//===- RunTimeChecks.cpp - Checks of what only the data can tell ----------===//
//
// Compiled code has no error path of its own: where the data can make an
// op invalid (an index outside its dimension, a size the model states
// wrongly, a range that never ends), the code tests for it, reports the
// failure through the runtime (loom/abi/checks.h) and goes on with values
// that keep every access inside its tensors. The runtime turns the report
// into an error when the code returns.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace loom::lowering {
namespace {

constexpr llvm::StringLiteral kIndexErrorEntry = "loom_rt_index_error";
constexpr llvm::StringLiteral kShapeErrorEntry = "loom_rt_shape_error";
constexpr llvm::StringLiteral kCheckFailedEntry = "loom_rt_check_failed";

/// The runtime function `entry` taking `numArgs` i64 values, declared once
/// per module.
void declareCheckEntry(OpBuilder &b, Location loc, ModuleOp module,
                       StringRef entry, unsigned numArgs) {
  if (module.lookupSymbol(entry))
    return;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  SmallVector<Type> args(numArgs, b.getI64Type());
  auto f = func::FuncOp::create(b, loc, entry, b.getFunctionType(args, {}));
  f.setPrivate();
}

/// The address (as an i64) of `text`, a NUL-terminated constant string of
/// the code.
Value constantString(OpBuilder &b, Location loc, ModuleOp module,
                     StringRef text) {
  std::string bytes = text.str();
  bytes.push_back('\0');
  std::string name;
  for (unsigned n = 0;; ++n) {
    name = "__loom_check_site_" + std::to_string(n);
    if (!module.lookupSymbol(name))
      break;
  }
  auto type = MemRefType::get({int64_t(bytes.size())}, b.getI8Type());
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    SmallVector<int8_t> data(bytes.begin(), bytes.end());
    memref::GlobalOp::create(
        b, loc, name, b.getStringAttr("private"), type,
        DenseElementsAttr::get(
            RankedTensorType::get({int64_t(bytes.size())}, b.getI8Type()),
            ArrayRef<int8_t>(data)),
        /*constant=*/true, /*alignment=*/nullptr);
  }
  Value global = memref::GetGlobalOp::create(b, loc, type, name);
  return arith::IndexCastOp::create(
      b, loc, b.getI64Type(),
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, global));
}

/// When `failed` holds: a call of the runtime's `entry` with `args` and the
/// address of `text` as its last argument.
void reportIf(OpBuilder &b, Location loc, Operation *op, Value failed,
              StringRef entry, ValueRange args, StringRef text) {
  auto module = op->getParentOfType<ModuleOp>();
  declareCheckEntry(b, loc, module, entry, args.size() + 1);
  scf::IfOp::create(b, loc, failed, [&](OpBuilder &nested, Location loc) {
    SmallVector<Value> operands(args);
    operands.push_back(constantString(nested, loc, module, text));
    func::CallOp::create(nested, loc, entry, TypeRange{}, operands);
    scf::YieldOp::create(nested, loc);
  });
}

Value toI64(OpBuilder &b, Location loc, Value index) {
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
}

} // namespace

std::string siteDescription(Operation *op) {
  std::string node;
  op->getLoc()->walk([&](Location loc) {
    if (auto name = dyn_cast<NameLoc>(loc)) {
      node = name.getName().str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  std::string name = op->getName().getStringRef().str();
  return node.empty() ? name : "node '" + node + "' (" + name + ")";
}

void checkIndices(OpBuilder &rewriter, Location loc, Operation *op,
                  Value indices, ArrayRef<int64_t> sizes, bool fromEnd,
                  ValueRange runTimeSizes) {
  auto type = cast<RankedTensorType>(indices.getType());
  if (type.hasStaticShape() && type.getNumElements() == 0)
    return;
  MLIRContext *ctx = rewriter.getContext();
  Type i64 = rewriter.getI64Type();
  int64_t rank = type.getRank();
  // (first offending index, its dimension's size); size 0: none found.
  auto pairType = RankedTensorType::get({2}, i64);
  Value init = arith::ConstantOp::create(
      rewriter, loc, DenseElementsAttr::get(pairType, ArrayRef<int64_t>{0, 0}));
  Value sizeTable;
  auto tableType = RankedTensorType::get({int64_t(sizes.size())}, i64);
  if (llvm::none_of(sizes, ShapedType::isDynamic)) {
    sizeTable = arith::ConstantOp::create(
        rewriter, loc, DenseElementsAttr::get(tableType, sizes));
  } else {
    // Sizes known only at run time (index values, in order).
    SmallVector<Value> elements;
    auto next = runTimeSizes.begin();
    for (int64_t size : sizes)
      elements.push_back(
          ShapedType::isDynamic(size)
              ? Value(arith::IndexCastOp::create(rewriter, loc, i64, *next++))
              : Value(arith::ConstantIntOp::create(rewriter, loc, size, 64)));
    sizeTable =
        tensor::FromElementsOp::create(rewriter, loc, tableType, elements);
  }
  SmallVector<AffineMap> maps{
      AffineMap::getMultiDimIdentityMap(rank + 1, ctx)
          .getSubMap(llvm::to_vector(llvm::seq<unsigned>(0, rank))),
      AffineMap::get(rank + 1, 0, {getAffineDimExpr(rank, ctx)}, ctx)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::reduction);
  iterators.push_back(utils::IteratorType::parallel);
  // The pair as a reduction over every index, the pair's two slots being
  // the parallel dimension: slot 0 keeps the first bad index, slot 1 its
  // size.
  Value found =
      linalg::GenericOp::create(
          rewriter, loc, TypeRange{pairType}, ValueRange{indices},
          ValueRange{init}, maps, iterators,
          [&](OpBuilder &b, Location loc, ValueRange args) {
            Value index = castScalar(b, loc, args[0], i64);
            Value position =
                rank == 0 || sizes.size() == 1
                    ? Value(arith::ConstantIndexOp::create(b, loc, 0))
                    : Value(linalg::IndexOp::create(b, loc, rank - 1));
            Value size = tensor::ExtractOp::create(b, loc, sizeTable, position);
            Value zero = arith::ConstantIntOp::create(b, loc, 0, 64);
            Value negSize =
                fromEnd ? Value(arith::SubIOp::create(b, loc, zero, size))
                        : zero;
            Value bad = arith::OrIOp::create(
                b, loc,
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, index,
                                      negSize),
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, index,
                                      size));
            Value slot = linalg::IndexOp::create(b, loc, rank);
            Value isIndexSlot = arith::CmpIOp::create(
                b, loc, arith::CmpIPredicate::eq, slot,
                arith::ConstantIndexOp::create(b, loc, 0));
            Value mine =
                arith::SelectOp::create(b, loc, isIndexSlot, index, size);
            // The slots are filled together, by the first bad index: the
            // accumulated size slot is 0 until then. Slot 0 cannot see
            // slot 1, so each slot tests `bad` and its own "already set".
            Value already = arith::CmpIOp::create(
                b, loc, arith::CmpIPredicate::ne, args[1],
                arith::ConstantIntOp::create(b, loc, 0, 64));
            Value take = arith::AndIOp::create(
                b, loc, bad,
                arith::XOrIOp::create(
                    b, loc, already,
                    arith::ConstantOp::create(b, loc, b.getBoolAttr(true))));
            linalg::YieldOp::create(
                b, loc,
                Value(arith::SelectOp::create(b, loc, take, mine, args[1])));
          })
          .getResult(0);
  Value zeroIndex = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value oneIndex = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Value index = tensor::ExtractOp::create(rewriter, loc, found, zeroIndex);
  Value size = tensor::ExtractOp::create(rewriter, loc, found, oneIndex);
  Value bad =
      arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ne, size,
                            arith::ConstantIntOp::create(rewriter, loc, 0, 64));
  reportIf(rewriter, loc, op, bad, kIndexErrorEntry, {index, size},
           siteDescription(op));
}

void checkCondition(OpBuilder &b, Location loc, Operation *op, Value failed,
                    StringRef problem, StringRef site) {
  reportIf(b, loc, op, failed, kCheckFailedEntry, {},
           (site.empty() ? siteDescription(op) : site.str()) + ": " +
               problem.str());
}

Value checkedCast(OpBuilder &b, Location loc, Operation *op, Value value,
                  RankedTensorType to, StringRef site) {
  auto from = cast<RankedTensorType>(value.getType());
  if (from == to)
    return value;
  Value allMatch;
  for (int64_t d = 0; d < to.getRank(); ++d) {
    if (to.isDynamicDim(d) || !from.isDynamicDim(d))
      continue;
    Value actual = tensor::DimOp::create(b, loc, value, d);
    Value stated = arith::ConstantIndexOp::create(b, loc, to.getDimSize(d));
    Value differs =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, actual, stated);
    reportIf(b, loc, op, differs, kShapeErrorEntry,
             {toI64(b, loc, actual), toI64(b, loc, stated),
              arith::ConstantIntOp::create(b, loc, d, 64)},
             site.empty() ? siteDescription(op) : site.str());
    Value matches =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, actual, stated);
    allMatch = allMatch
                   ? Value(arith::AndIOp::create(b, loc, allMatch, matches))
                   : matches;
  }
  if (!allMatch)
    return tensor::CastOp::create(b, loc, to, value);
  // A wrong size was reported; the code goes on with zeros of the stated
  // shape rather than reading past the computed tensor.
  auto choice = scf::IfOp::create(
      b, loc, allMatch,
      [&](OpBuilder &nested, Location loc) {
        scf::YieldOp::create(
            nested, loc, Value(tensor::CastOp::create(nested, loc, to, value)));
      },
      [&](OpBuilder &nested, Location loc) {
        Value zero = arith::ConstantOp::create(
            nested, loc, nested.getZeroAttr(to.getElementType()));
        SmallVector<Value> sizes;
        for (int64_t d = 0; d < to.getRank(); ++d)
          if (to.isDynamicDim(d))
            sizes.push_back(tensor::DimOp::create(nested, loc, value, d));
        Value empty = emptyTensor(nested, loc, to, sizes);
        scf::YieldOp::create(
            nested, loc,
            linalg::FillOp::create(nested, loc, zero, empty).getResult(0));
      });
  return choice.getResult(0);
}

} // namespace loom::lowering
