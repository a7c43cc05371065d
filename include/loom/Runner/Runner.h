//===- Runner.h - The library behind loom-run -------------------*- C++ -*-===//

#ifndef LOOM_RUNNER_RUNNER_H
#define LOOM_RUNNER_RUNNER_H

#include "loom/Importer/ONNX/Importer.h"
#include "loom/Target/CPU/CPUTarget.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace loom {

/// What loom-run does: import (or parse) a model, run it with the reference
/// executor, print each output, and compare with expected outputs.
struct RunOptions {
  /// `.onnx`, ONNX text (`.onnxtxt`/`.txt`) or `.mlir` (loom IR).
  std::string model;
  /// How ONNX models are imported (bound input shapes).
  ONNXImportOptions importOptions;
  /// Input files in order, or one directory (`input_N.pb` or `*.npy`).
  /// Empty: seeded random inputs of the right shapes and types.
  std::vector<std::string> inputs;
  /// Expected output files, or one directory (`output_N.pb` or `*.npy`).
  std::vector<std::string> expected;
  /// |got - expected| <= atol + rtol * |expected| element by element
  /// (ONNX's backend-test defaults).
  double rtol = 1e-3;
  double atol = 1e-7;
  /// Seed of the random inputs.
  uint64_t seed = 0;
  /// Values printed per output.
  int printValues = 8;
  /// When set, each output is written there as output_N.npy.
  std::string outputDirectory;
  /// Size of a dynamic dimension for random inputs.
  int64_t dynamicDimSize = 2;
  /// When positive, the program runs as SPMD on that many ranks (threads),
  /// each with the same inputs; every rank's outputs are printed and rank
  /// 0's are compared with `expected`. Zero: one plain run.
  int64_t ranks = 0;
  /// Threads for the parallel loops of compiled code (engines and the cpu
  /// backend), per rank.
  int32_t threads = 1;
  /// --backend cpu: the CPU target's options (--conv-library,
  /// --parallel-flops, ...).
  cpu::CPUOptions cpu;
  /// With `ranks`: compare every rank's outputs with `expected`, not only
  /// rank 0's (for programs that return replicated results, such as those
  /// of `-loom-partition`).
  bool compareAllRanks = false;
  /// With `ranks`: how long a rank waits for its peers before the run fails
  /// as deadlocked.
  int64_t rankTimeoutMs = 5000;
  /// Engines: a public key file (hex, loomc --generate-signing-key); the
  /// engine must be signed with its secret key (loomc --sign).
  std::string trustedKey;
  /// With engines: time this many runs after `benchmarkWarmup` untimed
  /// ones and print latency percentiles and throughput (0: no benchmark).
  int64_t benchmarkIterations = 0;
  int64_t benchmarkWarmup = 5;
  /// After the warm-up runs, keep warming up until this many milliseconds
  /// have passed; time runs until at least this many seconds have (and
  /// `benchmarkIterations` runs).
  double benchmarkWarmupMs = 0;
  double benchmarkSeconds = 0;
  /// With engines compiled with loomc --kernel-timers: time each kernel over
  /// the benchmark's runs and print a table (--profile); with
  /// `profileTrace`, also write the last run's kernels as a Chrome trace.
  bool profileKernels = false;
  std::string profileTrace;
  /// With engines: print each rank's collectives of the first run (calls,
  /// buffer bytes, ring bytes sent, per kind) (--collective-stats).
  bool collectiveStats = false;
  /// With `profile`: also write the kernels as an HTML page of bars, against
  /// these peaks when they are positive (GFLOP/s, GB/s).
  std::string profileHtml;
  double peakGflops = 0;
  double peakGbytesPerSecond = 0;
  /// With engines: this process runs its rank of the engine under mpirun,
  /// its collectives on MPI.
  bool mpi = false;
  /// Compare the top-1 index along the last axis instead of the values.
  bool compareTop1 = false;
  /// When set, this program also runs on the inputs, and each output's
  /// error against its outputs is printed (the numerics report).
  std::string referenceModel;
  /// "reference": the reference executor; "cpu": compile the program to
  /// native code for this machine (lib/Target/CPU) and run that.
  std::string backend = "reference";
  /// With a decoder engine: greedily generate this many tokens after
  /// `promptIds` (runGenerate); 0: no generation.
  int64_t generateTokens = 0;
  std::vector<int64_t> promptIds;
  /// When given, the generated tokens must begin with these.
  std::vector<int64_t> expectedIds;
};

/// Runs and returns the process exit code: 0 when everything ran and
/// matched, 1 on a mismatch or an error (reported on stderr).
int runModel(const RunOptions &options);

/// Runs an engine file (`options.model`) through the runtime's C API, with
/// the same inputs, printing, comparison and --ranks as runModel, plus the
/// benchmark.
int runEngine(const RunOptions &options);

/// Greedy decoding with a decoder engine compiled from an export with a
/// key/value cache (inputs input_ids, attention_mask, position_ids,
/// past_key_values.*; outputs logits, present.*): a prefill of the prompt,
/// then one step per token with the previous step's cache; prints the
/// tokens, the prefill latency, per-token latency and tokens/s, and
/// compares with `expectedIds`.
int runGenerate(const RunOptions &options);

/// Runs `options.model` on every `test_data_set_N` under `directory` (its
/// inputs and expected outputs) and prints how many match.
int runDataSets(const RunOptions &options, llvm::StringRef directory);

/// Parses loom-run's command line into options and runs.
int loomRunMain(int argc, char **argv);

} // namespace loom

#endif // LOOM_RUNNER_RUNNER_H
