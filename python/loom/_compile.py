"""loom.compile: a model into an engine, through the loomc compiler."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence, Union

from ._engine import Engine, engine_from_file, temporary_directory
from ._errors import CompileError
from ._tools import run_tool

Model = Union[str, os.PathLike, bytes, Any]

_PRECISIONS = ("f32", "fp16", "bf16")


def _model_file(model: Model, directory: str) -> str:
    """A path loomc can read for `model`: the path itself, or the bytes or
    the onnx.ModelProto written into `directory`."""
    if isinstance(model, (str, os.PathLike)):
        path = Path(model)
        if not path.is_file():
            raise FileNotFoundError(f"model file not found: {path}")
        return str(path)
    if isinstance(model, (bytes, bytearray, memoryview)):
        data = bytes(model)
    elif hasattr(model, "SerializeToString"):
        # An onnx.ModelProto (protobuf caps one message at 2 GiB: save a
        # larger model with external data and pass its path instead).
        data = model.SerializeToString()
    else:
        raise TypeError("model must be a path, bytes or an onnx.ModelProto, "
                        f"not {type(model).__name__}")
    path = os.path.join(directory, "model.onnx")
    with open(path, "wb") as f:
        f.write(data)
    return path


def _grid_text(grid: Union[str, Mapping[str, int]]) -> str:
    if isinstance(grid, str):
        return grid
    return ",".join(f"{axis}={int(size)}" for axis, size in grid.items())


def _shape_text(shape: Union[str, Sequence[int]]) -> str:
    if isinstance(shape, str):
        return shape
    dims = [int(d) for d in shape]
    return "x".join(map(str, dims)) if dims else "scalar"


def compile(model: Model, *, target: str = "cpu", precision: str = "f32",
            grid: Optional[Union[str, Mapping[str, int]]] = None,
            plan: Optional[str] = None, devices: Optional[int] = None,
            input_shapes: Optional[Mapping[str, Union[str, Sequence[int]]]]
            = None,
            profiles: Optional[Mapping[str, Sequence[
                Union[str, Sequence[int]]]]] = None,
            specialize: Sequence[Mapping[str, Union[str, Sequence[int]]]]
            = (),
            kv_cache: Optional[int] = None, kernel_timers: bool = False,
            report: Union[bool, str, os.PathLike, None] = None,
            threads: int = 1, extra_args: Sequence[str] = ()) -> Engine:
    """Compiles `model` (a path to .onnx / .onnxtxt / .mlir, its bytes, or an
    onnx.ModelProto) into an engine and loads it.

    - target: "cpu" or "cuda"; precision: "f32", "fp16" or "bf16" (matrix
      products, convolutions and attention; f32 accumulation);
    - grid: partition for a device grid, "tp=2" or {"dp": 2, "tp": 2};
      plan="auto" with `devices` lets the planner choose it;
    - input_shapes: bind symbolic input dimensions, {"input_ids": (2, 64)};
      inputs left symbolic are sized at each run;
    - profiles: optimization profiles of symbolic inputs, {"input_ids":
      ((1, 1), (2, 16), (4, 64))}: (min, opt, max) shapes per input; a run
      outside [min, max] is refused, and code compiled for the OPT shapes
      (every symbolic input needs a profile) runs whenever a run has
      exactly them (``Engine.specialized_shapes``,
      ``Engine.last_run_specialized``); specialize: more shapes to compile
      code for, one program each, [{"input_ids": (8, 16)}] (inputs not
      named take their OPT shape);
    - kv_cache: decoders exported with past_key_values: keep the cache in
      place, N positions (Engine.session runs it);
    - kernel_timers: time every kernel (Engine.profile);
    - report: True keeps loomc's phase and fusion report in
      ``engine.compile_report``; a path also writes it there; a path ending
      in ``.html`` gets the HTML report instead (``loomc --report-html``:
      the kernels as a graph, the memory plan, the collectives);
    - threads: threads for the engine's parallel loops;
    - extra_args: more loomc options, as on its command line.

    Raises CompileError with loomc's diagnostics when the model is refused.
    The engine file lives in a temporary directory until the Engine is
    garbage-collected; ``engine.save(path)`` keeps it."""
    if precision not in _PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(_PRECISIONS)},"
                         f" not {precision!r}")
    directory = temporary_directory()
    try:
        source = _model_file(model, directory.name)
        engine_path = os.path.join(directory.name, "model.engine")
        args = [source, "-o", engine_path, f"--target={target}",
                f"--precision={precision}"]
        if grid is not None:
            args.append(f"--grid={_grid_text(grid)}")
        if plan is not None:
            args.append(f"--plan={plan}")
        if devices is not None:
            args.append(f"--devices={int(devices)}")
        for name, shape in (input_shapes or {}).items():
            args.append(f"--input-shape={name}={_shape_text(shape)}")
        for name, shapes in (profiles or {}).items():
            if isinstance(shapes, str) or len(shapes) != 3:
                raise ValueError(
                    f"the profile of {name!r} must be three shapes (min, opt,"
                    f" max), not {shapes!r}")
            args.append(f"--profile={name}=" +
                        ":".join(_shape_text(shape) for shape in shapes))
        for shapes in specialize:
            args.append("--specialize=" + ",".join(
                f"{name}={_shape_text(shape)}" for name, shape in
                shapes.items()))
        if kv_cache is not None:
            args.append(f"--kv-cache={int(kv_cache)}")
        if kernel_timers:
            args.append("--kernel-timers")
        html = not isinstance(report, bool) and report is not None and \
            str(report).endswith(".html")
        if html:
            args.append(f"--report-html={report}")
        elif report:
            args.append("--report")
        args.extend(extra_args)
        result = run_tool("loomc", args)
        stderr = result.stderr.decode(errors="replace")
        if result.returncode != 0:
            errors = [line for line in stderr.splitlines()
                      if "error" in line] or stderr.strip().splitlines()[-1:]
            raise CompileError(
                "loomc failed: " + ("; ".join(errors) or
                                    f"exit status {result.returncode}"),
                stderr)
        engine = engine_from_file(engine_path, directory, threads)
    except BaseException:
        directory.cleanup()
        raise
    if report and not html:
        engine.compile_report = stderr
        if not isinstance(report, bool):
            Path(report).write_text(stderr)
    return engine
