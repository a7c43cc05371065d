"""loom.Engine: a compiled engine file, loaded and run from Python."""

from __future__ import annotations

import os
import shutil
import statistics
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import (Any, Dict, List, Mapping, Optional, Sequence, Tuple,
                    Union)

import numpy as np

from . import _runtime

# The runtime's dtype names (loom_dtype_name: MLIR's spellings) and their
# NumPy dtypes. bfloat16 has no NumPy dtype: it is exchanged as its 16-bit
# pattern (uint16), or as ml_dtypes.bfloat16 where that package is
# installed. The 8- and 4-bit floats and the 4- and 2-bit integers take a
# byte each: a float's bits or an unsigned value as uint8, a signed value
# as int8.
_NUMPY_DTYPES = {
    "f16": np.dtype(np.float16),
    "bf16": np.dtype(np.uint16),
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
    "i1": np.dtype(np.bool_),
    "i8": np.dtype(np.int8),
    "i16": np.dtype(np.int16),
    "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64),
    "ui8": np.dtype(np.uint8),
    "ui16": np.dtype(np.uint16),
    "ui32": np.dtype(np.uint32),
    "ui64": np.dtype(np.uint64),
    "f8E4M3FN": np.dtype(np.uint8),
    "f8E4M3FNUZ": np.dtype(np.uint8),
    "f8E5M2": np.dtype(np.uint8),
    "f8E5M2FNUZ": np.dtype(np.uint8),
    "f8E8M0FNU": np.dtype(np.uint8),
    "f4E2M1FN": np.dtype(np.uint8),
    "i4": np.dtype(np.int8),
    "ui4": np.dtype(np.uint8),
    "i2": np.dtype(np.int8),
    "ui2": np.dtype(np.uint8),
}

try:  # pragma: no cover - optional
    import ml_dtypes as _ml_dtypes

    _BFLOAT16: Optional[np.dtype] = np.dtype(_ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - optional
    _BFLOAT16 = None

Feeds = Union[Mapping[str, Any], Sequence[Any]]


@dataclass(frozen=True)
class TensorInfo:
    """An input or output of an engine.

    ``shape`` holds None for a dimension known only at run time (a symbolic
    input dimension, or an output size the data decides); ``dtype`` is the
    NumPy dtype of the arrays exchanged (uint16 for bfloat16, see
    ``loom_dtype``); ``is_state`` marks a key/value-cache input kept by a
    Session."""

    name: str
    dtype: np.dtype
    loom_dtype: str
    shape: Tuple[Optional[int], ...]
    is_state: bool = False

    def __repr__(self) -> str:
        dims = ", ".join("?" if d is None else str(d) for d in self.shape)
        return f"TensorInfo({self.name!r}, {self.loom_dtype}[{dims}])"


def _tensor_info(raw: Dict[str, Any]) -> TensorInfo:
    return TensorInfo(name=raw["name"], dtype=_NUMPY_DTYPES[raw["dtype"]],
                      loom_dtype=raw["dtype"], shape=tuple(raw["shape"]),
                      is_state=raw["state_axis"] >= 0)


def _as_input_array(value: Any, info: TensorInfo) -> np.ndarray:
    """`value` as a C-contiguous NumPy array of the input's dtype: without a
    copy when it already is one (NumPy arrays, and CPU tensors of other
    frameworks through DLPack); a wrong dtype is an error, not a cast."""
    if isinstance(value, np.ndarray):
        array = value
    elif hasattr(value, "__dlpack__"):
        try:
            array = np.from_dlpack(value)
        except (BufferError, TypeError, RuntimeError) as error:
            raise TypeError(
                f"input '{info.name}': cannot read it through DLPack "
                f"({error}); pass a CPU tensor or a NumPy array") from None
    else:
        array = np.asarray(value)
    if info.loom_dtype == "bf16" and _BFLOAT16 is not None and \
            array.dtype == _BFLOAT16:
        array = array.view(np.uint16)
    if array.dtype != info.dtype:
        raise TypeError(
            f"input '{info.name}' has dtype {array.dtype}, but the engine "
            f"takes {info.loom_dtype} ({info.dtype}); convert it first")
    # Not np.ascontiguousarray: it makes 0-d arrays 1-d.
    return array if array.flags.c_contiguous else np.array(array, order="C")


def _output_array(array: np.ndarray, info: TensorInfo) -> np.ndarray:
    if info.loom_dtype == "bf16" and _BFLOAT16 is not None:
        return array.view(_BFLOAT16)
    return array


def _public_key(key: Union[bytes, str, os.PathLike, None]
                ) -> Optional[bytes]:
    """A trusted key as its 32 bytes: given so, or read from a .pub file
    (64 hexadecimal digits)."""
    if key is None or isinstance(key, bytes):
        return key
    text = Path(key).read_text().strip()
    try:
        data = bytes.fromhex(text)
    except ValueError:
        data = b""
    if len(data) != 32:
        raise ValueError(f"'{key}' is not a public key: expected one line "
                         "of 64 hexadecimal digits")
    return data


class Session:
    """A decoder's key/value cache kept between calls (engines compiled with
    ``kv_cache=N`` / ``loomc --kv-cache``): each ``run`` appends the new
    positions after those already filled, whose count the caller passes as
    the input ``cache_length``. A partitioned engine's session keeps each
    rank's share (with ``grid="tp=N"``, the rank's heads) and runs every
    rank at once. Made by ``Engine.session``."""

    def __init__(self, engine: "Engine", batch: int):
        self._engine = engine
        self._raw = _runtime.Session(engine._runtime(None), batch)

    def run(self, feeds: Feeds, *, ranks: Optional[str] = None
            ) -> Union[Dict[str, np.ndarray], List[Dict[str, np.ndarray]]]:
        """Runs one step; ``feeds`` leave out the state inputs. The result
        is rank 0's outputs, or with ``ranks="all"`` every rank's."""
        if ranks not in (None, "all"):
            raise ValueError("ranks must be None (rank 0's outputs) or 'all'")
        inputs, outputs = self._engine._arguments(feeds, allow_state=True)
        count = self._engine.ranks
        # Every rank takes the same inputs and writes its own outputs.
        all_outputs = [outputs] + [self._engine._new_outputs()
                                   for _ in range(1, count)]
        dynamic = self._raw.run([inputs] * count, all_outputs)
        results = [self._engine._results(all_outputs[r], dynamic[r])
                   for r in range(count)]
        return results if ranks == "all" else results[0]

    def reset(self) -> None:
        """Empties the cache (a new sequence)."""
        self._raw.reset()


class Engine:
    """A compiled engine (``loomc`` or ``loom.compile``), loaded and
    verified. Run it with ``run``; one engine may be run from several
    threads at once."""

    def __init__(self, path: Union[str, os.PathLike], *, threads: int = 1,
                 verify: bool = True,
                 trusted_key: Union[bytes, str, os.PathLike, None] = None,
                 _owned_dir: Any = None):
        self._path = Path(path)
        self._verify = verify
        self._trusted_key = _public_key(trusted_key)
        self._threads = int(threads)
        # Engines loaded per thread count (the runtime fixes it at load).
        self._loaded: Dict[int, Any] = {}
        # A temporary directory holding a compiled engine, removed with it.
        self._owned_dir = _owned_dir
        raw = self._runtime(None)
        self._inputs = [_tensor_info(d) for d in raw.inputs(0)]
        self._outputs = [_tensor_info(d) for d in raw.outputs(0)]
        self.compile_report: Optional[str] = None

    @classmethod
    def load(cls, path: Union[str, os.PathLike], *, threads: int = 1,
             verify: bool = True,
             trusted_key: Union[bytes, str, os.PathLike, None] = None
             ) -> "Engine":
        """Loads the engine file at `path`; ``threads``: threads for the
        parallel loops of its code (changeable per ``run``);
        ``trusted_key``: an Ed25519 public key (32 bytes, or the path of a
        ``.pub`` file from ``loomc --generate-signing-key``) the engine must
        be signed with (``loomc --sign``), else SignatureError."""
        return cls(path, threads=threads, verify=verify,
                   trusted_key=trusted_key)

    def save(self, path: Union[str, os.PathLike]) -> None:
        """Writes the engine file to `path` (``Engine.load`` reads it back;
        so do ``loom-run`` and the C API)."""
        shutil.copyfile(self._path, path)

    def _runtime(self, threads: Optional[int]) -> Any:
        count = self._threads if threads is None else int(threads)
        if count < 1:
            raise ValueError(f"threads must be at least 1, got {count}")
        if count not in self._loaded:
            self._loaded[count] = _runtime.Engine(str(self._path), count,
                                                  self._verify,
                                                  self._trusted_key)
        return self._loaded[count]

    @property
    def path(self) -> Path:
        return self._path

    @property
    def inputs(self) -> List[TensorInfo]:
        """The inputs (of rank 0; every rank takes the same)."""
        return list(self._inputs)

    @property
    def outputs(self) -> List[TensorInfo]:
        return list(self._outputs)

    @property
    def input_names(self) -> List[str]:
        return [i.name for i in self._inputs]

    @property
    def output_names(self) -> List[str]:
        return [o.name for o in self._outputs]

    @property
    def target(self) -> str:
        return self._runtime(None).target

    @property
    def compiler_version(self) -> str:
        return self._runtime(None).compiler_version

    @property
    def grid(self) -> Tuple[int, ...]:
        """The device grid's shape (empty for an engine that was not
        partitioned)."""
        return tuple(self._runtime(None).grid)

    @property
    def ranks(self) -> int:
        """The ranks of the grid; run() runs them all, on threads."""
        return self._runtime(None).num_ranks

    @property
    def specialized_shapes(self) -> List[Dict[str, Tuple[int, ...]]]:
        """The input shapes that have code of their own (the OPT shapes of
        ``loom.compile(profiles=...)`` or ``loomc --profile``), one dict
        {input name: shape} per program. A run whose inputs have exactly
        one program's shapes runs that program; any other run the general
        code, with the same results."""
        return [{d["name"]: tuple(d["shape"]) for d in inputs}
                for inputs in self._runtime(None).variants(0)]

    def last_run_specialized(self, rank: int = 0
                             ) -> Optional[Dict[str, Tuple[int, ...]]]:
        """The shapes of the specialized program rank `rank`'s last run
        (``run``, ``benchmark`` or ``profile``) ran, as in
        ``specialized_shapes``; None when it ran the general code, or
        before the first run."""
        raw = getattr(self, "_last_runtime", None) or self._runtime(None)
        variant = raw.last_variant(rank)
        if variant < 0:
            return None
        return {d["name"]: tuple(d["shape"])
                for d in raw.variants(rank)[variant]}

    def __repr__(self) -> str:
        return (f"<loom.Engine {str(self._path)!r} target={self.target} "
                f"ranks={self.ranks} inputs={self._inputs} "
                f"outputs={self._outputs}>")

    # -- running -----------------------------------------------------------

    def _arguments(self, feeds: Feeds, allow_state: bool = False
                   ) -> Tuple[List[Optional[np.ndarray]],
                              List[Optional[np.ndarray]]]:
        """The input arrays in the engine's order and freshly allocated
        output arrays (None where the data decides an output's size)."""
        infos = self._inputs
        if isinstance(feeds, Mapping):
            names = set(i.name for i in infos)
            unknown = [k for k in feeds if k not in names]
            if unknown:
                raise ValueError(
                    f"unknown input(s) {', '.join(map(repr, unknown))}; the "
                    f"engine's inputs are {', '.join(self.input_names)}")
            values: List[Any] = []
            for info in infos:
                if info.name in feeds:
                    values.append(feeds[info.name])
                elif allow_state and info.is_state:
                    values.append(None)
                else:
                    raise ValueError(f"input '{info.name}' is missing")
        else:
            values = list(feeds)
            wanted = [i for i in infos if not (allow_state and i.is_state)]
            if len(values) != len(wanted):
                raise ValueError(f"the engine takes {len(wanted)} inputs, but "
                                 f"{len(values)} were given")
            if allow_state:
                it = iter(values)
                values = [None if i.is_state else next(it) for i in infos]
        inputs = [None if v is None else _as_input_array(v, info)
                  for v, info in zip(values, infos)]
        return inputs, self._new_outputs()

    def _new_outputs(self) -> List[Optional[np.ndarray]]:
        """Output arrays for one call; None where the data decides an
        output's size (the runtime allocates those)."""
        return [None if any(d is None for d in o.shape)
                else np.empty(o.shape, dtype=o.dtype) for o in self._outputs]

    def _results(self, outputs: List[Optional[np.ndarray]],
                 dynamic: List[Optional[np.ndarray]]
                 ) -> Dict[str, np.ndarray]:
        results = {}
        for info, static, computed in zip(self._outputs, outputs, dynamic):
            array = static if static is not None else computed
            results[info.name] = _output_array(array, info)
        return results

    def _run_all_ranks(self, feeds: Feeds, threads: Optional[int],
                       iterations: int, timeout_ms: Optional[int]):
        raw = self._runtime(threads)
        self._last_runtime = raw
        inputs, outputs = self._arguments(feeds)
        ranks = raw.num_ranks
        # Every rank takes the same inputs (the partitioned programs keep the
        # unpartitioned interface) and writes its own outputs.
        all_outputs = [outputs] + [self._new_outputs()
                                   for _ in range(1, ranks)]
        times, dynamic = raw.run([inputs] * ranks, all_outputs, iterations,
                                 0 if timeout_ms is None else int(timeout_ms))
        results = [self._results(all_outputs[r], dynamic[r])
                   for r in range(ranks)]
        return times, results

    def run(self, feeds: Feeds, *, output_names: Optional[Sequence[str]] = None,
            ranks: Optional[str] = None, threads: Optional[int] = None,
            timeout_ms: Optional[int] = None
            ) -> Union[Dict[str, np.ndarray], List[Dict[str, np.ndarray]]]:
        """Runs the engine on `feeds` (a dict by input name, or a list in the
        order of ``inputs``): NumPy arrays, or CPU tensors of any framework
        that speaks DLPack (``torch.Tensor``), read without a copy when they
        are C-contiguous and of the input's dtype. Returns a dict of NumPy
        arrays by output name (``torch.from_dlpack`` takes them without a
        copy).

        A partitioned engine runs all its ranks at once on threads of this
        process; the result is rank 0's outputs, or with ``ranks="all"`` a
        list of every rank's. ``threads``: threads for the parallel loops of
        each rank (default: the engine's, from ``load``). ``timeout_ms``: how
        long a rank waits for its peers before all fail (RankFailedError)."""
        if ranks not in (None, "all"):
            raise ValueError("ranks must be None (rank 0's outputs) or 'all'")
        _, results = self._run_all_ranks(feeds, threads, 1, timeout_ms)
        if output_names is not None:
            missing = [n for n in output_names if n not in results[0]]
            if missing:
                raise ValueError(
                    f"unknown output(s) {', '.join(map(repr, missing))}; the "
                    f"engine's outputs are {', '.join(self.output_names)}")
            results = [{n: r[n] for n in output_names} for r in results]
        return results if ranks == "all" else results[0]

    def benchmark(self, feeds: Feeds, *, warmup: int = 10,
                  iterations: int = 100, threads: Optional[int] = None
                  ) -> Dict[str, float]:
        """Times `iterations` runs after `warmup` ones, in the runtime's own
        loop (no Python between runs); returns latency figures in
        milliseconds: mean, min, max, p50, p90, p95, p99, and the count."""
        if iterations < 1:
            raise ValueError("iterations must be at least 1")
        if warmup > 0:
            self._run_all_ranks(feeds, threads, warmup, None)
        times, _ = self._run_all_ranks(feeds, threads, iterations, None)
        ms = sorted(t / 1e6 for t in times)

        def percentile(p: float) -> float:
            return ms[min(len(ms) - 1, int(round(p / 100 * (len(ms) - 1))))]

        return {"iterations": float(len(ms)), "mean_ms": statistics.fmean(ms),
                "min_ms": ms[0], "max_ms": ms[-1], "p50_ms": percentile(50),
                "p90_ms": percentile(90), "p95_ms": percentile(95),
                "p99_ms": percentile(99)}

    def profile(self, feeds: Feeds, *, iterations: int = 10,
                threads: Optional[int] = None, rank: int = 0
                ) -> List[Dict[str, Any]]:
        """Per-kernel times over `iterations` runs, for engines compiled with
        ``kernel_timers=True`` (``loomc --kernel-timers``): one dict per
        kernel in program order with its label (kind and ONNX node), calls,
        time per call (ms), share of the kernels' total, and GFLOP/s and
        GB/s where the compiler counted the work. Other engines have no
        kernels to report (an empty list)."""
        raw = self._runtime(threads)
        raw.collect_kernel_times(True)
        try:
            self._run_all_ranks(feeds, threads, iterations, None)
        finally:
            raw.collect_kernel_times(False)
        kernels = raw.kernel_times(rank)
        total = sum(k["nanoseconds"] for k in kernels) or 1
        profile = []
        for k in kernels:
            seconds = k["nanoseconds"] / 1e9 / max(k["calls"], 1)
            profile.append({
                "label": k["label"], "calls": k["calls"],
                "ms_per_call": seconds * 1e3,
                "share": k["nanoseconds"] / total,
                "gflops": k["flops"] / seconds / 1e9
                if k["flops"] and seconds else None,
                "gbytes_per_s": k["bytes"] / seconds / 1e9
                if k["bytes"] and seconds else None,
            })
        return profile

    def collective_stats(self, rank: int = 0) -> Dict[str, Dict[str, int]]:
        """The collectives rank `rank` ran in the engine's last call, by kind
        ("all_reduce", "all_gather", "all_to_all", "broadcast", "send",
        "recv"): calls, buffer_bytes and ring_bytes_sent (what a ring
        algorithm sends from the rank: the figure ``loom-plan`` and
        ``plan=auto`` predict). Empty for an engine of one rank."""
        raw = getattr(self, "_last_runtime", None) or self._runtime(None)
        return raw.collective_stats(rank)

    def session(self, batch: int = 1) -> Session:
        """A Session keeping this engine's key/value cache between calls
        (every rank's, for a partitioned engine)."""
        return Session(self, batch)


def engine_from_file(path: Union[str, os.PathLike], owned_dir: Any,
                     threads: int) -> Engine:
    return Engine(path, threads=threads, _owned_dir=owned_dir)


def is_engine_file(path: Union[str, os.PathLike]) -> bool:
    """Whether `path` starts with the engine format's magic (LOOMENGN)."""
    try:
        with open(path, "rb") as f:
            return f.read(8) == b"LOOMENGN"
    except OSError:
        return False


def temporary_directory() -> "tempfile.TemporaryDirectory[str]":
    return tempfile.TemporaryDirectory(prefix="loom-")
