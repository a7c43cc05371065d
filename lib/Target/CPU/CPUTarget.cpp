//===- CPUTarget.cpp - Compiling loom programs to host object code --------===//

#include "loom/Target/CPU/CPUTarget.h"

#include "BFloat16Vectors.h"

#include "loom/Conversion/Passes.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"
#include "loom/Pipelines/Pipelines.h"
#include "loom/Target/CPU/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

#include <chrono>

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

using namespace mlir;

namespace loom::cpu {

void buildLoomToLinalgPipeline(OpPassManager &pm, bool byteProducts) {
  // A module pass: run-time checks declare the runtime function they call
  // and their site descriptions as module symbols.
  ConvertLoomToLinalgPassOptions toLinalg;
  toLinalg.byteProducts = byteProducts;
  pm.addPass(createConvertLoomToLinalgPass(toLinalg));
  pm.addPass(createCanonicalizerPass());
}

void buildLinalgToLLVMPipeline(OpPassManager &pm,
                               const CompileOptions &options) {
  // Merge producer-consumer chains of elementwise generics into one loop
  // nest each before buffers exist.
  pm.addPass(createLoomCPUFuseElementwisePass());
  pm.addPass(createCanonicalizerPass());
  // Ops whose only run-time size is the batch run one element at a time,
  // so that the convolution and product paths below see static sizes.
  pm.addNestedPass<func::FuncOp>(createLoomCPUBatchLoopsPass());
  // Convolutions oneDNN computes faster are marked before im2col takes the
  // others.
  if (options.libraryConvolutionFlops >= 0) {
    LoomCPUSelectLibraryConvolutionsPassOptions library;
    library.minFlops = options.libraryConvolutionFlops;
    pm.addNestedPass<func::FuncOp>(
        createLoomCPUSelectLibraryConvolutionsPass(library));
  }
  pm.addNestedPass<func::FuncOp>(createLoomCPUIm2ColPass());
  pm.addNestedPass<func::FuncOp>(createLoomCPUContractionOrderPass());
  pm.addPass(createLoomCPUBufferizePass());
  // Loops of independent iterations (attention's items and heads) as
  // parallel loops, which become OpenMP loops like the chunk loops below;
  // serial loops where contractions are never to be parallel (their work
  // is attention's products).
  if (options.parallelFlops > 0)
    pm.addPass(createForallToParallelLoopPass());
  else
    pm.addPass(createForallToForLoopPass());
  // Results whose sizes the data decides: records of a copy the runtime
  // allocates, static like every out-parameter.
  pm.addPass(createLoomCPURunTimeSizedResultsPass());
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.hoistStaticAllocs = true;
  outParams.modifyPublicFunctions = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  // Inputs with symbolic dimensions: a data pointer, their sizes in one
  // trailing array.
  pm.addPass(createLoomCPURunTimeSizedArgumentsPass());
  // One arena per function for the temporaries, before deallocation is
  // inserted (the arena is the only buffer left to free).
  LoomCPUMemoryPlanPassOptions plan;
  plan.report = options.reportKernels;
  pm.addNestedPass<func::FuncOp>(
      createLoomCPUMemoryPlanPass(plan, options.onMemoryPlan));
  // Before library calls replace convolutions: the timers count the op's
  // operations, and whatever it becomes runs between them.
  if (options.kernelTimers)
    pm.addPass(createLoomCPUKernelTimersPass());
  if (options.libraryConvolutionFlops >= 0) {
    LoomCPULibraryConvolutionsPassOptions calls;
    calls.report = options.reportKernels;
    pm.addPass(createLoomCPULibraryConvolutionsPass(calls));
  }
  bufferization::buildBufferDeallocationPipeline(pm);
  // Buffers of sizes known only at run time may need the deallocation
  // helper function, whose dynamic memref arguments the bare-pointer
  // convention cannot take: it is inlined, then dropped.
  pm.addPass(createInlinerPass());
  pm.addPass(createSymbolDCEPass());
  // Matrix products and convolutions (as im2col) become register tiles of
  // vector code; everything else becomes loops.
  // Quantized products of bytes and bf16 products summed in f32 on the
  // host's dot-product instructions (vpdpbusd, vdpbf16ps).
  LoomCPUVectorizeDotProductsPassOptions dotProducts;
  dotProducts.parallelFlops = options.parallelFlops;
  dotProducts.bytes = hostMultipliesBytes();
  dotProducts.bfloat16 = options.bfloat16Products && hostMultipliesBFloat16();
  dotProducts.amxBFloat16 =
      dotProducts.bfloat16 && options.amx && hostHasAMX("amx-bf16");
  dotProducts.amxBytes =
      dotProducts.bytes && options.amx && hostHasAMX("amx-int8");
  if (dotProducts.bytes || dotProducts.bfloat16)
    pm.addNestedPass<func::FuncOp>(
        createLoomCPUVectorizeDotProductsPass(dotProducts));
  LoomCPUVectorizeContractionsPassOptions contractions;
  contractions.parallelFlops = options.parallelFlops;
  pm.addNestedPass<func::FuncOp>(
      createLoomCPUVectorizeContractionsPass(contractions));
  // Depthwise convolutions as vector row pieces. They move more bytes per
  // operation than contractions: parallel from a quarter of the work.
  LoomCPUVectorizeDepthwisePassOptions depthwise;
  depthwise.parallelFlops = options.parallelFlops / 4;
  pm.addNestedPass<func::FuncOp>(
      createLoomCPUVectorizeDepthwisePass(depthwise));
  pm.addNestedPass<func::FuncOp>(createLoomCPUVectorizeCopiesPass());
  // exp, erf, tanh as arithmetic that LLVM vectorizes with the loops.
  pm.addNestedPass<func::FuncOp>(createLoomCPUApproximateMathPass());
  // Large elementwise and reduction ops: a parallel loop over chunks of
  // their outermost parallel loop, each chunk the same op on views.
  LoomCPUParallelizeLoopsPassOptions loops;
  loops.parallelElements = options.parallelElements;
  pm.addNestedPass<func::FuncOp>(createLoomCPUParallelizeLoopsPass(loops));
  // What is left of linalg (elementwise chains, normalizations, softmax,
  // reductions) as vector pieces along the innermost loop, including the
  // chunks just formed.
  pm.addNestedPass<func::FuncOp>(createLoomCPUVectorizeElementwisePass());
  // Checks on the buffers as planned: scatter/gather element accesses,
  // views into the arena, and the shapes every linalg op assumes (the
  // loops it lowers to are then in bounds by construction).
  if (options.runtimeChecks) {
    pm.addPass(createGenerateRuntimeVerificationPass());
    // With static shapes most checks compare constants: folded away here,
    // they cost neither compile time nor run time (densenet121 compiles in
    // under a minute instead of minutes and gigabytes).
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
    pm.addPass(createLoomCPUReportFailedChecksPass());
  }
  pm.addPass(createConvertLinalgToLoopsPass());
  pm.addPass(createConvertVectorToSCFPass(
      VectorTransferToSCFOptions().enableFullUnroll()));
  // Integer powers have no LLVM intrinsic: they become small functions.
  pm.addPass(createConvertMathToFuncs());
  pm.addPass(createLowerAffinePass());
  // The contractions' parallel tile loops and the chunk loops: OpenMP
  // work-sharing loops, run by the OpenMP runtime's thread pool (as many
  // threads as omp_set_num_threads asked for on the calling thread).
  pm.addPass(createConvertSCFToOpenMPPass());
  pm.addNestedPass<func::FuncOp>(createLoomCPUExpandRunTimeShapesPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  if (!hostConvertsBFloat16())
    pm.addNestedPass<func::FuncOp>(createLoomCPUExpandBFloat16Pass());
  pm.addPass(createConvertVectorToLLVMPass());
  // Before scf-to-cf: each parallel loop's body is a memref.alloca_scope,
  // whose region must stay a single block until it becomes LLVM's stack
  // save and restore.
  // Allocations call the runtime's caching allocator (loom/abi/memory.h):
  // malloc would map and zero-fill a fresh arena on every call.
  FinalizeMemRefToLLVMConversionPassOptions memrefOptions;
  memrefOptions.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefOptions));
  // Without rollback the conversion keeps no record of the ops each
  // block split moves: with thousands of branches in one function the
  // records grew quadratically (densenet121: 7 s and 2 GB in this pass
  // alone, 1.7 s and 0.3 GB without).
  SCFToControlFlowPassOptions scfToCF;
  scfToCF.allowPatternRollback = false;
  pm.addPass(createSCFToControlFlowPass(scfToCF));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  // Runtime op verification computes its bounds with the index dialect.
  pm.addPass(createConvertIndexToLLVMPass());
  ConvertFuncToLLVMPassOptions funcOptions;
  funcOptions.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(funcOptions));
  pm.addPass(createConvertControlFlowToLLVMPass());
  // Vectorization pads transfers with ub.poison.
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void registerCPUPipelines() {
  PassPipelineRegistration<>(
      "loom-cpu-lower-to-llvm",
      "The CPU target's pipeline from linalg on tensors to the LLVM dialect "
      "(bufferization, loops, bare-pointer calling convention)",
      [](OpPassManager &pm) { buildLinalgToLLVMPipeline(pm); });
}

LogicalResult prepareEntry(ModuleOp module) {
  func::FuncOp entry = module.lookupSymbol<func::FuncOp>("main");
  if (!entry) {
    auto funcs = module.getOps<func::FuncOp>();
    if (!llvm::hasSingleElement(funcs))
      return module.emitError(
          "no @main function (or more than one function) to compile");
    entry = *funcs.begin();
  }
  // Inputs may have symbolic dimensions (their sizes arrive in a trailing
  // array, loom-cpu-run-time-sized-arguments); outputs may have sizes the
  // data decides (they are returned as records,
  // loom-cpu-run-time-sized-results).
  for (Type type : entry.getArgumentTypes()) {
    auto shaped = dyn_cast<RankedTensorType>(type);
    if (!shaped)
      return entry.emitError("the entry's inputs must be ranked tensors, got ")
             << type;
  }
  for (Type type : entry.getResultTypes())
    if (!isa<RankedTensorType>(type))
      return entry.emitError("the entry's outputs must be ranked tensors, "
                             "got ")
             << type;
  for (Type type : llvm::concat<const Type>(entry.getArgumentTypes(),
                                            entry.getResultTypes())) {
    auto shaped = cast<ShapedType>(type);
    if (!shaped.hasStaticShape())
      continue;
    // The bare-pointer convention does not take memrefs with an empty
    // dimension after the first (upstream leaves such functions
    // unconverted).
    if (shaped.getRank() > 1 &&
        llvm::is_contained(shaped.getShape().drop_front(), 0))
      return entry.emitError("the CPU target does not support empty tensors "
                             "at the entry yet, got ")
             << type;
  }
  SymbolTable(module).setSymbolName(entry, kMainSymbol);
  entry.setPublic();
  return success();
}

namespace {

/// Tells LLVM what the runtime's allocation functions (loom/abi/memory.h)
/// are, as it knows malloc and free by name: a fresh block aliases nothing
/// (without this, loads from temporaries are not hoisted past stores to
/// other buffers, and the code is measurably slower), and an allocation
/// nobody uses may be dropped with its free.
void describeAllocator(llvm::Module &module) {
  llvm::LLVMContext &context = module.getContext();
  auto family = llvm::Attribute::get(context, "alloc-family", "loom");
  auto describeAlloc = [&](llvm::Function *fn, unsigned sizeArg) {
    fn->addRetAttr(llvm::Attribute::NoAlias);
    fn->addFnAttr(llvm::Attribute::NoUnwind);
    fn->addFnAttr(llvm::Attribute::WillReturn);
    fn->addFnAttr(
        llvm::Attribute::getWithAllocSizeArgs(context, sizeArg, std::nullopt));
    fn->addFnAttr(llvm::Attribute::get(
        context, llvm::Attribute::AllocKind,
        static_cast<uint64_t>(llvm::AllocFnKind::Alloc |
                              llvm::AllocFnKind::Uninitialized)));
    fn->addFnAttr(family);
    fn->setMemoryEffects(llvm::MemoryEffects::inaccessibleMemOnly());
  };
  if (llvm::Function *alloc = module.getFunction("_mlir_memref_to_llvm_alloc"))
    describeAlloc(alloc, 0);
  if (llvm::Function *aligned =
          module.getFunction("_mlir_memref_to_llvm_aligned_alloc")) {
    describeAlloc(aligned, 1);
    aligned->addParamAttr(0, llvm::Attribute::AllocAlign);
  }
  if (llvm::Function *free = module.getFunction("_mlir_memref_to_llvm_free")) {
    free->addFnAttr(llvm::Attribute::NoUnwind);
    free->addFnAttr(llvm::Attribute::WillReturn);
    free->addFnAttr(
        llvm::Attribute::get(context, llvm::Attribute::AllocKind,
                             static_cast<uint64_t>(llvm::AllocFnKind::Free)));
    free->addFnAttr(family);
    free->addParamAttr(0, llvm::Attribute::AllocatedPointer);
    free->addParamAttr(0, llvm::Attribute::getWithCaptureInfo(
                              context, llvm::CaptureInfo::none()));
    free->setMemoryEffects(llvm::MemoryEffects::argMemOnly() |
                           llvm::MemoryEffects::inaccessibleMemOnly());
  }
}

/// The bf16 bits (in an i16) of the f32 `x`: rounded to nearest even, a NaN
/// kept quiet.
llvm::Value *roundToBFloat16Bits(llvm::IRBuilder<> &b, llvm::Value *x) {
  llvm::Value *bits = b.CreateBitCast(x, b.getInt32Ty());
  llvm::Value *odd = b.CreateAnd(b.CreateLShr(bits, 16), 1);
  llvm::Value *rounded =
      b.CreateLShr(b.CreateAdd(bits, b.CreateAdd(odd, b.getInt32(0x7fff))), 16);
  llvm::Value *quietNaN = b.CreateOr(b.CreateLShr(bits, 16), 0x40);
  llvm::Value *isNaN = b.CreateFCmpUNO(x, x);
  return b.CreateTrunc(b.CreateSelect(isNaN, quietNaN, rounded),
                       b.getInt16Ty());
}

/// Defines the compiler-runtime function `name` (`from` to bf16) in the
/// module, hidden, its body written by `body` from the argument to the bf16
/// bits. Referenced only by the code generator, it is kept through
/// optimization.
void defineBFloat16Conversion(
    llvm::Module &module, llvm::StringRef name, llvm::Type *from,
    llvm::function_ref<llvm::Value *(llvm::IRBuilder<> &, llvm::Value *)>
        body) {
  llvm::LLVMContext &context = module.getContext();
  auto *type = llvm::FunctionType::get(llvm::Type::getBFloatTy(context), {from},
                                       /*isVarArg=*/false);
  auto *fn = llvm::Function::Create(type, llvm::Function::ExternalLinkage, name,
                                    module);
  fn->setVisibility(llvm::GlobalValue::HiddenVisibility);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", fn));
  b.CreateRet(b.CreateBitCast(body(b, fn->getArg(0)),
                              llvm::Type::getBFloatTy(context)));
  llvm::appendToCompilerUsed(module, {fn});
}

/// Defines `__truncsfbf2` (f32 to bf16). Without a bf16 conversion
/// instruction, LLVM's X86 backend legalizes bf16 vector operations -
/// broadcasts, selects - through f32 and calls this compiler-runtime
/// function for each element; Debian 12's libgcc does not define it, so an
/// engine that relied on the process to provide it would not load.
void defineBFloat16Truncation(llvm::Module &module) {
  defineBFloat16Conversion(module, "__truncsfbf2",
                           llvm::Type::getFloatTy(module.getContext()),
                           roundToBFloat16Bits);
}

/// Whether `module` truncates a double (or a vector of them) to bf16: the
/// X86 backend has no instruction for it and calls `__truncdfbf2`, which
/// neither Debian 12's libgcc nor the runtime defines.
bool truncatesDoubleToBFloat16(llvm::Module &module) {
  for (llvm::Function &fn : module)
    for (llvm::Instruction &inst : llvm::instructions(fn))
      if (auto *trunc = llvm::dyn_cast<llvm::FPTruncInst>(&inst))
        if (trunc->getSrcTy()->getScalarType()->isDoubleTy() &&
            trunc->getDestTy()->getScalarType()->isBFloatTy())
          return true;
  return false;
}

/// Defines `__truncdfbf2` (f64 to bf16, correctly rounded to nearest even).
/// Rounding to f32 first and then to bf16 would round twice (a double just
/// above a bf16 tie would round to the tie, then to even); rounding to f32
/// *to odd* first does not: f32 keeps 16 bits more than bf16, and a sticky
/// last bit set whenever the first step was inexact keeps the second
/// step's ties honest. Round to odd = truncate toward zero (one f32 step
/// toward zero when round-to-nearest went away from it), then set the last
/// bit if inexact. Overflow truncates to FLT_MAX (odd), which the second
/// step takes to infinity, as it should; NaN stays a quiet NaN.
void defineDoubleToBFloat16Truncation(llvm::Module &module) {
  defineBFloat16Conversion(
      module, "__truncdfbf2", llvm::Type::getDoubleTy(module.getContext()),
      [](llvm::IRBuilder<> &b, llvm::Value *x) {
        llvm::Type *f32 = b.getFloatTy();
        llvm::Type *f64 = b.getDoubleTy();
        llvm::Value *nearest = b.CreateFPTrunc(x, f32);
        llvm::Value *nearestBits = b.CreateBitCast(nearest, b.getInt32Ty());
        // |nearest| > |x|: one step toward zero on the magnitude's bits.
        llvm::Value *awayFromZero =
            b.CreateFCmpOGT(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs,
                                                   b.CreateFPExt(nearest, f64)),
                            b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x));
        llvm::Value *truncatedBits = b.CreateSelect(
            awayFromZero, b.CreateSub(nearestBits, b.getInt32(1)), nearestBits);
        llvm::Value *truncated = b.CreateBitCast(truncatedBits, f32);
        llvm::Value *inexact =
            b.CreateFCmpONE(b.CreateFPExt(truncated, f64), x);
        llvm::Value *toOdd = b.CreateSelect(
            inexact, b.CreateOr(truncatedBits, b.getInt32(1)), truncatedBits);
        // A NaN goes through `nearest`, which is one.
        llvm::Value *isNaN = b.CreateFCmpUNO(x, x);
        return roundToBFloat16Bits(
            b, b.CreateSelect(isNaN, nearest, b.CreateBitCast(toOdd, f32)));
      });
}

/// void loom_entry(void **buffers) { loom_main(buffers[0], buffers[1], ...); }
LogicalResult addPackedEntry(llvm::Module &module) {
  llvm::Function *main = module.getFunction(kMainSymbol);
  if (!main)
    return failure();
  llvm::LLVMContext &ctx = module.getContext();
  auto *ptr = llvm::PointerType::getUnqual(ctx);
  auto *entry = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr}, false),
      llvm::Function::ExternalLinkage, kEntrySymbol, module);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", entry));
  llvm::SmallVector<llvm::Value *> args;
  for (unsigned i = 0; i < main->arg_size(); ++i)
    args.push_back(
        b.CreateLoad(ptr, b.CreateConstGEP1_64(ptr, entry->getArg(0), i)));
  b.CreateCall(main, args);
  b.CreateRetVoid();
  return success();
}

std::unique_ptr<llvm::TargetMachine> hostTargetMachine(unsigned optLevel,
                                                       llvm::StringRef cpu,
                                                       llvm::StringRef features,
                                                       std::string &error) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::Triple triple(llvm::sys::getProcessTriple());
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return nullptr;
  llvm::CodeGenOptLevel level = optLevel == 0   ? llvm::CodeGenOptLevel::None
                                : optLevel == 1 ? llvm::CodeGenOptLevel::Less
                                : optLevel == 2
                                    ? llvm::CodeGenOptLevel::Default
                                    : llvm::CodeGenOptLevel::Aggressive;
  return std::unique_ptr<llvm::TargetMachine>(
      target->createTargetMachine(triple, cpu, features, llvm::TargetOptions(),
                                  llvm::Reloc::PIC_, std::nullopt, level));
}

using Clock = std::chrono::steady_clock;

/// Reports the time since `start` as `phase` and restarts the clock.
void phaseDone(const CompileOptions &options, llvm::StringRef phase,
               Clock::time_point &start) {
  Clock::time_point now = Clock::now();
  if (options.onPhase)
    options.onPhase(
        phase, std::chrono::duration<double, std::milli>(now - start).count());
  start = now;
}

} // namespace

std::unique_ptr<llvm::Module> translateToLLVMIR(ModuleOp module,
                                                llvm::LLVMContext &context) {
  registerBuiltinDialectTranslation(*module.getContext());
  registerLLVMDialectTranslation(*module.getContext());
  registerOpenMPDialectTranslation(*module.getContext());
  // Argument attributes of Loom's and bufferization's (loom.weight,
  // bufferization.writable, onnx.name) mean nothing to LLVM; translation
  // would warn about each one with the whole function printed into the
  // diagnostic, minutes for an engine with hundreds of weights.
  module.walk([](LLVM::LLVMFuncOp func) {
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
      DictionaryAttr attrs = func.getArgAttrDict(i);
      if (!attrs)
        continue;
      SmallVector<NamedAttribute> kept;
      for (NamedAttribute attr : attrs)
        if (attr.getName().strref().starts_with("llvm."))
          kept.push_back(attr);
      if (kept.size() != attrs.size())
        func.setArgAttrs(i, kept);
    }
  });
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, context);
  if (!llvmModule)
    return nullptr;
  describeAllocator(*llvmModule);
  moveBFloat16VectorsToIntegers(*llvmModule);
  if (!hostConvertsBFloat16() && !llvmModule->getFunction("__truncsfbf2"))
    defineBFloat16Truncation(*llvmModule);
  if (!llvmModule->getFunction("__truncdfbf2") &&
      truncatesDoubleToBFloat16(*llvmModule))
    defineDoubleToBFloat16Truncation(*llvmModule);
  if (failed(addPackedEntry(*llvmModule))) {
    module.emitError("the module has no @") << kMainSymbol << " function";
    return nullptr;
  }
  return llvmModule;
}

std::string hostCPUName() { return llvm::sys::getHostCPUName().str(); }

std::string hostCPUFeatures() {
  llvm::SubtargetFeatures features;
  for (const auto &feature : llvm::sys::getHostCPUFeatures())
    features.AddFeature(feature.getKey(), feature.getValue());
  return features.getString();
}

bool hostConvertsBFloat16() {
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  return features.lookup("avx512bf16") || features.lookup("avxneconvert");
}

bool hostMultipliesBytes() {
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  return features.lookup("avx512f") && features.lookup("avx512vnni");
}

bool hostMultipliesBFloat16() {
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  return features.lookup("avx512f") && features.lookup("avx512bf16");
}

bool hostHasAMX(StringRef kind) {
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  if (!features.lookup("amx-tile") || !features.lookup(kind))
    return false;
#if defined(__linux__) && defined(__x86_64__)
  // Linux hands out the tiles' 8 KB of state only to processes that ask
  // (arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)); a kernel or
  // container that refuses means no AMX code for this host.
  constexpr long kRequestPermission = 0x1023, kTileData = 18;
  return syscall(SYS_arch_prctl, kRequestPermission, kTileData) == 0;
#else
  return false;
#endif
}

bool usesBFloat16Products(const CPUOptions &options) {
  return options.bfloat16Products && options.packConstantWeights &&
         hostMultipliesBFloat16();
}

bool usesByteProducts(const CPUOptions &options) {
  return options.byteProducts && options.packConstantWeights &&
         hostMultipliesBytes();
}

std::string emitObject(llvm::Module &module, unsigned optLevel,
                       llvm::SmallVectorImpl<char> &object) {
  return emitObject(module, optLevel, object, hostCPUName(), hostCPUFeatures());
}

std::string emitObject(llvm::Module &module, unsigned optLevel,
                       llvm::SmallVectorImpl<char> &object, llvm::StringRef cpu,
                       llvm::StringRef features) {
  std::string error;
  std::unique_ptr<llvm::TargetMachine> machine =
      hostTargetMachine(optLevel, cpu, features, error);
  if (!machine)
    return "no LLVM target for the host: " + error;
  module.setDataLayout(machine->createDataLayout());
  module.setTargetTriple(machine->getTargetTriple());
  auto optimize =
      makeOptimizingTransformer(optLevel, /*sizeLevel=*/0, machine.get());
  if (llvm::Error err = optimize(&module))
    return "LLVM optimization failed: " + llvm::toString(std::move(err));
  llvm::raw_svector_ostream os(object);
  llvm::legacy::PassManager codegen;
  if (machine->addPassesToEmitFile(codegen, os, nullptr,
                                   llvm::CodeGenFileType::ObjectFile))
    return "the host target cannot emit object files";
  codegen.run(module);
  return "";
}

LogicalResult lowerModule(ModuleOp module, Stage stopAfter,
                          const CompileOptions &options,
                          SmallVectorImpl<ElementsAttr> *weights) {
  Clock::time_point start = Clock::now();
  if (options.optimizeGraph) {
    PassManager graph(module.getContext());
    buildDefaultGraphPipeline(graph, options);
    if (failed(graph.run(module)))
      return failure();
    phaseDone(options, "optimize graph", start);
  }
  if (stopAfter == Stage::Loom)
    return success();
  PassManager toLinalg(module.getContext());
  buildLoomToLinalgPipeline(toLinalg, usesByteProducts(options));
  if (failed(toLinalg.run(module)))
    return failure();
  phaseDone(options, "lower to linalg", start);
  if (stopAfter == Stage::Linalg)
    return success();
  if (failed(prepareEntry(module)))
    return failure();
  // Convolutions become products, and constant weights are packed, before
  // the weights become parameters: a filter the product reads transposed,
  // or a packed tensor, is then the weight stored, computed here once.
  // (buildLinalgToLLVMPipeline runs the convolution passes again, for
  // programs that come to it directly; they find nothing left to do.)
  {
    PassManager weightLayouts(module.getContext());
    weightLayouts.addNestedPass<func::FuncOp>(createLoomCPUBatchLoopsPass());
    if (options.libraryConvolutionFlops >= 0) {
      LoomCPUSelectLibraryConvolutionsPassOptions library;
      library.minFlops = options.libraryConvolutionFlops;
      weightLayouts.addNestedPass<func::FuncOp>(
          createLoomCPUSelectLibraryConvolutionsPass(library));
    }
    weightLayouts.addNestedPass<func::FuncOp>(createLoomCPUIm2ColPass());
    // The dot products' weights first: their bf16 products are
    // contractions loom-cpu-pack-constant-weights would also take.
    LoomCPUPackDotProductWeightsPassOptions dotWeights;
    dotWeights.bytes = usesByteProducts(options);
    dotWeights.bfloat16 = usesBFloat16Products(options);
    dotWeights.amxBFloat16 =
        dotWeights.bfloat16 && options.amx && hostHasAMX("amx-bf16");
    dotWeights.amxBytes =
        dotWeights.bytes && options.amx && hostHasAMX("amx-int8");
    if (dotWeights.bytes || dotWeights.bfloat16)
      weightLayouts.addNestedPass<func::FuncOp>(
          createLoomCPUPackDotProductWeightsPass(dotWeights));
    if (options.packConstantWeights)
      weightLayouts.addNestedPass<func::FuncOp>(
          createLoomCPUPackConstantWeightsPass());
    if (failed(weightLayouts.run(module)))
      return failure();
  }
  if (weights && failed(externalizeWeights(
                     module, options.externalWeightMinBytes, *weights)))
    return failure();
  PassManager toLLVM(module.getContext());
  buildLinalgToLLVMPipeline(toLLVM, options);
  if (failed(toLLVM.run(module)))
    return failure();
  phaseDone(options, "bufferize and lower to LLVM dialect", start);
  return success();
}

std::string compileToObject(ModuleOp module, const CompileOptions &options,
                            llvm::SmallVectorImpl<char> &object,
                            SmallVectorImpl<ElementsAttr> *weights) {
  if (failed(lowerModule(module, Stage::LLVMDialect, options, weights)))
    return "lowering failed (see the diagnostics above)";
  Clock::time_point start = Clock::now();
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> llvmModule = translateToLLVMIR(module, context);
  if (!llvmModule)
    return "translation to LLVM IR failed";
  phaseDone(options, "translate to LLVM IR", start);
  std::string error = emitObject(*llvmModule, options.optLevel, object);
  phaseDone(options, "optimize and emit object code", start);
  return error;
}

} // namespace loom::cpu
