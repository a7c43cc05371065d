"""Inputs for attention_run_time_sizes.mlir: `make_attention_inputs.py DIR
BATCH QUERIES KEYS MASK_ROWS`.

Writes DIR/input_{0..4}.npy: q [B, 4, S, 8], k [B, 2, T, 8], v [B, 2, T, 6],
an additive mask [B, 1, MASK_ROWS, T] (MASK_ROWS is S, or 1 to broadcast
over the rows at run time) and a boolean mask [B, 1, 1, T] that drops about
a quarter of the keys (every key of the first batch item when T is 1, so
that a fully masked row is covered).
"""
import os
import sys

import numpy as np

out = sys.argv[1]
batch, queries, keys, mask_rows = (int(x) for x in sys.argv[2:6])
rng = np.random.default_rng(batch * 1000003 + queries * 1009 + keys)
os.makedirs(out, exist_ok=True)
keep = rng.random((batch, 1, 1, keys)) > 0.25
if keys == 1:
    keep[0] = False
inputs = [
    rng.standard_normal((batch, 4, queries, 8)).astype(np.float32),
    rng.standard_normal((batch, 2, keys, 8)).astype(np.float32),
    rng.standard_normal((batch, 2, keys, 6)).astype(np.float32),
    rng.standard_normal((batch, 1, mask_rows, keys)).astype(np.float32),
    keep,
]
for index, value in enumerate(inputs):
    np.save(os.path.join(out, "input_%d.npy" % index), value)
