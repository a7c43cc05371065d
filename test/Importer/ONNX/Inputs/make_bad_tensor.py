"""Writes a model y = x + w whose initializer w is malformed in one way.

usage: make_bad_tensor.py OUT.onnx KIND
KIND: raw_size (raw_data too short), typed_count (float_data count wrong),
      overflow (dims whose product overflows), negative_dim, string (a
      string initializer), huge (a shape needing more than the byte limit),
      claims_huge (3 values under a shape of 2^32 floats: 16 GiB, within
      the limit, claimed by a few bytes), int4_raw_size (5 int4 values
      need 3 packed bytes, 2 given), int4_typed_count (2 packed int32_data
      entries for 5 int4 values).
"""
import sys

from onnx import TensorProto, helper

out, kind = sys.argv[1], sys.argv[2]
w = TensorProto()
w.name = "w"
w.data_type = TensorProto.FLOAT
if kind == "raw_size":
    w.dims.extend([4])
    w.raw_data = b"\0" * 12
elif kind == "typed_count":
    w.dims.extend([4])
    w.float_data.extend([1.0, 2.0, 3.0])
elif kind == "overflow":
    w.dims.extend([1 << 40, 1 << 40])
elif kind == "negative_dim":
    w.dims.extend([-4])
elif kind == "string":
    w.data_type = TensorProto.STRING
    w.dims.extend([1])
    w.string_data.append(b"hello")
elif kind == "claims_huge":
    w.dims.extend([1 << 32])
    w.float_data.extend([1.0, 2.0, 3.0])
elif kind == "int4_raw_size":
    w.data_type = 22  # INT4, newer than this onnx package may know
    w.dims.extend([5])
    w.raw_data = b"\x21\x43"
elif kind == "int4_typed_count":
    w.data_type = 22
    w.dims.extend([5])
    w.int32_data.extend([0x21, 0x43])
elif kind == "huge":
    w.dims.extend([1 << 20, 1 << 20])
else:
    raise SystemExit("unknown kind " + kind)

graph = helper.make_graph(
    [helper.make_node("Identity", ["w"], ["y"], name="id")], "g", [],
    [helper.make_tensor_value_info("y", w.data_type, None)], [w])
# The 4-bit types came with opset 21.
opset = 21 if kind.startswith("int4") else 17
model = helper.make_model(graph,
                          opset_imports=[helper.make_opsetid("", opset)])
with open(out, "wb") as f:
    f.write(model.SerializeToString())
