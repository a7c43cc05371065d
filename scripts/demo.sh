#!/usr/bin/env bash
# The README's main-job command: installs what is missing, builds, and
# imports the bundled example model into loom IR, and runs it with the
# reference executor.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/install-deps.sh"
LOOM_BUILD_TARGETS="loom-translate loom-opt loom-run" "$root/scripts/build.sh"
build="${LOOM_BUILD_DIR:-$root/build}"
model="$root/examples/mlp.onnxtxt"

echo "== Importing $model"
"$build/bin/loom-translate" --import-onnx "$model" -o "$build/mlp.mlir"
echo "== loom IR (canonicalized)"
"$build/bin/loom-opt" --canonicalize "$build/mlp.mlir"
echo "== Running it with the reference executor (seeded random input)"
"$build/bin/loom-run" "$model" --seed 1
