//===- loom-exec.cpp - Run an engine with the runtime alone ---------------===//
//
// Engines are compiled where LLVM and MLIR are (loomc) and run where they
// may not be: a GPU machine with the runtime library only. loom-exec is the
// runner for that machine. It links libloom_runtime and the C++ standard
// library, nothing else, so it reads and writes tensors as .npy files with
// its own small reader (Npy.h) rather than the compiler's TensorIO (which needs
// LLVM). It feeds rank 0 of an engine, compares the outputs with expected
// ones, and times repeated runs.
//
//   loom-exec model.engine --inputs in/ --expected ref/ --iterations 100
//
// Exit status: 0 when everything ran (and matched), 1 when an output
// differs from its expected file, 2 on any error (bad arguments, unreadable
// or mismatched files, a runtime failure).
//
//===----------------------------------------------------------------------===//

#include "Npy.h"

#include "loom/device.h"
#include "loom/runtime.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace loom::exec;

const char *const kUsage =
    "usage: loom-exec ENGINE [--inputs DIR] [--expected DIR] [--rtol R]\n"
    "                 [--atol A] [--iterations N] [--warmup W]\n"
    "                 [--outputs DIR] [--trusted-key FILE] [--list-devices]\n"
    "\n"
    "Runs an engine compiled by loomc with the runtime library alone (rank 0\n"
    "of a single-rank engine).\n"
    "\n"
    "  --inputs DIR      input_0.npy, input_1.npy, ... in the engine's input\n"
    "                    order (without it: zero-filled inputs, for timing)\n"
    "  --expected DIR    compare output_N.npy with output N: |got - want| <=\n"
    "                    atol + rtol * |want| (integers exactly)\n"
    "  --rtol R          relative tolerance (default 1e-4)\n"
    "  --atol A          absolute tolerance (default 1e-5)\n"
    "  --outputs DIR     write output N as DIR/output_N.npy\n"
    "  --iterations N    after the checked run, time N runs (default 0)\n"
    "  --warmup W        untimed runs before the timed ones (default 3)\n"
    "  --trusted-key FILE  refuse the engine unless this public key's secret\n"
    "                    key signed it (loomc --sign; 64 hex digits)\n"
    "  --list-devices    print the devices the runtime sees, and exit\n"
    "\n"
    "Exit status: 0 ran (and matched), 1 an output differs, 2 an error.\n";

constexpr int kExitMismatch = 1;
constexpr int kExitError = 2;

struct Options {
  std::string engine;
  std::string inputs;
  std::string expected;
  std::string outputs;
  std::string trustedKey;
  double rtol = 1e-4;
  double atol = 1e-5;
  int64_t iterations = 0;
  int64_t warmup = 3;
  bool listDevices = false;
  bool help = false;
};

// Errors flush stdout first, so that a log of both reads in order.
int fail(const std::string &message) {
  std::fflush(stdout);
  std::fprintf(stderr, "loom-exec: error: %s\n", message.c_str());
  return kExitError;
}

int failRuntime(loom_status status) {
  std::fflush(stdout);
  std::fprintf(stderr, "loom-exec: error: %s: %s\n", loom_status_name(status),
               loom_last_error());
  return kExitError;
}

//===----------------------------------------------------------------------===//
// Command line
//===----------------------------------------------------------------------===//

bool parseInt(const std::string &text, int64_t &value) {
  if (text.empty())
    return false;
  char *end = nullptr;
  errno = 0;
  long long parsed = std::strtoll(text.c_str(), &end, 10);
  if (errno || *end || parsed < 0)
    return false;
  value = parsed;
  return true;
}

bool parseDouble(const std::string &text, double &value) {
  if (text.empty())
    return false;
  char *end = nullptr;
  errno = 0;
  double parsed = std::strtod(text.c_str(), &end);
  if (errno || *end || !(parsed >= 0) || std::isinf(parsed))
    return false;
  value = parsed;
  return true;
}

/// Parses argv into `options`; "" on success, else the complaint.
std::string parseArguments(int argc, char **argv, Options &options) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      options.help = true;
      continue;
    }
    if (arg == "--list-devices") {
      options.listDevices = true;
      continue;
    }
    if (arg.size() < 2 || arg.compare(0, 2, "--") != 0) {
      if (!options.engine.empty())
        return "more than one engine given ('" + options.engine + "' and '" +
               arg + "')";
      options.engine = arg;
      continue;
    }
    // Both "--flag VALUE" and "--flag=VALUE".
    std::string flag = arg, value;
    size_t equals = arg.find('=');
    if (equals != std::string::npos) {
      flag = arg.substr(0, equals);
      value = arg.substr(equals + 1);
    } else {
      if (flag != "--inputs" && flag != "--expected" && flag != "--outputs" &&
          flag != "--rtol" && flag != "--atol" && flag != "--iterations" &&
          flag != "--warmup" && flag != "--trusted-key")
        return "unknown option '" + arg + "'";
      if (i + 1 >= argc)
        return "missing value after '" + flag + "'";
      value = argv[++i];
    }
    if (flag == "--inputs")
      options.inputs = value;
    else if (flag == "--expected")
      options.expected = value;
    else if (flag == "--outputs")
      options.outputs = value;
    else if (flag == "--trusted-key")
      options.trustedKey = value;
    else if (flag == "--rtol" || flag == "--atol") {
      if (!parseDouble(value, flag == "--rtol" ? options.rtol : options.atol))
        return "'" + flag + "' takes a non-negative number, not '" + value +
               "'";
    } else if (flag == "--iterations" || flag == "--warmup") {
      if (!parseInt(value, flag == "--iterations" ? options.iterations
                                                  : options.warmup))
        return "'" + flag + "' takes a non-negative integer, not '" + value +
               "'";
    } else {
      return "unknown option '" + arg + "'";
    }
  }
  return "";
}

/// Reads a public key file (one line of 64 hex digits, as loomc
/// --generate-signing-key writes it) into `key`; the error, or "".
std::string readPublicKey(const std::string &path, uint8_t key[32]) {
  std::ifstream file(path);
  std::string text;
  if (!file || !(file >> text))
    return "cannot read the public key '" + path + "'";
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9')
      return c - '0';
    if (c >= 'a' && c <= 'f')
      return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
      return c - 'A' + 10;
    return -1;
  };
  bool valid = text.size() == 64;
  for (size_t i = 0; valid && i < 32; ++i) {
    int high = digit(text[2 * i]), low = digit(text[2 * i + 1]);
    valid = high >= 0 && low >= 0;
    key[i] = static_cast<uint8_t>(high * 16 + low);
  }
  if (!valid)
    return "'" + path +
           "' is not a public key: expected one line of 64 "
           "hexadecimal digits";
  return "";
}

//===----------------------------------------------------------------------===//
// Tensors (.npy files: Npy.h)
//===----------------------------------------------------------------------===//

/// A bf16 tensor as f32, exactly: numpy has no bf16, so bf16 outputs are
/// written and compared as f32 (as loom-run writes them).
Tensor widenBF16(const Tensor &t) {
  if (t.dtype != LOOM_DTYPE_BF16)
    return t;
  Tensor wide;
  wide.dtype = LOOM_DTYPE_F32;
  wide.shape = t.shape;
  size_t count = t.data.size() / 2;
  wide.data.resize(count * 4);
  for (size_t i = 0; i < count; ++i) {
    uint16_t half;
    std::memcpy(&half, t.data.data() + 2 * i, 2);
    uint32_t bits = uint32_t(half) << 16;
    std::memcpy(wide.data.data() + 4 * i, &bits, 4);
  }
  return wide;
}

//===----------------------------------------------------------------------===//
// Comparison
//===----------------------------------------------------------------------===//

double halfToDouble(uint16_t h) {
  int exponent = (h >> 10) & 0x1f;
  int mantissa = h & 0x3ff;
  double value;
  if (exponent == 0)
    value = std::ldexp(mantissa, -24);
  else if (exponent == 31)
    value = mantissa ? std::numeric_limits<double>::quiet_NaN()
                     : std::numeric_limits<double>::infinity();
  else
    value = std::ldexp(mantissa + 1024, exponent - 25);
  return (h & 0x8000) ? -value : value;
}

bool isFloat(loom_dtype dtype) {
  return dtype == LOOM_DTYPE_F16 || dtype == LOOM_DTYPE_BF16 ||
         dtype == LOOM_DTYPE_F32 || dtype == LOOM_DTYPE_F64;
}

template <typename T> T load(const char *data, size_t i) {
  T value;
  std::memcpy(&value, data + i * sizeof(T), sizeof(T));
  return value;
}

/// Element `i` as a double (integers of more than 53 bits round; they are
/// compared exactly by sameInteger).
double elementAsDouble(loom_dtype dtype, const char *data, size_t i) {
  switch (dtype) {
  case LOOM_DTYPE_F16:
    return halfToDouble(load<uint16_t>(data, i));
  case LOOM_DTYPE_BF16: {
    uint32_t bits = uint32_t(load<uint16_t>(data, i)) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  case LOOM_DTYPE_F32:
    return load<float>(data, i);
  case LOOM_DTYPE_F64:
    return load<double>(data, i);
  case LOOM_DTYPE_BOOL:
  case LOOM_DTYPE_U8:
    return load<uint8_t>(data, i);
  case LOOM_DTYPE_I8:
    return load<int8_t>(data, i);
  case LOOM_DTYPE_I16:
    return load<int16_t>(data, i);
  case LOOM_DTYPE_I32:
    return load<int32_t>(data, i);
  case LOOM_DTYPE_I64:
    return static_cast<double>(load<int64_t>(data, i));
  case LOOM_DTYPE_U16:
    return load<uint16_t>(data, i);
  case LOOM_DTYPE_U32:
    return load<uint32_t>(data, i);
  case LOOM_DTYPE_U64:
    return static_cast<double>(load<uint64_t>(data, i));
  case LOOM_DTYPE_I4:
  case LOOM_DTYPE_I2:
    return load<int8_t>(data, i);
  case LOOM_DTYPE_U4:
  case LOOM_DTYPE_U2:
    return load<uint8_t>(data, i);
  // The 8- and 4-bit floats are compared by their bits (no decoder here).
  case LOOM_DTYPE_F8E4M3FN:
  case LOOM_DTYPE_F8E4M3FNUZ:
  case LOOM_DTYPE_F8E5M2:
  case LOOM_DTYPE_F8E5M2FNUZ:
  case LOOM_DTYPE_F4E2M1FN:
  case LOOM_DTYPE_F8E8M0FNU:
    return load<uint8_t>(data, i);
  case LOOM_DTYPE_MAX_ENUM:
    break;
  }
  return 0;
}

/// Integers (and bools) are equal when their bytes are; a bool is any
/// non-zero byte, as numpy reads it.
bool sameInteger(loom_dtype dtype, const char *a, const char *b, size_t i) {
  size_t size = loom_dtype_size(dtype);
  if (dtype == LOOM_DTYPE_BOOL)
    return (a[i] != 0) == (b[i] != 0);
  return std::memcmp(a + i * size, b + i * size, size) == 0;
}

/// "[1, 2]": the index of flat element `flat` in `shape`.
std::string indexString(const std::vector<int64_t> &shape, size_t flat) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = static_cast<int64_t>(flat % uint64_t(shape[d]));
    flat /= uint64_t(shape[d]);
  }
  std::string text = "[";
  for (size_t d = 0; d < index.size(); ++d)
    text += (d ? ", " : "") + std::to_string(index[d]);
  return text + "]";
}

std::string number(double value) {
  // printf spells a NaN with its sign bit "-nan"; numpy says "nan".
  if (std::isnan(value))
    return "nan";
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

/// Compares `got` with `want` (same dtype and shape); prints the errors and
/// the verdict after the output's line, and says whether it passed.
bool compare(const Tensor &got, const Tensor &want, double rtol, double atol) {
  size_t count = got.data.size() / loom_dtype_size(got.dtype);
  bool floating = isFloat(got.dtype);
  double maxAbs = 0, maxRel = 0, worstAbs = -1;
  size_t differ = 0, worst = 0;
  for (size_t i = 0; i < count; ++i) {
    double g = elementAsDouble(got.dtype, got.data.data(), i);
    double w = elementAsDouble(want.dtype, want.data.data(), i);
    bool ok;
    double abs;
    if (!floating) {
      ok = sameInteger(got.dtype, got.data.data(), want.data.data(), i);
      abs = ok ? 0 : std::fabs(g - w);
    } else if (std::isnan(g) || std::isnan(w)) {
      // NaN where NaN is expected matches; NaN against a number is the
      // worst error there is.
      ok = std::isnan(g) && std::isnan(w);
      abs = ok ? 0 : std::numeric_limits<double>::infinity();
    } else if (g == w) {
      // Also equal infinities, whose difference would be NaN.
      ok = true;
      abs = 0;
    } else {
      abs = std::fabs(g - w);
      ok = abs <= atol + rtol * std::fabs(w);
    }
    maxAbs = std::max(maxAbs, abs);
    // Relative to non-zero expected values only: where zero is expected any
    // rounding is an infinite relative error, and atol covers those.
    if (w != 0 && !std::isnan(w))
      maxRel = std::max(maxRel, abs / std::fabs(w));
    if (!ok) {
      ++differ;
      if (abs > worstAbs) {
        worstAbs = abs;
        worst = i;
      }
    }
  }
  std::printf(": max abs error %s, max rel error %s: ", number(maxAbs).c_str(),
              number(maxRel).c_str());
  if (!differ) {
    std::printf("PASS\n");
    return true;
  }
  std::printf(
      "FAIL (%zu of %zu elements differ; worst at %s: got %s, "
      "expected %s)\n",
      differ, count, indexString(got.shape, worst).c_str(),
      number(elementAsDouble(got.dtype, got.data.data(), worst)).c_str(),
      number(elementAsDouble(want.dtype, want.data.data(), worst)).c_str());
  return false;
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

int listDevices() {
  for (loom_device_kind kind : {LOOM_DEVICE_CPU, LOOM_DEVICE_CUDA}) {
    int32_t count = 0;
    loom_status status = loom_device_count(kind, &count);
    if (status == LOOM_OK)
      std::printf("%s: %d device%s\n", loom_device_kind_name(kind), count,
                  count == 1 ? "" : "s");
    else
      std::printf("%s: not available (%s: %s)\n", loom_device_kind_name(kind),
                  loom_status_name(status), loom_last_error());
  }
  return 0;
}

std::string joinPath(const std::string &dir, const std::string &name) {
  return (std::filesystem::path(dir) / name).string();
}

/// Input `index`'s data from --inputs (or zeros without it), checked
/// against the engine's descriptor; "" on success.
std::string readInput(const Options &options, const loom_tensor_desc &desc,
                      int32_t index, Tensor &tensor) {
  std::string what = "input " + std::to_string(index) + " '" + desc.name +
                     "' of the engine is " + typeString(desc);
  if (options.inputs.empty()) {
    // Zeros serve for timing; symbolic sizes need a file to say them.
    if (loom_tensor_desc_is_dynamic(&desc))
      return what + ", whose symbolic sizes need --inputs";
    tensor.dtype = desc.dtype;
    tensor.shape.assign(desc.dims, desc.dims + desc.rank);
    tensor.data.assign(desc.byte_size, 0);
    return "";
  }
  if (desc.dtype == LOOM_DTYPE_BF16)
    return what + ", and .npy has no bf16 dtype";
  std::string path =
      joinPath(options.inputs, "input_" + std::to_string(index) + ".npy");
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    return "missing '" + path + "': " + what;
  if (std::string error = readNpy(path, tensor); !error.empty())
    return error + " (" + what + ")";
  bool fits = tensor.dtype == desc.dtype &&
              tensor.shape.size() == static_cast<size_t>(desc.rank);
  for (size_t d = 0; fits && d < tensor.shape.size(); ++d)
    fits = desc.dims[d] == LOOM_DYNAMIC_DIM || desc.dims[d] == tensor.shape[d];
  if (!fits)
    return "'" + path + "' is " + typeString(tensor) + " but " + what;
  return "";
}

void releaseDynamic(std::vector<loom_dynamic_output> &dynamic) {
  for (loom_dynamic_output &d : dynamic) {
    loom_buffer_free(d.data);
    d.data = nullptr;
  }
}

/// Runs `engine` once, releasing the previous run's dynamic outputs first.
loom_status runOnce(loom_engine *engine, const std::vector<const void *> &in,
                    const std::vector<void *> &out,
                    std::vector<loom_dynamic_output> &dynamic) {
  releaseDynamic(dynamic);
  return loom_engine_execute(engine, 0, in.data(), out.data());
}

double percentile(const std::vector<double> &sorted, double p) {
  // Nearest rank: the smallest value at or above fraction p of the runs.
  size_t rank = static_cast<size_t>(std::ceil(p * double(sorted.size())));
  return sorted[std::min(sorted.size() - 1, rank ? rank - 1 : 0)];
}

int run(const Options &options, loom_engine *engine) {
  int32_t ranks = loom_engine_num_ranks(engine);
  if (ranks != 1)
    return fail("'" + options.engine + "' has " + std::to_string(ranks) +
                " ranks; loom-exec runs single-rank engines only (loom-run "
                "--ranks runs partitioned ones)");
  std::printf("engine '%s': %s, target %s\n", options.engine.c_str(),
              loom_engine_compiler_version(engine), loom_engine_target(engine));

  int32_t numInputs = loom_engine_num_inputs(engine, 0);
  int32_t numOutputs = loom_engine_num_outputs(engine, 0);
  std::error_code ec;
  if (!options.inputs.empty() &&
      !std::filesystem::is_directory(options.inputs, ec))
    return fail("--inputs '" + options.inputs + "' is not a directory");
  if (options.inputs.empty() && numInputs > 0)
    std::printf("inputs: zeros (no --inputs)\n");
  std::vector<Tensor> inputs(numInputs);
  // Inputs with symbolic dimensions go as loom_shaped_input, which says the
  // file's shape; the others as plain buffers.
  std::vector<loom_shaped_input> shaped(numInputs);
  std::vector<const void *> inputPointers(numInputs);
  for (int32_t i = 0; i < numInputs; ++i) {
    const loom_tensor_desc &desc = *loom_engine_input(engine, 0, i);
    if (std::string error = readInput(options, desc, i, inputs[i]);
        !error.empty())
      return fail(error);
    inputPointers[i] = inputs[i].data.data();
    if (loom_tensor_desc_is_dynamic(&desc)) {
      shaped[i].data = inputs[i].data.data();
      shaped[i].rank = desc.rank;
      std::copy(inputs[i].shape.begin(), inputs[i].shape.end(), shaped[i].dims);
      inputPointers[i] = &shaped[i];
    }
  }
  if (!options.inputs.empty()) {
    // A file past the engine's inputs means the data was made for another
    // model.
    std::string extra =
        joinPath(options.inputs, "input_" + std::to_string(numInputs) + ".npy");
    if (std::filesystem::exists(extra, ec))
      return fail("'" + extra + "' is one input too many: the engine takes " +
                  std::to_string(numInputs));
  }

  std::vector<std::vector<char>> staticOutputs(numOutputs);
  std::vector<loom_dynamic_output> dynamic(numOutputs, loom_dynamic_output{});
  std::vector<void *> outputPointers(numOutputs);
  for (int32_t i = 0; i < numOutputs; ++i) {
    const loom_tensor_desc &desc = *loom_engine_output(engine, 0, i);
    if (loom_tensor_desc_is_dynamic(&desc)) {
      outputPointers[i] = &dynamic[i];
    } else {
      staticOutputs[i].resize(desc.byte_size);
      outputPointers[i] = staticOutputs[i].data();
    }
  }
  // Dynamic outputs belong to us once execute returns; freed on every path.
  struct FreeDynamic {
    std::vector<loom_dynamic_output> &outputs;
    ~FreeDynamic() { releaseDynamic(outputs); }
  } freeDynamic{dynamic};

  if (loom_status status =
          runOnce(engine, inputPointers, outputPointers, dynamic))
    return failRuntime(status);

  if (!options.outputs.empty()) {
    std::filesystem::create_directories(options.outputs, ec);
    if (ec)
      return fail("cannot create '" + options.outputs + "': " + ec.message());
  }
  if (!options.expected.empty() &&
      !std::filesystem::is_directory(options.expected, ec))
    return fail("--expected '" + options.expected + "' is not a directory");
  bool allPass = true;
  for (int32_t i = 0; i < numOutputs; ++i) {
    const loom_tensor_desc &desc = *loom_engine_output(engine, 0, i);
    Tensor got;
    got.dtype = desc.dtype;
    if (loom_tensor_desc_is_dynamic(&desc)) {
      const char *data = static_cast<const char *>(dynamic[i].data);
      got.shape.assign(dynamic[i].dims, dynamic[i].dims + dynamic[i].rank);
      got.data.assign(data, data + dynamic[i].byte_size);
    } else {
      got.shape.assign(desc.dims, desc.dims + desc.rank);
      got.data = staticOutputs[i];
    }
    std::string name = "output_" + std::to_string(i) + ".npy";
    if (!options.outputs.empty())
      if (std::string error =
              writeNpy(joinPath(options.outputs, name), widenBF16(got));
          !error.empty())
        return fail(error);
    std::printf("output %d '%s': %s", i, desc.name, typeString(got).c_str());
    if (options.expected.empty()) {
      std::printf("\n");
      continue;
    }
    std::string path = joinPath(options.expected, name);
    Tensor want;
    if (std::string error = readNpy(path, want); !error.empty()) {
      std::printf("\n");
      return fail(error);
    }
    Tensor wide = widenBF16(got);
    if (want.dtype != wide.dtype || want.shape != wide.shape) {
      std::printf(": FAIL ('%s' is %s)\n", path.c_str(),
                  typeString(want).c_str());
      allPass = false;
      continue;
    }
    allPass &= compare(wide, want, options.rtol, options.atol);
  }
  std::fflush(stdout);

  if (options.iterations > 0) {
    for (int64_t i = 0; i < options.warmup; ++i)
      if (loom_status status =
              runOnce(engine, inputPointers, outputPointers, dynamic))
        return failRuntime(status);
    std::vector<double> ms;
    ms.reserve(static_cast<size_t>(
        std::min<int64_t>(options.iterations, int64_t(1) << 20)));
    for (int64_t i = 0; i < options.iterations; ++i) {
      // Freeing the last run's dynamic outputs is not the engine's time.
      releaseDynamic(dynamic);
      auto start = std::chrono::steady_clock::now();
      loom_status status =
          runOnce(engine, inputPointers, outputPointers, dynamic);
      auto end = std::chrono::steady_clock::now();
      if (status)
        return failRuntime(status);
      ms.push_back(
          std::chrono::duration<double, std::milli>(end - start).count());
    }
    double mean = 0;
    for (double m : ms)
      mean += m / double(ms.size());
    std::sort(ms.begin(), ms.end());
    std::printf("latency_ms p50 %.6f p90 %.6f min %.6f mean %.6f (%lld "
                "iterations)\n",
                percentile(ms, 0.5), percentile(ms, 0.9), ms.front(), mean,
                static_cast<long long>(ms.size()));
  }
  if (!options.expected.empty())
    std::printf("%s\n", allPass ? "all outputs match" : "outputs differ");
  return allPass ? 0 : kExitMismatch;
}

} // namespace

int main(int argc, char **argv) {
  Options options;
  if (std::string error = parseArguments(argc, argv, options); !error.empty())
    return fail(error + " (loom-exec --help)");
  if (options.help) {
    std::printf("%s", kUsage);
    return 0;
  }
  if (options.listDevices)
    return listDevices();
  if (options.engine.empty())
    return fail("no engine given (loom-exec --help)");

  loom_load_options load;
  loom_load_options_init(&load);
  uint8_t trusted[32];
  if (!options.trustedKey.empty()) {
    if (std::string error = readPublicKey(options.trustedKey, trusted);
        !error.empty())
      return fail(error);
    load.trusted_public_key = trusted;
  }
  loom_engine *engine = nullptr;
  if (loom_status status =
          loom_engine_load(options.engine.c_str(), &load, &engine))
    return failRuntime(status);
  int result;
  try {
    result = run(options, engine);
  } catch (const std::exception &e) {
    // Out of memory for a huge file, mostly: an error, not an abort.
    result = fail(e.what());
  }
  loom_engine_free(engine);
  return result;
}
