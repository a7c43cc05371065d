//===- CPUTarget.h - Compiling loom programs to host object code -*- C++
//-*-===//
//
// The CPU pipeline, stage by stage: loom (graph) -> linalg on tensors ->
// LLVM dialect (bufferized, loops) -> LLVM IR -> object code for the host.
// Each stage is a library call so that tools and tests can stop anywhere.
// The entry point's calling convention is in docs/design/cpu-abi.md.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TARGET_CPU_CPUTARGET_H
#define LOOM_TARGET_CPU_CPUTARGET_H

#include "loom/Pipelines/Pipelines.h"
#include "loom/Target/Target.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"

#include <functional>
#include <memory>
#include <string>

namespace loom::cpu {

/// The symbol of the packed entry point: `void loom_entry(void **buffers)`,
/// buffers holding the inputs, then the outputs, in signature order.
inline constexpr const char *kEntrySymbol = "loom_entry";
/// The symbol the model's function gets: `void loom_main(T0 *in0, ...,
/// U0 *out0, ...)` (bare pointers to dense row-major buffers).
inline constexpr const char *kMainSymbol = "loom_main";

/// Where `compile` stops.
enum class Stage { Loom, Linalg, LLVMDialect, LLVMIR, Object };

/// Where convolutions start to be faster in oneDNN than generated
/// (docs/codegen.md, "Library convolutions").
inline constexpr int64_t kDefaultLibraryConvolutionFlops = int64_t(1) << 20;

/// The CPU target's own options (loom::CompileOptions holds what every
/// target understands).
struct CPUOptions {
  /// Contractions of at least this many floating-point operations get a
  /// parallel tile loop (OpenMP; 0: none). The thread count is chosen when
  /// the code runs (loom_load_options::threads).
  int64_t parallelFlops = int64_t(1) << 20;
  /// Other linalg ops (elementwise, reductions) with at least this many
  /// points in their iteration space run as a parallel loop over chunks of
  /// their outermost parallel loop (OpenMP; 0: none).
  int64_t parallelElements = int64_t(1) << 17;
  /// Convolutions of the shape class where oneDNN wins, of at least this
  /// many operations, call the runtime's oneDNN kernel library
  /// (loom/abi/kernels.h); negative: every convolution is generated. The
  /// tools choose (`--conv-library`); kDefaultLibraryConvolutionFlops is
  /// the measured threshold (docs/codegen.md).
  int64_t libraryConvolutionFlops = -1;
  /// Store constant right operands of large contractions in the panel
  /// layout the register tiles read (loom-cpu-pack-constant-weights),
  /// rather than copying their panels on every call.
  bool packConstantWeights = true;
  /// Quantized products of u8 activations and constant s8 weights multiply
  /// bytes (AVX512-VNNI's vpdpbusd) on hosts that have it, with weights
  /// packed for it (so only with packConstantWeights); otherwise they
  /// multiply operands widened to i32.
  bool byteProducts = true;
  /// bf16 products summed in f32 (loom-precision's bf16 contractions) run
  /// on AVX512-BF16's vdpbf16ps on hosts that have it, constant weights
  /// packed for it (so only with packConstantWeights); otherwise their
  /// operands are widened to f32 and multiplied with FMAs.
  bool bfloat16Products = true;
  /// On hosts with AMX (and the permission to use it), dot products run on
  /// AMX tiles (loom-cpu-vectorize-dot-products' amx options).
  bool amx = true;
};

/// Everything the CPU pipeline reads: the shared options and the CPU's.
struct CompileOptions : loom::CompileOptions, CPUOptions {
  CompileOptions() = default;
  CompileOptions(const loom::CompileOptions &common, const CPUOptions &cpu)
      : loom::CompileOptions(common), CPUOptions(cpu) {}
};

/// The CPU target: lowering through linalg and LLVM to a shared object for
/// this host, with `options`.
std::unique_ptr<Target> createCPUTarget(const CPUOptions &options);

/// Registers the "cpu" target and its command-line options (category "CPU
/// target": --parallel-flops, --parallel-elements, --pack-weights,
/// --conv-library, --library-conv-flops). Call before the tool parses its
/// command line; calling again does nothing.
void registerCPUTarget();

/// The CPU options the command line gives (after registerCPUTarget and
/// parsing; the defaults without registerCPUTarget); failure, with an error
/// printed, when they are invalid.
mlir::FailureOr<CPUOptions> cpuOptionsFromCommandLine();

/// The category of the CPU target's command-line options, for tools that
/// show only their own options in --help.
llvm::cl::OptionCategory &cpuTargetCategory();

/// The passes from loom ops to linalg on tensors (convert-loom-to-linalg,
/// canonicalization); `byteProducts` is convert-loom-to-linalg's option.
void buildLoomToLinalgPipeline(mlir::OpPassManager &pm,
                               bool byteProducts = false);

/// The passes from linalg on tensors to the LLVM dialect: elementwise
/// fusion, one-shot bufferization with identity layouts at the function
/// boundary, results as out-parameters, deallocation, loops, and the
/// conversions to LLVM with the bare-pointer calling convention. Large
/// contractions' parallel tile loops and large elementwise and reduction
/// ops' chunk loops become OpenMP loops (see CompileOptions::parallelFlops
/// and CompileOptions::parallelElements).
void buildLinalgToLLVMPipeline(mlir::OpPassManager &pm,
                               const CompileOptions &options = {});

/// Registers `loom-cpu-lower-to-llvm` (buildLinalgToLLVMPipeline) with
/// mlir-opt style drivers.
void registerCPUPipelines();

/// Renames the entry function (@main, or the only function) to
/// `kMainSymbol`; fails with a diagnostic when there is none or it is not
/// statically shaped.
mlir::LogicalResult prepareEntry(mlir::ModuleOp module);

/// Translates an LLVM-dialect module to LLVM IR and adds the packed entry
/// `kEntrySymbol`. Null (with a diagnostic) on failure.
std::unique_ptr<llvm::Module> translateToLLVMIR(mlir::ModuleOp module,
                                                llvm::LLVMContext &context);

/// The host's CPU name and LLVM feature string (`+avx2,...`).
std::string hostCPUName();
std::string hostCPUFeatures();
/// Whether the host converts f32 to bf16 in one instruction (AVX512-BF16
/// or AVX-NE-CONVERT); without, LLVM calls `__truncsfbf2` for each element
/// and the pipeline expands the conversions itself.
bool hostConvertsBFloat16();

/// Whether the host multiplies unsigned by signed bytes into i32 sums in
/// one instruction (AVX512-VNNI's vpdpbusd on 512-bit registers).
bool hostMultipliesBytes();

/// Whether `options` and the host make quantized products byte products.
bool usesByteProducts(const CPUOptions &options);

/// Whether the host multiplies pairs of bf16 into f32 sums in one
/// instruction (AVX512-BF16's vdpbf16ps on 512-bit registers).
bool hostMultipliesBFloat16();

/// Whether `options` and the host run bf16 products on vdpbf16ps.
bool usesBFloat16Products(const CPUOptions &options);

/// Whether the host has AMX tiles with `kind` ("amx-bf16", "amx-int8")
/// and lets this process use them (on Linux, asking for the permission).
bool hostHasAMX(llvm::StringRef kind);

/// Optimizes `module` at `optLevel` and emits a relocatable,
/// position-independent object for the host CPU into `object`. Returns an
/// error message, empty on success.
std::string emitObject(llvm::Module &module, unsigned optLevel,
                       llvm::SmallVectorImpl<char> &object);
/// The same for CPU `cpu` ("x86-64": any x86-64 machine) with LLVM features
/// `features`: the host side of code for another device, which runs on
/// whichever machine holds the device.
std::string emitObject(llvm::Module &module, unsigned optLevel,
                       llvm::SmallVectorImpl<char> &object, llvm::StringRef cpu,
                       llvm::StringRef features);

/// Runs the pipeline on `module` in place up to `stopAfter` (Loom: after
/// the graph pipeline; Linalg; LLVMDialect). Diagnostics go to the
/// context's handler.
/// With `weights`, the entry's constant tensors of at least
/// `CompileOptions::externalWeightMinBytes` become parameters after its
/// inputs (see externalizeWeights) and `weights` receives their values.
mlir::LogicalResult
lowerModule(mlir::ModuleOp module, Stage stopAfter,
            const CompileOptions &options,
            llvm::SmallVectorImpl<mlir::ElementsAttr> *weights = nullptr);

/// Replaces each dense, non-splat constant tensor of the entry
/// (`kMainSymbol`, linalg on tensors) of at least `minBytes` by a parameter
/// placed after the inputs (one per distinct value), appending the values
/// in parameter order to `weights`. The compiled code then reads them from
/// buffers the caller passes between the inputs and the outputs.
mlir::LogicalResult
externalizeWeights(mlir::ModuleOp module, int64_t minBytes,
                   llvm::SmallVectorImpl<mlir::ElementsAttr> &weights);

/// The bytes of a weight as externalizeWeights takes it (row-major,
/// little-endian, whole bytes per element).
llvm::ArrayRef<char> weightBytes(mlir::ElementsAttr weight);

/// The whole pipeline: `module` (loom IR, lowered in place) to object code.
/// Returns an error message, empty on success.
std::string
compileToObject(mlir::ModuleOp module, const CompileOptions &options,
                llvm::SmallVectorImpl<char> &object,
                llvm::SmallVectorImpl<mlir::ElementsAttr> *weights = nullptr);

} // namespace loom::cpu

#endif // LOOM_TARGET_CPU_CPUTARGET_H
