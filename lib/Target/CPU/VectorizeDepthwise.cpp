//===- VectorizeDepthwise.cpp - Depthwise convolutions as vector rows -----===//
//
// A depthwise convolution (one input channel per group: MobileNet's,
// EfficientNet's and ConvNeXt's KxK layers) does a handful of
// multiply-adds per output element, so what it costs is moving its data.
// Sent to oneDNN, each call reorders its NCHW input into a blocked layout
// and its output back, and ran at 1-6 GFLOP/s in mobilenet_v2 (a third of
// the model). Left to the generic lowering it is a 7-deep scalar loop.
//
// Here each output row is computed in vector pieces along its width: the
// piece's accumulator starts from the output (a zero or bias fill), each
// tap of the window adds a row piece of the input times the tap's weight
// (loaded and broadcast once per channel), and the piece is stored once.
// The input row piece is contiguous for stride 1; for stride s it is read
// s times as wide and its every s-th lane kept. Channels (and batches)
// are the outer loop, parallel when the convolution is large enough.
//
//===----------------------------------------------------------------------===//

#include "loom/Target/CPU/Passes.h"

#include "HostVectors.h"
#include "TargetUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace loom::cpu {
#define GEN_PASS_DEF_LOOMCPUVECTORIZEDEPTHWISEPASS
#include "loom/Target/CPU/Passes.h.inc"
} // namespace loom::cpu

using namespace mlir;

namespace loom::cpu {
namespace {

/// A depthwise convolution on buffers: output[n, m, oh, ow] +=
/// input[n, m floordiv M, oh * s + kh * d, ow * s + kw * d] *
/// filter[m, 0, kh, kw], in any loop order.
struct Depthwise {
  linalg::GenericOp op;
  Value input, filter, output;
  int64_t batch = 0, filters = 0, multiplier = 0;
  int64_t outHeight = 0, outWidth = 0, kernelHeight = 0, kernelWidth = 0;
  int64_t inWidth = 0;
  int64_t strides[2] = {1, 1}, dilations[2] = {1, 1};

  int64_t flops() const {
    return 2 * batch * filters * outHeight * outWidth * kernelHeight *
           kernelWidth;
  }
};

std::optional<Depthwise> matchDepthwise(linalg::GenericOp generic) {
  if (!generic.hasPureBufferSemantics() || generic.getNumDpsInputs() != 2 ||
      generic.getNumDpsInits() != 1 || generic.getNumLoops() != 7 ||
      !(isMultiplyAccumulate(generic) || isWideningMultiplyAccumulate(generic)))
    return std::nullopt;
  Depthwise conv;
  conv.op = generic;
  conv.input = generic.getDpsInputOperand(0)->get();
  conv.filter = generic.getDpsInputOperand(1)->get();
  conv.output = generic.getDpsInitOperand(0)->get();
  auto inputType = dyn_cast<MemRefType>(conv.input.getType());
  auto filterType = dyn_cast<MemRefType>(conv.filter.getType());
  auto outputType = dyn_cast<MemRefType>(conv.output.getType());
  if (!inputType || !filterType || !outputType || inputType.getRank() != 4 ||
      filterType.getRank() != 4 || outputType.getRank() != 4 ||
      !inputType.hasStaticShape() || !filterType.hasStaticShape() ||
      !outputType.hasStaticShape() || !outputType.getElementType().isF32() ||
      // f32 operands, or 16-bit ones summed in f32 (bf16/fp16 engines).
      !isa<FloatType>(inputType.getElementType()) ||
      inputType.getElementType() != filterType.getElementType() ||
      inputType.getElementTypeBitWidth() > 32 ||
      !innermostContiguous(inputType) || !innermostContiguous(outputType))
    return std::nullopt;
  // One input channel per filter: depthwise, `multiplier` filters each.
  int64_t channels = inputType.getDimSize(1);
  conv.filters = filterType.getDimSize(0);
  if (filterType.getDimSize(1) != 1 || channels == 0 ||
      conv.filters % channels || outputType.getDimSize(1) != conv.filters ||
      outputType.getDimSize(0) != inputType.getDimSize(0))
    return std::nullopt;
  conv.multiplier = conv.filters / channels;

  // The loops by their role, read from the output's and the filter's maps
  // (loom-cpu-contraction-order may have moved the reductions).
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  auto dimOf = [](AffineExpr e) -> std::optional<unsigned> {
    if (auto d = dyn_cast<AffineDimExpr>(e))
      return d.getPosition();
    return std::nullopt;
  };
  SmallVector<unsigned> out, fil;
  for (AffineExpr e : maps[2].getResults())
    if (std::optional<unsigned> d = dimOf(e))
      out.push_back(*d);
  for (AffineExpr e : maps[1].getResults())
    if (std::optional<unsigned> d = dimOf(e))
      fil.push_back(*d);
  if (out.size() != 4 || fil.size() != 4 || fil[0] != out[1])
    return std::nullopt;
  unsigned n = out[0], m = out[1], oh = out[2], ow = out[3];
  unsigned c = fil[1], kh = fil[2], kw = fil[3];
  SmallVector<utils::IteratorType> iterators = generic.getIteratorTypesArray();
  llvm::SmallDenseSet<unsigned> seen;
  for (unsigned d : {n, m, oh, ow, c, kh, kw})
    if (!seen.insert(d).second)
      return std::nullopt;
  for (unsigned d : {n, m, oh, ow})
    if (iterators[d] != utils::IteratorType::parallel)
      return std::nullopt;
  for (unsigned d : {c, kh, kw})
    if (iterators[d] != utils::IteratorType::reduction)
      return std::nullopt;

  MLIRContext *ctx = generic.getContext();
  AffineMap in = maps[0];
  AffineExpr channel = getAffineDimExpr(m, ctx).floorDiv(conv.multiplier) +
                       getAffineDimExpr(c, ctx);
  if (in.getNumResults() != 4 || dimOf(in.getResult(0)) != n ||
      simplifyAffineExpr(in.getResult(1), 7, 0) !=
          simplifyAffineExpr(channel, 7, 0))
    return std::nullopt;
  for (unsigned i = 0; i < 2; ++i) {
    auto terms = convolutionWindowTerms(in.getResult(2 + i), i ? ow : oh,
                                        i ? kw : kh, 7);
    if (failed(terms))
      return std::nullopt;
    conv.strides[i] = terms->first;
    conv.dilations[i] = terms->second;
  }
  conv.batch = outputType.getDimSize(0);
  conv.outHeight = outputType.getDimSize(2);
  conv.outWidth = outputType.getDimSize(3);
  conv.kernelHeight = filterType.getDimSize(2);
  conv.kernelWidth = filterType.getDimSize(3);
  conv.inWidth = inputType.getDimSize(3);
  // Every window inside the input (the padding is a separate copy).
  if ((conv.outHeight - 1) * conv.strides[0] +
              (conv.kernelHeight - 1) * conv.dilations[0] >=
          inputType.getDimSize(2) ||
      (conv.outWidth - 1) * conv.strides[1] +
              (conv.kernelWidth - 1) * conv.dilations[1] >=
          conv.inWidth)
    return std::nullopt;
  return conv;
}

/// Emits one depthwise convolution as loops over (batch x filters) and
/// output rows, and vector pieces along each row.
class Emitter {
public:
  Emitter(const Depthwise &conv, OpBuilder &b, int64_t width, int64_t block,
          bool parallel)
      : conv(conv), loc(conv.op->getLoc()), b(b), width(width), block(block),
        parallel(parallel),
        inputElement(cast<MemRefType>(conv.input.getType()).getElementType()) {}

  void emit() {
    Value planes = index(conv.batch * conv.filters);
    Value plane;
    if (parallel) {
      auto loop =
          scf::ParallelOp::create(b, loc, ValueRange{index(0)},
                                  ValueRange{planes}, ValueRange{index(1)});
      b.setInsertionPoint(loop.getBody()->getTerminator());
      plane = loop.getInductionVars()[0];
    } else {
      auto loop = scf::ForOp::create(b, loc, index(0), planes, index(1));
      b.setInsertionPoint(loop.getBody()->getTerminator());
      plane = loop.getInductionVar();
    }
    Value filters = index(conv.filters);
    batchIndex = arith::DivUIOp::create(b, loc, plane, filters);
    filterIndex = arith::RemUIOp::create(b, loc, plane, filters);
    channelIndex =
        arith::DivUIOp::create(b, loc, filterIndex, index(conv.multiplier));
    // The window's weights, one scalar each, loaded (and widened to f32)
    // once per filter.
    for (int64_t kh = 0; kh < conv.kernelHeight; ++kh)
      for (int64_t kw = 0; kw < conv.kernelWidth; ++kw)
        weights.push_back(widened(memref::LoadOp::create(
            b, loc, conv.filter,
            ValueRange{filterIndex, index(0), index(kh), index(kw)})));
    auto rows =
        scf::ForOp::create(b, loc, index(0), index(conv.outHeight), index(1));
    b.setInsertionPoint(rows.getBody()->getTerminator());
    row = rows.getInductionVar();
    rowPieces();
  }

private:
  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }

  /// Whether a piece of `pieceWidth` outputs from column `start` may read
  /// its input rows `stride` times as wide without leaving them.
  bool wideReadFits(int64_t start, int64_t pieceWidth) const {
    int64_t s = conv.strides[1];
    int64_t last = start * s + (conv.kernelWidth - 1) * conv.dilations[1] +
                   pieceWidth * s - 1;
    return last < conv.inWidth;
  }

  /// A piece of the current row: outputs [start, start + width).
  struct Piece {
    Value start;
    int64_t width;
    bool wideRead;
  };

  /// The row's pieces: full vectors, then halving pieces for the rest, in
  /// blocks of up to `block` pieces that share each tap's weight. When the
  /// row holds many blocks, a loop over the blocks of full pieces whose
  /// input reads fit the row comes first.
  void rowPieces() {
    int64_t full = conv.outWidth / width;
    int64_t looped = 0;
    if (full >= 2 * block) {
      int64_t fitting = full;
      while (fitting > 0 && !wideReadFits((fitting - 1) * width, width))
        --fitting;
      looped = fitting / block * block;
      auto loop = scf::ForOp::create(b, loc, index(0), index(looped * width),
                                     index(block * width));
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(loop.getBody()->getTerminator());
      SmallVector<Piece> pieces;
      for (int64_t i = 0; i < block; ++i)
        pieces.push_back(
            {i ? Value(arith::AddIOp::create(b, loc, loop.getInductionVar(),
                                             index(i * width)))
               : loop.getInductionVar(),
             width, /*wideRead=*/true});
      emitBlock(pieces);
    }
    SmallVector<Piece> rest;
    int64_t start = looped * width;
    for (int64_t w = width; w >= 1; w /= 2) {
      while (conv.outWidth - start >= w) {
        rest.push_back({index(start), w, wideReadFits(start, w)});
        start += w;
      }
    }
    for (size_t i = 0; i < rest.size(); i += block)
      emitBlock(ArrayRef<Piece>(rest).slice(
          i, std::min<size_t>(block, rest.size() - i)));
  }

  /// The weight of tap `tap` in every lane of a `pieceWidth` vector.
  Value broadcastWeight(unsigned tap, int64_t pieceWidth) {
    Value &slot = broadcasts[{tap, pieceWidth}];
    if (!slot) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointAfterValue(weights[tap]);
      slot = vector::BroadcastOp::create(
          b, loc, VectorType::get({pieceWidth}, b.getF32Type()), weights[tap]);
    }
    return slot;
  }

  /// A block of pieces of the current row: their accumulators start from
  /// the output; for each tap, its weight broadcast once and every
  /// piece's input row piece times it added; then the accumulators are
  /// stored. With `wideRead`, an input row piece is read `stride` times as
  /// wide as its outputs (that many lanes are known to fit the row);
  /// otherwise exactly as far as its last used element.
  void emitBlock(ArrayRef<Piece> pieces) {
    MLIRContext *ctx = b.getContext();
    auto vectorOf = [&](int64_t n) {
      return VectorType::get({n}, b.getF32Type());
    };
    AffineMap minor = AffineMap::getMinorIdentityMap(4, 1, ctx);
    int64_t s = conv.strides[1];
    SmallVector<Value> accs, firstColumns;
    for (const Piece &piece : pieces) {
      accs.push_back(vector::TransferReadOp::create(
          b, loc, vectorOf(piece.width), conv.output,
          ValueRange{batchIndex, filterIndex, row, piece.start},
          /*padding=*/std::nullopt, minor, ArrayRef<bool>{true}));
      firstColumns.push_back(
          s == 1 ? piece.start
                 : arith::MulIOp::create(b, loc, piece.start, index(s)));
    }
    Value firstRow = arith::MulIOp::create(b, loc, row, index(conv.strides[0]));
    auto contract =
        arith::FastMathFlagsAttr::get(ctx, arith::FastMathFlags::contract);
    unsigned tap = 0;
    for (int64_t kh = 0; kh < conv.kernelHeight; ++kh) {
      Value inRow = arith::AddIOp::create(b, loc, firstRow,
                                          index(kh * conv.dilations[0]));
      for (int64_t kw = 0; kw < conv.kernelWidth; ++kw, ++tap) {
        for (auto [i, piece] : llvm::enumerate(pieces)) {
          int64_t readWidth = s == 1 || piece.wideRead
                                  ? piece.width * s
                                  : (piece.width - 1) * s + 1;
          Value inColumn = arith::AddIOp::create(b, loc, firstColumns[i],
                                                 index(kw * conv.dilations[1]));
          Value in = vector::TransferReadOp::create(
              b, loc, VectorType::get({readWidth}, inputElement), conv.input,
              ValueRange{batchIndex, channelIndex, inRow, inColumn},
              /*padding=*/std::nullopt, minor, ArrayRef<bool>{true});
          in = widened(in);
          if (s != 1) {
            SmallVector<int64_t> lanes;
            for (int64_t lane = 0; lane < piece.width; ++lane)
              lanes.push_back(lane * s);
            in = vector::ShuffleOp::create(b, loc, in, in, lanes);
          }
          // acc + in * w, fused into one FMA where the host has it.
          Value product = arith::MulFOp::create(
              b, loc, in, broadcastWeight(tap, piece.width), contract);
          accs[i] = arith::AddFOp::create(b, loc, accs[i], product, contract);
        }
      }
    }
    for (auto [i, piece] : llvm::enumerate(pieces))
      vector::TransferWriteOp::create(
          b, loc, accs[i], conv.output,
          ValueRange{batchIndex, filterIndex, row, piece.start},
          ArrayRef<bool>{true});
  }

  /// `v` (a scalar or vector of the operands' type) in f32.
  Value widened(Value v) {
    if (inputElement.isF32())
      return v;
    Type f32 = b.getF32Type();
    if (auto vector = dyn_cast<VectorType>(v.getType()))
      return arith::ExtFOp::create(b, loc, vector.clone(f32), v);
    return arith::ExtFOp::create(b, loc, f32, v);
  }

  const Depthwise &conv;
  Location loc;
  OpBuilder &b;
  int64_t width;
  /// Pieces computed together, sharing each tap's weight.
  int64_t block;
  bool parallel;
  /// The operands' element type: f32, or a 16-bit float widened to f32.
  Type inputElement;
  Value batchIndex, filterIndex, channelIndex, row;
  SmallVector<Value> weights;
  llvm::DenseMap<std::pair<unsigned, int64_t>, Value> broadcasts;
};

class LoomCPUVectorizeDepthwisePass
    : public impl::LoomCPUVectorizeDepthwisePassBase<
          LoomCPUVectorizeDepthwisePass> {
public:
  using LoomCPUVectorizeDepthwisePassBase::LoomCPUVectorizeDepthwisePassBase;

  void runOnOperation() override {
    auto [hostBits, hostRegisters] = hostVectorRegisters();
    unsigned bits = vectorBits ? unsigned(vectorBits) : hostBits;
    unsigned numRegisters = registers ? unsigned(registers) : hostRegisters;
    int64_t lanes = std::max<int64_t>(1, bits / 32);
    // Accumulators for half the registers, less the input piece and the
    // weight: 6 with 16 registers, 14 with 32.
    int64_t block = std::max<int64_t>(1, (int64_t(numRegisters) - 4) / 2);
    SmallVector<Depthwise> convs;
    getOperation().walk([&](linalg::GenericOp op) {
      if (std::optional<Depthwise> conv = matchDepthwise(op))
        convs.push_back(*conv);
    });
    IRRewriter rewriter(&getContext());
    for (const Depthwise &conv : convs) {
      rewriter.setInsertionPoint(conv.op);
      // Inside a loop already parallel (a pipeline stage's), serial.
      bool parallel = parallelFlops > 0 && conv.flops() >= parallelFlops &&
                      !conv.op->getParentOfType<scf::ParallelOp>();
      Emitter(conv, rewriter, lanes, block, parallel).emit();
      rewriter.eraseOp(conv.op);
    }
  }
};

} // namespace
} // namespace loom::cpu
