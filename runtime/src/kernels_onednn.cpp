//===- kernels_onednn.cpp - The oneDNN kernel library plugin --------------===//
//
// libloom_runtime_onednn.so: convolutions through oneDNN for the shape
// classes where it beats the generated code (docs/codegen.md, "Library
// convolutions"). The runtime loads it on first use (kernels.cpp); it
// exports the C functions of kernel_library.h.
//
// Per call site (one `slot` in the code's writable data) it prepares once:
// the primitive, with oneDNN choosing the layouts it computes fastest in
// (blocked channels), the reorders between those and the code's plain
// NCHW buffers, and - for a constant filter - the filter already reordered.
// A call then reorders the input in, runs the primitive and reorders the
// output back. Calls may come from several threads at once (ranks, or
// concurrent executions): what a slot holds is only read after it is
// published, and each thread has its own stream and work buffers.
//
//===----------------------------------------------------------------------===//

#include "kernel_library.h"

#include "loom/abi/kernels.h"

#include "oneapi/dnnl/dnnl.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

// From the OpenMP runtime oneDNN is built with (weak: resolved when the
// plugin loads; absent for a sequential build).
extern "C" void omp_set_num_threads(int) __attribute__((weak));

namespace {

using dnnl::memory;
using Tag = memory::format_tag;

dnnl::engine &cpuEngine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

/// Growable 64-byte aligned buffers, one set per thread.
class Buffer {
public:
  ~Buffer() { std::free(data); }
  void *get(size_t bytes) {
    if (bytes > capacity) {
      std::free(data);
      capacity = (bytes + 63) / 64 * 64;
      data = std::aligned_alloc(64, capacity);
      if (!data) {
        capacity = 0;
        throw std::bad_alloc();
      }
    }
    return data;
  }

private:
  void *data = nullptr;
  size_t capacity = 0;
};

struct ThreadContext {
  dnnl::stream stream{cpuEngine()};
  Buffer source, destination, filter, scratchpad;
  int32_t threads = -1;
};

ThreadContext &threadContext() {
  thread_local ThreadContext context;
  return context;
}

/// What one call site needs, prepared on its first call.
struct PreparedConv {
  std::array<int64_t, LOOM_CONV_DESC_SIZE> desc;
  /// oneDNN splits the work among the threads it sees when the primitive
  /// is created.
  int32_t threads = 1;
  memory::desc plainSource, plainFilter, plainDestination, plainBias;
  dnnl::convolution_forward::primitive_desc pd;
  dnnl::convolution_forward conv;
  /// Reorders plain <-> chosen layouts; only those that differ.
  bool reorderSource = false, reorderFilter = false, reorderDestination = false;
  dnnl::reorder sourceIn, filterIn, destinationIn, destinationOut;
  /// The constant filter in the chosen layout, and the pointer it came from.
  const float *constantFilter = nullptr;
  memory reorderedFilter;
};

/// Slot address -> what it holds, for release().
std::mutex registryMutex;
std::unordered_map<int64_t *, PreparedConv *> registry;

/// Makes the calling thread's OpenMP teams `threads` wide (what oneDNN
/// both plans for and runs with).
void useThreads(int32_t threads) {
  ThreadContext &context = threadContext();
  if (threads != context.threads && omp_set_num_threads) {
    omp_set_num_threads(threads);
    context.threads = threads;
  }
}

std::unique_ptr<PreparedConv> prepare(const int64_t *d, const float *filter,
                                      int32_t threads) {
  useThreads(threads);
  auto p = std::make_unique<PreparedConv>();
  p->threads = threads;
  std::copy(d, d + LOOM_CONV_DESC_SIZE, p->desc.begin());
  int64_t n = d[LOOM_CONV_N], c = d[LOOM_CONV_C], f = d[LOOM_CONV_F],
          g = d[LOOM_CONV_GROUPS];
  memory::dims source{n, c, d[LOOM_CONV_H], d[LOOM_CONV_W]};
  memory::dims destination{n, f, d[LOOM_CONV_OH], d[LOOM_CONV_OW]};
  memory::dims filterDims =
      g == 1 ? memory::dims{f, c, d[LOOM_CONV_KH], d[LOOM_CONV_KW]}
             : memory::dims{g, f / g, c / g, d[LOOM_CONV_KH], d[LOOM_CONV_KW]};
  auto f32 = memory::data_type::f32;
  p->plainSource = memory::desc(source, f32, Tag::nchw);
  p->plainDestination = memory::desc(destination, f32, Tag::nchw);
  p->plainFilter =
      memory::desc(filterDims, f32, g == 1 ? Tag::oihw : Tag::goihw);

  // oneDNN counts dilation from 0 (1 means one gap).
  int64_t flags = d[LOOM_CONV_FLAGS];
  memory::dims strides{d[LOOM_CONV_STRIDE_H], d[LOOM_CONV_STRIDE_W]};
  memory::dims dilations{d[LOOM_CONV_DILATION_H] - 1,
                         d[LOOM_CONV_DILATION_W] - 1};
  memory::dims padLeft{d[LOOM_CONV_PAD_TOP], d[LOOM_CONV_PAD_LEFT]};
  memory::dims padRight{d[LOOM_CONV_PAD_BOTTOM], d[LOOM_CONV_PAD_RIGHT]};
  memory::desc anySource(source, f32, Tag::any);
  memory::desc anyFilter(filterDims, f32, Tag::any);
  memory::desc anyDestination(destination, f32, Tag::any);
  p->plainBias = memory::desc({f}, f32, Tag::a);
  auto conv =
      (flags & LOOM_CONV_BIAS)
          ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                            dnnl::algorithm::convolution_direct,
                                            anySource, anyFilter, p->plainBias,
                                            anyDestination, strides, dilations,
                                            padLeft, padRight)
          : dnnl::convolution_forward::desc(
                dnnl::prop_kind::forward_inference,
                dnnl::algorithm::convolution_direct, anySource, anyFilter,
                anyDestination, strides, dilations, padLeft, padRight);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  // linalg's order: the accumulated output, then the epilogue's ReLU.
  dnnl::post_ops ops;
  if (flags & LOOM_CONV_ACCUMULATE)
    ops.append_sum(1.0f);
  if (flags & LOOM_CONV_RELU)
    ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
  attr.set_post_ops(ops);
  dnnl::engine &engine = cpuEngine();
  p->pd = dnnl::convolution_forward::primitive_desc(conv, attr, engine);
  p->conv = dnnl::convolution_forward(p->pd);

  if (p->pd.src_desc() != p->plainSource) {
    p->reorderSource = true;
    p->sourceIn = dnnl::reorder(dnnl::reorder::primitive_desc(
        engine, p->plainSource, engine, p->pd.src_desc()));
  }
  if (p->pd.weights_desc() != p->plainFilter) {
    p->reorderFilter = true;
    p->filterIn = dnnl::reorder(dnnl::reorder::primitive_desc(
        engine, p->plainFilter, engine, p->pd.weights_desc()));
  }
  if (p->pd.dst_desc() != p->plainDestination) {
    p->reorderDestination = true;
    p->destinationIn = dnnl::reorder(dnnl::reorder::primitive_desc(
        engine, p->plainDestination, engine, p->pd.dst_desc()));
    p->destinationOut = dnnl::reorder(dnnl::reorder::primitive_desc(
        engine, p->pd.dst_desc(), engine, p->plainDestination));
  }
  if ((d[LOOM_CONV_FLAGS] & LOOM_CONV_CONSTANT_FILTER) && p->reorderFilter) {
    ThreadContext &context = threadContext();
    p->reorderedFilter = memory(p->pd.weights_desc(), engine);
    memory plain(p->plainFilter, engine, const_cast<float *>(filter));
    p->filterIn.execute(context.stream, plain, p->reorderedFilter);
    context.stream.wait();
    p->constantFilter = filter;
  }
  return p;
}

/// The call site's prepared convolution, made on its first call (a race
/// between threads leaves one, the others' are dropped).
PreparedConv &prepared(const int64_t *desc, const float *filter, int64_t *slot,
                       int32_t threads) {
  auto *published =
      reinterpret_cast<PreparedConv *>(__atomic_load_n(slot, __ATOMIC_ACQUIRE));
  if (published)
    return *published;
  std::unique_ptr<PreparedConv> mine = prepare(desc, filter, threads);
  int64_t expected = 0;
  if (__atomic_compare_exchange_n(slot, &expected,
                                  reinterpret_cast<int64_t>(mine.get()), false,
                                  __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    std::lock_guard<std::mutex> lock(registryMutex);
    registry[slot] = mine.get();
    return *mine.release();
  }
  return *reinterpret_cast<PreparedConv *>(expected);
}

/// One call with what `p` prepared.
void execute(const PreparedConv &p, const float *in, const float *filter,
             const float *bias, float *out) {
  ThreadContext &context = threadContext();
  dnnl::engine &engine = cpuEngine();
  dnnl::stream &stream = context.stream;

  memory source(p.plainSource, engine, const_cast<float *>(in));
  if (p.reorderSource) {
    memory blocked(p.pd.src_desc(), engine,
                   context.source.get(p.pd.src_desc().get_size()));
    p.sourceIn.execute(stream, source, blocked);
    source = blocked;
  }
  memory weights(p.plainFilter, engine, const_cast<float *>(filter));
  if (p.reorderFilter) {
    if (p.constantFilter == filter) {
      weights = p.reorderedFilter;
    } else {
      memory blocked(p.pd.weights_desc(), engine,
                     context.filter.get(p.pd.weights_desc().get_size()));
      p.filterIn.execute(stream, weights, blocked);
      weights = blocked;
    }
  }
  memory plainOut(p.plainDestination, engine, out);
  memory destination = plainOut;
  if (p.reorderDestination) {
    destination = memory(p.pd.dst_desc(), engine,
                         context.destination.get(p.pd.dst_desc().get_size()));
    if (p.desc[LOOM_CONV_FLAGS] & LOOM_CONV_ACCUMULATE)
      p.destinationIn.execute(stream, plainOut, destination);
  }
  memory scratchpad(p.pd.scratchpad_desc(), engine,
                    context.scratchpad.get(std::max<size_t>(
                        64, p.pd.scratchpad_desc().get_size())));
  std::unordered_map<int, memory> arguments{{DNNL_ARG_SRC, source},
                                            {DNNL_ARG_WEIGHTS, weights},
                                            {DNNL_ARG_DST, destination},
                                            {DNNL_ARG_SCRATCHPAD, scratchpad}};
  if (p.desc[LOOM_CONV_FLAGS] & LOOM_CONV_BIAS)
    arguments.emplace(DNNL_ARG_BIAS,
                      memory(p.plainBias, engine, const_cast<float *>(bias)));
  p.conv.execute(stream, arguments);
  if (p.reorderDestination)
    p.destinationOut.execute(stream, destination, plainOut);
  stream.wait();
}

void run(const float *in, const float *filter, const float *bias, float *out,
         const int64_t *desc, int64_t *slot, int32_t threads) {
  PreparedConv *p = &prepared(desc, filter, slot, threads);
  if (!std::equal(p->desc.begin(), p->desc.end(), desc))
    throw std::runtime_error("the call site's descriptor changed");
  // The same code run with another thread count (a second engine load with
  // other options shares nothing, so this is only code run outside the
  // runtime): prepared for this call alone.
  std::unique_ptr<PreparedConv> once;
  if (p->threads != threads) {
    once = prepare(desc, filter, threads);
    p = once.get();
  }
  useThreads(threads);
  execute(*p, in, filter, bias, out);
}

} // namespace

extern "C" {

__attribute__((visibility("default"))) const char *loom_onednn_version(void) {
  static const std::string version = [] {
    const dnnl_version_t *v = dnnl_version();
    return "oneDNN " + std::to_string(v->major) + "." +
           std::to_string(v->minor) + "." + std::to_string(v->patch);
  }();
  return version.c_str();
}

__attribute__((visibility("default"))) int
loom_onednn_conv2d_f32(const float *in, const float *filter, const float *bias,
                       float *out, const int64_t *desc, int64_t *slot,
                       int32_t threads, char *error, size_t error_size) {
  auto fail = [&](const char *what) {
    std::snprintf(error, error_size, "%s", what);
    return 1;
  };
  if (desc[LOOM_CONV_VERSION] != LOOM_CONV_DESC_VERSION)
    return fail("the code's convolution descriptor has an unknown version");
  try {
    if ((desc[LOOM_CONV_FLAGS] & LOOM_CONV_BIAS) && !bias)
      return fail("the convolution's bias is null");
    run(in, filter, bias, out, desc, slot, threads);
  } catch (const dnnl::error &e) {
    std::string message = std::string(e.what()) + " (status " +
                          std::to_string(int(e.status)) + ")";
    return fail(message.c_str());
  } catch (const std::exception &e) {
    return fail(e.what());
  }
  return 0;
}

__attribute__((visibility("default"))) void
loom_onednn_release(const void *begin, const void *end) {
  std::lock_guard<std::mutex> lock(registryMutex);
  for (auto it = registry.begin(); it != registry.end();) {
    const void *slot = it->first;
    if (slot >= begin && slot < end) {
      delete it->second;
      it = registry.erase(it);
    } else {
      ++it;
    }
  }
}

} // extern "C"
