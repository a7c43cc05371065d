#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, and runs the
# whole test suite (lit + the ONNX node-suite import coverage check).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/install-deps.sh"
# Warnings are errors here: the build's output (ccache replays the warnings
# of cached objects) must have none. The flags stay those of a developer
# build, so that its cache serves this one.
build_output="$(mktemp)"
"$root/scripts/build.sh" 2>&1 | tee "$build_output"
if grep -q "warning:" "$build_output"; then
  echo "error: the build has warnings:"
  grep "warning:" "$build_output"
  exit 1
fi
rm -f "$build_output"
build="${LOOM_BUILD_DIR:-$root/build}"

echo "== lit (check-loom)"
lit_log="$build/lit.log"
/usr/lib/llvm-22/bin/lit -v "$build/test" | tee "$lit_log"
lit_passed=$(grep -oE 'Passed *: [0-9]+' "$lit_log" | grep -oE '[0-9]+' || echo 0)
# Everything the suite needs is installed above, so no test may be skipped
# as unsupported (a missing MPI would otherwise hide the MPI tests), except
# those that need an instruction set this CPU lacks (REQUIRES: amx,
# avx512-*): software cannot provide it. They are listed, not hidden; the
# values they would check are checked on every host by their portable
# siblings (bf16-products.test, byte-products.test).
unsupported_other=0
while read -r name; do
  [ -n "$name" ] || continue
  file="$root/test/${name#Loom :: }"
  requires=$(grep -m1 -oE 'REQUIRES: .*' "$file" | sed 's/REQUIRES: //' || true)
  if [[ "$requires" =~ ^(amx|avx512-[a-z0-9]+)(,\ *(amx|avx512-[a-z0-9]+))*$ ]]; then
    echo "note: $name skipped: this CPU lacks $requires"
  else
    echo "error: lit skipped $name as unsupported (REQUIRES: $requires)"
    unsupported_other=1
  fi
done < <(grep -E '^UNSUPPORTED:' "$lit_log" | sed -E 's/^UNSUPPORTED: (.*) \([0-9]+ of [0-9]+\)$/\1/')
[ "$unsupported_other" -eq 0 ] || exit 1

echo "== The Python package: pip install ./python, then its pytest tests"
# Built against this build tree (LOOM_BUILD_DIR); scikit-build-core and
# nanobind come from PyPI. The tests compile and run corpus models against
# onnxruntime's stored outputs (docs/python.md).
python_venv="$build/python-venv"
[ -x "$python_venv/bin/python" ] || /usr/bin/python3 -m venv "$python_venv"
"$python_venv/bin/pip" install -q "numpy>=1.22" pytest "onnx==1.23.2"
LOOM_BUILD_DIR="$build" "$python_venv/bin/pip" install -q --force-reinstall \
  --no-deps "$root/python"
pytest_log="$build/pytest.log"
(cd "$build" && "$python_venv/bin/python" -m pytest -q -p no:cacheprovider "$root/python/tests") \
  | tee "$pytest_log"
pytest_passed=$(grep -oE '[0-9]+ passed' "$pytest_log" | grep -oE '[0-9]+' || echo 0)
if grep -qE '[0-9]+ (skipped|xfailed|xpassed)' "$pytest_log"; then
  echo "error: pytest skipped or expected failures: every test must run and pass"
  exit 1
fi

echo "== ONNX node-suite conformance of the reference executor (Debian's ONNX 1.12)"
# Fails on any case that does not pass and is not listed with its reason, and
# on any listed case that passes.
/usr/bin/python3 -s "$root/scripts/conformance.py" --loom-run "$build/bin/loom-run" \
  --expectations "$root/test/conformance/onnx-node-1.12.txt" --check

echo "== The same suite compiled for this CPU (loom-run --backend=cpu)"
# The issue's floor is the reference executor's pass rate minus 5 points
# (858/932 -> 813 cases); the floor here is what compiled code passes now
# (854: every case the reference passes except 4 with empty tensors), so a
# case that stops passing fails CI. No crash, and no wrong answer that the
# reference executor does not also give.
/usr/bin/python3 -s "$root/scripts/conformance.py" --loom-run "$build/bin/loom-run" \
  --backend cpu --expectations "$root/test/conformance/onnx-node-1.12.txt" --min-pass 854

echo "== The same suite through engine files (loomc, then loom-run on the engine)"
/usr/bin/python3 -s "$root/scripts/conformance.py" --loom-run "$build/bin/loom-run" \
  --backend engine --expectations "$root/test/conformance/onnx-node-1.12.txt" --min-pass 854

echo "== The suite's convolutions compiled with every one sent to oneDNN"
# The node suite's convolutions are far below the library's threshold;
# forced through it (the input filter reordered per call, asymmetric
# padding, strides, auto_pad), each must pass as in the reference.
/usr/bin/python3 -s "$root/scripts/conformance.py" --loom-run "$build/bin/loom-run" \
  --backend cpu --match '^test_(basic_)?conv_' \
  --loom-run-arg=--conv-library=onednn --loom-run-arg=--library-conv-flops=0 \
  --expectations "$root/test/conformance/onnx-node-1.12.txt" --check

echo "== ONNX node suites: Debian's (ONNX 1.12) and the newer one from PyPI"
# The newer suite ships as Python code in the onnx wheel; write it out once.
venv="$build/onnx-venv"
newer_suite="$build/onnx-node-suite"
if [ ! -f "$newer_suite/.complete" ]; then
  [ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv "$venv"
  "$venv/bin/pip" install -q "onnx==1.23.2"
  "$venv/bin/python" "$root/scripts/generate_onnx_node_suite.py" "$newer_suite"
  touch "$newer_suite/.complete"
fi
# Fails on any crash in either suite, and when Debian's suite imports less
# than the recorded floor; the newer suite's share is reported.
/usr/bin/python3 -s "$root/scripts/import_coverage.py" \
  --loom-translate "$build/bin/loom-translate" \
  --suite /usr/share/libonnx-testdata/data/node --suite "$newer_suite" --check

echo "== Fuzzing: every libFuzzer harness for a short budget (docs/reliability.md)"
# Builds the instrumented harnesses (ASan + UBSan), seeds them from the node
# suites, the corpus and engines compiled here, and runs each for 20 s, two
# at a time. Fails on any crash, leak, sanitizer report or timeout, printing
# the input and the command that reproduces it.
"$python_venv/bin/python" "$root/scripts/fuzz.py" --build "$build" \
  --seconds 20 --parallel 2

echo "== Sanitizers: the runtime under ASan + UBSan (with leak checks) and TSan"
# Its C API tests, the in-process communicator, one engine executed from 8
# threads and 1,000 load/execute/free cycles, each built instrumented in
# build-asan / build-tsan (scripts/sanitize.sh; --full runs the whole lit
# suite under ASan + UBSan, too long for CI).
"$root/scripts/sanitize.sh"

echo "== The newer suite (onnx 1.23.2): every case through the reference executor, newer ops through engines"
# Fails on any failure not listed with its reason and on any listed case
# that passes. Through engines: the ops of opsets 18-28 that the importer
# builds itself (the transformer ops Attention, RMSNormalization,
# RotaryEmbedding, TensorScatter, and LinearAttention and
# CausalConvWithState of linear-attention and state-space models; the
# normalizations, LpPool, Swish, SwiGLU, CumProd, CumSum with a run-time
# axis, reductions whose axes are known only at run time, Resize with
# Resize-18's axes and keep_aspect_ratio_policy, GridSample on 4-D and 5-D
# inputs, CenterCropPad, AffineGrid, Pad with axes, the optional ops on
# tensors), with their expanded function bodies; Cast, CastLike,
# QuantizeLinear and DequantizeLinear with every element type (the 8- and
# 4-bit floats, int4/uint4/int2/uint2, blocked parameters), and BitCast.
/usr/bin/python3 -s "$root/scripts/conformance.py" --loom-run "$build/bin/loom-run" \
  --suite "$newer_suite" \
  --expectations "$root/test/conformance/onnx-node-1.23.txt" --check
newer_ops='^test_(attention|rms_normalization|rotary_embedding|tensorscatter|linear_attention|causal_conv_with_state|swish|swiglu|lpnormalization|l1normalization|l2normalization|lppool|averagepool|group_normalization|cumsum|cumprod|reduce_[a-z0-9_]*(do_not_keepdims|asc_axes|desc_axes)|reduce_(l2|log_sum|log_sum_exp)_|resize|gridsample|center_crop_pad|affine_grid|constant_pad|optional_|cast|castlike|bitcast|quantizelinear|dequantizelinear)'
/usr/bin/python3 -s "$root/scripts/conformance.py" --loom-run "$build/bin/loom-run" \
  --backend engine --suite "$newer_suite" --match "$newer_ops" \
  --expectations "$root/test/conformance/onnx-node-1.23-engine.txt" --check

echo "== Partitioning over the ONNX node suite (every rank against the expected outputs)"
# Fails on any mismatch, run-time error or crash; cases whose sequence
# dimension cp=2 does not divide are refused with a diagnostic.
/usr/bin/python3 -s "$root/scripts/partition_sweep.py" --bin "$build/bin" --grid cp=2 --ranks 2

echo "== The real-model corpus (test/models: PyTorch and Hugging Face exports)"
# Every model imports, runs on the reference executor (at both shapes when
# its inputs are symbolic), compiles into an engine (symbolic inputs bound
# by --input-shape) run on 1 and 2 threads, and, for transformers, into a
# tp=2 engine run on 2 ranks, each against onnxruntime's outputs; models
# with symbolic inputs also compile once with them symbolic and that one
# engine runs at both data sets' shapes; every model also runs compiled
# with --runtime-checks. Fails on any failure not listed in the
# expectations and on any listed one that passes.
corpus=(/usr/bin/python3 -s "$root/scripts/model_corpus.py" --bin "$build/bin"
        --models "$root/test/models" --expectations "$root/test/models/expectations.txt" --check)
"${corpus[@]}" --paths import,reference,engine,engine2,tp2,plan4,checked,symbolic,generate

echo "== The corpus through the CUDA target: cubins assembled, kernels run on this CPU"
# No GPU here: each model compiles with --target=cuda (ptxas assembles the
# kernels) and the same mapped kernels, lowered for this CPU, run against
# onnxruntime's outputs (docs/cuda.md). One export of each architecture:
# the dynamo and symbolic twins give the same kernels, and densenet121's
# emulated loops alone take minutes.
"${corpus[@]}" --paths cuda --match \
  '^(bert|bert_int8|bert_op23|clip|distilbert|gpt2|gpt2_kv|llama|llama_kv|llama_op23|mistral|mixtral|mixtral_dynamo|qwen2|roberta|t5|t5_encoder|vit|vit_b_16|whisper_encoder|resnet50|resnet50_int8|mobilenet_v2|mobilenet_v3_large|efficientnet_b0|regnet_y_400mf)$'

echo "== The g++ 12 build (the alternative toolchain must keep building)"
LOOM_BUILD_DIR="$root/build-gcc" LOOM_BUILD_TARGETS="loom-opt loom-translate loom-run" \
  "$root/scripts/build.sh" -DLOOM_USE_GCC=ON

# Reached only when everything above passed (set -e): lit's tests plus the
# conformance (reference and compiled), coverage and partitioning checks,
# the corpus runs (every path; the CUDA kernels on this CPU), the fuzzing
# and sanitizer runs and the g++ build; the pytest tests of the Python
# package are counted one by one.
echo "summary: $((lit_passed + pytest_passed + 10)) passed, 0 failed"
