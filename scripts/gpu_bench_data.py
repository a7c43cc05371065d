#!/usr/bin/env python3
"""Data and peer figures for the CUDA micro-benchmarks (bench/cuda).

    python3 scripts/gpu_bench_data.py DIR        # DIR/NAME/input_N.npy, output_N.npy
    python3 scripts/gpu_bench_data.py DIR --torch  # also PyTorch's time per op

Inputs are seeded random data; expected outputs are numpy's (float64
accumulation where it matters). With --torch, the same op runs in PyTorch
on the GPU (CUDA events, 10 warm-ups, median of 50) and its time is printed
as `torch NAME MS`, for the side-by-side table of scripts/gpu-check.sh.
Runs where the engines run (the GPU machine); needs numpy, and PyTorch for
--torch.
"""

import os
import sys

import numpy as np


def cases(rng):
    a = rng.standard_normal((64, 1024, 1024), dtype=np.float32)
    b = rng.standard_normal((64, 1024, 1024), dtype=np.float32)
    yield "add_relu", [a, b], [np.maximum(a + b, 0)], lambda t: (t[0] + t[1]).relu()
    x = rng.standard_normal((2048, 2048), dtype=np.float32)
    w = rng.standard_normal((2048, 2048), dtype=np.float32)
    yield "matmul", [x, w], [(x.astype(np.float64) @ w).astype(np.float32)], \
        lambda t: t[0] @ t[1]
    s = rng.standard_normal((4096, 4096), dtype=np.float32)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    yield "softmax", [s], [(e / e.sum(axis=-1, keepdims=True)).astype(np.float32)], \
        lambda t: t[0].softmax(-1)


def main():
    out = sys.argv[1]
    with_torch = "--torch" in sys.argv[2:]
    rng = np.random.default_rng(0)
    for name, inputs, outputs, op in cases(rng):
        folder = os.path.join(out, name)
        os.makedirs(folder, exist_ok=True)
        for i, x in enumerate(inputs):
            np.save(os.path.join(folder, f"input_{i}.npy"), x)
        for i, y in enumerate(outputs):
            np.save(os.path.join(folder, f"output_{i}.npy"), y)
        if not with_torch:
            continue
        try:
            import torch
            torch.backends.cuda.matmul.allow_tf32 = False
            tensors = [torch.from_numpy(x).cuda() for x in inputs]
            for _ in range(10):
                op(tensors)
            times = []
            for _ in range(50):
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                start.record()
                op(tensors)
                end.record()
                torch.cuda.synchronize()
                times.append(start.elapsed_time(end))
            print(f"torch {name} {sorted(times)[len(times) // 2]:.4f}")
        except Exception as error:  # reported, not fatal: the table says so
            print(f"torch {name} unavailable: {error}")


if __name__ == "__main__":
    main()
