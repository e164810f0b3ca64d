"""Checker behaviours that mutation testing (make mutants) found unchecked.

Each test pins one decision of sonnx_mul.onnx.checker that a surviving
mutant changed without any test failing: the last known opset, which
violations are definite, the depth limit's verdict, the contradiction count.
"""

from __future__ import annotations

import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from models import model, mul_model, vi
from sonnx_mul.dtypes import MAX_KNOWN_OPSET
from sonnx_mul.onnx import ModelReadError, check_model, checker


def test_R3_OPSET_first_and_newest_known_opsets_are_accepted_and_the_next_refused() -> None:
    assert check_model(mul_model(opset=1)) == []
    assert check_model(mul_model(opset=MAX_KNOWN_OPSET)) == []
    found = check_model(mul_model(opset=MAX_KNOWN_OPSET + 1))
    assert {v.requirement for v in found} == {"R3-OPSET"} and all(v.definite for v in found)


def test_R3_OPSET_type_not_in_the_opset_is_a_definite_violation() -> None:
    found = check_model(mul_model(elem_a=T.INT8, opset=13))
    assert {v.requirement for v in found} == {"R3", "R3-OPSET"}
    assert all(v.definite for v in found)


def test_R1_DIMS_negative_declared_dimension_is_a_definite_violation() -> None:
    m = mul_model((2, 3), (2, 3))
    m.graph.input[0].type.tensor_type.shape.dim[1].dim_value = -3
    found = [v for v in check_model(m) if v.requirement == "R1-DIMS"]
    assert found and all(v.definite for v in found)


def test_R1_calls_beyond_the_depth_limit_are_undecided_not_violations(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    inner = h.make_function(
        "local", "F", ["a", "b"], ["c"], [h.make_node("Mul", ["a", "b"], ["c"], name="m")],
        [h.make_opsetid("", 14)],
    )  # fmt: skip
    call = h.make_node("F", ["x", "y"], ["z"], domain="local", name="call")
    m: onnx.ModelProto = model(
        [call], [vi("x", T.FLOAT, [2, 3]), vi("y", T.FLOAT, [2, 3])], ["z"],
        functions=[inner], extra_opsets=[h.make_opsetid("local", 1)],
    )  # fmt: skip
    assert check_model(m) == []
    monkeypatch.setattr(checker, "MAX_CALL_DEPTH", 0)
    found = check_model(m)
    assert [(v.requirement, v.definite) for v in found] == [("R1", False)]


def test_R1_recursive_model_local_functions_are_refused() -> None:
    body = [h.make_node("F", ["a", "b"], ["c"], domain="local", name="again")]
    recursive = h.make_function(
        "local", "F", ["a", "b"], ["c"], body, [h.make_opsetid("", 14), h.make_opsetid("local", 1)]
    )
    call = h.make_node("F", ["x", "y"], ["z"], domain="local", name="call")
    m = model(
        [call], [vi("x", T.FLOAT, [2, 3]), vi("y", T.FLOAT, [2, 3])], ["z"],
        functions=[recursive], extra_opsets=[h.make_opsetid("local", 1)],
    )  # fmt: skip
    with pytest.raises(ModelReadError, match="recursively"):
        check_model(m)
