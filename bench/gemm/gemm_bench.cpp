//===- gemm_bench.cpp - Loom's generated GEMM/conv kernels vs oneDNN ------===//
//
// For each shape: Loom compiles `loom.matmul` (or `loom.conv`) for this CPU
// in-process, exactly as loomc does, and the object is timed through its
// entry point; oneDNN (when built with it) runs the same problem in the
// same process: a matmul primitive with plain row-major B and one with B
// reordered once into oneDNN's preferred layout (as a constant weight
// would be), and the convolution primitive. Loom is timed twice: with the
// weight an input of the program, and with the weight a constant of the
// program (packed at compile time where the product reads panels of it;
// passed to the entry as its weights section would be). Figures only:
// GFLOP/s, median of timed batches, nothing asserted but that both of
// Loom's kernels agree bit for bit.
//
//   loom-bench-gemm [--shapes 16x64x64,conv:64x56x56x64x3] [--dnnl-threads N]
//                   [--num-threads N] [--min-time 0.2] [--batches 7]
//
// A matmul shape is MxKxN; a convolution is conv:CxHxWxFxR (NCHW input of
// one image, F filters of RxR, stride 1, padding R/2).
//
//===----------------------------------------------------------------------===//

#include "loom/InitAllDialects.h"
#include "loom/Target/CPU/CPUTarget.h"
#include "loom/Target/CPU/Executable.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#ifdef LOOM_BENCH_DNNL
#include "dnnl.hpp"
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <dlfcn.h>
#include <functional>
#include <new>
#include <random>
#include <string>
#include <vector>

using namespace mlir;
namespace cl = llvm::cl;

static cl::opt<std::string> shapesOpt(
    "shapes", cl::desc("Comma-separated shapes: MxKxN or conv:CxHxWxFxR"),
    cl::init("16x64x64,128x768x768,128x768x3072,256x512x512,512x512x512,"
             "1024x1024x1024,3136x576x64,conv:64x56x56x64x3"));
static cl::opt<unsigned> threadsOpt("dnnl-threads",
                                    cl::desc("Threads for oneDNN (OpenMP)"),
                                    cl::init(1));
static cl::opt<unsigned>
    loomThreadsOpt("num-threads",
                   cl::desc("Threads for Loom's kernels (parallel tile loops)"),
                   cl::init(1));
static cl::opt<double>
    minTimeOpt("min-time", cl::desc("Seconds per timed batch"), cl::init(0.1));
static cl::opt<unsigned> batchesOpt("batches", cl::desc("Timed batches"),
                                    cl::init(7));

namespace {

using Clock = std::chrono::steady_clock;

/// Allocates on 64-byte boundaries, as engines place their weights and
/// the generated code its buffers: a buffer at a 16-byte offset (malloc's)
/// splits vector loads across cache lines.
template <typename T> struct CacheLineAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlignment{64};
  CacheLineAllocator() = default;
  template <typename U> CacheLineAllocator(const CacheLineAllocator<U> &) {}
  T *allocate(size_t n) {
    return static_cast<T *>(::operator new(n * sizeof(T), kAlignment));
  }
  void deallocate(T *p, size_t) { ::operator delete(p, kAlignment); }
  bool operator==(const CacheLineAllocator &) const { return true; }
  bool operator!=(const CacheLineAllocator &) const { return false; }
};
using Floats = std::vector<float, CacheLineAllocator<float>>;

/// Median over batches of the seconds one call takes.
double timeIt(const std::function<void()> &call) {
  call(); // warm up (and first-touch pages)
  auto start = Clock::now();
  call();
  double once = std::max(
      1e-7, std::chrono::duration<double>(Clock::now() - start).count());
  int64_t reps = std::max<int64_t>(1, int64_t(minTimeOpt / once));
  std::vector<double> perCall;
  for (unsigned b = 0; b < batchesOpt; ++b) {
    auto t0 = Clock::now();
    for (int64_t r = 0; r < reps; ++r)
      call();
    perCall.push_back(std::chrono::duration<double>(Clock::now() - t0).count() /
                      reps);
  }
  std::sort(perCall.begin(), perCall.end());
  return perCall[perCall.size() / 2];
}

struct Problem {
  std::string name, kind;
  bool conv = false;
  int64_t m = 0, k = 0, n = 0;               // matmul
  int64_t c = 0, h = 0, w = 0, f = 0, r = 0; // conv
  double flops() const {
    return conv ? 2.0 * f * h * w * c * r * r : 2.0 * m * k * n;
  }
  std::vector<int64_t> inputShape() const {
    return conv ? std::vector<int64_t>{1, c, h, w} : std::vector<int64_t>{m, k};
  }
  std::vector<int64_t> weightShape() const {
    return conv ? std::vector<int64_t>{f, c, r, r} : std::vector<int64_t>{k, n};
  }
  std::vector<int64_t> outputShape() const {
    return conv ? std::vector<int64_t>{1, f, h, w} : std::vector<int64_t>{m, n};
  }
};

std::string tensorType(const std::vector<int64_t> &shape) {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + "f32>";
}

int64_t numElements(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string loomProgram(const Problem &p) {
  std::string in = tensorType(p.inputShape()), wt = tensorType(p.weightShape()),
              out = tensorType(p.outputShape());
  std::string body;
  if (p.conv) {
    std::string pad = std::to_string(p.r / 2);
    body = "%y = loom.conv %x, %w {strides = array<i64: 1, 1>, pads = "
           "array<i64: " +
           pad + ", " + pad + ", " + pad + ", " + pad +
           ">, dilations = array<i64: 1, 1>, group = 1 : i64} : (" + in + ", " +
           wt + ") -> " + out;
  } else {
    body = "%y = loom.matmul %x, %w : " + in + ", " + wt + " -> " + out;
  }
  return "func.func @main(%x: " + in + ", %w: " + wt + ") -> " + out +
         " {\n  " + body + "\n  return %y : " + out + "\n}\n";
}

std::optional<Problem> parseShape(llvm::StringRef text) {
  Problem p;
  p.name = text.str();
  SmallVector<llvm::StringRef> parts;
  bool conv = text.consume_front("conv:");
  text.split(parts, 'x');
  SmallVector<int64_t> v;
  for (llvm::StringRef part : parts) {
    int64_t x;
    if (part.getAsInteger(10, x) || x <= 0)
      return std::nullopt;
    v.push_back(x);
  }
  if (conv) {
    if (v.size() != 5)
      return std::nullopt;
    p.conv = true;
    p.c = v[0], p.h = v[1], p.w = v[2], p.f = v[3], p.r = v[4];
    p.kind = "conv " + std::to_string(p.r) + "x" + std::to_string(p.r) +
             ", im2col " + std::to_string(p.h * p.w) + "x" +
             std::to_string(p.c * p.r * p.r) + "x" + std::to_string(p.f);
    return p;
  }
  if (v.size() != 3)
    return std::nullopt;
  p.m = v[0], p.k = v[1], p.n = v[2];
  p.kind = p.m <= 16 ? "small M" : p.m <= 256 ? "medium M" : "large M";
  return p;
}

struct LoomKernel {
  std::unique_ptr<loom::cpu::Executable> exe;
  double compileSeconds = 0;
  /// With a constant weight: the weights the entry takes after the input,
  /// as an engine's weights section holds them.
  std::vector<Floats> weights;
};

/// The program's weight (its second argument) as a constant holding `w`.
void makeWeightConstant(ModuleOp module, const Problem &p, const Floats &w) {
  auto func = *module.getOps<func::FuncOp>().begin();
  OpBuilder b(func.getBody());
  auto type = RankedTensorType::get(p.weightShape(), b.getF32Type());
  Value constant = arith::ConstantOp::create(
      b, func.getLoc(),
      DenseElementsAttr::get(type, llvm::ArrayRef<float>(w.data(), w.size())));
  func.getArgument(1).replaceAllUsesWith(constant);
  (void)func.eraseArgument(1);
}

/// Compiles the problem with its weight an input, or, given
/// `constantWeight`, a constant (externalized as loomc does for engines).
std::optional<LoomKernel> compileLoom(MLIRContext &context, const Problem &p,
                                      const Floats *constantWeight = nullptr) {
  auto start = Clock::now();
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(loomProgram(p), &context);
  if (!module)
    return std::nullopt;
  if (constantWeight)
    makeWeightConstant(*module, p, *constantWeight);
  loom::cpu::CompileOptions options;
  SmallVector<char> object;
  SmallVector<ElementsAttr> weights;
  if (std::string error = loom::cpu::compileToObject(
          *module, options, object, constantWeight ? &weights : nullptr);
      !error.empty()) {
    llvm::errs() << p.name << ": " << error << "\n";
    return std::nullopt;
  }
  std::string error;
  LoomKernel kernel;
  for (ElementsAttr weight : weights) {
    llvm::ArrayRef<char> bytes = loom::cpu::weightBytes(weight);
    Floats &copy = kernel.weights.emplace_back(
        (bytes.size() + sizeof(float) - 1) / sizeof(float));
    std::memcpy(copy.data(), bytes.data(), bytes.size());
  }
  kernel.exe = loom::cpu::Executable::load(object, error);
  if (!kernel.exe) {
    llvm::errs() << p.name << ": " << error << "\n";
    return std::nullopt;
  }
  kernel.compileSeconds =
      std::chrono::duration<double>(Clock::now() - start).count();
  return kernel;
}

float maxRelativeError(const Floats &x, const Floats &ref) {
  float scale = 0, err = 0;
  for (float v : ref)
    scale = std::max(scale, std::fabs(v));
  for (size_t i = 0; i < x.size(); ++i)
    err = std::max(err, std::fabs(x[i] - ref[i]));
  return scale > 0 ? err / scale : err;
}

#ifdef LOOM_BENCH_DNNL
struct DnnlFigures {
  double plain = 0, packed = 0;
  Floats result;
};

DnnlFigures runDnnl(const Problem &p, Floats &x, Floats &w) {
  using namespace dnnl;
  using tag = memory::format_tag;
  using dt = memory::data_type;
  engine eng(engine::kind::cpu, 0);
  stream s(eng);
  DnnlFigures fig;
  fig.result.assign(numElements(p.outputShape()), 0.f);
  if (!p.conv) {
    memory::desc a({p.m, p.k}, dt::f32, tag::ab),
        bPlain({p.k, p.n}, dt::f32, tag::ab), c({p.m, p.n}, dt::f32, tag::ab),
        bAny({p.k, p.n}, dt::f32, tag::any);
    memory am(a, eng, x.data()), bm(bPlain, eng, w.data()),
        cm(c, eng, fig.result.data());
    matmul plain(matmul::primitive_desc(matmul::desc(a, bPlain, c), eng));
    fig.plain = timeIt([&] {
      plain.execute(
          s, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}});
      s.wait();
    });
    matmul::primitive_desc packedPd(matmul::desc(a, bAny, c), eng);
    memory packedB(packedPd.weights_desc(), eng);
    reorder(bm, packedB).execute(s, bm, packedB);
    s.wait();
    matmul packed(packedPd);
    fig.packed = timeIt([&] {
      packed.execute(s, {{DNNL_ARG_SRC, am},
                         {DNNL_ARG_WEIGHTS, packedB},
                         {DNNL_ARG_DST, cm}});
      s.wait();
    });
    return fig;
  }
  memory::dims pad{p.r / 2, p.r / 2};
  memory::desc src({1, p.c, p.h, p.w}, dt::f32, tag::nchw),
      wts({p.f, p.c, p.r, p.r}, dt::f32, tag::oihw),
      dst({1, p.f, p.h, p.w}, dt::f32, tag::nchw);
  memory sm(src, eng, x.data()), wm(wts, eng, w.data()),
      dm(dst, eng, fig.result.data());
  auto pd = convolution_forward::primitive_desc(
      convolution_forward::desc(prop_kind::forward_inference,
                                algorithm::convolution_direct, src, wts, dst,
                                {1, 1}, pad, pad),
      eng);
  convolution_forward conv(pd);
  fig.plain = timeIt([&] {
    conv.execute(
        s, {{DNNL_ARG_SRC, sm}, {DNNL_ARG_WEIGHTS, wm}, {DNNL_ARG_DST, dm}});
    s.wait();
  });
  // Its preferred layouts (blocked channels), weights reordered once and
  // activations reordered in and out on every call.
  memory::desc srcAny({1, p.c, p.h, p.w}, dt::f32, tag::any),
      wtsAny({p.f, p.c, p.r, p.r}, dt::f32, tag::any),
      dstAny({1, p.f, p.h, p.w}, dt::f32, tag::any);
  auto pdAny = convolution_forward::primitive_desc(
      convolution_forward::desc(prop_kind::forward_inference,
                                algorithm::convolution_direct, srcAny, wtsAny,
                                dstAny, {1, 1}, pad, pad),
      eng);
  memory wPacked(pdAny.weights_desc(), eng), sPacked(pdAny.src_desc(), eng),
      dPacked(pdAny.dst_desc(), eng);
  reorder(wm, wPacked).execute(s, wm, wPacked);
  s.wait();
  convolution_forward convAny(pdAny);
  reorder toBlocked(sm, sPacked), fromBlocked(dPacked, dm);
  fig.packed = timeIt([&] {
    toBlocked.execute(s, sm, sPacked);
    convAny.execute(s, {{DNNL_ARG_SRC, sPacked},
                        {DNNL_ARG_WEIGHTS, wPacked},
                        {DNNL_ARG_DST, dPacked}});
    fromBlocked.execute(s, dPacked, dm);
    s.wait();
  });
  return fig;
}
#endif

} // namespace

int main(int argc, char **argv) {
  cl::ParseCommandLineOptions(
      argc, argv,
      "Loom's generated GEMM/conv kernels and oneDNN, side by side\n");
  // oneDNN runs on OpenMP: one thread unless asked (OMP_NUM_THREADS is
  // read when libgomp loads, so set the count through its API).
  if (auto setThreads = reinterpret_cast<void (*)(int)>(
          dlsym(RTLD_DEFAULT, "omp_set_num_threads")))
    setThreads(threadsOpt);

  DialectRegistry registry;
  loom::registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();

  SmallVector<llvm::StringRef> names;
  llvm::StringRef(shapesOpt).split(names, ',', -1, false);
  llvm::outs() << "host: " << loom::cpu::hostCPUName()
               << "; Loom: " << loomThreadsOpt << " thread(s)";
#ifdef LOOM_BENCH_DNNL
  const dnnl_version_t *v = dnnl_version();
  llvm::outs() << "; oneDNN " << v->major << "." << v->minor << "." << v->patch
               << ": " << threadsOpt << " thread(s)";
#else
  llvm::outs() << "; built without oneDNN";
#endif
  llvm::outs() << "; GFLOP/s, median of " << batchesOpt
               << " batches of >= " << llvm::format("%.2f", double(minTimeOpt))
               << " s\n\n";
  llvm::outs() << "| shape | class | Loom | Loom (constant B) | oneDNN "
                  "(plain B) | oneDNN (reordered B) | Loom / best oneDNN | "
                  "Loom (constant B) / oneDNN (reordered B) | max rel. diff "
                  "| Loom compile |\n"
                  "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (llvm::StringRef name : names) {
    std::optional<Problem> p = parseShape(name.trim());
    if (!p) {
      llvm::errs() << "bad shape '" << name << "'\n";
      return 2;
    }
    Floats x(numElements(p->inputShape())), w(numElements(p->weightShape())),
        y(numElements(p->outputShape()));
    for (float &v : x)
      v = dist(rng);
    for (float &v : w)
      v = dist(rng);
    std::optional<LoomKernel> kernel = compileLoom(context, *p);
    std::optional<LoomKernel> constKernel = compileLoom(context, *p, &w);
    if (!kernel || !constKernel)
      return 1;
    void *buffers[] = {x.data(), w.data(), y.data()};
    double loomSeconds =
        timeIt([&] { kernel->exe->run(buffers, loomThreadsOpt); });
    Floats yConst(y.size());
    std::vector<void *> constBuffers{x.data()};
    for (Floats &weight : constKernel->weights)
      constBuffers.push_back(weight.data());
    constBuffers.push_back(yConst.data());
    double constSeconds = timeIt(
        [&] { constKernel->exe->run(constBuffers.data(), loomThreadsOpt); });
    if (std::memcmp(y.data(), yConst.data(), y.size() * sizeof(float)))
      llvm::errs() << p->name
                   << ": the kernels with the weight an input and a constant "
                      "differ\n";
    double gflop = p->flops() * 1e-9;
    double loom = gflop / loomSeconds, loomConst = gflop / constSeconds;
    llvm::outs() << "| " << p->name << " | " << p->kind << " | "
                 << llvm::format("%.1f", loom) << " | "
                 << llvm::format("%.1f", loomConst);
#ifdef LOOM_BENCH_DNNL
    DnnlFigures fig = runDnnl(*p, x, w);
    double plain = gflop / fig.plain, packed = gflop / fig.packed;
    llvm::outs() << " | " << llvm::format("%.1f", plain) << " | "
                 << llvm::format("%.1f", packed) << " | "
                 << llvm::format("%.2f", loom / std::max(plain, packed))
                 << " | " << llvm::format("%.2f", loomConst / packed) << " | "
                 << llvm::format("%.1e", maxRelativeError(y, fig.result));
#else
    llvm::outs() << " | - | - | - | - | -";
#endif
    llvm::outs() << " | " << llvm::format("%.2f s", kernel->compileSeconds)
                 << " |\n";
    llvm::outs().flush();
  }
  return 0;
}
