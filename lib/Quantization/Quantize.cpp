//===- Quantize.cpp - Calibrated post-training quantization ---------------===//
//
// -loom-quantize in three steps:
//   1. calibration: a copy of the function that also returns every
//      activation feeding a quantizable contraction runs on each sample in
//      the reference executor, and a range is taken from the observed values;
//   2. quantize/dequantize pairs are inserted on those activations (with the
//      calibrated parameters) and the constant weights are replaced by
//      quantized constants and a dequantize;
//   3. the QDQ folding patterns turn each dequantize -> contraction into
//      loom.qmatmul / loom.qconv.
// Step 2 writes exactly the QDQ form an exporter would, so models quantized
// elsewhere and models quantized here meet in the same patterns.
//
//===----------------------------------------------------------------------===//

#include "loom/Quantization/Quantize.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/Transforms/FloatConstants.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"
#include "loom/Reference/Interpreter.h"
#include "loom/TensorIO/TensorIO.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cmath>

namespace loom {
#define GEN_PASS_DEF_LOOMQUANTIZEPASS
#include "loom/Quantization/Passes.h.inc"
} // namespace loom

using namespace mlir;
using namespace loom;
using reference::Tensor;

namespace {

/// The largest finite f8E4M3FN value.
constexpr double kFloat8Max = 448.0;

RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// A contraction to quantize: its activation operand and constant weight.
struct Contraction {
  Operation *op;
  unsigned activationIndex, weightIndex;
  /// The weight dimension that indexes output channels.
  int64_t channelAxis;
};

/// Whether `v` is an f32 constant whose values can be read.
bool isConstantF32(Value v) {
  return tensorType(v).getElementType().isF32() &&
         matchPattern(v, m_Constant()) && readFloatConstant(v).has_value();
}

/// The contractions of `func` that `options` quantizes: f32 matmuls with a
/// constant 2-D right operand and (int8) f32 convolutions with a constant
/// weight, whose other operand is computed.
SmallVector<Contraction> findContractions(func::FuncOp func,
                                          const QuantizeOptions &options) {
  SmallVector<Contraction> found;
  func.walk([&](Operation *op) {
    if (auto matmul = dyn_cast<MatMulOp>(op)) {
      if (tensorType(matmul.getResult()).getElementType().isF32() &&
          tensorType(matmul.getLhs()).getRank() >= 2 &&
          tensorType(matmul.getRhs()).getRank() == 2 &&
          isConstantF32(matmul.getRhs()) && !isConstantF32(matmul.getLhs()))
        found.push_back({op, 0, 1, 1});
    } else if (auto conv = dyn_cast<ConvOp>(op)) {
      if (options.type == QuantType::Int8 &&
          tensorType(conv.getResult()).getElementType().isF32() &&
          isConstantF32(conv.getWeight()) && !isConstantF32(conv.getInput()))
        found.push_back({op, 0, 1, 0});
    }
  });
  return found;
}

/// The values one activation took over all samples (percentile), or only
/// their extremes (min-max).
struct Observation {
  double min = INFINITY, max = -INFINITY;
  std::vector<double> values;
};

/// Runs a copy of `func` that also returns `activations` on every sample and
/// records what they held.
FailureOr<SmallVector<Observation>> observe(func::FuncOp func,
                                            ArrayRef<Value> activations,
                                            ArrayRef<CalibrationSample> samples,
                                            bool keepValues) {
  if (!func.getBody().hasOneBlock())
    return func.emitError("calibration needs a function of one block");
  IRMapping mapping;
  OwningOpRef<ModuleOp> scratch = ModuleOp::create(func.getLoc());
  auto probe = cast<func::FuncOp>(func->clone(mapping));
  scratch->push_back(probe);
  auto ret = cast<func::ReturnOp>(probe.getBody().front().getTerminator());
  SmallVector<Value> results(ret.getOperands());
  for (Value a : activations)
    results.push_back(mapping.lookup(a));
  ret->setOperands(results);
  probe.setType(FunctionType::get(func.getContext(), probe.getArgumentTypes(),
                                  ValueRange(results).getTypes()));

  size_t first = func.getNumResults();
  SmallVector<Observation> seen(activations.size());
  for (const CalibrationSample &sample : samples) {
    FailureOr<SmallVector<Tensor>> outputs = reference::execute(probe, sample);
    if (failed(outputs))
      return func.emitError("a calibration run failed (see above)");
    for (auto [i, obs] : llvm::enumerate(seen)) {
      const Tensor &t = (*outputs)[first + i];
      for (int64_t e = 0, n = t.numElements(); e < n; ++e) {
        double v = t.getDouble(e);
        if (std::isnan(v))
          continue;
        obs.min = std::min(obs.min, v);
        obs.max = std::max(obs.max, v);
        if (keepValues)
          obs.values.push_back(v);
      }
    }
  }
  return seen;
}

/// The range to quantize, always holding 0 (so that 0 is exact, as padding
/// and ReLU need).
std::pair<double, double> chooseRange(Observation &obs,
                                      const QuantizeOptions &options) {
  double lo = obs.min, hi = obs.max;
  if (options.calibration == CalibrationMethod::Percentile &&
      !obs.values.empty()) {
    std::vector<double> &v = obs.values;
    auto at = [&](double fraction) {
      size_t k = static_cast<size_t>(
          std::llround(fraction * static_cast<double>(v.size() - 1)));
      std::nth_element(v.begin(), v.begin() + k, v.end());
      return v[k];
    };
    hi = at(options.percentile / 100.0);
    lo = at(1.0 - options.percentile / 100.0);
  }
  if (!std::isfinite(lo))
    lo = 0;
  if (!std::isfinite(hi))
    hi = 0;
  return {std::min(lo, 0.0), std::max(hi, 0.0)};
}

Value scalarConstant(OpBuilder &b, Location loc, Type type, Attribute value) {
  auto tensor = RankedTensorType::get({}, type);
  return ConstantOp::create(b, loc, DenseElementsAttr::get(tensor, value));
}

/// dequantize(quantize(x)) with the parameters of [lo, hi], right after the
/// definition of `x`.
Value insertActivationQDQ(OpBuilder &b, Value x, double lo, double hi,
                          QuantType type) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointAfterValue(x);
  Location loc = x.getLoc();
  Type f32 = b.getF32Type();
  RankedTensorType xType = tensorType(x);
  if (type == QuantType::FP8) {
    double amax = std::max(-lo, hi);
    double scale = amax > 0 ? amax / kFloat8Max : 1.0;
    Value s = scalarConstant(b, loc, f32, b.getF32FloatAttr(scale));
    Value q = QuantizeOp::create(
        b, loc, xType.clone(Float8E4M3FNType::get(b.getContext())), x, s,
        Value());
    return DequantizeOp::create(b, loc, xType, q, s, Value());
  }
  // uint8, asymmetric: [lo, hi] maps onto [0, 255] with 0 exact.
  double scale = hi > lo ? (hi - lo) / 255.0 : 1.0;
  // Round the scale to f32 first: the zero point must be computed from the
  // scale the program will use.
  scale = static_cast<float>(scale);
  double zeroPoint = std::clamp(std::nearbyint(-lo / scale), 0.0, 255.0);
  auto u8 = IntegerType::get(b.getContext(), 8, IntegerType::Unsigned);
  Value s = scalarConstant(b, loc, f32, b.getF32FloatAttr(scale));
  Value z = scalarConstant(
      b, loc, u8, b.getIntegerAttr(u8, static_cast<int64_t>(zeroPoint)));
  Value q = QuantizeOp::create(b, loc, xType.clone(u8), x, s, z);
  return DequantizeOp::create(b, loc, xType, q, s, z);
}

/// Replaces the constant weight operand of `c` by dequantize(quantized
/// constant): int8 symmetric per channel (or per tensor), or f8E4M3FN per
/// tensor.
void quantizeWeight(OpBuilder &b, const Contraction &c,
                    const QuantizeOptions &options) {
  Value weight = c.op->getOperand(c.weightIndex);
  RankedTensorType type = tensorType(weight);
  SmallVector<double> w = *readFloatConstant(weight);
  ElementsAttr like;
  matchPattern(weight, m_Constant(&like));

  bool perChannel = options.type == QuantType::Int8 && options.perChannel;
  int64_t channels = perChannel ? type.getDimSize(c.channelAxis) : 1;
  int64_t inner = 1;
  for (int64_t d = c.channelAxis + 1; d < type.getRank(); ++d)
    inner *= type.getDimSize(d);
  auto channelOf = [&](size_t i) {
    return perChannel ? static_cast<int64_t>(i / inner) % channels : 0;
  };
  double qmax = options.type == QuantType::Int8 ? 127.0 : kFloat8Max;
  SmallVector<double> amax(channels, 0.0);
  for (auto [i, v] : llvm::enumerate(w))
    amax[channelOf(i)] = std::max(amax[channelOf(i)], std::fabs(v));
  SmallVector<double> scales;
  for (double a : amax)
    scales.push_back(static_cast<float>(a > 0 ? a / qmax : 1.0));

  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(c.op);
  Location loc = weight.getLoc();
  // Per-channel scales broadcast against the weight: [N] for a [K, N]
  // matmul weight, [M, 1, ...] for a conv weight [M, C, K...].
  SmallVector<int64_t> scaleShape;
  if (perChannel) {
    scaleShape.assign(type.getRank() - c.channelAxis, 1);
    scaleShape[0] = channels;
  }
  auto scaleType = RankedTensorType::get(scaleShape, b.getF32Type());
  Value scale = ConstantOp::create(
      b, loc, makeFloatConstant(scaleType, scales, Attribute(), ""));

  ElementsAttr quantized;
  if (options.type == QuantType::Int8) {
    SmallVector<int64_t> q;
    for (auto [i, v] : llvm::enumerate(w))
      q.push_back(static_cast<int64_t>(
          std::clamp(std::nearbyint(v / scales[channelOf(i)]), -qmax, qmax)));
    quantized = makeIntegerConstant(type.clone(b.getI8Type()), q, like, "_i8");
  } else {
    SmallVector<double> q;
    for (double v : w)
      q.push_back(std::clamp(v / scales[0], -qmax, qmax));
    quantized = makeFloatConstant(
        type.clone(Float8E4M3FNType::get(b.getContext())), q, like, "_f8");
  }
  Value qWeight = ConstantOp::create(b, loc, quantized);
  Value dq = DequantizeOp::create(b, loc, type, qWeight, scale, Value());
  c.op->setOperand(c.weightIndex, dq);
  if (Operation *old = weight.getDefiningOp(); old && old->use_empty())
    old->erase();
}

/// The input files of one sample directory, or none.
std::vector<std::string> sampleFiles(StringRef dir) {
  std::vector<std::string> files;
  if (!listTensorFiles(dir, "input_", files).empty())
    files.clear();
  return files;
}

struct LoomQuantizePass : loom::impl::LoomQuantizePassBase<LoomQuantizePass> {
  using LoomQuantizePassBase::LoomQuantizePassBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (inputs.empty()) {
      func.emitError("-loom-quantize needs calibration samples: "
                     "inputs=DIR[,DIR...]");
      return signalPassFailure();
    }
    if (!(percentile > 50.0 && percentile <= 100.0)) {
      func.emitError("percentile must be in (50, 100], got ") << percentile;
      return signalPassFailure();
    }
    FailureOr<SmallVector<CalibrationSample>> samples =
        loadCalibrationSamples(func, inputs);
    QuantizeOptions options{type, calibration, percentile, perChannel};
    if (failed(samples) ||
        failed(quantizeContractions(func, *samples, options)))
      signalPassFailure();
  }
};

} // namespace

FailureOr<SmallVector<CalibrationSample>>
loom::loadCalibrationSamples(func::FuncOp func, ArrayRef<std::string> paths) {
  // Each path is a sample, or a directory of samples (sorted by name).
  std::vector<std::string> sampleDirs;
  for (const std::string &path : paths) {
    if (!sampleFiles(path).empty()) {
      sampleDirs.push_back(path);
      continue;
    }
    std::error_code ec;
    std::vector<std::string> children;
    for (llvm::sys::fs::directory_iterator it(path, ec), end; it != end && !ec;
         it.increment(ec))
      if (llvm::sys::fs::is_directory(it->path()) &&
          !sampleFiles(it->path()).empty())
        children.push_back(it->path());
    if (ec || children.empty())
      return func.emitError("calibration input '")
             << path << "' holds no input tensors (input_N.pb or *.npy), "
             << "directly or in its subdirectories";
    llvm::sort(children);
    llvm::append_range(sampleDirs, children);
  }

  SmallVector<CalibrationSample> samples;
  for (const std::string &dir : sampleDirs) {
    std::vector<std::string> files = sampleFiles(dir);
    if (files.size() != func.getNumArguments())
      return func.emitError("calibration sample '")
             << dir << "' has " << files.size() << " tensors for "
             << func.getNumArguments() << " arguments";
    CalibrationSample sample;
    for (auto [file, arg] : llvm::zip(files, func.getArgumentTypes())) {
      Tensor t;
      if (std::string error = readTensorFile(file, func.getContext(), t);
          !error.empty())
        return func.emitError(error);
      auto expected = cast<RankedTensorType>(arg);
      if (reference::getMLIRType(func.getContext(), t.kind()) !=
              expected.getElementType() ||
          failed(verifyCompatibleShape(expected.getShape(), t.shape())))
        return func.emitError("calibration tensor '")
               << file << "' is " << t.typeString() << " but the argument is "
               << expected;
      sample.push_back(std::move(t));
    }
    samples.push_back(std::move(sample));
  }
  return samples;
}

LogicalResult loom::quantizeContractions(func::FuncOp func,
                                         ArrayRef<CalibrationSample> samples,
                                         const QuantizeOptions &options) {
  SmallVector<Contraction> contractions = findContractions(func, options);
  if (contractions.empty())
    return success();
  // Each activation is observed (and quantized) once, however many
  // contractions read it.
  llvm::MapVector<Value, unsigned> activationIndex;
  for (const Contraction &c : contractions)
    activationIndex.insert(
        {c.op->getOperand(c.activationIndex), activationIndex.size()});
  SmallVector<Value> activations;
  for (auto &[value, index] : activationIndex)
    activations.push_back(value);
  FailureOr<SmallVector<Observation>> observed =
      observe(func, activations, samples,
              options.calibration == CalibrationMethod::Percentile);
  if (failed(observed))
    return failure();

  OpBuilder b(func.getContext());
  SmallVector<Value> dequantized;
  for (auto [value, obs] : llvm::zip(activations, *observed)) {
    auto [lo, hi] = chooseRange(obs, options);
    dequantized.push_back(insertActivationQDQ(b, value, lo, hi, options.type));
  }
  for (const Contraction &c : contractions) {
    c.op->setOperand(c.activationIndex,
                     dequantized[activationIndex.lookup(
                         c.op->getOperand(c.activationIndex))]);
    quantizeWeight(b, c, options);
  }

  RewritePatternSet patterns(func.getContext());
  populateQDQFoldingPatterns(patterns);
  return applyPatternsGreedily(func, std::move(patterns));
}
