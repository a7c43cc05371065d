#!/usr/bin/env python3
"""Numerics report: how much each graph pass changes each fixture's outputs.

For every fixture in test/fixtures, the imported f32 program is the
baseline. Each pipeline of loom-opt passes is applied to it, both programs
run with loom-run (the reference executor) on the fixture's inputs, and the
report gives per model and pipeline the max and mean absolute error and the
max relative error (over elements with |baseline| > 1e-3) against the f32
program, plus the baseline's own max error against onnxruntime. Fixtures
with calibration samples (FIXTURE/calibration) also get the post-training
int8 and fp8 pipelines, calibrated on those samples (never on the test
inputs). The QDQ fixtures (FIXTURE_qdq), already quantized, are left out.

usage: /usr/bin/python3 -s scripts/numerics_report.py --build build [--markdown docs/numerics.md]
"""

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

PIPELINES = [
    ("simplify", ["-loom-simplify"]),
    ("recognize", ["-loom-recognize"]),
    ("recognize+form-kernels", ["-loom-recognize", "-loom-form-kernels"]),
    ("precision fp16", ["-loom-precision=precision=fp16"]),
    ("precision bf16", ["-loom-precision=precision=bf16"]),
]


QUANTIZED_PIPELINES = [
    ("int8 min-max", "calibration=minmax"),
    ("int8 percentile 99.99", "calibration=percentile percentile=99.99"),
    ("fp8 matmuls", "type=fp8"),
]


def run(cmd):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def outputs(build, mlir, data, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    run([os.path.join(build, "bin", "loom-run"), mlir, "--inputs", data,
         "--output-dir", out_dir, "--print-values", "0"])
    files = sorted(f for f in os.listdir(out_dir) if f.startswith("output_"))
    return [np.load(os.path.join(out_dir, f)).astype(np.float64) for f in files]


def read_pb(path):
    # Expected outputs are TensorProto files; Debian's onnx reads them.
    import onnx
    from onnx import numpy_helper
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t).astype(np.float64)


def errors(got, ref):
    diff = np.abs(got - ref)
    mask = np.abs(ref) > 1e-3
    rel = (diff[mask] / np.abs(ref[mask])).max() if mask.any() else 0.0
    return diff.max(), diff.mean(), rel


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--fixtures", default=os.path.join(os.path.dirname(__file__), "..",
                                                       "test", "fixtures"))
    ap.add_argument("--markdown")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in sorted(os.listdir(args.fixtures)):
            if name.endswith("_qdq"):
                continue
            folder = os.path.join(args.fixtures, name)
            data = os.path.join(folder, "test_data_set_0")
            base = os.path.join(tmp, name + ".mlir")
            run([os.path.join(args.build, "bin", "loom-translate"), "--import-onnx",
                 os.path.join(folder, "model.onnx"), "-o", base])
            ref = outputs(args.build, base, data, os.path.join(tmp, name + "_base"))
            ort = [read_pb(os.path.join(data, f)) for f in sorted(os.listdir(data))
                   if f.startswith("output_")]
            e = [errors(r, o) for r, o in zip(ref, ort)]
            rows.append((name, "f32 vs onnxruntime", max(x[0] for x in e),
                         max(x[1] for x in e), max(x[2] for x in e)))
            pipelines = list(PIPELINES)
            calibration = os.path.join(folder, "calibration")
            if os.path.isdir(calibration):
                pipelines += [(label, ["-loom-simplify", "-canonicalize",
                                       "-loom-quantize=%s inputs=%s" % (options, calibration)])
                              for label, options in QUANTIZED_PIPELINES]
            for label, passes in pipelines:
                out = os.path.join(tmp, "%s_%s.mlir" % (name, label.replace(" ", "_")))
                run([os.path.join(args.build, "bin", "loom-opt"), base] + passes + ["-o", out])
                got = outputs(args.build, out, data,
                              os.path.join(tmp, "%s_%s" % (name, label.replace(" ", "_"))))
                e = [errors(g, r) for g, r in zip(got, ref)]
                rows.append((name, label, max(x[0] for x in e), max(x[1] for x in e),
                             max(x[2] for x in e)))
    lines = ["| model | pipeline (vs the f32 program) | max abs | mean abs | max rel |",
             "|---|---|---:|---:|---:|"]
    for name, label, mx, mean, rel in rows:
        lines.append("| %s | %s | %.2e | %.2e | %.2e |" % (name, label, mx, mean, rel))
    table = "\n".join(lines)
    print(table)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("# Numerics report\n\n"
                    "Produced by `/usr/bin/python3 -s scripts/numerics_report.py --build build "
                    "--markdown %s`. Each fixture's imported f32 program is the baseline; each "
                    "pipeline's output is compared with it on the fixture's inputs (both run "
                    "by the reference executor). The first row per model is the baseline "
                    "against onnxruntime. Relative errors are over elements with |baseline| > "
                    "1e-3.\n\n" % args.markdown)
            f.write(table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
