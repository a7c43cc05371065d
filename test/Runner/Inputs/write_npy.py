"""Writes the .npy inputs and expected outputs of loom-run.test."""
import os
import sys

import numpy as np

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
x = np.arange(6, dtype=np.float32).reshape(2, 3)
b = np.array([0.5, -1.0, 2.0], dtype=np.float32)
np.save(os.path.join(out, "a_x.npy"), x)
np.save(os.path.join(out, "b_b.npy"), b)
np.save(os.path.join(out, "expected.npy"), x + b)
wrong = x + b
wrong[1, 2] += 0.5
np.save(os.path.join(out, "wrong.npy"), wrong)
np.save(os.path.join(out, "int.npy"), np.zeros((2, 3), np.int32))
