//===- ClusterPlanner.cpp - Parallel configurations for a cluster ---------===//
//
// Every formula here is written out, with its source, in docs/planner.md;
// the comments say only what the code does with it.
//
//===----------------------------------------------------------------------===//

#include "loom/ClusterPlanner/ClusterPlanner.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace loom::plan {

//===----------------------------------------------------------------------===//
// The model
//===----------------------------------------------------------------------===//

namespace {

double attentionParameters(const ModelShape &m) {
  // q and o: hidden x heads*head_dim; k and v: hidden x kv_heads*head_dim.
  return double(m.hidden) * m.headDim * (2.0 * m.heads + 2.0 * m.kvHeads);
}

/// One MLP: gate, up and down, or up and down.
double mlpParameters(const ModelShape &m) {
  return (m.gatedMLP ? 3.0 : 2.0) * m.hidden * m.intermediate;
}

double routerParameters(const ModelShape &m) {
  return m.isMoE() ? double(m.hidden) * m.experts : 0.0;
}

} // namespace

double ModelShape::expertParameters() const {
  return isMoE() ? experts * mlpParameters(*this) : 0.0;
}

double ModelShape::layerParameters() const {
  double mlp = isMoE() ? expertParameters() : mlpParameters(*this);
  return attentionParameters(*this) + mlp + routerParameters(*this) +
         2.0 * hidden;
}

double ModelShape::embeddingParameters() const {
  return double(vocab) * hidden * (tiedEmbeddings ? 1 : 2);
}

double ModelShape::totalParameters() const {
  return layers * layerParameters() + embeddingParameters() + hidden;
}

double ModelShape::activeParameters() const {
  if (!isMoE())
    return totalParameters();
  double layer = attentionParameters(*this) +
                 expertsPerToken * mlpParameters(*this) +
                 routerParameters(*this) + 2.0 * hidden;
  return layers * layer + embeddingParameters() + hidden;
}

llvm::Expected<ModelShape> parseHuggingFaceConfig(llvm::StringRef json,
                                                  llvm::StringRef name) {
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(json);
  if (!parsed)
    return parsed.takeError();
  const llvm::json::Object *object = parsed->getAsObject();
  if (!object)
    return llvm::createStringError("%s: not a JSON object", name.str().c_str());
  ModelShape m;
  m.name = name.str();
  auto integer = [&](llvm::StringRef key, int64_t &into,
                     bool required) -> llvm::Error {
    std::optional<int64_t> value = object->getInteger(key);
    if (value && *value > 0) {
      into = *value;
      return llvm::Error::success();
    }
    if (!required && !object->get(key))
      return llvm::Error::success();
    if (!required && value && *value == 0)
      return llvm::Error::success();
    return llvm::createStringError("%s: '%s' must be a positive integer%s",
                                   name.str().c_str(), key.str().c_str(),
                                   object->get(key) ? "" : " (it is missing)");
  };
  for (auto [key, into] : {std::make_pair("hidden_size", &m.hidden),
                           std::make_pair("intermediate_size", &m.intermediate),
                           std::make_pair("num_hidden_layers", &m.layers),
                           std::make_pair("num_attention_heads", &m.heads),
                           std::make_pair("vocab_size", &m.vocab)})
    if (llvm::Error error = integer(key, *into, /*required=*/true))
      return std::move(error);
  m.kvHeads = m.heads;
  for (auto [key, into] :
       {std::make_pair("num_key_value_heads", &m.kvHeads),
        std::make_pair("head_dim", &m.headDim),
        std::make_pair("num_local_experts", &m.experts),
        std::make_pair("num_experts_per_tok", &m.expertsPerToken)})
    if (llvm::Error error = integer(key, *into, /*required=*/false))
      return std::move(error);
  if (!m.headDim) {
    if (m.hidden % m.heads)
      return llvm::createStringError(
          "%s: hidden_size %lld is not a multiple of num_attention_heads "
          "%lld (give head_dim)",
          name.str().c_str(), (long long)m.hidden, (long long)m.heads);
    m.headDim = m.hidden / m.heads;
  }
  if (m.heads % m.kvHeads)
    return llvm::createStringError(
        "%s: num_attention_heads %lld is not a multiple of "
        "num_key_value_heads %lld",
        name.str().c_str(), (long long)m.heads, (long long)m.kvHeads);
  if (std::optional<bool> tied = object->getBoolean("tie_word_embeddings"))
    m.tiedEmbeddings = *tied;
  if (m.isMoE() && (m.expertsPerToken < 1 || m.expertsPerToken > m.experts))
    return llvm::createStringError(
        "%s: num_experts_per_tok must be between 1 and num_local_experts "
        "(%lld)",
        name.str().c_str(), (long long)m.experts);
  return m;
}

//===----------------------------------------------------------------------===//
// The hardware
//===----------------------------------------------------------------------===//

std::optional<GPUSpec> builtinGPU(llvm::StringRef name) {
  // Dense (no sparsity) peaks from the datasheets; NVLink per GPU per
  // direction; one 400 Gb/s (H100, H200) or 200 Gb/s (A100) NIC per GPU.
  if (name == "h100-80gb")
    return GPUSpec{"h100-80gb", 989e12, 1979e12, 80e9, 3.35e12,
                   450e9,       50e9,   3e-6,    8e-6};
  if (name == "h200-141gb")
    return GPUSpec{"h200-141gb", 989e12, 1979e12, 141e9, 4.8e12,
                   450e9,        50e9,   3e-6,    8e-6};
  if (name == "a100-80gb")
    return GPUSpec{"a100-80gb", 312e12, 0,    80e9, 2.039e12,
                   300e9,       25e9,   4e-6, 10e-6};
  return std::nullopt;
}

std::vector<std::string> builtinGPUNames() {
  return {"a100-80gb", "h100-80gb", "h200-141gb"};
}

llvm::Expected<GPUSpec> parseGPUSpec(llvm::StringRef json) {
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(json);
  if (!parsed)
    return parsed.takeError();
  const llvm::json::Object *object = parsed->getAsObject();
  if (!object)
    return llvm::createStringError("the GPU description is not an object");
  GPUSpec gpu;
  gpu.name = object->getString("name").value_or("custom").str();
  for (auto [key, into, required] :
       {std::make_tuple("bf16_flops", &gpu.bf16Flops, true),
        std::make_tuple("fp8_flops", &gpu.fp8Flops, false),
        std::make_tuple("memory_bytes", &gpu.memoryBytes, true),
        std::make_tuple("memory_bandwidth", &gpu.memoryBandwidth, true),
        std::make_tuple("intra_node_bandwidth", &gpu.intraNodeBandwidth, true),
        std::make_tuple("inter_node_bandwidth", &gpu.interNodeBandwidth, true),
        std::make_tuple("intra_node_latency", &gpu.intraNodeLatency, false),
        std::make_tuple("inter_node_latency", &gpu.interNodeLatency, false),
        std::make_tuple("runtime_reserve_bytes", &gpu.runtimeReserveBytes,
                        false),
        std::make_tuple("fragmentation", &gpu.fragmentation, false)}) {
    std::optional<double> value = object->getNumber(key);
    if (!value && !required)
      continue;
    if (!value || *value < 0 || (required && *value == 0))
      return llvm::createStringError(
          "the GPU description needs '%s', a positive number", key);
    *into = *value;
  }
  return gpu;
}

//===----------------------------------------------------------------------===//
// Configurations
//===----------------------------------------------------------------------===//

static const char *recomputeName(Recompute r) {
  switch (r) {
  case Recompute::None:
    return "none";
  case Recompute::Selective:
    return "selective";
  case Recompute::Full:
    return "full";
  }
  return "none";
}

std::string Config::str(Mode mode) const {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (mode == Mode::Serve) {
    os << "dp=" << dp << ",tp=" << tp << ",pp=" << pp;
    return s;
  }
  os << "dp=" << dp << ",tp=" << tp << ",pp=" << pp << ",cp=" << cp
     << ",ep=" << ep << ",zero=" << zero << ",micro-batch=" << microBatch
     << ",grad-accum=" << gradAccum << ",recompute=" << recomputeName(recompute)
     << ",sp=" << (sequenceParallel ? 1 : 0);
  if (interleave > 1)
    os << ",interleave=" << interleave;
  return s;
}

llvm::Expected<Config> parseConfig(llvm::StringRef spec) {
  Config config;
  llvm::SmallVector<llvm::StringRef> items;
  spec.split(items, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef item : items) {
    auto [key, value] = item.trim().split('=');
    if (key == "recompute") {
      if (value == "none")
        config.recompute = Recompute::None;
      else if (value == "selective")
        config.recompute = Recompute::Selective;
      else if (value == "full")
        config.recompute = Recompute::Full;
      else
        return llvm::createStringError(
            "recompute must be none, selective or full, not '%s'",
            value.str().c_str());
      continue;
    }
    int64_t number;
    if (value.getAsInteger(10, number) || number < 0)
      return llvm::createStringError(
          "'%s' needs a non-negative integer, got '%s'", key.str().c_str(),
          value.str().c_str());
    int64_t *field = llvm::StringSwitch<int64_t *>(key)
                         .Case("dp", &config.dp)
                         .Case("tp", &config.tp)
                         .Case("pp", &config.pp)
                         .Case("cp", &config.cp)
                         .Case("ep", &config.ep)
                         .Case("zero", &config.zero)
                         .Case("micro-batch", &config.microBatch)
                         .Case("grad-accum", &config.gradAccum)
                         .Case("interleave", &config.interleave)
                         .Default(nullptr);
    if (key == "sp") {
      config.sequenceParallel = number != 0;
      continue;
    }
    if (!field)
      return llvm::createStringError(
          "unknown key '%s' (dp, tp, pp, cp, ep, zero, micro-batch, "
          "grad-accum, interleave, recompute, sp)",
          key.str().c_str());
    if (number == 0 && key != "zero")
      return llvm::createStringError("'%s' must be at least 1",
                                     key.str().c_str());
    *field = number;
  }
  if (config.zero > 3)
    return llvm::createStringError("zero must be 0, 1, 2 or 3");
  return config;
}

//===----------------------------------------------------------------------===//
// Prediction
//===----------------------------------------------------------------------===//

namespace {

/// Data-parallel gradient buckets (two of 25M fp32 values).
constexpr double kGradientBucketBytes = 2 * 25e6 * 4;

/// Ring all-reduce of `bytes` over `n` ranks at `bandwidth` per rank.
double allReduceSeconds(double bytes, int64_t n, double bandwidth,
                        double latency) {
  if (n <= 1)
    return 0;
  return 2.0 * (n - 1) / n * bytes / bandwidth + 2.0 * (n - 1) * latency;
}

/// Ring all-gather or reduce-scatter (the full size is `bytes`).
double gatherSeconds(double bytes, int64_t n, double bandwidth,
                     double latency) {
  if (n <= 1)
    return 0;
  return double(n - 1) / n * bytes / bandwidth + (n - 1) * latency;
}

/// Whether a group of `size` ranks whose members are `stride` ranks apart
/// (ranks numbered tp fastest, then cp, then dp, then pp) stays in a node.
bool withinNode(int64_t stride, int64_t size, int64_t gpusPerNode) {
  return size <= 1 || stride * size <= gpusPerNode;
}

/// Efficiency of a GEMM-bound step: large GEMMs reach the GPU's sustained
/// share of peak; narrow ones (hidden / tp) and short ones (tokens per
/// micro-batch) less.
double computeEfficiency(const GPUSpec &gpu, double width, double tokens) {
  return gpu.sustainedShare * (width / (width + gpu.gemmWidthKnee)) *
         (tokens / (tokens + gpu.gemmTokensKnee));
}

struct Group {
  double bandwidth, latency;
};

Group link(const Cluster &cluster, int64_t stride, int64_t size) {
  if (withinNode(stride, size, cluster.gpusPerNode))
    return {cluster.gpu.intraNodeBandwidth, cluster.gpu.intraNodeLatency};
  return {cluster.gpu.interNodeBandwidth, cluster.gpu.interNodeLatency};
}

/// The checks training and serving share; `product` names the axes whose
/// sizes multiply to the GPUs.
std::string checkCommon(const ModelShape &model, const Cluster &cluster,
                        const Config &c, const char *product) {
  if (c.gpus() != cluster.gpus)
    return std::string(product) + " = " + std::to_string(c.gpus()) +
           ", not the " + std::to_string(cluster.gpus) + " GPUs";
  if (c.tp > 1 && model.heads % c.tp)
    return "tp=" + std::to_string(c.tp) + " does not divide the " +
           std::to_string(model.heads) + " attention heads";
  if (c.tp > 1 && model.kvHeads % c.tp && c.tp % model.kvHeads)
    return "tp=" + std::to_string(c.tp) + " and the " +
           std::to_string(model.kvHeads) +
           " key/value heads do not divide one another";
  if (model.layers % (c.pp * c.interleave))
    return "pp=" + std::to_string(c.pp) +
           (c.interleave > 1 ? " x interleave=" + std::to_string(c.interleave)
                             : std::string()) +
           " does not divide the " + std::to_string(model.layers) + " layers";
  if (!cluster.tpAcrossNodes && c.tp > cluster.gpusPerNode)
    return "tp=" + std::to_string(c.tp) + " would span nodes (" +
           std::to_string(cluster.gpusPerNode) + " GPUs per node)";
  if (c.interleave > 1 && c.pp == 1)
    return "interleave needs pp > 1";
  return "";
}

Prediction evaluateTraining(const ModelShape &model, const Cluster &cluster,
                            const Workload &w, const Config &c) {
  Prediction p;
  p.config = c;
  auto invalid = [&](std::string why) {
    p.invalid = std::move(why);
    return p;
  };
  if (std::string why = checkCommon(model, cluster, c, "dp*tp*pp*cp");
      !why.empty())
    return invalid(why);
  if (c.ep > 1 && (!model.isMoE() || model.experts % c.ep))
    return invalid("ep=" + std::to_string(c.ep) +
                   (model.isMoE()
                        ? " does not divide the " +
                              std::to_string(model.experts) + " experts"
                        : " needs a mixture-of-experts model"));
  if ((c.dp * c.cp) % c.ep)
    return invalid("ep=" + std::to_string(c.ep) + " does not divide dp*cp");
  if (c.cp > 1 && w.seqLen % (2 * c.cp))
    return invalid("cp=" + std::to_string(c.cp) +
                   " needs the sequence to split in 2*cp chunks");
  if (c.sequenceParallel && c.tp == 1)
    return invalid("sequence parallelism needs tp > 1");
  if (c.zero >= 2 && c.pp > 1)
    return invalid("ZeRO-" + std::to_string(c.zero) +
                   " does not combine with pipeline parallelism");
  if (w.globalBatchTokens % w.seqLen)
    return invalid("the global batch is not a whole number of sequences");
  int64_t sequences = w.globalBatchTokens / w.seqLen;
  if (sequences != c.dp * c.microBatch * c.gradAccum)
    return invalid("dp*micro-batch*grad-accum = " +
                   std::to_string(c.dp * c.microBatch * c.gradAccum) +
                   " sequences, not the batch's " + std::to_string(sequences));
  if (c.interleave > 1 && c.gradAccum % c.pp)
    return invalid("interleaved stages need grad-accum divisible by pp");

  const double h = model.hidden, f = model.intermediate;
  const double kvWidth = double(model.kvHeads) * model.headDim;
  const double qWidth = double(model.heads) * model.headDim;
  const int64_t t = c.tp, pp = c.pp, m = c.gradAccum;
  const double layersPerStage = double(model.layers) / pp;
  const double tokens = double(c.microBatch) * w.seqLen / c.cp;
  const int64_t dataGroup = c.dp * c.cp;
  const int64_t expertDataGroup = dataGroup / c.ep;
  const double k = model.isMoE() ? model.expertsPerToken : 1;

  // Parameters a GPU holds: its stage's layers (dense parts over tp,
  // experts over ep*tp) and the vocabulary-parallel embedding or head.
  double denseLayer = (model.layerParameters() - model.expertParameters()) / t;
  double expertLayer = model.expertParameters() / (c.ep * t);
  double embedding = double(model.vocab) * h / t;
  double firstEmbedding = embedding;
  double lastEmbedding =
      pp == 1 ? (model.tiedEmbeddings ? 0 : embedding) : embedding;
  double denseFirst = layersPerStage * denseLayer + firstEmbedding +
                      (pp == 1 ? lastEmbedding : 0);
  double denseLast = layersPerStage * denseLayer + lastEmbedding;
  double experts = layersPerStage * expertLayer;

  // Model states (mixed-precision Adam): bf16 weights 2 B, fp32 gradients
  // 4 B, fp32 master weights and two moments 12 B; ZeRO shards them over
  // the data-parallel group (experts over the expert-data-parallel one).
  auto states = [&](double dense) {
    double shard = dataGroup, expertShard = expertDataGroup;
    double weights = 2 * (c.zero >= 3 ? dense / shard + experts / expertShard
                                      : dense + experts);
    double grads = 4 * (c.zero >= 2 ? dense / shard + experts / expertShard
                                    : dense + experts);
    double optimizer = 12 * (c.zero >= 1 ? dense / shard + experts / expertShard
                                         : dense + experts);
    return std::array<double, 3>{weights, grads, optimizer};
  };

  // Activations of one layer for one micro-batch (bf16, flash attention):
  // norm inputs and outputs (8h per token; over tp only with sequence
  // parallelism), q, k, v and the attention output (2(qWidth + 2 kvWidth)
  // + 2 qWidth), the gated MLP's gate, up, activation and product (8f per
  // expert a token visits) and the tokens dispatched to experts.
  double sharded = 2 * (qWidth + 2 * kvWidth) + 2 * qWidth;
  double mlp = (c.recompute == Recompute::Selective ? 4 : 8) * f * k;
  if (model.isMoE())
    mlp += 2 * h * k;
  double perToken = 8 * h / (c.sequenceParallel ? t : 1) + (sharded + mlp) / t;
  double layerActivations = tokens * perToken;
  double keptPerLayer = layerActivations;
  double working = 0;
  if (c.recompute == Recompute::Full) {
    keptPerLayer = tokens * 2 * h / (c.sequenceParallel ? t : 1);
    working = layerActivations;
  }
  // 1F1B: the first stage holds min(pp, m) micro-batches in flight
  // (interleaving adds (pp-1)/(pp*v) of a stage); the last one, one
  // micro-batch and the fp32 logits and their gradient.
  double inFlight = std::min<int64_t>(pp, m);
  if (c.interleave > 1)
    inFlight *= 1.0 + double(pp - 1) / (pp * c.interleave);
  double activationsFirst = layersPerStage * keptPerLayer * inFlight + working;
  double logits = 2 * 4 * tokens * double(model.vocab) / t;
  double activationsLast = layersPerStage * keptPerLayer + working + logits;
  if (pp == 1)
    activationsFirst = activationsLast =
        layersPerStage * keptPerLayer + working + logits;

  auto total = [&](double dense, double activations, Parts &parts) -> double {
    auto [weights, grads, optimizer] = states(dense);
    double buffers = 0;
    if (dataGroup > 1)
      buffers += kGradientBucketBytes;
    if (c.zero >= 3) // two layers gathered ahead of use
      buffers += 2 * 2 * (denseLayer + expertLayer);
    if (pp > 1) // send and receive buffers of one boundary
      buffers += 2 * 2 * tokens * h / (c.sequenceParallel ? t : 1);
    double held = weights + grads + optimizer + activations + buffers;
    double fragmentation = cluster.gpu.fragmentation * held;
    parts = {{"parameters", weights},
             {"gradients", grads},
             {"optimizer_states", optimizer},
             {"activations", activations},
             {"kv_cache", 0},
             {"communication_buffers", buffers},
             {"runtime_reserve", cluster.gpu.runtimeReserveBytes},
             {"fragmentation_reserve", fragmentation}};
    return held + fragmentation + cluster.gpu.runtimeReserveBytes;
  };
  Parts firstParts, lastParts;
  double first = total(denseFirst, activationsFirst, firstParts);
  double last = total(denseLast, activationsLast, lastParts);
  p.memoryBytes = std::max(first, last);
  p.memory = first >= last ? firstParts : lastParts;
  p.fits = p.memoryBytes <= cluster.gpu.memoryBytes;

  // Time. Model FLOPs per token: 6 per parameter a token uses in a matrix
  // product (the head included, the embedding lookup not), and causal
  // attention's 6 * seq * qWidth per layer.
  double matmulParameters = model.activeParameters() -
                            model.embeddingParameters() - model.hidden -
                            model.layers * 2.0 * h + double(model.vocab) * h;
  double flopsPerToken =
      6 * matmulParameters + 6.0 * model.layers * w.seqLen * qWidth;
  double hardwareFactor = c.recompute == Recompute::Full ? 4.0 / 3.0 : 1.0;
  double efficiency = computeEfficiency(cluster.gpu, h / t, tokens);
  if (model.isMoE()) // small per-expert GEMMs
    efficiency *= 0.85;
  double microBatchCompute = flopsPerToken * hardwareFactor * tokens /
                             (t * pp) / (cluster.gpu.bf16Flops * efficiency);
  double compute = m * microBatchCompute;
  double bubble = microBatchCompute * double(pp - 1) / c.interleave;

  Group tpLink = link(cluster, 1, t);
  // Per layer and micro-batch: two all-reduces forward, two backward
  // (reduce-scatter + all-gather with sequence parallelism: the same
  // volume), two more with full recomputation; not overlapped.
  double tpCollectives = c.recompute == Recompute::Full ? 6 : 4;
  double tpTime =
      m * layersPerStage * tpCollectives *
      allReduceSeconds(2 * tokens * h, t, tpLink.bandwidth, tpLink.latency);

  // Context parallelism: each layer gathers the other chunks' keys and
  // values (and reduces their gradients in backward), overlapped with the
  // attention it feeds.
  double cpTime = 0;
  if (c.cp > 1) {
    Group cpLink = link(cluster, t, c.cp);
    double kvBytes =
        2 * 2 * tokens * kvWidth / std::min<int64_t>(t, model.kvHeads);
    double perLayer = 3 * gatherSeconds(kvBytes * c.cp, c.cp, cpLink.bandwidth,
                                        cpLink.latency);
    double attention = 6.0 * tokens * w.seqLen * qWidth / t /
                       (cluster.gpu.bf16Flops * efficiency);
    cpTime = m * layersPerStage * std::max(0.0, perLayer - attention);
  }

  // Pipeline sends: one activation per micro-batch each way per boundary.
  double ppTime = 0;
  if (pp > 1) {
    Group ppLink = link(cluster, t * c.cp * c.dp, pp);
    double bytes = 2 * tokens * h / (c.sequenceParallel ? t : 1);
    ppTime =
        2.0 * m * c.interleave * (bytes / ppLink.bandwidth + ppLink.latency);
  }

  // Expert parallelism: dispatch and combine all-to-alls, forward and
  // backward, per MoE layer and micro-batch.
  double epTime = 0;
  if (c.ep > 1) {
    Group epLink = link(cluster, t * c.cp, c.ep);
    double bytes = 2 * tokens * k * h;
    epTime = m * layersPerStage * 4 *
             (double(c.ep - 1) / c.ep * bytes / epLink.bandwidth +
              (c.ep - 1) * epLink.latency);
  }

  // Data parallelism: gradients reduced once per step (fp32), overlapped
  // with the last micro-batch's backward; with ZeRO >= 1 as a
  // reduce-scatter and an all-gather of the bf16 weights; ZeRO-3 gathers
  // the weights for every micro-batch's forward and backward as well,
  // mostly behind compute.
  double dpTime = 0;
  if (dataGroup > 1) {
    Group dpLink = link(cluster, t, dataGroup);
    double dense = std::max(denseFirst, denseLast);
    auto reduce = [&](double params, int64_t n) {
      if (n <= 1)
        return 0.0;
      if (c.zero == 0)
        return allReduceSeconds(4 * params, n, dpLink.bandwidth,
                                dpLink.latency);
      double t =
          gatherSeconds(4 * params, n, dpLink.bandwidth, dpLink.latency) +
          gatherSeconds(2 * params, n, dpLink.bandwidth, dpLink.latency);
      if (c.zero >= 3)
        t += 0.2 * 2 * m *
             gatherSeconds(2 * params, n, dpLink.bandwidth, dpLink.latency);
      return t;
    };
    double reduction =
        reduce(dense, dataGroup) + reduce(experts, expertDataGroup);
    double overlap = microBatchCompute * 2.0 / 3.0;
    dpTime = std::max(0.0, reduction - overlap);
  }

  // The optimizer reads and writes its fp32 states and weights once.
  auto [weightsBytes, gradsBytes, optimizerBytes] =
      states(std::max(denseFirst, denseLast));
  double optimizerTime = 2 * (weightsBytes + gradsBytes + optimizerBytes) /
                         cluster.gpu.memoryBandwidth;

  p.stepSeconds = compute + bubble + tpTime + cpTime + ppTime + epTime +
                  dpTime + optimizerTime;
  p.time = {{"compute", compute},         {"pipeline_bubble", bubble},
            {"tp_communication", tpTime}, {"cp_communication", cpTime},
            {"pp_communication", ppTime}, {"ep_communication", epTime},
            {"dp_communication", dpTime}, {"optimizer", optimizerTime}};
  double modelFlops = flopsPerToken * w.globalBatchTokens;
  p.mfu = modelFlops /
          (double(cluster.gpus) * cluster.gpu.bf16Flops * p.stepSeconds);
  p.tokensPerSecondPerGPU =
      w.globalBatchTokens / p.stepSeconds / double(cluster.gpus);
  return p;
}

Prediction evaluateServing(const ModelShape &model, const Cluster &cluster,
                           const Workload &w, const Config &c) {
  Prediction p;
  p.config = c;
  auto invalid = [&](std::string why) {
    p.invalid = std::move(why);
    return p;
  };
  if (std::string why = checkCommon(model, cluster, c, "dp*tp*pp");
      !why.empty())
    return invalid(why);
  if (c.cp != 1 || c.ep != 1 || c.zero != 0)
    return invalid("serving plans replicas (dp) of tp x pp GPUs");

  const double h = model.hidden, f = model.intermediate;
  const double qWidth = double(model.heads) * model.headDim;
  const int64_t t = c.tp, pp = c.pp;
  const double layersPerStage = double(model.layers) / pp;
  const double wb = w.servingWeightBytes, vb = w.valueBytes;
  // Tokens of one step: every sequence's new tokens (one when decoding).
  const double stepTokens = double(w.servingBatch) * w.queryTokens;
  // Weights: a stage's layers over tp, and the vocabulary-parallel
  // embedding (first stage) and head (last stage).
  double layerBytes = wb * model.layerParameters() / t;
  double embeddingBytes = wb * double(model.vocab) * h / t;
  // Layers of the first and the last stage: an equal share, or, with
  // stages cut at equal FLOPs, fewer on the last stage (it also runs the
  // head) and more on the first (its embedding lookup computes nothing).
  double firstLayers = layersPerStage, lastLayers = layersPerStage;
  if (pp > 1 && w.stagesByFlops) {
    double layerFlops = model.layerParameters() - 2 * h;
    double headFlops = double(model.vocab) * h;
    double share = (model.layers * layerFlops + headFlops) / pp;
    firstLayers = std::min<double>(model.layers, share / layerFlops);
    lastLayers = std::max(0.0, (share - headFlops) / layerFlops);
  }
  double firstWeights = firstLayers * layerBytes + embeddingBytes;
  double lastWeights = lastLayers * layerBytes + embeddingBytes;
  double stageWeights =
      pp == 1 ? layersPerStage * layerBytes +
                    embeddingBytes * (model.tiedEmbeddings ? 1 : 2)
              : std::max(firstWeights, lastWeights);
  double stageLayers = pp == 1                       ? layersPerStage
                       : firstWeights >= lastWeights ? firstLayers
                                                     : lastLayers;
  // KV cache: keys and values of every position of every sequence; with
  // fewer key/value heads than tp, each GPU keeps one head.
  double kvHeadsPerGPU = std::max(1.0, double(model.kvHeads) / t);
  double kvBytes = 2 * vb * stageLayers * kvHeadsPerGPU * model.headDim *
                   double(w.seqLen) * w.servingBatch;
  // The largest working set: a prompt's prefill (or the step's tokens),
  // one layer at a time.
  double workingTokens = std::max<double>(w.promptTokens, stepTokens);
  double activations =
      2 * vb * workingTokens *
      (4 * h + (qWidth + 2 * kvHeadsPerGPU * model.headDim) +
       4 * f * (model.isMoE() ? model.expertsPerToken : 1) / t);
  double held = stageWeights + kvBytes + activations;
  double fragmentation = cluster.gpu.fragmentation * held;
  p.memoryBytes = held + fragmentation + cluster.gpu.runtimeReserveBytes;
  p.memory = {{"parameters", stageWeights},
              {"gradients", 0},
              {"optimizer_states", 0},
              {"activations", activations},
              {"kv_cache", kvBytes},
              {"communication_buffers", 0},
              {"runtime_reserve", cluster.gpu.runtimeReserveBytes},
              {"fragmentation_reserve", fragmentation}};
  p.fits = p.memoryBytes <= cluster.gpu.memoryBytes;

  // One step of the batch: each stage reads its weights (the experts the
  // step's tokens visit, for MoE) and its KV cache from memory, or
  // computes, whichever is longer; stages run one after another for a
  // token. FLOPs: 2 per weight a token uses in a product, and attention's
  // 4 per query, key and query feature (causal: a query sees the keys up
  // to its own position).
  double flopsPerToken = 2 * (model.activeParameters() - model.hidden);
  // A decode step's attention reads the cache (counted with the reads);
  // a prefill's multiplies matrices.
  double visibleKeys = double(w.seqLen) - (w.queryTokens - 1) / 2.0;
  double attentionFlops =
      w.queryTokens > 1 ? 4.0 * model.layers * qWidth * visibleKeys : 0.0;
  double activeWeights = stageWeights;
  if (model.isMoE()) {
    double visited =
        std::min<double>(model.experts, stepTokens * model.expertsPerToken);
    activeWeights -= stageLayers * wb * model.expertParameters() / t *
                     (1.0 - visited / model.experts);
  }
  double memoryTime = (activeWeights + kvBytes) / cluster.gpu.memoryBandwidth;
  double peak = wb == 1 && cluster.gpu.fp8Flops > 0 ? cluster.gpu.fp8Flops
                                                    : cluster.gpu.bf16Flops;
  double computeTime =
      (flopsPerToken + attentionFlops) * stepTokens / (t * pp) /
      (peak * computeEfficiency(cluster.gpu, h / t, stepTokens));
  // tp: the vocabulary-parallel embedding's all-reduce, two per layer
  // (after attention and after the MLP), and the head's logits gathered.
  Group tpLink = link(cluster, 1, t);
  double hiddenBytes = vb * h * stepTokens;
  double logitBytes = vb * double(model.vocab) * stepTokens;
  double tpAllReduces = 2.0 * model.layers + 1;
  double tpTime =
      tpAllReduces *
          allReduceSeconds(hiddenBytes, t, tpLink.bandwidth, tpLink.latency) +
      gatherSeconds(logitBytes, t, tpLink.bandwidth, tpLink.latency);
  Group ppLink = link(cluster, t, pp);
  double ppTime = (pp - 1) * (hiddenBytes / ppLink.bandwidth + ppLink.latency);
  double stage = std::max(memoryTime, computeTime);
  p.stepSeconds = pp * stage + tpTime + ppTime;
  p.time = {{"weights_and_kv_reads", pp * memoryTime},
            {"compute", pp * computeTime},
            {"tp_communication", tpTime},
            {"pp_communication", ppTime}};
  // What one GPU sends in the step: the all-reduces of its stage (the
  // embedding's on the first, the logits on the last) and one activation
  // to the next stage.
  double ring = t > 1 ? double(t - 1) / t : 0.0;
  double stageAllReduces = 2.0 * layersPerStage + 1;
  double stageGathers = pp == 1 ? 1.0 : 0.0;
  p.traffic = {{"tp", stageAllReduces * 2 * ring * hiddenBytes +
                          stageGathers * ring * logitBytes},
               {"pp", pp > 1 ? hiddenBytes : 0.0}};
  p.tokensPerSecondPerGPU = stepTokens / p.stepSeconds / double(t * pp);
  p.meetsTargets = (w.maxStepSeconds <= 0 || p.stepSeconds <= w.maxStepSeconds);
  p.mfu = flopsPerToken * p.tokensPerSecondPerGPU / cluster.gpu.bf16Flops;
  // Time to the first token: one prompt's FLOPs over the replica's tp
  // GPUs, stage after stage.
  double prefillTokens = w.promptTokens;
  double prefillFlops =
      flopsPerToken * prefillTokens +
      2.0 * model.layers * prefillTokens * prefillTokens * qWidth;
  p.prefillSeconds =
      prefillFlops / t /
          (peak * computeEfficiency(cluster.gpu, h / t, prefillTokens)) +
      tpAllReduces * allReduceSeconds(vb * h * prefillTokens, t,
                                      tpLink.bandwidth, tpLink.latency);
  if (w.maxPrefillSeconds > 0 && p.prefillSeconds > w.maxPrefillSeconds)
    p.meetsTargets = false;
  return p;
}

std::vector<int64_t> divisors(int64_t n) {
  std::vector<int64_t> result;
  for (int64_t d = 1; d <= n; ++d)
    if (n % d == 0)
      result.push_back(d);
  return result;
}

} // namespace

Prediction evaluate(const ModelShape &model, const Cluster &cluster,
                    const Workload &workload, const Config &config) {
  return workload.mode == Mode::Train
             ? evaluateTraining(model, cluster, workload, config)
             : evaluateServing(model, cluster, workload, config);
}

std::vector<Prediction> search(const ModelShape &model, const Cluster &cluster,
                               const Workload &w) {
  std::vector<Prediction> found;
  for (int64_t tp : divisors(cluster.gpus)) {
    if (model.heads % tp)
      continue;
    for (int64_t pp : divisors(cluster.gpus / tp)) {
      if (model.layers % pp)
        continue;
      if (w.mode == Mode::Serve) {
        Config c;
        c.tp = tp, c.pp = pp, c.dp = cluster.gpus / (tp * pp);
        Prediction p = evaluate(model, cluster, w, c);
        if (p.invalid.empty())
          found.push_back(std::move(p));
        continue;
      }
      for (int64_t cp : divisors(cluster.gpus / (tp * pp))) {
        int64_t dp = cluster.gpus / (tp * pp * cp);
        std::vector<int64_t> eps{1};
        if (model.isMoE())
          eps = divisors(model.experts);
        for (int64_t ep : eps)
          for (int64_t zero = 0; zero <= 3; ++zero)
            for (int64_t micro : {1, 2, 4, 8, 16}) {
              int64_t sequences = w.globalBatchTokens / w.seqLen;
              if (sequences % (dp * micro))
                continue;
              for (Recompute r :
                   {Recompute::None, Recompute::Selective, Recompute::Full})
                for (bool sp : {false, true})
                  for (int64_t v : {1, 2, 4}) {
                    if ((sp && tp == 1) || (v > 1 && pp == 1))
                      continue;
                    Config c;
                    c.dp = dp, c.tp = tp, c.pp = pp, c.cp = cp, c.ep = ep;
                    c.zero = zero, c.microBatch = micro;
                    c.gradAccum = sequences / (dp * micro);
                    c.recompute = r, c.sequenceParallel = sp;
                    c.interleave = v;
                    Prediction p = evaluate(model, cluster, w, c);
                    if (p.invalid.empty())
                      found.push_back(std::move(p));
                  }
            }
      }
    }
  }
  // Sorted by index on ties, so the order is the same on every run.
  std::vector<size_t> order(found.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  auto better = [&](const Prediction &a, const Prediction &b) {
    if (a.fits != b.fits)
      return a.fits;
    if (!a.fits)
      return a.memoryBytes < b.memoryBytes;
    if (a.meetsTargets != b.meetsTargets)
      return a.meetsTargets;
    if (w.mode == Mode::Serve && w.minimizeLatency) {
      double ratio = a.stepSeconds / b.stepSeconds;
      if (ratio > 1.005 || ratio < 1 / 1.005)
        return ratio < 1;
    }
    // Within 0.5 %, prefer the simpler plan: fewer
    // GPUs per model copy, then the lower latency.
    double ratio = a.tokensPerSecondPerGPU / b.tokensPerSecondPerGPU;
    if (ratio > 1.005 || ratio < 1 / 1.005)
      return ratio > 1;
    int64_t sizeA = a.config.tp * a.config.pp * a.config.cp;
    int64_t sizeB = b.config.tp * b.config.pp * b.config.cp;
    if (sizeA != sizeB)
      return sizeA < sizeB;
    return a.stepSeconds < b.stepSeconds;
  };
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (better(found[a], found[b]))
      return true;
    if (better(found[b], found[a]))
      return false;
    return a < b;
  });
  std::vector<Prediction> sorted;
  sorted.reserve(found.size());
  for (size_t i : order)
    sorted.push_back(std::move(found[i]));
  return sorted;
}

int64_t maxServingBatch(const ModelShape &model, const Cluster &cluster,
                        const Workload &workload, const Config &config) {
  auto fits = [&](int64_t batch) {
    Workload w = workload;
    w.servingBatch = batch;
    Prediction p = evaluate(model, cluster, w, config);
    return p.invalid.empty() && p.fits;
  };
  if (!fits(1))
    return 0;
  // Memory grows with the batch: double, then bisect.
  int64_t low = 1, high = 2;
  while (high < (int64_t(1) << 40) && fits(high))
    low = high, high *= 2;
  while (high - low > 1) {
    int64_t middle = low + (high - low) / 2;
    (fits(middle) ? low : high) = middle;
  }
  return low;
}

const Prediction *bestForPrefill(const std::vector<Prediction> &ranked) {
  const Prediction *best = nullptr;
  for (const Prediction &p : ranked)
    if (p.fits && (!best || p.prefillSeconds < best->prefillSeconds * 0.995))
      best = &p;
  return best;
}

std::string describe(const ModelShape &m) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << m.layers << " layers, hidden " << m.hidden << ", " << m.heads
     << " query / " << m.kvHeads << " key-value heads of " << m.headDim << ", "
     << (m.gatedMLP ? "gated " : "") << "MLP " << m.intermediate;
  if (m.isMoE())
    os << " in " << m.experts << " experts, " << m.expertsPerToken
       << " per token";
  os << ", vocabulary " << m.vocab << (m.tiedEmbeddings ? " tied" : "");
  return s;
}

llvm::json::Value toJSON(const ModelShape &m) {
  return llvm::json::Object{{"name", m.name},
                            {"hidden_size", m.hidden},
                            {"intermediate_size", m.intermediate},
                            {"num_hidden_layers", m.layers},
                            {"num_attention_heads", m.heads},
                            {"num_key_value_heads", m.kvHeads},
                            {"head_dim", m.headDim},
                            {"vocab_size", m.vocab},
                            {"tie_word_embeddings", m.tiedEmbeddings},
                            {"num_local_experts", m.experts},
                            {"num_experts_per_tok", m.expertsPerToken},
                            {"gated_mlp", m.gatedMLP},
                            {"parameters", m.totalParameters()}};
}

std::string explain(const Prediction &best, const Prediction &other,
                    Mode mode) {
  std::string s;
  llvm::raw_string_ostream os(s);
  double ratio =
      best.tokensPerSecondPerGPU / std::max(other.tokensPerSecondPerGPU, 1e-30);
  if (best.meetsTargets && !other.meetsTargets) {
    os << llvm::format("meets the serving targets, which %s misses (decode "
                       "step %.4f s against %.4f s, time to first token "
                       "%.4f s against %.4f s)",
                       other.config.str(mode).c_str(), best.stepSeconds,
                       other.stepSeconds, best.prefillSeconds,
                       other.prefillSeconds);
    return s;
  }
  if (ratio < 1 / 1.005 && best.stepSeconds < other.stepSeconds) {
    // Ranked by latency: the shorter step won despite the throughput.
    os << llvm::format("a %.2fx shorter decode step than %s (%.2fx its "
                       "tokens/s per GPU)",
                       other.stepSeconds / best.stepSeconds,
                       other.config.str(mode).c_str(), ratio);
  } else {
    os << llvm::format("%.2fx the tokens/s per GPU of %s", ratio,
                       other.config.str(mode).c_str());
    if (ratio < 1.005)
      os << " (a tie within 0.5 %: the plan with fewer GPUs per model copy, "
            "then the shorter step, wins)";
  }
  // The two parts of the step that differ most (both predictions list the
  // same parts in the same order).
  std::vector<size_t> differing;
  for (size_t i = 0; i < best.time.size(); ++i)
    if (best.time[i].second != other.time[i].second)
      differing.push_back(i);
  auto gap = [&](size_t i) {
    return std::fabs(other.time[i].second - best.time[i].second);
  };
  llvm::sort(differing, [&](size_t a, size_t b) {
    return gap(a) != gap(b) ? gap(a) > gap(b) : a < b;
  });
  for (size_t k = 0; k < std::min<size_t>(2, differing.size()); ++k) {
    size_t i = differing[k];
    os << (k ? "; " : ": ") << best.time[i].first << " "
       << llvm::format("%.3f s against %.3f s", best.time[i].second,
                       other.time[i].second);
  }
  return s;
}

llvm::json::Value toJSON(const Prediction &p, Mode mode) {
  llvm::json::Object config{
      {"dp", p.config.dp}, {"tp", p.config.tp}, {"pp", p.config.pp}};
  if (mode == Mode::Train) {
    config["cp"] = p.config.cp;
    config["ep"] = p.config.ep;
    config["zero"] = p.config.zero;
    config["micro-batch"] = p.config.microBatch;
    config["grad-accum"] = p.config.gradAccum;
    config["interleave"] = p.config.interleave;
    config["recompute"] = recomputeName(p.config.recompute);
    config["sp"] = p.config.sequenceParallel ? 1 : 0;
  }
  llvm::json::Object memory, time;
  for (const auto &[name, value] : p.memory)
    memory[name] = value;
  for (const auto &[name, value] : p.time)
    time[name] = value;
  llvm::json::Object result{
      {"config", std::move(config)},
      {"config_string", p.config.str(mode)},
      {"fits", p.fits},
      {"memory_bytes_per_gpu", p.memoryBytes},
      {"step_time_s", p.stepSeconds},
      {"mfu", p.mfu},
      {"tokens_per_s_per_gpu", p.tokensPerSecondPerGPU},
      {"parts", llvm::json::Object{{"memory_bytes", std::move(memory)},
                                   {"time_s", std::move(time)}}}};
  if (mode == Mode::Serve) {
    result["prefill_time_s"] = p.prefillSeconds;
    llvm::json::Object traffic;
    for (const auto &[name, value] : p.traffic)
      traffic[name] = value;
    result["traffic_bytes_per_gpu"] = std::move(traffic);
  }
  return result;
}

} // namespace loom::plan
