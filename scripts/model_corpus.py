#!/usr/bin/env python3
"""Runs the real-model corpus (test/models) through every path of Loom.

Each corpus model was exported by PyTorch's exporters from a standard
architecture (scripts/make_model_corpus.py); its expected outputs come
from onnxruntime. For every model this runs, and sorts into pass or a
failure with the first line of the diagnostic:

  import     loom-translate --import-onnx (the program must verify)
  reference  loom-run on the reference executor, every data set (models
             with symbolic input dimensions have data sets at two shapes)
  engine     loomc into an engine (symbolic dimensions bound with
             --input-shape to data set 0's shapes), then loom-run on the
             engine with --num-threads 1
  engine2    the same engine with --num-threads 2
  tp2        transformers: loomc --grid=tp=2, the engine on 2 ranks, every
             rank's outputs compared; with symbolic input dimensions one
             engine (no --input-shape) at every data set's shapes
  plan4      decoders with static shapes (a causal language model's logits):
             loomc --plan=auto --devices 4 (the cluster planner ranks the
             grids, the best that partitions is built), the engine on 4
             ranks, every rank's outputs compared
  checked    loomc --runtime-checks (bounds and shape checks on every
             access): the engine must run and match
  symbolic   models with symbolic input dimensions: loomc without
             --input-shape (one engine for every size), then loom-run on
             the engine at every data set's shapes (two different shapes)
  cuda       loomc --target=cuda (symbolic dimensions bound as for engine):
             the kernels assembled for sm_80 and sm_90a by the toolkit's ptxas (skipped,
             and said so, where there is no toolkit); then the same kernels
             lowered for this CPU (--cuda-emulate-on-host) run against
             onnxruntime's outputs: the GPU mapping proven without a GPU
  generate   decoders exported with their key/value cache (a generate.json
             beside the model): the symbolic engine generates greedily with
             `loom-run --generate` from the stored prompt, then an engine
             compiled with --kv-cache (the cache kept in place, as large as
             the generation needs) does; every token must equal
             onnxruntime's greedy continuation

Tolerances: f32 rtol 1e-3, atol 1e-4 against onnxruntime. Int8 QDQ models
are bit-exact: the reference executor must equal onnxruntime's outputs for
the QDQ graph as written (the corpus stores those, from onnxruntime's basic
optimization level), and their engines the reference executor's outputs.

With --expectations FILE and --check the run fails on any failure that is
not listed (a regression) and on any listed failure that passes (an
unexpected pass), so the list only shrinks; --update rewrites it.

With --markdown FILE it writes the table of docs/models.md: every path's
status, the engine's largest difference from onnxruntime's outputs and
loomc's wall time. With --latency (needs onnxruntime and numpy, e.g. the
corpus venv) the same run then times every engine that passed and
onnxruntime on the same model and data set 0, one model at a time after
every check is done, at 1 thread (bench/compare_onnxruntime.py's timing:
--latency-rounds alternations, each one's fastest median), and the table
gains both latencies and their ratio.

usage: python3 scripts/model_corpus.py --bin build/bin [--models test/models]
           [--paths import,reference,engine,engine2,tp2,plan4,checked,symbolic,generate,cuda]
           [--jobs 2]
           [--expectations test/models/expectations.txt --check | --update]
           [--match REGEX] [--markdown FILE] [--latency] [NAME ...]
"""

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ALL_PATHS = ["import", "reference", "engine", "engine2", "tp2", "plan4", "checked",
             "symbolic", "generate", "cuda"]
# loomc --target=cuda's default toolkit.
PTXAS = "/usr/local/cuda/bin/ptxas"
F32_TOLERANCES = ["--rtol", "1e-3", "--atol", "1e-4"]


def run_partitioned(step, bin_, model, sets, tmp, name, flags, ranks, label):
    """loomc with `flags` into a partitioned engine, then loom-run on `ranks`
    ranks at every data set, every rank's outputs compared; the outcome."""
    engine = os.path.join(tmp, name + ".engine")
    ok, why, _ = step.run([os.path.join(bin_, "loomc"), model, "-o", engine] + flags,
                          "loomc " + " ".join(flags))
    for data in sets if ok else []:
        ok, why, _ = step.run([os.path.join(bin_, "loom-run"), engine,
                               "--ranks", str(ranks), "--all-ranks", "--inputs", data,
                               "--expected", data, "--print-values", "0"]
                              + F32_TOLERANCES,
                              "%s (%s)" % (label, os.path.basename(data)))
        if not ok:
            break
    return why


def is_static_decoder(info):
    """A causal language model (its logits) exported with static shapes."""
    arch = info.get("architecture", "")
    return (bool(info.get("is_transformer")) and not info.get("dynamic_axes")
            and ("ForCausalLM" in arch or "LMHeadModel" in arch))


def first_diagnostic(proc):
    lines = [l for l in (proc.stderr + proc.stdout).splitlines() if l.strip()]
    line = next((l for l in lines if "error" in l or "mismatch" in l),
                lines[-1] if lines else "")
    return re.sub(r"^.*?error: ", "", line).strip()[:300]


class Step:
    """Runs one command; failures carry the command and its first
    diagnostic."""

    def __init__(self, timeout):
        self.timeout = timeout

    def run(self, cmd, what):
        start = time.monotonic()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True,
                                  timeout=self.timeout)
        except subprocess.TimeoutExpired:
            return False, "%s: time-out after %ss" % (what, self.timeout), None
        seconds = time.monotonic() - start
        if proc.returncode < 0 or proc.returncode >= 128:
            return False, "%s: crash (exit %d) %s" % (
                what, proc.returncode, first_diagnostic(proc)), proc
        if proc.returncode != 0:
            return False, "%s: %s" % (what, first_diagnostic(proc)), proc
        proc.seconds = seconds
        return True, "", proc


def data_sets(model_dir):
    return sorted(os.path.join(model_dir, d) for d in os.listdir(model_dir)
                  if d.startswith("test_data_set_"))


def input_shapes(model_dir, info, data_set):
    """--input-shape flags binding every symbolic input to the shapes of the
    data set's inputs."""
    dynamic = info.get("dynamic_axes") or {}
    if not dynamic:
        return []
    index = int(os.path.basename(data_set)[len("test_data_set_"):])
    shapes = info["input_shapes"][index]
    return ["--input-shape=%s=%s" % (name, "x".join(str(d) for d in shapes[name]))
            for name in dynamic if name in shapes]


def run_model(name, args, info):
    start = time.monotonic()
    name, results, figures = run_paths(name, args, info)
    figures["seconds"] = time.monotonic() - start
    return name, results, figures


def run_paths(name, args, info):
    model_dir = os.path.join(args.models, name)
    model = os.path.join(model_dir, "model.onnx")
    step = Step(args.timeout)
    bin_ = args.bin
    quantized = info.get("family") == "quantized"
    results, figures = {}, {}
    sets = data_sets(model_dir)
    with tempfile.TemporaryDirectory(prefix="loom-corpus-") as tmp:
        if "import" in args.paths:
            ok, why, proc = step.run([os.path.join(bin_, "loom-translate"),
                                      "--import-onnx", model, "-o", os.devnull],
                                     "import")
            results["import"] = why
            if ok:
                figures["import_s"] = proc.seconds
        if "reference" in args.paths:
            why = ""
            for data in sets:
                # Int8 QDQ models: bit for bit what onnxruntime computes
                # running the QDQ graph as written.
                tolerances = ["--rtol", "0", "--atol", "0"] if quantized \
                    else F32_TOLERANCES
                cmd = [os.path.join(bin_, "loom-run"), model, "--inputs", data,
                       "--expected", data, "--print-values", "0"] + tolerances
                ok, why, _ = step.run(cmd, "reference (%s)" % os.path.basename(data))
                if not ok:
                    break
            results["reference"] = why
        engine = os.path.join(tmp, "model.engine")
        if any(p in args.paths for p in ("engine", "engine2")):
            start = time.monotonic()
            ok, why, _ = step.run([os.path.join(bin_, "loomc"), model, "-o", engine]
                                  + input_shapes(model_dir, info, sets[0]), "loomc")
            figures["compile_s"] = time.monotonic() - start
            for path, threads in (("engine", "1"), ("engine2", "2")):
                if path not in args.paths:
                    continue
                if not ok:
                    results[path] = why
                    continue
                results[path] = run_engine(step, bin_, engine, sets[0], threads,
                                           quantized, figures, path + "_max_error")
            # Timed after every check is done (--latency), not while other
            # models compete for the cores.
            if args.latency and ok and not results.get("engine"):
                kept = os.path.join(args.latency_dir, name + ".engine")
                shutil.copyfile(engine, kept)
                figures["timed_engine"] = kept
        if "tp2" in args.paths and info.get("is_transformer"):
            # Models with symbolic inputs: one tp=2 engine for every data
            # set's shapes (their static twins cover bound shapes).
            results["tp2"] = run_partitioned(step, bin_, model, sets, tmp, "tp2",
                                             ["--grid=tp=2"], 2, "tp=2 engine")
        if "plan4" in args.paths and is_static_decoder(info):
            results["plan4"] = run_partitioned(step, bin_, model, sets, tmp, "plan4",
                                               ["--plan=auto", "--devices=4"], 4,
                                               "planned engine")
        if "checked" in args.paths:
            checked = os.path.join(tmp, "checked.engine")
            ok, why, _ = step.run([os.path.join(bin_, "loomc"), model, "-o", checked,
                                   "--runtime-checks"]
                                  + input_shapes(model_dir, info, sets[0]),
                                  "loomc --runtime-checks")
            if ok:
                why = run_engine(step, bin_, checked, sets[0], "1", quantized)
            results["checked"] = why
        if "symbolic" in args.paths and info.get("dynamic_axes"):
            symbolic = os.path.join(tmp, "symbolic.engine")
            ok, why, _ = step.run([os.path.join(bin_, "loomc"), model, "-o",
                                   symbolic], "loomc (symbolic inputs)")
            # One engine, every data set's shapes.
            for data in sets if ok else []:
                why = run_engine(step, bin_, symbolic, data, "1", quantized)
                if why:
                    why = "%s: %s" % (os.path.basename(data), why)
                    break
            results["symbolic"] = why
        generate_file = os.path.join(model_dir, "generate.json")
        if "generate" in args.paths and os.path.exists(generate_file):
            with open(generate_file) as f:
                expected = json.load(f)
            decoder = os.path.join(tmp, "symbolic.engine")
            ok, why = True, ""
            if not os.path.exists(decoder):
                ok, why, _ = step.run([os.path.join(bin_, "loomc"), model, "-o", decoder],
                                      "loomc (symbolic inputs)")
            generate = ["--generate", str(len(expected["tokens"])), "--prompt-ids",
                        ",".join(map(str, expected["prompt_ids"])), "--expected-ids",
                        ",".join(map(str, expected["tokens"]))]
            if ok:
                ok, why, _ = step.run([os.path.join(bin_, "loom-run"), decoder] + generate,
                                      "loom-run --generate")
            # The cache kept in place, exactly as large as the generation
            # needs (the last token is not fed back).
            in_place = os.path.join(tmp, "kv-cache.engine")
            capacity = len(expected["prompt_ids"]) + len(expected["tokens"]) - 1
            if ok:
                ok, why, _ = step.run([os.path.join(bin_, "loomc"), model, "-o", in_place,
                                       "--kv-cache=%d" % capacity], "loomc --kv-cache")
            if ok:
                ok, why, _ = step.run([os.path.join(bin_, "loom-run"), in_place] + generate,
                                      "loom-run --generate (cache in place)")
            results["generate"] = why
        if "cuda" in args.paths:
            shapes = input_shapes(model_dir, info, sets[0])
            ok, why = True, ""
            if os.path.exists(PTXAS):
                ok, why, _ = step.run([os.path.join(bin_, "loomc"), "--target=cuda",
                                       model, "-o", os.path.join(tmp, "cuda.engine")]
                                      + shapes, "loomc --target=cuda")
            if ok:
                emulated = os.path.join(tmp, "cuda-on-host.engine")
                ok, why, _ = step.run([os.path.join(bin_, "loomc"), "--target=cuda",
                                       "--cuda-emulate-on-host", model, "-o", emulated]
                                      + shapes, "loomc --target=cuda --cuda-emulate-on-host")
            if ok:
                why = run_engine(step, bin_, emulated, sets[0], "1", quantized)
            results["cuda"] = why
    return name, results, figures


def max_error(proc):
    """The largest "max abs error" loom-run printed, or None."""
    values = [float(m) for m in re.findall(r"^max abs error (\S+)$",
                                           proc.stdout if proc else "", re.M)]
    return max(values) if values else None


def run_engine(step, bin_, engine, data, threads, quantized, figures=None,
               key=None):
    # Int8 engines: bit for bit the stored outputs, which the reference
    # executor also computes bit for bit.
    expected = data
    tolerances = ["--rtol", "0", "--atol", "0"] if quantized else F32_TOLERANCES
    ok, why, proc = step.run([os.path.join(bin_, "loom-run"), engine, "--inputs", data,
                              "--expected", expected, "--print-values", "0",
                              "--num-threads", threads] + tolerances,
                             "engine (%s thread%s)" % (threads, "" if threads == "1" else "s"))
    if ok and figures is not None and max_error(proc) is not None:
        figures[key] = max_error(proc)
    return why


def read_expectations(path):
    expected = {}
    if path and os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line and not line.startswith("#"):
                    key, _, reason = line.partition(" ")
                    expected[key] = reason.strip()
    return expected


def write_expectations(path, failures, old):
    with open(path, "w") as f:
        f.write("# Corpus models and paths that do not pass yet, with why.\n"
                "# Maintained by scripts/model_corpus.py --update; --check fails on any\n"
                "# other failure and on any listed one that passes.\n")
        for key in sorted(failures):
            f.write("%s %s\n" % (key, old.get(key) or failures[key]))


def write_markdown(path, manifest, outcomes, paths, latency):
    rows = []
    # The engine's largest difference from onnxruntime's outputs (1 thread).
    errors = "engine" in paths
    header = ["model", "exporter", "opset", "nodes"] + paths + \
        (["max abs error (engine)"] if errors else []) + ["compile s"] + \
        (["Loom ms", "onnxruntime ms", "speedup"] if latency else [])
    rows.append("| " + " | ".join(header) + " |")
    rows.append("|" + "---|" * len(header))
    for name in sorted(outcomes):
        results, figures = outcomes[name]
        info = manifest.get(name, {})
        cells = [name, info.get("exporter", "?"), str(info.get("opset", "?")),
                 str(info.get("nodes", "?"))]
        for p in paths:
            if p not in results:
                cells.append("–")
            else:
                cells.append("pass" if not results[p] else "FAIL")
        if errors:
            cells.append("%.1e" % figures["engine_max_error"]
                         if "engine_max_error" in figures else "")
        cells.append("%.1f" % figures["compile_s"] if "compile_s" in figures else "")
        if latency:
            if "loom_ms" in figures:
                cells += ["%.3f" % figures["loom_ms"], "%.3f" % figures["ort_ms"],
                          "%.2f" % (figures["ort_ms"] / figures["loom_ms"])]
            elif "latency_error" in figures:
                cells += ["(not timed: see the run's output)", "", ""]
            else:
                cells += ["", "", ""]
        rows.append("| " + " | ".join(cells) + " |")
    with open(path, "w") as f:
        f.write("\n".join(rows) + "\n")


def time_engines(args, outcomes, timing):
    """--latency: each engine kept by the engine path against onnxruntime,
    one model at a time; the figures go into the model's outcome."""
    print("latency p50 in ms, 1 thread, data set 0, onnxruntime %s (default "
          "session options), best median of %d round(s) of %d iterations "
          "after %d warm-up runs; speedup = onnxruntime / Loom (> 1: Loom "
          "faster)" % (timing.ort.__version__, args.latency_rounds,
                       args.latency_iterations, args.latency_warmup), flush=True)
    for name in sorted(outcomes):
        figures = outcomes[name][1]
        if "timed_engine" not in figures:
            continue
        data = data_sets(os.path.join(args.models, name))[0]
        try:
            figures["loom_ms"], figures["ort_ms"] = timing.best_medians(
                os.path.join(args.bin, "loom-run"), figures["timed_engine"],
                os.path.join(args.models, name, "model.onnx"), data,
                args.latency_iterations, args.latency_warmup, 1,
                args.latency_rounds)
        except Exception as e:  # onnxruntime refusing a model, say
            figures["latency_error"] = str(e).strip().splitlines()[-1]
            print("%-28s not timed: %s" % (name, figures["latency_error"]),
                  flush=True)
            continue
        print("%-28s Loom %.3f ms, onnxruntime %.3f ms, speedup %.2f" % (
            name, figures["loom_ms"], figures["ort_ms"],
            figures["ort_ms"] / figures["loom_ms"]), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="the folder holding loom-run, loomc")
    ap.add_argument("--models", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "test", "models"))
    ap.add_argument("--paths", default=",".join(ALL_PATHS))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--expectations")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--update", action="store_true")
    ap.add_argument("--markdown")
    ap.add_argument("--match", help="only models whose name matches this regex")
    ap.add_argument("--latency", action="store_true",
                    help="then time each engine that passed against onnxruntime "
                         "(1 thread, data set 0)")
    ap.add_argument("--latency-iterations", type=int, default=100)
    ap.add_argument("--latency-warmup", type=int, default=10)
    ap.add_argument("--latency-rounds", type=int, default=2)
    ap.add_argument("names", nargs="*")
    args = ap.parse_args()
    args.paths = [p for p in args.paths.split(",") if p]
    if "cuda" in args.paths and not os.path.exists(PTXAS):
        print("cuda: no %s: the kernels are not assembled, only run on this "
              "CPU (--cuda-emulate-on-host)" % PTXAS, flush=True)
    for p in args.paths:
        if p not in ALL_PATHS:
            ap.error("unknown path %r (known: %s)" % (p, ", ".join(ALL_PATHS)))

    with open(os.path.join(args.models, "manifest.json")) as f:
        manifest = {m["name"]: m for m in json.load(f)["models"]}
    names = args.names or sorted(manifest)
    if args.match:
        names = [n for n in names if re.search(args.match, n)]
    for n in names:
        if n not in manifest:
            ap.error("no corpus model %r" % n)

    timing = None
    latency_dir = None
    if args.latency:
        if "engine" not in args.paths:
            ap.error("--latency times the engines of the engine path")
        # bench/compare_onnxruntime.py's timing, so that both tables measure
        # alike; it imports onnxruntime.
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                        "..", "bench"))
        try:
            import compare_onnxruntime as timing
        except ImportError as e:
            ap.error("--latency needs onnxruntime and numpy (%s)" % e)
        latency_dir = tempfile.TemporaryDirectory(prefix="loom-corpus-latency-")
    args.latency_dir = latency_dir.name if latency_dir else None

    outcomes = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(run_model, n, args, manifest[n]) for n in names]
        for future in concurrent.futures.as_completed(futures):
            name, results, figures = future.result()
            outcomes[name] = (results, figures)
            summary = " ".join("%s:%s" % (p, "ok" if not results[p] else "FAIL")
                               for p in args.paths if p in results)
            print("%-28s %s (%.0f s)" % (name, summary, figures.get("seconds", 0)),
                  flush=True)
            for p in args.paths:
                if results.get(p):
                    print("    %s: %s" % (p, results[p]), flush=True)

    failures = {"%s:%s" % (n, p): why for n, (results, _) in outcomes.items()
                for p, why in results.items() if why}
    runs = sum(len(r) for r, _ in outcomes.values())
    print("corpus: %d models, %d runs: %d passed, %d failed" %
          (len(outcomes), runs, runs - len(failures), len(failures)))

    if latency_dir:
        time_engines(args, outcomes, timing)
        latency_dir.cleanup()

    if args.markdown:
        write_markdown(args.markdown, manifest, outcomes, args.paths, args.latency)

    expected = read_expectations(args.expectations)
    if args.update:
        # Only the models and paths that ran are rewritten.
        ran = {"%s:%s" % (n, p) for n, (r, _) in outcomes.items() for p in r}
        kept = {k: v for k, v in expected.items() if k not in ran}
        kept.update({k: expected.get(k) or v for k, v in failures.items()})
        write_expectations(args.expectations, kept, expected)
        return 0
    if not args.check:
        return 0
    ran = {"%s:%s" % (n, p) for n, (r, _) in outcomes.items() for p in r}
    new = sorted(k for k in failures if k not in expected)
    fixed = sorted(k for k in expected if k in ran and k not in failures)
    for k in new:
        print("new failure: %s %s" % (k, failures[k]))
    for k in fixed:
        print("unexpected pass: %s (remove it from %s)" % (k, args.expectations))
    return 1 if new or fixed else 0


if __name__ == "__main__":
    sys.exit(main())
