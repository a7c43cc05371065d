#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, and runs the
# whole test suite (lit + the ONNX node-suite import coverage check).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
build="${LOOM_BUILD_DIR:-$root/build}"

echo "== lit (check-loom)"
/usr/lib/llvm-22/bin/lit -v "$build/test"

echo "== ONNX node-suite import coverage"
/usr/bin/python3 "$root/scripts/import_coverage.py" \
  --loom-translate "$build/bin/loom-translate" --check
