"""Writes the inputs of run-time-reduce-axes.onnxtxt into DIR/inputs (x of
shape [3, 2, 2] and the axes given as the second argument, comma-separated)
and, for axes the model accepts, NumPy's outputs into DIR/expected."""
import os
import sys

import numpy as np

folder, axes = sys.argv[1], [int(a) for a in sys.argv[2].split(",")]
inputs = os.path.join(folder, "inputs")
expected = os.path.join(folder, "expected")
os.makedirs(inputs, exist_ok=True)
x = np.random.default_rng(5).standard_normal((3, 2, 2)).astype(np.float32)
np.save(os.path.join(inputs, "input_0.npy"), x)
np.save(os.path.join(inputs, "input_1.npy"), np.array(axes, dtype=np.int64))
if all(-3 <= a < 3 for a in axes) and len(set(a % 3 for a in axes)) == len(axes):
    os.makedirs(expected, exist_ok=True)
    reduced = tuple(a % 3 for a in axes)
    np.save(os.path.join(expected, "output_0.npy"), x.sum(axis=reduced))
    m = x.max(axis=reduced, keepdims=True)
    lse = np.log(np.exp(x - m).sum(axis=reduced)) + m.squeeze(axis=reduced)
    np.save(os.path.join(expected, "output_1.npy"), lse.astype(np.float32))
