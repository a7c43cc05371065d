"""Shared fixtures: models of the real-model corpus (test/models, exported
from PyTorch / Hugging Face) with the outputs onnxruntime gave for them."""

from __future__ import annotations

import glob
import os
from pathlib import Path
from typing import Dict, List, Tuple

import numpy as np
import pytest

import onnx
from onnx import numpy_helper

import loom

MODELS = Path(__file__).resolve().parents[2] / "test" / "models"


def read_tensor(path: str) -> Tuple[str, np.ndarray]:
    tensor = onnx.TensorProto()
    with open(path, "rb") as f:
        tensor.ParseFromString(f.read())
    return tensor.name, numpy_helper.to_array(tensor)


def corpus_data(model: str, data_set: int = 0
              ) -> Tuple[Dict[str, np.ndarray], List[np.ndarray]]:
    """The inputs (by name) and onnxruntime's expected outputs (in order)
    of the corpus model's test_data_set_N."""
    folder = MODELS / model / f"test_data_set_{data_set}"
    inputs = dict(read_tensor(p)
                  for p in sorted(glob.glob(str(folder / "input_*.pb"))))
    outputs = [read_tensor(p)[1]
               for p in sorted(glob.glob(str(folder / "output_*.pb")))]
    return inputs, outputs


def model_path(model: str) -> str:
    return str(MODELS / model / "model.onnx")


@pytest.fixture(scope="session")
def bert_engine() -> loom.Engine:
    return loom.compile(model_path("bert"))


def assert_matches(actual: np.ndarray, expected: np.ndarray,
                   rtol: float = 1e-3, atol: float = 1e-4) -> None:
    """The corpus's f32 tolerances (scripts/model_corpus.py)."""
    assert actual.shape == expected.shape
    assert actual.dtype == expected.dtype
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)
