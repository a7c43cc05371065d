//===- ClusterPlanner.h - Parallel configurations for a cluster -*- C++ -*-===//
//
// The analytic planner behind `loom-plan`: from a decoder's shape (a
// Hugging Face config.json) and a cluster (GPU model, count, GPUs per
// node), it predicts, for a parallel configuration, the memory each GPU
// needs (parameters, gradients, optimizer states, activations, KV cache,
// buffers) and the time of a training step or a serving step (compute,
// each axis's exposed communication, the pipeline bubble), and searches
// every configuration for the best. Formulas and their sources:
// docs/planner.md.
//
// It does not build or partition programs: a search over tens of thousands
// of configurations for 512 GPUs takes well under a second.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_CLUSTERPLANNER_CLUSTERPLANNER_H
#define LOOM_CLUSTERPLANNER_CLUSTERPLANNER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace loom::plan {

/// A decoder-only transformer (Llama, Mistral, Qwen2, Mixtral shapes).
struct ModelShape {
  std::string name;
  int64_t hidden = 0;
  int64_t intermediate = 0;
  int64_t layers = 0;
  int64_t heads = 0;
  int64_t kvHeads = 0;
  int64_t headDim = 0;
  int64_t vocab = 0;
  bool tiedEmbeddings = false;
  /// Mixture of experts: experts per layer (0 or 1: a dense MLP) and the
  /// experts each token uses.
  int64_t experts = 0;
  int64_t expertsPerToken = 0;
  /// A gated MLP (gate, up and down projections: SwiGLU) or a plain one
  /// (up and down: GPT-2's GELU MLP).
  bool gatedMLP = true;

  bool isMoE() const { return experts > 1; }
  /// Parameters of one layer (all experts), of the embeddings and head,
  /// in all, and those a token uses (its experts only).
  double layerParameters() const;
  double expertParameters() const;
  double embeddingParameters() const;
  double totalParameters() const;
  double activeParameters() const;
};

/// Reads the fields of a Hugging Face config.json (hidden_size,
/// intermediate_size, num_hidden_layers, num_attention_heads,
/// num_key_value_heads, head_dim, vocab_size, tie_word_embeddings,
/// num_local_experts, num_experts_per_tok).
llvm::Expected<ModelShape> parseHuggingFaceConfig(llvm::StringRef json,
                                                  llvm::StringRef name);

/// A GPU and its links, from datasheets.
struct GPUSpec {
  std::string name;
  /// Dense peak FLOP/s.
  double bf16Flops = 0;
  double fp8Flops = 0;
  double memoryBytes = 0;
  double memoryBandwidth = 0;
  /// Per GPU, one direction: to the GPUs of its node (NVLink) and to other
  /// nodes (its share of the node's InfiniBand/RoCE NICs).
  double intraNodeBandwidth = 0;
  double interNodeBandwidth = 0;
  /// Fixed cost of one step of a collective.
  double intraNodeLatency = 0;
  double interNodeLatency = 0;
  /// Memory the runtime keeps for itself (CUDA context, NCCL, library
  /// workspaces); none for host ranks.
  double runtimeReserveBytes = 1.5 * 1024 * 1024 * 1024;
  /// The caching allocator's fragmentation, as a share of what it holds
  /// (none for engines with a static memory plan).
  double fragmentation = 0.08;
  /// Compute efficiency: large, well-shaped GEMMs sustain this share of
  /// peak (0.62: docs/planner.md); a GEMM of width w (hidden / tp) and n
  /// tokens reaches share * w / (w + widthKnee) * n / (n + tokensKnee).
  /// Host devices, whose rate is already a sustained one: 1, 0, 0.
  double sustainedShare = 0.62;
  double gemmWidthKnee = 256;
  double gemmTokensKnee = 512;
};

/// The built-in GPUs ("h100-80gb", "h200-141gb", "a100-80gb").
std::optional<GPUSpec> builtinGPU(llvm::StringRef name);
std::vector<std::string> builtinGPUNames();
/// A GPU described in JSON, with the field names of GPUSpec in snake case
/// (bf16_flops, fp8_flops, memory_bytes, memory_bandwidth,
/// intra_node_bandwidth, inter_node_bandwidth, intra_node_latency,
/// inter_node_latency).
llvm::Expected<GPUSpec> parseGPUSpec(llvm::StringRef json);

enum class Mode { Train, Serve };
enum class Recompute { None, Selective, Full };

/// One parallel configuration. In training, dp * tp * pp * cp = GPUs and
/// dp * microBatch * gradAccum sequences of `seqLen` tokens make the
/// global batch; ep splits the experts over a group carved out of dp * cp
/// (Megatron's expert-data parallelism). In serving, dp is the number of
/// replicas, each of tp * pp GPUs.
struct Config {
  int64_t dp = 1, tp = 1, pp = 1, cp = 1, ep = 1;
  /// ZeRO stage: 1 shards optimizer states over dp, 2 also gradients, 3
  /// also parameters.
  int64_t zero = 0;
  int64_t microBatch = 1, gradAccum = 1;
  /// Pipeline stages per GPU (interleaved 1F1B) when pp > 1.
  int64_t interleave = 1;
  Recompute recompute = Recompute::None;
  /// Sequence parallelism with tp: norms and residuals on sequence shards.
  bool sequenceParallel = false;

  int64_t gpus() const { return dp * tp * pp * cp; }
  /// "dp=4,tp=2,pp=2,cp=1,ep=1,zero=1,micro-batch=2,grad-accum=8,
  /// recompute=selective,sp=1" (interleave=V added when > 1).
  std::string str(Mode mode) const;
};

/// Parses the --evaluate string (keys as Config::str writes them; missing
/// keys keep their defaults).
llvm::Expected<Config> parseConfig(llvm::StringRef spec);

/// What to plan for.
struct Workload {
  Mode mode = Mode::Train;
  int64_t seqLen = 4096;
  /// Training: tokens per optimizer step (all replicas).
  int64_t globalBatchTokens = int64_t(1) << 20;
  /// Serving: concurrent sequences per replica and their context length
  /// (prompt + generated) for the KV cache; the prompt for prefill time.
  int64_t servingBatch = 32;
  int64_t promptTokens = 2048;
  /// Bytes per parameter in serving (4: fp32, 2: bf16, 1: fp8 weights).
  int64_t servingWeightBytes = 2;
  /// Serving: tokens each sequence adds in one step (1: a decode step; a
  /// prompt's length for a prefill program).
  int64_t queryTokens = 1;
  /// Serving: bytes of one activation or key/value element (2: bf16, 4:
  /// fp32 engines).
  int64_t valueBytes = 2;
  /// Serving targets (0: none): the longest decode step (the time between
  /// two tokens of a sequence) and the longest time to the first token.
  /// Configurations that miss one rank after those that meet them.
  double maxStepSeconds = 0;
  double maxPrefillSeconds = 0;
  /// Serving: rank by the shortest decode step rather than by tokens/s per
  /// GPU.
  bool minimizeLatency = false;
  /// Serving: pipeline stages cut at equal FLOPs (Loom's pipeline pass)
  /// rather than at equal numbers of layers.
  bool stagesByFlops = false;
};

struct Cluster {
  GPUSpec gpu;
  int64_t gpus = 8;
  int64_t gpusPerNode = 8;
  /// Let tp span nodes (off: tp stays within a node).
  bool tpAcrossNodes = false;
};

/// Named parts of a prediction, in the order they are printed.
using Parts = std::vector<std::pair<std::string, double>>;

struct Prediction {
  Config config;
  /// Empty when the configuration is valid; otherwise why not (a degree
  /// that does not divide, a batch that does not split).
  std::string invalid;
  bool fits = false;
  double memoryBytes = 0;
  Parts memory;
  /// Training: one optimizer step. Serving: one decode step of the batch.
  double stepSeconds = 0;
  Parts time;
  double mfu = 0;
  double tokensPerSecondPerGPU = 0;
  /// Serving: time to the first token (prefill of one batch).
  double prefillSeconds = 0;
  /// Serving: whether the step and prefill meet the workload's targets.
  bool meetsTargets = true;
  /// Serving: bytes each GPU sends in one step, per axis (ring
  /// algorithms: 2(n-1)/n of an all-reduced buffer, (n-1)/n of a gathered
  /// one), for comparison with the collectives of a partitioned program.
  Parts traffic;
};

/// Predicts `config` for `model` on `cluster`.
Prediction evaluate(const ModelShape &model, const Cluster &cluster,
                    const Workload &workload, const Config &config);

/// Every valid configuration for the cluster, predicted; the ones that fit
/// first, best first (most tokens/s per GPU; in serving, with equal
/// throughput, the lowest latency), then those that do not fit (least
/// memory first).
std::vector<Prediction> search(const ModelShape &model, const Cluster &cluster,
                               const Workload &workload);

/// Serving: the most sequences of the workload's context length a replica
/// of `config` holds (weights, KV cache and working memory within the
/// GPU's); 0 when not even one fits.
int64_t maxServingBatch(const ModelShape &model, const Cluster &cluster,
                        const Workload &workload, const Config &config);

/// The serving configuration with the shortest time to the first token
/// among those that fit (prefill may run on its own replicas); null when
/// none fits.
const Prediction *bestForPrefill(const std::vector<Prediction> &ranked);

/// "2 layers, hidden 64, 4 query / 2 key-value heads of 16, gated MLP 128,
/// vocabulary 256": the shape in words.
std::string describe(const ModelShape &model);
llvm::json::Value toJSON(const ModelShape &model);

/// Why `best` beats `other`: the parts where they differ most, in words.
std::string explain(const Prediction &best, const Prediction &other, Mode mode);

/// A prediction as JSON: config (keys as in the --evaluate string), fits,
/// memory_bytes_per_gpu, step_time_s, mfu, tokens_per_s_per_gpu, parts.
llvm::json::Value toJSON(const Prediction &prediction, Mode mode);

} // namespace loom::plan

#endif // LOOM_CLUSTERPLANNER_CLUSTERPLANNER_H
