//===- runtime_module.cpp - loom._runtime: the runtime's C API in Python --===//
//
// A thin layer over runtime/include/loom/runtime.h. It checks every buffer
// against the engine's descriptors before the runtime sees a pointer (the C
// API trusts its caller about sizes; Python callers get an exception
// instead), releases the GIL while engines run, and hands outputs whose size
// the data decides to NumPy without a copy. Feeds by name, dtypes, DLPack
// and the onnxruntime-style session are policy, kept in Python (loom/).
//
//===----------------------------------------------------------------------===//

#include "loom/runtime.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace nb = nanobind;

namespace {

using InputArray = nb::ndarray<nb::ro, nb::device::cpu>;
using OutputArray = nb::ndarray<nb::device::cpu>;

/// Raises loom.LoomError (its subclass for the status) with the runtime's
/// message for the failure that returned `status` on this thread.
[[noreturn]] void raiseStatus(loom_status status, const std::string &context) {
  std::string message = loom_last_error();
  if (!context.empty())
    message = context + ": " + message;
  nb::object errors = nb::module_::import_("loom._errors");
  nb::object error = errors.attr("from_status")(
      static_cast<int>(status), loom_status_name(status), message);
  PyErr_SetObject(reinterpret_cast<PyObject *>(Py_TYPE(error.ptr())),
                  error.ptr());
  throw nb::python_error();
}

/// The DLPack element type of a runtime dtype. bfloat16 is exchanged as its
/// 16-bit pattern (NumPy has no bfloat16); the Python layer says so.
nb::dlpack::dtype dlpackType(loom_dtype dtype) {
  using Code = nb::dlpack::dtype_code;
  auto make = [](Code code, int bits) {
    return nb::dlpack::dtype{static_cast<uint8_t>(code),
                             static_cast<uint8_t>(bits), 1};
  };
  switch (dtype) {
  case LOOM_DTYPE_F16:
    return make(Code::Float, 16);
  case LOOM_DTYPE_BF16:
  case LOOM_DTYPE_U16:
    return make(Code::UInt, 16);
  case LOOM_DTYPE_F32:
    return make(Code::Float, 32);
  case LOOM_DTYPE_F64:
    return make(Code::Float, 64);
  case LOOM_DTYPE_BOOL:
    return make(Code::Bool, 8);
  case LOOM_DTYPE_I8:
    return make(Code::Int, 8);
  case LOOM_DTYPE_I16:
    return make(Code::Int, 16);
  case LOOM_DTYPE_I32:
    return make(Code::Int, 32);
  case LOOM_DTYPE_I64:
    return make(Code::Int, 64);
  case LOOM_DTYPE_U8:
    return make(Code::UInt, 8);
  case LOOM_DTYPE_U32:
    return make(Code::UInt, 32);
  case LOOM_DTYPE_U64:
    return make(Code::UInt, 64);
  // NumPy has none of these: their bytes, one element each.
  case LOOM_DTYPE_F8E4M3FN:
  case LOOM_DTYPE_F8E4M3FNUZ:
  case LOOM_DTYPE_F8E5M2:
  case LOOM_DTYPE_F8E5M2FNUZ:
  case LOOM_DTYPE_F4E2M1FN:
  case LOOM_DTYPE_F8E8M0FNU:
  case LOOM_DTYPE_U4:
  case LOOM_DTYPE_U2:
    return make(Code::UInt, 8);
  case LOOM_DTYPE_I4:
  case LOOM_DTYPE_I2:
    return make(Code::Int, 8);
  case LOOM_DTYPE_MAX_ENUM:
    break;
  }
  return make(Code::UInt, 8);
}

bool sameType(nb::dlpack::dtype a, nb::dlpack::dtype b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

std::string shapeString(const int64_t *dims, int64_t rank) {
  std::string text = "(";
  for (int64_t i = 0; i < rank; ++i) {
    if (i)
      text += ", ";
    text += dims[i] == LOOM_DYNAMIC_DIM ? "?" : std::to_string(dims[i]);
  }
  return text + (rank == 1 ? ",)" : ")");
}

template <typename Array> bool isRowMajor(const Array &array) {
  int64_t expected = 1;
  for (size_t i = array.ndim(); i-- > 0;) {
    if (array.shape(i) != 1 && array.stride(i) != expected)
      return false;
    expected *= static_cast<int64_t>(array.shape(i));
  }
  return true;
}

/// Checks `array` against `desc`: dtype, rank, the static dimensions, a
/// dense row-major layout. Raises ValueError / TypeError naming the tensor.
template <typename Array>
void checkArray(const Array &array, const loom_tensor_desc &desc,
                const char *role) {
  std::string what = std::string(role) + " '" + desc.name + "'";
  if (!sameType(array.dtype(), dlpackType(desc.dtype)))
    throw nb::type_error((what + " must have dtype " +
                          loom_dtype_name(desc.dtype) +
                          " (the engine's); convert it first")
                             .c_str());
  std::vector<int64_t> shape(array.ndim());
  for (size_t i = 0; i < array.ndim(); ++i)
    shape[i] = static_cast<int64_t>(array.shape(i));
  bool matches = static_cast<int32_t>(array.ndim()) == desc.rank;
  for (int32_t i = 0; matches && i < desc.rank; ++i)
    matches = desc.dims[i] == LOOM_DYNAMIC_DIM ? shape[i] < (int64_t{1} << 31)
                                               : desc.dims[i] == shape[i];
  if (!matches)
    throw nb::value_error(
        (what + " has shape " + shapeString(shape.data(), shape.size()) +
         ", but the engine takes " + shapeString(desc.dims, desc.rank))
            .c_str());
  if (!isRowMajor(array))
    throw nb::value_error(
        (what + " must be C-contiguous (dense, row-major)").c_str());
}

/// One rank's argument arrays for one call, in the C API's form: pointers
/// to the data, to loom_shaped_input for inputs with symbolic dimensions,
/// and to loom_dynamic_output for outputs whose size the data decides.
struct RankCall {
  std::vector<loom_shaped_input> shapedInputs;
  std::vector<loom_dynamic_output> dynamicOutputs;
  std::vector<const void *> inputs;
  std::vector<void *> outputs;

  RankCall() = default;
  RankCall(const RankCall &) = delete;
  RankCall &operator=(const RankCall &) = delete;
  RankCall(RankCall &&) = default;
  ~RankCall() {
    for (loom_dynamic_output &output : dynamicOutputs)
      loom_buffer_free(output.data);
  }
};

/// Builds rank `rank`'s call. `outputs[i]` is null exactly for outputs whose
/// shape is dynamic; `stateInputs` (a session's) may be null entries.
void prepareCall(loom_engine *engine, int32_t rank,
                 const std::vector<std::optional<InputArray>> &inputs,
                 const std::vector<std::optional<OutputArray>> &outputs,
                 RankCall &call, bool allowMissingState) {
  int32_t numInputs = loom_engine_num_inputs(engine, rank);
  int32_t numOutputs = loom_engine_num_outputs(engine, rank);
  if (static_cast<int32_t>(inputs.size()) != numInputs)
    throw nb::value_error(("the engine takes " + std::to_string(numInputs) +
                           " inputs, but " + std::to_string(inputs.size()) +
                           " were given")
                              .c_str());
  if (static_cast<int32_t>(outputs.size()) != numOutputs)
    throw nb::value_error(("the engine has " + std::to_string(numOutputs) +
                           " outputs, but " + std::to_string(outputs.size()) +
                           " buffers were given")
                              .c_str());
  // Reserve first: the pointers below point into these vectors.
  call.shapedInputs.reserve(numInputs);
  call.dynamicOutputs.reserve(numOutputs);
  for (int32_t i = 0; i < numInputs; ++i) {
    const loom_tensor_desc &desc = *loom_engine_input(engine, rank, i);
    if (!inputs[i]) {
      if (!allowMissingState ||
          loom_engine_input_state_axis(engine, rank, i) < 0)
        throw nb::value_error(
            (std::string("input '") + desc.name + "' is missing").c_str());
      call.inputs.push_back(nullptr);
      continue;
    }
    const InputArray &array = *inputs[i];
    checkArray(array, desc, "input");
    bool symbolic = false;
    for (int32_t d = 0; d < desc.rank; ++d)
      symbolic |= desc.dims[d] == LOOM_DYNAMIC_DIM;
    if (!symbolic) {
      call.inputs.push_back(array.data());
      continue;
    }
    loom_shaped_input shaped{};
    shaped.data = array.data();
    shaped.rank = desc.rank;
    for (int32_t d = 0; d < desc.rank; ++d)
      shaped.dims[d] = static_cast<int64_t>(array.shape(d));
    call.shapedInputs.push_back(shaped);
    call.inputs.push_back(&call.shapedInputs.back());
  }
  for (int32_t i = 0; i < numOutputs; ++i) {
    const loom_tensor_desc &desc = *loom_engine_output(engine, rank, i);
    if (loom_tensor_desc_is_dynamic(&desc)) {
      call.dynamicOutputs.push_back(loom_dynamic_output{});
      call.outputs.push_back(&call.dynamicOutputs.back());
      continue;
    }
    if (!outputs[i])
      throw nb::value_error(
          (std::string("no buffer for output '") + desc.name + "'").c_str());
    checkArray(*outputs[i], desc, "output buffer");
    call.outputs.push_back(outputs[i]->data());
  }
}

/// The outputs whose size the data decided, as NumPy arrays owning the
/// runtime's buffers (None in the place of every other output).
nb::list takeDynamicOutputs(loom_engine *engine, int32_t rank, RankCall &call) {
  nb::list result;
  size_t next = 0;
  int32_t numOutputs = loom_engine_num_outputs(engine, rank);
  for (int32_t i = 0; i < numOutputs; ++i) {
    const loom_tensor_desc &desc = *loom_engine_output(engine, rank, i);
    if (!loom_tensor_desc_is_dynamic(&desc)) {
      result.append(nb::none());
      continue;
    }
    loom_dynamic_output &output = call.dynamicOutputs[next++];
    std::vector<size_t> shape(output.dims, output.dims + output.rank);
    void *data = output.data;
    output.data = nullptr;
    nb::capsule owner(data, [](void *p) noexcept { loom_buffer_free(p); });
    result.append(nb::ndarray<nb::numpy>(data, shape.size(), shape.data(),
                                         owner, nullptr, dlpackType(desc.dtype))
                      .cast());
  }
  return result;
}

nb::dict describe(const loom_tensor_desc &desc, int32_t stateAxis) {
  nb::dict info;
  info["name"] = desc.name;
  info["dtype"] = loom_dtype_name(desc.dtype);
  nb::list shape;
  for (int32_t d = 0; d < desc.rank; ++d)
    shape.append(desc.dims[d] == LOOM_DYNAMIC_DIM
                     ? nb::object(nb::none())
                     : nb::object(nb::int_(desc.dims[d])));
  info["shape"] = nb::tuple(shape);
  info["byte_size"] = desc.byte_size;
  info["state_axis"] = stateAxis;
  return info;
}

class Engine {
public:
  Engine(const std::string &path, int32_t threads, bool verifyDigest,
         std::optional<nb::bytes> trustedKey) {
    loom_load_options options;
    loom_load_options_init(&options);
    options.threads = threads;
    options.verify_digest = verifyDigest ? 1 : 0;
    if (trustedKey) {
      if (trustedKey->size() != 32)
        throw nb::value_error(
            "trusted_key must be a 32-byte Ed25519 public key");
      options.trusted_public_key =
          reinterpret_cast<const uint8_t *>(trustedKey->c_str());
    }
    loom_status status;
    {
      nb::gil_scoped_release release;
      status = loom_engine_load(path.c_str(), &options, &engine);
    }
    if (status != LOOM_OK)
      raiseStatus(status, "");
  }
  ~Engine() { loom_engine_free(engine); }
  Engine(const Engine &) = delete;
  Engine &operator=(const Engine &) = delete;

  loom_engine *get() const { return engine; }

  int32_t numRanks() const { return loom_engine_num_ranks(engine); }

  void checkRank(int32_t rank) const {
    if (rank < 0 || rank >= numRanks())
      throw nb::index_error(("rank " + std::to_string(rank) +
                             " is out of range: the engine has " +
                             std::to_string(numRanks()) + " ranks")
                                .c_str());
  }

  nb::list inputs(int32_t rank) const {
    checkRank(rank);
    nb::list list;
    for (int32_t i = 0; i < loom_engine_num_inputs(engine, rank); ++i)
      list.append(describe(*loom_engine_input(engine, rank, i),
                           loom_engine_input_state_axis(engine, rank, i)));
    return list;
  }

  nb::list outputs(int32_t rank) const {
    checkRank(rank);
    nb::list list;
    for (int32_t i = 0; i < loom_engine_num_outputs(engine, rank); ++i)
      list.append(describe(*loom_engine_output(engine, rank, i), -1));
    return list;
  }

  std::vector<int64_t> grid() const {
    int32_t rank = 0;
    int64_t dims[LOOM_MAX_RANK];
    loom_engine_grid(engine, &rank, dims);
    return std::vector<int64_t>(dims, dims + rank);
  }

  /// Runs every rank (on threads when there are several) `iterations` times
  /// with the same buffers; returns each run's wall time in nanoseconds and
  /// the last run's dynamic outputs per rank.
  std::pair<std::vector<int64_t>, nb::list>
  run(const std::vector<std::vector<std::optional<InputArray>>> &inputs,
      const std::vector<std::vector<std::optional<OutputArray>>> &outputs,
      int64_t iterations, int64_t timeoutMs) {
    int32_t ranks = numRanks();
    if (static_cast<int32_t>(inputs.size()) != ranks ||
        static_cast<int32_t>(outputs.size()) != ranks)
      throw nb::value_error("one list of inputs and outputs per rank expected");
    std::vector<RankCall> calls(ranks);
    for (int32_t r = 0; r < ranks; ++r)
      prepareCall(engine, r, inputs[r], outputs[r], calls[r], false);
    std::vector<const void *const *> rankInputs;
    std::vector<void *const *> rankOutputs;
    for (RankCall &call : calls) {
      rankInputs.push_back(call.inputs.data());
      rankOutputs.push_back(call.outputs.data());
    }
    loom_execute_options options;
    loom_execute_options_init(&options);
    if (timeoutMs > 0)
      options.timeout_ms = timeoutMs;
    std::vector<int64_t> times;
    loom_status status = LOOM_OK;
    {
      nb::gil_scoped_release release;
      for (int64_t i = 0; i < iterations && status == LOOM_OK; ++i) {
        // A dynamic output of an earlier iteration is released before the
        // next one replaces it.
        if (i > 0)
          for (RankCall &call : calls)
            for (loom_dynamic_output &output : call.dynamicOutputs) {
              loom_buffer_free(output.data);
              output = loom_dynamic_output{};
            }
        auto start = std::chrono::steady_clock::now();
        status =
            ranks == 1
                ? loom_engine_execute(engine, 0, rankInputs[0], rankOutputs[0])
                : loom_engine_execute_ranks(engine, rankInputs.data(),
                                            rankOutputs.data(), &options);
        auto end = std::chrono::steady_clock::now();
        times.push_back(
            std::chrono::duration_cast<std::chrono::nanoseconds>(end - start)
                .count());
      }
    }
    if (status != LOOM_OK)
      raiseStatus(status, "");
    nb::list dynamic;
    for (int32_t r = 0; r < ranks; ++r)
      dynamic.append(takeDynamicOutputs(engine, r, calls[r]));
    return {times, dynamic};
  }

  /// Per program compiled for one static shape of every input (loomc
  /// --profile's OPT), its inputs' descriptors.
  nb::list variants(int32_t rank) const {
    checkRank(rank);
    nb::list list;
    for (int32_t v = 0; v < loom_engine_num_variants(engine, rank); ++v) {
      nb::list inputs;
      for (int32_t i = 0; i < loom_engine_num_inputs(engine, rank); ++i)
        inputs.append(
            describe(*loom_engine_variant_input(engine, rank, v, i), -1));
      list.append(inputs);
    }
    return list;
  }

  int32_t lastVariant(int32_t rank) const {
    checkRank(rank);
    return loom_engine_last_variant(engine, rank);
  }

  void collectKernelTimes(bool enable) {
    loom_engine_collect_kernel_times(engine, enable ? 1 : 0);
  }

  nb::list kernelTimes(int32_t rank) const {
    checkRank(rank);
    size_t count = 0;
    loom_status status =
        loom_engine_kernel_times(engine, rank, nullptr, 0, &count);
    if (status != LOOM_OK)
      raiseStatus(status, "");
    std::vector<loom_kernel_time> times(count);
    status =
        loom_engine_kernel_times(engine, rank, times.data(), count, &count);
    if (status != LOOM_OK)
      raiseStatus(status, "");
    nb::list list;
    for (size_t i = 0; i < count; ++i) {
      nb::dict entry;
      entry["label"] = times[i].label;
      entry["calls"] = times[i].calls;
      entry["nanoseconds"] = times[i].nanoseconds;
      entry["flops"] = times[i].flops;
      entry["bytes"] = times[i].bytes;
      list.append(entry);
    }
    return list;
  }

  nb::dict collectiveStats(int32_t rank) const {
    checkRank(rank);
    loom_collective_stats stats[LOOM_COLLECTIVE_KINDS];
    loom_status status = loom_engine_collective_stats(engine, rank, stats);
    if (status != LOOM_OK)
      raiseStatus(status, "");
    nb::dict kinds;
    for (int32_t k = 0; k < LOOM_COLLECTIVE_KINDS; ++k) {
      if (!stats[k].calls)
        continue;
      nb::dict entry;
      entry["calls"] = stats[k].calls;
      entry["buffer_bytes"] = stats[k].buffer_bytes;
      entry["ring_bytes_sent"] = stats[k].ring_bytes_sent;
      kinds[loom_collective_kind_name(loom_collective_kind(k))] = entry;
    }
    return kinds;
  }

private:
  loom_engine *engine = nullptr;
};

/// A decoder's key/value cache kept in the runtime between calls
/// (loom_session_*); holds a reference to its engine.
class Session {
public:
  Session(nb::object engineObject, int64_t batch)
      : engineObject(std::move(engineObject)) {
    Engine &engine = nb::cast<Engine &>(this->engineObject);
    loom_status status = loom_session_create(engine.get(), batch, &session);
    if (status != LOOM_OK)
      raiseStatus(status, "");
  }
  ~Session() { loom_session_free(session); }
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;

  /// One step: `inputs[r]` and `outputs[r]` are rank r's (one rank, or
  /// every rank of a partitioned engine, each with its own state); the
  /// result holds each rank's dynamic outputs.
  nb::list
  run(const std::vector<std::vector<std::optional<InputArray>>> &inputs,
      const std::vector<std::vector<std::optional<OutputArray>>> &outputs) {
    loom_engine *engine = nb::cast<Engine &>(engineObject).get();
    int32_t ranks = loom_engine_num_ranks(engine);
    if (static_cast<int32_t>(inputs.size()) != ranks ||
        static_cast<int32_t>(outputs.size()) != ranks)
      throw nb::value_error("one list of inputs and outputs per rank expected");
    std::vector<RankCall> calls(ranks);
    std::vector<const void *const *> rankInputs;
    std::vector<void *const *> rankOutputs;
    for (int32_t r = 0; r < ranks; ++r) {
      prepareCall(engine, r, inputs[r], outputs[r], calls[r], true);
      rankInputs.push_back(calls[r].inputs.data());
      rankOutputs.push_back(calls[r].outputs.data());
    }
    loom_status status;
    {
      nb::gil_scoped_release release;
      status =
          ranks == 1
              ? loom_session_execute(session, rankInputs[0], rankOutputs[0])
              : loom_session_execute_ranks(session, rankInputs.data(),
                                           rankOutputs.data(), nullptr);
    }
    if (status != LOOM_OK)
      raiseStatus(status, "");
    nb::list dynamic;
    for (int32_t r = 0; r < ranks; ++r)
      dynamic.append(takeDynamicOutputs(engine, r, calls[r]));
    return dynamic;
  }

  void reset() { loom_session_reset(session); }

private:
  nb::object engineObject;
  loom_session *session = nullptr;
};

} // namespace

NB_MODULE(_runtime, m) {
  m.doc() = "Loom's runtime (runtime/include/loom/runtime.h); use the "
            "`loom` package rather than this module.";

  nb::class_<Engine>(m, "Engine")
      .def(nb::init<const std::string &, int32_t, bool,
                    std::optional<nb::bytes>>(),
           nb::arg("path"), nb::arg("threads") = 1,
           nb::arg("verify_digest") = true,
           nb::arg("trusted_key").none() = nb::none(),
           "Loads and verifies an engine file (with `trusted_key`, a 32-byte "
           "Ed25519 public key, only an engine it signed).")
      .def_prop_ro("target",
                   [](const Engine &e) { return loom_engine_target(e.get()); })
      .def_prop_ro(
          "compiler_version",
          [](const Engine &e) { return loom_engine_compiler_version(e.get()); })
      .def_prop_ro("num_ranks", &Engine::numRanks)
      .def_prop_ro("grid", &Engine::grid)
      .def("inputs", &Engine::inputs, nb::arg("rank") = 0,
           "Rank `rank`'s inputs: dicts of name, dtype, shape (None for a "
           "symbolic dimension), byte_size, state_axis.")
      .def("outputs", &Engine::outputs, nb::arg("rank") = 0)
      .def("run", &Engine::run, nb::arg("inputs"), nb::arg("outputs"),
           nb::arg("iterations") = 1, nb::arg("timeout_ms") = 0,
           "Runs every rank `iterations` times; returns the run times (ns) "
           "and, per rank, the outputs whose size the data decided.")
      .def("variants", &Engine::variants, nb::arg("rank") = 0,
           "Rank `rank`'s programs compiled for one shape of every input "
           "(loomc --profile's OPT): per program, its inputs' dicts.")
      .def("last_variant", &Engine::lastVariant, nb::arg("rank") = 0,
           "The program rank `rank`'s last call ran: an index into "
           "variants(), or -1 for the general code.")
      .def("collect_kernel_times", &Engine::collectKernelTimes,
           nb::arg("enable"))
      .def("kernel_times", &Engine::kernelTimes, nb::arg("rank") = 0)
      .def("collective_stats", &Engine::collectiveStats, nb::arg("rank") = 0,
           "Rank `rank`'s collectives in its last call, by kind: calls, "
           "buffer_bytes, ring_bytes_sent.");

  nb::class_<Session>(m, "Session")
      .def(nb::init<nb::object, int64_t>(), nb::arg("engine"), nb::arg("batch"))
      .def("run", &Session::run, nb::arg("inputs"), nb::arg("outputs"))
      .def("reset", &Session::reset);
}
