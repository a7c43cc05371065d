#!/usr/bin/env python3
"""NonMaxSuppression models on seeded random boxes, with onnxruntime's outputs.

Each case is one NonMaxSuppression node whose inputs are all graph inputs
(the scalars are run-time tensors, as in ONNX's node tests), on boxes drawn
around a few cluster centres so that many overlap, and scores rounded to
one decimal so that many are equal. The cases cover several batches and
classes, both center_point_box modes, score_threshold present and absent,
iou_threshold absent (0: any overlap suppresses), max_output_boxes_per_class
above the number of boxes and 0 (nothing selected), corners given in either
order, identical and zero-area boxes. The output's static shape is the
number of rows onnxruntime selects (the importer casts NonMaxSuppression's
[?, 3] result to it). Stored in the ONNX backend-test layout:
    test/fixtures/nms/<case>/model.onnx
    test/fixtures/nms/<case>/test_data_set_0/{input,output}_N.pb
Reference outputs come from onnxruntime, never from Loom; the script also
checks that ONNX's own reference implementation (onnx.reference) selects
the same rows in the same order.

Run with an interpreter that has onnx and onnxruntime from PyPI:
    python -m venv /tmp/venv && /tmp/venv/bin/pip install onnx onnxruntime
    /tmp/venv/bin/python scripts/make_nms_fixtures.py test/fixtures/nms
Models use IR version 8 and opset 17 so that Debian's ONNX 1.12 reads them.
"""

import os
import shutil
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

OPSET = 17


def random_boxes(rng, batches, boxes, center, flip=False, duplicates=0,
                 degenerate=0):
    """[B, N, 4] boxes around 3 cluster centres in [0, 10)^2."""
    out = np.empty((batches, boxes, 4), np.float32)
    for b in range(batches):
        centres = rng.uniform(2, 8, (3, 2))
        pick = centres[rng.integers(0, 3, boxes)]
        xy = pick + rng.normal(0, 0.6, (boxes, 2))
        size = rng.uniform(0.5, 3.0, (boxes, 2))
        if center:
            out[b] = np.concatenate([xy, size], axis=1)  # [xc, yc, w, h]
        else:
            y1, x1 = xy[:, 1] - size[:, 1] / 2, xy[:, 0] - size[:, 0] / 2
            y2, x2 = y1 + size[:, 1], x1 + size[:, 0]
            out[b] = np.stack([y1, x1, y2, x2], axis=1)
            if flip:
                # Either corner first.
                swap = rng.random(boxes) < 0.5
                out[b, swap] = out[b, swap][:, [2, 3, 0, 1]]
        for i in range(duplicates):
            out[b, boxes - 1 - i] = out[b, i]
        for i in range(degenerate):
            k = duplicates + i
            if center:
                out[b, k, 2] = 0  # zero width
            else:
                out[b, k, 3] = out[b, k, 1]  # x2 == x1
    return out


def case(name, seed, batches, classes, boxes, max_boxes, iou, score,
         center=False, flip=False, duplicates=0, degenerate=0, low=0.0):
    """A model and its feeds. `max_boxes`, `iou`, `score`: None = absent."""
    rng = np.random.default_rng(seed)
    feeds = {
        "boxes": random_boxes(rng, batches, boxes, center, flip, duplicates,
                              degenerate),
        # One decimal: many equal scores.
        "scores": np.round(rng.uniform(low, 1.0, (batches, classes, boxes)),
                           1).astype(np.float32),
    }
    inputs = [helper.make_tensor_value_info("boxes", TensorProto.FLOAT,
                                            [batches, boxes, 4]),
              helper.make_tensor_value_info("scores", TensorProto.FLOAT,
                                            [batches, classes, boxes])]
    names = ["boxes", "scores"]
    for key, value, kind, dtype in (
            ("max_output_boxes_per_class", max_boxes, TensorProto.INT64,
             np.int64),
            ("iou_threshold", iou, TensorProto.FLOAT, np.float32),
            ("score_threshold", score, TensorProto.FLOAT, np.float32)):
        if value is None:
            names.append("")
            continue
        names.append(key)
        feeds[key] = np.array([value], dtype)
        inputs.append(helper.make_tensor_value_info(key, kind, [1]))
    while names[-1] == "":
        names.pop()
    node = helper.make_node("NonMaxSuppression", names, ["selected_indices"],
                            name="nms", center_point_box=int(center))

    # For onnx.reference, which does not take absent optional inputs: all
    # three present, with the values absence means (no score threshold is
    # -inf for finite scores).
    full = dict(feeds)
    full.setdefault("max_output_boxes_per_class", np.array([0], np.int64))
    full.setdefault("iou_threshold", np.array([0], np.float32))
    full.setdefault("score_threshold", np.array([-np.inf], np.float32))
    full_node = helper.make_node(
        "NonMaxSuppression",
        ["boxes", "scores", "max_output_boxes_per_class", "iou_threshold",
         "score_threshold"], ["selected_indices"], name="nms",
        center_point_box=int(center))

    def model(rows, complete=False):
        graph_inputs = inputs
        if complete:
            graph_inputs = inputs[:2] + [
                helper.make_tensor_value_info(k, TensorProto.INT64 if k.startswith("max") else TensorProto.FLOAT, [1])
                for k in ("max_output_boxes_per_class", "iou_threshold",
                          "score_threshold")]
        graph = helper.make_graph(
            [full_node if complete else node], name, graph_inputs,
            [helper.make_tensor_value_info("selected_indices",
                                           TensorProto.INT64, [rows, 3])])
        m = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", OPSET)])
        m.ir_version = 8
        onnx.checker.check_model(m)
        return m

    return model, feeds, full


CASES = [
    # name, seed, B, C, N, max, iou, score, options
    lambda: case("corners_threshold", 1, 2, 3, 24, 10, 0.5, 0.3),
    lambda: case("corners_no_threshold", 2, 2, 2, 32, 40, 0.3, None),
    lambda: case("center_threshold", 3, 3, 2, 20, 5, 0.45, 0.2, center=True),
    lambda: case("center_no_threshold", 4, 1, 4, 48, 100, 0.6, None,
                 center=True, duplicates=3, degenerate=2),
    lambda: case("flipped_identical", 5, 2, 2, 30, 30, 0.0, -0.5, flip=True,
                 duplicates=4, degenerate=2, low=-1.0),
    lambda: case("no_iou_threshold", 6, 2, 3, 16, 3, None, 0.5),
    lambda: case("zero_max", 7, 1, 2, 10, 0, 0.5, None),
    lambda: case("large", 8, 2, 3, 100, 40, 0.5, 0.1, flip=True),
]


def main():
    out_root = sys.argv[1]
    for make in CASES:
        model, feeds, full = make()
        probe = model(None)
        session = ort.InferenceSession(probe.SerializeToString(),
                                       providers=["CPUExecutionProvider"])
        (selected,) = session.run(None, feeds)
        (expected,) = ReferenceEvaluator(model(None, complete=True)).run(
            None, full)
        if not np.array_equal(selected, expected):
            sys.exit("%s: onnxruntime and onnx.reference disagree" %
                     probe.graph.name)
        final = model(selected.shape[0])
        name = final.graph.name
        folder = os.path.join(out_root, name)
        shutil.rmtree(folder, ignore_errors=True)
        data = os.path.join(folder, "test_data_set_0")
        os.makedirs(data)
        onnx.save(final, os.path.join(folder, "model.onnx"))
        for i, vi in enumerate(final.graph.input):
            onnx.save_tensor(numpy_helper.from_array(feeds[vi.name], vi.name),
                             os.path.join(data, "input_%d.pb" % i))
        onnx.save_tensor(numpy_helper.from_array(selected, "selected_indices"),
                         os.path.join(data, "output_0.pb"))
        print("%-22s %3d rows selected  (onnxruntime %s)" % (
            name, selected.shape[0], ort.__version__))


if __name__ == "__main__":
    main()
