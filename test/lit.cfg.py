# -*- Python -*-
# lit configuration for Loom's regression tests.

import os

import lit.formats
from lit.llvm import llvm_config

config.name = "Loom"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
# .mlir: IR tests; .onnxtxt: models in the ONNX text syntax ('#' comments).
config.suffixes = [".mlir", ".onnxtxt", ".test"]
config.excludes = ["Inputs", "fixtures", "lib", "conformance", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]

config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.loom_obj_root, "test")

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%loom_src_root", config.loom_src_root))
config.substitutions.append(("%loom_obj_root", config.loom_obj_root))
# Fixtures are generated with Debian's python3 and its python3-onnx (1.12).
# -s: ignore packages in the user site, which may hold another onnx.
config.substitutions.append(("%onnx_python", "/usr/bin/python3 -s"))
# Several ONNX text models in one test file are separated by "# -----"; the
# substitution keeps the marker itself out of the RUN line.
config.substitutions.append(("%split_onnx", "--split-input-file='# ----''-'"))
config.substitutions.append(
    ("%onnx_node_suite", "/usr/share/libonnx-testdata/data/node"))

tool_dirs = [config.loom_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(
    ["loom-opt", "loom-translate", "loom-run", "loomc", "loom-plan", "loom-exec",
     "loom-runtime-tests", "loom-runtime-cpp-tests", "loom-mpi-comm-test"],
    tool_dirs)

# Library convolutions need the oneDNN kernel library plugin (built when
# CMake finds oneDNN; scripts/install-deps.sh installs libdnnl-dev).
if os.path.exists(os.path.join(config.loom_obj_root, "lib",
                               "libloom_runtime_onednn.so")):
    config.available_features.add("onednn")

# Byte products compile to vpdpbusd on hosts with AVX512-VNNI only (the
# engines of other hosts widen the bytes to i32).
try:
    with open("/proc/cpuinfo") as cpuinfo:
        flags = set()
        for line in cpuinfo:
            if line.startswith("flags"):
                flags.update(line.split(":", 1)[1].split())
    if {"avx512f", "avx512_vnni"} <= flags:
        config.available_features.add("avx512-vnni")
    # bf16 products compile to vdpbf16ps with AVX512-BF16, and to AMX tiles
    # (as do byte products) where the CPU has AMX; loomc also needs the
    # kernel's permission for AMX, which Linux 5.16 and later give.
    if {"avx512f", "avx512_bf16"} <= flags:
        config.available_features.add("avx512-bf16")
    if {"amx_tile", "amx_bf16", "amx_int8"} <= flags:
        config.available_features.add("amx")
except OSError:
    pass

# MPI tests need Open MPI's mpirun and the MPI communicator's test program
# (built when CMake finds MPI; scripts/install-deps.sh installs Open MPI).
import shutil
mpirun = shutil.which("mpirun")
if mpirun and os.path.exists(os.path.join(config.loom_tools_dir,
                                          "loom-mpi-comm-test")):
    config.available_features.add("mpi")
    # As root (CI) Open MPI needs --allow-run-as-root; 2 cores need
    # --oversubscribe for 4 ranks.
    config.substitutions.append(
        ("%mpirun", mpirun + " --allow-run-as-root --oversubscribe"))

# The CUDA target assembles its kernels with the toolkit's ptxas (the
# default toolkit of `loomc --target=cuda`); without it those tests are
# reported unsupported. Host emulation of the kernels needs no toolkit.
if os.path.exists("/usr/local/cuda/bin/ptxas"):
    config.available_features.add("cuda-toolkit")
# A test that runs on a GPU needs the driver library and a device; CI has
# neither (scripts/gpu-check.sh runs the engines where there is one).
if os.path.exists("/dev/nvidiactl"):
    config.available_features.add("cuda-device")

# The HTML report is checked in a real headless browser: Chromium from
# Debian (scripts/install-deps.sh installs it).
chromium = shutil.which("chromium")
if chromium:
    config.available_features.add("chromium")
    config.substitutions.append(("%chromium", chromium))
