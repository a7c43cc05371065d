//===- Runner.cpp - The library behind loom-run ---------------------------===//

#include "loom/Runner/Runner.h"

#include "RunnerSupport.h"

#include "loom/Compiler/Compiler.h"
#include "loom/InitAllDialects.h"
#include "loom/Reference/Interpreter.h"
#include "loom/Target/CPU/CPUTarget.h"
#include "loom/Target/CPU/Executable.h"
#include "loom/TensorIO/TensorIO.h"

#include "loom/device.h"
#include "loom/runtime.h"
#include <cstdlib>
#include <cstring>

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <random>

using namespace mlir;
using namespace loom::reference;

namespace loom {
namespace runner {

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
    else if (isUnsignedKind(t.kind()))
      os << static_cast<uint64_t>(t.getInt(i));
    else
      os << t.getInt(i);
  }
  if (n > count)
    os << (count > 0 ? ", ..." : "...");
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
/// A bfloat16 output is held to at least two bfloat16 steps (rtol 2^-6), as
/// ONNX's backend test runner holds it: bfloat16 keeps 8 significant bits,
/// and references computed with a rounding after every op differ from a
/// once-rounded result by that much.
bool compareTensors(llvm::StringRef name, const Tensor &got,
                    const Tensor &expected, double rtol, double atol,
                    double &maxAbsError) {
  if (got.kind() == ElementKind::BF16 || expected.kind() == ElementKind::BF16)
    rtol = std::max(rtol, 0.015625);
  if (got.shape() != expected.shape()) {
    llvm::errs() << "mismatch: output " << name << " is " << got.typeString()
                 << " but " << expected.typeString() << " was expected\n";
    return false;
  }
  int64_t worst = -1, failures = 0;
  double worstExcess = 0;
  for (int64_t i = 0, n = got.numElements(); i < n; ++i) {
    double a = got.getDouble(i), e = expected.getDouble(i);
    if (std::isfinite(a) && std::isfinite(e))
      maxAbsError = std::max(maxAbsError, std::fabs(a - e));
    if (!got.isFloat() && !expected.isFloat()) {
      if (got.getInt(i) == expected.getInt(i))
        continue;
    } else if ((std::isnan(a) && std::isnan(e)) || (std::isinf(a) && a == e)) {
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
               << llvm::format("%.9g", expected.getDouble(worst)) << " (rtol "
               << rtol << ", atol " << atol << ")\n";
  return false;
}

/// Compares the index of the largest element along the last axis (the top-1
/// class of logits or probabilities); prints the rows that differ.
bool compareTop1(llvm::StringRef name, const Tensor &got,
                 const Tensor &expected) {
  if (got.shape() != expected.shape() || got.rank() == 0) {
    llvm::errs() << "mismatch: output " << name << " is " << got.typeString()
                 << " but " << expected.typeString() << " was expected\n";
    return false;
  }
  int64_t classes = got.shape().back();
  int64_t rows = classes == 0 ? 0 : got.numElements() / classes;
  auto argmax = [&](const Tensor &t, int64_t row) {
    int64_t best = 0;
    for (int64_t c = 1; c < classes; ++c)
      if (t.getDouble(row * classes + c) > t.getDouble(row * classes + best))
        best = c;
    return best;
  };
  int64_t differ = 0;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t g = argmax(got, r), e = argmax(expected, r);
    if (g == e)
      continue;
    if (differ++ == 0)
      llvm::errs() << "mismatch: output " << name << " row " << r
                   << ": top-1 class " << g << ", expected " << e << "\n";
  }
  if (differ)
    llvm::errs() << "mismatch: output " << name << ": top-1 differs in "
                 << differ << " of " << rows << " rows\n";
  return differ == 0;
}

/// Prints how far `got` is from `reference`: the largest and the mean
/// absolute error, and the largest error relative to the reference's scale
/// (its largest magnitude), which stays meaningful where elements are near 0.
void printErrorStatistics(llvm::StringRef name, const Tensor &got,
                          const Tensor &reference) {
  llvm::outs() << "numerics: output " << name << ": ";
  if (got.shape() != reference.shape()) {
    llvm::outs() << got.typeString() << " vs " << reference.typeString()
                 << "\n";
    return;
  }
  double maxAbs = 0, sumAbs = 0, scale = 0;
  int64_t n = got.numElements();
  for (int64_t i = 0; i < n; ++i) {
    double err = std::fabs(got.getDouble(i) - reference.getDouble(i));
    maxAbs = std::max(maxAbs, err);
    sumAbs += err;
    scale = std::max(scale, std::fabs(reference.getDouble(i)));
  }
  llvm::outs() << llvm::format("max abs %.3e, mean abs %.3e, max abs / "
                               "max |ref| %.3e",
                               maxAbs, n ? sumAbs / n : 0.0,
                               scale > 0 ? maxAbs / scale : maxAbs)
               << "\n";
}

/// ONNX test data stores bfloat16 (and sometimes float16) tensors as their
/// uint16 bit patterns; reinterpret those as the type the model uses.
void reinterpretHalfBits(Tensor &t, ElementKind wanted) {
  if (t.kind() == ElementKind::U16 &&
      (wanted == ElementKind::BF16 || wanted == ElementKind::F16))
    t = *tensorFromBytes(wanted, t.shape(), tensorToBytes(t));
}

/// Compiles `module` (a copy) for this CPU, runs it once on `inputs` and
/// returns the outputs in the types of `entry`'s results. Parallel loops
/// run on `run.threads` threads.
FailureOr<SmallVector<Tensor>> executeCompiled(ModuleOp module,
                                               func::FuncOp entry,
                                               ArrayRef<Tensor> inputs,
                                               const RunOptions &run) {
  FunctionType signature = entry.getFunctionType();
  OwningOpRef<ModuleOp> copy = module.clone();
  llvm::SmallVector<char> object;
  cpu::CompileOptions options(CompileOptions(), run.cpu);
  if (std::string error = cpu::compileToObject(*copy, options, object);
      !error.empty()) {
    llvm::errs() << "error: " << error << "\n";
    return failure();
  }
  std::string error;
  std::unique_ptr<cpu::Executable> exe = cpu::Executable::load(object, error);
  if (!exe) {
    llvm::errs() << "error: " << error << "\n";
    return failure();
  }
  std::vector<std::vector<char>> buffers;
  // Symbolic input dimensions travel in one trailing array
  // (docs/design/cpu-abi.md).
  std::vector<int64_t> inputSizes;
  for (auto [input, type] : llvm::zip(inputs, signature.getInputs())) {
    auto tensorType = cast<RankedTensorType>(type);
    ElementKind kind = *getElementKind(tensorType.getElementType());
    bool fits = input.shape().size() == size_t(tensorType.getRank());
    for (int64_t d = 0; fits && d < tensorType.getRank(); ++d) {
      if (tensorType.isDynamicDim(d))
        inputSizes.push_back(input.shape()[d]);
      else
        fits = input.shape()[d] == tensorType.getDimSize(d);
    }
    if (!fits) {
      llvm::errs() << "error: input " << buffers.size() << " is "
                   << input.typeString() << " but the model takes " << type
                   << "\n";
      return failure();
    }
    buffers.push_back(
        tensorToBytes(input.kind() == kind ? input : castTensor(input, kind)));
  }
  SmallVector<ElementKind> outputKinds;
  for (Type type : signature.getResults()) {
    auto tensorType = cast<RankedTensorType>(type);
    outputKinds.push_back(*getElementKind(tensorType.getElementType()));
    // A result whose sizes the data decides is a record: the address of
    // the runtime's copy, then the sizes (loom/abi/outputs.h).
    if (!tensorType.hasStaticShape()) {
      buffers.emplace_back((1 + tensorType.getRank()) * sizeof(int64_t), 0);
      continue;
    }
    buffers.push_back(
        tensorToBytes(Tensor(outputKinds.back(), tensorType.getShape())));
  }
  std::vector<void *> pointers;
  for (std::vector<char> &buffer : buffers)
    pointers.push_back(buffer.data());
  if (!inputSizes.empty())
    pointers.push_back(inputSizes.data());
  exe->run(pointers.data(), run.threads);
  SmallVector<Tensor> outputs;
  for (auto [i, type] : llvm::enumerate(signature.getResults())) {
    auto tensorType = cast<RankedTensorType>(type);
    const std::vector<char> &buffer = buffers[inputs.size() + i];
    if (tensorType.hasStaticShape()) {
      outputs.push_back(
          *tensorFromBytes(outputKinds[i], tensorType.getShape(), buffer));
      continue;
    }
    std::vector<int64_t> record(1 + tensorType.getRank());
    std::memcpy(record.data(), buffer.data(), buffer.size());
    SmallVector<int64_t> shape(record.begin() + 1, record.end());
    Tensor empty(outputKinds[i], shape);
    size_t bytes = tensorToBytes(empty).size();
    char *data = reinterpret_cast<char *>(record[0]);
    std::optional<Tensor> t = tensorFromBytes(
        outputKinds[i], shape, llvm::ArrayRef<char>(data, bytes));
    // The copy is the runtime's (loom_rt_copy_output), released through it.
    loom_buffer_free(data);
    outputs.push_back(std::move(*t));
  }
  return outputs;
}

bool writeOutput(const RunOptions &options, size_t rank, size_t index,
                 const Tensor &t) {
  if (options.outputDirectory.empty())
    return true;
  // Rank 0's outputs keep the plain names, so that they can serve as
  // expected outputs.
  std::string file = "output_" + std::to_string(index) + ".npy";
  if (rank > 0)
    file = "rank" + std::to_string(rank) + "_" + file;
  if (std::error_code ec =
          llvm::sys::fs::create_directories(options.outputDirectory)) {
    llvm::errs() << "error: cannot create the output directory '"
                 << options.outputDirectory << "': " << ec.message() << "\n";
    return false;
  }
  if (std::string error = writeNpyFile(options.outputDirectory + "/" + file, t);
      !error.empty()) {
    llvm::errs() << "error: " << error << "\n";
    return false;
  }
  return true;
}

std::optional<bool>
compareWithExpected(const RunOptions &options, MLIRContext *context,
                    const std::vector<std::string> &expectedFiles,
                    llvm::ArrayRef<SmallVector<Tensor>> rankOutputs) {
  if (expectedFiles.size() != rankOutputs.front().size()) {
    llvm::errs() << "error: the model has " << rankOutputs.front().size()
                 << " outputs but " << expectedFiles.size()
                 << " expected tensors were given\n";
    return std::nullopt;
  }
  bool ok = true;
  double maxAbsError = 0;
  size_t comparedRanks = options.compareAllRanks ? rankOutputs.size() : 1;
  for (auto [i, file] : llvm::enumerate(expectedFiles)) {
    Tensor expected;
    if (std::string error = readTensorFile(file, context, expected);
        !error.empty()) {
      llvm::errs() << "error: " << error << "\n";
      return std::nullopt;
    }
    for (size_t rank = 0; rank < comparedRanks; ++rank) {
      const Tensor &output = rankOutputs[rank][i];
      reinterpretHalfBits(expected, output.kind());
      std::string name = std::to_string(i);
      if (rank > 0)
        name += " of rank " + std::to_string(rank);
      ok &= options.compareTop1
                ? compareTop1(name, output, expected)
                : compareTensors(name, output, expected, options.rtol,
                                 options.atol, maxAbsError);
    }
  }
  // The largest difference over every compared element (finite ones): the
  // figure docs/models.md reports per model.
  if (!options.compareTop1)
    llvm::outs() << llvm::format("max abs error %.3g\n", maxAbsError);
  llvm::outs() << (ok ? "all outputs match" : "outputs differ")
               << (options.compareTop1 ? " (top-1)" : "") << "\n";
  return ok;
}

} // namespace runner

using namespace runner;

int runModel(const RunOptions &options) {
  if (llvm::StringRef(options.model).ends_with(".engine"))
    return runEngine(options);
  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  OwningOpRef<ModuleOp> module =
      loadModel(options.model, &context, options.importOptions);
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
      inputs.push_back(
          randomTensor(cast<RankedTensorType>(t), rng, options.dynamicDimSize));
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
      reinterpretHalfBits(t, *getElementKind(getElementTypeOrSelf(
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
  if (options.backend == "cpu") {
    if (options.ranks > 0) {
      llvm::errs() << "error: --ranks needs the reference backend\n";
      return 1;
    }
    FailureOr<SmallVector<Tensor>> outputs =
        executeCompiled(*module, entry, inputs, options);
    if (failed(outputs))
      return 1;
    rankOutputs.push_back(std::move(*outputs));
  } else if (options.ranks > 0) {
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
      ok &= writeOutput(options, rank, i, t);
    }
  }

  if (!expectedFiles.empty()) {
    std::optional<bool> match =
        compareWithExpected(options, &context, expectedFiles, rankOutputs);
    if (!match)
      return 1;
    ok &= *match;
  }

  // The numerics report: the same inputs through a reference program.
  if (!options.referenceModel.empty()) {
    OwningOpRef<ModuleOp> refModule =
        loadModel(options.referenceModel, &context);
    func::FuncOp refEntry = refModule ? findEntry(*refModule) : nullptr;
    if (!refEntry)
      return 1;
    FailureOr<SmallVector<Tensor>> refOutputs = execute(refEntry, inputs);
    if (failed(refOutputs))
      return 1;
    if (refOutputs->size() != rankOutputs.front().size()) {
      llvm::errs() << "error: the reference program has " << refOutputs->size()
                   << " outputs, the model " << rankOutputs.front().size()
                   << "\n";
      return 1;
    }
    for (auto [i, got] : llvm::enumerate(rankOutputs.front()))
      printErrorStatistics(std::to_string(i), got, (*refOutputs)[i]);
  }
  return ok ? 0 : 1;
}

int runDataSets(const RunOptions &options, llvm::StringRef directory) {
  std::error_code ec;
  std::map<int64_t, std::string> sets;
  for (llvm::sys::fs::directory_iterator it(directory, ec), end;
       it != end && !ec; it.increment(ec)) {
    llvm::StringRef name = llvm::sys::path::filename(it->path());
    int64_t index;
    if (name.consume_front("test_data_set_") && !name.getAsInteger(10, index))
      sets[index] = it->path();
  }
  if (ec || sets.empty()) {
    llvm::errs() << "error: '" << directory
                 << "' holds no test_data_set_N directories\n";
    return 1;
  }
  int failures = 0;
  for (auto &[index, path] : sets) {
    llvm::outs() << "== " << path << "\n";
    RunOptions one = options;
    one.inputs = {path};
    one.expected = {path};
    failures += runModel(one) != 0;
  }
  llvm::outs() << sets.size() << " data sets: " << sets.size() - failures
               << " match, " << failures << " differ\n";
  return failures ? 1 : 0;
}

/// What the runtime finds on this machine; vendor libraries that are
/// missing are reported with the reason, not as a failure.
static int printDevices() {
  for (loom_device_kind kind : {LOOM_DEVICE_CPU, LOOM_DEVICE_CUDA}) {
    int32_t count = 0;
    llvm::outs() << loom_device_kind_name(kind) << ": ";
    if (loom_device_count(kind, &count) == LOOM_OK)
      llvm::outs() << count << (count == 1 ? " device\n" : " devices\n");
    else
      llvm::outs() << "not available (" << loom_last_error() << ")\n";
  }
  int32_t version = 0;
  llvm::outs() << "nccl: ";
  if (loom_nccl_version(&version) == LOOM_OK)
    llvm::outs() << "version " << version << "\n";
  else
    llvm::outs() << "not available (" << loom_last_error() << ")\n";
  const char *library = nullptr;
  llvm::outs() << "onednn kernels: ";
  if (loom_kernel_library("onednn", &library) == LOOM_OK)
    llvm::outs() << library << "\n";
  else
    llvm::outs() << "not available (" << loom_last_error() << ")\n";
  return 0;
}

int loomRunMain(int argc, char **argv) {
  namespace cl = llvm::cl;
  // --help lists these options and the CPU target's only (LLVM's own
  // stay behind --help-hidden).
  cl::OptionCategory runCategory("loom-run options");
  cpu::registerCPUTarget();
  cl::opt<std::string> model(cl::cat(runCategory), cl::Positional,
                             cl::desc("<model.onnx | model.onnxtxt | "
                                      "model.mlir | - (loom IR on stdin)>"));
  cl::list<std::string> inputs(
      cl::cat(runCategory), "inputs", cl::CommaSeparated,
      cl::desc("Input tensors (.pb or .npy), or a directory holding them"));
  cl::list<std::string> expected(
      cl::cat(runCategory), "expected", cl::CommaSeparated,
      cl::desc("Expected outputs (.pb or .npy), or a directory"));
  cl::opt<double> rtol(
      cl::cat(runCategory), "rtol", cl::init(1e-3),
      cl::desc("Relative tolerance of the comparison (at least "
               "2^-6 for bfloat16 outputs)"));
  cl::opt<double> atol(cl::cat(runCategory), "atol", cl::init(1e-7),
                       cl::desc("Absolute tolerance of the comparison"));
  cl::opt<uint64_t> seed(cl::cat(runCategory), "seed", cl::init(0),
                         cl::desc("Seed of random inputs"));
  cl::opt<int> printValues(cl::cat(runCategory), "print-values", cl::init(8),
                           cl::desc("Values printed per tensor"));
  cl::opt<std::string> outputDir(
      cl::cat(runCategory), "output-dir",
      cl::desc("Write each output as output_N.npy there (with "
               "--ranks, rank R>0's as rankR_output_N.npy)"));
  cl::opt<int64_t> ranks(
      cl::cat(runCategory), "ranks", cl::init(0),
      cl::desc("Run the program SPMD on N ranks (threads) whose shard ops "
               "communicate; each rank gets the same inputs, every rank's "
               "outputs are printed, rank 0's are compared with --expected"));
  cl::opt<int64_t> rankTimeout(
      cl::cat(runCategory), "rank-timeout-ms", cl::init(5000),
      cl::desc("With --ranks: fail (as deadlocked) when a rank waits this long "
               "for its peers"));
  cl::opt<std::string> dataSets(
      cl::cat(runCategory), "data-sets",
      cl::desc("Run every test_data_set_N directory under this one (ONNX's "
               "backend-test layout), each with its inputs and expected "
               "outputs, and count those that match"));
  cl::opt<bool> top1(
      cl::cat(runCategory), "top1",
      cl::desc("Compare only the index of the largest element along "
               "the last axis (the top-1 class)"));
  cl::opt<std::string> referenceModel(
      cl::cat(runCategory), "reference-model",
      cl::desc("Also run this program (e.g. the f32 original of a "
               "quantized model) on the same inputs and print each output's "
               "max and mean absolute error against it"));
  cl::opt<std::string> backend(
      cl::cat(runCategory), "backend", cl::init("reference"),
      cl::desc("reference: Loom's reference executor; cpu: compile to native "
               "code for this machine and run it"));
  InputShapeFlags inputShapes(runCategory);
  cl::opt<int32_t> threads(
      cl::cat(runCategory), "num-threads", cl::init(1),
      cl::desc("Compiled code (engines, --backend cpu): threads for its "
               "parallel loops, per rank"));
  cl::opt<bool> benchmark(
      cl::cat(runCategory), "benchmark",
      cl::desc("Engines: time repeated runs and print latency "
               "(mean, p50, p90, p99) and throughput"));
  cl::opt<int64_t> warmup(cl::cat(runCategory), "warmup", cl::init(5),
                          cl::desc("With --benchmark: untimed runs first"));
  cl::opt<int64_t> iterations(cl::cat(runCategory), "iterations", cl::init(50),
                              cl::desc("With --benchmark: timed runs"));
  cl::opt<double> duration(
      cl::cat(runCategory), "duration", cl::init(0.0),
      cl::desc("With --benchmark: keep timing runs for at least this many "
               "seconds (and at least --iterations runs)"));
  cl::opt<double> warmupMs(
      cl::cat(runCategory), "warmUp", cl::init(0.0),
      cl::desc("With --benchmark: keep running untimed for at least this "
               "many milliseconds after --warmup runs (trtexec's --warmUp)"));
  cl::opt<bool> collectiveStats(
      cl::cat(runCategory), "collective-stats",
      cl::desc("Engines: print each rank's collectives in the run, per kind: "
               "calls, buffer bytes and the bytes a ring algorithm sends "
               "from the rank (what loom-plan and plan=auto predict)"));
  cl::opt<bool> profile(
      cl::cat(runCategory), "profile",
      cl::desc("Engines compiled with loomc --kernel-timers: time each "
               "kernel over the benchmark's runs and print its time, share "
               "and achieved GFLOP/s and GB/s (implies --benchmark)"));
  cl::opt<std::string> profileTrace(
      cl::cat(runCategory), "profile-trace",
      cl::desc("With --profile: write the last run's kernels to this file "
               "as Chrome trace events (chrome://tracing, Perfetto)"));
  cl::opt<std::string> profileHtml(
      cl::cat(runCategory), "profile-html", cl::value_desc("file"),
      cl::desc("With --profile: also write the kernels as an HTML page of "
               "bars (slowest first, with achieved GFLOP/s and GB/s)"));
  cl::opt<double> peakGflops(
      cl::cat(runCategory), "peak-gflops", cl::init(0.0),
      cl::desc("With --profile-html: the machine's peak GFLOP/s, to draw "
               "each kernel's rate against (e.g. loom-bench-gemm's)"));
  cl::opt<double> peakGbps(
      cl::cat(runCategory), "peak-gbps", cl::init(0.0),
      cl::desc("With --profile-html: the machine's peak memory bandwidth "
               "in GB/s"));
  // trtexec's spellings of the same flags (docs/engines.md, "trtexec's
  // flags").
  cl::alias dumpProfile("dumpProfile", cl::aliasopt(profile),
                        cl::desc("Alias for --profile (trtexec)"),
                        cl::cat(runCategory));
  cl::alias exportProfile("exportProfile", cl::aliasopt(profileTrace),
                          cl::desc("Alias for --profile-trace (trtexec)"),
                          cl::cat(runCategory));
  cl::opt<std::string> trustedKey(
      cl::cat(runCategory), "trusted-key", cl::value_desc("public key file"),
      cl::desc("Engines: refuse the engine unless it is signed with the "
               "secret key of this public key (loomc --sign)"));
  cl::opt<std::string> loadEngine(
      cl::cat(runCategory), "loadEngine",
      cl::desc("The engine to run, in trtexec's spelling (the same as "
               "giving it as the positional argument)"));
  cl::opt<bool> mpi(
      cl::cat(runCategory), "mpi",
      cl::desc("Engines: run this process's rank under mpirun (one "
               "rank per process, collectives on MPI; with --generate, "
               "the process keeps its rank's share of the cache)"));
  cl::opt<bool> listDevices(
      cl::cat(runCategory), "list-devices",
      cl::desc("Print the devices this machine offers the runtime (CPU, "
               "CUDA through its driver, NCCL) and exit"));
  cl::opt<bool> allRanks(
      cl::cat(runCategory), "all-ranks",
      cl::desc("With --ranks: compare every rank's outputs with --expected, "
               "not only rank 0's (programs with replicated results)"));
  cl::opt<int64_t> generate(
      cl::cat(runCategory), "generate", cl::init(0),
      cl::desc("Decoder engines (exports with past_key_values inputs): "
               "greedily generate N tokens after --prompt-ids, printing them "
               "and the prefill and per-token latency"));
  cl::list<int64_t> promptIds(cl::cat(runCategory), "prompt-ids",
                              cl::CommaSeparated,
                              cl::desc("With --generate: the prompt's token "
                                       "ids"));
  cl::list<int64_t> expectedIds(
      cl::cat(runCategory), "expected-ids", cl::CommaSeparated,
      cl::desc("With --generate: the tokens expected first (exit 1 when one "
               "differs)"));
  hideOtherOptions({&runCategory, &cpu::cpuTargetCategory()});
  cl::ParseCommandLineOptions(
      argc, argv,
      "loom-run: run a model with Loom's reference executor, or compiled "
      "for this CPU (--backend=cpu)\n\n"
      "  loom-run model.onnx                      (random inputs)\n"
      "  loom-run model.onnx --inputs DIR --expected DIR\n"
      "  loom-run partitioned.mlir --ranks 4        (one thread per rank)\n"
      "  loom-run model.onnx --data-sets DIR --top1\n"
      "  loom-run model.engine --inputs DIR --benchmark --iterations 100\n"
      "  loom-run int8.mlir --reference-model f32.mlir\n"
      "  loom-run decoder.engine --generate 32 --prompt-ids 5,17,42\n\n"
      "LLVM's own options: --help-hidden\n");
  if (listDevices)
    return printDevices();
  if (!loadEngine.empty()) {
    if (!model.empty()) {
      llvm::errs() << "error: give the engine once: as the positional "
                      "argument or with --loadEngine\n";
      return 1;
    }
    model = loadEngine;
  }
  if (model.empty()) {
    llvm::errs() << "error: no model given (loom-run --help)\n";
    return 1;
  }
  RunOptions options;
  options.model = model;
  options.inputs.assign(inputs.begin(), inputs.end());
  options.expected.assign(expected.begin(), expected.end());
  options.rtol = rtol;
  options.atol = atol;
  options.seed = seed;
  options.printValues = printValues;
  options.outputDirectory = outputDir;
  options.compareTop1 = top1;
  options.referenceModel = referenceModel;
  if (ranks < 0 || rankTimeout <= 0) {
    llvm::errs() << "error: --ranks must not be negative and "
                    "--rank-timeout-ms must be positive\n";
    return 1;
  }
  if (threads < 1) {
    llvm::errs() << "error: --num-threads must be at least 1\n";
    return 1;
  }
  options.threads = threads;
  FailureOr<cpu::CPUOptions> cpuOptions = cpu::cpuOptionsFromCommandLine();
  if (failed(cpuOptions))
    return 1;
  options.cpu = *cpuOptions;
  FailureOr<ONNXImportOptions> importOptions = inputShapes.resolve();
  if (failed(importOptions))
    return 1;
  options.importOptions = *importOptions;
  if (backend != "reference" && backend != "cpu") {
    llvm::errs() << "error: --backend must be reference or cpu\n";
    return 1;
  }
  options.backend = backend;
  options.ranks = ranks;
  options.rankTimeoutMs = rankTimeout;
  options.trustedKey = trustedKey;
  options.compareAllRanks = allRanks;
  options.mpi = mpi;
  if (mpi &&
      (ranks > 0 || !llvm::StringRef(options.model).ends_with(".engine"))) {
    llvm::errs() << "error: --mpi runs one rank of an engine per process "
                    "(under mpirun), without --ranks\n";
    return 1;
  }
  if ((!profileTrace.empty() || !profileHtml.empty()) && !profile) {
    llvm::errs() << "error: --profile-trace and --profile-html need "
                    "--profile\n";
    return 1;
  }
  if (peakGflops < 0 || peakGbps < 0) {
    llvm::errs() << "error: --peak-gflops and --peak-gbps must not be "
                    "negative\n";
    return 1;
  }
  options.collectiveStats = collectiveStats;
  if (benchmark || profile) {
    options.profileKernels = profile;
    options.profileTrace = profileTrace;
    options.profileHtml = profileHtml;
    options.peakGflops = peakGflops;
    options.peakGbytesPerSecond = peakGbps;
    if (iterations <= 0 || warmup < 0 || duration < 0 || warmupMs < 0) {
      llvm::errs() << "error: --iterations must be positive and --warmup, "
                      "--warmUp and --duration not negative\n";
      return 1;
    }
    if (!llvm::StringRef(options.model).ends_with(".engine")) {
      llvm::errs() << "error: --benchmark and --profile run engines (compile "
                      "the model "
                      "with loomc first)\n";
      return 1;
    }
    options.benchmarkIterations = iterations;
    options.benchmarkWarmup = warmup;
    options.benchmarkWarmupMs = warmupMs;
    options.benchmarkSeconds = duration;
  } else if (duration > 0 || warmupMs > 0) {
    llvm::errs() << "error: --duration and --warmUp time --benchmark runs\n";
    return 1;
  }
  if (generate != 0 || !promptIds.empty() || !expectedIds.empty()) {
    if (generate <= 0) {
      llvm::errs() << "error: --generate N (N > 0) is needed with "
                      "--prompt-ids and --expected-ids\n";
      return 1;
    }
    if (!llvm::StringRef(options.model).ends_with(".engine") ||
        !inputs.empty() || !expected.empty() || !dataSets.empty()) {
      llvm::errs() << "error: --generate runs a decoder engine (compile the "
                      "model with loomc first), without --inputs, --expected "
                      "or --data-sets\n";
      return 1;
    }
    options.ranks = ranks;
    options.generateTokens = generate;
    options.promptIds.assign(promptIds.begin(), promptIds.end());
    options.expectedIds.assign(expectedIds.begin(), expectedIds.end());
    if (benchmark)
      options.benchmarkIterations = 1;
    return runGenerate(options);
  }
  if (!dataSets.empty()) {
    if (!inputs.empty() || !expected.empty()) {
      llvm::errs() << "error: --data-sets takes the place of --inputs and "
                      "--expected\n";
      return 1;
    }
    if (options.model == "-") {
      llvm::errs() << "error: --data-sets runs the model several times; "
                      "give it as a file, not on standard input\n";
      return 1;
    }
    return runDataSets(options, dataSets);
  }
  return runModel(options);
}

} // namespace loom
