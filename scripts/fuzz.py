#!/usr/bin/env python3
"""Builds and runs Loom's libFuzzer harnesses (test/Fuzz, docs/reliability.md).

Each harness gets seeds made here from inputs Loom did not write where they
exist: the ONNX node suites' models and tensors, the real-model corpus
(test/models), every .onnxtxt in test/, external-data models naming the
harness's fixture files, NumPy files of each dtype, and engines compiled
with loomc (plain, symbolic, profiled, tensor-parallel, with a KV cache).
The corpus each run grows is kept in --work, so that later runs start
where earlier ones stopped.

Fails (exit 1) when any harness crashes, leaks, trips a sanitizer or times
out; the input is kept in --work/artifacts and printed as a command that
reproduces it.

  scripts/fuzz.py --seconds 60                    # every harness, 60 s each
  scripts/fuzz.py --seconds 3600 --only onnx-model --jobs 2
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEBIAN_NODE_SUITE = Path("/usr/share/libonnx-testdata/data/node")

# Per harness: the longest input libFuzzer makes (seeds longer than this are
# still read whole), and the per-input time limit in seconds.
HARNESSES = {
    # None: as long as the longest seed (the real models reach 2 MiB).
    "onnx-model": dict(max_len=None, timeout=30),
    "onnx-text": dict(max_len=8192, timeout=30),
    "external-data": dict(max_len=4096, timeout=30),
    "tensor-file": dict(max_len=8192, timeout=10),
    "engine-loader": dict(max_len=None, timeout=10),
    "runtime-api": dict(max_len=512, timeout=10),
    "npy-exec": dict(max_len=8192, timeout=10),
}

# Real-model seeds: the corpus's models up to this size (the smaller
# exports; each input is imported whole, so large ones slow every run).
MAX_MODEL_SEED_BYTES = 2 << 20


def log(message):
    print(message, flush=True)


def copy_seed(source, directory, name):
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, directory / name)


def model_seeds(build, seeds):
    out = seeds / "onnx-model"
    suites = [DEBIAN_NODE_SUITE, build / "onnx-node-suite"]
    for suite in suites:
        if suite.is_dir():
            for model in sorted(suite.glob("*/model.onnx")):
                copy_seed(model, out, f"{suite.name}-{model.parent.name}.onnx")
    for model in sorted((ROOT / "test/models").glob("*/model.onnx")):
        # Models with external weights are the external-data harness's.
        if model.stat().st_size <= MAX_MODEL_SEED_BYTES and not any(
            model.parent.glob("*.data")
        ):
            copy_seed(model, out, f"corpus-{model.parent.name}.onnx")


def text_seeds(seeds):
    """Every .onnxtxt model in test/, split where a file holds several."""
    out = seeds / "onnx-text"
    out.mkdir(parents=True, exist_ok=True)
    for path in sorted((ROOT / "test").rglob("*.onnxtxt")):
        text = path.read_text(errors="replace")
        pieces = re.split(r"\n# -----[^\n]*\n", text)
        for index, piece in enumerate(pieces):
            # Only the model: lit's RUN and CHECK lines would be noise.
            lines = [l for l in piece.splitlines() if not l.startswith("#")]
            if any(l.strip() for l in lines):
                name = f"{path.parent.name}-{path.stem}-{index}.onnxtxt"
                (out / name).write_text("\n".join(lines) + "\n")


def external_data_seeds(seeds):
    """Models whose initializers name the harness's fixture files."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper

    out = seeds / "external-data"
    out.mkdir(parents=True, exist_ok=True)
    # (location, offset, length, element count): in range, at an offset,
    # nested, empty, and the escapes the importer must refuse.
    cases = [
        ("weights.bin", None, None, 1024),
        ("weights.bin", 64, 256, 64),
        ("nested/weights.bin", 0, 64, 16),
        ("empty.bin", 0, 0, 0),
        ("weights.bin", 4000, 400, 100),
        ("directory", None, None, 4),
        ("escape", None, None, 4),
        ("up/weights.bin", None, None, 4),
        ("../weights.bin", None, None, 4),
        ("/etc/passwd", None, None, 4),
        ("missing.bin", None, None, 4),
    ]
    for index, (location, offset, length, count) in enumerate(cases):
        weight = TensorProto(name="w", data_type=TensorProto.FLOAT,
                             dims=[count])
        weight.data_location = TensorProto.EXTERNAL
        for key, value in (("location", location), ("offset", offset),
                           ("length", length)):
            if value is not None:
                entry = weight.external_data.add()
                entry.key, entry.value = key, str(value)
        graph = helper.make_graph(
            [helper.make_node("Add", ["x", "w"], ["y"])], "g",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [count])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [count])],
            [weight])
        model = helper.make_model(
            graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
        (out / f"case{index}.onnx").write_bytes(model.SerializeToString())
    # A model with a raw initializer too, so mutations can move bytes
    # between the inline and the external forms.
    inline = onnx.numpy_helper.from_array(np.arange(8, dtype=np.float32), "v")
    graph = helper.make_graph(
        [helper.make_node("Mul", ["x", "v"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8])],
        [inline])
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    (out / "inline.onnx").write_bytes(model.SerializeToString())


def tensor_seeds(build, seeds):
    import numpy as np

    out = seeds / "tensor-file"
    out.mkdir(parents=True, exist_ok=True)
    # TensorProtos from the suite's data sets: every dtype it uses.
    seen = 0
    for suite in (DEBIAN_NODE_SUITE, build / "onnx-node-suite"):
        if not suite.is_dir():
            continue
        for pb in sorted(suite.glob("*/test_data_set_0/*.pb")):
            if pb.stat().st_size <= 8192 and seen < 400:
                copy_seed(pb, out, f"{pb.parent.parent.name}-{pb.name}")
                seen += 1
    dtypes = ["float32", "float64", "float16", "int8", "uint8", "int16",
              "int32", "int64", "uint16", "uint32", "uint64", "bool"]
    for dtype in dtypes:
        for shape in [(), (3,), (2, 3), (1, 2, 2, 2)]:
            array = np.arange(int(np.prod(shape)) or 1).astype(dtype)
            array = array.reshape(shape) if shape else array.reshape(())
            name = f"{dtype}-{'x'.join(map(str, shape)) or 'scalar'}.npy"
            np.save(out / name, array)
            if len(shape) == 2:
                np.save(out / f"fortran-{name}", np.asfortranarray(array))


def compile_engines(build, work):
    """Engines the engine harnesses start from: small, one of each kind."""
    loomc = build / "bin/loomc"
    engines = work / "engines"
    engines.mkdir(parents=True, exist_ok=True)
    inputs = ROOT / "test/Runtime/Inputs"
    jobs = [
        ("symbolic", inputs / "symbolic_add_relu.onnxtxt", []),
        # A profile with code specialized for its OPT shapes: variant records
        # and a variant code section (format version 3).
        ("profiled", inputs / "symbolic_add_relu.onnxtxt",
         ["--profile=X=1x4:3x4:8x4", "--profile=Y=1x4:3x4:8x4"]),
        ("mlp", inputs / "uniform_bias_mlp.onnxtxt", []),
        ("mlp_tp2", inputs / "uniform_bias_mlp.onnxtxt", ["--grid=tp=2"]),
        ("decoder_kv", ROOT / "test/models/llama_kv/model.onnx",
         ["--kv-cache=16"]),
    ]
    made = []
    for name, model, flags in jobs:
        engine = engines / f"{name}.engine"
        if not engine.exists() or engine.stat().st_mtime < loomc.stat().st_mtime:
            result = subprocess.run([str(loomc), str(model), *flags, "-o", str(engine)],
                                    capture_output=True, text=True)
            if result.returncode != 0:
                # A model the harness cannot start from is a gap in its
                # seeds, not a finding: say so and go on.
                log(f"fuzz: could not compile {name}: {result.stderr.strip()}")
                continue
        made.append(engine)
    return made


def run_harness(name, build, work, seeds, seconds, jobs, extra_env):
    binary = build / "bin/fuzz" / f"{name}-fuzzer"
    corpus = work / "corpus" / name
    corpus.mkdir(parents=True, exist_ok=True)
    artifacts = work / "artifacts"
    artifacts.mkdir(parents=True, exist_ok=True)
    settings = HARNESSES[name]
    command = [
        str(binary), str(corpus), str(seeds / name),
        f"-max_total_time={seconds}",
        f"-timeout={settings['timeout']}",
        "-rss_limit_mb=4096",
        "-print_final_stats=1",
        f"-artifact_prefix={artifacts}/{name}-",
    ]
    if settings["max_len"]:
        command.append(f"-max_len={settings['max_len']}")
    if jobs > 1:
        command += [f"-fork={jobs}", "-ignore_crashes=0"]
    env = dict(os.environ, **extra_env)
    # Leaks are findings too; UBSan stops at the first report.
    env.setdefault("ASAN_OPTIONS", "detect_leaks=1:allocator_may_return_null=1")
    env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
    (seeds / name).mkdir(parents=True, exist_ok=True)
    logfile = work / f"{name}.log"
    start = time.time()
    with open(logfile, "w") as output:
        result = subprocess.run(command, stdout=output, stderr=subprocess.STDOUT,
                                env=env)
    elapsed = time.time() - start
    text = logfile.read_text(errors="replace")
    runs = re.findall(r"stat::number_of_executed_units:\s*(\d+)", text)
    coverage = re.findall(r"\bcov: (\d+)", text)
    found = sorted(str(p) for p in artifacts.glob(f"{name}-*"))
    return dict(name=name, rc=result.returncode, seconds=elapsed,
                runs=sum(int(r) for r in runs) if runs else None,
                cov=coverage[-1] if coverage else "?", log=logfile,
                binary=binary, artifacts=found, corpus=corpus)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", type=Path,
                        default=Path(os.environ.get("LOOM_BUILD_DIR", ROOT / "build")))
    parser.add_argument("--work", type=Path, default=None,
                        help="corpus, seeds, logs and findings (default BUILD/fuzz)")
    parser.add_argument("--seconds", type=int, default=60,
                        help="how long each harness runs")
    parser.add_argument("--jobs", type=int, default=1,
                        help="processes per harness (libFuzzer -fork)")
    parser.add_argument("--parallel", type=int, default=1,
                        help="harnesses run at once")
    parser.add_argument("--only", action="append", choices=sorted(HARNESSES),
                        help="run only these harnesses")
    parser.add_argument("--no-build", action="store_true")
    args = parser.parse_args()
    build = args.build.resolve()
    work = (args.work or build / "fuzz").resolve()
    names = args.only or list(HARNESSES)

    if not args.no_build:
        log("fuzz: building the harnesses (ninja loom-fuzzers loomc)")
        subprocess.run(["ninja", "-C", str(build), "loom-fuzzers", "loomc"],
                       check=True)
    missing = [n for n in names if not (build / "bin/fuzz" / f"{n}-fuzzer").exists()]
    if missing:
        sys.exit("fuzz: not built (is clang's libFuzzer, libclang-rt-22-dev, "
                 f"installed?): {', '.join(missing)}")

    seeds = work / "seeds"
    shutil.rmtree(seeds, ignore_errors=True)
    log("fuzz: making seeds")
    model_seeds(build, seeds)
    text_seeds(seeds)
    external_data_seeds(seeds)
    tensor_seeds(build, seeds)
    engines = compile_engines(build, work)
    for engine in engines:
        copy_seed(engine, seeds / "engine-loader", engine.name)
    # loom-exec's reader gets the .npy seeds of the tensor readers.
    for npy in sorted((seeds / "tensor-file").glob("*.npy")):
        copy_seed(npy, seeds / "npy-exec", npy.name)
    for name in names:
        count = len(list((seeds / name).glob("*"))) if (seeds / name).is_dir() else 0
        log(f"fuzz: {name}: {count} seeds")
    extra_env = {"LOOM_FUZZ_ENGINES": ":".join(str(e) for e in engines)}
    # Findings of earlier runs are not this run's.
    for old in (work / "artifacts").glob("*") if (work / "artifacts").is_dir() else []:
        old.unlink()

    with ThreadPoolExecutor(max_workers=max(1, args.parallel)) as pool:
        results = list(pool.map(
            lambda n: run_harness(n, build, work, seeds, args.seconds,
                                  args.jobs, extra_env), names))

    failed = False
    log(f"\n{'harness':<16}{'seconds':>9}{'runs':>12}{'cov':>8}  result")
    for r in results:
        ok = r["rc"] == 0 and not r["artifacts"]
        failed |= not ok
        runs = r["runs"] if r["runs"] is not None else "?"
        log(f"{r['name']:<16}{r['seconds']:>9.0f}{runs:>12}{r['cov']:>8}  "
            f"{'ok' if ok else 'FAILED (exit %d)' % r['rc']}")
    for r in results:
        if r["rc"] != 0 or r["artifacts"]:
            log(f"\nfuzz: {r['name']} failed; its log is {r['log']}")
            tail = r["log"].read_text(errors="replace").splitlines()[-40:]
            log("\n".join(tail))
            for artifact in r["artifacts"]:
                env = (f"LOOM_FUZZ_ENGINES={extra_env['LOOM_FUZZ_ENGINES']} "
                       if r["name"] == "runtime-api" else "")
                log(f"reproduce: {env}{r['binary']} {artifact}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
