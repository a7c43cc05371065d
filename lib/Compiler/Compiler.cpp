//===- Compiler.cpp - The library behind loomc ----------------------------===//

#include "loom/Compiler/Compiler.h"

#include "loom/Compiler/EngineBuilder.h"
#include "loom/Compiler/HtmlReport.h"
#include "loom/Dialect/Loom/Sharding/EngineGrid.h"
#include "loom/Dialect/Loom/Sharding/Partition.h"
#include "loom/Dialect/Loom/Sharding/Planner.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"
#include "loom/Engine/EngineSigning.h"
#include "loom/Engine/EngineWriter.h"
#include "loom/Importer/ONNX/Importer.h"
#include "loom/InitAllDialects.h"
#include "loom/Target/CPU/CPUTarget.h"
#include "loom/Target/CUDA/CUDATarget.h"
#include "loom/Target/Target.h"

#include "loom/Pipelines/Pipelines.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <array>
#include <chrono>
#include <map>
#include <set>

using namespace mlir;

namespace loom {

/// Shapes for a model's inputs, by input name (--input-shape, a profile's
/// OPT, a --specialize).
using InputShapes = std::map<std::string, std::vector<int64_t>>;

OwningOpRef<ModuleOp> loadModel(llvm::StringRef path, MLIRContext *context,
                                const ONNXImportOptions &importOptions) {
  // Loom IR from a `.mlir` file or standard input ("-"); else ONNX.
  if (path != "-" && !path.ends_with(".mlir"))
    return importONNXModelFile(path, context, importOptions);
  if (!importOptions.inputShapes.empty()) {
    llvm::errs() << path
                 << ": error: --input-shape binds the inputs of ONNX models; "
                    "this is loom IR\n";
    return nullptr;
  }
  std::string error;
  auto file = openInputFile(path, &error);
  if (!file) {
    llvm::errs() << path << ": " << error << "\n";
    return nullptr;
  }
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  return parseSourceFile<ModuleOp>(sourceMgr, context);
}

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

namespace {

/// What loomc writes besides the target's own stages.
constexpr llvm::StringLiteral kEmitPartitioned = "partitioned";
constexpr llvm::StringLiteral kEmitLoom = "loom";
constexpr llvm::StringLiteral kEmitEngine = "engine";

/// What one loomc invocation does.
struct CompileRequest {
  std::string model;
  std::string output;
  /// "partitioned", "loom", "engine" or one of the target's stages.
  std::string emit = kEmitEngine.str();
  /// The target that compiles the program (from the registry).
  std::unique_ptr<Target> target;
  /// With a partitioned program and a stage before the engine: the rank
  /// whose program to emit.
  int64_t rank = -1;
  /// The plan, when the program is to be partitioned for a stated grid
  /// first, or what the planner searches (--plan=auto).
  std::optional<PartitionOptions> partition;
  std::optional<AutoPlanRequest> autoPlan;
  bool report = false;
  /// With a file name: write the HTML report there (--report-html).
  std::string reportHtml;
  std::string targetName;
  /// With a key: the engine is signed with it (--sign).
  std::optional<SigningKey> signingKey;
  /// When positive, -loom-kv-cache-in-place with this capacity runs first
  /// (with a grid, right after partitioning).
  int64_t kvCacheCapacity = 0;
  /// Optimization profiles (--profile): per input name, its min, opt and
  /// max shapes.
  std::map<std::string, std::array<std::vector<int64_t>, 3>> profiles;
  /// With profiles: also compile the program for their OPT shapes, run
  /// when a call's shapes are exactly those (--specialize-opt).
  bool specializeOpt = true;
  /// More shapes to compile a program for (--specialize): as written, and
  /// a shape per named input; the profiled inputs not named take their OPT
  /// shape.
  std::vector<std::pair<std::string, InputShapes>> specializations;
  ONNXImportOptions importOptions;
  CompileOptions options;
};

/// The output file for `path` ("-": standard output), or null after
/// printing why not.
static std::unique_ptr<llvm::ToolOutputFile> openOutput(llvm::StringRef path) {
  std::string error;
  auto output = openOutputFile(path, &error);
  if (!output)
    llvm::errs() << "error: " << error << "\n";
  return output;
}

/// Parses `--profile NAME=MIN:OPT:MAX` (each a shape, `2x64`).
static std::string parseProfile(
    llvm::StringRef spec,
    std::map<std::string, std::array<std::vector<int64_t>, 3>> &profiles) {
  auto [name, shapes] = spec.split('=');
  llvm::SmallVector<llvm::StringRef> parts;
  shapes.split(parts, ':');
  if (name.empty() || parts.size() != 3)
    return "--profile wants NAME=MIN:OPT:MAX (shapes such as 1x1:1x128:8x512), "
           "got '" +
           spec.str() + "'";
  std::array<std::vector<int64_t>, 3> profile;
  for (int i = 0; i < 3; ++i) {
    InputShapes one;
    if (std::string error = parseInputShape((name + "=" + parts[i]).str(), one);
        !error.empty())
      return "--profile " + spec.str() + ": " + error;
    profile[i] = one.begin()->second;
  }
  if (profile[0].size() != profile[1].size() ||
      profile[1].size() != profile[2].size())
    return "--profile " + spec.str() +
           ": min, opt and max have different ranks";
  for (size_t d = 0; d < profile[0].size(); ++d)
    if (profile[0][d] > profile[1][d] || profile[1][d] > profile[2][d])
      return "--profile " + spec.str() + ": dimension " + std::to_string(d) +
             " needs min <= opt <= max";
  if (!profiles.emplace(name.str(), profile).second)
    return "--profile " + name.str() + " is given twice";
  return "";
}

/// Records each profile on the entry function's argument of that ONNX name
/// as `loom.profile` ({dim, min, opt, max} per symbolic dimension), after
/// checking it against the argument's type.
static LogicalResult
applyProfiles(ModuleOp module,
              const std::map<std::string, std::array<std::vector<int64_t>, 3>>
                  &profiles) {
  if (profiles.empty())
    return success();
  func::FuncOp entry = module.lookupSymbol<func::FuncOp>("main");
  if (!entry) {
    llvm::errs() << "error: --profile needs the model's @main\n";
    return failure();
  }
  std::set<std::string> used;
  for (unsigned i = 0; i < entry.getNumArguments(); ++i) {
    auto name = entry.getArgAttrOfType<StringAttr>(i, "onnx.name");
    auto it = name ? profiles.find(name.str()) : profiles.end();
    if (it == profiles.end())
      continue;
    used.insert(it->first);
    auto type = dyn_cast<RankedTensorType>(entry.getArgumentTypes()[i]);
    const auto &[min, opt, max] = it->second;
    if (!type || type.getRank() != static_cast<int64_t>(min.size())) {
      llvm::errs() << "error: --profile " << it->first << " has rank "
                   << min.size() << "; the input is "
                   << entry.getArgumentTypes()[i] << "\n";
      return failure();
    }
    llvm::SmallVector<int64_t> ranges;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (!type.isDynamicDim(d)) {
        if (min[d] != type.getDimSize(d) || max[d] != type.getDimSize(d)) {
          llvm::errs() << "error: --profile " << it->first << ": dimension "
                       << d << " of " << type << " is static ("
                       << type.getDimSize(d) << ")\n";
          return failure();
        }
        continue;
      }
      ranges.append({d, min[d], opt[d], max[d]});
    }
    entry.setArgAttr(i, "loom.profile",
                     DenseI64ArrayAttr::get(module.getContext(), ranges));
  }
  for (const auto &[name, profile] : profiles)
    if (!used.count(name)) {
      llvm::errs() << "error: --profile " << name
                   << ": the model has no input of that name\n";
      return failure();
    }
  return success();
}

LogicalResult writeReport(const CompileReport &report, llvm::StringRef path) {
  if (llvm::Error error = report.write(path)) {
    llvm::errs() << "error: " << llvm::toString(std::move(error)) << "\n";
    return failure();
  }
  return success();
}

/// Imports the model with `importOptions` and runs what comes before the
/// target: profiles, the in-place KV cache, and the plan (partitioning,
/// with --plan=auto choosing it first and recording the choice in
/// `request.partition`). Null after printing why not.
OwningOpRef<ModuleOp>
prepareModule(CompileRequest &request, const ONNXImportOptions &importOptions,
              MLIRContext &context,
              llvm::function_ref<void(llvm::StringRef, double)> report,
              bool withProfiles = true) {
  using Clock = std::chrono::steady_clock;
  Clock::time_point start = Clock::now();
  OwningOpRef<ModuleOp> module =
      loadModel(request.model, &context, importOptions);
  if (!module)
    return nullptr;
  report(
      "import",
      std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  if (withProfiles && failed(applyProfiles(*module, request.profiles)))
    return nullptr;

  // A decoder's cache kept in place: on one rank, before the graph
  // pipeline; on a grid, after partitioning, where each rank's cache holds
  // the heads the rank computes.
  auto keepCacheInPlace = [&]() -> LogicalResult {
    if (request.kvCacheCapacity <= 0)
      return success();
    PassManager pm(&context);
    LoomKVCacheInPlacePassOptions cacheOptions;
    cacheOptions.capacity = request.kvCacheCapacity;
    pm.addNestedPass<func::FuncOp>(createLoomKVCacheInPlacePass(cacheOptions));
    return pm.run(*module);
  };
  bool partitioned = request.partition || request.autoPlan;
  if (!partitioned && failed(keepCacheInPlace()))
    return nullptr;

  // The plan: recognition and precision first, then partitioning (the
  // order of DESIGN.md); kernels are formed per rank when lowering.
  if (request.partition || request.autoPlan) {
    Clock::time_point partitionStart = Clock::now();
    PassManager pm(&context);
    // Static types first, as for one rank: the plan splits static shapes,
    // and a rank's outputs must be static. Kernels are formed per rank.
    buildDefaultGraphPipeline(pm, request.options, /*formKernels=*/false);
    if (failed(pm.run(*module)))
      return nullptr;
    if (request.autoPlan) {
      std::string plans;
      FailureOr<PartitionOptions> chosen =
          choosePlan(*module, *request.autoPlan, plans);
      if (failed(chosen))
        return nullptr;
      llvm::errs() << "loomc: " << plans << "\n";
      request.partition = *chosen;
      request.autoPlan.reset();
    }
    if (failed(partitionModule(*module, *request.partition)))
      return nullptr;
    if (failed(keepCacheInPlace()))
      return nullptr;
    report(
        "optimize graph and partition",
        std::chrono::duration<double, std::milli>(Clock::now() - partitionStart)
            .count());
  }
  return module;
}

/// The OPT shape of every profiled input, by name: what the specialized
/// program is compiled for. Empty when some input of `module` has a
/// symbolic dimension no profile covers (then there is nothing static to
/// specialize for); `why` says which.
InputShapes optShapes(ModuleOp module, const CompileRequest &request,
                      std::string &why) {
  InputShapes shapes;
  func::FuncOp entry = findEntry(module);
  if (!entry)
    return {};
  for (unsigned i = 0; i < entry.getNumArguments(); ++i) {
    auto type = dyn_cast<RankedTensorType>(entry.getArgumentTypes()[i]);
    if (!type || type.hasStaticShape())
      continue;
    auto name = entry.getArgAttrOfType<StringAttr>(i, "onnx.name");
    auto it = name ? request.profiles.find(name.str()) : request.profiles.end();
    if (it == request.profiles.end()) {
      why = "input '" + (name ? name.str() : std::to_string(i)) +
            "' has symbolic dimensions and no --profile";
      return {};
    }
    shapes[it->first] = it->second[1];
  }
  return shapes;
}

/// The shapes of every specialized program: the profiles' OPT (unless
/// --specialize-opt=false), then each --specialize, whose inputs not named
/// take their OPT shape. An error names a --specialize whose input has no
/// profile, whose shape lies outside it, or whose shapes are another
/// program's.
static FailureOr<std::vector<InputShapes>>
specializedShapes(const CompileRequest &request, const InputShapes &opt) {
  std::vector<InputShapes> all;
  if (request.specializeOpt)
    all.push_back(opt);
  for (const auto &[text, named] : request.specializations) {
    InputShapes shapes = opt;
    for (const auto &[name, shape] : named) {
      auto profile = request.profiles.find(name);
      if (profile == request.profiles.end()) {
        llvm::errs() << "error: --specialize " << text << ": input '" << name
                     << "' has no --profile\n";
        return failure();
      }
      const auto &[min, optShape, max] = profile->second;
      if (shape.size() != min.size()) {
        llvm::errs() << "error: --specialize " << text << ": input '" << name
                     << "' has rank " << min.size() << " in its profile\n";
        return failure();
      }
      for (size_t d = 0; d < shape.size(); ++d)
        if (shape[d] < min[d] || shape[d] > max[d]) {
          llvm::errs() << "error: --specialize " << text << ": dimension " << d
                       << " of input '" << name << "' is " << shape[d]
                       << ", outside its profile: " << min[d] << " to "
                       << max[d] << "\n";
          return failure();
        }
      shapes[name] = shape;
    }
    if (llvm::is_contained(all, shapes)) {
      llvm::errs() << "error: --specialize " << text
                   << ": a program is already specialized for these shapes\n";
      return failure();
    }
    all.push_back(std::move(shapes));
  }
  return all;
}

/// With profiles whose OPT shapes fix every symbolic input dimension:
/// compiles the model again for those shapes and for each --specialize
/// (static types throughout, so tiles, vector code and the memory plan are
/// chosen for them) and adds each rank's programs to `engine` as variants
/// of that rank.
LogicalResult
addOptVariants(CompileRequest &request, ModuleOp general, MLIRContext &context,
               llvm::function_ref<void(llvm::StringRef, double)> report,
               EngineDescription &engine) {
  if (request.profiles.empty() ||
      (!request.specializeOpt && request.specializations.empty()))
    return success();
  if (request.targetName != "cpu") {
    if (request.report)
      llvm::errs() << "loomc: no code specialized for the profiles' OPT "
                      "shapes: the "
                   << request.targetName << " target does not specialize\n";
    return success();
  }
  std::string why;
  InputShapes shapes = optShapes(general, request, why);
  if (shapes.empty()) {
    if (!request.specializations.empty()) {
      llvm::errs() << "error: --specialize: " << why << "\n";
      return failure();
    }
    llvm::errs() << "loomc: no code specialized for the profiles' OPT "
                    "shapes: "
                 << why << "\n";
    return success();
  }
  FailureOr<std::vector<InputShapes>> all = specializedShapes(request, shapes);
  if (failed(all))
    return failure();
  using Clock = std::chrono::steady_clock;
  Clock::time_point start = Clock::now();
  auto quiet = [](llvm::StringRef, double) {};
  for (const auto &programShapes : *all) {
    ONNXImportOptions importOptions = request.importOptions;
    for (const auto &[name, shape] : programShapes)
      importOptions.inputShapes[name] = shape;
    OwningOpRef<ModuleOp> module = prepareModule(
        request, importOptions, context, quiet, /*withProfiles=*/false);
    if (!module)
      return failure();
    EngineDescription specialized;
    CompileOptions options = request.options;
    options.onPhase = quiet;
    if (failed(buildEngine(*module, *request.target, options, specialized)))
      return failure();
    if (specialized.ranks.size() != engine.ranks.size()) {
      llvm::errs() << "error: a specialized program has "
                   << specialized.ranks.size() << " ranks, the general one "
                   << engine.ranks.size() << "\n";
      return failure();
    }
    for (auto [rank, program] : llvm::zip(engine.ranks, specialized.ranks))
      if (llvm::Error error = addVariant(rank, std::move(program))) {
        llvm::errs() << "error: a specialized program: "
                     << llvm::toString(std::move(error)) << "\n";
        return failure();
      }
  }
  report(
      "compile the specialized programs",
      std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  return success();
}

int compile(CompileRequest request) {
  using Clock = std::chrono::steady_clock;
  double total = 0;
  std::optional<CompileReport> htmlReport;
  if (!request.reportHtml.empty()) {
    htmlReport.emplace(request.model, request.targetName);
    htmlReport->observe(request.options);
  }
  auto report = [&](llvm::StringRef phase, double ms) {
    total += ms;
    if (htmlReport)
      htmlReport->addPhase(phase, ms);
    if (request.report)
      llvm::errs() << llvm::format("loomc: %-40s %9.1f ms\n",
                                   phase.str().c_str(), ms);
  };
  request.options.onPhase = report;

  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  OwningOpRef<ModuleOp> module =
      prepareModule(request, request.importOptions, context, report);
  if (!module)
    return 1;

  if (request.emit == kEmitPartitioned) {
    if (!request.partition && !request.autoPlan) {
      llvm::errs() << "error: --emit=partitioned needs --grid or --plan\n";
      return 1;
    }
    auto output = openOutput(request.output);
    if (!output)
      return 1;
    module->print(output->os());
    output->os() << "\n";
    output->keep();
    return 0;
  }

  const Target &target = *request.target;
  if (request.emit == kEmitEngine) {
    EngineDescription engine;
    if (failed(buildEngine(*module, target, request.options, engine)) ||
        failed(addOptVariants(request, *module, context, report, engine)))
      return 1;
    Clock::time_point writeStart = Clock::now();
    if (llvm::Error error =
            writeEngine(request.output, engine,
                        request.signingKey ? &*request.signingKey : nullptr)) {
      llvm::errs() << "error: " << llvm::toString(std::move(error)) << "\n";
      return 1;
    }
    report("write engine",
           std::chrono::duration<double, std::milli>(Clock::now() - writeStart)
               .count());
    if (htmlReport) {
      htmlReport->setGrid(
          std::vector<int64_t>(engine.grid.begin(), engine.grid.end()));
      if (failed(writeReport(*htmlReport, request.reportHtml)))
        return 1;
    }
    if (request.report)
      llvm::errs() << llvm::format("loomc: %-40s %9.1f ms\n", "total", total)
                   << "loomc: wrote " << request.output << " ("
                   << engine.ranks.size()
                   << (engine.ranks.size() == 1 ? " rank, " : " ranks, ")
                   << engine.arch << ", code "
                   << engine.ranks.front().code.size() << " bytes, weights "
                   << engine.ranks.front().weights.size() << " bytes in "
                   << engine.ranks.front().weightPlaces.size() << " tensors)\n";
    return 0;
  }

  if (request.rank >= 0) {
    FailureOr<std::optional<int64_t>> ranks = engineGridSize(*module);
    if (failed(ranks))
      return 1;
    if (!ranks->has_value() || request.rank >= **ranks) {
      llvm::errs() << "error: --rank " << request.rank
                   << " needs a partitioned program with that many ranks\n";
      return 1;
    }
    if (failed(target.specializeForRank(*module, request.rank)))
      return 1;
  }

  auto output = openOutput(request.output);
  if (!output)
    return 1;
  if (failed(runGraphPipeline(target, *module, request.options)))
    return 1;
  if (request.emit == kEmitLoom) {
    module->print(output->os());
    output->os() << "\n";
  } else {
    CompileOptions lowering = request.options;
    lowering.optimizeGraph = false;
    if (failed(target.emitStage(*module, request.emit, lowering, output->os())))
      return 1;
  }
  output->keep();
  if (request.report)
    llvm::errs() << llvm::format("loomc: %-40s %9.1f ms\n", "total", total);
  if (htmlReport && failed(writeReport(*htmlReport, request.reportHtml)))
    return 1;
  return 0;
}

} // namespace

InputShapeFlags::InputShapeFlags(llvm::cl::OptionCategory &category)
    : shapes("input-shape", llvm::cl::cat(category),
             llvm::cl::desc("Bind an ONNX graph input's symbolic dimensions "
                            "before compiling: NAME=D0xD1x... (repeatable; "
                            "NAME=scalar for a 0-D input)"),
             llvm::cl::value_desc("name=shape")) {}

FailureOr<ONNXImportOptions> InputShapeFlags::resolve() const {
  ONNXImportOptions options;
  for (const std::string &spec : shapes)
    if (std::string error = parseInputShape(spec, options.inputShapes);
        !error.empty()) {
      llvm::errs() << "error: --input-shape " << error << "\n";
      return failure();
    }
  return options;
}

void registerAllTargets() {
  cpu::registerCPUTarget();
  cuda::registerCUDATarget();
}

void hideOtherOptions(
    llvm::ArrayRef<const llvm::cl::OptionCategory *> categories) {
  // Unlike cl::HideUnrelatedOptions (which makes them "really hidden"),
  // --help-hidden still lists the others.
  for (auto &[name, option] : llvm::cl::getRegisteredOptions()) {
    if (name == "help" || name == "help-hidden" || name == "help-list" ||
        name == "help-list-hidden" || name == "version")
      continue;
    bool ours = llvm::any_of(option->Categories,
                             [&](const llvm::cl::OptionCategory *category) {
                               return llvm::is_contained(categories, category);
                             });
    if (!ours && option->getOptionHiddenFlag() == llvm::cl::NotHidden)
      option->setHiddenFlag(llvm::cl::Hidden);
  }
}

int loomcMain(int argc, char **argv) {
  namespace cl = llvm::cl;
  // --help lists these groups only (LLVM's own options stay behind
  // --help-hidden); targets add theirs when they register.
  cl::OptionCategory inputCategory("Input");
  cl::OptionCategory graphCategory("Graph");
  cl::OptionCategory partitionCategory("Partitioning");
  cl::OptionCategory targetCategory("Target");
  cl::OptionCategory outputCategory("Output");
  registerAllTargets();

  cl::opt<std::string> model(cl::Positional, cl::cat(inputCategory),
                             cl::desc("<model.onnx | model.onnxtxt | "
                                      "model.mlir>"));
  cl::opt<std::string> onnx(
      "onnx", cl::cat(inputCategory),
      cl::desc("The model, in trtexec's spelling (the same as the positional "
               "argument)"));
  InputShapeFlags inputShapes(inputCategory);
  cl::list<std::string> profiles(
      "profile", cl::cat(inputCategory),
      cl::desc("An optimization profile of an input with symbolic "
               "dimensions: NAME=MIN:OPT:MAX, three shapes (e.g. "
               "input_ids=1x1:1x128:8x512; repeatable). The engine rejects "
               "sizes outside [MIN, MAX] with a message naming the "
               "dimension and the range"),
      cl::value_desc("name=min:opt:max"));
  cl::opt<bool> specializeOpt(
      "specialize-opt", cl::init(true), cl::cat(inputCategory),
      cl::desc("With --profile: also compile the model for the profiles' OPT "
               "shapes (static sizes throughout) and run that code when a "
               "call's input shapes are exactly those; the general code runs "
               "at every other size (default on; =false to leave it out)"));

  cl::list<std::string> specializations(
      "specialize", cl::cat(inputCategory),
      cl::desc("With --profile: also compile the model for these shapes, "
               "NAME=SHAPE[,NAME=SHAPE...] (profiled inputs not named take "
               "their OPT shape; each inside its profile), and run that code "
               "when a call's input shapes are exactly those (repeatable: "
               "one program each, e.g. batch buckets)"),
      cl::value_desc("name=shape,..."));

  cl::opt<ContractionPrecision> precision(
      "precision", cl::cat(graphCategory),
      cl::desc("Precision of matmul, convolution and attention"),
      cl::init(ContractionPrecision::F32),
      cl::values(clEnumValN(ContractionPrecision::F32, "f32", "keep f32"),
                 clEnumValN(ContractionPrecision::FP16, "fp16", "f16"),
                 clEnumValN(ContractionPrecision::BF16, "bf16", "bfloat16")));
  cl::opt<bool> fp16("fp16", cl::cat(graphCategory),
                     cl::desc("--precision=fp16, in trtexec's spelling"));
  cl::opt<bool> bf16("bf16", cl::cat(graphCategory),
                     cl::desc("--precision=bf16, in trtexec's spelling"));
  cl::opt<bool> noGraph("no-graph-optimize", cl::cat(graphCategory),
                        cl::desc("Lower the program as imported, without "
                                 "the graph pipeline"));
  cl::opt<int64_t> kvCache(
      "kv-cache", cl::init(0), cl::cat(graphCategory),
      cl::desc(
          "Decoders exported with their cache (past_key_values.* in, "
          "present.* out): keep each cache in a buffer of N positions "
          "that the runtime's session (or the caller) keeps between calls and "
          "the code appends to "
          "in place, with the filled length as a new input "
          "cache_length (-loom-kv-cache-in-place); with --grid=tp=N each "
          "rank keeps its heads' share"));

  cl::opt<std::string> grid("grid", cl::cat(partitionCategory),
                            cl::desc("Partition for a device grid first, e.g. "
                                     "--grid=tp=2 or --grid=dp=2,tp=2,pp=2"));
  cl::opt<int64_t> pipelineStages(
      "pp", cl::init(1), cl::cat(partitionCategory),
      cl::desc("Pipeline stages: adds pp=N to --grid (--grid=dp=2,tp=4 "
               "--pp=2 is --grid=dp=2,tp=4,pp=2)"));
  cl::opt<int64_t> expertRanks(
      "ep", cl::init(1), cl::cat(partitionCategory),
      cl::desc("Expert-parallel degree: adds ep=N to --grid"));
  cl::opt<int64_t> microBatches(
      "micro-batches", cl::init(1), cl::cat(partitionCategory),
      cl::desc("With a pp grid axis: split the batch into this many "
               "micro-batches (GPipe)"));
  cl::opt<bool> sequenceParallel(
      "sequence-parallel", cl::cat(partitionCategory),
      cl::desc("With --grid tp=N: sequence parallelism between the blocks"));
  cl::opt<double> capacityFactor(
      "capacity-factor", cl::init(0.0), cl::cat(partitionCategory),
      cl::desc("With --grid ep=N: the capacity factor of mixture-of-experts "
               "layers (tokens over capacity are dropped; 0: none)"));
  cl::opt<std::string> plan(
      "plan", cl::cat(partitionCategory),
      cl::desc("--plan=auto: choose the grid for --devices (decoders: the "
               "cluster planner's ranking, checked by partitioning; other "
               "programs: every grid partitioned and measured); "
               "--plan=trials: every grid, decoders too. The report goes "
               "to stderr"));
  cl::opt<int64_t> devices("devices", cl::init(0), cl::cat(partitionCategory),
                           cl::desc("With --plan=auto: the devices"));
  cl::opt<int64_t> devicesPerNode(
      "devices-per-node", cl::init(8), cl::cat(partitionCategory),
      cl::desc("With --plan=auto: devices per node"));
  cl::opt<int64_t> deviceMemory(
      "device-memory", cl::init(int64_t(80) << 30), cl::cat(partitionCategory),
      cl::desc("With --plan=auto: bytes of memory per device"));
  cl::opt<double> deviceGflops(
      "device-gflops", cl::init(100.0), cl::cat(partitionCategory),
      cl::desc("With --plan=auto: sustained GFLOP/s of a device"));
  cl::opt<double> memoryGBps(
      "memory-gbps", cl::init(20.0), cl::cat(partitionCategory),
      cl::desc("With --plan=auto: GB/s a device reads its memory at"));
  cl::opt<double> linkGBps(
      "link-gbps", cl::init(10.0), cl::cat(partitionCategory),
      cl::desc("With --plan=auto: GB/s between devices of a node"));
  cl::opt<double> interNodeGBps(
      "inter-node-gbps", cl::init(2.5), cl::cat(partitionCategory),
      cl::desc("With --plan=auto: GB/s between nodes"));

  // cl::desc keeps a reference: the text must outlive the option.
  std::string targetHelp =
      "The code generator (registered: " + registeredTargetNames() + ")";
  cl::opt<std::string> targetName(
      "target", cl::init("cpu"), cl::cat(targetCategory), cl::desc(targetHelp));
  cl::opt<unsigned> optLevel("O", cl::cat(targetCategory),
                             cl::desc("Optimization level of the generated "
                                      "code (0-3)"),
                             cl::Prefix, cl::init(3));
  cl::opt<bool> runtimeChecks(
      "runtime-checks", cl::cat(targetCategory),
      cl::desc("Debugging: check every buffer access and linalg op's shapes "
               "at run time; a failed check prints the op and aborts"));
  cl::opt<bool> kernelTimers(
      "kernel-timers", cl::cat(targetCategory),
      cl::desc("Time every kernel when the engine runs (loom-run --profile "
               "prints each kernel's time, share, GFLOP/s and GB/s); costs "
               "two runtime calls per kernel"));

  cl::opt<std::string> output("o", cl::cat(outputCategory),
                              cl::desc("Output file ('-': stdout)"),
                              cl::value_desc("file"), cl::init("-"));
  cl::alias saveEngine("saveEngine", cl::aliasopt(output),
                       cl::cat(outputCategory),
                       cl::desc("Alias for -o (trtexec)"));
  cl::opt<std::string> emit(
      "emit", cl::init(kEmitEngine.str()), cl::cat(outputCategory),
      cl::desc("What to write: engine (an engine for loom-run and the "
               "runtime, the default), partitioned (the partitioned program "
               "for all ranks, with --grid or --plan), loom (loom IR after "
               "the graph pipeline), or one of the target's stages (cpu: "
               "linalg, llvm-dialect, llvm, obj)"));
  cl::opt<int64_t> rank(
      "rank", cl::init(-1), cl::cat(outputCategory),
      cl::desc("With a partitioned program and --emit before engine: emit "
               "this rank's program (collectives as runtime calls)"));
  cl::opt<bool> report("report", cl::cat(outputCategory),
                       cl::desc("Print the time of each phase and the fusion "
                                "report to stderr"));
  cl::opt<std::string> sign(
      "sign", cl::cat(outputCategory), cl::value_desc("key file"),
      cl::desc("Sign the engine with this Ed25519 secret key (runtimes "
               "given the public key refuse engines it did not sign: "
               "loom-run --trusted-key)"));
  cl::opt<std::string> generateKey(
      "generate-signing-key", cl::cat(outputCategory), cl::value_desc("name"),
      cl::desc("Write a new Ed25519 key pair to NAME.key (secret, mode 0600) "
               "and NAME.pub, then exit"));
  cl::opt<std::string> reportHtml(
      "report-html", cl::cat(outputCategory), cl::value_desc("file"),
      cl::desc("Write a self-contained HTML report: the phases, each rank's "
               "kernels as a graph (fusion groups with their ONNX nodes, "
               "unfused ops, collectives with their bytes) and each memory "
               "plan as a timeline"));

  llvm::SmallVector<const cl::OptionCategory *> shown = {
      &inputCategory, &graphCategory, &partitionCategory, &targetCategory,
      &outputCategory};
  for (const TargetRegistration *registration : registeredTargets())
    if (registration->category)
      shown.push_back(registration->category);
  hideOtherOptions(shown);
  cl::ParseCommandLineOptions(
      argc, argv,
      "loomc: compile a model ahead of time\n\n"
      "  loomc model.onnx -o model.engine --report\n"
      "  loomc model.onnx -o model.engine --input-shape input_ids=2x64\n"
      "  loomc model.onnx -o model.engine --grid=tp=2\n"
      "  loomc model.onnx -o model.engine --grid=pp=2 --micro-batches=2\n"
      "  loomc moe.onnx -o moe.engine --grid=ep=4 --capacity-factor=1.25\n"
      "  loomc model.onnx -o model.engine --plan=auto --devices=4\n"
      "  loomc model.onnx --emit=obj -o model.o\n"
      "  loomc model.onnx --emit=linalg --report\n\n"
      "LLVM's own options: --help-hidden\n");
  if (optLevel > 3) {
    llvm::errs() << "error: -O must be 0, 1, 2 or 3\n";
    return 1;
  }
  if (!onnx.empty() && !model.empty()) {
    llvm::errs() << "error: give the model once: as the positional argument "
                    "or with --onnx\n";
    return 1;
  }
  if (!generateKey.empty()) {
    if (llvm::Error error = generateSigningKey(generateKey)) {
      llvm::errs() << "error: " << llvm::toString(std::move(error)) << "\n";
      return 1;
    }
    llvm::Expected<PublicKey> key = readPublicKey(generateKey + ".pub");
    if (!key) {
      llvm::errs() << "error: " << llvm::toString(key.takeError()) << "\n";
      return 1;
    }
    llvm::errs() << "loomc: wrote " << generateKey << ".key and " << generateKey
                 << ".pub (key " << keyId(*key) << ")\n";
    return 0;
  }
  if (!onnx.empty())
    model = onnx;
  if (model.empty()) {
    llvm::errs() << "error: no model given (loomc --help)\n";
    return 1;
  }
  if (fp16 + bf16 + (precision.getNumOccurrences() > 0) > 1) {
    llvm::errs() << "error: give the precision once (--precision, --fp16 or "
                    "--bf16)\n";
    return 1;
  }
  if (fp16)
    precision = ContractionPrecision::FP16;
  if (bf16)
    precision = ContractionPrecision::BF16;
  const TargetRegistration *registration = lookupTarget(targetName);
  if (!registration) {
    llvm::errs() << "error: unknown target '" << targetName
                 << "' (registered: " << registeredTargetNames() << ")\n";
    return 1;
  }
  std::unique_ptr<Target> target = registration->createFromCommandLine();
  if (!target)
    return 1;
  const TargetStage *stage = nullptr;
  for (const TargetStage &candidate : target->getStages())
    if (candidate.name == emit)
      stage = &candidate;
  if (!stage && emit != kEmitEngine && emit != kEmitLoom &&
      emit != kEmitPartitioned) {
    std::string known;
    for (const TargetStage &candidate : target->getStages())
      known += ", " + candidate.name.str();
    llvm::errs() << "error: --emit=" << emit << " is not a form target '"
                 << target->getName() << "' writes (engine, partitioned, loom"
                 << known << ")\n";
    return 1;
  }
  if ((emit == kEmitEngine || (stage && stage->binary)) && output == "-") {
    llvm::errs() << "error: --emit=" << emit
                 << " writes bytes; it needs an output file (-o)\n";
    return 1;
  }
  CompileRequest request;
  request.model = model;
  request.output = output;
  request.emit = emit;
  request.target = std::move(target);
  request.report = report;
  request.reportHtml = reportHtml;
  if (!sign.empty()) {
    if (emit != kEmitEngine) {
      llvm::errs() << "error: --sign signs engines; it does not combine with "
                      "--emit="
                   << emit << "\n";
      return 1;
    }
    llvm::Expected<SigningKey> key = readSigningKey(sign);
    if (!key) {
      llvm::errs() << "error: " << llvm::toString(key.takeError()) << "\n";
      return 1;
    }
    request.signingKey = *key;
  }
  request.targetName = targetName;
  request.rank = rank;
  if (!grid.empty() && !plan.empty()) {
    llvm::errs() << "error: give --grid or --plan=auto, not both\n";
    return 1;
  }
  // The grid is parsed here, once; from here on it travels typed.
  SmallVector<GridAxisSpec> axes;
  if (!grid.empty()) {
    MLIRContext scratch(MLIRContext::Threading::DISABLED);
    ScopedDiagnosticHandler print(&scratch, [](Diagnostic &d) {
      llvm::errs() << "error: --grid: " << d << "\n";
      return success();
    });
    FailureOr<SmallVector<GridAxisSpec>> parsed = parseGridSpec(
        grid, [&] { return mlir::emitError(UnknownLoc::get(&scratch)); });
    if (failed(parsed))
      return 1;
    axes = std::move(*parsed);
  }
  // --pp and --ep are spelled apart from --grid for convenience; they are
  // axes of the same grid.
  for (auto [name, degree] : {std::make_pair("pp", int64_t(pipelineStages)),
                              std::make_pair("ep", int64_t(expertRanks))}) {
    if (degree < 1) {
      llvm::errs() << "error: --" << name << " must be at least 1\n";
      return 1;
    }
    if (degree == 1)
      continue;
    if (!plan.empty()) {
      llvm::errs() << "error: --" << name
                   << " states a grid axis; give --grid or --plan=auto, not "
                      "both\n";
      return 1;
    }
    llvm::StringRef axisName = name;
    if (llvm::any_of(axes, [&](const GridAxisSpec &axis) {
          return axis.name == axisName;
        })) {
      llvm::errs() << "error: --" << name << " and a " << name
                   << " axis in --grid both give the " << name << " degree\n";
      return 1;
    }
    axes.push_back({name, degree});
  }
  if (!axes.empty()) {
    PartitionOptions partition;
    partition.axes = std::move(axes);
    partition.sequenceParallel = sequenceParallel;
    partition.microBatches = microBatches;
    partition.capacityFactor = capacityFactor;
    request.partition = std::move(partition);
  } else if (!plan.empty()) {
    if (plan != "auto" && plan != "trials") {
      llvm::errs() << "error: --plan takes 'auto' (the planner chooses the "
                      "grid) or 'trials' (every grid partitioned and "
                      "measured); got '"
                   << plan << "'\n";
      return 1;
    }
    AutoPlanRequest autoPlan;
    autoPlan.devices = devices;
    autoPlan.search = plan == "trials" ? AutoPlanRequest::Search::Trials
                                       : AutoPlanRequest::Search::Analytic;
    autoPlan.model.memoryGBps = memoryGBps;
    autoPlan.model.devicesPerNode = devicesPerNode;
    autoPlan.model.deviceMemory = deviceMemory;
    autoPlan.model.deviceGflops = deviceGflops;
    autoPlan.model.linkGBps = linkGBps;
    autoPlan.model.interNodeGBps = interNodeGBps;
    autoPlan.capacityFactor = capacityFactor;
    request.autoPlan = autoPlan;
  }
  if (rank >= 0 && emit == kEmitEngine) {
    llvm::errs() << "error: --rank selects a rank's program for --emit; an "
                    "engine holds every rank\n";
    return 1;
  }
  request.options.optimizeGraph = !noGraph;
  request.options.precision = precision;
  request.options.optLevel = optLevel;
  request.options.reportKernels = report;
  request.options.runtimeChecks = runtimeChecks;
  request.options.kernelTimers = kernelTimers;
  if (kvCache < 0) {
    llvm::errs() << "error: --kv-cache must be positive (the positions "
                    "each cache holds)\n";
    return 1;
  }
  request.kvCacheCapacity = kvCache;
  request.specializeOpt = specializeOpt;
  for (const std::string &spec : profiles)
    if (std::string error = parseProfile(spec, request.profiles);
        !error.empty()) {
      llvm::errs() << "error: " << error << "\n";
      return 1;
    }
  for (llvm::StringRef spec : specializations) {
    if (request.profiles.empty()) {
      llvm::errs() << "error: --specialize needs --profile\n";
      return 1;
    }
    InputShapes &shapes =
        request.specializations.emplace_back(spec.str(), InputShapes()).second;
    llvm::SmallVector<llvm::StringRef> named;
    spec.split(named, ',');
    for (llvm::StringRef one : named)
      if (std::string error = parseInputShape(one.str(), shapes);
          !error.empty()) {
        llvm::errs() << "error: --specialize " << spec << ": " << error << "\n";
        return 1;
      }
  }
  FailureOr<ONNXImportOptions> importOptions = inputShapes.resolve();
  if (failed(importOptions))
    return 1;
  request.importOptions = *importOptions;
  return compile(std::move(request));
}

} // namespace loom
