"""Writes Inputs/bf16_products: float32 matrix products and convolutions
sized to reach every part of the bf16 dot-product tiles once loomc --bf16
runs them in bf16 with float32 sums (vdpbf16ps register tiles, AMX tiles,
or widened FMAs): reductions that are not whole groups or tiles (odd, 70,
27), rows and columns that are not whole tiles, products whose right
operand is an activation (batched, read through run-time panels), a
convolution, a depthwise convolution of stride 2, a transposed weight
with a bias, and one product large enough for the parallel loops; its inputs and onnxruntime's float32 outputs. Run
with onnx and onnxruntime installed:
  python make_bf16_products.py test/Target/CPU/Inputs/bf16_products"""
import os
import sys

import numpy as np
import onnx
import onnxruntime
from onnx import TensorProto, helper, numpy_helper

folder = sys.argv[1]
rng = np.random.default_rng(7)
nodes, inits, inputs, outputs, feeds = [], [], [], [], {}


def activation(name, shape):
    inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, shape))
    feeds[name] = rng.standard_normal(shape).astype(np.float32)
    return name


def weight(name, shape):
    inits.append(numpy_helper.from_array(
        (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32),
        name))
    return name


def output(name, shape):
    outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT,
                                                 shape))


# 37 rows (a pair of 16-row tiles and 5), K = 70 (two steps of 32 and 6),
# 45 columns (a pair of blocks and 13 lanes).
nodes.append(helper.make_node(
    "MatMul", [activation("a1", [37, 70]), weight("w1", [70, 45])], ["edges"]))
output("edges", [37, 45])
# An odd K: the last group of two holds one step.
nodes.append(helper.make_node(
    "MatMul", [activation("a2", [5, 33]), weight("w2", [33, 20])], ["odd"]))
output("odd", [5, 20])
# Both operands activations, batched: B's panels interleaved at run time.
nodes.append(helper.make_node(
    "MatMul", [activation("a3", [3, 7, 24]), activation("b3", [3, 24, 40])],
    ["batched"]))
output("batched", [3, 7, 40])
# A 3x3 convolution: K = 27, the weight times the windows' columns.
nodes.append(helper.make_node(
    "Conv", [activation("x4", [1, 3, 16, 16]), weight("w4", [8, 3, 3, 3])],
    ["conv"], pads=[1, 1, 1, 1]))
output("conv", [1, 8, 16, 16])
# A depthwise convolution of stride 2 (vector pieces, bf16 widened to f32
# as integers), 17 wide: its last piece's input read stops at the row.
nodes.append(helper.make_node(
    "Conv", [activation("x6", [1, 8, 17, 17]), weight("w6", [8, 1, 3, 3])],
    ["depthwise"], group=8, strides=[2, 2], pads=[1, 1, 1, 1]))
output("depthwise", [1, 8, 9, 9])
# A transposed weight ([N, K]) and a bias, 16.8 MFLOP: parallel loops.
weight("w5", [512, 256])
inits.append(numpy_helper.from_array(
    rng.standard_normal(512).astype(np.float32), "b5"))
nodes.append(helper.make_node(
    "Gemm", [activation("a5", [64, 256]), "w5", "b5"], ["large"], transB=1))
output("large", [64, 512])

graph = helper.make_graph(nodes, "bf16_products", inputs, outputs, inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
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
