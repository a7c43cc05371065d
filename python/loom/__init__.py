"""Loom: a graph compiler for neural networks, built on MLIR.

    import loom, numpy as np
    engine = loom.compile("model.onnx")
    outputs = engine.run({"input": np.zeros((1, 3, 224, 224), np.float32)})

``loom.compile`` turns an ONNX model into an engine (loomc), ``loom.Engine``
loads and runs engine files (the runtime's C API), ``loom.InferenceSession``
speaks onnxruntime's interface, and ``loom.ir`` reaches the compiler's
stages. See docs/python.md.
"""

from ._compile import compile
from ._engine import Engine, Session, TensorInfo
from ._errors import (CompileError, EngineFileError, LoomError, NoDeviceError,
                      RankFailedError, SignatureError)
from ._session import InferenceSession, NodeArg
from . import ir

__version__ = "0.1.0"

__all__ = [
    "compile", "Engine", "Session", "TensorInfo", "InferenceSession",
    "NodeArg", "LoomError", "CompileError", "EngineFileError",
    "NoDeviceError", "RankFailedError", "SignatureError", "ir",
]
