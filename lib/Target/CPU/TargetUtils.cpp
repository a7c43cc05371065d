//===- TargetUtils.cpp - Helpers shared by the CPU target's passes --------===//

#include "TargetUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;

namespace loom::cpu {

func::FuncOp declareRuntimeFunction(ModuleOp module, StringRef name,
                                    TypeRange inputs) {
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  OpBuilder b(module.getBodyRegion());
  b.setInsertionPointToStart(module.getBody());
  auto f = func::FuncOp::create(b, module.getLoc(), name,
                                b.getFunctionType(inputs, {}));
  f.setPrivate();
  return f;
}

Value contiguousView(OpBuilder &b, Location loc, MemRefType type, Value base,
                     ArrayRef<OpFoldResult> sizes) {
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> mixed(sizes);
  for (int64_t d = 0; d < rank; ++d)
    if (!type.isDynamicDim(d))
      mixed[d] = b.getIndexAttr(type.getDimSize(d));
  SmallVector<OpFoldResult> strides(rank);
  OpFoldResult stride = b.getIndexAttr(1);
  for (int64_t d = rank - 1; d >= 0; --d) {
    strides[d] = stride;
    std::optional<int64_t> a = getConstantIntValue(stride);
    std::optional<int64_t> s = getConstantIntValue(mixed[d]);
    if (a && s) {
      stride = b.getIndexAttr(*a * *s);
      continue;
    }
    stride = arith::MulIOp::create(
                 b, loc, getValueOrCreateConstantIndexOp(b, loc, stride),
                 getValueOrCreateConstantIndexOp(b, loc, mixed[d]))
                 .getResult();
  }
  return memref::ReinterpretCastOp::create(b, loc, type, base,
                                           b.getIndexAttr(0), mixed, strides);
}

Value addressOf(OpBuilder &b, Location loc, Value buffer) {
  Value index = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
}

/// The address of `buffer`'s first element: its aligned pointer, plus its
/// offset when that is not 0.
Value firstElementAddress(OpBuilder &b, Location loc, Value buffer) {
  Value address = addressOf(b, loc, buffer);
  auto type = cast<MemRefType>(buffer.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (succeeded(type.getStridesAndOffset(strides, offset)) && offset == 0)
    return address;
  auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, buffer);
  Value elements =
      arith::IndexCastOp::create(b, loc, b.getI64Type(), metadata.getOffset());
  Value elementBytes = arith::ConstantIntOp::create(
      b, loc, b.getI64Type(), type.getElementTypeBitWidth() / 8);
  return arith::AddIOp::create(
      b, loc, address, arith::MulIOp::create(b, loc, elements, elementBytes));
}

Value viewedBuffer(Value value) {
  while (true) {
    if (auto view = value.getDefiningOp<ViewLikeOpInterface>()) {
      if (isa<memref::ViewOp>(view.getOperation()))
        break;
      value = view.getViewSource();
      continue;
    }
    // A buffer a loop carries and yields unchanged (what bufferization
    // makes of a loop that writes slices of a tensor, loom-cpu-batch-loops)
    // is the loop's initial buffer.
    auto carried = dyn_cast<BlockArgument>(value);
    auto loop = carried
                    ? dyn_cast<scf::ForOp>(carried.getOwner()->getParentOp())
                    : scf::ForOp();
    OpOperand *yielded = loop ? loop.getTiedLoopYieldedValue(carried) : nullptr;
    if (!yielded || yielded->get() != value)
      break;
    value = loop.getTiedLoopInit(carried)->get();
  }
  return value;
}

namespace {

template <typename AddOp, typename MulOp>
bool isMultiplyAccumulateOf(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  if (body->getNumArguments() != 3 ||
      !llvm::hasNItems(body->without_terminator(), 2))
    return false;
  auto add = body->getTerminator()->getOperand(0).getDefiningOp<AddOp>();
  if (!add)
    return false;
  Value acc = body->getArgument(2);
  Value product = add.getLhs() == acc   ? add.getRhs()
                  : add.getRhs() == acc ? add.getLhs()
                                        : Value();
  auto mul = product ? product.getDefiningOp<MulOp>() : nullptr;
  if (!mul)
    return false;
  Value x = body->getArgument(0), y = body->getArgument(1);
  return (mul.getLhs() == x && mul.getRhs() == y) ||
         (mul.getLhs() == y && mul.getRhs() == x);
}

} // namespace

bool isMultiplyAccumulate(linalg::LinalgOp op) {
  return isMultiplyAccumulateOf<arith::AddFOp, arith::MulFOp>(op) ||
         isMultiplyAccumulateOf<arith::AddIOp, arith::MulIOp>(op);
}

bool isWideningMultiplyAccumulate(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  if (body->getNumArguments() != 3 ||
      !llvm::hasNItems(body->without_terminator(), 4))
    return false;
  auto add =
      body->getTerminator()->getOperand(0).getDefiningOp<arith::AddFOp>();
  Value acc = body->getArgument(2);
  if (!add)
    return false;
  Value product = add.getLhs() == acc   ? add.getRhs()
                  : add.getRhs() == acc ? add.getLhs()
                                        : Value();
  auto mul = product ? product.getDefiningOp<arith::MulFOp>() : nullptr;
  if (!mul)
    return false;
  auto widened = [&](Value v) -> Value {
    auto ext = v.getDefiningOp<arith::ExtFOp>();
    return ext && ext.getType() == acc.getType() ? ext.getIn() : Value();
  };
  Value x = widened(mul.getLhs()), y = widened(mul.getRhs());
  Value in0 = body->getArgument(0), in1 = body->getArgument(1);
  return (x == in0 && y == in1) || (x == in1 && y == in0);
}

std::optional<unsigned> byteProductUnsignedInput(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  if (body->getNumArguments() != 3 ||
      !body->getArgument(0).getType().isInteger(8) ||
      !body->getArgument(1).getType().isInteger(8) ||
      !body->getArgument(2).getType().isInteger(32) ||
      !llvm::hasNItems(body->without_terminator(), 4))
    return std::nullopt;
  auto add =
      body->getTerminator()->getOperand(0).getDefiningOp<arith::AddIOp>();
  Value acc = body->getArgument(2);
  if (!add || (add.getLhs() != acc && add.getRhs() != acc))
    return std::nullopt;
  auto mul = (add.getLhs() == acc ? add.getRhs() : add.getLhs())
                 .getDefiningOp<arith::MulIOp>();
  if (!mul)
    return std::nullopt;
  auto zext = mul.getLhs().getDefiningOp<arith::ExtUIOp>();
  auto sext = mul.getRhs().getDefiningOp<arith::ExtSIOp>();
  if (!zext || !sext) {
    zext = mul.getRhs().getDefiningOp<arith::ExtUIOp>();
    sext = mul.getLhs().getDefiningOp<arith::ExtSIOp>();
  }
  if (!zext || !sext)
    return std::nullopt;
  for (unsigned x : {0u, 1u})
    if (zext.getIn() == body->getArgument(x) &&
        sext.getIn() == body->getArgument(1 - x))
      return x;
  return std::nullopt;
}

Value readStridedRow(OpBuilder &b, Location loc, Value buffer,
                     ValueRange indices, int64_t width, int64_t stride) {
  Type element = cast<MemRefType>(buffer.getType()).getElementType();
  int64_t span = (width - 1) * stride + 1;
  int64_t loaded = int64_t(llvm::PowerOf2Ceil(span));
  auto loadedType = VectorType::get({loaded}, element);
  Value row;
  if (loaded == span) {
    row = vector::LoadOp::create(b, loc, loadedType, buffer, indices);
  } else {
    Value mask = vector::ConstantMaskOp::create(
        b, loc, VectorType::get({loaded}, b.getI1Type()),
        ArrayRef<int64_t>{span});
    Value zeros = arith::ConstantOp::create(b, loc, loadedType,
                                            b.getZeroAttr(loadedType));
    row = vector::MaskedLoadOp::create(b, loc, loadedType, buffer, indices,
                                       mask, zeros);
  }
  if (stride == 1 && loaded == width)
    return row;
  SmallVector<int64_t> picked;
  for (int64_t i = 0; i < width; ++i)
    picked.push_back(i * stride);
  return vector::ShuffleOp::create(b, loc, row, row, picked);
}

void replaceRightOperand(RewriterBase &rewriter, linalg::LinalgOp op, Value rhs,
                         AffineMap rhsMap) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  maps[1] = rhsMap;
  rewriter.setInsertionPoint(op);
  auto generic = linalg::GenericOp::create(
      rewriter, op.getLoc(), op->getResultTypes(),
      ValueRange{op.getDpsInputs()[0], rhs}, op.getDpsInits(), maps,
      op.getIteratorTypesArray());
  IRMapping mapping;
  op->getRegion(0).cloneInto(&generic.getRegion(), mapping);
  rewriter.replaceOp(op, generic->getResults());
}

std::optional<std::tuple<Value, int64_t, int64_t>> arenaRange(Value buffer) {
  auto view = buffer.getDefiningOp<memref::ViewOp>();
  if (!view)
    return std::nullopt;
  std::optional<int64_t> offset = getConstantIntValue(view.getByteShift());
  auto type = cast<MemRefType>(view.getType());
  if (!offset || !type.hasStaticShape())
    return std::nullopt;
  int64_t bytes = type.getNumElements() * type.getElementTypeBitWidth() / 8;
  return std::make_tuple(view.getSource(), *offset, *offset + bytes);
}

bool mayOverlap(Value a, Value b) {
  a = viewedBuffer(a);
  b = viewedBuffer(b);
  if (a == b)
    return true;
  auto isParameterOrGlobal = [](Value v) {
    if (auto argument = dyn_cast<BlockArgument>(v))
      return argument.getOwner()->isEntryBlock() &&
             isa<func::FuncOp>(argument.getOwner()->getParentOp());
    return bool(v.getDefiningOp<memref::GetGlobalOp>());
  };
  // A buffer allocated on its own (a panel of a register-tiled product,
  // a temporary the memory plan left out of the arena) shares bytes only
  // with the views carved out of it (the arena's).
  auto isAllocation = [](Value v) {
    return v.getDefiningOp<memref::AllocOp>() ||
           v.getDefiningOp<memref::AllocaOp>();
  };
  auto viewSource = [](Value v) {
    auto view = v.getDefiningOp<memref::ViewOp>();
    return view ? view.getSource() : Value();
  };
  if ((isAllocation(a) && viewSource(b) != a) ||
      (isAllocation(b) && viewSource(a) != b))
    return false;
  auto ra = arenaRange(a), rb = arenaRange(b);
  if (ra && rb)
    return std::get<0>(*ra) == std::get<0>(*rb) &&
           std::get<1>(*ra) < std::get<2>(*rb) &&
           std::get<1>(*rb) < std::get<2>(*ra);
  if ((ra && isParameterOrGlobal(b)) || (rb && isParameterOrGlobal(a)))
    return false;
  return !(isParameterOrGlobal(a) && isParameterOrGlobal(b));
}

FailureOr<std::pair<int64_t, int64_t>>
convolutionWindowTerms(AffineExpr e, unsigned out, unsigned kernel,
                       unsigned numDims) {
  MLIRContext *ctx = e.getContext();
  auto valueAt = [&](unsigned dim) -> std::optional<int64_t> {
    SmallVector<AffineExpr> values(numDims, getAffineConstantExpr(0, ctx));
    values[dim] = getAffineConstantExpr(1, ctx);
    auto c = dyn_cast<AffineConstantExpr>(
        simplifyAffineExpr(e.replaceDims(values), numDims, 0));
    return c ? std::optional<int64_t>(c.getValue()) : std::nullopt;
  };
  std::optional<int64_t> stride = valueAt(out), dilation = valueAt(kernel);
  if (!stride || !dilation || *stride < 1 || *dilation < 1)
    return failure();
  AffineExpr expected = getAffineDimExpr(out, ctx) * *stride +
                        getAffineDimExpr(kernel, ctx) * *dilation;
  if (simplifyAffineExpr(expected, numDims, 0) !=
      simplifyAffineExpr(e, numDims, 0))
    return failure();
  return std::make_pair(*stride, *dilation);
}

ArrayRef<char> denseBytes(ElementsAttr attr) {
  auto type = cast<ShapedType>(attr.getType());
  if (!type.hasStaticShape())
    return {};
  ArrayRef<char> bytes;
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    if (dense.isSplat())
      return {};
    bytes = dense.getRawData();
  } else if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
    if (AsmResourceBlob *blob = resource.getRawHandle().getBlob())
      bytes = blob->getData();
  }
  int64_t size = type.getNumElements() * type.getElementTypeBitWidth() / 8;
  return int64_t(bytes.size()) == size ? bytes : ArrayRef<char>();
}

StringGlobals::StringGlobals(ModuleOp module, StringRef prefix)
    : module(module), symbols(module), prefix(prefix.str()) {}

memref::GlobalOp StringGlobals::get(OpBuilder &b, StringRef text) {
  memref::GlobalOp &global = byText[text];
  if (global)
    return global;
  std::string name;
  do
    name = prefix + std::to_string(nextNumber++);
  while (symbols.lookup(name));
  SmallVector<int8_t> bytes(text.begin(), text.end());
  bytes.push_back(0);
  auto tensorType =
      RankedTensorType::get({int64_t(bytes.size())}, b.getI8Type());
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  global = memref::GlobalOp::create(
      b, module.getLoc(), name, b.getStringAttr("private"),
      MemRefType::get(tensorType.getShape(), b.getI8Type()),
      DenseElementsAttr::get(tensorType, ArrayRef<int8_t>(bytes)),
      /*constant=*/true, /*alignment=*/nullptr);
  symbols.insert(global);
  return global;
}

bool innermostContiguous(Type type, bool allowScalar) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref)
    return false;
  if (memref.getRank() == 0)
    return allowScalar;
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(memref.getStridesAndOffset(strides, offset)) &&
         strides.back() == 1;
}

ElementsAttr constantLike(ElementsAttr like, RankedTensorType type,
                          ArrayRef<char> data, StringRef suffix) {
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(like)) {
    AsmResourceBlob blob =
        HeapAsmResourceBlob::allocateAndCopyWithAlign(data, alignof(uint64_t));
    std::string name = (resource.getRawHandle().getKey() + suffix).str();
    return DenseResourceElementsAttr::get(type, name, std::move(blob));
  }
  return DenseElementsAttr::getFromRawBuffer(type, data);
}

} // namespace loom::cpu
