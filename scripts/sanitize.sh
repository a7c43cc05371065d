#!/usr/bin/env bash
# Sanitizer runs (docs/reliability.md, "Sanitizers").
#
#   scripts/sanitize.sh           the runtime under AddressSanitizer +
#                                 UndefinedBehaviorSanitizer (with
#                                 LeakSanitizer) and under ThreadSanitizer:
#                                 its C API tests, the in-process
#                                 communicator, one engine executed from 8
#                                 threads, 1,000 load/execute/free cycles.
#                                 Run by scripts/test.sh (CI).
#   scripts/sanitize.sh --full    also builds everything (compiler and
#                                 tools) under ASan + UBSan and runs the
#                                 whole lit suite with it.
#
# Builds go to $LOOM_BUILD_DIR-asan and -tsan (default build-asan,
# build-tsan); engines are compiled by the normal build's loomc, which must
# exist. Only Loom's code is instrumented: MLIR, LLVM, oneDNN, libomp and
# the other Debian libraries are not.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${LOOM_BUILD_DIR:-$root/build}"
full=0
[ "${1:-}" = "--full" ] && full=1

runtime_targets="loom-runtime-tests loom-runtime-cpp-tests loom_runtime_onednn"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$build/bin/loomc" "$root/test/fixtures/mlp/model.onnx" -o "$work/mlp.engine"
"$build/bin/loomc" "$root/test/fixtures/mlp/model.onnx" --grid=pp=2 \
  -o "$work/mlp-pp2.engine" 2>/dev/null
"$build/bin/loomc" "$root/test/fixtures/llama_block/model.onnx" \
  --parallel-flops=1 --parallel-elements=1 -o "$work/block.engine"

# Sanitizer reports end the process with an error, leaks included.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:halt_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# libomp is not instrumented: runtime/tests/tsan.supp says why its own
# reports are suppressed.
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$root/runtime/tests/tsan.supp"

run_runtime_tests() {
  local dir="$1"
  echo "-- $dir: the C API tests (in-process communicator included)"
  "$dir/bin/loom-runtime-tests" --gtest_brief=1
  echo "-- $dir: engines: the C++ wrapper, 8 threads at once, 1,000 load cycles"
  LOOM_TEST_ENGINE="$work/mlp.engine" \
    LOOM_TEST_PP_ENGINE="$work/mlp-pp2.engine" \
    LOOM_TEST_THREADED_ENGINE="$work/block.engine" LOOM_SOAK_ITERATIONS=1000 \
    "$dir/bin/loom-runtime-cpp-tests" --gtest_brief=1 \
    --gtest_filter='CppWrapper.*:Concurrency.*:Soak.*'
}

sanitized_build() {
  local dir="$1" sanitizer="$2" targets="$3"
  LOOM_BUILD_DIR="$dir" LOOM_BUILD_TARGETS="$targets" \
    "$root/scripts/build.sh" "-DLLVM_USE_SANITIZER=$sanitizer"
}

asan="$build-asan"
tsan="$build-tsan"
if [ "$full" = 1 ]; then
  sanitized_build "$asan" "Address;Undefined" all
else
  sanitized_build "$asan" "Address;Undefined" "$runtime_targets"
fi
run_runtime_tests "$asan"
sanitized_build "$tsan" Thread "$runtime_targets"
run_runtime_tests "$tsan"

if [ "$full" = 1 ]; then
  echo "-- the whole lit suite with the ASan + UBSan build"
  # LeakSanitizer stays on: a leak fails the test that made it.
  /usr/lib/llvm-22/bin/lit -sv "$asan/test"
fi
echo "sanitizers: no reports"
