#!/usr/bin/env python3
"""Latency of Loom engines and onnxruntime on the same models, side by side.

For each fixture: loomc compiles it into an engine, `loom-run --benchmark`
times the engine, and onnxruntime (CPUExecutionProvider) times the ONNX
model on the same input in this process, with the same number of threads
(--threads: loom-run --num-threads and onnxruntime's intra-op threads; one
by default; --threads 1,2 times each engine at both counts), and the
speedup onnxruntime / Loom is printed (> 1: Loom faster). --rounds N
alternates the two N times and keeps each one's fastest median.
--loomc-arg passes a flag to loomc (e.g. --loomc-arg=--conv-library=none
to time generated convolutions instead of oneDNN's). --models corpus
runs every model of the real-model corpus without a symbolic input.
Figures only: nothing passes or fails on time.

usage (an interpreter with onnxruntime and numpy, e.g. a venv with
`pip install onnxruntime onnx numpy`):
    /tmp/venv/bin/python bench/compare_onnxruntime.py --build build \\
        [--models cnn,transformer_encoder] [--iterations 200] [--threads 1] \\
        [--loomc-arg=--conv-library=none]
    /tmp/venv/bin/python bench/compare_onnxruntime.py --folder test/models \\
        --models corpus --threads 1,2 --rounds 3    (docs/performance.md)
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
UNITS = {"us": 1e-3, "ms": 1.0}


def compile_engine(build, model, engine, loomc_args):
    subprocess.run([os.path.join(build, "bin", "loomc"), model, "-o", engine] +
                   loomc_args, check=True)


def loom_latency(loom_run, engine, data, iterations, warmup, threads):
    out = subprocess.run(
        [loom_run, engine, "--inputs", data,
         "--benchmark", "--warmup", str(warmup), "--iterations", str(iterations),
         "--num-threads", str(threads), "--print-values", "0"],
        check=True, capture_output=True, text=True).stdout
    m = re.search(r"mean ([0-9.]+) (us|ms), p50 ([0-9.]+) (us|ms)", out)
    if not m:
        sys.exit("no benchmark line in loom-run's output:\n" + out)
    return float(m.group(1)) * UNITS[m.group(2)], float(m.group(3)) * UNITS[m.group(4)]


def ort_latency(model, data, iterations, warmup, threads):
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    feeds = {}
    for i, vi in enumerate(session.get_inputs()):
        t = onnx.TensorProto()
        with open(os.path.join(data, "input_%d.pb" % i), "rb") as f:
            t.ParseFromString(f.read())
        feeds[vi.name] = numpy_helper.to_array(t)
    for _ in range(warmup):
        session.run(None, feeds)
    times = []
    for _ in range(iterations):
        start = time.perf_counter()
        session.run(None, feeds)
        times.append((time.perf_counter() - start) * 1e3)
    return float(np.mean(times)), float(np.median(times))


def best_medians(loom_run, engine, model, data, iterations, warmup, threads, rounds):
    """Loom's and onnxruntime's latency p50 in ms, timed alternately
    `rounds` times, each one's fastest median (on a shared machine, other
    jobs only ever slow a round down)."""
    loom_median = ort_median = float("inf")
    for _ in range(max(rounds, 1)):
        loom_median = min(loom_median, loom_latency(
            loom_run, engine, data, iterations, warmup, threads)[1])
        ort_median = min(ort_median, ort_latency(
            model, data, iterations, warmup, threads)[1])
    return loom_median, ort_median


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--folder", default=os.path.join(ROOT, "test", "fixtures"),
                    help="where the models are (test/fixtures, or the real-model "
                         "corpus test/models)")
    ap.add_argument("--models",
                    default="cnn,resnet_block,separable_block,transformer_encoder,mlp,gpt_decoder")
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--threads", default="1",
                    help="thread counts, comma-separated (e.g. 1,2): each model "
                         "is compiled once and timed at each count")
    ap.add_argument("--rounds", type=int, default=1,
                    help="time Loom and onnxruntime alternately this many "
                         "times per model and thread count and keep each "
                         "one's fastest median (on a shared machine, other "
                         "jobs only ever slow a round down)")
    ap.add_argument("--loomc-arg", action="append", default=[],
                    help="pass this flag to loomc too (repeatable)")
    args = ap.parse_args()
    thread_counts = [int(t) for t in args.threads.split(",")]
    print("onnxruntime %s, %s thread(s), %d iterations after %d warm-up runs, "
          "best median of %d round(s); latency p50 in ms; speedup = onnxruntime / "
          "Loom (> 1: Loom faster)%s" % (
              ort.__version__, args.threads, args.iterations, args.warmup, args.rounds,
              "; loomc " + " ".join(args.loomc_arg) if args.loomc_arg else ""))
    header = "| model |"
    rule = "|---|"
    for t in thread_counts:
        header += " Loom %dt | onnxruntime %dt | speedup %dt |" % (t, t, t)
        rule += "---:|---:|---:|"
    print(header)
    print(rule)
    sys.stdout.flush()
    names = args.models.split(",")
    if names == ["corpus"]:
        # The corpus's static models: those whose inputs have no symbolic
        # dimension (the _dyn exports and the decoders with a cache are
        # timed by docs/models.md's own runs).
        names = []
        for name in sorted(os.listdir(args.folder)):
            path = os.path.join(args.folder, name, "model.onnx")
            if not os.path.isfile(path):
                continue
            graph = onnx.load(path, load_external_data=False).graph
            initializers = {i.name for i in graph.initializer}
            static = all(d.HasField("dim_value")
                         for i in graph.input if i.name not in initializers
                         for d in i.type.tensor_type.shape.dim)
            if static and os.path.isdir(os.path.join(args.folder, name,
                                                     "test_data_set_0")):
                names.append(name)
    for name in names:
        folder = os.path.join(args.folder, name)
        model = os.path.join(folder, "model.onnx")
        data = os.path.join(folder, "test_data_set_0")
        row = "| %s |" % name
        with tempfile.TemporaryDirectory() as tmp:
            engine = os.path.join(tmp, "model.engine")
            try:
                compile_engine(args.build, model, engine, args.loomc_arg)
            except subprocess.CalledProcessError:
                print("| %s | (loomc failed: see its message above) |" % name)
                sys.stdout.flush()
                continue
            for t in thread_counts:
                loom_median, ort_median = best_medians(
                    os.path.join(args.build, "bin", "loom-run"), engine, model, data,
                    args.iterations, args.warmup, t, args.rounds)
                row += " %.3f | %.3f | %.2f |" % (loom_median, ort_median,
                                                  ort_median / loom_median)
        print(row)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
