#!/usr/bin/env bash
# The README's main-job command: installs what is missing, builds, imports
# the bundled example model into loom IR, runs it with the reference
# executor, optimizes it, partitions it for 2 devices (tensor parallel) and
# runs that on 2 simulated ranks, compiles it into a 2-rank engine and runs
# the engine through the runtime on 2 ranks, each time comparing with the
# reference outputs.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/install-deps.sh"
LOOM_BUILD_TARGETS="loom-translate loom-opt loom-run loomc" "$root/scripts/build.sh"
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
echo "== Partitioned for 2 devices (Megatron tensor parallelism: one all-reduce)"
"$build/bin/loom-opt" --loom-graph-optimize --loom-partition="grid=tp=2" \
  "$build/mlp.mlir" -o "$build/mlp.tp2.mlir"
grep -E 'shard\.(grid|all_reduce|all_gather|reduce_scatter)' "$build/mlp.tp2.mlir"
echo "== Running the partitioned program on 2 ranks (threads): every rank matches"
"$build/bin/loom-run" "$build/mlp.tp2.mlir" --ranks 2 --all-ranks --seed 1 \
  --expected "$build/output_0.npy" --rtol 1e-5 --atol 1e-6
echo "== Compiling the 2-device program into an engine for this CPU (one program per rank)"
"$build/bin/loomc" "$build/mlp.tp2.mlir" -o "$build/mlp.tp2.engine" --report
echo "== Running the engine on 2 ranks through the runtime's C API (threads, in-process communicator)"
"$build/bin/loom-run" "$build/mlp.tp2.engine" --ranks 2 --all-ranks --seed 1 \
  --expected "$build/output_0.npy" --rtol 1e-5 --atol 1e-6 --benchmark
