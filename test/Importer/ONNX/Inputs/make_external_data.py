"""Writes a one-node model (y = x + w) whose weight w is external data.

usage: make_external_data.py OUT_DIR LOCATION [OFFSET [LENGTH]]
Also writes OUT_DIR/weights.bin holding 4 floats (1, 2, 3, 4) after an
8-byte prefix, so that offset 8 / length 16 is the valid range.
"""
import os
import struct
import sys

import onnx
from onnx import TensorProto, helper

out_dir, location = sys.argv[1], sys.argv[2]
offset = sys.argv[3] if len(sys.argv) > 3 else None
length = sys.argv[4] if len(sys.argv) > 4 else None
os.makedirs(out_dir, exist_ok=True)
with open(os.path.join(out_dir, "weights.bin"), "wb") as f:
    f.write(b"PREFIX!!" + struct.pack("<4f", 1, 2, 3, 4))

w = TensorProto()
w.name = "w"
w.data_type = TensorProto.FLOAT
w.dims.extend([4])
w.data_location = TensorProto.EXTERNAL
for key, value in (("location", location), ("offset", offset), ("length", length)):
    if value is not None:
        entry = w.external_data.add()
        entry.key, entry.value = key, value

graph = helper.make_graph(
    [helper.make_node("Add", ["x", "w"], ["y"], name="add")], "g",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], [w])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
with open(os.path.join(out_dir, "model.onnx"), "wb") as f:
    f.write(model.SerializeToString())
