"""Writes Inputs/byte_products: a model of quantized products whose
activations are uint8 and whose weights are constant int8 (the byte
products of convert-loom-to-linalg), sized to reach every part of the
VNNI tiles (a reduction that is not a multiple of four, columns that are
not a multiple of 16, rows that are not a multiple of 8, padding with a
non-zero activation zero point, parallel loops), its inputs and
onnxruntime's outputs. The scales are powers of two, so that every
requantization is exact in float32 as in float64: onnxruntime's results
and Loom's are then the same integers (with other scales onnxruntime's
float32 requantization lands one step away on rare near-ties). Run with onnx and onnxruntime installed:
  python make_byte_products.py test/Target/CPU/Inputs/byte_products"""
import os
import sys

import numpy as np
import onnx
import onnxruntime
from onnx import TensorProto, helper, numpy_helper

folder = sys.argv[1]
rng = np.random.default_rng(11)
nodes, inits, inputs, outputs, feeds = [], [], [], [], {}


def const(name, array):
    inits.append(numpy_helper.from_array(array, name))
    return name


def activation(name, shape, zero_point):
    inputs.append(helper.make_tensor_value_info(name, TensorProto.UINT8, shape))
    feeds[name] = rng.integers(0, 256, shape, dtype=np.uint8)
    const(name + "_scale", np.array(2.0**-6, np.float32))
    const(name + "_zp", np.array(zero_point, np.uint8))


def conv(name, x, x_shape, x_zp, filters, kernel, y_shape, **attrs):
    activation(x, x_shape, x_zp)
    w = rng.integers(-128, 128, (filters, x_shape[1], *kernel), dtype=np.int8)
    const(name + "_w", w)
    const(name + "_w_scale",
          (2.0 ** -rng.integers(7, 11, filters)).astype(np.float32))
    const(name + "_w_zp", np.zeros(filters, np.int8))
    const(name + "_y_scale", np.array(2.0**-1, np.float32))
    const(name + "_y_zp", np.array(128, np.uint8))
    const(name + "_b", rng.integers(-5000, 5000, filters, dtype=np.int32))
    nodes.append(helper.make_node(
        "QLinearConv",
        [x, x + "_scale", x + "_zp", name + "_w", name + "_w_scale",
         name + "_w_zp", name + "_y_scale", name + "_y_zp", name + "_b"],
        [name], **attrs))
    outputs.append(helper.make_tensor_value_info(name, TensorProto.UINT8,
                                                 y_shape))


def matmul(name, a, a_shape, a_zp, columns):
    activation(a, a_shape, a_zp)
    const(name + "_b", rng.integers(-128, 128, (a_shape[-1], columns),
                                    dtype=np.int8))
    const(name + "_b_scale", np.array(2.0**-8, np.float32))
    const(name + "_b_zp", np.array(0, np.int8))
    const(name + "_y_scale", np.array(2.0**-2, np.float32))
    const(name + "_y_zp", np.array(100, np.uint8))
    nodes.append(helper.make_node(
        "QLinearMatMul",
        [a, a + "_scale", a + "_zp", name + "_b", name + "_b_scale",
         name + "_b_zp", name + "_y_scale", name + "_y_zp"], [name]))
    outputs.append(helper.make_tensor_value_info(
        name, TensorProto.UINT8, [*a_shape[:-1], columns]))


# K = 45 (a last group of one), 20 columns (a block and 4 lanes), strides,
# dilations and padding with the zero point 131.
conv("strided", "x1", [1, 5, 9, 11], 131, 20, [3, 3], [1, 20, 5, 9],
     strides=[2, 1],
     pads=[1, 2, 1, 0], dilations=[1, 2])
# 1x1: K = 6, 98 rows (12 tiles of 8 and one of 2), 40 columns (a pair of
# blocks and 8 lanes).
conv("pointwise", "x2", [2, 6, 7, 7], 7, 40, [1, 1], [2, 40, 7, 7])
# 1,600 rows and 9.2 MFLOP: the row tiles are the parallel loop.
conv("wide", "x3", [1, 16, 40, 40], 0, 20, [3, 3], [1, 20, 40, 40],
     pads=[1, 1, 1, 1])
# K = 37, 50 columns (a pair, a single block and 2 lanes), batched rows.
matmul("product", "a1", [3, 7, 37], 200, 50)
# 3.1 MFLOP over three pairs of blocks: the pairs are the parallel loop.
matmul("large", "a2", [64, 256], 77, 96)

graph = helper.make_graph(nodes, "byte_products", inputs, outputs, inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
model.ir_version = 8
onnx.checker.check_model(model)
os.makedirs(folder, exist_ok=True)
onnx.save(model, os.path.join(folder, "model.onnx"))
session = onnxruntime.InferenceSession(
    model.SerializeToString(), providers=["CPUExecutionProvider"])
results = session.run(None, feeds)
data = os.path.join(folder, "test_data_set_0")
os.makedirs(data, exist_ok=True)
for i, value in enumerate(inputs):
    tensor = numpy_helper.from_array(feeds[value.name], value.name)
    with open(os.path.join(data, f"input_{i}.pb"), "wb") as f:
        f.write(tensor.SerializeToString())
for i, (value, result) in enumerate(zip(outputs, results)):
    tensor = numpy_helper.from_array(result, value.name)
    with open(os.path.join(data, f"output_{i}.pb"), "wb") as f:
        f.write(tensor.SerializeToString())
