"""Writes the ONNX Attention models of onnx-attention-symbolic.test and, for
each, input sets at several sizes with onnxruntime's outputs (never
Loom's). Needs onnx and onnxruntime; the outputs are committed, so the test
itself needs neither. `python3 make_onnx_attention.py` in this directory.

- causal_cache: the LLM export form -- 3-D Q/K/V [B, S, heads * 8] with
  4 query heads sharing 2 key/value heads, a cache past_key/past_value
  [B, 2, P, 8], is_causal; B, S and P symbolic. Opset 23.
- causal_window: 4-D, no cache, queries and keys counted separately (S
  and T symbolic), is_causal with left_window_size 4. Opset 25.
"""
import os

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper


def save(name, nodes, inputs, outputs, opset):
    graph = helper.make_graph(nodes, name, inputs, outputs)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    onnx.checker.check_model(model)
    onnx.save(model, name + ".onnx")


def tensor(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


save("causal_cache", [
    helper.make_node("Attention", ["q", "k", "v", "", "past_k", "past_v"],
                     ["y", "present_k", "present_v"], is_causal=1,
                     q_num_heads=4, kv_num_heads=2)
], [
    tensor("q", ["B", "S", 32]),
    tensor("k", ["B", "S", 16]),
    tensor("v", ["B", "S", 16]),
    tensor("past_k", ["B", 2, "P", 8]),
    tensor("past_v", ["B", 2, "P", 8])
], [
    tensor("y", ["B", "S", 32]),
    tensor("present_k", ["B", 2, "PS", 8]),
    tensor("present_v", ["B", 2, "PS", 8])
], 23)
save("causal_window", [
    helper.make_node("Attention", ["q", "k", "v"], ["y"], is_causal=1,
                     left_window_size=4)
], [
    tensor("q", ["B", 4, "S", 8]),
    tensor("k", ["B", 2, "T", 8]),
    tensor("v", ["B", 2, "T", 8])
], [tensor("y", ["B", 4, "S", 8])], 25)

rng = np.random.default_rng(23)


def data_set(model, directory, shapes):
    session = ort.InferenceSession(model + ".onnx")
    feeds = {
        i.name: rng.standard_normal(shape).astype(np.float32)
        for i, shape in zip(session.get_inputs(), shapes)
    }
    outputs = session.run(None, feeds)
    path = os.path.join(model, directory)
    os.makedirs(os.path.join(path, "inputs"), exist_ok=True)
    os.makedirs(os.path.join(path, "outputs"), exist_ok=True)
    for index, i in enumerate(session.get_inputs()):
        np.save(os.path.join(path, "inputs", "input_%d.npy" % index),
                feeds[i.name])
    for index, value in enumerate(outputs):
        np.save(os.path.join(path, "outputs", "output_%d.npy" % index), value)


# A decode step, a chunk of 6 after 3 cached, a prefill with an empty cache.
for b, s, p in [(1, 1, 9), (2, 6, 3), (1, 37, 0)]:
    data_set("causal_cache", "b%d_s%d_p%d" % (b, s, p),
             [(b, s, 32), (b, s, 16), (b, s, 16), (b, 2, p, 8), (b, 2, p, 8)])
# Fewer queries than keys, more queries than keys, past one key tile.
for b, s, t in [(1, 5, 9), (2, 9, 5), (1, 40, 150)]:
    data_set("causal_window", "b%d_s%d_t%d" % (b, s, t),
             [(b, 4, s, 8), (b, 2, t, 8), (b, 2, t, 8)])
