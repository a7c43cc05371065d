"""Inputs for run_time_sizes.mlir: `make_run_time_size_inputs.py DIR CASE`.

CASE is a data set (0, 1, 2) whose sizes match what the model states, or
a data set that breaks one of them: long_range (8 window elements where 7
are stated), zero_delta (the window's range with delta 0), negative_shape
(constant_of_shape of [-1, 5]), keep_three (Compress keeps 3 rows, 4 are
stated).
"""
import os
import sys

import numpy as np

out, case = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(abs(hash(case)) % 2**32 if not case.isdigit() else int(case))
ranges = {"0": (0.0, 7.0, 1.0), "1": (1.5, -2.0, -0.5), "2": (-3.25, 0.25, 0.5)}
start, limit, delta = ranges.get(case, ranges["0"])
n = {"0": 7, "1": 8, "2": 7}.get(case, 7)
keep = np.zeros(6, bool)
keep[rng.choice(6, 4, replace=False)] = True
shape = [4, 5]
if case == "long_range":
    limit = 8.0
if case == "zero_delta":
    delta = 0.0
if case == "negative_shape":
    shape = [-1, 5]
if case == "keep_three":
    keep[np.flatnonzero(keep)[0]] = False
inputs = [np.float32(start), np.float32(limit), np.float32(delta), np.int64(n),
          rng.standard_normal((6, 3)).astype(np.float32), keep,
          np.array(shape, np.int64),
          rng.standard_normal((4, 5)).astype(np.float32)]
os.makedirs(out, exist_ok=True)
for i, value in enumerate(inputs):
    np.save(os.path.join(out, f"input_{i}.npy"), np.asarray(value))
