"""Symbolic shapes and user bindings of free dims (issue 12).

The equality of two symbolic dims rests on ONNX's rule that a dim_param
names the same size across the whole model (IR.md) and on shape inference
propagating symbols only where sizes are equal (shapes.py).
"""

from __future__ import annotations

import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from models import model, mul_model, vi
from sonnx_mul.models import ShapeBindingError, Violation, check_model, check_report


def reqs(violations: list[Violation]) -> set[str]:
    return {v.requirement for v in violations}


def silu(shape: list[int | str | None]) -> onnx.ModelProto:
    nodes = [h.make_node("Sigmoid", ["x"], ["s"]), h.make_node("Mul", ["x", "s"], ["z"], name="m")]
    return model(nodes, [vi("x", T.FLOAT, shape)])


@pytest.mark.parametrize("shape", [["batch", 64, 56, 56], ["batch", None, "h", "w"], [None]])
def test_R1_silu_with_a_symbolic_batch_conforms(shape: list[int | str | None]) -> None:
    assert check_model(silu(shape)) == []


def test_R1_silu_with_unknown_rank_conforms_by_provenance() -> None:
    """Issue 21: x * Sigmoid(x) has one shape whatever x's shape (was: cannot be shown)."""
    assert check_model(silu(None)) == []


def test_R1_silu_negative_control_other_tensor() -> None:
    """Sigmoid of ANOTHER input with the same declared dims but its own batch."""
    nodes = [h.make_node("Sigmoid", ["y"], ["s"]), h.make_node("Mul", ["x", "s"], ["z"])]
    m = model(nodes, [vi("x", T.FLOAT, ["batch", 64]), vi("y", T.FLOAT, ["other", 64])])
    found = check_model(m)
    assert reqs(found) == {"R1"} and not found[0].definite


def test_R1_different_ranks_next_to_a_symbol_is_definite() -> None:
    found = check_model(mul_model(("N", 4), (4,)))
    assert reqs(found) == {"R1", "R4"} and all(v.definite for v in found)


def test_R1_rank_mismatch_that_may_broadcast() -> None:
    found = check_model(mul_model(("N", 4), ("M",)))
    assert {(v.requirement, v.definite) for v in found} == {("R1", True), ("R4", False)}


def test_R1_static_difference_next_to_a_symbol_is_definite() -> None:
    found = check_model(mul_model(("N", 4), ("N", 5)))
    assert reqs(found) == {"R1"} and found[0].definite


def test_R1_unknown_dims_are_never_equal() -> None:
    found = check_model(mul_model((None, 4), (None, 4)))
    assert reqs(found) == {"R1"} and not found[0].definite


def test_R1_symbols_propagate_through_inference() -> None:
    nodes = [
        h.make_node("Relu", ["x"], ["r"]),
        h.make_node("Add", ["x", "y"], ["a"]),  # (N, 3) + (1, 3) -> (N, 3)
        h.make_node("Mul", ["r", "a"], ["z"]),
    ]
    m = model(nodes, [vi("x", T.FLOAT, ["N", 3]), vi("y", T.FLOAT, [1, 3])])
    assert check_model(m) == []


def test_R1_R4_bind_dims() -> None:
    m = mul_model(("batch", 3), (1, 3))
    undecided = check_model(m)
    assert reqs(undecided) == {"R1"} and not undecided[0].definite
    assert reqs(check_model(m, dims={"batch": 4})) == {"R1", "R4"}
    assert check_model(m, dims={"batch": 1}) == []
    assert reqs(check_model(m, input_shapes={"x": (4, 3)})) == {"R1", "R4"}


def test_R1_input_shape_binds_the_symbol_everywhere() -> None:
    m = mul_model(("N", 3), ("N", 3))
    assert check_model(m, input_shapes={"x": (2, 3)}) == []
    assert check_model(m, dims={"N": 0})[0].requirement == "R1-DIMS"


@pytest.mark.parametrize(
    ("dims", "shapes", "match"),
    [
        ({"nope": 1}, {}, "no input of the model has this dim"),
        ({}, {"nope": (1,)}, "no tensor input"),
        ({}, {"x": (1, 2, 3)}, "rank 3"),
        ({}, {"x": (5, 4)}, "contradicts"),
        ({"N": 2}, {"x": (3, 3)}, "bound to both"),
        ({"N": -1}, {}, "negative"),
        ({"N": 2**63}, {}, "int64"),
        ({}, {"x": (2**63, 3)}, "int64"),
        ({"N": True}, {}, "a size is an integer, not True"),
        ({"N": 2.0}, {}, "a size is an integer, not 2.0"),
        ({}, {"x": (2, "3")}, "a size is an integer, not '3'"),
        ({}, {"x": "23"}, "a sequence of sizes, not '23'"),
        ({}, {"x": 23}, "a sequence of sizes, not 23"),
    ],
)
def test_bad_bindings_raise(
    dims: dict[str, int], shapes: dict[str, tuple[int, ...]], match: str
) -> None:
    with pytest.raises(ShapeBindingError, match=match):
        check_model(mul_model(("N", 3), ("N", 3)), dims=dims, input_shapes=shapes)


def test_report_counts_mul_nodes() -> None:
    assert check_report(silu(["b", 2])).mul_nodes == 1
    no_mul = model([h.make_node("Relu", ["x"], ["z"])], [vi("x", T.FLOAT, [2])])
    report = check_report(no_mul)
    assert report.mul_nodes == 0 and report.verdict == "conforms"


def test_readme_dynamic_model_conforms() -> None:
    assert check_model(mul_model(("batch", 3), ("batch", 3))) == []
