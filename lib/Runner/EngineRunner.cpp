//===- EngineRunner.cpp - loom-run on engine files ------------------------===//
//
// Engines run through the runtime's C API only, exactly as an application
// would run them: load (verified), inspect, execute. Inputs, outputs and
// comparisons are the reference runner's.
//
//===----------------------------------------------------------------------===//

#include "loom/Runner/Runner.h"

#include "RunnerSupport.h"

#include "loom/Compiler/HtmlReport.h"
#include "loom/Engine/EngineSigning.h"
#include "loom/TensorIO/TensorIO.h"
#include "loom/comm.h"
#include "loom/runtime.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <numeric>

using namespace mlir;
using namespace loom::reference;

namespace loom {
namespace {

/// The reference executor's kind of a runtime dtype (they share names).
std::optional<ElementKind> kindOf(loom_dtype dtype) {
  for (ElementKind kind :
       {ElementKind::F16,    ElementKind::BF16,       ElementKind::F32,
        ElementKind::F64,    ElementKind::I1,         ElementKind::I8,
        ElementKind::I16,    ElementKind::I32,        ElementKind::I64,
        ElementKind::U8,     ElementKind::U16,        ElementKind::U32,
        ElementKind::U64,    ElementKind::F8E4M3FN,   ElementKind::F8E4M3FNUZ,
        ElementKind::F8E5M2, ElementKind::F8E5M2FNUZ, ElementKind::F4E2M1FN,
        ElementKind::I2,     ElementKind::I4,         ElementKind::U2,
        ElementKind::U4,     ElementKind::F8E8M0FNU})
    if (llvm::StringRef(getElementKindName(kind)) == loom_dtype_name(dtype))
      return kind;
  return std::nullopt;
}

llvm::ArrayRef<int64_t> shapeOf(const loom_tensor_desc &d) {
  return llvm::ArrayRef<int64_t>(d.dims, d.rank);
}

std::string describe(const loom_tensor_desc &d) {
  std::string s = std::string(loom_dtype_name(d.dtype)) + "[";
  for (int32_t i = 0; i < d.rank; ++i)
    s += (i ? ", " : "") + (d.dims[i] == LOOM_DYNAMIC_DIM
                                ? std::string("?")
                                : std::to_string(d.dims[i]));
  return s + "]";
}

/// Prints `values` (milliseconds per run) as latency percentiles.
void printLatency(std::vector<double> values, int64_t ranks) {
  std::sort(values.begin(), values.end());
  auto percentile = [&](double p) {
    size_t i = static_cast<size_t>(p / 100.0 * (values.size() - 1) + 0.5);
    return values[std::min(i, values.size() - 1)];
  };
  double mean =
      std::accumulate(values.begin(), values.end(), 0.0) / values.size();
  // Microseconds for fast programs, so that the figures keep their digits.
  bool micro = mean < 1.0;
  double scale = micro ? 1000.0 : 1.0;
  const char *unit = micro ? "us" : "ms";
  std::string rankNote =
      ranks > 0 ? " (" + std::to_string(ranks) + " ranks)" : "";
  llvm::outs() << llvm::format(
      "benchmark: %zu iterations%s: mean %.3f %s, p50 %.3f %s, p90 %.3f %s, "
      "p99 %.3f %s, min %.3f %s; throughput %.1f runs/s\n",
      values.size(), rankNote.c_str(), mean * scale, unit,
      percentile(50) * scale, unit, percentile(90) * scale, unit,
      percentile(99) * scale, unit, values.front() * scale, unit,
      1000.0 / mean);
}

/// A string as a JSON string literal.
std::string jsonString(llvm::StringRef text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += llvm::formatv("\\u{0:x-4}", static_cast<unsigned>(c)).str();
    } else {
      out += c;
    }
  }
  return out + "\"";
}

/// One line per collective kind the rank ran in its last call, and the
/// ring bytes it sent in all; written at once, so that under mpirun the
/// ranks' lines do not interleave.
void printCollectiveStats(loom_engine *engine, int32_t rank) {
  loom_collective_stats stats[LOOM_COLLECTIVE_KINDS];
  if (loom_engine_collective_stats(engine, rank, stats) != LOOM_OK)
    return;
  std::string text;
  llvm::raw_string_ostream os(text);
  uint64_t sent = 0;
  for (int32_t k = 0; k < LOOM_COLLECTIVE_KINDS; ++k) {
    sent += stats[k].ring_bytes_sent;
    if (!stats[k].calls)
      continue;
    os << llvm::formatv(
        "rank {0} collectives: {1} x{2}, {3} buffer bytes, {4} ring bytes "
        "sent\n",
        rank, loom_collective_kind_name(loom_collective_kind(k)),
        stats[k].calls, stats[k].buffer_bytes, stats[k].ring_bytes_sent);
  }
  os << llvm::formatv("rank {0} collectives: {1} ring bytes sent in all\n",
                      rank, sent);
  llvm::outs().flush();
  llvm::outs() << text;
  llvm::outs().flush();
}

/// Prints each kernel's time per run, share, and achieved GFLOP/s and GB/s
/// (the compiler's counts over the measured time), slowest first; with
/// `tracePath`, writes every rank's last run as Chrome trace events
/// (chrome://tracing, Perfetto). False when the engine reported no kernels
/// (it was compiled without --kernel-timers) or the trace cannot be written.
bool printKernelProfile(loom_engine *engine, llvm::ArrayRef<int32_t> ranks,
                        double meanRunMilliseconds, const RunOptions &options) {
  const std::string &tracePath = options.profileTrace;
  std::string trace;
  std::vector<ProfiledRank> profiled;
  for (int32_t rank : ranks) {
    size_t count = 0;
    loom_engine_kernel_times(engine, rank, nullptr, 0, &count);
    if (count == 0) {
      llvm::errs() << "error: the engine reported no kernel times: compile "
                      "it with loomc --kernel-timers\n";
      return false;
    }
    std::vector<loom_kernel_time> kernels(count);
    loom_engine_kernel_times(engine, rank, kernels.data(), count, &count);
    uint64_t runs = 0, total = 0;
    for (const loom_kernel_time &k : kernels) {
      runs = std::max(runs, k.calls);
      total += k.nanoseconds;
    }
    double kernelMicros = runs ? total / 1e3 / runs : 0;
    ProfiledRank &page = profiled.emplace_back();
    page.rank = rank;
    page.runs = runs;
    page.kernelMicrosPerRun = kernelMicros;
    for (const loom_kernel_time &k : kernels) {
      if (k.calls == 0)
        continue;
      double seconds = k.nanoseconds / 1e9 / k.calls;
      page.kernels.push_back(
          {k.label, seconds * 1e6,
           total ? static_cast<double>(k.nanoseconds) / total : 0.0,
           k.flops > 0 && seconds > 0 ? k.flops / seconds / 1e9 : 0.0,
           k.bytes > 0 && seconds > 0 ? k.bytes / seconds / 1e9 : 0.0});
    }
    llvm::outs() << llvm::formatv(
        "profile{0}: {1} kernels over {2} runs: {3:f1} us of kernels per "
        "run",
        ranks.size() > 1 ? " of rank " + std::to_string(rank) : "", count, runs,
        kernelMicros);
    if (meanRunMilliseconds > 0)
      llvm::outs() << llvm::formatv(
          " in {0:f1} us per run ({1:f0}%)", meanRunMilliseconds * 1e3,
          100.0 * kernelMicros / (meanRunMilliseconds * 1e3));
    llvm::outs() << "\n";
    llvm::outs() << "     #   us/run  share  GFLOP/s     GB/s  kernel\n";
    std::vector<size_t> order(count);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      if (kernels[a].nanoseconds != kernels[b].nanoseconds)
        return kernels[a].nanoseconds > kernels[b].nanoseconds;
      return a < b;
    });
    for (size_t i : order) {
      const loom_kernel_time &k = kernels[i];
      if (k.calls == 0)
        continue;
      double seconds = k.nanoseconds / 1e9 / k.calls;
      auto rate = [&](int64_t amount) {
        return amount > 0 && seconds > 0
                   ? llvm::formatv("{0,8:f1}", amount / seconds / 1e9).str()
                   : std::string(8, ' ');
      };
      llvm::outs() << llvm::formatv("  {0,4} {1,8:f1} {2,5:f1}% {3} {4}  {5}\n",
                                    i, seconds * 1e6,
                                    total ? 100.0 * k.nanoseconds / total : 0.0,
                                    rate(k.flops), rate(k.bytes), k.label);
    }
    if (tracePath.empty())
      continue;
    loom_engine_kernel_events(engine, rank, nullptr, 0, &count);
    std::vector<loom_kernel_event> events(count);
    loom_engine_kernel_events(engine, rank, events.data(), count, &count);
    for (const loom_kernel_event &e : events) {
      const loom_kernel_time &k = kernels[e.kernel];
      trace += llvm::formatv(
          "{0}{{\"name\": {1}, \"ph\": \"X\", \"pid\": {2}, \"tid\": 0, "
          "\"ts\": {3:f3}, \"dur\": {4:f3}, \"args\": {{\"kernel\": {5}, "
          "\"flops\": {6}, \"bytes\": {7}}}\n",
          trace.empty() ? "[" : ",", jsonString(k.label), rank,
          e.start_ns / 1e3, e.duration_ns / 1e3, e.kernel, k.flops, k.bytes);
    }
  }
  if (!options.profileHtml.empty()) {
    if (llvm::Error error = writeProfileReport(
            options.profileHtml, options.model, profiled, options.peakGflops,
            options.peakGbytesPerSecond)) {
      llvm::errs() << "error: " << llvm::toString(std::move(error)) << "\n";
      return false;
    }
    llvm::outs() << "wrote the kernel profile to " << options.profileHtml
                 << "\n";
  }
  if (tracePath.empty())
    return true;
  std::error_code ec;
  llvm::raw_fd_ostream os(tracePath, ec);
  if (ec) {
    llvm::errs() << "error: cannot write " << tracePath << ": " << ec.message()
                 << "\n";
    return false;
  }
  os << (trace.empty() ? "[" : trace) << "]\n";
  llvm::outs() << "wrote the last run's kernels to " << tracePath
               << " (Chrome trace events)\n";
  return true;
}

} // namespace

namespace runner {

bool openMpiCommunicator(const RunOptions &options, int32_t numRanks,
                         CommPtr &comm) {
  if (!options.mpi)
    return true;
#ifdef LOOM_HAVE_MPI
  loom_comm_options commOptions;
  loom_comm_options_init(&commOptions);
  commOptions.timeout_ms = options.rankTimeoutMs;
  loom_comm *raw = nullptr;
  if (loom_status status = loom_comm_create_mpi(&commOptions, &raw)) {
    llvm::errs() << "error: " << loom_last_error() << " ("
                 << loom_status_name(status) << ")\n";
    return false;
  }
  comm.reset(raw);
  if (loom_comm_size(raw) != numRanks) {
    llvm::errs() << "error: mpirun started " << loom_comm_size(raw)
                 << " processes but the engine has " << numRanks << " ranks\n";
    return false;
  }
  return true;
#else
  (void)numRanks;
  (void)comm;
  llvm::errs() << "error: this loom-run was built without MPI\n";
  return false;
#endif
}

EnginePtr loadEngine(const RunOptions &options) {
  loom_engine *raw = nullptr;
  loom_load_options loadOptions;
  loom_load_options_init(&loadOptions);
  loadOptions.threads = options.threads;
  PublicKey trusted;
  if (!options.trustedKey.empty()) {
    llvm::Expected<PublicKey> key = readPublicKey(options.trustedKey);
    if (!key) {
      llvm::errs() << "error: " << llvm::toString(key.takeError()) << "\n";
      return EnginePtr(nullptr, loom_engine_free);
    }
    trusted = *key;
    loadOptions.trusted_public_key = trusted.data();
  }
  if (loom_status status =
          loom_engine_load(options.model.c_str(), &loadOptions, &raw)) {
    llvm::errs() << "error: " << loom_last_error() << " ("
                 << loom_status_name(status) << ")\n";
    return EnginePtr(nullptr, loom_engine_free);
  }
  return EnginePtr(raw, loom_engine_free);
}

} // namespace runner

int runEngine(const RunOptions &options) {
  runner::EnginePtr engine = runner::loadEngine(options);
  if (!engine)
    return 1;
  loom_engine *raw = engine.get();
  int32_t numRanks = loom_engine_num_ranks(raw);
  llvm::outs() << "engine: " << loom_engine_compiler_version(raw) << ", target "
               << loom_engine_target(raw) << ", " << numRanks
               << (numRanks == 1 ? " rank" : " ranks") << "\n";
  if (options.ranks > 0 && options.ranks != numRanks) {
    llvm::errs() << "error: --ranks " << options.ranks << " but the engine "
                 << "was compiled for " << numRanks << " ranks\n";
    return 1;
  }
  // Under mpirun: this process is one rank, its collectives on MPI.
  runner::CommPtr comm(nullptr, loom_comm_free);
  if (!runner::openMpiCommunicator(options, numRanks, comm))
    return 1;
  loom_comm *mpiComm = comm.get();
  int32_t myRank = mpiComm ? loom_comm_rank(mpiComm) : 0;
  if (options.ranks == 0 && numRanks != 1 && !mpiComm) {
    llvm::errs() << "error: the engine has " << numRanks
                 << " ranks: run it with --ranks " << numRanks << "\n";
    return 1;
  }

  MLIRContext context;
  std::vector<std::string> inputFiles, expectedFiles;
  if (!runner::expandFiles(options.inputs, "input_", inputFiles) ||
      !runner::expandFiles(options.expected, "output_", expectedFiles))
    return 1;

  // Every rank gets the same inputs (the partitioned programs keep the
  // unpartitioned interface).
  int32_t numInputs = loom_engine_num_inputs(raw, 0);
  int32_t numOutputs = loom_engine_num_outputs(raw, 0);
  std::vector<std::vector<char>> inputBytes;
  std::vector<std::vector<int64_t>> inputShapes;
  std::mt19937_64 rng(options.seed);
  if (!inputFiles.empty() && (int32_t)inputFiles.size() != numInputs) {
    llvm::errs() << "error: the engine takes " << numInputs << " inputs but "
                 << inputFiles.size() << " were given\n";
    return 1;
  }
  for (int32_t i = 0; i < numInputs; ++i) {
    const loom_tensor_desc &d = *loom_engine_input(raw, 0, i);
    std::optional<ElementKind> kind = kindOf(d.dtype);
    if (!kind) {
      llvm::errs() << "error: input " << i << " has an unsupported dtype\n";
      return 1;
    }
    Tensor t;
    if (inputFiles.empty()) {
      // A symbolic dimension takes its size from --input-shape, else
      // --dynamic-dim-size.
      SmallVector<int64_t> shape(shapeOf(d));
      auto given = options.importOptions.inputShapes.find(d.name);
      if (given != options.importOptions.inputShapes.end()) {
        bool fits = given->second.size() == shape.size();
        for (size_t k = 0; fits && k < shape.size(); ++k)
          fits = shape[k] == LOOM_DYNAMIC_DIM || shape[k] == given->second[k];
        if (!fits) {
          llvm::errs() << "error: --input-shape for '" << d.name
                       << "' does not fit the engine's " << describe(d) << "\n";
          return 1;
        }
        shape.assign(given->second.begin(), given->second.end());
      }
      for (int64_t &size : shape)
        if (size == LOOM_DYNAMIC_DIM)
          size = ShapedType::kDynamic;
      t = runner::randomTensor(
          RankedTensorType::get(shape, getMLIRType(&context, *kind)), rng,
          options.dynamicDimSize);
    } else {
      if (std::string error = readTensorFile(inputFiles[i], &context, t);
          !error.empty()) {
        llvm::errs() << "error: " << error << "\n";
        return 1;
      }
      runner::reinterpretHalfBits(t, *kind);
      bool fits = t.kind() == *kind && t.shape().size() == shapeOf(d).size();
      for (size_t k = 0; fits && k < t.shape().size(); ++k)
        fits = d.dims[k] == LOOM_DYNAMIC_DIM || t.shape()[k] == d.dims[k];
      if (!fits) {
        llvm::errs() << "error: input " << i << " ('" << d.name << "') is "
                     << t.typeString() << " but the engine takes "
                     << describe(d) << "\n";
        return 1;
      }
    }
    llvm::outs() << "input " << i << ": ";
    runner::printTensor(llvm::outs(), t, options.printValues);
    llvm::outs() << "\n";
    inputBytes.push_back(tensorToBytes(t));
    inputShapes.emplace_back(t.shape().begin(), t.shape().end());
  }

  size_t ranks = std::max<int64_t>(options.ranks, 1);
  std::vector<std::vector<std::vector<char>>> outputBytes(ranks);
  std::vector<std::vector<const void *>> inputPointers(ranks);
  std::vector<std::vector<void *>> outputPointers(ranks);
  // Outputs whose sizes the data decides come back in memory the runtime
  // allocated (loom_dynamic_output), released before the next run and at
  // the end.
  std::vector<std::vector<loom_dynamic_output>> dynamicOutputs(ranks);
  auto releaseDynamicOutputs = [&] {
    for (std::vector<loom_dynamic_output> &rankOutputs : dynamicOutputs)
      for (loom_dynamic_output &output : rankOutputs) {
        loom_buffer_free(output.data);
        output.data = nullptr;
      }
  };
  llvm::scope_exit releaseAtExit(releaseDynamicOutputs);
  // Inputs with symbolic dimensions go with their shapes.
  std::vector<loom_shaped_input> shapedInputs(inputBytes.size());
  for (size_t i = 0; i < inputBytes.size(); ++i) {
    loom_shaped_input &shaped = shapedInputs[i];
    shaped.data = inputBytes[i].data();
    shaped.rank = static_cast<int32_t>(inputShapes[i].size());
    llvm::copy(inputShapes[i], shaped.dims);
  }
  for (size_t r = 0; r < ranks; ++r) {
    for (size_t i = 0; i < inputBytes.size(); ++i)
      inputPointers[r].push_back(
          loom_tensor_desc_is_dynamic(loom_engine_input(raw, 0, i))
              ? static_cast<const void *>(&shapedInputs[i])
              : inputBytes[i].data());
    dynamicOutputs[r].resize(numOutputs, loom_dynamic_output{});
    for (int32_t i = 0; i < numOutputs; ++i) {
      const loom_tensor_desc *desc =
          loom_engine_output(raw, static_cast<int32_t>(r), i);
      outputBytes[r].emplace_back(desc->byte_size);
    }
    for (int32_t i = 0; i < numOutputs; ++i) {
      const loom_tensor_desc *desc =
          loom_engine_output(raw, static_cast<int32_t>(r), i);
      outputPointers[r].push_back(
          loom_tensor_desc_is_dynamic(desc)
              ? static_cast<void *>(&dynamicOutputs[r][i])
              : outputBytes[r][i].data());
    }
  }
  std::vector<const void *const *> rankInputs;
  std::vector<void *const *> rankOutputs;
  for (size_t r = 0; r < ranks; ++r) {
    rankInputs.push_back(inputPointers[r].data());
    rankOutputs.push_back(outputPointers[r].data());
  }
  loom_execute_options executeOptions;
  loom_execute_options_init(&executeOptions);
  executeOptions.timeout_ms = options.rankTimeoutMs;
  auto runOnce = [&]() -> loom_status {
    releaseDynamicOutputs();
    if (mpiComm)
      return loom_engine_execute_on(raw, mpiComm, rankInputs[0],
                                    rankOutputs[0]);
    if (options.ranks > 0)
      return loom_engine_execute_ranks(raw, rankInputs.data(),
                                       rankOutputs.data(), &executeOptions);
    return loom_engine_execute(raw, 0, rankInputs[0], rankOutputs[0]);
  };
  if (loom_status status = runOnce()) {
    llvm::errs() << "error: " << loom_last_error() << " ("
                 << loom_status_name(status) << ")\n";
    return 1;
  }

  // Which program ran, where the engine has code specialized for some
  // shapes (loomc --profile's OPT).
  for (size_t r = 0; r < ranks; ++r) {
    int32_t rank = mpiComm ? myRank : static_cast<int32_t>(r);
    if (loom_engine_num_variants(raw, rank) <= 0)
      continue;
    int32_t variant = loom_engine_last_variant(raw, rank);
    llvm::outs() << "rank " << rank << " ran ";
    if (variant < 0) {
      llvm::outs() << "the general code\n";
      continue;
    }
    llvm::outs() << "the code specialized for";
    for (int32_t i = 0; i < numInputs; ++i) {
      const loom_tensor_desc *desc =
          loom_engine_variant_input(raw, rank, variant, i);
      llvm::outs() << (i ? ", " : " ") << desc->name << "=";
      for (int32_t d = 0; d < desc->rank; ++d)
        llvm::outs() << (d ? "x" : "") << desc->dims[d];
    }
    llvm::outs() << "\n";
  }

  if (options.collectiveStats) {
    std::vector<int32_t> counted;
    if (mpiComm)
      counted.push_back(myRank);
    else
      for (size_t r = 0; r < ranks; ++r)
        counted.push_back(static_cast<int32_t>(r));
    for (int32_t r : counted)
      printCollectiveStats(raw, r);
  }

  bool ok = true;
  SmallVector<SmallVector<Tensor>> outputs(ranks);
  for (size_t r = 0; r < ranks; ++r)
    for (int32_t i = 0; i < numOutputs; ++i) {
      const loom_tensor_desc &d =
          *loom_engine_output(raw, static_cast<int32_t>(r), i);
      Tensor t;
      if (loom_tensor_desc_is_dynamic(&d)) {
        const loom_dynamic_output &dynamic = dynamicOutputs[r][i];
        const char *data = static_cast<const char *>(dynamic.data);
        t = *tensorFromBytes(
            *kindOf(d.dtype),
            SmallVector<int64_t>(dynamic.dims, dynamic.dims + dynamic.rank),
            llvm::ArrayRef<char>(data, dynamic.byte_size));
      } else {
        t = *tensorFromBytes(*kindOf(d.dtype), shapeOf(d), outputBytes[r][i]);
      }
      llvm::outs() << (options.ranks > 0 ? "rank " + std::to_string(r) + " "
                       : mpiComm ? "rank " + std::to_string(myRank) + " "
                                 : "")
                   << "output " << i << " '" << d.name << "': ";
      runner::printTensor(llvm::outs(), t, options.printValues);
      llvm::outs() << "\n";
      ok &= runner::writeOutput(options, r, i, t);
      outputs[r].push_back(std::move(t));
    }
  if (!expectedFiles.empty()) {
    std::optional<bool> match =
        runner::compareWithExpected(options, &context, expectedFiles, outputs);
    if (!match)
      return 1;
    ok &= *match;
  }

  if (options.benchmarkIterations > 0) {
    using Clock = std::chrono::steady_clock;
    Clock::time_point warmupStart = Clock::now();
    auto warmupMs = [&] {
      return std::chrono::duration<double, std::milli>(Clock::now() -
                                                       warmupStart)
          .count();
    };
    for (int64_t i = 0;
         i < options.benchmarkWarmup || warmupMs() < options.benchmarkWarmupMs;
         ++i)
      if (runOnce() != LOOM_OK) {
        llvm::errs() << "error: " << loom_last_error() << "\n";
        return 1;
      }
    // The profile covers the timed runs only.
    if (options.profileKernels)
      loom_engine_collect_kernel_times(raw, 1);
    std::vector<double> times;
    double timedMs = 0;
    for (int64_t i = 0; i < options.benchmarkIterations ||
                        timedMs < 1000.0 * options.benchmarkSeconds;
         ++i) {
      Clock::time_point start = Clock::now();
      if (runOnce() != LOOM_OK) {
        llvm::errs() << "error: " << loom_last_error() << "\n";
        return 1;
      }
      times.push_back(
          std::chrono::duration<double, std::milli>(Clock::now() - start)
              .count());
      timedMs += times.back();
    }
    double mean = std::accumulate(times.begin(), times.end(), 0.0) /
                  static_cast<double>(times.size());
    printLatency(std::move(times), options.ranks);
    if (options.profileKernels) {
      loom_engine_collect_kernel_times(raw, 0);
      std::vector<int32_t> profiled;
      if (mpiComm)
        profiled.push_back(myRank);
      else
        for (size_t r = 0; r < ranks; ++r)
          profiled.push_back(static_cast<int32_t>(r));
      if (!printKernelProfile(raw, profiled, mean, options))
        return 1;
    }
  }
  return ok ? 0 : 1;
}

} // namespace loom
