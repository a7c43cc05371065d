//===- Target.h - Code generators as plugins --------------------*- C++ -*-===//
//
// A target turns one rank's loom program into the code an engine holds for
// that rank. The stages before it are the same for every target and live
// outside lib/Target: import, the graph pipeline up to precision,
// partitioning, and (lib/Compiler/EngineBuilder.cpp) the engine's
// signature and per-rank loop. A target supplies what differs: its
// kernel-formation policy (as part of its graph pipeline), its lowering,
// the stages it can print, its code emitter and what it records about the
// device it compiled for.
//
// Targets register by name (`registerTarget`); loomc's `--target`, the
// engine builder and the runner find them in the registry, so adding one is
// adding a folder under lib/Target and one registration call. The design
// and the layering rules are in docs/design/targets.md.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TARGET_TARGET_H
#define LOOM_TARGET_TARGET_H

#include "loom/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace loom {

struct EngineDescription;

/// A temporary buffer of a function's arena as the target placed it, for
/// reports: its place and its lifetime in steps (the top-level ops of the
/// function's bufferized body, inclusive).
struct PlannedBuffer {
  int64_t offset = 0;
  int64_t bytes = 0;
  int64_t firstStep = 0;
  int64_t lastStep = 0;
  /// The ONNX node whose result it holds, when its location names one.
  std::string label;
};

/// One function's memory plan: what `loomc --report-html` draws.
struct MemoryPlanRecord {
  std::string function;
  int64_t steps = 0;
  int64_t arenaBytes = 0;
  std::vector<PlannedBuffer> buffers;
};
struct EngineRank;

/// What every target understands: the graph pipeline's choices and how
/// hard the code generator works. A target's own options (the CPU's thread
/// thresholds, say) are the target's, given when it is created.
struct CompileOptions {
  /// Run the graph pipeline (recognition, simplification, kernel
  /// formation) before lowering.
  bool optimizeGraph = true;
  /// With `optimizeGraph`: the type contractions compute in.
  ContractionPrecision precision = ContractionPrecision::F32;
  /// Optimization level (0-3) of the generated code.
  unsigned optLevel = 3;
  /// Print kernel formation's fusion report and the memory plan's figures
  /// to stderr.
  bool reportKernels = false;
  /// Time every kernel when the code runs (`loom-run --profile`).
  bool kernelTimers = false;
  /// Debugging: check every buffer access and op's operand shapes at run
  /// time; a failed check reports the op and its location.
  bool runtimeChecks = false;
  /// With external weights (engines): the smallest constant, in bytes, that
  /// becomes a weight parameter; smaller ones stay in the code.
  int64_t externalWeightMinBytes = 64;
  /// Called after each phase with its name and wall time in milliseconds.
  std::function<void(llvm::StringRef phase, double milliseconds)> onPhase;
  /// Report observers (`loomc --report-html`), called when set, once per
  /// rank's program in rank order: with the module after the graph
  /// pipeline (kernels formed, collectives placed), and with each memory
  /// plan the target makes.
  std::function<void(mlir::ModuleOp)> onGraphOptimized;
  std::function<void(const MemoryPlanRecord &)> onMemoryPlan;
};

/// A form of the program a target can print (`loomc --emit=NAME`).
struct TargetStage {
  llvm::StringRef name;
  llvm::StringRef description;
  /// Bytes rather than text: written only to a file.
  bool binary = false;
};

/// A code generator for one kind of device, configured with its own
/// options when it was created. Its methods do not change it: one target
/// object may compile several programs, from several threads.
class Target {
public:
  virtual ~Target();

  /// The name `--target` selects ("cpu").
  virtual llvm::StringRef getName() const = 0;

  /// The graph pipeline on a rank's program: constants folded and shapes
  /// made static, then loom-graph-optimize with this target's kernel
  /// formation. The default is buildDefaultGraphPipeline.
  virtual void buildGraphPipeline(mlir::OpPassManager &pm,
                                  const CompileOptions &options) const;

  /// Turns the partitioned program `module` into rank `rank`'s program
  /// (its pipeline stages kept, its collectives in this target's form).
  virtual mlir::LogicalResult specializeForRank(mlir::ModuleOp module,
                                                int64_t rank) const = 0;

  /// The forms of the program, after the graph pipeline, this target can
  /// print, in pipeline order.
  virtual llvm::ArrayRef<TargetStage> getStages() const = 0;

  /// Lowers `module` (one rank's loom program, changed in place) to the
  /// stage named `stage` (one of getStages) and prints it to `os`.
  virtual mlir::LogicalResult emitStage(mlir::ModuleOp module,
                                        llvm::StringRef stage,
                                        const CompileOptions &options,
                                        llvm::raw_ostream &os) const = 0;

  /// Compiles `module` (one rank's loom program, changed in place) into
  /// `rank`: its code, entry symbol and weights. `engine` receives what the
  /// whole engine needs from this rank (the kernel libraries it calls).
  /// The rank's signature is filled in already. Errors are emitted on
  /// `module`.
  virtual mlir::LogicalResult compileRank(mlir::ModuleOp module,
                                          const CompileOptions &options,
                                          EngineRank &rank,
                                          EngineDescription &engine) const = 0;

  /// Records the device the code was compiled for (architecture,
  /// features), which the runtime checks before it loads the engine.
  virtual void describeDevice(EngineDescription &engine) const = 0;
};

/// The graph pipeline targets share: constants folded, shapes made static,
/// then loom-graph-optimize, with the shared kernel-formation policy when
/// `formKernels` (without it: the program partitioning takes, or a target
/// that forms no kernels).
void buildDefaultGraphPipeline(mlir::OpPassManager &pm,
                               const CompileOptions &options,
                               bool formKernels = true);

/// Runs `target`'s graph pipeline on `module` when `options.optimizeGraph`
/// (reporting the phase to `options.onPhase`). What comes after it (the
/// target's stages, compileRank) then gets the options with
/// `optimizeGraph` off.
mlir::LogicalResult runGraphPipeline(const Target &target,
                                     mlir::ModuleOp module,
                                     const CompileOptions &options);

/// A target in the registry.
struct TargetRegistration {
  std::string name;
  /// One line for `loomc --help` and error messages.
  std::string description;
  /// A target configured from the command-line options its registration
  /// added (construct tools' options first); null, with an error printed,
  /// when they are invalid.
  std::function<std::unique_ptr<Target>()> createFromCommandLine;
  /// The category of the target's own command-line options, which tools
  /// list in --help; null when it has none.
  llvm::cl::OptionCategory *category = nullptr;
};

/// Adds `registration` to the registry; a second registration of the same
/// name is ignored (tools and libraries may both register the targets they
/// need).
void registerTarget(TargetRegistration registration);

/// The registered target called `name`, or null.
const TargetRegistration *lookupTarget(llvm::StringRef name);

/// Every registered target, by name.
std::vector<const TargetRegistration *> registeredTargets();

/// "cpu, test" — the registered names, for messages.
std::string registeredTargetNames();

} // namespace loom

#endif // LOOM_TARGET_TARGET_H
