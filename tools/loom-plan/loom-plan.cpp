//===- loom-plan.cpp - Choose a parallel configuration for a cluster ------===//
//
// A thin driver over loom/ClusterPlanner: reads the model and GPU, then
// either predicts one configuration (--evaluate) or ranks them all.
//
//===----------------------------------------------------------------------===//

#include "loom/ClusterPlanner/ClusterPlanner.h"
#include "loom/Compiler/Compiler.h"
#include "loom/Dialect/Loom/Sharding/DecoderShape.h"
#include "loom/InitAllDialects.h"
#include "loom/Target/Target.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace loom::plan;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory category("loom-plan options");

cl::opt<std::string> modelPath(
    "model", cl::Required, cl::cat(category),
    cl::desc("A Hugging Face config.json of a decoder (Llama, Mistral, "
             "Qwen2, Mixtral fields), or the decoder as an ONNX model (its "
             "shape read from the program)"),
    cl::value_desc("config.json|model.onnx"));
cl::opt<int64_t> gpus("gpus", cl::Required, cl::cat(category),
                      cl::desc("GPUs in the cluster"));
cl::opt<int64_t> gpusPerNode("gpus-per-node", cl::init(8), cl::cat(category),
                             cl::desc("GPUs per node"));
cl::opt<std::string>
    gpuName("gpu", cl::init("h100-80gb"), cl::cat(category),
            cl::desc("h100-80gb, h200-141gb, a100-80gb, or a JSON file "
                     "(bf16_flops, fp8_flops, memory_bytes, memory_bandwidth, "
                     "intra_node_bandwidth, inter_node_bandwidth, "
                     "intra_node_latency, inter_node_latency)"));
cl::opt<Mode>
    mode("mode", cl::init(Mode::Train), cl::cat(category),
         cl::desc("What the cluster does"),
         cl::values(clEnumValN(Mode::Train, "train", "training steps"),
                    clEnumValN(Mode::Serve, "serve",
                               "serving: decode steps of a batch")));
cl::opt<int64_t> seqLen("seq-len", cl::init(4096), cl::cat(category),
                        cl::desc("Tokens per sequence (serving: the context "
                                 "the KV cache holds)"));
cl::opt<int64_t>
    globalBatchTokens("global-batch-tokens", cl::init(int64_t(1) << 20),
                      cl::cat(category),
                      cl::desc("Training: tokens per optimizer step"));
cl::opt<int64_t> servingBatch("batch", cl::init(32), cl::cat(category),
                              cl::desc("Serving: sequences decoded together "
                                       "per replica"));
cl::opt<int64_t> promptTokens("prompt-tokens", cl::init(2048),
                              cl::cat(category),
                              cl::desc("Serving: prompt length (prefill)"));
cl::opt<int64_t> weightBytes("weight-bytes", cl::init(2), cl::cat(category),
                             cl::desc("Serving: bytes per weight (4: fp32, "
                                      "2: bf16, 1: fp8)"));
cl::opt<double> maxStepMs("max-step-ms", cl::init(0), cl::cat(category),
                          cl::desc("Serving: the longest decode step (time "
                                   "between tokens) a configuration may "
                                   "take; those slower rank after"));
cl::opt<double> maxPrefillMs("max-prefill-ms", cl::init(0), cl::cat(category),
                             cl::desc("Serving: the longest time to the "
                                      "first token"));
enum class Objective { Throughput, Latency };
cl::opt<Objective>
    objective("objective", cl::init(Objective::Throughput), cl::cat(category),
              cl::desc("Serving: what ranks configurations"),
              cl::values(clEnumValN(Objective::Throughput, "throughput",
                                    "tokens/s per GPU"),
                         clEnumValN(Objective::Latency, "latency",
                                    "the shortest decode step")));
cl::opt<bool> tpAcrossNodes("tp-across-nodes", cl::cat(category),
                            cl::desc("Let tensor parallelism span nodes"));
cl::opt<int64_t> top("top", cl::init(5), cl::cat(category),
                     cl::desc("Configurations listed"));
cl::opt<std::string> evaluateSpec(
    "evaluate", cl::cat(category),
    cl::desc("Predict one configuration, e.g. \"dp=4,tp=2,pp=2,cp=1,ep=1,"
             "zero=1,micro-batch=2,grad-accum=8,recompute=selective,sp=1\""));
cl::opt<bool> json("json", cl::cat(category),
                   cl::desc("Print one JSON object"));

/// The decoder an ONNX model (or loom IR) runs: imported, through the
/// graph pipeline (attention, norms and activations recognized), read.
llvm::Expected<ModelShape> readONNXDecoder(llvm::StringRef path) {
  mlir::DialectRegistry registry;
  loom::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  std::string diagnostics;
  llvm::raw_string_ostream captured(diagnostics);
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    captured << d.getLocation() << ": " << d.str() << "\n";
    return mlir::success();
  });
  mlir::OwningOpRef<mlir::ModuleOp> module = loom::loadModel(path, &context);
  if (!module)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cannot import " + path.str() + ": " +
                                       diagnostics);
  mlir::PassManager pm(&context);
  loom::CompileOptions options;
  loom::buildDefaultGraphPipeline(pm, options, /*formKernels=*/false);
  if (mlir::failed(pm.run(*module)))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   path.str() +
                                       ": the graph pipeline "
                                       "failed: " +
                                       diagnostics);
  return loom::recognizeDecoder(*module, path);
}

/// 8.03B, 124.44M, or the count itself.
std::string count(double n) {
  if (n >= 1e9)
    return llvm::formatv("{0:F2}B", n / 1e9);
  if (n >= 1e6)
    return llvm::formatv("{0:F2}M", n / 1e6);
  return llvm::formatv("{0:F0}", n);
}

std::string gib(double bytes) {
  return llvm::formatv("{0:F1} GiB", bytes / (1024.0 * 1024.0 * 1024.0));
}

void printPrediction(llvm::raw_ostream &os, const Prediction &p,
                     const Cluster &cluster) {
  os << "configuration: " << p.config.str(mode) << "\n";
  os << "fits: " << (p.fits ? "true" : "false") << " (" << gib(p.memoryBytes)
     << " of " << gib(cluster.gpu.memoryBytes) << " per GPU)\n";
  os << "memory per GPU:\n";
  for (const auto &[name, bytes] : p.memory)
    os << llvm::format("  %-24s %12s\n", name.c_str(), gib(bytes).c_str());
  os << (mode == Mode::Train ? "step time: " : "decode step time: ")
     << llvm::format("%.4f s", p.stepSeconds) << "\n";
  for (const auto &[name, seconds] : p.time)
    os << llvm::format("  %-24s %12.4f s\n", name.c_str(), seconds);
  if (mode == Mode::Serve)
    os << llvm::format("prefill (time to first token): %.4f s\n",
                       p.prefillSeconds)
       << "meets the targets: " << (p.meetsTargets ? "yes" : "no") << "\n";
  os << llvm::format("MFU: %.1f %%, tokens/s per GPU: %.0f\n", 100 * p.mfu,
                     p.tokensPerSecondPerGPU);
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "loom-plan: choose the parallel configuration of a decoder on a "
      "cluster\n\n"
      "  loom-plan --model config.json --gpus 64 --gpu h100-80gb --mode "
      "train\n"
      "  loom-plan --model config.json --gpus 8 --mode serve --batch 64 "
      "--seq-len 8192\n"
      "  loom-plan --model config.json --gpus 64 --evaluate "
      "\"dp=8,tp=8,zero=1,micro-batch=1,grad-accum=32\" --json\n");
  auto fail = [](const llvm::Twine &message) {
    llvm::errs() << "loom-plan: error: " << message << "\n";
    return 1;
  };
  auto start = std::chrono::steady_clock::now();

  auto modelFile = llvm::MemoryBuffer::getFile(modelPath);
  if (!modelFile)
    return fail(modelPath + ": " + modelFile.getError().message());
  llvm::Expected<ModelShape> model =
      llvm::StringRef(modelPath).ends_with(".json")
          ? parseHuggingFaceConfig((*modelFile)->getBuffer(),
                                   llvm::sys::path::filename(modelPath))
          : readONNXDecoder(modelPath);
  if (!model)
    return fail(llvm::toString(model.takeError()));

  Cluster cluster;
  if (std::optional<GPUSpec> gpu = builtinGPU(gpuName)) {
    cluster.gpu = *gpu;
  } else {
    auto gpuFile = llvm::MemoryBuffer::getFile(gpuName);
    if (!gpuFile)
      return fail("--gpu " + gpuName + ": neither a built-in GPU (" +
                  llvm::join(builtinGPUNames(), ", ") + ") nor a file (" +
                  gpuFile.getError().message() + ")");
    llvm::Expected<GPUSpec> custom = parseGPUSpec((*gpuFile)->getBuffer());
    if (!custom)
      return fail(gpuName + ": " + llvm::toString(custom.takeError()));
    cluster.gpu = *custom;
  }
  if (gpus < 1 || gpusPerNode < 1)
    return fail("--gpus and --gpus-per-node must be positive");
  if (gpus > gpusPerNode && gpus % gpusPerNode)
    return fail("--gpus must be a multiple of --gpus-per-node");
  cluster.gpus = gpus;
  cluster.gpusPerNode = std::min<int64_t>(gpusPerNode, gpus);
  cluster.tpAcrossNodes = tpAcrossNodes;

  Workload workload;
  workload.mode = mode;
  workload.seqLen = seqLen;
  workload.globalBatchTokens = globalBatchTokens;
  workload.servingBatch = servingBatch;
  workload.promptTokens = promptTokens;
  workload.servingWeightBytes = weightBytes;
  if (seqLen < 1 || globalBatchTokens < 1 || servingBatch < 1 ||
      promptTokens < 1 ||
      (weightBytes != 1 && weightBytes != 2 && weightBytes != 4) ||
      maxStepMs < 0 || maxPrefillMs < 0)
    return fail("--seq-len, --global-batch-tokens, --batch and "
                "--prompt-tokens must be positive, --weight-bytes 1, 2 or "
                "4, the targets not negative");
  workload.valueBytes = weightBytes == 4 ? 4 : 2;
  workload.maxStepSeconds = maxStepMs / 1e3;
  workload.maxPrefillSeconds = maxPrefillMs / 1e3;
  workload.minimizeLatency = objective == Objective::Latency;
  if (mode == Mode::Train && globalBatchTokens % seqLen)
    return fail("--global-batch-tokens must be a multiple of --seq-len");

  llvm::raw_ostream &os = llvm::outs();
  if (!evaluateSpec.empty()) {
    llvm::Expected<Config> config = parseConfig(evaluateSpec);
    if (!config)
      return fail("--evaluate: " + llvm::toString(config.takeError()));
    Prediction p = evaluate(*model, cluster, workload, *config);
    if (!p.invalid.empty())
      return fail("--evaluate " + config->str(mode) + ": " + p.invalid);
    int64_t batchLimit =
        mode == Mode::Serve
            ? maxServingBatch(*model, cluster, workload, *config)
            : 0;
    if (json) {
      llvm::json::Value value = toJSON(p, mode);
      value.getAsObject()->insert({"model", toJSON(*model)});
      if (mode == Mode::Serve)
        value.getAsObject()->insert({"max_batch", batchLimit});
      os << llvm::formatv("{0:2}", value) << "\n";
    } else {
      os << model->name << ": " << describe(*model) << "\n";
      printPrediction(os, p, cluster);
      if (mode == Mode::Serve)
        os << "sequences of " << seqLen
           << " tokens a replica holds: " << batchLimit << "\n";
    }
    return 0;
  }

  std::vector<Prediction> ranked = search(*model, cluster, workload);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (ranked.empty())
    return fail("no configuration of " + llvm::Twine(cluster.gpus) +
                " GPUs applies to " + model->name);
  size_t shown = std::min<size_t>(std::max<int64_t>(top, 1), ranked.size());
  const Prediction &best = ranked.front();
  // The best plan that splits the model differently (another tp or pp):
  // the alternative a reader weighs.
  const Prediction *alternative = nullptr;
  for (const Prediction &p : ranked)
    if (p.fits &&
        (p.config.tp != best.config.tp || p.config.pp != best.config.pp)) {
      alternative = &p;
      break;
    }
  std::string why = !best.fits    ? "no configuration fits in memory"
                    : alternative ? explain(best, *alternative, mode)
                                  : "the only grid that fits";
  const Prediction *prefill =
      mode == Mode::Serve ? bestForPrefill(ranked) : nullptr;
  int64_t batchLimit =
      mode == Mode::Serve
          ? maxServingBatch(*model, cluster, workload, best.config)
          : 0;
  if (json) {
    llvm::json::Array topList;
    for (size_t i = 0; i < shown; ++i)
      topList.push_back(toJSON(ranked[i], mode));
    llvm::json::Object result{{"best", toJSON(best, mode)},
                              {"top", std::move(topList)},
                              {"why", why},
                              {"configurations", int64_t(ranked.size())},
                              {"search_time_s", seconds},
                              {"model", toJSON(*model)}};
    if (mode == Mode::Serve) {
      result["max_batch"] = batchLimit;
      if (prefill)
        result["best_for_prefill"] = toJSON(*prefill, mode);
    }
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(result))) << "\n";
    return best.fits ? 0 : 1;
  }
  os << llvm::formatv("{0}: {1} parameters ({2} active), {3}; "
                      "{4} x {5} ({6} per node); {7} configurations "
                      "in {8:F3} s\n",
                      model->name, count(model->totalParameters()),
                      count(model->activeParameters()), describe(*model),
                      cluster.gpus, cluster.gpu.name, cluster.gpusPerNode,
                      ranked.size(), seconds);
  bool targets = workload.maxStepSeconds > 0 || workload.maxPrefillSeconds > 0;
  os << llvm::format("%-4s %-92s %5s %10s %10s %7s %12s", "rank",
                     "configuration", "fits", "memory", "step (s)", "MFU",
                     "tokens/s/GPU")
     << (targets ? "  targets\n" : "\n");
  for (size_t i = 0; i < shown; ++i) {
    const Prediction &p = ranked[i];
    os << llvm::format("%-4zu %-92s %5s %10s %10.4f %6.1f%% %12.0f", i + 1,
                       p.config.str(mode).c_str(), p.fits ? "yes" : "no",
                       gib(p.memoryBytes).c_str(), p.stepSeconds, 100 * p.mfu,
                       p.tokensPerSecondPerGPU)
       << (targets ? (p.meetsTargets ? "  met\n" : "  missed\n") : "\n");
  }
  os << "\nbest: " << best.config.str(mode) << "\nwhy: " << why << "\n\n";
  printPrediction(os, best, cluster);
  if (mode == Mode::Serve) {
    os << "sequences of " << seqLen << " tokens a replica holds: " << batchLimit
       << "\n";
    if (prefill)
      os << "prefill on its own replicas: " << prefill->config.str(mode)
         << llvm::format(" (time to first token %.4f s)\n",
                         prefill->prefillSeconds);
  }
  return best.fits ? 0 : 1;
}
