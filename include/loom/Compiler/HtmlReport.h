//===- HtmlReport.h - loomc --report-html ------------------------*- C++
//-*-===//
//
// What a compilation decided, collected through CompileOptions' observers
// while it runs, and written as one self-contained HTML page: the phases'
// times, each rank's kernels (fusion groups with the ONNX nodes they came
// from, ops left unfused, collectives with their bytes) as a graph, and
// each memory plan as a timeline of buffers over the program's steps.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_COMPILER_HTMLREPORT_H
#define LOOM_COMPILER_HTMLREPORT_H

#include "loom/Target/Target.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace loom {

/// One step of a rank's program as the report draws it.
struct ReportKernel {
  /// "epilogue", "reduction", "elementwise" (loom.fusion kinds), "op" (a
  /// loom or tensor op left on its own) or "collective".
  std::string kind;
  /// The ops it computes ("matmul + add + gelu"), or the collective.
  std::string title;
  /// The ONNX nodes it came from, in program order.
  std::vector<std::string> nodes;
  /// Its result's type, as MLIR prints it.
  std::string resultType;
  /// The kernels whose results it reads (indices into the rank's list).
  std::vector<int> inputs;
  /// For collectives: the bytes each rank contributes (0 when unknown).
  int64_t bytes = 0;
};

struct ReportRank {
  int64_t onnxNodes = 0;
  std::vector<ReportKernel> kernels;
  std::vector<MemoryPlanRecord> memoryPlans;
};

class CompileReport {
public:
  CompileReport(std::string model, std::string target)
      : model(std::move(model)), target(std::move(target)) {}

  /// Installs the observers that fill this report into `options`.
  void observe(CompileOptions &options);

  void addPhase(llvm::StringRef name, double milliseconds) {
    phases.push_back({name.str(), milliseconds});
  }
  /// A rank's program after the graph pipeline: its kernels.
  void recordGraph(mlir::ModuleOp module);
  /// A memory plan of the rank recorded last.
  void recordMemoryPlan(const MemoryPlanRecord &plan);
  void setGrid(std::vector<int64_t> shape) { grid = std::move(shape); }

  /// Writes the page to `path`.
  llvm::Error write(llvm::StringRef path) const;

private:
  void writeBody(llvm::raw_ostream &os) const;

  std::string model;
  std::string target;
  std::vector<std::pair<std::string, double>> phases;
  std::vector<ReportRank> ranks;
  std::vector<int64_t> grid;
};

/// One kernel of an engine's profile (loom-run --profile): time per run,
/// share of the kernels' time, and achieved rates (0 where the compiler did
/// not count the work).
struct ProfiledKernel {
  std::string label;
  double microsPerRun = 0;
  double share = 0;
  double gflops = 0;
  double gbytesPerSecond = 0;
};

struct ProfiledRank {
  int32_t rank = 0;
  uint64_t runs = 0;
  double kernelMicrosPerRun = 0;
  std::vector<ProfiledKernel> kernels;
};

/// Writes a page with each rank's kernels as bars, slowest first, with
/// their achieved GFLOP/s and GB/s, against the machine's peaks where given
/// (> 0).
llvm::Error writeProfileReport(llvm::StringRef path, llvm::StringRef engine,
                               llvm::ArrayRef<ProfiledRank> ranks,
                               double peakGflops, double peakGbytesPerSecond);

} // namespace loom

#endif // LOOM_COMPILER_HTMLREPORT_H
