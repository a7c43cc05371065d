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
echo "== Graph passes: recognition, simplification, kernel formation"
"$build/bin/loom-opt" --canonicalize --loom-recognize --loom-simplify \
  --loom-form-kernels=report=true "$build/mlp.mlir" -o "$build/mlp.fused.mlir"
echo "== Running it with the reference executor (seeded random input)"
"$build/bin/loom-run" "$model" --seed 1 --output-dir "$build"
echo "== The fused program gives the same outputs"
"$build/bin/loom-run" "$build/mlp.fused.mlir" --seed 1 --expected "$build/output_0.npy" --rtol 1e-6 --atol 1e-7
