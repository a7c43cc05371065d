//===- RegisterCPUTarget.cpp - The CPU target in the target registry ------===//
//
// The CPU pipeline (CPUTarget.cpp) behind loom::Target, and its command-line
// options, which tools get by registering the target.
//
//===----------------------------------------------------------------------===//

#include "loom/Target/CPU/CPUTarget.h"

#include "loom/Engine/EngineWriter.h"
#include "loom/Target/CPU/Collectives.h"
#include "loom/Target/CPU/Executable.h"
#include "loom/device.h"

#include "llvm/Support/CommandLine.h"

#include <mutex>

using namespace mlir;

namespace loom::cpu {
namespace {

/// --conv-library: which convolutions the runtime's oneDNN kernel library
/// computes (docs/codegen.md, "Library convolutions").
enum class ConvLibrary {
  /// oneDNN for its shape class when its plugin loads on this machine.
  Auto,
  /// oneDNN for its shape class, loadable here or not (the runtime checks
  /// where the engine runs).
  OneDNN,
  /// Every convolution generated.
  None,
};

/// The CPU target's command-line options. They exist only in tools that
/// register the target, so that tools without it (loom-opt) do not list
/// them.
struct CPUTargetFlags {
  llvm::cl::opt<int64_t> parallelFlops{
      "parallel-flops", llvm::cl::init(CPUOptions().parallelFlops),
      llvm::cl::cat(cpuTargetCategory()),
      llvm::cl::desc("Contractions of at least this many operations get a "
                     "parallel tile loop, run on --num-threads threads "
                     "(0: none)")};
  llvm::cl::opt<int64_t> parallelElements{
      "parallel-elements", llvm::cl::init(CPUOptions().parallelElements),
      llvm::cl::cat(cpuTargetCategory()),
      llvm::cl::desc("Elementwise and reduction ops of at least this many "
                     "iteration points run as a parallel loop over chunks of "
                     "their outermost parallel loop (0: none)")};
  llvm::cl::opt<bool> packWeights{
      "pack-weights", llvm::cl::init(true), llvm::cl::cat(cpuTargetCategory()),
      llvm::cl::desc("Store constant weights of large matrix products in the "
                     "layout the generated code reads (--pack-weights=false: "
                     "copy their panels on every call)")};
  llvm::cl::opt<bool> byteProducts{
      "byte-products", llvm::cl::init(true), llvm::cl::cat(cpuTargetCategory()),
      llvm::cl::desc("Multiply quantized u8 activations by s8 weights as "
                     "bytes (AVX512-VNNI) on hosts that can "
                     "(--byte-products=false: widened to i32)")};
  llvm::cl::opt<bool> bfloat16Products{
      "bf16-products", llvm::cl::init(true), llvm::cl::cat(cpuTargetCategory()),
      llvm::cl::desc("Multiply bf16 operands in pairs into f32 sums "
                     "(AVX512-BF16's vdpbf16ps) on hosts that can "
                     "(--bf16-products=false: widened to f32 first)")};
  llvm::cl::opt<bool> amx{
      "amx", llvm::cl::init(true), llvm::cl::cat(cpuTargetCategory()),
      llvm::cl::desc("Run bf16 and byte products on AMX tiles on hosts that "
                     "have AMX and let the process use it (--amx=false: "
                     "vector registers)")};
  llvm::cl::opt<ConvLibrary> library{
      "conv-library", llvm::cl::init(ConvLibrary::Auto),
      llvm::cl::cat(cpuTargetCategory()),
      llvm::cl::desc("Convolutions of the shape class where oneDNN wins "
                     "(grouped ones; ungrouped ones of --library-conv-flops "
                     "or more operations, 1x1 windows of 32 times that)"),
      llvm::cl::values(
          clEnumValN(ConvLibrary::Auto, "auto",
                     "oneDNN if its kernel library loads here (default)"),
          clEnumValN(ConvLibrary::OneDNN, "onednn",
                     "oneDNN (checked where the code runs)"),
          clEnumValN(ConvLibrary::None, "none", "generate every convolution"))};
  llvm::cl::opt<int64_t> minFlops{
      "library-conv-flops", llvm::cl::init(kDefaultLibraryConvolutionFlops),
      llvm::cl::cat(cpuTargetCategory()),
      llvm::cl::desc("Smallest ungrouped convolution (operations) sent to "
                     "the kernel library; 1x1 windows from 32 times that")};

  FailureOr<CPUOptions> resolve() const {
    CPUOptions options;
    if (parallelFlops < 0 || parallelElements < 0 || minFlops < 0) {
      llvm::errs() << "error: --"
                   << (parallelFlops < 0      ? "parallel-flops"
                       : parallelElements < 0 ? "parallel-elements"
                                              : "library-conv-flops")
                   << " must not be negative\n";
      return failure();
    }
    options.parallelFlops = parallelFlops;
    options.parallelElements = parallelElements;
    options.packConstantWeights = packWeights;
    options.byteProducts = byteProducts;
    options.bfloat16Products = bfloat16Products;
    options.amx = amx;
    switch (library) {
    case ConvLibrary::None:
      options.libraryConvolutionFlops = -1;
      break;
    case ConvLibrary::OneDNN:
      options.libraryConvolutionFlops = minFlops;
      break;
    case ConvLibrary::Auto:
      options.libraryConvolutionFlops =
          loom_kernel_library("onednn", nullptr) == LOOM_OK ? int64_t(minFlops)
                                                            : int64_t(-1);
      break;
    }
    return options;
  }
};

/// Set once by registerCPUTarget; lives as long as the process.
CPUTargetFlags *commandLineFlags = nullptr;

class CPUTarget final : public Target {
public:
  explicit CPUTarget(const CPUOptions &options) : cpuOptions(options) {}

  llvm::StringRef getName() const override { return "cpu"; }

  LogicalResult specializeForRank(ModuleOp module,
                                  int64_t rank) const override {
    // Collectives become calls of the runtime's communicator
    // (loom/abi/collectives.h).
    return cpu::specializeForRank(module, rank);
  }

  llvm::ArrayRef<TargetStage> getStages() const override {
    static const TargetStage stages[] = {
        {"linalg", "linalg on tensors"},
        {"llvm-dialect", "the LLVM dialect (bufferized, loops)"},
        {"llvm", "LLVM IR"},
        {"obj", "an object file for this CPU", /*binary=*/true},
    };
    return stages;
  }

  LogicalResult emitStage(ModuleOp module, llvm::StringRef stage,
                          const loom::CompileOptions &common,
                          llvm::raw_ostream &os) const override {
    CompileOptions options(common, cpuOptions);
    if (stage == "obj") {
      llvm::SmallVector<char> object;
      if (std::string error = compileToObject(module, options, object);
          !error.empty())
        return module.emitError(error);
      os.write(object.data(), object.size());
      return success();
    }
    Stage stopAfter = stage == "linalg" ? Stage::Linalg : Stage::LLVMDialect;
    if (failed(lowerModule(module, stopAfter, options)))
      return failure();
    if (stage != "llvm") {
      module.print(os);
      os << "\n";
      return success();
    }
    auto start = std::chrono::steady_clock::now();
    llvm::LLVMContext llvmContext;
    std::unique_ptr<llvm::Module> llvmModule =
        translateToLLVMIR(module, llvmContext);
    if (!llvmModule)
      return failure();
    if (options.onPhase)
      options.onPhase("translate to LLVM IR",
                      std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start)
                          .count());
    llvmModule->print(os, nullptr);
    return success();
  }

  LogicalResult compileRank(ModuleOp module, const loom::CompileOptions &common,
                            EngineRank &rank,
                            EngineDescription &engine) const override {
    CompileOptions options(common, cpuOptions);
    llvm::SmallVector<char> object;
    llvm::SmallVector<ElementsAttr> weights;
    if (std::string error = compileToObject(module, options, object, &weights);
        !error.empty())
      return module.emitError(error);
    llvm::SmallVector<char> shared;
    if (std::string error = linkSharedObject(object, shared); !error.empty())
      return module.emitError(error);
    if (callsKernelLibrary(object) &&
        !llvm::is_contained(engine.libraries, "onednn"))
      engine.libraries.push_back("onednn");
    rank.code.assign(shared.begin(), shared.end());
    rank.entry = kEntrySymbol;
    for (ElementsAttr weight : weights)
      appendWeight(rank, weightBytes(weight));
    return success();
  }

  void describeDevice(EngineDescription &engine) const override {
    describeHost(engine);
  }

private:
  CPUOptions cpuOptions;
};

} // namespace

llvm::cl::OptionCategory &cpuTargetCategory() {
  static llvm::cl::OptionCategory category("CPU target options");
  return category;
}

std::unique_ptr<Target> createCPUTarget(const CPUOptions &options) {
  return std::make_unique<CPUTarget>(options);
}

FailureOr<CPUOptions> cpuOptionsFromCommandLine() {
  if (!commandLineFlags)
    return CPUOptions();
  return commandLineFlags->resolve();
}

void registerCPUTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    commandLineFlags = new CPUTargetFlags();
    registerTarget({"cpu",
                    "this machine's CPU: LLVM code in a shared object, "
                    "OpenMP threads, oneDNN convolutions where they win",
                    []() -> std::unique_ptr<Target> {
                      FailureOr<CPUOptions> options =
                          cpuOptionsFromCommandLine();
                      if (failed(options))
                        return nullptr;
                      return createCPUTarget(*options);
                    },
                    &cpuTargetCategory()});
  });
}

} // namespace loom::cpu
