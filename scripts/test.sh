#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, and runs the
# whole test suite (lit + the ONNX node-suite import coverage check).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
build="${LOOM_BUILD_DIR:-$root/build}"

echo "== lit (check-loom)"
lit_log="$build/lit.log"
/usr/lib/llvm-22/bin/lit -v "$build/test" | tee "$lit_log"
lit_passed=$(grep -oE 'Passed: [0-9]+' "$lit_log" | grep -oE '[0-9]+' || echo 0)

echo "== ONNX node-suite import coverage"
/usr/bin/python3 "$root/scripts/import_coverage.py" \
  --loom-translate "$build/bin/loom-translate" --check

# Reached only when everything above passed (set -e): lit's tests plus the
# coverage check.
echo "summary: $((lit_passed + 1)) passed, 0 failed"
