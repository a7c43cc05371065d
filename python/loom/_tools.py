"""Where the package finds Loom's tools, and how it runs them."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import List, Sequence

_PACKAGE_DIR = Path(__file__).resolve().parent


def tool_path(name: str) -> Path:
    """The tool `name` (loomc, loom-translate, loom-opt, loom-run): the one
    installed with the package, or, for a package used from the source tree,
    the build tree's (LOOM_BUILD_DIR, default ../build)."""
    candidates: List[Path] = [_PACKAGE_DIR / "bin" / name]
    build = os.environ.get("LOOM_BUILD_DIR")
    if build:
        candidates.append(Path(build) / "bin" / name)
    candidates.append(_PACKAGE_DIR.parent.parent / "build" / "bin" / name)
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    searched = ", ".join(str(c) for c in candidates)
    raise FileNotFoundError(f"Loom's {name} not found (searched {searched})")


def run_tool(name: str, args: Sequence[str],
             stdin: bytes = b"") -> "subprocess.CompletedProcess[bytes]":
    """Runs tool `name` with `args`; returns the completed process (the
    caller decides what a non-zero exit means)."""
    return subprocess.run([str(tool_path(name)), *args], input=stdin,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          check=False)
