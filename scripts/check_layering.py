#!/usr/bin/env python3
"""Checks that each library under lib/ includes only the layers it may use.

The layering is docs/design/targets.md's picture: every `#include "loom/..."`
in a library's sources must match one of the prefixes its folder is allowed
(its own headers always are). A few named files may reach further; each
exception says why. CI runs this (scripts/test.sh); it prints every
violation with its file and line and exits 1 when there is one.

    scripts/check_layering.py [--root DIR]
"""

import argparse
import os
import re
import sys

# The runtime's C headers (its ABI): what the compiler may know of the
# runtime.
RUNTIME_ABI = ["loom/abi/", "loom/device.h"]
RUNTIME_API = ["loom/runtime.h", "loom/comm.h"]

DIALECT_IR = ["loom/Dialect/Loom/IR/"]
DIALECT = ["loom/Dialect/Loom/"]

# Folder (relative to lib/) -> include prefixes it may use besides its own
# headers. The longest matching folder applies.
ALLOWED = {
    "Dialect/Loom/IR": DIALECT_IR,
    # plan=auto ranks a decoder's grids with the cluster planner.
    "Dialect/Loom/Sharding": DIALECT_IR + ["loom/ClusterPlanner/"],
    # Constant folding evaluates ops with the reference executor's kernels,
    # so the folder and the oracle cannot disagree (docs/design/README.md).
    "Dialect/Loom/Transforms": DIALECT + ["loom/Reference/"],
    "Reference": DIALECT_IR,
    "Importer/ONNX": DIALECT,
    "Conversion/LoomToLinalg": DIALECT_IR + ["loom/Conversion/"],
    "Pipelines": DIALECT,
    "Engine": RUNTIME_ABI,
    # The target interface knows no target.
    "Target": ["loom/Target/Target.h", "loom/Pipelines/", "loom/Dialect/Loom/Transforms/"],
    # A target: the shared stages and the engine format, never the
    # compiler or another target.
    "Target/CPU": ["loom/Target/Target.h", "loom/Conversion/", "loom/Pipelines/",
                   "loom/Engine/"] + DIALECT + RUNTIME_ABI,
    # The CUDA target's host side (buffers, copies, launches) is CPU code:
    # it is translated, emitted and linked by the CPU target's host-code
    # functions, and bufferized with the CPU's policy.
    "Target/CUDA": ["loom/Target/Target.h", "loom/Conversion/", "loom/Pipelines/",
                    "loom/Engine/", "loom/Target/CPU/CPUTarget.h",
                    "loom/Target/CPU/Executable.h", "loom/Target/CPU/Passes.h"]
                   + DIALECT + RUNTIME_ABI,
    "TensorIO": ["loom/Reference/", "loom/Importer/ONNX/TensorProtoReader.h"],
    "Quantization": DIALECT + ["loom/Reference/", "loom/TensorIO/"],
    # The compiler reaches targets only through loom/Target/Target.h
    # (exceptions below).
    "Compiler": DIALECT + ["loom/Importer/", "loom/Pipelines/", "loom/Target/Target.h",
                           "loom/Engine/", "loom/InitAllDialects.h"],
    "Runner": DIALECT + ["loom/Reference/", "loom/TensorIO/", "loom/Importer/",
                         "loom/Compiler/", "loom/InitAllDialects.h"]
              + RUNTIME_ABI + RUNTIME_API
              # --backend cpu compiles and runs in-process (docs/design/targets.md).
              + ["loom/Target/CPU/CPUTarget.h", "loom/Target/CPU/Executable.h"]
              # --trusted-key reads a public key file for the runtime.
              + ["loom/Engine/EngineSigning.h"],
    "Tools": DIALECT + ["loom/InitAllDialects.h", "loom/Conversion/", "loom/Quantization/",
                        "loom/Target/CPU/Passes.h"],
    "ClusterPlanner": [],
}

# Files that may include more than their folder, and why.
EXCEPTIONS = {
    # registerAllTargets() names the production targets.
    "Compiler/Compiler.cpp": ["loom/Target/CPU/CPUTarget.h",
                              "loom/Target/CUDA/CUDATarget.h"],
    # Expert parallelism's dispatch layout is shared with the lowering of
    # loom.moe; to move into the dialect's IR helpers.
    "Conversion/LoomToLinalg/NNToLinalg.cpp": ["loom/Dialect/Loom/Sharding/ExpertParallel.h"],
}

# The headers a folder owns: include/<prefix> for the folder lib/<folder>.
OWN = {
    "Dialect/Loom/IR": ["loom/Dialect/Loom/IR/"],
    "Dialect/Loom/Sharding": ["loom/Dialect/Loom/Sharding/"],
    "Dialect/Loom/Transforms": ["loom/Dialect/Loom/Transforms/"],
    "Target": ["loom/Target/Target.h"],
    "Tools": ["loom/InitAllDialects.h"],
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"(loom/[^"]+)"')


def folder_of(path):
    """The longest folder of ALLOWED that contains `path` (relative to lib/)."""
    best = None
    for folder in ALLOWED:
        if path.startswith(folder + "/") and (best is None or len(folder) > len(best)):
            best = folder
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    args = parser.parse_args()
    lib = os.path.join(os.path.abspath(args.root), "lib")
    violations, files = [], 0
    for directory, _, names in os.walk(lib):
        for name in sorted(names):
            if not name.endswith((".cpp", ".h", ".c")):
                continue
            full = os.path.join(directory, name)
            relative = os.path.relpath(full, lib)
            folder = folder_of(relative)
            if folder is None:
                violations.append(f"lib/{relative}: not in any folder of the layering "
                                  "(add it to scripts/check_layering.py)")
                continue
            files += 1
            allowed = (ALLOWED[folder] + OWN.get(folder, ["loom/" + folder + "/"])
                       + EXCEPTIONS.get(relative, []))
            with open(full, encoding="utf-8") as source:
                for number, line in enumerate(source, 1):
                    match = INCLUDE.match(line)
                    if match and not any(match.group(1).startswith(p) for p in allowed):
                        violations.append(f"lib/{relative}:{number}: includes "
                                          f"{match.group(1)}, outside what lib/{folder} "
                                          "may use")
    for violation in violations:
        print("layering: " + violation)
    print(f"layering: {files} files, {len(violations)} violations")
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
