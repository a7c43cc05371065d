//===- HtmlReport.cpp - loomc --report-html
//--------------------------------===//
//
// The page is one file with no external resources: inline CSS, the
// pictures as SVG drawn here (so they render without scripts), and a small
// script that only adds zooming. Collectives are recognised as the runtime
// calls (loom_rt_*) partitioning leaves in each rank's program, with their
// byte counts read from the calls' constant arguments
// (runtime/include/loom/abi/collectives.h).
//
//===----------------------------------------------------------------------===//

#include "loom/Compiler/HtmlReport.h"

#include "loom/Compiler/Compiler.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

using namespace mlir;

namespace loom {
namespace {

/// Names in first-seen order.
using NameSet = llvm::SetVector<std::string, std::vector<std::string>,
                                std::set<std::string>>;

/// The ONNX node names in `loc` (NameLoc), appended to `names`.
void collectNodeNames(Location loc, NameSet &names) {
  loc->walk([&](Location inner) {
    if (auto named = dyn_cast<NameLoc>(inner))
      names.insert(named.getName().str());
    return WalkResult::advance();
  });
}

std::string typeText(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return text;
}

std::optional<int64_t> constantArgument(func::CallOp call, unsigned index) {
  if (index >= call.getNumOperands())
    return std::nullopt;
  APInt value;
  if (!matchPattern(call.getOperand(index), m_ConstantInt(&value)))
    return std::nullopt;
  return value.getSExtValue();
}

/// Bytes per element of a loom_dtype code (runtime/include/loom/runtime.h).
int64_t dtypeBytes(int64_t code) {
  switch (code) {
  case 1:  // f16
  case 2:  // bf16
  case 7:  // i16
  case 11: // u16
    return 2;
  case 3:  // f32
  case 8:  // i32
  case 12: // u32
    return 4;
  case 4:  // f64
  case 9:  // i64
  case 13: // u64
    return 8;
  default:
    return 1;
  }
}

/// The bytes a rank contributes to collective call `call` named `name`
/// (without the loom_rt_ prefix); 0 when the arguments are not constants.
int64_t collectiveBytes(func::CallOp call, StringRef name) {
  if (name.ends_with("all_reduce")) {
    std::optional<int64_t> count = constantArgument(call, 2);
    std::optional<int64_t> dtype = constantArgument(call, 3);
    return count && dtype ? *count * dtypeBytes(*dtype) : 0;
  }
  if (name == "send" || name == "recv")
    return constantArgument(call, 1).value_or(0);
  return constantArgument(call, 2).value_or(0);
}

/// `op` as a step of the report, or nullopt for what it leaves out
/// (constants, index and pointer arithmetic, buffer casts).
std::optional<ReportKernel> describeStep(Operation &op) {
  ReportKernel kernel;
  for (auto [i, result] : llvm::enumerate(op.getResults()))
    kernel.resultType += (i ? ", " : "") + typeText(result.getType());
  NameSet nodes;
  collectNodeNames(op.getLoc(), nodes);
  if (auto fusion = dyn_cast<FusionOp>(op)) {
    kernel.kind = fusion.getKind().str();
    std::vector<std::string> ops;
    fusion.getBody().walk([&](Operation *inner) {
      if (isa<YieldOp, ConstantOp>(inner))
        return;
      ops.push_back(inner->getName().stripDialect().str());
      collectNodeNames(inner->getLoc(), nodes);
    });
    constexpr size_t kShown = 6;
    for (size_t i = 0; i < std::min(ops.size(), kShown); ++i)
      kernel.title += (i ? " + " : "") + ops[i];
    if (ops.size() > kShown)
      kernel.title += " + " + std::to_string(ops.size() - kShown) + " more";
  } else if (auto call = dyn_cast<func::CallOp>(op)) {
    StringRef callee = call.getCallee();
    if (!callee.consume_front("loom_rt_"))
      return std::nullopt;
    kernel.kind = "collective";
    kernel.title = callee.str();
    kernel.bytes = collectiveBytes(call, callee);
  } else if (isa<ConstantOp>(op)) {
    return std::nullopt;
  } else if (isa<LoomDialect>(op.getDialect()) ||
             isa<tensor::TensorDialect>(op.getDialect())) {
    if (isa<tensor::EmptyOp, tensor::CastOp, tensor::DimOp>(op))
      return std::nullopt;
    kernel.kind = "op";
    kernel.title = op.getName().getStringRef().str();
  } else {
    return std::nullopt;
  }
  kernel.nodes.assign(nodes.begin(), nodes.end());
  return kernel;
}

/// Follows buffer casts back to the value they carry.
Operation *producerOf(Value value) {
  Operation *def = value.getDefiningOp();
  while (
      def &&
      isa<bufferization::ToTensorOp, bufferization::ToBufferOp, tensor::CastOp>(
          def) &&
      def->getNumOperands() > 0)
    def = def->getOperand(0).getDefiningOp();
  return def;
}

std::string escape(StringRef text) {
  std::string out;
  for (char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

std::string shorten(StringRef text, size_t width) {
  if (text.size() <= width)
    return text.str();
  return text.take_front(width - 3).str() + "...";
}

std::string bytesText(int64_t bytes) {
  char buffer[32];
  if (bytes >= (int64_t{1} << 20))
    snprintf(buffer, sizeof(buffer), "%.2f MiB", bytes / 1048576.0);
  else if (bytes >= 1024)
    snprintf(buffer, sizeof(buffer), "%.1f KiB", bytes / 1024.0);
  else
    snprintf(buffer, sizeof(buffer), "%lld B", static_cast<long long>(bytes));
  return buffer;
}

const char *kindColour(StringRef kind) {
  if (kind == "epilogue")
    return "#4c78a8";
  if (kind == "reduction")
    return "#54a24b";
  if (kind == "elementwise")
    return "#f58518";
  if (kind == "collective")
    return "#e45756";
  return "#9d9d9d";
}

/// A colour per label, stable across runs.
std::string labelColour(StringRef label) {
  uint32_t hash = 2166136261u;
  for (char c : label)
    hash = (hash ^ static_cast<uint8_t>(c)) * 16777619u;
  return "hsl(" + std::to_string(hash % 360) + ",60%,62%)";
}

/// The kernels of one rank as a column of boxes in program order, each
/// edge from a producer to a consumer an arc on the left.
void writeKernelGraph(llvm::raw_ostream &os, const ReportRank &rank) {
  constexpr int kLeft = 170, kWidth = 620, kLine = 16, kGap = 10;
  std::vector<int> top, height;
  int y = 10;
  for (const ReportKernel &kernel : rank.kernels) {
    top.push_back(y);
    int lines = kernel.nodes.empty() ? 2 : 3;
    height.push_back(lines * kLine + 6);
    y += height.back() + kGap;
  }
  os << "<div class=\"zoom\"><svg class=\"graph\" width=\""
     << kLeft + kWidth + 20 << "\" height=\"" << y + 10 << "\" viewBox=\"0 0 "
     << kLeft + kWidth + 20 << " " << y + 10
     << "\" xmlns=\"http://www.w3.org/2000/svg\">\n";
  for (auto [i, kernel] : llvm::enumerate(rank.kernels))
    for (int input : kernel.inputs) {
      int from = top[input] + height[input] / 2;
      int to = top[i] + height[i] / 2;
      int bend = std::min(kLeft - 10, 12 + (to - from) / 6);
      os << "<path class=\"edge\" d=\"M" << kLeft << " " << from << " C"
         << kLeft - bend << " " << from << " " << kLeft - bend << " " << to
         << " " << kLeft << " " << to << "\"/>\n";
    }
  for (auto [i, kernel] : llvm::enumerate(rank.kernels)) {
    std::string nodes;
    for (auto [n, name] : llvm::enumerate(kernel.nodes))
      nodes += (n ? ", " : "") + name;
    std::string heading =
        "#" + std::to_string(i) + " " + kernel.kind + ": " + kernel.title;
    if (kernel.kind == "collective")
      heading += " (" + bytesText(kernel.bytes) + ")";
    std::string detail = kernel.kind == "op" ? "a kernel of one op; " : "";
    if (!kernel.resultType.empty())
      detail +=
          (kernel.resultType.find(", ") == std::string::npos ? "result "
                                                             : "results ") +
          kernel.resultType;
    os << "<g class=\"kernel kind-" << kernel.kind << "\"><title>"
       << escape(heading + "\n" + detail +
                 (nodes.empty() ? "" : "\nONNX nodes: " + nodes))
       << "</title><rect x=\"" << kLeft << "\" y=\"" << top[i] << "\" width=\""
       << kWidth << "\" height=\"" << height[i] << "\" rx=\"5\" fill=\""
       << kindColour(kernel.kind) << "\"/>";
    int line = top[i] + kLine;
    os << "<text x=\"" << kLeft + 8 << "\" y=\"" << line << "\" class=\"head\">"
       << escape(shorten(heading, 80)) << "</text>";
    line += kLine;
    if (!kernel.nodes.empty()) {
      std::string shown = kernel.nodes.front();
      if (kernel.nodes.size() > 1)
        shown += " ... " + kernel.nodes.back() + " (" +
                 std::to_string(kernel.nodes.size()) + " ONNX nodes)";
      os << "<text x=\"" << kLeft + 8 << "\" y=\"" << line << "\">"
         << escape(shorten(shown, 82)) << "</text>";
      line += kLine;
    }
    os << "<text x=\"" << kLeft + 8 << "\" y=\"" << line << "\" class=\"dim\">"
       << escape(shorten(detail, 82)) << "</text></g>\n";
  }
  os << "</svg></div>\n";
}

/// Buffers as bars over the steps (x) at their arena offsets (y).
void writeMemoryPlan(llvm::raw_ostream &os, const MemoryPlanRecord &plan) {
  constexpr int kLeft = 70, kWidth = 820, kHeight = 280, kTop = 10;
  int64_t sum = 0;
  for (const PlannedBuffer &b : plan.buffers)
    sum += b.bytes;
  os << "<p>@" << escape(plan.function) << ": " << plan.buffers.size()
     << " buffers, " << bytesText(sum) << " in all, in an arena of "
     << bytesText(plan.arenaBytes);
  if (sum > 0)
    os << llvm::format(" (%.0f %% of the sum)",
                       100.0 * plan.arenaBytes / static_cast<double>(sum));
  os << "; " << plan.steps << " steps.</p>\n";
  double xScale =
      static_cast<double>(kWidth) / std::max<int64_t>(1, plan.steps);
  double yScale =
      static_cast<double>(kHeight) / std::max<int64_t>(1, plan.arenaBytes);
  os << "<svg class=\"memory\" width=\"" << kLeft + kWidth + 10
     << "\" height=\"" << kTop + kHeight + 30
     << "\" xmlns=\"http://www.w3.org/2000/svg\">\n"
     << "<rect x=\"" << kLeft << "\" y=\"" << kTop << "\" width=\"" << kWidth
     << "\" height=\"" << kHeight << "\" class=\"frame\"/>\n";
  for (const PlannedBuffer &b : plan.buffers) {
    double x = kLeft + b.firstStep * xScale;
    double w = std::max(1.0, (b.lastStep - b.firstStep + 1) * xScale);
    // Offsets grow upwards, as in a heap picture.
    double h = std::max(1.0, b.bytes * yScale);
    double y = kTop + kHeight - (b.offset + b.bytes) * yScale;
    std::string label = b.label.empty() ? "(no ONNX node)" : b.label;
    os << "<rect class=\"buffer\" x=\"" << llvm::format("%.1f", x) << "\" y=\""
       << llvm::format("%.1f", y) << "\" width=\"" << llvm::format("%.1f", w)
       << "\" height=\"" << llvm::format("%.1f", h) << "\" fill=\""
       << labelColour(label) << "\"><title>"
       << escape(label + ": " + bytesText(b.bytes) + " at offset " +
                 std::to_string(b.offset) + ", steps " +
                 std::to_string(b.firstStep) + "-" + std::to_string(b.lastStep))
       << "</title></rect>\n";
  }
  os << "<line class=\"peak\" x1=\"" << kLeft << "\" x2=\"" << kLeft + kWidth
     << "\" y1=\"" << kTop << "\" y2=\"" << kTop << "\"/>"
     << "<text x=\"4\" y=\"" << kTop + 12 << "\">"
     << escape(bytesText(plan.arenaBytes)) << "</text>"
     << "<text x=\"4\" y=\"" << kTop + kHeight << "\">0</text>"
     << "<text x=\"" << kLeft << "\" y=\"" << kTop + kHeight + 20
     << "\">step 0</text><text x=\"" << kLeft + kWidth - 70 << "\" y=\""
     << kTop + kHeight + 20 << "\">step " << plan.steps << "</text></svg>\n";
}

constexpr const char *kStyle = R"(
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 28px; }
table { border-collapse: collapse; } td, th { padding: 3px 10px; text-align: left; }
tr:nth-child(even) { background: #f3f3f3; } td.num { text-align: right; }
.zoom { overflow: auto; max-height: 720px; border: 1px solid #ccc; }
svg.graph text { font: 12px monospace; fill: white; }
svg.graph text.head { font-weight: bold; } svg.graph text.dim { fill: #eee; }
path.edge { fill: none; stroke: #888; stroke-width: 1.2; }
rect.frame { fill: #fafafa; stroke: #999; } rect.buffer { stroke: #333; stroke-width: 0.3; }
line.peak { stroke: #e45756; stroke-dasharray: 4 3; }
svg.memory text, svg.bars text { font: 11px monospace; }
.legend span { display: inline-block; padding: 2px 8px; margin-right: 6px; color: white; border-radius: 4px; }
)";

// Wheel zooming of the kernel graphs; marks the page as rendered (the
// headless-browser test reads it back).
constexpr const char *kScript = R"(
document.querySelectorAll('.zoom').forEach(function (box) {
  var svg = box.querySelector('svg');
  var width = svg.width.baseVal.value, height = svg.height.baseVal.value;
  var scale = 1;
  box.addEventListener('wheel', function (event) {
    if (!event.ctrlKey) return;
    event.preventDefault();
    scale = Math.min(4, Math.max(0.2, scale * (event.deltaY < 0 ? 1.15 : 0.87)));
    svg.setAttribute('width', width * scale);
    svg.setAttribute('height', height * scale);
  });
});
document.body.setAttribute('data-rendered', String(document.querySelectorAll('svg').length));
)";

/// Writes one page to `path`: the head with `title` and the style, the
/// `heading`, what `body` writes, and the script; an error when the file
/// cannot be written.
llvm::Error writePage(StringRef path, StringRef title, StringRef heading,
                      llvm::function_ref<void(llvm::raw_ostream &)> body) {
  std::error_code error;
  llvm::raw_fd_ostream os(path, error, llvm::sys::fs::OF_Text);
  if (error)
    return llvm::createStringError(error, "cannot write the report '%s': %s",
                                   path.str().c_str(), error.message().c_str());
  os << "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
     << "<title>" << escape(title) << "</title><style>" << kStyle
     << "</style></head>\n<body>\n<h1>" << escape(heading) << "</h1>\n";
  body(os);
  os << "<script>" << kScript << "</script>\n</body></html>\n";
  os.close();
  if (os.has_error())
    return llvm::createStringError(os.error(), "cannot write the report '%s'",
                                   path.str().c_str());
  return llvm::Error::success();
}

} // namespace

void CompileReport::observe(CompileOptions &options) {
  options.onGraphOptimized = [this](ModuleOp module) { recordGraph(module); };
  options.onMemoryPlan = [this](const MemoryPlanRecord &plan) {
    recordMemoryPlan(plan);
  };
  auto previous = options.onPhase;
  options.onPhase = [this, previous](StringRef phase, double ms) {
    addPhase(phase, ms);
    if (previous)
      previous(phase, ms);
  };
}

void CompileReport::recordGraph(ModuleOp module) {
  ReportRank rank;
  func::FuncOp entry = findEntry(module);
  if (entry && !entry.isExternal() && entry.getBody().hasOneBlock()) {
    if (auto count = entry->getAttrOfType<IntegerAttr>("onnx.node_count"))
      rank.onnxNodes = count.getInt();
    llvm::DenseMap<Operation *, int> kernelOf;
    for (Operation &op : entry.getBody().front()) {
      std::optional<ReportKernel> kernel = describeStep(op);
      if (!kernel)
        continue;
      for (Value operand : op.getOperands())
        if (Operation *producer = producerOf(operand)) {
          auto it = kernelOf.find(producer);
          if (it != kernelOf.end() &&
              !llvm::is_contained(kernel->inputs, it->second))
            kernel->inputs.push_back(it->second);
        }
      kernelOf[&op] = static_cast<int>(rank.kernels.size());
      rank.kernels.push_back(std::move(*kernel));
    }
  }
  ranks.push_back(std::move(rank));
}

void CompileReport::recordMemoryPlan(const MemoryPlanRecord &plan) {
  if (ranks.empty())
    ranks.emplace_back();
  ranks.back().memoryPlans.push_back(plan);
}

llvm::Error CompileReport::write(StringRef path) const {
  return writePage(path, "Loom report: " + model, "Loom compilation report",
                   [&](llvm::raw_ostream &os) { writeBody(os); });
}

void CompileReport::writeBody(llvm::raw_ostream &os) const {
  os << "<table>"
     << "<tr><th>model</th><td>" << escape(model) << "</td></tr>"
     << "<tr><th>target</th><td>" << escape(target) << "</td></tr>"
     << "<tr><th>ranks</th><td>" << ranks.size() << "</td></tr>";
  if (!grid.empty()) {
    os << "<tr><th>grid</th><td>";
    for (auto [i, size] : llvm::enumerate(grid))
      os << (i ? " x " : "") << size;
    os << "</td></tr>";
  }
  os << "</table>\n";

  double total = 0;
  for (const auto &[name, ms] : phases)
    total += ms;
  os << "<h2>Phases</h2>\n<svg class=\"bars\" width=\"760\" height=\""
     << 22 * phases.size() + 8 << "\" xmlns=\"http://www.w3.org/2000/svg\">\n";
  for (auto [i, phase] : llvm::enumerate(phases)) {
    double width = total > 0 ? 420.0 * phase.second / total : 0;
    int y = 4 + 22 * static_cast<int>(i);
    os << "<text x=\"0\" y=\"" << y + 14 << "\">" << escape(phase.first)
       << "</text><rect x=\"300\" y=\"" << y << "\" width=\""
       << llvm::format("%.1f", std::max(1.0, width))
       << "\" height=\"16\" fill=\"#4c78a8\"/><text x=\""
       << llvm::format("%.1f", 306 + width) << "\" y=\"" << y + 14 << "\">"
       << llvm::format("%.1f ms", phase.second) << "</text>\n";
  }
  os << "</svg>\n";

  os << "<h2>Kernels</h2>\n<p class=\"legend\">";
  for (const char *kind :
       {"epilogue", "reduction", "elementwise", "op", "collective"})
    os << "<span style=\"background:" << kindColour(kind) << "\">"
       << (StringRef(kind) == "op" ? "single op" : kind) << "</span>";
  os << "</p>\n<p>Each box is one step of the program after the graph "
        "pipeline, in program order: a fusion group (a kernel) with the ONNX "
        "nodes it was formed from, an op that is a kernel on its own, or a "
        "collective "
        "with the bytes each rank sends. Arcs on the left join a producer to "
        "its consumers. Hover for the full list of nodes; ctrl + wheel "
        "zooms.</p>\n";
  for (auto [r, rank] : llvm::enumerate(ranks)) {
    int64_t fusions = 0, unfused = 0, collectives = 0, bytes = 0;
    for (const ReportKernel &k : rank.kernels) {
      if (k.kind == "op")
        ++unfused;
      else if (k.kind == "collective") {
        ++collectives;
        bytes += k.bytes;
      } else
        ++fusions;
    }
    os << (r == 0 ? "<details open>" : "<details>") << "<summary>rank " << r
       << ": " << rank.onnxNodes << " ONNX nodes, " << rank.kernels.size()
       << " steps: " << fusions << " fused kernels, " << unfused
       << " single ops, " << collectives << " collectives (" << bytesText(bytes)
       << ")</summary>\n";
    writeKernelGraph(os, rank);
    os << "</details>\n";
  }

  os << "<h2>Memory plan</h2>\n<p>The temporaries of each function placed "
        "in one arena: each buffer a bar from the step that allocates it to "
        "its last use, at its offset (bottom: 0; the dashed line: the "
        "arena's size, its peak). Hover for the ONNX node.</p>\n";
  bool anyPlan = false;
  for (auto [r, rank] : llvm::enumerate(ranks))
    for (const MemoryPlanRecord &plan : rank.memoryPlans) {
      anyPlan = true;
      os << "<h3>rank " << r << "</h3>\n";
      writeMemoryPlan(os, plan);
    }
  if (!anyPlan)
    os << "<p>No memory plan: this target or output stage makes none.</p>\n";

  if (ranks.size() > 1) {
    os << "<h2>Partitioning</h2>\n<table><tr><th>rank</th><th>collective</th>"
          "<th>calls</th><th>bytes per call</th><th>bytes in all</th></tr>\n";
    for (auto [r, rank] : llvm::enumerate(ranks)) {
      std::map<std::pair<std::string, int64_t>, int64_t> calls;
      for (const ReportKernel &k : rank.kernels)
        if (k.kind == "collective")
          ++calls[{k.title, k.bytes}];
      for (const auto &[key, count] : calls)
        os << "<tr><td>" << r << "</td><td>" << escape(key.first)
           << "</td><td class=\"num\">" << count << "</td><td class=\"num\">"
           << bytesText(key.second) << "</td><td class=\"num\">"
           << bytesText(key.second * count) << "</td></tr>\n";
    }
    os << "</table>\n";
  }
}

static void writeProfileBody(llvm::raw_ostream &os, StringRef engine,
                             ArrayRef<ProfiledRank> ranks, double peakGflops,
                             double peakGbytesPerSecond);

llvm::Error writeProfileReport(StringRef path, StringRef engine,
                               ArrayRef<ProfiledRank> ranks, double peakGflops,
                               double peakGbytesPerSecond) {
  return writePage(path, "Loom profile: " + engine.str(), "Loom kernel profile",
                   [&](llvm::raw_ostream &os) {
                     writeProfileBody(os, engine, ranks, peakGflops,
                                      peakGbytesPerSecond);
                   });
}

static void writeProfileBody(llvm::raw_ostream &os, StringRef engine,
                             ArrayRef<ProfiledRank> ranks, double peakGflops,
                             double peakGbytesPerSecond) {
  os << "<p>" << escape(engine)

     << ": each kernel's time per run, slowest first, with the rate it "
        "achieved (the compiler's count of its work over the measured time)";
  if (peakGflops > 0 || peakGbytesPerSecond > 0)
    os << llvm::format("; the thin bar under each is that rate against the "
                       "machine's peak (%.0f GFLOP/s, %.0f GB/s)",
                       peakGflops, peakGbytesPerSecond);
  os << ".</p>\n";
  constexpr int kLabel = 430, kBars = 330, kRow = 24;
  for (const ProfiledRank &rank : ranks) {
    // Slowest first; ties in program order (the pointers' order).
    std::vector<const ProfiledKernel *> order;
    for (const ProfiledKernel &k : rank.kernels)
      order.push_back(&k);
    std::sort(order.begin(), order.end(),
              [](const ProfiledKernel *a, const ProfiledKernel *b) {
                if (a->microsPerRun != b->microsPerRun)
                  return a->microsPerRun > b->microsPerRun;
                return a < b;
              });
    double slowest = order.empty() ? 1 : std::max(1e-9, order[0]->microsPerRun);
    os << "<h2>rank " << rank.rank << "</h2>\n<p>" << rank.kernels.size()
       << " kernels over " << rank.runs
       << " runs: " << llvm::format("%.1f", rank.kernelMicrosPerRun)
       << " us of kernels per run.</p>\n<svg class=\"bars\" width=\""
       << kLabel + kBars + 260 << "\" height=\"" << kRow * order.size() + 8
       << "\" xmlns=\"http://www.w3.org/2000/svg\">\n";
    for (auto [i, k] : llvm::enumerate(order)) {
      int y = 4 + kRow * static_cast<int>(i);
      double width = std::max(1.0, kBars * k->microsPerRun / slowest);
      std::string rates;
      if (k->gflops > 0)
        rates += llvm::formatv(" {0:f1} GFLOP/s", k->gflops).str();
      if (k->gbytesPerSecond > 0)
        rates += llvm::formatv(" {0:f1} GB/s", k->gbytesPerSecond).str();
      os << "<g><title>" << escape(k->label) << "</title><text x=\"0\" y=\""
         << y + 13 << "\">" << escape(shorten(k->label, 60))
         << "</text><rect x=\"" << kLabel << "\" y=\"" << y << "\" width=\""
         << llvm::format("%.1f", width)
         << "\" height=\"14\" fill=\"#4c78a8\"/>";
      // The achieved fraction of the peak the kernel is bound by: compute
      // when it counted operations, memory otherwise.
      double fraction = k->gflops > 0 && peakGflops > 0 ? k->gflops / peakGflops
                        : k->gbytesPerSecond > 0 && peakGbytesPerSecond > 0
                            ? k->gbytesPerSecond / peakGbytesPerSecond
                            : -1;
      if (fraction >= 0)
        os << "<rect x=\"" << kLabel << "\" y=\"" << y + 16 << "\" width=\""
           << llvm::format("%.1f", std::min(1.0, fraction) * kBars)
           << "\" height=\"3\" fill=\"#54a24b\"/>";
      os << "<text x=\"" << llvm::format("%.1f", kLabel + width + 6)
         << "\" y=\"" << y + 13 << "\">"
         << llvm::formatv("{0:f1} us, {1:f1} %", k->microsPerRun,
                          100 * k->share)
         << escape(rates);
      if (fraction >= 0)
        os << llvm::format(" (%.0f %% of peak)", 100 * fraction);
      os << "</text></g>\n";
    }
    os << "</svg>\n";
  }
}

} // namespace loom
