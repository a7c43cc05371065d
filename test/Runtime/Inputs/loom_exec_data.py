"""Writes the .npy inputs of loom-exec.test, good and bad.

usage: loom_exec_data.py OUT

OUT/mlp/input_0.npy       x of uniform_bias_mlp.onnxtxt, f32[2, 4, 8]
OUT/add/input_{0,1}.npy   X, Y of symbolic_add_relu.onnxtxt at N = 3, in
                          .npy versions 2 and 3 (the reader takes all three)
OUT/shape/input_0.npy     f32[2, 4, 7]: the wrong shape for the MLP
OUT/dtype/input_0.npy     f64[2, 4, 8]: the wrong dtype
OUT/truncated/input_0.npy the MLP's input cut short in its data
OUT/header/input_0.npy    cut short in its header
OUT/missing/              empty
OUT/extra/input_{0,1}.npy one input too many for the MLP
"""

import os
import sys

import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(7)


def save(name, array, version=None):
    path = os.path.join(out, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        if version:
            np.lib.format.write_array(f, array, version=version)
        else:
            np.save(f, array)
    return path


x = rng.standard_normal((2, 4, 8)).astype(np.float32)
good = save("mlp/input_0.npy", x)
save("add/input_0.npy", rng.standard_normal((3, 4)).astype(np.float32), (2, 0))
save("add/input_1.npy", rng.standard_normal((3, 4)).astype(np.float32), (3, 0))
save("shape/input_0.npy", x[:, :, :7].copy())
save("dtype/input_0.npy", x.astype(np.float64))
data = open(good, "rb").read()
with open(save("truncated/input_0.npy", x), "wb") as f:
    f.write(data[:-10])
with open(save("header/input_0.npy", x), "wb") as f:
    f.write(data[:40])
os.makedirs(os.path.join(out, "missing"), exist_ok=True)
save("extra/input_0.npy", x)
save("extra/input_1.npy", x)
