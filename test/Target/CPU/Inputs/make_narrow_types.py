"""Writes Inputs/narrow_types: a model over the element types ONNX added
after opset 17 (float8 E4M3FN/E4M3FNUZ/E5M2/E5M2FNUZ/E8M0, float4 E2M1,
int4, uint4, int2, uint2), its input and the expected outputs.

- Casts of one f32 vector of edge values (ties between neighbours, the
  least subnormals and halfway below them, the largest finite values and
  just past them, infinities, NaN, -0) to each type and back to f32, with
  and without saturation; one result stays float8 at the graph's output.
- A weight-only int4 matrix product as LLM exports write it: int4 weights
  (packed in raw_data) with a zero point (packed in int32_data, the other
  form files use) dequantized in blocks of 32 along K, then MatMul; a uint4
  weight per output channel; a float8 weight with a float8 zero point.
- Activations quantized to int4 in blocks of 16 (QuantizeLinear-21's
  output_dtype and block_size) and dequantized back.
- Casts to float8 E8M0 in Cast-24's three rounding modes, saturating and
  not.

The expected outputs come from onnx's reference implementation (which
uses ml_dtypes for the narrow types), not from Loom. Run with onnx (1.23)
installed:
  python make_narrow_types.py test/Target/CPU/Inputs/narrow_types"""
import os
import sys

import ml_dtypes
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

folder = sys.argv[1]
rng = np.random.default_rng(23)
nodes, inits, outputs = [], [], []

FLOAT8 = {
    "e4m3fn": TensorProto.FLOAT8E4M3FN,
    "e4m3fnuz": TensorProto.FLOAT8E4M3FNUZ,
    "e5m2": TensorProto.FLOAT8E5M2,
    "e5m2fnuz": TensorProto.FLOAT8E5M2FNUZ,
}
INTEGERS = {
    "int4": TensorProto.INT4,
    "uint4": TensorProto.UINT4,
    "int2": TensorProto.INT2,
    "uint2": TensorProto.UINT2,
}

# Edge values: ties, subnormal boundaries, range ends, specials.
edges = [
    0.0, -0.0, 1.0, -1.0, 1.0625, 1.125, 1.1875, -1.1875, 0.25, 0.75, 2.5,
    3.5, -3.5, 5.0, 6.0, 7.0, 2.0**-6, 2.0**-9, 2.0**-10, 3 * 2.0**-10,
    2.0**-7, 2.0**-8, 2.0**-14, 2.0**-16, 2.0**-17, 1.5 * 2.0**-16,
    2.0**-18, 240.0, 247.0, 248.0, 448.0, 464.0, 465.0, 480.0, 500.0,
    57344.0, 60000.0, 61440.0, 1e6, -1e6, float("inf"), float("-inf"),
    float("nan"), 1e-30, -1e-30, 8.0, -8.0, -9.0, 15.0, 16.0, 1.75, -2.0,
    -2.5, 3.0, 4.0, 0.1, -0.3, 100.0, -100.0, 33.3, 0.007, 2.0**-15, -7.5,
    12.0,
]
x = np.array(edges, np.float32)

for name, t in FLOAT8.items():
    nodes.append(helper.make_node("Cast", ["x"], [name], to=t))
    nodes.append(helper.make_node("Cast", [name], [name + "_f32"], to=1))
    outputs.append((name + "_f32", TensorProto.FLOAT, [len(edges)]))
    nodes.append(helper.make_node("Cast", ["x"], [name + "_ns"], to=t,
                                  saturate=0))
    nodes.append(helper.make_node("Cast", [name + "_ns"],
                                  [name + "_ns_f32"], to=1))
    outputs.append((name + "_ns_f32", TensorProto.FLOAT, [len(edges)]))
nodes.append(helper.make_node("Cast", ["x"], ["e2m1"],
                              to=TensorProto.FLOAT4E2M1))
nodes.append(helper.make_node("Cast", ["e2m1"], ["e2m1_f32"], to=1))
outputs.append(("e2m1_f32", TensorProto.FLOAT, [len(edges)]))
for name, t in INTEGERS.items():
    nodes.append(helper.make_node("Cast", ["x"], [name], to=t))
    nodes.append(helper.make_node("Cast", [name], [name + "_f32"], to=1))
    outputs.append((name + "_f32", TensorProto.FLOAT, [len(edges)]))
# One float8 result at the graph's output, as its bytes.
outputs.append(("e4m3fn", TensorProto.FLOAT8E4M3FN, [len(edges)]))

# Weight-only int4 product: W[64, 16] in blocks of 32 along K.
k, n, m = 64, 16, 4
w_int4 = rng.integers(-8, 8, (k, n)).astype(ml_dtypes.int4)
w = numpy_helper.from_array(w_int4, "w_int4")  # raw_data, packed
inits.append(w)
inits.append(numpy_helper.from_array(
    (rng.random((k // 32, n)) * 0.1 + 0.01).astype(np.float32), "w_scale"))
zero_points = rng.integers(-2, 3, (k // 32, n)).astype(np.int64)
inits.append(helper.make_tensor("w_zp", TensorProto.INT4, [k // 32, n],
                                zero_points.ravel().tolist()))  # int32_data
assert len(inits[-1].int32_data) > 0, "the zero point must use int32_data"
nodes.append(helper.make_node("DequantizeLinear", ["w_int4", "w_scale", "w_zp"],
                              ["w_deq"], axis=0, block_size=32))
nodes.append(helper.make_node("MatMul", ["a", "w_deq"], ["int4_matmul"]))
outputs.append(("int4_matmul", TensorProto.FLOAT, [m, n]))

# uint4 weight per output channel.
inits.append(numpy_helper.from_array(
    rng.integers(0, 16, (k, n)).astype(ml_dtypes.uint4), "w_uint4"))
inits.append(numpy_helper.from_array(
    (rng.random(n) * 0.05 + 0.01).astype(np.float32), "w_uint4_scale"))
inits.append(numpy_helper.from_array(
    np.full(n, 8, ml_dtypes.uint4), "w_uint4_zp"))
nodes.append(helper.make_node(
    "DequantizeLinear", ["w_uint4", "w_uint4_scale", "w_uint4_zp"],
    ["w_uint4_deq"], axis=1))
nodes.append(helper.make_node("MatMul", ["a", "w_uint4_deq"],
                              ["uint4_matmul"]))
outputs.append(("uint4_matmul", TensorProto.FLOAT, [m, n]))

# float8 weight with a (zero) float8 zero point.
inits.append(numpy_helper.from_array(
    (rng.standard_normal((k, n)) * 2).astype(ml_dtypes.float8_e4m3fn), "w_f8"))
inits.append(numpy_helper.from_array(np.array(0.5, np.float32), "w_f8_scale"))
inits.append(numpy_helper.from_array(
    np.array(0, ml_dtypes.float8_e4m3fn), "w_f8_zp"))
nodes.append(helper.make_node("DequantizeLinear", ["w_f8", "w_f8_scale",
                                                   "w_f8_zp"], ["w_f8_deq"]))
nodes.append(helper.make_node("MatMul", ["a", "w_f8_deq"], ["f8_matmul"]))
outputs.append(("f8_matmul", TensorProto.FLOAT, [m, n]))

# Activations to int4 in blocks of 16 along axis 1, and back.
inits.append(numpy_helper.from_array(
    (rng.random((m, k // 16)) * 0.5 + 0.1).astype(np.float32), "a_scale"))
nodes.append(helper.make_node("QuantizeLinear", ["a", "a_scale"], ["a_q"],
                              axis=1, block_size=16,
                              output_dtype=TensorProto.INT4))
nodes.append(helper.make_node("DequantizeLinear", ["a_q", "a_scale"],
                              ["a_qdq"], axis=1, block_size=16))
outputs.append(("a_qdq", TensorProto.FLOAT, [m, k]))

# float8 E8M0 (powers of two, the MX scale type) in each rounding mode,
# saturating and not.
for mode in ["up", "down", "nearest"]:
    for saturate in [1, 0]:
        name = f"e8m0_{mode}_{saturate}"
        nodes.append(helper.make_node("Cast", ["x"], [name],
                                      to=TensorProto.FLOAT8E8M0,
                                      round_mode=mode, saturate=saturate))
        nodes.append(helper.make_node("Cast", [name], [name + "_f32"], to=1))
        outputs.append((name + "_f32", TensorProto.FLOAT, [len(edges)]))

graph = helper.make_graph(
    nodes, "narrow_types",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [len(edges)]),
     helper.make_tensor_value_info("a", TensorProto.FLOAT, [m, k])],
    [helper.make_tensor_value_info(o, t, s) for o, t, s in outputs], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)])
model.ir_version = 11
onnx.checker.check_model(model)

a = (rng.standard_normal((m, k)) * 2).astype(np.float32)
results = ReferenceEvaluator(model).run(None, {"x": x, "a": a})

os.makedirs(folder, exist_ok=True)
onnx.save(model, os.path.join(folder, "model.onnx"))
data = os.path.join(folder, "test_data_set_0")
os.makedirs(data, exist_ok=True)
for i, (name, value) in enumerate([("x", x), ("a", a)]):
    onnx.save_tensor(numpy_helper.from_array(value, name),
                     os.path.join(data, f"input_{i}.pb"))
for i, ((name, t, _), value) in enumerate(zip(outputs, results)):
    tensor = numpy_helper.from_array(np.asarray(value), name)
    assert tensor.data_type == t, (name, tensor.data_type, t)
    onnx.save_tensor(tensor, os.path.join(data, f"output_{i}.pb"))
