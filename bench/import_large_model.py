#!/usr/bin/env python3
"""Times loom-translate on a generated model with ~100 MiB of weights.

Builds a chain of 25 MatMul+Relu layers with 1024x1024 f32 weights
(initializers inside the protobuf), imports it, and prints wall time, peak
memory and the size of the printed IR (resource blobs elided).

usage: /usr/bin/python3 bench/import_large_model.py build/bin/loom-translate
"""
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np
from onnx import TensorProto, helper, numpy_helper


def main():
    tool = sys.argv[1]
    n, layers = 1024, 25
    rng = np.random.default_rng(0)
    inits, nodes, prev = [], [], "x"
    for i in range(layers):
        w = (rng.standard_normal((n, n), dtype=np.float32) * 0.01)
        inits.append(numpy_helper.from_array(w, "w%d" % i))
        nodes.append(helper.make_node("MatMul", [prev, "w%d" % i], ["h%d" % i]))
        nodes.append(helper.make_node("Relu", ["h%d" % i], ["r%d" % i]))
        prev = "r%d" % i
    graph = helper.make_graph(
        nodes, "big", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", n])],
        [helper.make_tensor_value_info(prev, TensorProto.FLOAT, ["N", n])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "big.onnx")
        with open(path, "wb") as f:
            f.write(model.SerializeToString())
        out = os.path.join(tmp, "big.mlir")
        start = time.perf_counter()
        subprocess.run([tool, "--import-onnx", path, "-o", out,
                        "--mlir-elide-resource-strings-if-larger=64"], check=True)
        wall = time.perf_counter() - start
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print("model: %.1f MiB of protobuf, %d layers" % (os.path.getsize(path) / 2**20, layers))
        print("import: %.2f s wall, %.0f MiB peak RSS, printed IR %d bytes"
              % (wall, peak, os.path.getsize(out)))


if __name__ == "__main__":
    main()
