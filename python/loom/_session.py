"""loom.InferenceSession: onnxruntime's session interface over an engine, so
that code written for onnxruntime can switch by changing one line."""

from __future__ import annotations

import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import numpy as np

from ._compile import compile as compile_model
from ._engine import Engine, TensorInfo, is_engine_file

# onnxruntime's type strings.
_ONNX_TYPES = {
    "f16": "tensor(float16)", "bf16": "tensor(bfloat16)",
    "f32": "tensor(float)", "f64": "tensor(double)", "i1": "tensor(bool)",
    "i8": "tensor(int8)", "i16": "tensor(int16)", "i32": "tensor(int32)",
    "i64": "tensor(int64)", "ui8": "tensor(uint8)", "ui16": "tensor(uint16)",
    "ui32": "tensor(uint32)", "ui64": "tensor(uint64)",
    "f8E4M3FN": "tensor(float8e4m3fn)", "f8E4M3FNUZ": "tensor(float8e4m3fnuz)",
    "f8E5M2": "tensor(float8e5m2)", "f8E5M2FNUZ": "tensor(float8e5m2fnuz)",
    "f8E8M0FNU": "tensor(float8e8m0)", "f4E2M1FN": "tensor(float4e2m1)",
    "i4": "tensor(int4)", "ui4": "tensor(uint4)", "i2": "tensor(int2)",
    "ui2": "tensor(uint2)",
}


class NodeArg:
    """An input or output as onnxruntime describes it: name, type
    ("tensor(float)"), shape (None for a symbolic dimension)."""

    def __init__(self, info: TensorInfo):
        self.name = info.name
        self.type = _ONNX_TYPES[info.loom_dtype]
        self.shape: List[Optional[int]] = list(info.shape)

    def __repr__(self) -> str:
        return f"NodeArg(name={self.name!r}, type={self.type!r}, " \
               f"shape={self.shape})"


class InferenceSession:
    """onnxruntime.InferenceSession's interface over a Loom engine.

    `path_or_engine`: an engine file, a loom.Engine, or a model (path,
    bytes, onnx.ModelProto) that is compiled first with `compile_options`
    (see loom.compile). `providers` and `sess_options` are accepted for
    compatibility and ignored."""

    def __init__(self, path_or_engine: Union[str, os.PathLike, bytes, Engine,
                                             Any],
                 sess_options: Any = None, providers: Any = None,
                 **compile_options: Any):
        if isinstance(path_or_engine, Engine):
            self._engine = path_or_engine
        elif isinstance(path_or_engine, (str, os.PathLike)) and \
                is_engine_file(path_or_engine):
            self._engine = Engine.load(
                path_or_engine, threads=compile_options.get("threads", 1))
        else:
            self._engine = compile_model(path_or_engine, **compile_options)

    @property
    def engine(self) -> Engine:
        return self._engine

    def get_inputs(self) -> List[NodeArg]:
        return [NodeArg(i) for i in self._engine.inputs]

    def get_outputs(self) -> List[NodeArg]:
        return [NodeArg(o) for o in self._engine.outputs]

    def get_providers(self) -> List[str]:
        return [f"Loom{self._engine.target.upper()}"]

    def run(self, output_names: Optional[Sequence[str]],
            input_feed: Mapping[str, Any], run_options: Any = None
            ) -> List[np.ndarray]:
        """The outputs named (all, in the model's order, when None or
        empty), as a list."""
        results: Dict[str, np.ndarray] = self._engine.run(input_feed)
        names = list(output_names) if output_names else \
            self._engine.output_names
        missing = [n for n in names if n not in results]
        if missing:
            raise ValueError(
                f"unknown output(s) {', '.join(map(repr, missing))}; the "
                f"model's outputs are {', '.join(self._engine.output_names)}")
        return [results[n] for n in names]
