#!/usr/bin/env python3
"""Engines with symbolic inputs: the general code against the code
specialized for an optimization profile's OPT shapes, and onnxruntime, on
the same models and inputs.

For each model with symbolic input dimensions (the corpus's _dyn exports by
default) and its two data sets, loomc compiles two engines:

  general    loomc M (symbolic sizes; one engine for every size)
  profiled   loomc M --profile NAME=MIN:OPT:MAX per input, OPT = data set
             0's shapes, MIN = 1 in every symbolic dimension, MAX = the
             larger of the two data sets' sizes

and prints the latency p50 (ms) of: the general engine at data set 0, the
profiled engine at data set 0 (it runs the OPT variant; loom-run says so),
the profiled engine at data set 1 (another size: the general code inside
it), and onnxruntime at data set 0; then onnxruntime / Loom for the
specialized and the general code (> 1: Loom faster). Figures only: nothing
passes or fails on time.

usage (an interpreter with onnxruntime, onnx and numpy):
    /tmp/venv/bin/python bench/symbolic_engines.py --build build \\
        [--models bert_dyn,resnet50_dyn] [--threads 1] [--rounds 2] \\
        [--data DIR0,DIR1]
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_onnxruntime import ROOT, loom_latency, ort_latency  # noqa: E402


def data_shapes(folder):
    """The shape of each input_N.pb in `folder`, in input order."""
    shapes = []
    i = 0
    while os.path.isfile(os.path.join(folder, "input_%d.pb" % i)):
        t = onnx.TensorProto()
        with open(os.path.join(folder, "input_%d.pb" % i), "rb") as f:
            t.ParseFromString(f.read())
        shapes.append(list(t.dims))
        i += 1
    return shapes


def profile_flags(model, shapes0, shapes1):
    graph = onnx.load(model, load_external_data=False).graph
    initializers = {i.name for i in graph.initializer}
    inputs = [i for i in graph.input if i.name not in initializers]
    flags = []
    for vi, opt, other in zip(inputs, shapes0, shapes1):
        dims = vi.type.tensor_type.shape.dim
        if all(d.HasField("dim_value") for d in dims):
            continue
        low = [1 if not d.HasField("dim_value") else d.dim_value for d in dims]
        high = [max(a, b) for a, b in zip(opt, other)]
        flags.append("--profile=%s=%s:%s:%s" % (
            vi.name, "x".join(map(str, low)), "x".join(map(str, opt)),
            "x".join(map(str, high))))
    return flags


def which_code(loom_run, engine, data):
    out = subprocess.run([loom_run, engine, "--inputs", data, "--print-values", "0"],
                         check=True, capture_output=True, text=True).stdout
    m = re.search(r"rank 0 ran the (general code|code specialized for [^\n]*)", out)
    return m.group(1) if m else "no variant"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--folder", default=os.path.join(ROOT, "test", "models"))
    ap.add_argument("--models", default="",
                    help="comma-separated model folders (default: every *_dyn)")
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=1,
                    help="time each N times and keep the fastest median")
    ap.add_argument("--data", default="",
                    help="DIR0[,DIR1]: the inputs (input_N.pb) to use instead "
                         "of the models' test_data_set_0 and _1 (with one "
                         "model: other sizes than the corpus's)")
    args = ap.parse_args()
    data_sets = args.data.split(",") if args.data else []
    names = args.models.split(",") if args.models else sorted(
        n for n in os.listdir(args.folder) if n.endswith("_dyn"))
    loomc = os.path.join(args.build, "bin", "loomc")
    loom_run = os.path.join(args.build, "bin", "loom-run")
    print("%d thread(s), %d iterations after %d warm-up runs, best median of %d "
          "round(s); latency p50 in ms; speedup = onnxruntime / Loom" % (
              args.threads, args.iterations, args.warmup, args.rounds))
    print("| model | shape (OPT) | Loom general | Loom OPT variant | onnxruntime "
          "| speedup OPT | speedup general | other shape: Loom profiled |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    sys.stdout.flush()
    for name in names:
        folder = os.path.join(args.folder, name)
        model = os.path.join(folder, "model.onnx")
        set0 = os.path.join(folder, "test_data_set_0")
        set1 = os.path.join(folder, "test_data_set_1")
        if data_sets:
            set0, set1 = data_sets[0], data_sets[-1]
        if not os.path.isdir(set1):
            set1 = set0
        shapes0, shapes1 = data_shapes(set0), data_shapes(set1)
        with tempfile.TemporaryDirectory() as tmp:
            general = os.path.join(tmp, "general.engine")
            profiled = os.path.join(tmp, "profiled.engine")
            try:
                subprocess.run([loomc, model, "-o", general], check=True)
                subprocess.run([loomc, model, "-o", profiled] +
                               profile_flags(model, shapes0, shapes1), check=True)
            except subprocess.CalledProcessError:
                print("| %s | (loomc failed: see its message above) |" % name)
                continue
            if not which_code(loom_run, profiled, set0).startswith("code specialized"):
                print("| %s | (the profiled engine did not run its variant) |" % name)
                continue
            best = {"general": float("inf"), "opt": float("inf"),
                    "other": float("inf"), "ort": float("inf")}
            ort_error = None
            for _ in range(max(args.rounds, 1)):
                for key, engine, data in (("general", general, set0),
                                          ("opt", profiled, set0),
                                          ("other", profiled, set1)):
                    best[key] = min(best[key], loom_latency(
                        loom_run, engine, data, args.iterations, args.warmup,
                        args.threads)[1])
                if ort_error is None:
                    try:
                        best["ort"] = min(best["ort"], ort_latency(
                            model, set0, args.iterations, args.warmup,
                            args.threads)[1])
                    except Exception as error:  # noqa: BLE001
                        # A peer that cannot run the export (onnxruntime's
                        # RotaryEmbedding refuses some opset 23 exports):
                        # Loom's figures stand alone.
                        ort_error = str(error).splitlines()[0][:160]
        shape = ", ".join("x".join(map(str, s)) for s in shapes0)
        other = ", ".join("x".join(map(str, s)) for s in shapes1)
        if ort_error is not None:
            print("| %s | %s | %.3f | %.3f | fails | | | %.3f (%s) |" % (
                name, shape, best["general"], best["opt"], best["other"],
                other))
            print("onnxruntime on %s: %s" % (name, ort_error), file=sys.stderr)
        else:
            print("| %s | %s | %.3f | %.3f | %.3f | %.2f | %.2f | %.3f (%s) |" % (
                name, shape, best["general"], best["opt"], best["ort"],
                best["ort"] / best["opt"], best["ort"] / best["general"],
                best["other"], other))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
