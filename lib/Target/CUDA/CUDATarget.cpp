//===- CUDATarget.cpp - Compiling loom programs for NVIDIA GPUs -----------===//
//
// The pipeline behind the "cuda" target and its registration. The host
// side of the code (buffers, copies, launches) is CPU code: it is
// translated, emitted and linked by the CPU target's host-code functions,
// for any x86-64 machine rather than this one (the GPU is elsewhere).
//
//===----------------------------------------------------------------------===//

#include "loom/Target/CUDA/CUDATarget.h"

#include "loom/Conversion/Passes.h"
#include "loom/Engine/EngineWriter.h"
#include "loom/Target/CPU/CPUTarget.h"
#include "loom/Target/CPU/Executable.h"
#include "loom/Target/CPU/Passes.h"
#include "loom/Target/CUDA/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <mutex>

using namespace mlir;

namespace loom::cuda {

void registerCUDADialects(DialectRegistry &registry) {
  registry.insert<gpu::GPUDialect, NVVM::NVVMDialect>();
  // convert-gpu-to-nvvm converts the kernels' ops through these interfaces.
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  // gpu-module-to-binary translates the kernels to LLVM IR.
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
}

namespace {

/// Linalg on tensors to buffers, results as out-parameters, then the
/// kernels mapped to blocks of threads: what the device pipeline and its
/// host emulation share.
void buildMappedKernelsPipeline(OpPassManager &pm, const CUDAOptions &options) {
  // Producer-consumer chains of elementwise ops: one kernel each.
  pm.addPass(createLinalgElementwiseOpFusionPass());
  pm.addPass(createCanonicalizerPass());
  // The CPU target's bufferization policy (identity layouts at the
  // boundary, copies as linalg.copy) is the GPU's too.
  pm.addPass(cpu::createLoomCPUBufferizePass());
  // Loops of independent iterations (attention's items and heads) run
  // their kernels one iteration after the other: each op in them is a
  // kernel of its own, launched from host code.
  pm.addPass(createForallToForLoopPass());
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.hoistStaticAllocs = true;
  outParams.modifyPublicFunctions = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  bufferization::buildBufferDeallocationPipeline(pm);
  pm.addPass(createInlinerPass());
  pm.addPass(createSymbolDCEPass());
  LoomCUDAMapToBlocksPassOptions blocks;
  blocks.blockSize = options.blockSize;
  pm.addNestedPass<func::FuncOp>(createLoomCUDAMapToBlocksPass(blocks));
}

/// The host code (and, with the device's own conversions run first, what
/// is left of the kernels) to the LLVM dialect, with the bare-pointer
/// convention of the engine's entry. `extra` runs after the standard
/// conversions and before casts are reconciled.
void buildHostToLLVMPipeline(OpPassManager &pm,
                             llvm::function_ref<void(OpPassManager &)> extra) {
  FinalizeMemRefToLLVMConversionPassOptions memrefOptions;
  memrefOptions.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefOptions));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  ConvertFuncToLLVMPassOptions funcOptions;
  funcOptions.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(funcOptions));
  pm.addPass(createConvertControlFlowToLLVMPass());
  extra(pm);
  pm.addPass(createReconcileUnrealizedCastsPass());
}

} // namespace

void buildBuffersAndLaunchesPipeline(OpPassManager &pm,
                                     const CUDAOptions &options) {
  buildMappedKernelsPipeline(pm, options);
  pm.addNestedPass<func::FuncOp>(createLoomCUDADeviceBuffersPass());
  pm.addNestedPass<func::FuncOp>(createConvertParallelLoopToGpuPass());
  pm.addNestedPass<func::FuncOp>(createLoomCUDACheckHostCodePass());
}

void buildHostEmulationPipeline(OpPassManager &pm, const CUDAOptions &options) {
  buildMappedKernelsPipeline(pm, options);
  // The grid's loops run one iteration after another on this CPU; the
  // math the GPU takes from libdevice comes from libm.
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertMathToFuncs());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  buildHostToLLVMPipeline(pm, [](OpPassManager &pm) {
    pm.addPass(createUBToLLVMConversionPass());
  });
}

void buildLinalgToLLVMPipeline(OpPassManager &pm, const CUDAOptions &options) {
  buildBuffersAndLaunchesPipeline(pm, options);
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createLoomCUDAMergeKernelModulesPass());
  // Allocations, copies and launches as asynchronous ops chained by tokens:
  // the form gpu-to-llvm lowers (to the runtime's stream; loom/abi/gpu.h).
  pm.addNestedPass<func::FuncOp>(createGpuAsyncRegionPass());

  // Device and host code to the LLVM dialect.
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  SmallVector<StringRef> chips;
  StringRef(options.chips).split(chips, ',', -1, /*KeepEmpty=*/false);
  for (StringRef chip : chips) {
    GpuNVVMAttachTargetOptions nvvm;
    nvvm.chip = chip.trim().str();
    // PTX 8.0 is the first that knows sm_90a; CUDA 12 and later assemble
    // it.
    nvvm.features = "+ptx80";
    nvvm.optLevel = 3;
    pm.addPass(createGpuNVVMAttachTarget(nvvm));
  }
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps());
  pm.addPass(createConvertNVVMToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  buildHostToLLVMPipeline(pm, [](OpPassManager &pm) {
    GpuToLLVMConversionPassOptions launches;
    launches.hostBarePtrCallConv = true;
    pm.addPass(createGpuToLLVMConversionPass(launches));
  });
  // PTX to a cubin with the toolkit's assembler.
  GpuModuleToBinaryPassOptions binary;
  binary.toolkitPath = options.toolkit;
  binary.compilationTarget = "bin";
  pm.addPass(createGpuModuleToBinaryPass(binary));
  LoomCUDAFatBinaryPassOptions fat;
  fat.toolkit = options.toolkit;
  pm.addPass(createLoomCUDAFatBinaryPass(fat));
}

namespace {

/// The CUDA target's command-line options.
llvm::cl::OptionCategory &cudaTargetCategory() {
  static llvm::cl::OptionCategory category("CUDA target options");
  return category;
}

struct CUDATargetFlags {
  llvm::cl::opt<std::string> chips{
      "cuda-chip", llvm::cl::init(CUDAOptions().chips),
      llvm::cl::cat(cudaTargetCategory()),
      llvm::cl::desc("GPU architectures of the kernels, comma-separated "
                     "(sm_90a: H100/H200; sm_80: A100); several: one fat "
                     "binary with a cubin for each")};
  llvm::cl::opt<std::string> toolkit{
      "cuda-toolkit", llvm::cl::init(CUDAOptions().toolkit),
      llvm::cl::cat(cudaTargetCategory()),
      llvm::cl::desc("CUDA toolkit whose ptxas assembles the kernels")};
  llvm::cl::opt<bool> emulateOnHost{
      "cuda-emulate-on-host", llvm::cl::init(false),
      llvm::cl::cat(cudaTargetCategory()),
      llvm::cl::desc("Testing without a GPU: the kernels as mapped to blocks "
                     "and threads, run on this CPU one iteration after "
                     "another (a CPU engine)")};
  llvm::cl::opt<int64_t> blockSize{
      "cuda-block-size", llvm::cl::init(CUDAOptions().blockSize),
      llvm::cl::cat(cudaTargetCategory()),
      llvm::cl::desc("Threads per block of the generated kernels")};
};

CUDATargetFlags *commandLineFlags = nullptr;

/// Makes the pipeline's dialects and interfaces known to `context`, once
/// per context (compiles of several ranks may run on several threads).
void prepareContext(MLIRContext *context) {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  DialectRegistry registry;
  registerCUDADialects(registry);
  context->appendDialectRegistry(registry);
  context->loadDialect<gpu::GPUDialect, NVVM::NVVMDialect>();
}

/// The CPU that the host code is compiled for: any machine of this
/// architecture, since the one holding the GPU is not this one.
constexpr llvm::StringLiteral kHostCPU = "x86-64";

class CUDATarget final : public Target {
public:
  explicit CUDATarget(const CUDAOptions &options) : options(options) {}

  llvm::StringRef getName() const override { return "cuda"; }

  LogicalResult specializeForRank(ModuleOp module,
                                  int64_t rank) const override {
    return module.emitError("the CUDA target does not compile partitioned "
                            "programs yet (rank ")
           << rank << "; NCCL collectives are not done, docs/cuda.md)";
  }

  llvm::ArrayRef<TargetStage> getStages() const override {
    static const TargetStage stages[] = {
        {"linalg", "linalg on tensors"},
        {"gpu", "buffers in device memory, kernels as gpu.launch"},
        {"llvm-dialect", "the LLVM dialect, kernels as a gpu.binary (cubin)"},
    };
    return stages;
  }

  LogicalResult emitStage(ModuleOp module, llvm::StringRef stage,
                          const loom::CompileOptions &common,
                          llvm::raw_ostream &os) const override {
    SmallVector<ElementsAttr> weights;
    if (failed(lower(module, stage, common, weights)))
      return failure();
    module.print(os);
    os << "\n";
    return success();
  }

  LogicalResult compileRank(ModuleOp module, const loom::CompileOptions &common,
                            EngineRank &rank,
                            EngineDescription &engine) const override {
    SmallVector<ElementsAttr> weights;
    if (failed(lower(module, "llvm-dialect", common, weights)))
      return failure();
    llvm::LLVMContext context;
    std::unique_ptr<llvm::Module> llvmModule =
        cpu::translateToLLVMIR(module, context);
    if (!llvmModule)
      return failure();
    llvm::SmallVector<char> object;
    if (std::string error =
            cpu::emitObject(*llvmModule, common.optLevel, object, kHostCPU, "");
        !error.empty())
      return module.emitError(error);
    llvm::SmallVector<char> shared;
    if (std::string error = cpu::linkSharedObject(object, shared);
        !error.empty())
      return module.emitError(error);
    // The runtime checks that the driver loads and a device is there
    // before it accepts the engine, and uploads the weights to the device.
    if (!options.emulateOnHost && !llvm::is_contained(engine.libraries, "cuda"))
      engine.libraries.push_back("cuda");
    rank.code.assign(shared.begin(), shared.end());
    rank.entry = cpu::kEntrySymbol;
    for (ElementsAttr weight : weights)
      appendWeight(rank, cpu::weightBytes(weight));
    return success();
  }

  void describeDevice(EngineDescription &engine) const override {
    // Host code for any machine of this architecture: no CPU features.
    describeHost(engine);
    engine.cpuFeatures.clear();
  }

private:
  /// Lowers `module` (after the graph pipeline) to `stage`.
  LogicalResult lower(ModuleOp module, llvm::StringRef stage,
                      const loom::CompileOptions &common,
                      SmallVectorImpl<ElementsAttr> &weights) const {
    prepareContext(module.getContext());
    if (common.kernelTimers || common.runtimeChecks)
      return module.emitError("the CUDA target has no kernel timers or "
                              "run-time checks yet");
    PassManager toLinalg(module.getContext());
    toLinalg.addPass(createConvertLoomToLinalgPass());
    toLinalg.addPass(createCanonicalizerPass());
    if (failed(toLinalg.run(module)))
      return failure();
    if (stage == "linalg")
      return success();
    if (failed(cpu::prepareEntry(module)))
      return failure();
    auto entry = module.lookupSymbol<func::FuncOp>(cpu::kMainSymbol);
    for (Type type : entry.getArgumentTypes())
      if (!cast<ShapedType>(type).hasStaticShape())
        return entry.emitError("the CUDA target does not take symbolic input "
                               "shapes yet, got ")
               << type;
    for (Type type : entry.getResultTypes())
      if (!cast<ShapedType>(type).hasStaticShape())
        return entry.emitError("the CUDA target does not take symbolic output "
                               "shapes yet, got ")
               << type;
    // The parameters that are inputs now; weights come after them.
    for (unsigned i = 0, e = entry.getNumArguments(); i < e; ++i)
      entry.setArgAttr(i, kInputAttr, UnitAttr::get(module.getContext()));
    if (failed(cpu::externalizeWeights(module, common.externalWeightMinBytes,
                                       weights)))
      return failure();
    PassManager pm(module.getContext());
    if (options.emulateOnHost)
      buildHostEmulationPipeline(pm, options);
    else if (stage == "gpu")
      buildBuffersAndLaunchesPipeline(pm, options);
    else
      buildLinalgToLLVMPipeline(pm, options);
    return pm.run(module);
  }

  CUDAOptions options;
};

} // namespace

std::unique_ptr<Target> createCUDATarget(const CUDAOptions &options) {
  return std::make_unique<CUDATarget>(options);
}

void registerCUDATarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    commandLineFlags = new CUDATargetFlags();
    registerTarget(
        {"cuda",
         "NVIDIA GPUs: generated kernels in a cubin (NVVM, ptxas), launched "
         "through the runtime's CUDA driver layer",
         []() -> std::unique_ptr<Target> {
           CUDAOptions options;
           if (commandLineFlags) {
             options.chips = commandLineFlags->chips;
             options.toolkit = commandLineFlags->toolkit;
             options.blockSize = commandLineFlags->blockSize;
             options.emulateOnHost = commandLineFlags->emulateOnHost;
           }
           SmallVector<StringRef> chips;
           StringRef(options.chips).split(chips, ',', -1, false);
           for (StringRef chip : chips) {
             StringRef digits = chip.trim();
             if (!digits.consume_front("sm_") || digits.empty() ||
                 !llvm::isDigit(digits.front())) {
               llvm::errs() << "error: --cuda-chip: '" << chip.trim()
                            << "' is not a GPU architecture (sm_80, "
                               "sm_90a, ...)\n";
               return nullptr;
             }
           }
           if (chips.empty()) {
             llvm::errs() << "error: --cuda-chip names no architecture\n";
             return nullptr;
           }
           if (options.blockSize < 1 || options.blockSize > 1024) {
             llvm::errs() << "error: --cuda-block-size must be 1 to 1024\n";
             return nullptr;
           }
           llvm::SmallString<128> ptxas(options.toolkit);
           llvm::sys::path::append(ptxas, "bin", "ptxas");
           if (!options.emulateOnHost && !llvm::sys::fs::exists(ptxas)) {
             llvm::errs() << "error: no ptxas in the CUDA toolkit '"
                          << options.toolkit
                          << "' (--cuda-toolkit names another)\n";
             return nullptr;
           }
           return createCUDATarget(options);
         },
         &cudaTargetCategory()});
  });
}

void registerCUDAPipelines() {
  PassPipelineRegistration<>(
      "loom-cuda-lower-to-llvm",
      "The CUDA target's pipeline from linalg on tensors to the LLVM "
      "dialect with the kernels as a cubin (sm_90a)",
      [](OpPassManager &pm) { buildLinalgToLLVMPipeline(pm, {}); });
  PassPipelineRegistration<>(
      "loom-cuda-buffers-and-launches",
      "The CUDA target's pipeline from linalg on tensors to buffers in "
      "device memory and kernels as gpu.launch",
      [](OpPassManager &pm) { buildBuffersAndLaunchesPipeline(pm, {}); });
}

} // namespace loom::cuda
