//===- Runner.cpp - The library behind loom-run ---------------------------===//

#include "loom/Runner/Runner.h"

#include "loom/Importer/ONNX/Importer.h"
#include "loom/InitAllDialects.h"
#include "loom/Reference/Interpreter.h"
#include "loom/Runner/TensorIO.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <random>

using namespace mlir;
using namespace loom::reference;

namespace loom {
namespace {

OwningOpRef<ModuleOp> loadModule(const std::string &path, MLIRContext *ctx) {
  if (llvm::StringRef(path).ends_with(".mlir")) {
    llvm::SourceMgr sourceMgr;
    std::string error;
    auto file = openInputFile(path, &error);
    if (!file) {
      llvm::errs() << path << ": " << error << "\n";
      return nullptr;
    }
    sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
    return parseSourceFile<ModuleOp>(sourceMgr, ctx);
  }
  return importONNXModelFile(path, ctx);
}

/// The function to run: @main, or the only function of the module.
func::FuncOp findEntry(ModuleOp module) {
  if (auto main = module.lookupSymbol<func::FuncOp>("main"))
    return main;
  func::FuncOp only;
  for (auto f : module.getOps<func::FuncOp>()) {
    if (only)
      return {};
    only = f;
  }
  return only;
}

/// Expands a single directory argument into its tensor files.
bool expandFiles(const std::vector<std::string> &given, llvm::StringRef prefix,
                 std::vector<std::string> &files) {
  files = given;
  if (given.size() == 1 && llvm::sys::fs::is_directory(given[0])) {
    if (std::string error = listTensorFiles(given[0], prefix, files);
        !error.empty()) {
      llvm::errs() << "error: " << error << "\n";
      return false;
    }
  }
  return true;
}

/// Seeded random values: floats in [-1, 1), integers in [0, 4), booleans.
Tensor randomTensor(RankedTensorType type, std::mt19937_64 &rng,
                    int64_t dynamicDimSize) {
  llvm::SmallVector<int64_t> shape;
  for (int64_t d : type.getShape())
    shape.push_back(ShapedType::isDynamic(d) ? dynamicDimSize : d);
  ElementKind kind = *getElementKind(type.getElementType());
  Tensor t(kind, shape);
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int64_t> integer(0, 3);
  for (int64_t i = 0, n = t.numElements(); i < n; ++i) {
    if (t.isFloat())
      t.setDouble(i, real(rng));
    else
      t.setInt(i, kind == ElementKind::I1 ? integer(rng) % 2 : integer(rng));
  }
  return t;
}

void printTensor(llvm::raw_ostream &os, const Tensor &t, int count) {
  os << t.typeString() << " [";
  int64_t n = t.numElements();
  for (int64_t i = 0; i < n && i < count; ++i) {
    if (i)
      os << ", ";
    if (t.isFloat())
      os << llvm::format("%g", t.getDouble(i));
    else
      os << t.getInt(i);
  }
  if (n > count)
    os << ", ...";
  double sum = 0;
  for (int64_t i = 0; i < n; ++i)
    sum += t.getDouble(i);
  os << "] sum=" << llvm::format("%.9g", sum);
}

std::string indexString(llvm::ArrayRef<int64_t> shape, int64_t linear) {
  llvm::SmallVector<int64_t> index(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    index[d] = shape[d] ? linear % shape[d] : 0;
    linear = shape[d] ? linear / shape[d] : 0;
  }
  std::string s = "[";
  for (size_t d = 0; d < index.size(); ++d)
    s += (d ? ", " : "") + std::to_string(index[d]);
  return s + "]";
}

/// Compares one output; prints the worst element when it does not match.
bool compareTensors(llvm::StringRef name, const Tensor &got,
                    const Tensor &expected, double rtol, double atol) {
  if (got.shape() != expected.shape()) {
    llvm::errs() << "mismatch: output " << name << " is " << got.typeString()
                 << " but " << expected.typeString() << " was expected\n";
    return false;
  }
  int64_t worst = -1, failures = 0;
  double worstExcess = 0;
  for (int64_t i = 0, n = got.numElements(); i < n; ++i) {
    double a = got.getDouble(i), e = expected.getDouble(i);
    if (!got.isFloat() && !expected.isFloat()) {
      if (got.getInt(i) == expected.getInt(i))
        continue;
    } else if ((std::isnan(a) && std::isnan(e)) ||
               (std::isinf(a) && a == e)) {
      continue;
    } else if (std::fabs(a - e) <= atol + rtol * std::fabs(e)) {
      continue;
    }
    ++failures;
    double excess = std::isnan(a) || std::isnan(e)
                        ? INFINITY
                        : std::fabs(a - e) - (atol + rtol * std::fabs(e));
    if (worst < 0 || excess > worstExcess)
      worst = i, worstExcess = excess;
  }
  if (failures == 0)
    return true;
  llvm::errs() << "mismatch: output " << name << ": " << failures << " of "
               << got.numElements() << " elements differ; worst at "
               << indexString(got.shape(), worst) << ": got "
               << llvm::format("%.9g", got.getDouble(worst)) << ", expected "
               << llvm::format("%.9g", expected.getDouble(worst))
               << " (rtol " << rtol << ", atol " << atol << ")\n";
  return false;
}

/// ONNX test data stores bfloat16 (and sometimes float16) tensors as their
/// uint16 bit patterns; reinterpret those as the type the model uses.
void reinterpretHalfBits(Tensor &t, ElementKind wanted) {
  if (t.kind() == ElementKind::U16 &&
      (wanted == ElementKind::BF16 || wanted == ElementKind::F16))
    t = *tensorFromBytes(wanted, t.shape(), tensorToBytes(t));
}

} // namespace

int runModel(const RunOptions &options) {
  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  OwningOpRef<ModuleOp> module = loadModule(options.model, &context);
  if (!module)
    return 1;
  func::FuncOp entry = findEntry(*module);
  if (!entry) {
    llvm::errs() << options.model
                 << ": error: no @main function (or more than one function)\n";
    return 1;
  }
  FunctionType signature = entry.getFunctionType();

  // Inputs.
  std::vector<std::string> inputFiles, expectedFiles;
  if (!expandFiles(options.inputs, "input_", inputFiles) ||
      !expandFiles(options.expected, "output_", expectedFiles))
    return 1;
  llvm::SmallVector<Tensor> inputs;
  if (inputFiles.empty()) {
    std::mt19937_64 rng(options.seed);
    for (Type t : signature.getInputs())
      inputs.push_back(randomTensor(cast<RankedTensorType>(t), rng,
                                    options.dynamicDimSize));
  } else {
    if (inputFiles.size() != signature.getNumInputs()) {
      llvm::errs() << "error: the model takes " << signature.getNumInputs()
                   << " inputs but " << inputFiles.size() << " were given\n";
      return 1;
    }
    for (const std::string &file : inputFiles) {
      Tensor t;
      if (std::string error = readTensorFile(file, &context, t);
          !error.empty()) {
        llvm::errs() << "error: " << error << "\n";
        return 1;
      }
      reinterpretHalfBits(
          t, *getElementKind(getElementTypeOrSelf(
                 signature.getInput(inputs.size()))));
      inputs.push_back(std::move(t));
    }
  }
  for (auto [i, t] : llvm::enumerate(inputs)) {
    llvm::outs() << "input " << i << ": ";
    printTensor(llvm::outs(), t, options.printValues);
    llvm::outs() << "\n";
  }

  // One plain run, or one run per rank with the same inputs.
  SmallVector<SmallVector<Tensor>> rankOutputs;
  if (options.ranks > 0) {
    RankOptions rankOptions;
    rankOptions.timeout = std::chrono::milliseconds(options.rankTimeoutMs);
    SmallVector<SmallVector<Tensor>> rankInputs(options.ranks, inputs);
    FailureOr<SmallVector<SmallVector<Tensor>>> all =
        executeRanks(entry, options.ranks, rankInputs, rankOptions);
    if (failed(all))
      return 1;
    rankOutputs = std::move(*all);
  } else {
    FailureOr<SmallVector<Tensor>> outputs = execute(entry, inputs);
    if (failed(outputs))
      return 1;
    rankOutputs.push_back(std::move(*outputs));
  }

  bool ok = true;
  for (auto [rank, outputs] : llvm::enumerate(rankOutputs)) {
    std::string prefix =
        options.ranks > 0 ? "rank " + std::to_string(rank) + " " : "";
    for (auto [i, t] : llvm::enumerate(outputs)) {
      std::string name = std::to_string(i);
      if (auto attr = entry.getResultAttrOfType<StringAttr>(i, "onnx.name"))
        name += " '" + attr.getValue().str() + "'";
      llvm::outs() << prefix << "output " << name << ": ";
      printTensor(llvm::outs(), t, options.printValues);
      llvm::outs() << "\n";
      if (options.outputDirectory.empty())
        continue;
      // Rank 0's outputs keep the plain names, so that they can serve as
      // expected outputs.
      std::string file = "output_" + std::to_string(i) + ".npy";
      if (rank > 0)
        file = "rank" + std::to_string(rank) + "_" + file;
      if (std::string error =
              writeNpyFile(options.outputDirectory + "/" + file, t);
          !error.empty()) {
        llvm::errs() << "error: " << error << "\n";
        ok = false;
      }
    }
  }

  if (!expectedFiles.empty()) {
    if (expectedFiles.size() != rankOutputs.front().size()) {
      llvm::errs() << "error: the model has " << rankOutputs.front().size()
                   << " outputs but " << expectedFiles.size()
                   << " expected tensors were given\n";
      return 1;
    }
    size_t comparedRanks = options.compareAllRanks ? rankOutputs.size() : 1;
    for (auto [i, file] : llvm::enumerate(expectedFiles)) {
      Tensor expected;
      if (std::string error = readTensorFile(file, &context, expected);
          !error.empty()) {
        llvm::errs() << "error: " << error << "\n";
        return 1;
      }
      for (size_t rank = 0; rank < comparedRanks; ++rank) {
        Tensor &output = rankOutputs[rank][i];
        reinterpretHalfBits(expected, output.kind());
        std::string name = std::to_string(i);
        if (rank > 0)
          name += " of rank " + std::to_string(rank);
        ok &= compareTensors(name, output, expected, options.rtol,
                             options.atol);
      }
    }
    llvm::outs() << (ok ? "all outputs match" : "outputs differ") << "\n";
  }
  return ok ? 0 : 1;
}

int loomRunMain(int argc, char **argv) {
  namespace cl = llvm::cl;
  cl::opt<std::string> model(cl::Positional, cl::Required,
                             cl::desc("<model.onnx | model.onnxtxt | "
                                      "model.mlir>"));
  cl::list<std::string> inputs(
      "inputs", cl::CommaSeparated,
      cl::desc("Input tensors (.pb or .npy), or a directory holding them"));
  cl::list<std::string> expected(
      "expected", cl::CommaSeparated,
      cl::desc("Expected outputs (.pb or .npy), or a directory"));
  cl::opt<double> rtol("rtol", cl::init(1e-3),
                       cl::desc("Relative tolerance of the comparison"));
  cl::opt<double> atol("atol", cl::init(1e-7),
                       cl::desc("Absolute tolerance of the comparison"));
  cl::opt<uint64_t> seed("seed", cl::init(0),
                         cl::desc("Seed of random inputs"));
  cl::opt<int> printValues("print-values", cl::init(8),
                           cl::desc("Values printed per tensor"));
  cl::opt<std::string> outputDir(
      "output-dir", cl::desc("Write each output as output_N.npy there (with "
                             "--ranks, rank R>0's as rankR_output_N.npy)"));
  cl::opt<int64_t> ranks(
      "ranks", cl::init(0),
      cl::desc("Run the program SPMD on N ranks (threads) whose shard ops "
               "communicate; each rank gets the same inputs, every rank's "
               "outputs are printed, rank 0's are compared with --expected"));
  cl::opt<int64_t> rankTimeout(
      "rank-timeout-ms", cl::init(5000),
      cl::desc("With --ranks: fail (as deadlocked) when a rank waits this long "
               "for its peers"));
  cl::opt<bool> allRanks(
      "all-ranks",
      cl::desc("With --ranks: compare every rank's outputs with --expected, "
               "not only rank 0's (programs with replicated results)"));
  cl::ParseCommandLineOptions(
      argc, argv,
      "loom-run: run a model with Loom's reference executor\n\n"
      "  loom-run model.onnx                      (random inputs)\n"
      "  loom-run model.onnx --inputs DIR --expected DIR\n"
      "  loom-run partitioned.mlir --ranks 4        (one thread per rank)\n");
  RunOptions options;
  options.model = model;
  options.inputs.assign(inputs.begin(), inputs.end());
  options.expected.assign(expected.begin(), expected.end());
  options.rtol = rtol;
  options.atol = atol;
  options.seed = seed;
  options.printValues = printValues;
  options.outputDirectory = outputDir;
  if (ranks < 0 || rankTimeout <= 0) {
    llvm::errs() << "error: --ranks must not be negative and "
                    "--rank-timeout-ms must be positive\n";
    return 1;
  }
  options.ranks = ranks;
  options.rankTimeoutMs = rankTimeout;
  options.compareAllRanks = allRanks;
  return runModel(options);
}

} // namespace loom
