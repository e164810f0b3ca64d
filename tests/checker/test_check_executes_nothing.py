"""`sonnx-mul check` executes no operator: only onnx's static shape inference and the
checker's own walk (SECURITY.md, "Never executes anything").

Every way this process could run an operator — onnx's reference evaluator (the
``run`` engine's base), onnxruntime's session, the certified ``mul`` itself — is made
to fail, and the checker's corpus is checked: every verdict is reached. Negative
control: the same guard stops ``Backend.prepare(...).run``, which does execute.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import onnx
import onnx.reference
import pytest

import sonnx_mul
from checker_corpus import build_corpus
from models import mul_model
from sonnx_mul.models import Backend, check_report


class OperatorRan(AssertionError):
    """Raised by the guard: something tried to execute an operator."""


@pytest.fixture
def no_execution(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    def refuse(*args: object, **kwargs: object) -> None:
        raise OperatorRan("an operator was about to run")

    monkeypatch.setattr(onnx.reference.ReferenceEvaluator, "__init__", refuse)
    monkeypatch.setattr(onnx.reference.ReferenceEvaluator, "run", refuse)
    monkeypatch.setattr(sonnx_mul, "mul", refuse)
    monkeypatch.setattr("sonnx_mul.api.mul", refuse)
    try:
        import onnxruntime
    except ImportError:  # the optional engine: nothing of it can run then
        pass
    else:
        monkeypatch.setattr(onnxruntime.InferenceSession, "__init__", refuse)
    yield


def test_check_executes_no_operator(no_execution: None) -> None:
    models = {**build_corpus(), "broadcasting mul": mul_model((2, 3), (3,))}
    for name, model in models.items():
        report = check_report(model)
        assert report.mul_nodes >= 1, name
        report = check_report(model.SerializeToString())
        assert report.mul_nodes >= 1, name


def test_negative_control_running_a_model_trips_the_guard(no_execution: None) -> None:
    model = mul_model((2, 3), (2, 3))
    assert isinstance(model, onnx.ModelProto)
    with pytest.raises(OperatorRan):
        Backend.prepare(model).run([np.ones((2, 3), np.float32)] * 2)
