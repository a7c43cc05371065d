#!/usr/bin/env python3
"""Import coverage of loom-translate over ONNX backend node suites.

Runs `loom-translate --import-onnx` on every case of a node suite and sorts
the outcome of each case into:
  imported     exit 0: the model became verified loom IR
  unsupported  a clean diagnostic saying an op, attribute or form is not
               supported
  error        any other clean diagnostic (malformed model, inference error)
  crash        a signal, an exit code >= 128, or a time-out

Prints per-op and total figures; `--markdown FILE` writes them as a table,
`--check` fails on any crash or when the imported share of the first suite
drops below `--min-imported` (a ratchet: raise it as coverage grows).

Usage (Debian's python3 with python3-onnx, for the per-op breakdown):
  /usr/bin/python3 scripts/import_coverage.py --loom-translate build/bin/loom-translate \
      [--suite DIR ...] [--markdown docs/import-coverage.md] [--check]
"""

import argparse
import collections
import concurrent.futures
import os
import subprocess
import sys

DEBIAN_SUITE = "/usr/share/libonnx-testdata/data/node"
# The share of Debian node cases that must import (a ratchet: the goal is
# 90 %; raise the floor as coverage grows). See docs/import-coverage.md.
MIN_IMPORTED_PERCENT = 91.0


def op_types(model_path):
    try:
        import onnx  # noqa: F401 (only for the per-op breakdown)
        model = onnx.load(model_path, load_external_data=False)
        return sorted({(n.domain + "." if n.domain not in ("", "ai.onnx") else "")
                       + n.op_type for n in model.graph.node})
    except Exception:
        return ["<unreadable>"]


def classify(tool, case_dir, timeout):
    model = os.path.join(case_dir, "model.onnx")
    try:
        proc = subprocess.run([tool, "--import-onnx", model, "-o", os.devnull],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "crash", "time-out after %ss" % timeout
    message = proc.stderr.strip().splitlines()
    first = message[0] if message else ""
    if proc.returncode == 0:
        return "imported", ""
    if proc.returncode < 0 or proc.returncode >= 128 or not first:
        return "crash", "exit code %d %s" % (proc.returncode, first)
    if "not supported" in first or "unsupported" in first:
        return "unsupported", first
    return "error", first


def run_suite(tool, suite, jobs, timeout):
    cases = sorted(d for d in os.listdir(suite)
                   if os.path.isfile(os.path.join(suite, d, "model.onnx")))
    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(classify, tool, os.path.join(suite, c), timeout): c
                   for c in cases}
        for f in concurrent.futures.as_completed(futures):
            results[futures[f]] = f.result()
    ops = {c: op_types(os.path.join(suite, c, "model.onnx")) for c in cases}
    return cases, results, ops


def summarize(name, cases, results, ops):
    totals = collections.Counter(results[c][0] for c in cases)
    per_op = collections.defaultdict(collections.Counter)
    for c in cases:
        for op in ops[c]:
            per_op[op][results[c][0]] += 1
    n = len(cases)
    lines = ["## %s: %d cases" % (name, n), "",
             "| outcome | cases | share |", "|---|---:|---:|"]
    for k in ("imported", "unsupported", "error", "crash"):
        lines.append("| %s | %d | %.1f %% |" % (k, totals[k], 100.0 * totals[k] / max(n, 1)))
    lines += ["", "Per op type (a case counts for every op type in it):", "",
              "| op | cases | imported | unsupported | error | crash |",
              "|---|---:|---:|---:|---:|---:|"]
    for op in sorted(per_op, key=lambda o: (-sum(per_op[o].values()), o)):
        c = per_op[op]
        lines.append("| %s | %d | %d | %d | %d | %d |" % (
            op, sum(c.values()), c["imported"], c["unsupported"], c["error"], c["crash"]))
    failures = [(c, results[c]) for c in cases if results[c][0] != "imported"]
    if failures:
        lines += ["", "<details><summary>Cases that do not import (%d)</summary>" % len(failures), "",
                  "| case | outcome | first line of the diagnostic |", "|---|---|---|"]
        for c, (kind, msg) in failures:
            lines.append("| %s | %s | %s |" % (c, kind, msg.replace("|", "\\|")[:200]))
        lines += ["", "</details>"]
    return totals, "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--loom-translate", required=True)
    ap.add_argument("--suite", action="append",
                    help="node-suite directory (default: Debian's libonnx-testdata)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--timeout", type=int, default=60)
    ap.add_argument("--markdown", help="write the tables to this file")
    ap.add_argument("--check", action="store_true",
                    help="fail on crashes or when the first suite imports less than --min-imported %%")
    ap.add_argument("--min-imported", type=float, default=MIN_IMPORTED_PERCENT)
    args = ap.parse_args()

    suites = args.suite or [DEBIAN_SUITE]
    sections, status = [], 0
    for i, suite in enumerate(suites):
        cases, results, ops = run_suite(args.loom_translate, suite, args.jobs, args.timeout)
        totals, text = summarize(suite, cases, results, ops)
        sections.append(text)
        share = 100.0 * totals["imported"] / max(len(cases), 1)
        print("%s: %d cases: %d imported (%.1f %%), %d unsupported, %d error, %d crash"
              % (suite, len(cases), totals["imported"], share, totals["unsupported"],
                 totals["error"], totals["crash"]))
        for c in cases:
            if results[c][0] == "crash":
                print("  CRASH %s: %s" % (c, results[c][1]))
        if args.check and totals["crash"]:
            status = 1
        if args.check and i == 0 and share < args.min_imported:
            print("FAIL: %.1f %% imported, below the floor of %.1f %%" % (share, args.min_imported))
            status = 1
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("# ONNX node-suite import coverage\n\n")
            f.write("Produced by `/usr/bin/python3 -s scripts/import_coverage.py "
                    "--loom-translate build/bin/loom-translate %s --markdown %s`. The newer "
                    "suite is written out of the onnx wheel by "
                    "`scripts/generate_onnx_node_suite.py` (see `scripts/test.sh`).\n\n"
                    % (" ".join("--suite " + s for s in suites), args.markdown))
            f.write("\n\n".join(sections) + "\n")
    print("import coverage: %s" % ("ok" if status == 0 else "FAILED"))
    return status


if __name__ == "__main__":
    sys.exit(main())
