#!/usr/bin/env python3
"""Data sets for test/fixtures/control_flow/*/model.onnxtxt, with onnxruntime's outputs.

Each model holds If, Loop or Scan nodes (see the comment at the top of each
model). The data sets take every branch: for filtered_nms, a threshold
that keeps no box (the empty then branch) and thresholds that keep some
(the NonMaxSuppression branch, row counts the data decides); for branches,
the condition true and false; for loops, a trip count that the body's
condition cuts short, one that it does not, and zero iterations. Reference outputs come from onnxruntime, never
from Loom.

    /opt/corpus-venv/bin/python scripts/make_control_flow_fixtures.py test/fixtures/control_flow
"""

import os
import sys

import numpy as np
import onnxruntime as ort
from onnx import numpy_helper, parser


def write(root, n, inputs, outputs):
    out = os.path.join(root, f"test_data_set_{n}")
    os.makedirs(out, exist_ok=True)
    for kind, values in (("input", inputs), ("output", outputs)):
        for i, v in enumerate(values):
            with open(os.path.join(out, f"{kind}_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(v).SerializeToString())
    print(out, [o.shape for o in outputs])


def session(root):
    with open(os.path.join(root, "model.onnxtxt")) as f:
        model = parser.parse_model(f.read())
    names = [i.name for i in model.graph.input]
    return ort.InferenceSession(model.SerializeToString()), names


def filtered_nms(root):
    run, names = session(root)
    rng = np.random.default_rng(7)
    centres = rng.random((2, 2)) * 6
    corner = (centres[rng.integers(0, 2, 8)] + rng.random((8, 2))).astype(np.float32)
    size = (rng.random((8, 2)) * 3 + 1).astype(np.float32)
    boxes = np.concatenate([corner, corner + size], axis=1)
    scores = rng.random(8).astype(np.float32)
    # No box above 2 (then branch); some above 0.3 and 0.6 (else branch).
    for n, threshold in enumerate([2.0, 0.3, 0.6]):
        inputs = [boxes, scores, np.array([threshold], np.float32)]
        write(root, n, inputs, run.run(None, dict(zip(names, inputs))))


def branches(root):
    run, names = session(root)
    rng = np.random.default_rng(11)
    for n, condition in enumerate([True, False]):
        inputs = [rng.standard_normal((2, 3)).astype(np.float32),
                  np.array(condition), rng.integers(0, 200, 4).astype(np.uint8)]
        write(root, n, inputs, run.run(None, dict(zip(names, inputs))))


def loops(root):
    run, names = session(root)
    # Debian's ONNX 1.12 cannot parse an empty input in the text syntax
    # (Loop without a trip count): the tests read the binary model.
    with open(os.path.join(root, "model.onnxtxt")) as f:
        model = parser.parse_model(f.read())
    with open(os.path.join(root, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    rng = np.random.default_rng(13)
    # A trip count the limit cuts short, one it does not, and none at all.
    for n, (trips, limit) in enumerate([(6, 10.0), (3, 100.0), (0, 5.0)]):
        inputs = [np.array(trips, np.int64),
                  rng.random(3).astype(np.float32) + 0.5,
                  np.array(limit, np.float32),
                  rng.integers(0, 250, 4).astype(np.uint8)]
        write(root, n, inputs, run.run(None, dict(zip(names, inputs))))


def scans(root):
    run, names = session(root)
    rng = np.random.default_rng(17)
    for n in range(2):
        inputs = [rng.standard_normal((2, 4, 3)).astype(np.float32),
                  rng.standard_normal((3, 4)).astype(np.float32),
                  rng.standard_normal(3).astype(np.float32)]
        write(root, n, inputs, run.run(None, dict(zip(names, inputs))))


root = sys.argv[1]
filtered_nms(os.path.join(root, "filtered_nms"))
branches(os.path.join(root, "branches"))
loops(os.path.join(root, "loops"))
scans(os.path.join(root, "scans"))
