#!/usr/bin/env python3
"""Partitions every ONNX node-suite case over a grid and checks each rank.

For every case that imports, runs `loom-opt --loom-partition="grid=GRID"`
on it and `loom-run --ranks N --all-ranks` on the result against the case's
expected outputs (ONNX's tolerances, rtol 1e-3, atol 1e-7). Cases listed in
the reference executor's expectations (they do not pass unpartitioned) are
skipped. Each case ends up as:
  pass        every rank matched
  refused     loom-opt refused with a diagnostic (a degree that does not
              divide a dimension, ...)
  mismatch    a rank's outputs differ
  error       loom-run failed with a diagnostic
  crash       a signal, an exit code >= 128, or a time-out
Exits 1 when any case is a mismatch, an error or a crash.

usage: python3 scripts/partition_sweep.py --bin build/bin --grid dp=3 --ranks 3
"""

import argparse
import collections
import concurrent.futures
import os
import subprocess
import sys
import tempfile

DEBIAN_SUITE = "/usr/share/libonnx-testdata/data/node"


def crashed(proc):
    return proc.returncode < 0 or proc.returncode >= 128 or "Stack dump" in proc.stderr


def first_line(text):
    lines = [l for l in text.splitlines() if l.strip()]
    return lines[0][:200] if lines else ""


def run_case(args, case, work):
    folder = os.path.join(args.suite, case)
    data = os.path.join(folder, "test_data_set_0")
    mlir = os.path.join(work, case + ".mlir")
    try:
        imported = subprocess.run(
            [os.path.join(args.bin, "loom-translate"), "--import-onnx",
             os.path.join(folder, "model.onnx")],
            capture_output=True, text=True, timeout=args.timeout)
        if imported.returncode != 0:
            return "skip", "does not import"
        part = subprocess.run(
            [os.path.join(args.bin, "loom-opt"), "-",
             "--loom-partition=grid=" + args.grid, "-o", mlir],
            input=imported.stdout, capture_output=True, text=True,
            timeout=args.timeout)
        if crashed(part):
            return "crash", first_line(part.stderr)
        if part.returncode != 0:
            return "refused", first_line(part.stderr)
        run = subprocess.run(
            [os.path.join(args.bin, "loom-run"), mlir, "--ranks", str(args.ranks),
             "--all-ranks", "--inputs", data, "--expected", data, "--rtol", "1e-3",
             "--atol", "1e-7", "--print-values", "0"],
            capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return "crash", "time-out after %ss" % args.timeout
    if run.returncode == 0:
        return "pass", ""
    if crashed(run):
        return "crash", first_line(run.stderr)
    if "mismatch" in run.stderr:
        return "mismatch", first_line(run.stderr)
    return "error", first_line(run.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", required=True, help="folder of loom-opt, loom-run, loom-translate")
    parser.add_argument("--grid", required=True, help="as for -loom-partition, e.g. dp=3")
    parser.add_argument("--ranks", type=int, required=True)
    parser.add_argument("--suite", default=DEBIAN_SUITE)
    parser.add_argument("--expectations", default=os.path.join(
        os.path.dirname(__file__), "..", "test", "conformance", "onnx-node-1.12.txt"))
    parser.add_argument("--timeout", type=int, default=60)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()

    failing = set()
    with open(args.expectations) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                failing.add(line.split()[0])
    cases = sorted(c for c in os.listdir(args.suite) if c not in failing)
    results = collections.defaultdict(list)
    with tempfile.TemporaryDirectory() as work:
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            for case, (kind, why) in zip(cases, pool.map(
                    lambda c: run_case(args, c, work), cases)):
                results[kind].append((case, why))
    print("grid %s on %d ranks, %d cases (%d listed as failing unpartitioned, skipped)"
          % (args.grid, args.ranks, len(cases), len(failing)))
    for kind in ["pass", "refused", "skip", "mismatch", "error", "crash"]:
        print("  %-9s %d" % (kind, len(results[kind])))
    bad = [(k, c, w) for k in ["mismatch", "error", "crash"] for c, w in results[k]]
    for kind, case, why in bad:
        print("%s %s: %s" % (kind, case, why))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
