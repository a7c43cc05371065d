"""onnxruntime's InferenceSession interface, and the compiler's stages."""

from __future__ import annotations

import numpy as np

import loom
from conftest import assert_matches, model_path, corpus_data


def test_inference_session_like_onnxruntime(tmp_path):
    inputs, expected = corpus_data("bert")
    session = loom.InferenceSession(model_path("bert"),
                                    providers=["CPUExecutionProvider"])
    assert [i.name for i in session.get_inputs()] == list(inputs)
    assert session.get_inputs()[0].type == "tensor(int64)"
    assert session.get_outputs()[0].shape == [2, 16, 64]
    (hidden,) = session.run(None, inputs)
    assert_matches(hidden, expected[0])
    (hidden,) = session.run(["last_hidden_state"], inputs)
    assert_matches(hidden, expected[0])
    # From an engine file, and from a loaded engine.
    path = tmp_path / "bert.engine"
    session.engine.save(path)
    for source in (str(path), session.engine):
        (hidden,) = loom.InferenceSession(source).run(None, inputs)
        assert_matches(hidden, expected[0])


def test_import_onnx_and_run_pipeline():
    text = loom.ir.import_onnx(model_path("bert"))
    assert "func.func" in text and "loom.matmul" in text
    lowered = loom.ir.run_pipeline(text, "builtin.module(canonicalize)")
    assert "loom." in lowered


def test_type_stubs_are_installed():
    import importlib.resources
    files = importlib.resources.files("loom")
    assert files.joinpath("py.typed").is_file()
    assert "class Engine" in files.joinpath("_runtime.pyi").read_text()
