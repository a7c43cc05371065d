"""Wrong arguments and bad files: clear Python exceptions, never a crash."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

import loom
from conftest import model_path, corpus_data


def test_wrong_dtype(bert_engine):
    inputs, _ = corpus_data("bert")
    inputs["input_ids"] = inputs["input_ids"].astype(np.int32)
    with pytest.raises(TypeError, match="input 'input_ids' has dtype int32, "
                       "but the engine takes i64"):
        bert_engine.run(inputs)


def test_wrong_shape(bert_engine):
    inputs, _ = corpus_data("bert")
    inputs["attention_mask"] = inputs["attention_mask"][:, :8].copy()
    with pytest.raises(ValueError, match=r"input 'attention_mask' has shape "
                       r"\(2, 8\), but the engine takes \(2, 16\)"):
        bert_engine.run(inputs)


def test_missing_and_unknown_inputs(bert_engine):
    inputs, _ = corpus_data("bert")
    with pytest.raises(ValueError, match="input 'attention_mask' is missing"):
        bert_engine.run({"input_ids": inputs["input_ids"]})
    with pytest.raises(ValueError, match="unknown input.*'pixels'"):
        bert_engine.run({**inputs, "pixels": np.zeros(1)})
    with pytest.raises(ValueError, match="takes 2 inputs, but 1 were given"):
        bert_engine.run([inputs["input_ids"]])
    with pytest.raises(ValueError, match="unknown output"):
        bert_engine.run(inputs, output_names=["logits"])


def test_symbolic_rank_mismatch():
    engine = loom.compile(model_path("bert_dyn"))
    inputs, _ = corpus_data("bert_dyn")
    inputs["input_ids"] = inputs["input_ids"].reshape(-1)
    with pytest.raises(ValueError, match=r"has shape \(\d+,\), but the engine "
                       r"takes \(\?, \?\)"):
        engine.run(inputs)


def test_damaged_engine(tmp_path, bert_engine):
    path = tmp_path / "damaged.engine"
    bert_engine.save(path)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(loom.EngineFileError) as error:
        loom.Engine.load(path)
    assert error.value.status_name == "LOOM_ERROR_CORRUPT"
    assert "LOOM_ERROR_CORRUPT" in str(error.value)


def test_missing_engine(tmp_path):
    with pytest.raises(loom.EngineFileError) as error:
        loom.Engine.load(tmp_path / "none.engine")
    assert error.value.status_name == "LOOM_ERROR_IO"


def test_not_an_engine(tmp_path):
    path = tmp_path / "model.engine"
    path.write_bytes(b"not an engine at all" * 10)
    with pytest.raises(loom.EngineFileError, match="LOOM_ERROR_CORRUPT"):
        loom.Engine.load(path)


def test_compile_error_names_the_node():
    graph = helper.make_graph(
        [helper.make_node("Frobnicate", ["x"], ["y"], name="frob_0",
                          domain="com.example")], "unknown",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)])
    with pytest.raises(loom.CompileError, match="frob_0") as error:
        loom.compile(model)
    assert "Frobnicate" in error.value.stderr


def test_bad_arguments():
    with pytest.raises(FileNotFoundError):
        loom.compile("/nonexistent/model.onnx")
    with pytest.raises(TypeError, match="model must be"):
        loom.compile(42)
    with pytest.raises(ValueError, match="precision"):
        loom.compile(model_path("bert"), precision="int3")


def test_signed_engines(tmp_path):
    """Only engines signed with the trusted key load (loomc --sign)."""
    from loom._tools import run_tool
    for name in ("a", "b"):
        assert run_tool("loomc", [f"--generate-signing-key={tmp_path / name}"]
                        ).returncode == 0
    signed = loom.compile(model_path("bert"),
                          extra_args=[f"--sign={tmp_path / 'a.key'}"])
    inputs, expected = corpus_data("bert")
    trusted = loom.Engine.load(signed.path, trusted_key=tmp_path / "a.pub")
    np.testing.assert_allclose(trusted.run(inputs)["last_hidden_state"],
                               expected[0], rtol=1e-3, atol=1e-4)
    with pytest.raises(loom.SignatureError, match="signed by key") as error:
        loom.Engine.load(signed.path, trusted_key=tmp_path / "b.pub")
    assert error.value.status_name == "LOOM_ERROR_SIGNATURE"
    unsigned = loom.compile(model_path("bert"))
    with pytest.raises(loom.SignatureError, match="not signed"):
        loom.Engine.load(unsigned.path, trusted_key=tmp_path / "a.pub")
    with pytest.raises(ValueError, match="32-byte"):
        loom.Engine.load(signed.path, trusted_key=b"short")
