"""The exceptions of the loom package.

Every failure the runtime reports is a LoomError carrying the runtime's
status (``status``: the loom_status code, ``status_name``: its name, e.g.
``"LOOM_ERROR_CORRUPT"``) and message. Wrong arguments (a missing input, a
wrong dtype or shape) are Python's own ValueError / TypeError and never reach
the runtime.
"""

from __future__ import annotations

from typing import Optional


class LoomError(RuntimeError):
    """A failure reported by Loom's runtime or compiler."""

    def __init__(self, message: str, status: Optional[int] = None,
                 status_name: Optional[str] = None):
        super().__init__(message)
        self.message = message
        self.status = status
        self.status_name = status_name

    def __str__(self) -> str:
        if self.status_name:
            return f"{self.status_name}: {self.message}"
        return self.message


class EngineFileError(LoomError):
    """The engine file cannot be opened, is damaged (its SHA-256 does not
    match), has another format version, or was compiled for a CPU this
    machine is not."""


class SignatureError(EngineFileError):
    """A trusted key was given and the engine is not signed by it (or was
    changed after it was signed): LOOM_ERROR_SIGNATURE."""


class NoDeviceError(LoomError):
    """The engine needs a device this machine does not have (e.g. CUDA)."""


class RankFailedError(LoomError):
    """A rank of a partitioned engine failed or timed out; the others
    stopped."""


class CompileError(LoomError):
    """loomc refused the model; ``stderr`` holds its full diagnostics."""

    def __init__(self, message: str, stderr: str = ""):
        super().__init__(message)
        self.stderr = stderr


# loom_status codes (runtime/include/loom/runtime.h).
_STATUS_CLASSES = {
    1: EngineFileError,  # LOOM_ERROR_IO
    2: EngineFileError,  # LOOM_ERROR_CORRUPT
    3: EngineFileError,  # LOOM_ERROR_VERSION
    4: EngineFileError,  # LOOM_ERROR_TARGET
    6: NoDeviceError,  # LOOM_ERROR_NO_DEVICE
    7: RankFailedError,  # LOOM_ERROR_RANK_FAILED
    9: SignatureError,  # LOOM_ERROR_SIGNATURE
}


def from_status(status: int, status_name: str, message: str) -> LoomError:
    """The exception for a runtime status (called by loom._runtime)."""
    cls = _STATUS_CLASSES.get(status, LoomError)
    return cls(message, status, status_name)
