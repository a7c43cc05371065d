#!/bin/bash
# Runs Loom's CUDA engines on a machine with an NVIDIA GPU and prints a
# table of results. The machine needs its CUDA driver, numpy and (for the
# comparison column) PyTorch; not LLVM, MLIR or a network. Everything else
# was built beforehand, elsewhere, by scripts/gpu_check_prepare.py into
# DIR (default .gpu): the runtime library, the runtime-only runner
# loom-exec, the corpus engines with onnxruntime's outputs, and the
# micro-benchmark engines of bench/cuda.
#
#   bash scripts/gpu-check.sh [DIR] [LOG_DIR]
#
# Exit status: 0 when every corpus engine ran and matched onnxruntime
# (f32 tolerances rtol 1e-3, atol 1e-4, as the CPU corpus run) and every
# micro-benchmark matched numpy; 1 otherwise. Compile failures (listed in
# DIR/compile-failures.txt) are reported, not counted: they happened where
# the engines were built.
set -u
DIR=${1:-.gpu}
LOG=${2:-${OUT:-/tmp}}
SCRIPTS=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH="$DIR/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
EXEC="$DIR/bin/loom-exec"
status=0

echo "== machine"
date -u
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm \
  --format=csv,noheader 2>&1 | head -2
"$EXEC" --list-devices

echo
echo "== corpus engines (loomc --target=cuda) vs onnxruntime's outputs"
printf '%-34s %-6s %10s %10s\n' model result p50_ms kernel_ms
passed=0
total=0
for engine in "$DIR"/models/*/model.engine; do
  [ -e "$engine" ] || continue
  folder=$(dirname "$engine")
  name=$(basename "$folder")
  total=$((total + 1))
  run_log="$LOG/$name.log"
  if timeout 120 "$EXEC" "$engine" --inputs "$folder" --expected "$folder" \
      --rtol 1e-3 --atol 1e-4 --iterations 20 >"$run_log" 2>&1; then
    result=PASS
    passed=$((passed + 1))
  else
    result=FAIL
    status=1
  fi
  p50=$(grep -o 'p50 [0-9.]*' "$run_log" | head -1 | cut -d' ' -f2)
  # Kernel time alone, one call, launches timed with events.
  kernel=$(LOOM_CUDA_KERNEL_TIMES=1 timeout 60 "$EXEC" "$engine" \
      --inputs "$folder" 2>&1 | grep -o 'all kernels: [0-9.]*' | cut -d' ' -f3)
  printf '%-34s %-6s %10s %10s\n' "$name" "$result" "${p50:--}" "${kernel:--}"
  if [ "$result" = FAIL ]; then
    grep -i 'error\|FAIL' "$run_log" | head -3 | sed 's/^/    /'
  fi
done
echo "corpus: $passed of $total engines match onnxruntime"
if [ -s "$DIR/compile-failures.txt" ]; then
  echo "did not compile for CUDA (where the engines were built):"
  sed 's/^/    /' "$DIR/compile-failures.txt"
fi

echo
echo "== micro-benchmarks (bench/cuda): Loom's kernels vs PyTorch, same GPU"
python3 "$SCRIPTS/gpu_bench_data.py" "$DIR/bench-data" --torch \
  >"$LOG/torch.txt" 2>&1 || true
printf '%-10s %-6s %12s %12s %12s  %s\n' bench result loom_kernel_ms \
  torch_ms end_to_end_ms figure
for engine in "$DIR"/bench/*.engine; do
  [ -e "$engine" ] || continue
  name=$(basename "$engine" .engine)
  data="$DIR/bench-data/$name"
  run_log="$LOG/bench-$name.log"
  if timeout 120 "$EXEC" "$engine" --inputs "$data" --expected "$data" \
      --rtol 1e-3 --atol 1e-4 --iterations 10 >"$run_log" 2>&1; then
    result=PASS
  else
    result=FAIL
    status=1
  fi
  end_to_end=$(grep -o 'p50 [0-9.]*' "$run_log" | head -1 | cut -d' ' -f2)
  kernel=$(LOOM_CUDA_KERNEL_TIMES=1 timeout 120 "$EXEC" "$engine" \
      --inputs "$data" --iterations 5 --warmup 1 2>&1 |
      grep -o 'all kernels: [0-9.]*' | cut -d' ' -f3)
  torch=$(grep "^torch $name " "$LOG/torch.txt" | cut -d' ' -f3)
  # Each call's kernels ran 1 + 1 + 5 times (check, warm-up, timed).
  figure=$(python3 - "$name" "${kernel:-0}" <<'EOF'
import sys
name, total = sys.argv[1], float(sys.argv[2])
ms = total / 7 if total else 0
if not ms:
    print("-")
elif name == "add_relu":
    print(f"{3 * 64 * 2**20 * 4 / (ms * 1e-3) / 1e12:.2f} TB/s")
elif name == "matmul":
    print(f"{2 * 2048**3 / (ms * 1e-3) / 1e12:.2f} TFLOP/s")
elif name == "softmax":
    print(f"{2 * 4096 * 4096 * 4 / (ms * 1e-3) / 1e12:.2f} TB/s")
else:
    print("-")
EOF
)
  kernel_per_call=$(python3 -c "print(f'{${kernel:-0} / 7:.4f}')")
  printf '%-10s %-6s %12s %12s %12s  %s\n' "$name" "$result" \
    "$kernel_per_call" "${torch:--}" "${end_to_end:--}" "$figure"
  if [ "$result" = FAIL ]; then
    grep -i 'error\|FAIL' "$run_log" | head -3 | sed 's/^/    /'
  fi
done
echo "(loom_kernel_ms: the engine's kernels per call, events around each"
echo " launch; end_to_end_ms: loom-exec's p50 per call, including the copies"
echo " of inputs and outputs between host and device)"
exit $status
