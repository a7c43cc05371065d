#!/usr/bin/env python3
"""ONNX backend node-suite conformance of loom-run (the reference executor).

Runs `loom-run CASE/model.onnx --inputs CASE/test_data_set_N --expected
CASE/test_data_set_N` for every case and data set, with ONNX's tolerances
(rtol 1e-3, atol 1e-7), and sorts each case into:
  pass         every data set matched
  mismatch     ran, but an output differs beyond the tolerances
  unsupported  a clean diagnostic: an op, attribute or kernel is missing
  error        any other clean diagnostic
  crash        a signal, an exit code >= 128, or a time-out

With --expectations FILE and --check it fails on any case that does not
pass and is not listed in FILE (a new failure), on any mismatch (a wrong
answer) that FILE does not list as a mismatch, and on any listed case that
passes (an unexpected pass), so the list only shrinks. --update rewrites
FILE from this run, keeping the reasons of cases already listed (a case
whose outcome changed kind gets its new reason).

With --backend cpu each case is compiled for this CPU (lib/Target/CPU)
in-process by loom-run and the compiled code runs instead of the reference
executor. With --backend engine each case is compiled by loomc (next to
loom-run) into an engine file, which loom-run then loads through the
runtime and runs: the path users take.

usage: python3 scripts/conformance.py --loom-run build/bin/loom-run \
           [--backend reference|cpu|engine] [--suite DIR] [--expectations test/conformance/onnx-node-1.12.txt] \
           [--check | --update] [--markdown FILE]
"""

import argparse
import collections
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile

DEBIAN_SUITE = "/usr/share/libonnx-testdata/data/node"


def classify(proc, first_line_of):
    """The outcome of a finished loom-run or loomc process that failed."""
    lines = [l for l in proc.stderr.splitlines() if l.strip()]
    first = next((l for l in lines if "error" in l or "mismatch" in l),
                 lines[0] if lines else "")
    first = re.sub(r"^.*?error: ", "", first)
    if proc.returncode < 0 or proc.returncode >= 128 or not lines:
        return "crash", "%s exit code %d %s" % (first_line_of, proc.returncode, first)
    if any(l.startswith("mismatch") for l in lines):
        return "mismatch", first
    if "not supported" in first or "unsupported" in first or "no kernel" in first:
        return "unsupported", first
    return "error", first


def run_case(tool, case_dir, timeout, rtol, atol, backend, extra_args=()):
    data_sets = sorted(d for d in os.listdir(case_dir) if d.startswith("test_data_set_"))
    if not data_sets:
        return "error", "no test_data_set_* folder"
    model = os.path.join(case_dir, "model.onnx")
    with tempfile.TemporaryDirectory(prefix="loom-conformance-") as tmp:
        if backend == "engine":
            # Compile once; every data set runs the same engine.
            engine = os.path.join(tmp, "model.engine")
            loomc = os.path.join(os.path.dirname(tool), "loomc")
            try:
                proc = subprocess.run([loomc, model, "-o", engine], capture_output=True,
                                      text=True, timeout=timeout)
            except subprocess.TimeoutExpired:
                return "crash", "loomc time-out after %ss" % timeout
            if proc.returncode != 0:
                return classify(proc, "loomc")
            model, backend_args = engine, []
        else:
            backend_args = ["--backend", backend]
        for data in data_sets:
            folder = os.path.join(case_dir, data)
            cmd = [tool, model, "--inputs", folder, "--expected", folder, "--rtol",
                   str(rtol), "--atol", str(atol), "--print-values", "0"] + \
                backend_args + list(extra_args)
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
            except subprocess.TimeoutExpired:
                return "crash", "time-out after %ss" % timeout
            if proc.returncode != 0:
                return classify(proc, "loom-run")
    return "pass", ""


def read_expectations(path):
    expected = {}
    if path and os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                name, _, reason = line.partition(" ")
                expected[name] = reason.strip()
    return expected


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--loom-run", required=True)
    ap.add_argument("--suite", default=DEBIAN_SUITE)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--timeout", type=int, default=120)
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--atol", type=float, default=1e-7)
    ap.add_argument("--min-pass", type=int, default=0,
                    help="fail when fewer cases pass, or on any crash, or on a "
                         "mismatch (a wrong answer) not listed in --expectations")
    ap.add_argument("--backend", default="reference",
                    help="reference (the reference executor), cpu (compiled "
                         "in-process by loom-run) or engine (loomc, then loom-run "
                         "on the engine file)")
    ap.add_argument("--expectations")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--update", action="store_true")
    ap.add_argument("--markdown")
    ap.add_argument("--loom-run-arg", action="append", default=[],
                    help="pass this flag to loom-run too (repeatable)")
    ap.add_argument("--match", help="only cases whose name matches this regex")
    ap.add_argument("cases", nargs="*", help="only these cases")
    args = ap.parse_args()

    cases = sorted(d for d in os.listdir(args.suite)
                   if os.path.isfile(os.path.join(args.suite, d, "model.onnx")))
    if args.cases:
        cases = [c for c in cases if c in args.cases]
    if args.match:
        cases = [c for c in cases if re.search(args.match, c)]
    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(run_case, args.loom_run, os.path.join(args.suite, c),
                               args.timeout, args.rtol, args.atol, args.backend,
                               args.loom_run_arg): c
                   for c in cases}
        for f in concurrent.futures.as_completed(futures):
            results[futures[f]] = f.result()

    totals = collections.Counter(r[0] for r in results.values())
    n = len(cases)
    print("%s: %d cases: %d pass (%.1f %%), %d mismatch, %d unsupported, %d error, %d crash"
          % (args.suite, n, totals["pass"], 100.0 * totals["pass"] / max(n, 1),
             totals["mismatch"], totals["unsupported"], totals["error"], totals["crash"]))
    for c in cases:
        if results[c][0] == "crash":
            print("  CRASH %s: %s" % (c, results[c][1]))

    expected = read_expectations(args.expectations)

    def listed_mismatch(c):
        # A wrong answer is expected only where the list says so: a case
        # listed as unsupported that starts running and gives wrong values
        # is a new failure, not an old one.
        return expected.get(c, "").startswith("mismatch")

    status = 0
    if args.check:
        new = [c for c in cases if results[c][0] != "pass" and
               (c not in expected or
                (results[c][0] == "mismatch" and not listed_mismatch(c)))]
        fixed = [c for c in cases if results[c][0] == "pass" and c in expected]
        for c in new:
            print("NEW FAILURE %s: %s %s" % (c, results[c][0], results[c][1]))
        for c in fixed:
            print("UNEXPECTED PASS %s (remove it from %s)" % (c, args.expectations))
        if new or fixed or totals["crash"]:
            status = 1
        print("conformance: %d cases, %d pass, %d expected failures, %d new failures, "
              "%d unexpected passes" % (n, totals["pass"], len(expected), len(new), len(fixed)))
    if args.min_pass:
        wrong = [c for c in cases if results[c][0] == "mismatch" and not listed_mismatch(c)]
        for c in wrong:
            print("WRONG ANSWER %s: %s" % (c, results[c][1]))
        ok = totals["pass"] >= args.min_pass and not totals["crash"] and not wrong
        print("conformance (%s): %d pass, floor %d, %d crashes, %d unlisted mismatches: %s"
              % (args.backend, totals["pass"], args.min_pass, totals["crash"], len(wrong),
                 "ok" if ok else "FAILED"))
        if not ok:
            status = 1
    if args.update and args.expectations:
        # The file's leading comment (what it lists and how it is checked)
        # is kept; a new file gets a generic one.
        header = []
        if os.path.exists(args.expectations):
            with open(args.expectations) as f:
                for line in f:
                    if not line.startswith("#"):
                        break
                    header.append(line)
        if not header:
            header = ["# ONNX node-suite cases that do not pass through loom-run yet, with why.\n",
                      "# Maintained by scripts/conformance.py --update; the check fails on\n",
                      "# any other failure and on any listed case that passes.\n"]
        with open(args.expectations, "w") as f:
            f.writelines(header)
            for c in cases:
                kind, message = results[c]
                if kind != "pass":
                    reason = expected.get(c, "")
                    if not reason.startswith(kind):
                        reason = ("%s: %s" % (kind, message))[:240]
                    f.write("%s %s\n" % (c, reason))
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("# ONNX node-suite conformance (reference executor)\n\n")
            f.write("Produced by `python3 scripts/conformance.py --loom-run build/bin/loom-run "
                    "--markdown %s` on %s.\n\n" % (args.markdown, args.suite))
            f.write("| outcome | cases | share |\n|---|---:|---:|\n")
            for k in ("pass", "mismatch", "unsupported", "error", "crash"):
                f.write("| %s | %d | %.1f %% |\n" % (k, totals[k], 100.0 * totals[k] / max(n, 1)))
            if args.expectations:
                f.write("\nThe cases expected not to pass, with reasons, are listed in "
                        "`%s`.\n" % os.path.relpath(args.expectations))
    return status


if __name__ == "__main__":
    sys.exit(main())
