#!/usr/bin/env python3
"""Builds the real-architecture fixture models and their reference outputs.

Each fixture is a small model written with onnx.helper (seeded weights), a
seeded input set, and the outputs onnxruntime computes for it, stored in the
ONNX backend-test layout:
    test/fixtures/<name>/model.onnx
    test/fixtures/<name>/test_data_set_0/{input,output}_N.pb
Reference outputs come from onnxruntime, never from Loom.

Run with an interpreter that has onnx and onnxruntime from PyPI:
    python -m venv /tmp/venv && /tmp/venv/bin/pip install onnx onnxruntime
    /tmp/venv/bin/python scripts/make_fixtures.py test/fixtures [NAME...]
Models use IR version 8 and opset 17 so that Debian's ONNX 1.12 reads them.
"""

import os
import shutil
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


class Graph:
    """Collects nodes and initializers with unique names."""

    def __init__(self, seed):
        self.nodes, self.inits, self.rng, self.count = [], [], np.random.default_rng(seed), 0

    def name(self, base):
        self.count += 1
        return "%s_%d" % (base, self.count)

    def weight(self, shape, scale=None, base="w"):
        scale = scale if scale is not None else 1.0 / np.sqrt(shape[0] if len(shape) > 1 else 4)
        value = (self.rng.standard_normal(shape) * scale).astype(np.float32)
        return self.const(value, base)

    def const(self, value, base="c"):
        n = self.name(base)
        self.inits.append(numpy_helper.from_array(np.asarray(value), n))
        return n

    def op(self, op_type, inputs, n_out=1, **attrs):
        outs = [self.name(op_type.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op_type, inputs, outs, name=outs[0], **attrs))
        return outs[0] if n_out == 1 else outs

    def model(self, name, inputs, outputs):
        graph = helper.make_graph(self.nodes, name, inputs, outputs, self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
        model.ir_version = 8
        onnx.checker.check_model(model)
        return model


def linear(g, x, d_in, d_out, bias=True):
    y = g.op("MatMul", [x, g.weight([d_in, d_out])])
    return g.op("Add", [y, g.weight([d_out], 0.1, "b")]) if bias else y


def layer_norm(g, x, d):
    return g.op("LayerNormalization", [x, g.const(np.ones(d, np.float32) +
                                                  g.rng.standard_normal(d).astype(np.float32) * 0.1),
                                       g.weight([d], 0.1, "b")], axis=-1, epsilon=1e-5)


def gelu_erf(g, x):
    # The spelling PyTorch's exporter emits: x * 0.5 * (1 + erf(x / sqrt(2))).
    e = g.op("Erf", [g.op("Div", [x, g.const(np.float32(np.sqrt(2.0)))])])
    return g.op("Mul", [g.op("Mul", [x, g.const(np.float32(0.5))]),
                        g.op("Add", [e, g.const(np.float32(1.0))])])


def suffix(batch):
    return "" if batch == 1 else "_b%d" % batch


def split_heads(g, x, seq, heads, dh, batch=1):
    r = g.op("Reshape", [x, g.const(np.array([batch, seq, heads, dh], np.int64))])
    return g.op("Transpose", [r], perm=[0, 2, 1, 3])


def merge_heads(g, x, seq, d, batch=1):
    t = g.op("Transpose", [x], perm=[0, 2, 1, 3])
    return g.op("Reshape", [t, g.const(np.array([batch, seq, d], np.int64))])


def attention(g, q, k, v, dh, mask=None):
    kt = g.op("Transpose", [k], perm=[0, 1, 3, 2])
    scores = g.op("Mul", [g.op("MatMul", [q, kt]), g.const(np.float32(1.0 / np.sqrt(dh)))])
    if mask is not None:
        scores = g.op("Add", [scores, mask])
    return g.op("MatMul", [g.op("Softmax", [scores], axis=-1), v])


def causal_mask(g, seq):
    mask = np.triu(np.full((seq, seq), -1e9, np.float32), k=1)
    return g.const(mask, "causal_mask")


def mlp():
    g = Graph(1)
    h = g.op("Relu", [g.op("Gemm", ["x", g.weight([16, 32]), g.weight([32], 0.1, "b")])])
    logits = g.op("Gemm", [h, g.weight([8, 32]), g.weight([8], 0.1, "b")], transB=1)
    g.op("Softmax", [logits], axis=-1)
    g.nodes[-1].output[0] = "y"
    return g.model("mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 16])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8])]), \
        {"x": g.rng.standard_normal((2, 16)).astype(np.float32)}


def cnn():
    g = Graph(2)
    x = g.op("Conv", ["x", g.weight([8, 3, 3, 3], 0.3), g.weight([8], 0.1, "b")], pads=[1, 1, 1, 1])
    x = g.op("BatchNormalization", [x, g.const(np.float32(1) + g.rng.random(8, np.float32)),
                                    g.weight([8], 0.1, "b"), g.weight([8], 0.1, "mean"),
                                    g.const(np.float32(0.5) + g.rng.random(8, np.float32))],
             epsilon=1e-5)
    x = g.op("MaxPool", [g.op("Relu", [x])], kernel_shape=[2, 2], strides=[2, 2])
    x = g.op("Relu", [g.op("Conv", [x, g.weight([16, 8, 3, 3], 0.2), g.weight([16], 0.1, "b")],
                           pads=[1, 1, 1, 1], strides=[2, 2])])
    x = g.op("Flatten", [g.op("GlobalAveragePool", [x])], axis=1)
    g.op("Gemm", [x, g.weight([10, 16]), g.weight([10], 0.1, "b")], transB=1)
    g.nodes[-1].output[0] = "logits"
    return g.model("cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
                   [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])]), \
        {"x": g.rng.standard_normal((1, 3, 16, 16)).astype(np.float32)}


def conv_bn(g, x, c_in, c_out, k, stride=1, relu=True):
    """Conv (no bias) + BatchNormalization (+ Relu), as ResNets export."""
    x = g.op("Conv", [x, g.weight([c_out, c_in, k, k], np.sqrt(2.0 / (c_in * k * k)))],
             kernel_shape=[k, k], pads=[k // 2] * 4, strides=[stride, stride])
    x = g.op("BatchNormalization", [x, g.const(np.float32(0.5) + g.rng.random(c_out, np.float32)),
                                    g.weight([c_out], 0.1, "b"), g.weight([c_out], 0.1, "mean"),
                                    g.const(np.float32(0.5) + g.rng.random(c_out, np.float32))],
             epsilon=1e-5)
    return g.op("Relu", [x]) if relu else x


def resnet_block():
    """A ResNet-18-style stem and two basic blocks (the second downsamples,
    with a 1x1 stride-2 shortcut) on a 32x32 image: the 3x3 convolutions
    are the shape class the CPU target sends to oneDNN."""
    g = Graph(14)
    x = conv_bn(g, "x", 3, 32, 3)
    y = conv_bn(g, conv_bn(g, x, 32, 32, 3), 32, 32, 3, relu=False)
    x = g.op("Relu", [g.op("Add", [x, y])])
    y = conv_bn(g, conv_bn(g, x, 32, 64, 3, stride=2), 64, 64, 3, relu=False)
    x = g.op("Relu", [g.op("Add", [conv_bn(g, x, 32, 64, 1, stride=2, relu=False), y])])
    x = g.op("Flatten", [g.op("GlobalAveragePool", [x])], axis=1)
    g.op("Gemm", [x, g.weight([10, 64]), g.weight([10], 0.1, "b")], transB=1)
    g.nodes[-1].output[0] = "logits"
    return g.model("resnet_block", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 32, 32])],
                   [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])]), \
        {"x": g.rng.standard_normal((1, 3, 32, 32)).astype(np.float32)}


def separable_block():
    """MobileNet/ResNeXt-style grouped convolutions on a 32x32 image: a 3x3
    stem, a depthwise 3x3 and a 1x1 pointwise convolution, a depthwise 3x3
    with stride 2, and a dilated 3x3 in 4 groups, each with batch norm and
    Relu, then global pooling and a classifier."""
    g = Graph(15)

    def grouped(x, c, k, group, stride=1, dilation=1):
        pad = dilation * (k // 2)
        x = g.op("Conv", [x, g.weight([c, c // group, k, k], np.sqrt(2.0 * group / (c * k * k))),
                          g.weight([c], 0.1, "b")],
                 kernel_shape=[k, k], pads=[pad] * 4, strides=[stride, stride],
                 dilations=[dilation, dilation], group=group)
        return g.op("Relu", [x])

    x = conv_bn(g, "x", 16, 32, 3)
    x = grouped(x, 32, 3, 32)
    x = conv_bn(g, x, 32, 64, 1)
    x = grouped(x, 64, 3, 64, stride=2)
    x = grouped(x, 64, 3, 4, dilation=2)
    x = g.op("Flatten", [g.op("GlobalAveragePool", [x])], axis=1)
    g.op("Gemm", [x, g.weight([10, 64]), g.weight([10], 0.1, "b")], transB=1)
    g.nodes[-1].output[0] = "logits"
    return g.model("separable_block", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 32, 32])],
                   [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])]), \
        {"x": g.rng.standard_normal((1, 16, 32, 32)).astype(np.float32)}


def encoder_block(g, x, seq, d, heads, mask=None, batch=1):
    dh = d // heads
    h = layer_norm(g, x, d)
    q = split_heads(g, linear(g, h, d, d), seq, heads, dh, batch)
    k = split_heads(g, linear(g, h, d, d), seq, heads, dh, batch)
    v = split_heads(g, linear(g, h, d, d), seq, heads, dh, batch)
    a = merge_heads(g, attention(g, q, k, v, dh, mask), seq, d, batch)
    x = g.op("Add", [x, linear(g, a, d, d)])
    h = gelu_erf(g, linear(g, layer_norm(g, x, d), d, 4 * d))
    return g.op("Add", [x, linear(g, h, 4 * d, d)])


def transformer_encoder(batch=1):
    g = Graph(3)
    seq, d = 8, 32
    y = encoder_block(g, "x", seq, d, 4, batch=batch)
    g.nodes[-1].output[0] = "y"
    return g.model("transformer_encoder" + suffix(batch),
                   [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, seq, d])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, seq, d])]), \
        {"x": g.rng.standard_normal((batch, seq, d)).astype(np.float32)}


def gpt_decoder(batch=1):
    g = Graph(4)
    seq, d, vocab = 8, 32, 50
    tok = g.op("Gather", [g.weight([vocab, d], 0.5, "wte"), "ids"], axis=0)
    pos = g.op("Gather", [g.weight([seq, d], 0.5, "wpe"),
                          g.const(np.arange(seq, dtype=np.int64), "positions")], axis=0)
    x = g.op("Add", [tok, pos])
    mask = causal_mask(g, seq)
    for _ in range(2):
        x = encoder_block(g, x, seq, d, 4, mask, batch)
    g.op("MatMul", [layer_norm(g, x, d), g.weight([d, vocab])])
    g.nodes[-1].output[0] = "logits"
    ids = g.rng.integers(0, vocab, (batch, seq)).astype(np.int64)
    return g.model("gpt_decoder" + suffix(batch),
                   [helper.make_tensor_value_info("ids", TensorProto.INT64, [batch, seq])],
                   [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [batch, seq, vocab])]), \
        {"ids": ids}


def rms_norm(g, x, d):
    # x / sqrt(mean(x^2) + eps) * w, as exported from Llama implementations.
    ms = g.op("ReduceMean", [g.op("Pow", [x, g.const(np.float32(2.0))])], axes=[-1], keepdims=1)
    inv = g.op("Div", [g.const(np.float32(1.0)),
                       g.op("Sqrt", [g.op("Add", [ms, g.const(np.float32(1e-6))])])])
    return g.op("Mul", [g.op("Mul", [x, inv]),
                        g.const(np.float32(1) + g.rng.standard_normal(d).astype(np.float32) * 0.1)])


def rotary(g, x, cos, sin, dh):
    # rotate_half: concat(-x2, x1) on the halves of the head dimension.
    half = dh // 2
    x1 = g.op("Slice", [x, g.const(np.array([0], np.int64)), g.const(np.array([half], np.int64)),
                        g.const(np.array([-1], np.int64))])
    x2 = g.op("Slice", [x, g.const(np.array([half], np.int64)), g.const(np.array([dh], np.int64)),
                        g.const(np.array([-1], np.int64))])
    rotated = g.op("Concat", [g.op("Neg", [x2]), x1], axis=-1)
    return g.op("Add", [g.op("Mul", [x, cos]), g.op("Mul", [rotated, sin])])


def llama_block(batch=1):
    g = Graph(5)
    seq, d, heads, kv_heads = 8, 32, 4, 2
    dh = d // heads
    inv_freq = 1.0 / (10000 ** (np.arange(0, dh, 2, dtype=np.float64) / dh))
    angles = np.outer(np.arange(seq), inv_freq)
    emb = np.concatenate([angles, angles], axis=-1)
    cos = g.const(np.cos(emb).astype(np.float32), "cos")
    sin = g.const(np.sin(emb).astype(np.float32), "sin")
    h = rms_norm(g, "x", d)
    q = rotary(g, split_heads(g, linear(g, h, d, d, False), seq, heads, dh, batch), cos, sin, dh)
    k = rotary(g, split_heads(g, linear(g, h, d, kv_heads * dh, False), seq, kv_heads, dh, batch),
               cos, sin, dh)
    v = split_heads(g, linear(g, h, d, kv_heads * dh, False), seq, kv_heads, dh, batch)

    def repeat_kv(t):
        # [1, Hkv, S, D] -> [1, Hkv, rep, S, D] -> [1, H, S, D], as exported.
        u = g.op("Unsqueeze", [t, g.const(np.array([2], np.int64))])
        e = g.op("Expand", [u, g.const(np.array([batch, kv_heads, heads // kv_heads, seq, dh], np.int64))])
        return g.op("Reshape", [e, g.const(np.array([batch, heads, seq, dh], np.int64))])

    a = merge_heads(g, attention(g, q, repeat_kv(k), repeat_kv(v), dh, causal_mask(g, seq)), seq, d,
                    batch)
    x = g.op("Add", ["x", linear(g, a, d, d, False)])
    h = rms_norm(g, x, d)
    gate = linear(g, h, d, 64, False)
    silu = g.op("Mul", [gate, g.op("Sigmoid", [gate])])
    up = g.op("Mul", [silu, linear(g, h, d, 64, False)])
    g.op("Add", [x, linear(g, up, 64, d, False)])
    g.nodes[-1].output[0] = "y"
    return g.model("llama_block" + suffix(batch),
                   [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, seq, d])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, seq, d])]), \
        {"x": g.rng.standard_normal((batch, seq, d)).astype(np.float32)}


def moe_top2(tokens=6):
    g = Graph(6)
    d, experts, hidden = 16, 4, 32
    probs = g.op("Softmax", [g.op("MatMul", ["x", g.weight([d, experts])])], axis=-1)
    values, indices = g.op("TopK", [probs, g.const(np.array([2], np.int64))], n_out=2, axis=-1)
    values = g.op("Div", [values, g.op("ReduceSum", [values, g.const(np.array([-1], np.int64))],
                                       keepdims=1)])
    # One-hot dispatch: combine[t, e] = sum_k values[t, k] * (indices[t, k] == e).
    onehot = g.op("OneHot", [indices, g.const(np.array(experts, np.int64)),
                             g.const(np.array([0, 1], np.float32))], axis=-1)
    combine = g.op("ReduceSum", [g.op("Mul", [onehot, g.op("Unsqueeze", [values,
                                 g.const(np.array([-1], np.int64))])]),
                                 g.const(np.array([1], np.int64))], keepdims=0)
    # Every expert on every token: [E, T, D] -> SiLU MLP -> [E, T, D].
    xe = g.op("Expand", [g.op("Unsqueeze", ["x", g.const(np.array([0], np.int64))]),
                         g.const(np.array([experts, tokens, d], np.int64))])
    h = g.op("MatMul", [xe, g.weight([experts, d, hidden], 0.25)])
    h = g.op("Mul", [h, g.op("Sigmoid", [h])])
    out = g.op("MatMul", [h, g.weight([experts, hidden, d], 0.2)])
    weights = g.op("Unsqueeze", [g.op("Transpose", [combine], perm=[1, 0]),
                                 g.const(np.array([-1], np.int64))])
    g.op("ReduceSum", [g.op("Mul", [out, weights]), g.const(np.array([0], np.int64))], keepdims=0)
    g.nodes[-1].output[0] = "y"
    name = "moe_top2" if tokens == 6 else "moe_top2_t%d" % tokens
    return g.model(name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [tokens, d])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [tokens, d])]), \
        {"x": g.rng.standard_normal((tokens, d)).astype(np.float32)}


def moe_gather(tokens=8):
    """Top-2 routing where each token gathers its experts' weights by index
    (W[indices], as simple PyTorch MoE layers do) instead of running every
    expert: no one-hot, no wasted expert work. Raw top-k scores as weights,
    ReLU experts."""
    g = Graph(7)
    d, experts, hidden = 16, 4, 32
    probs = g.op("Softmax", [g.op("MatMul", ["x", g.weight([d, experts])])], axis=-1)
    values, indices = g.op("TopK", [probs, g.const(np.array([2], np.int64))], n_out=2, axis=-1)
    w_in = g.op("Gather", [g.weight([experts, d, hidden], 0.25), indices], axis=0)    # [T, k, D, H]
    w_out = g.op("Gather", [g.weight([experts, hidden, d], 0.2), indices], axis=0)    # [T, k, H, D]
    xu = g.op("Unsqueeze", ["x", g.const(np.array([1, 2], np.int64))])               # [T, 1, 1, D]
    h = g.op("Relu", [g.op("MatMul", [xu, w_in])])                                   # [T, k, 1, H]
    out = g.op("Squeeze", [g.op("MatMul", [h, w_out]), g.const(np.array([2], np.int64))])  # [T, k, D]
    weighted = g.op("Mul", [out, g.op("Unsqueeze", [values, g.const(np.array([2], np.int64))])])
    g.op("ReduceSum", [weighted, g.const(np.array([1], np.int64))], keepdims=0)
    g.nodes[-1].output[0] = "y"
    return g.model("moe_gather", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [tokens, d])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [tokens, d])]), \
        {"x": g.rng.standard_normal((tokens, d)).astype(np.float32)}


def moe_swiglu(tokens=8):
    """Mixtral-style: softmax routing, top-2 normalized, gated SwiGLU experts
    (silu(x @ W_gate[e]) * (x @ W_up[e])) @ W_down[e], each token gathering
    its experts' weights by index."""
    g = Graph(8)
    d, experts, hidden = 16, 4, 24
    probs = g.op("Softmax", [g.op("MatMul", ["x", g.weight([d, experts])])], axis=-1)
    values, indices = g.op("TopK", [probs, g.const(np.array([2], np.int64))], n_out=2, axis=-1)
    values = g.op("Div", [values, g.op("ReduceSum", [values, g.const(np.array([-1], np.int64))],
                                       keepdims=1)])
    xu = g.op("Unsqueeze", ["x", g.const(np.array([1, 2], np.int64))])               # [T, 1, 1, D]
    gate = g.op("MatMul", [xu, g.op("Gather", [g.weight([experts, d, hidden], 0.25), indices], axis=0)])
    up = g.op("MatMul", [xu, g.op("Gather", [g.weight([experts, d, hidden], 0.25), indices], axis=0)])
    h = g.op("Mul", [g.op("Mul", [gate, g.op("Sigmoid", [gate])]), up])               # [T, k, 1, H]
    w_down = g.op("Gather", [g.weight([experts, hidden, d], 0.2), indices], axis=0)
    out = g.op("Squeeze", [g.op("MatMul", [h, w_down]), g.const(np.array([2], np.int64))])  # [T, k, D]
    weighted = g.op("Mul", [out, g.op("Unsqueeze", [values, g.const(np.array([2], np.int64))])])
    g.op("ReduceSum", [weighted, g.const(np.array([1], np.int64))], keepdims=0)
    g.nodes[-1].output[0] = "y"
    return g.model("moe_swiglu", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [tokens, d])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [tokens, d])]), \
        {"x": g.rng.standard_normal((tokens, d)).astype(np.float32)}


def moe_transformer(batch=2):
    """A transformer block whose feed-forward is a Mixtral-style MoE (top-2
    of 4 gated experts) on the flattened tokens: attention for tensor
    parallelism and experts for expert parallelism in one program."""
    g = Graph(9)
    seq, d, heads, experts, hidden = 4, 16, 4, 4, 24
    dh = d // heads
    h = layer_norm(g, "x", d)
    q = split_heads(g, linear(g, h, d, d), seq, heads, dh, batch)
    k = split_heads(g, linear(g, h, d, d), seq, heads, dh, batch)
    v = split_heads(g, linear(g, h, d, d), seq, heads, dh, batch)
    a = merge_heads(g, attention(g, q, k, v, dh), seq, d, batch)
    x = g.op("Add", ["x", linear(g, a, d, d)])
    t = g.op("Reshape", [layer_norm(g, x, d), g.const(np.array([batch * seq, d], np.int64))])
    probs = g.op("Softmax", [g.op("MatMul", [t, g.weight([d, experts])])], axis=-1)
    values, indices = g.op("TopK", [probs, g.const(np.array([2], np.int64))], n_out=2, axis=-1)
    values = g.op("Div", [values, g.op("ReduceSum", [values, g.const(np.array([-1], np.int64))],
                                       keepdims=1)])
    tu = g.op("Unsqueeze", [t, g.const(np.array([1, 2], np.int64))])
    gate = g.op("MatMul", [tu, g.op("Gather", [g.weight([experts, d, hidden], 0.25), indices], axis=0)])
    up = g.op("MatMul", [tu, g.op("Gather", [g.weight([experts, d, hidden], 0.25), indices], axis=0)])
    hid = g.op("Mul", [g.op("Mul", [gate, g.op("Sigmoid", [gate])]), up])
    w_down = g.op("Gather", [g.weight([experts, hidden, d], 0.2), indices], axis=0)
    out = g.op("Squeeze", [g.op("MatMul", [hid, w_down]), g.const(np.array([2], np.int64))])
    moe = g.op("ReduceSum", [g.op("Mul", [out, g.op("Unsqueeze", [values, g.const(np.array([2], np.int64))])]),
                             g.const(np.array([1], np.int64))], keepdims=0)
    g.op("Add", [x, g.op("Reshape", [moe, g.const(np.array([batch, seq, d], np.int64))])])
    g.nodes[-1].output[0] = "y"
    return g.model("moe_transformer", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, seq, d])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, seq, d])]), \
        {"x": g.rng.standard_normal((batch, seq, d)).astype(np.float32)}


FIXTURES = [mlp, cnn, transformer_encoder, gpt_decoder, llama_block, moe_top2,
            # Batch 2, for data parallelism.
            lambda: transformer_encoder(2), lambda: gpt_decoder(2), lambda: llama_block(2),
            # 8 tokens, for expert parallelism over 4 ranks.
            lambda: moe_top2(8), moe_gather, moe_swiglu, moe_transformer,
            resnet_block, separable_block]


def main():
    out_root = sys.argv[1]
    # Optional names: make only those fixtures.
    only = set(sys.argv[2:])
    for make in FIXTURES:
        model, feeds = make()
        name = model.graph.name
        if only and name not in only:
            continue
        folder = os.path.join(out_root, name)
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(os.path.join(folder, "test_data_set_0"))
        onnx.save(model, os.path.join(folder, "model.onnx"))
        session = ort.InferenceSession(model.SerializeToString(),
                                       providers=["CPUExecutionProvider"])
        outputs = session.run(None, feeds)
        data = os.path.join(folder, "test_data_set_0")
        for i, vi in enumerate(model.graph.input):
            onnx.save_tensor(numpy_helper.from_array(feeds[vi.name], vi.name),
                             os.path.join(data, "input_%d.pb" % i))
        for i, (vi, value) in enumerate(zip(model.graph.output, outputs)):
            onnx.save_tensor(numpy_helper.from_array(value, vi.name),
                             os.path.join(data, "output_%d.pb" % i))
        print("%-20s %3d nodes  %6.1f KiB  (onnxruntime %s)" % (
            name, len(model.graph.node), os.path.getsize(os.path.join(folder, "model.onnx")) / 1024,
            ort.__version__))


if __name__ == "__main__":
    main()
