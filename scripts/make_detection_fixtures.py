#!/usr/bin/env python3
"""Data sets for test/fixtures/detections/model.onnxtxt, with onnxruntime's outputs.

The model's outputs have sizes the data decides (NonMaxSuppression's
selected rows, declared int64[N, 3]; NonZero's coordinates, int64[2, M]),
so an engine returns them in memory the runtime allocates. Each data set
draws boxes around two cluster centres (many overlap), scores, a limit per
class and an IoU threshold, and a 3x4 tensor about half zeros; the number
of rows differs between data sets. Reference outputs come from
onnxruntime, never from Loom.

    /tmp/venv/bin/python scripts/make_detection_fixtures.py test/fixtures/detections
"""

import os
import sys

import numpy as np
import onnxruntime as ort
from onnx import numpy_helper, parser

root = sys.argv[1]
with open(os.path.join(root, "model.onnxtxt")) as f:
    model = parser.parse_model(f.read())
session = ort.InferenceSession(model.SerializeToString())
names = [i.name for i in model.graph.input]
for n, (seed, limit, iou) in enumerate([(1, 3, 0.3), (2, 6, 0.5), (3, 1, 0.1)]):
    rng = np.random.default_rng(seed)
    centres = rng.random((2, 2)) * 8
    corner = (centres[rng.integers(0, 2, 6)] + rng.random((6, 2))).astype(np.float32)
    size = (rng.random((6, 2)) * 3 + 1).astype(np.float32)
    boxes = np.concatenate([corner, corner + size], axis=1)[None]
    scores = np.round(rng.random((1, 2, 6)), 1).astype(np.float32)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    x[rng.random((3, 4)) < 0.5] = 0
    inputs = [boxes, scores, np.array([limit], np.int64),
              np.array([iou], np.float32), x]
    outputs = session.run(None, dict(zip(names, inputs)))
    out = os.path.join(root, f"test_data_set_{n}")
    os.makedirs(out, exist_ok=True)
    for kind, values in (("input", inputs), ("output", outputs)):
        for i, v in enumerate(values):
            with open(os.path.join(out, f"{kind}_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(v).SerializeToString())
    print(out, [o.shape for o in outputs])
