"""loom.compile and loom.Engine on models of the real-model corpus, against
onnxruntime's outputs."""

from __future__ import annotations

import concurrent.futures
import json
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import loom
from conftest import MODELS, assert_matches, model_path, corpus_data


def test_compile_and_run_matches_onnxruntime(bert_engine):
    inputs, expected = corpus_data("bert")
    outputs = bert_engine.run(inputs)
    assert list(outputs) == bert_engine.output_names
    for actual, reference in zip(outputs.values(), expected):
        assert_matches(actual, reference)


def test_engine_description(bert_engine):
    assert bert_engine.input_names == ["input_ids", "attention_mask"]
    info = bert_engine.inputs[0]
    assert info.dtype == np.int64 and info.loom_dtype == "i64"
    assert info.shape == (2, 16) and not info.is_state
    assert bert_engine.outputs[0].shape == (2, 16, 64)
    assert bert_engine.ranks == 1
    assert bert_engine.target.startswith("x86_64")
    assert bert_engine.compiler_version


def test_feeds_as_list_and_output_names(bert_engine):
    inputs, expected = corpus_data("bert")
    listed = bert_engine.run([inputs[n] for n in bert_engine.input_names],
                             output_names=["last_hidden_state"])
    assert_matches(listed["last_hidden_state"], expected[0])


def test_cnn_from_model_proto_and_bytes():
    proto = onnx.load(model_path("mobilenet_v2"))
    inputs, expected = corpus_data("mobilenet_v2")
    for model in (proto, proto.SerializeToString()):
        engine = loom.compile(model)
        outputs = engine.run(inputs)
        assert_matches(next(iter(outputs.values())), expected[0])


def test_save_and_load(tmp_path, bert_engine):
    path = tmp_path / "bert.engine"
    bert_engine.save(path)
    loaded = loom.Engine.load(path, threads=2)
    inputs, expected = corpus_data("bert")
    assert_matches(loaded.run(inputs)["last_hidden_state"], expected[0])


def test_symbolic_inputs_at_two_shapes():
    """One engine with the batch and sequence symbolic, run at both data
    sets' shapes."""
    engine = loom.compile(model_path("bert_dyn"))
    assert engine.inputs[0].shape == (None, None)
    shapes = set()
    for data_set in (0, 1):
        inputs, expected = corpus_data("bert_dyn", data_set)
        shapes.add(inputs["input_ids"].shape)
        outputs = engine.run(inputs)
        for actual, reference in zip(outputs.values(), expected):
            assert_matches(actual, reference)
    assert len(shapes) == 2


def test_input_shapes_bind_symbolic_dimensions():
    inputs, expected = corpus_data("bert_dyn")
    shape = inputs["input_ids"].shape
    engine = loom.compile(model_path("bert_dyn"), input_shapes={
        "input_ids": shape, "attention_mask": shape})
    assert engine.inputs[0].shape == shape
    assert_matches(engine.run(inputs)[engine.output_names[0]], expected[0])


def test_profiles_specialize_the_opt_shapes():
    """Code compiled for a profile's OPT shapes runs at exactly those
    shapes, the general code at the others; both match onnxruntime."""
    inputs0, expected0 = corpus_data("bert_dyn", 0)
    inputs1, expected1 = corpus_data("bert_dyn", 1)
    opt = inputs0["input_ids"].shape
    other = inputs1["input_ids"].shape
    largest = tuple(max(a, b) for a, b in zip(opt, other))
    profile = ((1, 1), opt, largest)
    engine = loom.compile(model_path("bert_dyn"), profiles={
        "input_ids": profile, "attention_mask": profile})
    assert engine.specialized_shapes == [
        {"input_ids": opt, "attention_mask": opt}]
    assert engine.last_run_specialized() is None
    outputs = engine.run(inputs0)
    assert engine.last_run_specialized() == {
        "input_ids": opt, "attention_mask": opt}
    assert_matches(outputs["last_hidden_state"], expected0[0])
    outputs = engine.run(inputs1)
    assert engine.last_run_specialized() is None
    assert_matches(outputs["last_hidden_state"], expected1[0])
    # One more program, for data set 1's shapes: both data sets run code
    # specialized for them.
    engine = loom.compile(model_path("bert_dyn"), profiles={
        "input_ids": profile, "attention_mask": profile},
        specialize=[{"input_ids": other, "attention_mask": other}])
    assert engine.specialized_shapes == [
        {"input_ids": opt, "attention_mask": opt},
        {"input_ids": other, "attention_mask": other}]
    outputs = engine.run(inputs1)
    assert engine.last_run_specialized() == {
        "input_ids": other, "attention_mask": other}
    assert_matches(outputs["last_hidden_state"], expected1[0])
    # An engine without profiles has no specialized code.
    assert loom.compile(model_path("bert_dyn")).specialized_shapes == []
    with pytest.raises(ValueError, match="three shapes"):
        loom.compile(model_path("bert_dyn"),
                     profiles={"input_ids": ((1, 1), opt)})


def test_outputs_sized_by_the_data(tmp_path):
    """NonZero: the output's size is known only after the run; the array
    owns the runtime's buffer."""
    graph = helper.make_graph(
        [helper.make_node("NonZero", ["x"], ["y"])], "nonzero",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, [2, None])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    engine = loom.compile(model)
    assert engine.outputs[0].shape == (2, None)
    for x in (np.array([[0, 1, 0], [2, 0, 3]], np.float32),
              np.zeros((2, 3), np.float32)):
        y = engine.run({"x": x})["y"]
        np.testing.assert_array_equal(y, np.array(np.nonzero(x)))


def test_bool_unsigned_and_narrow_dtypes():
    """Engines with booleans, unsigned and float8 values at their boundary:
    the dtypes named as the runtime names them, the arrays as NumPy holds
    them (float8 as its bits, one byte each)."""
    graph = helper.make_graph(
        [helper.make_node("Where", ["c", "x", "y"], ["z"]),
         helper.make_node("Cast", ["f"], ["f8"], to=TensorProto.FLOAT8E4M3FN)],
        "dtypes",
        [helper.make_tensor_value_info("c", TensorProto.BOOL, [4]),
         helper.make_tensor_value_info("x", TensorProto.UINT8, [4]),
         helper.make_tensor_value_info("y", TensorProto.UINT8, [4]),
         helper.make_tensor_value_info("f", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("z", TensorProto.UINT8, [4]),
         helper.make_tensor_value_info("f8", TensorProto.FLOAT8E4M3FN, [4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    engine = loom.compile(model)
    assert [i.loom_dtype for i in engine.inputs] == ["i1", "ui8", "ui8", "f32"]
    assert engine.inputs[0].dtype == np.bool_
    assert engine.outputs[1].loom_dtype == "f8E4M3FN"
    assert engine.outputs[1].dtype == np.uint8
    c = np.array([True, False, True, False])
    x = np.array([1, 2, 200, 255], np.uint8)
    y = np.array([9, 8, 7, 6], np.uint8)
    f = np.array([1.0, -2.0, 0.1, 1000.0], np.float32)
    out = engine.run({"c": c, "x": x, "y": y, "f": f})
    np.testing.assert_array_equal(out["z"], np.where(c, x, y))
    # E4M3FN (bias 7, 3 mantissa bits): 1 = 0x38, -2 = 0xC0, 0.1 rounds to
    # 0.1015625 = 0x1D, 1000 saturates to 448 = 0x7E.
    np.testing.assert_array_equal(out["f8"],
                                  np.array([0x38, 0xC0, 0x1D, 0x7E], np.uint8))
    session = loom.InferenceSession(engine)
    assert [a.type for a in session.get_inputs()] == [
        "tensor(bool)", "tensor(uint8)", "tensor(uint8)", "tensor(float)"]
    assert [a.type for a in session.get_outputs()] == [
        "tensor(uint8)", "tensor(float8e4m3fn)"]


def test_partitioned_engine_runs_every_rank():
    inputs, expected = corpus_data("bert")
    engine = loom.compile(model_path("bert"), grid={"tp": 2})
    assert engine.ranks == 2 and engine.grid == (2,)
    assert_matches(engine.run(inputs)["last_hidden_state"], expected[0])
    every = engine.run(inputs, ranks="all")
    assert len(every) == 2
    for outputs in every:
        assert_matches(outputs["last_hidden_state"], expected[0])
    # Tensor parallelism all-reduces the hidden states ([2, 16, 64] f32)
    # after each layer's attention and MLP.
    stats = engine.collective_stats(1)
    assert stats["all_reduce"]["calls"] >= 4
    assert stats["all_reduce"]["buffer_bytes"] % (2 * 16 * 64 * 4) == 0
    assert (stats["all_reduce"]["ring_bytes_sent"]
            == stats["all_reduce"]["buffer_bytes"])  # 2 (n-1)/n with n = 2


def test_threads_per_call(bert_engine):
    inputs, expected = corpus_data("bert")
    for threads in (1, 2):
        assert_matches(bert_engine.run(inputs, threads=threads)
                       ["last_hidden_state"], expected[0])
    with pytest.raises(ValueError, match="threads must be at least 1"):
        bert_engine.run(inputs, threads=0)


def test_eight_python_threads_at_once(bert_engine):
    inputs, _ = corpus_data("bert")
    serial = bert_engine.run(inputs)["last_hidden_state"]

    def call(_):
        return [bert_engine.run(inputs)["last_hidden_state"]
                for _ in range(5)]

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        for results in pool.map(call, range(8)):
            for result in results:
                np.testing.assert_array_equal(result, serial)


class DLPackOnly:
    """A tensor of another framework: only the DLPack protocol."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


def test_dlpack_in_and_out(bert_engine):
    inputs, expected = corpus_data("bert")
    outputs = bert_engine.run({k: DLPackOnly(v) for k, v in inputs.items()})
    result = outputs["last_hidden_state"]
    assert_matches(result, expected[0])
    # The output goes on without a copy (torch.from_dlpack does the same).
    view = np.from_dlpack(result)
    assert np.shares_memory(view, result)


def test_non_contiguous_inputs_are_copied(bert_engine):
    inputs, expected = corpus_data("bert")
    strided = {k: np.asfortranarray(v) for k, v in inputs.items()}
    assert not strided["input_ids"].flags.c_contiguous
    assert_matches(bert_engine.run(strided)["last_hidden_state"], expected[0])


def test_benchmark_and_profile():
    inputs, _ = corpus_data("bert")
    engine = loom.compile(model_path("bert"), kernel_timers=True)
    figures = engine.benchmark(inputs, warmup=2, iterations=20)
    assert figures["iterations"] == 20
    assert 0 < figures["min_ms"] <= figures["p50_ms"] <= figures["p99_ms"] \
        <= figures["max_ms"]
    profile = engine.profile(inputs, iterations=3)
    assert profile, "an engine with kernel timers reports its kernels"
    assert all(k["calls"] == 3 for k in profile)
    assert abs(sum(k["share"] for k in profile) - 1) < 1e-6
    assert any(k["gflops"] for k in profile)


def test_compile_report(tmp_path):
    path = tmp_path / "report.txt"
    engine = loom.compile(model_path("bert"), report=path)
    assert engine.compile_report and path.read_text() == engine.compile_report
    assert "loom-form-kernels" in engine.compile_report
    html = tmp_path / "report.html"
    loom.compile(model_path("bert"), report=html)
    page = html.read_text()
    assert "kind-epilogue" in page and "<h2>Memory plan</h2>" in page


def expected_generation(model):
    """The prompt and onnxruntime's greedy tokens of a corpus decoder."""
    with open(MODELS / model / "generate.json") as f:
        expected = json.load(f)
    return expected["prompt_ids"], expected["tokens"]


def greedy_generate(session, prompt, count):
    """`count` greedy tokens after `prompt` through a Session of a decoder
    compiled with kv_cache; every rank of a partitioned engine must choose
    the same token."""
    generated, step, filled = [], np.array([prompt], np.int64), 0
    for _ in range(count):
        length = step.shape[1]
        results = session.run({
            "input_ids": step,
            "attention_mask": np.ones((1, filled + length), np.int64),
            "cache_length": np.array(filled, np.int64)}, ranks="all")
        filled += length
        choices = {int(np.argmax(r["logits"][0, -1])) for r in results}
        assert len(choices) == 1, "the ranks chose different tokens"
        generated.append(choices.pop())
        step = np.array([[generated[-1]]], np.int64)
    return generated


def test_session_generates_as_onnxruntime():
    """A decoder with its key/value cache kept in the runtime: greedy
    generation gives onnxruntime's tokens (generate.json)."""
    prompt, tokens = expected_generation("gpt2_kv")
    capacity = len(prompt) + len(tokens) - 1
    engine = loom.compile(model_path("gpt2_kv"), kv_cache=capacity)
    assert [i.name for i in engine.inputs if i.is_state] == [
        f"past_key_values.{layer}.{kind}" for layer in range(2)
        for kind in ("key", "value")]
    session = engine.session(batch=1)
    assert greedy_generate(session, prompt, len(tokens)) == tokens
    session.reset()


def test_partitioned_session_keeps_each_ranks_heads():
    """A tensor-parallel decoder with its cache kept in place: each rank's
    session holds its heads of the cache; both ranks' logits choose
    onnxruntime's tokens (generate.json)."""
    prompt, tokens = expected_generation("llama_kv")
    engine = loom.compile(model_path("llama_kv"), grid="tp=2",
                          kv_cache=len(prompt) + len(tokens) - 1)
    assert engine.ranks == 2
    assert "present.0.key" not in engine.output_names
    session = engine.session(batch=1)
    assert greedy_generate(session, prompt, len(tokens)) == tokens
    step = np.array([[tokens[-1]]], np.int64)
    with pytest.raises(ValueError):
        session.run({"input_ids": step}, ranks="some")
