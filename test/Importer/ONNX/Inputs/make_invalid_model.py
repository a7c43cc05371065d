"""Writes a binary model that breaks one rule of the ONNX checker.

usage: make_invalid_model.py OUT.onnx KIND
KIND: duplicate_output (two nodes write 'y'), opset99 (the default domain at
      opset 99), unnamed_initializer (an initializer without a name), valid
      (y = Neg(Relu(x)), which breaks none).
"""
import sys

from onnx import TensorProto, helper

out, kind = sys.argv[1], sys.argv[2]
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
         helper.make_node("Neg", ["r"], ["y"], name="neg")]
initializers = []
opset = 17
if kind == "duplicate_output":
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="relu"),
             helper.make_node("Neg", ["x"], ["y"], name="neg")]
elif kind == "opset99":
    opset = 99
elif kind == "unnamed_initializer":
    initializers = [helper.make_tensor("", TensorProto.FLOAT, [2], [1.0, 2.0])]
elif kind != "valid":
    raise SystemExit("unknown kind " + kind)

graph = helper.make_graph(nodes, "g", [x], [y], initializers)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
with open(out, "wb") as f:
    f.write(model.SerializeToString())
