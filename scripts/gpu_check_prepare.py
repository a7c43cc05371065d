#!/usr/bin/env python3
"""Prepares the folder scripts/gpu-check.sh runs on a machine with a GPU.

Everything the GPU machine needs is built here, where LLVM/MLIR are: CUDA
engines of the real-model corpus (`loomc --target=cuda`) with their inputs
and onnxruntime's outputs as .npy, the micro-benchmark engines of
bench/cuda, the runtime library and the runtime-only runner loom-exec. The
GPU machine needs neither LLVM nor MLIR, only its CUDA driver, numpy for the
micro-benchmarks' data and (optionally) PyTorch for the comparison figures.

    python3 scripts/gpu_check_prepare.py --out .gpu [--match REGEX]

Models that do not compile for CUDA are listed in OUT/compile-failures.txt
with loomc's first error line; the check script prints that list too.
Needs `onnx` and `numpy` (the corpus venv has both).
"""

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np
from onnx import TensorProto, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def pb_to_npy(pb_path, npy_path):
    tensor = TensorProto()
    with open(pb_path, "rb") as f:
        tensor.ParseFromString(f.read())
    np.save(npy_path, numpy_helper.to_array(tensor))


def compile_engine(bin_dir, model, engine, timeout):
    """Returns None on success, else loomc's first error line."""
    try:
        result = subprocess.run(
            [os.path.join(bin_dir, "loomc"), "--target=cuda", model, "-o",
             engine], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"timed out after {timeout} s"
    if result.returncode == 0:
        return None
    for line in result.stderr.splitlines():
        if "error" in line:
            return line.strip()
    return (result.stderr.strip().splitlines() or ["exit %d" %
                                                    result.returncode])[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(ROOT, ".gpu"))
    parser.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    parser.add_argument("--lib", default=os.path.join(ROOT, "build", "lib"))
    parser.add_argument("--models", default=os.path.join(ROOT, "test",
                                                         "models"))
    parser.add_argument("--match", default=".",
                        help="corpus models whose names match (re.search)")
    parser.add_argument("--timeout", type=int, default=600)
    parser.add_argument("--max-mib", type=float, default=60.0,
                        help="refuse to leave a folder larger than this")
    args = parser.parse_args()

    out = os.path.abspath(args.out)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(os.path.join(out, "bin"))
    os.makedirs(os.path.join(out, "lib"))
    shutil.copy2(os.path.join(args.bin, "loom-exec"), os.path.join(out, "bin"))
    shutil.copy2(os.path.join(args.lib, "libloom_runtime.so"),
                 os.path.join(out, "lib"))

    failures = []
    compiled = []
    manifest = json.load(open(os.path.join(args.models, "manifest.json")))
    for entry in manifest["models"]:
        name = entry["name"]
        if not re.search(args.match, name):
            continue
        model = os.path.join(args.models, name, "model.onnx")
        data = os.path.join(args.models, name, "test_data_set_0")
        if not os.path.exists(model) or not os.path.isdir(data):
            continue
        folder = os.path.join(out, "models", name)
        os.makedirs(folder)
        error = compile_engine(args.bin, model, os.path.join(folder,
                                                            "model.engine"),
                               args.timeout)
        if error:
            failures.append(f"{name}: {error}")
            shutil.rmtree(folder)
            print(f"{name}: does not compile: {error}", flush=True)
            continue
        for pb in sorted(glob.glob(os.path.join(data, "*.pb"))):
            stem = os.path.splitext(os.path.basename(pb))[0]
            pb_to_npy(pb, os.path.join(folder, stem + ".npy"))
        compiled.append(name)
        print(f"{name}: compiled", flush=True)

    os.makedirs(os.path.join(out, "bench"))
    for model in sorted(glob.glob(os.path.join(ROOT, "bench", "cuda",
                                               "*.onnxtxt"))):
        name = os.path.splitext(os.path.basename(model))[0]
        error = compile_engine(args.bin, model,
                               os.path.join(out, "bench", name + ".engine"),
                               args.timeout)
        if error:
            failures.append(f"bench {name}: {error}")
            print(f"bench {name}: does not compile: {error}", flush=True)

    with open(os.path.join(out, "compile-failures.txt"), "w") as f:
        f.write("".join(line + "\n" for line in failures))
    size = sum(os.path.getsize(os.path.join(d, file))
               for d, _, files in os.walk(out) for file in files)
    print(f"{len(compiled)} corpus engines, {len(failures)} compile "
          f"failures, {size / 2**20:.1f} MiB in {out}")
    if size > args.max_mib * 2**20:
        print(f"error: larger than {args.max_mib} MiB", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
