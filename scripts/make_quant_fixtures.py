#!/usr/bin/env python3
"""Calibration samples, extra test sets and QDQ models for quantization tests.

For the CNN and MLP fixtures (made by make_fixtures.py) this writes:
  FIXTURE/calibration/sample_N/input_0.pb   seeded inputs to calibrate on
  FIXTURE/test_data_set_N (N >= 1)          more seeded inputs, disjoint from
                                            the calibration samples, with the
                                            f32 outputs onnxruntime computes
and, quantized by onnxruntime's own post-training quantizer (QDQ format,
uint8 activations, int8 per-channel weights, min-max calibration on the same
samples), FIXTURE_qdq/model.onnx with test sets holding onnxruntime's
outputs for the quantized model. Reference outputs come from onnxruntime,
never from Loom.

Run with an interpreter that has onnx and onnxruntime from PyPI:
    python -m venv /tmp/venv && /tmp/venv/bin/pip install onnx onnxruntime
    /tmp/venv/bin/python scripts/make_quant_fixtures.py test/fixtures
"""

import os
import shutil
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper
from onnxruntime.quantization import (CalibrationDataReader, QuantFormat,
                                      QuantType, quantize_static)

CALIBRATION_SAMPLES = 16
TEST_SETS = 16


class Samples(CalibrationDataReader):
    def __init__(self, feeds):
        self.feeds = iter(feeds)

    def get_next(self):
        return next(self.feeds, None)


def random_feeds(model, count, seed):
    rng = np.random.default_rng(seed)
    feeds = []
    for _ in range(count):
        feed = {}
        for vi in model.graph.input:
            shape = [d.dim_value for d in vi.type.tensor_type.shape.dim]
            feed[vi.name] = rng.standard_normal(shape).astype(np.float32)
        feeds.append(feed)
    return feeds


def save_set(folder, model, feed, outputs):
    os.makedirs(folder, exist_ok=True)
    for i, vi in enumerate(model.graph.input):
        onnx.save_tensor(numpy_helper.from_array(feed[vi.name], vi.name),
                         os.path.join(folder, "input_%d.pb" % i))
    for i, (vi, value) in enumerate(zip(model.graph.output, outputs or [])):
        onnx.save_tensor(numpy_helper.from_array(value, vi.name),
                         os.path.join(folder, "output_%d.pb" % i))


def run(path, feed):
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    return session.run(None, feed)


def main():
    root = sys.argv[1]
    for name, seed in (("cnn", 100), ("mlp", 200)):
        folder = os.path.join(root, name)
        path = os.path.join(folder, "model.onnx")
        model = onnx.load(path)
        calibration = random_feeds(model, CALIBRATION_SAMPLES, seed)
        tests = random_feeds(model, TEST_SETS, seed + 1)
        shutil.rmtree(os.path.join(folder, "calibration"), ignore_errors=True)
        for i, feed in enumerate(calibration):
            save_set(os.path.join(folder, "calibration", "sample_%d" % i), model, feed, None)
        for i, feed in enumerate(tests):
            save_set(os.path.join(folder, "test_data_set_%d" % (i + 1)), model, feed,
                     run(path, feed))

        qdq_folder = os.path.join(root, name + "_qdq")
        shutil.rmtree(qdq_folder, ignore_errors=True)
        os.makedirs(qdq_folder)
        qdq_path = os.path.join(qdq_folder, "model.onnx")
        quantize_static(path, qdq_path, Samples(calibration), quant_format=QuantFormat.QDQ,
                        per_channel=True, activation_type=QuantType.QUInt8,
                        weight_type=QuantType.QInt8)
        qdq = onnx.load(qdq_path)
        for i, feed in enumerate(tests):
            save_set(os.path.join(qdq_folder, "test_data_set_%d" % i), qdq, feed,
                     run(qdq_path, feed))
        ops = sorted({n.op_type for n in qdq.graph.node})
        print("%-8s calibration %d, test sets %d, QDQ model %d nodes %s (onnxruntime %s)" % (
            name, CALIBRATION_SAMPLES, TEST_SETS, len(qdq.graph.node), ops, ort.__version__))


if __name__ == "__main__":
    main()
