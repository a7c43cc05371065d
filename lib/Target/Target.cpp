//===- Target.cpp - The target registry and shared target stages ----------===//

#include "loom/Target/Target.h"

#include "loom/Dialect/Loom/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include <chrono>
#include <map>

#include <mutex>

using namespace mlir;

namespace loom {

Target::~Target() = default;

void buildDefaultGraphPipeline(OpPassManager &pm, const CompileOptions &options,
                               bool formKernels) {
  // Quantized contractions first, before constant folding evaluates the
  // dequantized weights into floats (see buildGraphOptimizationPipeline).
  pm.addNestedPass<func::FuncOp>(createLoomFoldQDQPass());
  // Static types first: the graph passes and kernel formation see them.
  // Shape arithmetic on constants is evaluated before, so shapes computed
  // in the graph (ONNX function bodies) become constants first.
  pm.addNestedPass<func::FuncOp>(createLoomFoldConstantsPass());
  pm.addNestedPass<func::FuncOp>(createLoomStaticShapesPass());
  GraphOptimizationOptions graph;
  graph.precision = options.precision;
  graph.formKernels = formKernels;
  graph.reportKernels = options.reportKernels;
  buildGraphOptimizationPipeline(pm, graph);
}

void Target::buildGraphPipeline(OpPassManager &pm,
                                const CompileOptions &options) const {
  buildDefaultGraphPipeline(pm, options);
}

LogicalResult runGraphPipeline(const Target &target, ModuleOp module,
                               const CompileOptions &options) {
  if (!options.optimizeGraph)
    return success();
  auto start = std::chrono::steady_clock::now();
  PassManager pm(module.getContext());
  target.buildGraphPipeline(pm, options);
  if (failed(pm.run(module)))
    return failure();
  if (options.onGraphOptimized)
    options.onGraphOptimized(module);
  if (options.onPhase)
    options.onPhase("optimize graph",
                    std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - start)
                        .count());
  return success();
}

namespace {

struct Registry {
  std::mutex mutex;
  // Ordered by name: help texts and messages list targets the same way on
  // every run.
  std::map<std::string, std::unique_ptr<TargetRegistration>> targets;
};

Registry &registry() {
  static Registry instance;
  return instance;
}

} // namespace

void registerTarget(TargetRegistration registration) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::string name = registration.name;
  r.targets.try_emplace(
      name, std::make_unique<TargetRegistration>(std::move(registration)));
}

const TargetRegistration *lookupTarget(llvm::StringRef name) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.targets.find(name.str());
  return it == r.targets.end() ? nullptr : it->second.get();
}

std::vector<const TargetRegistration *> registeredTargets() {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<const TargetRegistration *> all;
  for (const auto &[name, registration] : r.targets)
    all.push_back(registration.get());
  return all;
}

std::string registeredTargetNames() {
  std::string names;
  for (const TargetRegistration *target : registeredTargets())
    names += (names.empty() ? "" : ", ") + target->name;
  return names;
}

} // namespace loom
