"""Writes a causal grouped-query attention model over a long sequence and its
expected output, computed with numpy in float64 (not by Loom).

usage: long_attention.py OUT_DIR SEQUENCE [symbolic]

OUT_DIR/model.onnxtxt: Attention-23, Q [1, 2, S, 16], K/V [1, 1, S, 16],
is_causal; with `symbolic`, S is a symbolic dimension and the attention
not causal (ONNX aligns its causal frontier to the first key, Loom's fused
op to the last: with run-time sizes the importer cannot tell that they
agree and spells the frontier out); OUT_DIR/inputs/input_{0,1,2}.npy (q, k, v) and OUT_DIR/expected/output_0.npy.
"""

import os
import sys

import numpy as np


def main():
    out, seq = sys.argv[1], int(sys.argv[2])
    symbolic = sys.argv[3:] == ["symbolic"]
    length = "S" if symbolic else str(seq)
    heads, kv_heads, size = 2, 1, 16
    os.makedirs(os.path.join(out, "inputs"), exist_ok=True)
    os.makedirs(os.path.join(out, "expected"), exist_ok=True)
    with open(os.path.join(out, "model.onnxtxt"), "w") as f:
        f.write('<ir_version: 10, opset_import: ["" : 23]>\n'
                "g (float[1,%d,%s,%d] q, float[1,%d,%s,%d] k, float[1,%d,%s,%d] v) "
                "=> (float[1,%d,%s,%d] y) {\n"
                "  y = Attention<is_causal=%d>(q, k, v)\n}\n"
                % (heads, length, size, kv_heads, length, size, kv_heads,
                   length, size, heads, length, size, 0 if symbolic else 1))
    rng = np.random.default_rng(0)
    q = rng.standard_normal((1, heads, seq, size)).astype(np.float32)
    k = rng.standard_normal((1, kv_heads, seq, size)).astype(np.float32)
    v = rng.standard_normal((1, kv_heads, seq, size)).astype(np.float32)
    for index, value in enumerate((q, k, v)):
        np.save(os.path.join(out, "inputs", "input_%d.npy" % index), value)
    y = np.empty((1, heads, seq, size), np.float64)
    future = np.zeros((seq, seq), bool)
    if not symbolic:
        future = np.triu(np.ones((seq, seq), bool), 1)
    for h in range(heads):
        # One head at a time: the scores of one head are seq x seq.
        scores = q[0, h].astype(np.float64) @ k[0, 0].T.astype(np.float64)
        scores /= np.sqrt(size)
        scores[future] = -np.inf
        scores -= scores.max(axis=1, keepdims=True)
        p = np.exp(scores)
        p /= p.sum(axis=1, keepdims=True)
        y[0, h] = p @ v[0, 0].astype(np.float64)
    np.save(os.path.join(out, "expected", "output_0.npy"), y.astype(np.float32))


if __name__ == "__main__":
    main()
