"""The compiler's stages, for people who write passes: import an ONNX model
into Loom's dialect and run pass pipelines on MLIR text (loom-translate and
loom-opt, the same code loomc runs)."""

from __future__ import annotations

import os
from typing import Any, Sequence, Union

from ._compile import _model_file
from ._engine import temporary_directory
from ._errors import CompileError
from ._tools import run_tool


def _check(tool: str, result: Any) -> str:
    stderr = result.stderr.decode(errors="replace")
    if result.returncode != 0:
        lines = stderr.strip().splitlines()
        raise CompileError(f"{tool} failed: " + (lines[0] if lines else
                           f"exit status {result.returncode}"), stderr)
    return result.stdout.decode()


def import_onnx(model: Union[str, os.PathLike, bytes, Any]) -> str:
    """The model (path, bytes or onnx.ModelProto) in Loom's dialect, as
    MLIR text (``loom-translate --import-onnx``)."""
    with temporary_directory() as directory:
        source = _model_file(model, directory)
        return _check("loom-translate",
                      run_tool("loom-translate", ["--import-onnx", source]))


def run_pipeline(module: str, pipeline: str,
                 extra_args: Sequence[str] = ()) -> str:
    """Runs the textual pass pipeline (``builtin.module(...)`` or the
    nested form loom-opt accepts) on `module` (MLIR text); returns the
    result as MLIR text. Every Loom and upstream pass loom-opt registers is
    available, e.g. ``"builtin.module(func.func(loom-fuse-elementwise))"``."""
    args = [f"--pass-pipeline={pipeline}", *extra_args, "-"]
    return _check("loom-opt",
                  run_tool("loom-opt", args, stdin=module.encode()))


def parse(module: str) -> Any:
    """`module` as an upstream ``mlir.ir.Module``, when the MLIR Python
    bindings are installed (they need the Loom dialect registered to parse
    loom ops: run ``run_pipeline`` down to upstream dialects first)."""
    try:
        from mlir import ir as mlir_ir  # type: ignore
    except ImportError as error:
        raise ImportError("the upstream MLIR Python bindings (`mlir`) are "
                          "not installed") from error
    with mlir_ir.Context() as context:
        context.allow_unregistered_dialects = True
        return mlir_ir.Module.parse(module)
