"""Checker behaviours that mutation testing (make mutants) found unchecked.

Each test pins one decision of sonnx_mul.models.checker that a surviving
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
from sonnx_mul.models import ModelReadError, check_model, checker, inference, rules, shapes


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


def _false_claims(count: int) -> onnx.ModelProto:
    """``count`` node outputs whose declared shape (5, 5) contradicts the inferred (2, 3)."""
    nodes = [h.make_node("Identity", ["x"], [f"t{i}"]) for i in range(count)]
    nodes.append(h.make_node("Mul", ["x", "t0"], ["z"]))
    m: onnx.ModelProto = model(nodes, [vi("x", T.FLOAT, [2, 3])])
    m.graph.value_info.extend(vi(f"t{i}", T.FLOAT, [5, 5]) for i in range(count))
    return m


@pytest.mark.parametrize(
    ("count", "tail"), [(1, ""), (3, ""), (4, " (and 1 more)"), (5, " (and 2 more)")]
)
def test_R1_contradictions_show_three_then_count_the_rest(count: int, tail: str) -> None:
    with pytest.raises(ModelReadError) as info:
        check_model(_false_claims(count))
    message = str(info.value)
    shown = min(count, 3)
    assert [f"'t{i}' declared shape (5, 5)" in message for i in range(count)] == [
        i < shown for i in range(count)
    ]
    assert message.endswith("the model gives (2, 3)" + tail)


def _nested_calls(levels: int) -> onnx.ModelProto:
    """main calls F1, F1 calls F2, ... F<levels> holds a conforming Mul."""
    opsets = [h.make_opsetid("", 14), h.make_opsetid("local", 1)]
    functions = []
    for level in range(1, levels + 1):
        inner = (
            h.make_node("Mul", ["a", "b"], ["c"], name="m")
            if level == levels
            else h.make_node(f"F{level + 1}", ["a", "b"], ["c"], domain="local", name="next")
        )
        functions.append(h.make_function("local", f"F{level}", ["a", "b"], ["c"], [inner], opsets))
    call = h.make_node("F1", ["x", "y"], ["z"], domain="local", name="call")
    m: onnx.ModelProto = model(
        [call], [vi("x", T.FLOAT, [2, 3]), vi("y", T.FLOAT, [2, 3])], ["z"],
        functions=functions, extra_opsets=[h.make_opsetid("local", 1)],
    )  # fmt: skip
    return m


@pytest.mark.parametrize("limit", [1, 2])
def test_R1_call_depth_limit_is_exact(monkeypatch: pytest.MonkeyPatch, limit: int) -> None:
    """MAX_CALL_DEPTH nested calls are followed (main's call is depth 0); one more is not."""
    monkeypatch.setattr(checker, "MAX_CALL_DEPTH", limit)
    within = checker.check_report(_nested_calls(limit))
    assert (within.violations, within.mul_nodes) == ((), 1)
    beyond = checker.check_report(_nested_calls(limit + 1))
    assert [(v.requirement, v.definite) for v in beyond.violations] == [("R1", False)]
    assert beyond.mul_nodes == 0


def test_R1_depth_grows_through_a_call_the_inliner_refuses(monkeypatch: pytest.MonkeyPatch) -> None:
    """F1 takes one input but is called with two: onnx.inliner refuses, its body is walked
    untyped one level deeper, so with MAX_CALL_DEPTH 1 its call of F2 is not followed."""
    opsets = [h.make_opsetid("", 14), h.make_opsetid("local", 1)]
    f1 = h.make_function(
        "local", "F1", ["a"], ["c"],
        [h.make_node("F2", ["a", "a"], ["c"], domain="local", name="next")], opsets,
    )  # fmt: skip
    f2 = h.make_function(
        "local", "F2", ["a", "b"], ["c"], [h.make_node("Mul", ["a", "b"], ["c"], name="m")], opsets
    )
    call = h.make_node("F1", ["x", "y"], ["z"], domain="local", name="call")
    m: onnx.ModelProto = model(
        [call], [vi("x", T.FLOAT, [2, 3]), vi("y", T.FLOAT, [2, 3])], ["z"],
        functions=[f1, f2], extra_opsets=[h.make_opsetid("local", 1)],
    )  # fmt: skip
    monkeypatch.setattr(checker, "MAX_CALL_DEPTH", 2)
    followed = checker.check_report(m)
    assert followed.mul_nodes == 1
    assert {(v.node, v.requirement, v.definite) for v in followed.violations} == {
        ("m", "R3", False)
    }
    monkeypatch.setattr(checker, "MAX_CALL_DEPTH", 1)
    cut = checker.check_report(m)
    assert cut.mul_nodes == 0
    assert [(v.node, v.path, v.requirement, v.definite) for v in cut.violations] == [
        ("next", "main/call->local.F1", "R1", False)
    ]


def _distinct_calls(count: int) -> onnx.ModelProto:
    """``count`` calls of F, each with its own input shape: ``count`` specialisations."""
    opsets = [h.make_opsetid("", 14)]
    f = h.make_function(
        "local", "F", ["a", "b"], ["c"], [h.make_node("Mul", ["a", "b"], ["c"], name="m")], opsets
    )
    calls = [
        h.make_node("F", [f"x{i}", f"x{i}"], [f"z{i}"], domain="local", name=f"call{i}")
        for i in range(count)
    ]
    inputs = [vi(f"x{i}", T.FLOAT, [i + 1]) for i in range(count)]
    m: onnx.ModelProto = model(
        calls, inputs, [f"z{i}" for i in range(count)],
        functions=[f], extra_opsets=[h.make_opsetid("local", 1)],
    )  # fmt: skip
    return m


@pytest.mark.parametrize("budget", [1, 3])
def test_R1_specialisation_budget_is_exact(monkeypatch: pytest.MonkeyPatch, budget: int) -> None:
    """MAX_SPECIALISATIONS distinct calls are all checked; the next one is undecided."""
    monkeypatch.setattr(checker, "MAX_SPECIALISATIONS", budget)
    within = checker.check_report(_distinct_calls(budget))
    assert (within.violations, within.mul_nodes) == ((), budget)
    beyond = checker.check_report(_distinct_calls(budget + 1))
    assert beyond.mul_nodes == budget
    assert [(v.node, v.requirement, v.definite) for v in beyond.violations] == [
        (f"call{budget}", "R1", False)
    ]


def test_R1_R4_specialisation_budget_is_2000() -> None:
    """The documented budget itself: 2000 distinct calls are checked, the 2001st is not."""
    report = checker.check_report(_distinct_calls(2001))
    assert report.mul_nodes == 2000
    assert [(v.node, v.requirement, v.definite) for v in report.violations] == [
        ("call2000", "R1", False)
    ]


def _one_if(then_nodes: list[onnx.NodeProto], else_nodes: list[onnx.NodeProto]) -> onnx.ModelProto:
    then_g = h.make_graph(then_nodes, "then", [], [vi(then_nodes[-1].output[0])])
    else_g = h.make_graph(else_nodes, "else", [], [vi(else_nodes[-1].output[0])])
    node = h.make_node("If", ["c"], ["o"], name="if", then_branch=then_g, else_branch=else_g)
    m: onnx.ModelProto = model([node], [vi("c", T.BOOL, []), vi("x", T.FLOAT, [2, 3])], ["o"])
    return m


def test_R1_R4_graph_by_graph_infers_a_mul_of_values_made_in_its_graph(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Both Mul inputs are made inside the branch: it is inferred alone and conforms."""
    monkeypatch.setattr(inference, "FULL_INFERENCE_SUBGRAPHS", 0)
    m = _one_if(
        [h.make_node("Sigmoid", ["x"], ["s"]), h.make_node("Mul", ["s", "s"], ["t"], name="m")],
        [h.make_node("Identity", ["x"], ["e"])],
    )
    assert check_model(m) == []


def test_R1_graph_by_graph_skips_the_claims_of_a_graph_without_mul(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A false claim about an initializer of a Mul-free branch (its only node a Cast: an
    attribute, default domain) refuses the model under whole-model inference; graph by
    graph that branch is not judged at all (no verdict depends on it)."""
    m = _one_if(
        [h.make_node("Mul", ["x", "x"], ["t"], name="m")],
        [h.make_node("Cast", ["w"], ["e"], to=T.FLOAT)],
    )
    else_branch = m.graph.node[0].attribute[0]
    assert else_branch.name == "else_branch"
    else_branch.g.initializer.append(h.make_tensor("w", T.FLOAT, [2, 3], [1.0] * 6))
    else_branch.g.value_info.append(vi("w", T.FLOAT, [9, 9]))
    with pytest.raises(ModelReadError, match="'w' declared shape"):
        check_model(m)
    monkeypatch.setattr(inference, "FULL_INFERENCE_SUBGRAPHS", 0)
    assert check_model(m) == []


@pytest.mark.parametrize(
    ("attrs", "message"),
    [
        ({"broadcast": 1}, "legacy attribute broadcast=1 enables broadcasting"),
        (
            {"broadcast": 1, "axis": 0},
            "legacy attribute broadcast=1 with axis=0 enables broadcasting",
        ),
        (
            {"axis": 1, "broadcast": 2},
            "legacy attribute broadcast=2 with axis=1 enables broadcasting",
        ),
        ({"broadcast": 0, "axis": 1}, None),
        ({"axis": 1}, None),
    ],
)
def test_R4_legacy_broadcast_attribute(attrs: dict[str, int], message: str | None) -> None:
    """Mul-6 ``broadcast`` != 0 is a definite R4 naming ``axis``; ``axis`` alone is not."""
    found = [
        (v.requirement, v.definite, v.message) for v in check_model(mul_model(opset=6, **attrs))
    ]
    assert found == ([] if message is None else [("R4", True, message)])


def test_R3_non_tensor_input_is_definite_and_unknown_element_type_is_not() -> None:
    node = h.make_node("Mul", ["x", "y"], ["z"], name="the_mul")
    seq = h.make_tensor_sequence_value_info("x", T.FLOAT, [2, 3])
    found = check_model(model([node], [seq, vi("y", T.FLOAT, [2, 3])]))
    assert ("R3", True, "input A is a sequence, not a numeric tensor") in [
        (v.requirement, v.definite, v.message) for v in found
    ]
    untyped = h.make_tensor_value_info("x", T.UNDEFINED, [2, 3])
    found = check_model(model([node], [untyped, vi("y", T.FLOAT, [2, 3])]))
    assert [(v.requirement, v.definite) for v in found] == [("R3", False)]
    assert found[0].message.startswith("element type of input A ('x') cannot be shown")


@pytest.mark.parametrize(
    ("elem_a", "elem_b", "expected"),
    [
        (T.STRING, T.STRING, [("R3", True)]),
        (T.COMPLEX64, T.COMPLEX64, [("R3", True)]),
        (T.FLOAT, T.DOUBLE, [("R3", True), ("R3-SAME", True)]),
    ],
)
def test_R3_type_violations_are_definite(elem_a: int, elem_b: int, expected: object) -> None:
    found = check_model(mul_model(elem_a=elem_a, elem_b=elem_b))
    assert [(v.requirement, v.definite) for v in found] == expected


def _mul_by_initializer(declared: list[int | str] | None, ir_version: int) -> onnx.ModelProto:
    """x (2, 3) * w, w an initializer (2, 3) that is also a graph input declaring ``declared``."""
    w = h.make_tensor("w", T.FLOAT, [2, 3], [1.0] * 6)
    node = h.make_node("Mul", ["x", "w"], ["z"], name="the_mul")
    inputs = [vi("x", T.FLOAT, [2, 3]), vi("w", T.FLOAT, declared)]
    m: onnx.ModelProto = model([node], inputs, initializers=[w])
    m.ir_version = ir_version
    return m


@pytest.mark.parametrize(
    ("declared", "ir_version", "undecided"),
    [
        (None, 3, False),  # IR < 4: an initializer that is an input is a constant
        (None, 4, True),  # IR >= 4: a caller may feed w, with any shape
        (["N", 3], 3, False),
        (["N", 3], 4, True),  # the declared symbolic dim is not the initializer's 2
        (["N", 3], 8, True),
        ([2, 3], 4, False),  # declared static dims that match the initializer hold
        ([2, 3], 8, False),
    ],
)
def test_R1_initializer_inputs_overridable_from_ir_version_4(
    declared: list[int | str] | None, ir_version: int, undecided: bool
) -> None:
    found = check_model(_mul_by_initializer(declared, ir_version))
    assert [(v.requirement, v.definite) for v in found] == ([("R1", False)] if undecided else [])


def test_R1_declared_rank_differing_from_the_model_is_a_contradiction() -> None:
    m = _false_claims(0)
    m.graph.node.insert(0, h.make_node("Identity", ["x"], ["t0"]))
    m.graph.value_info.append(vi("t0", T.FLOAT, [2, 3, 1]))
    with pytest.raises(ModelReadError, match=r"'t0' declared shape \(2, 3, 1\), the model gives"):
        check_model(m)


@pytest.mark.parametrize(("sa", "sb"), [((1, 3), (2, 3)), ((2, 3), (1, 3))])
def test_R1_R4_a_size_one_dim_on_either_side_broadcasts(
    sa: tuple[int, ...], sb: tuple[int, ...]
) -> None:
    found = check_model(mul_model(sa, sb))
    assert [(v.requirement, v.definite) for v in found] == [("R1", True), ("R4", True)]
    assert "different shapes that would be broadcast" in found[0].message


def test_R1_unknown_dims_print_as_a_question_mark() -> None:
    (found,) = check_model(mul_model((None, 3), (2, 3)))
    assert found.message.startswith("A has shape (?, 3) and B (2, 3): equal shapes cannot")


def test_R1_call_depth_limit_is_the_stated_64() -> None:
    """The limit itself (not only its logic): a chain of 64 nested calls is followed,
    65 is not (SECURITY.md's bound on the calls followed)."""
    assert checker.MAX_CALL_DEPTH == 64
    within = checker.check_report(_nested_calls(64))
    assert (within.violations, within.mul_nodes) == ((), 1)
    beyond = checker.check_report(_nested_calls(65))
    assert [(v.requirement, v.definite) for v in beyond.violations] == [("R1", False)]


@pytest.mark.parametrize(
    ("raised", "message"),
    [(RecursionError, "nested too deeply"), (MemoryError, "out of memory")],
)
def test_exhaustion_anywhere_in_a_check_is_a_model_read_error(
    monkeypatch: pytest.MonkeyPatch, raised: type[BaseException], message: str
) -> None:
    """A check that runs out of stack or memory (a hostile file's depth or size reaching
    code no bound covers, onnx's own included) refuses the file: ModelReadError, exit 2
    at the CLI, never a crash and never a report."""

    def exhausted(*_args: object) -> None:
        raise raised

    monkeypatch.setattr(checker, "_check", exhausted)
    with pytest.raises(ModelReadError, match=message):
        checker.check_report(_nested_calls(1))


def test_no_default_opset_and_a_zero_size_dim_are_definite_violations() -> None:
    """Both are decided by the file alone, whatever binding is given later: R3-OPSET for a
    Mul with no ai.onnx opset in reach (a model without one is refused by onnx.checker
    before the rules run, so the rule is asked directly), R1-DIMS for a declared
    zero-size dimension."""
    assert rules._element_types(["a", "b"], [], None, "") == [
        ("R3-OPSET", "the model imports no default-domain (ai.onnx) opset", True)
    ]
    zero = checker.check_report(mul_model((2, 0), (2, 0))).violations
    assert [(v.requirement, v.definite) for v in zero] == [("R1-DIMS", True)]


def test_R1_an_empty_dim_param_is_an_unknown_dim_not_a_symbol() -> None:
    """``dim_param: ""`` set explicitly on both operands names nothing (IR.md: a dim_param
    is a non-empty identifier): the two dims are unknown, not one symbol "", so R1 stays
    undecided instead of conforming."""
    m = mul_model((2, "n"), (2, "n"))
    for value in m.graph.input:
        value.type.tensor_type.shape.dim[1].dim_param = ""
        assert value.type.tensor_type.shape.dim[1].HasField("dim_param")
    found = checker.check_report(m).violations
    assert [(v.requirement, v.definite) for v in found] == [("R1", False)]


def test_a_symbol_is_shown_whole_up_to_64_characters() -> None:
    """Messages abbreviate a symbol only past SHOWN_SYMBOL (64) characters: one of exactly
    64 is shown whole, one of 65 as its first 32 and its length."""
    assert shapes.SHOWN_SYMBOL == 64
    assert shapes.fmt(("S" * 64, 3)) == f"({'S' * 64}, 3)"
    assert "...(65 characters)" in shapes.fmt(("S" * 65, 3))


def test_R1_an_unknown_input_dim_is_one_size_wherever_inference_carries_it() -> None:
    """An unknown dim of a main-graph input is some size, the same wherever shape inference
    carries it: x [?, 3] transposed twice has x's shape, so Mul(x, b) conforms (the free
    dim gets a symbol of its own before inference; left unknown, R1 would be undecided)."""
    nodes = [
        h.make_node("Transpose", ["x"], ["a"], perm=[1, 0]),
        h.make_node("Transpose", ["a"], ["b"], perm=[1, 0]),
        h.make_node("Mul", ["x", "b"], ["z"]),
    ]
    report = checker.check_report(model(nodes, [vi("x", T.FLOAT, [None, 3])], ["z"]))
    assert (report.violations, report.mul_nodes) == ((), 1)


def test_dim_of_reads_an_empty_dim_param_as_unknown() -> None:
    """dim_of's own contract, for callers that read types the encoding has not seen: a
    dim_param set to "" names nothing (unknown, None), like a dim with neither field."""
    dim = onnx.TensorShapeProto.Dimension()
    assert shapes.dim_of(dim) is None
    dim.dim_param = ""
    assert dim.HasField("dim_param") and shapes.dim_of(dim) is None
    dim.dim_param = "N"
    assert shapes.dim_of(dim) == "N"
    dim.dim_value = 4
    assert shapes.dim_of(dim) == 4
