"""Writes the inputs of Inputs/index_checks.mlir into DIR: in range (with
negative indices counted from the end), or with one index out of range
in the op named by the second argument."""
import os
import sys

import numpy as np

folder, bad = sys.argv[1], sys.argv[2]
os.makedirs(folder, exist_ok=True)
rng = np.random.default_rng(3)
inputs = {
    "x": rng.standard_normal((4, 5)).astype(np.float32),
    "g": np.array([1, -1, 3], dtype=np.int64),
    "e": np.array([[0, 1, 2, 3, -4], [3, 2, 1, 0, -1], [1, 1, 2, 2, 0]], dtype=np.int64),
    "n": np.array([[0, 4], [-1, -5]], dtype=np.int64),
    "s": np.array([[0, 1, 2, 3, 0], [3, 2, 1, 0, 1], [1, 1, 2, 2, 3]], dtype=np.int64),
    "u": rng.standard_normal((3, 5)).astype(np.float32),
    "r": np.array([[2], [-1]], dtype=np.int64),
    "rows": rng.standard_normal((2, 5)).astype(np.float32),
}
# One index past its dimension (or before it, counting from the end).
if bad == "gather":
    inputs["g"][1] = 4
elif bad == "gather_elements":
    inputs["e"][2, 3] = -5
elif bad == "gather_nd":
    inputs["n"][1, 1] = 5  # the column: dimension 1, of size 5
elif bad == "scatter_elements":
    inputs["s"][0, 0] = 1000000
elif bad == "scatter_nd":
    inputs["r"][0, 0] = -7
for i, name in enumerate(["x", "g", "e", "n", "s", "u", "r", "rows"]):
    np.save(os.path.join(folder, "input_%d.npy" % i), inputs[name])
