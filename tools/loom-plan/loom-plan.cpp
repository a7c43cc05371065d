//===- loom-plan.cpp - Choose a parallel configuration for a cluster ------===//
//
// A thin driver over loom/ClusterPlanner: reads the model and GPU, then
// either predicts one configuration (--evaluate) or ranks them all.
//
//===----------------------------------------------------------------------===//

#include "loom/ClusterPlanner/ClusterPlanner.h"

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
             "Qwen2, Mixtral fields)"),
    cl::value_desc("config.json"));
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
                             cl::desc("Serving: bytes per weight (2: bf16, "
                                      "1: fp8)"));
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
                       p.prefillSeconds);
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
  if (llvm::StringRef(modelPath).ends_with(".onnx"))
    return fail(modelPath + ": give the model's config.json (loom-plan "
                            "plans decoders from their shape; ONNX models "
                            "are not read yet)");
  llvm::Expected<ModelShape> model = parseHuggingFaceConfig(
      (*modelFile)->getBuffer(), llvm::sys::path::filename(modelPath));
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
      promptTokens < 1 || (weightBytes != 1 && weightBytes != 2))
    return fail("--seq-len, --global-batch-tokens, --batch and "
                "--prompt-tokens must be positive, --weight-bytes 1 or 2");
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
    if (json)
      os << llvm::formatv("{0:2}", toJSON(p, mode)) << "\n";
    else
      printPrediction(os, p, cluster);
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
  if (json) {
    llvm::json::Array topList;
    for (size_t i = 0; i < shown; ++i)
      topList.push_back(toJSON(ranked[i], mode));
    llvm::json::Object result{{"best", toJSON(best, mode)},
                              {"top", std::move(topList)},
                              {"why", why},
                              {"configurations", int64_t(ranked.size())},
                              {"search_time_s", seconds}};
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(result))) << "\n";
    return best.fits ? 0 : 1;
  }
  os << llvm::formatv("{0}: {1:F2}B parameters ({2:F2}B active), {3} "
                      "layers; {4} x {5} ({6} per node); {7} configurations "
                      "in {8:F3} s\n",
                      model->name, model->totalParameters() / 1e9,
                      model->activeParameters() / 1e9, model->layers,
                      cluster.gpus, cluster.gpu.name, cluster.gpusPerNode,
                      ranked.size(), seconds);
  os << llvm::format("%-4s %-92s %5s %10s %10s %7s %12s\n", "rank",
                     "configuration", "fits", "memory", "step (s)", "MFU",
                     "tokens/s/GPU");
  for (size_t i = 0; i < shown; ++i) {
    const Prediction &p = ranked[i];
    os << llvm::format("%-4zu %-92s %5s %10s %10.4f %6.1f%% %12.0f\n", i + 1,
                       p.config.str(mode).c_str(), p.fits ? "yes" : "no",
                       gib(p.memoryBytes).c_str(), p.stepSeconds, 100 * p.mfu,
                       p.tokensPerSecondPerGPU);
  }
  os << "\nbest: " << best.config.str(mode) << "\nwhy: " << why << "\n\n";
  printPrediction(os, best, cluster);
  return best.fits ? 0 : 1;
}
