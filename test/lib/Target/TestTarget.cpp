//===- TestTarget.cpp - A second target, to test the registry -------------===//
//
// The smallest target that goes through every seam a real one uses: its own
// kernel-formation policy (none: every op stays its own kernel), its own
// command-line option, a stage loomc can print, code in the engine's rank
// sections, and a device record the runtime checks (and refuses: nothing
// runs this "code"). loomc registers it in builds with LOOM_INCLUDE_TESTS.
//
//===----------------------------------------------------------------------===//

#include "TestTarget.h"

#include "loom/Engine/EngineWriter.h"
#include "loom/Target/Target.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "mlir/IR/Operation.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <mutex>

using namespace mlir;

namespace loom::test {
namespace {

llvm::cl::OptionCategory &testTargetCategory() {
  static llvm::cl::OptionCategory category("Test target options");
  return category;
}

struct TestTargetFlags {
  llvm::cl::opt<std::string> banner{
      "test-target-banner", llvm::cl::init("loom test target"),
      llvm::cl::cat(testTargetCategory()),
      llvm::cl::desc("The first line of the test target's listing")};
};

TestTargetFlags *flags = nullptr;

/// Lists a program one op per line: its name and result types.
void listOps(ModuleOp module, llvm::StringRef banner, llvm::raw_ostream &os) {
  os << "// " << banner << "\n";
  module.walk([&](Operation *op) {
    if (op == module.getOperation())
      return;
    os << op->getName() << " :";
    for (Type type : op->getResultTypes())
      os << " " << type;
    os << "\n";
  });
}

class TestTarget final : public Target {
public:
  explicit TestTarget(std::string banner) : banner(std::move(banner)) {}

  llvm::StringRef getName() const override { return "test"; }

  void buildGraphPipeline(OpPassManager &pm,
                          const CompileOptions &options) const override {
    // This target's policy: no kernel formation.
    buildDefaultGraphPipeline(pm, options, /*formKernels=*/false);
  }

  LogicalResult specializeForRank(ModuleOp module,
                                  int64_t rank) const override {
    return module.emitError("the test target does not compile partitioned "
                            "programs (rank ")
           << rank << ")";
  }

  llvm::ArrayRef<TargetStage> getStages() const override {
    static const TargetStage stages[] = {
        {"test-listing", "one line per op: its name and result types"}};
    return stages;
  }

  LogicalResult emitStage(ModuleOp module, llvm::StringRef stage,
                          const CompileOptions &options,
                          llvm::raw_ostream &os) const override {
    listOps(module, banner, os);
    return success();
  }

  LogicalResult compileRank(ModuleOp module, const CompileOptions &options,
                            EngineRank &rank,
                            EngineDescription &engine) const override {
    std::string code;
    llvm::raw_string_ostream os(code);
    listOps(module, banner, os);
    rank.code.assign(code.begin(), code.end());
    rank.entry = "loom_test_entry";
    return success();
  }

  void describeDevice(EngineDescription &engine) const override {
    engine.arch = "loom-test";
    engine.cpuFeatures.clear();
  }

private:
  std::string banner;
};

} // namespace

void registerTestTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    flags = new TestTargetFlags();
    registerTarget({"test",
                    "a listing of the program's ops (tests the target "
                    "registry; its engines do not run)",
                    []() -> std::unique_ptr<Target> {
                      return std::make_unique<TestTarget>(flags->banner);
                    },
                    &testTargetCategory()});
  });
}

} // namespace loom::test
