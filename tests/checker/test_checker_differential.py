"""Differential test: the checker against onnxruntime on generated models (issue 12).

Random small models around one Mul: random element types and opsets, random
declared shapes with static, symbolic (shared names) and unknown dims;
operands that are graph inputs, initializers (constant, or overridable with
IR >= 4 and maybe fed), or the output of a unary op; false declarations
(value_info, graph outputs) thrown in. For every model the checker calls
conforming, onnxruntime is run with inputs that obey the declared shapes
(each symbol bound to one random size, unknown dims random) and must run it
with the Mul's operands of one shape and one type; for a definite R1 the
operands must differ. The oracle is tests/oracle.py.
"""

from __future__ import annotations

import collections
from typing import Any

import numpy as np
import onnx
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from oracle import checked, disagreements, observe

pytest.importorskip("onnxruntime")

# bfloat16 is left out: onnxruntime's CPU provider has no bfloat16 Mul kernel.
ELEM = [T.FLOAT, T.DOUBLE, T.FLOAT16, T.INT32, T.INT64, T.INT8, T.UINT8]
NP = {
    T.FLOAT: np.float32, T.DOUBLE: np.float64, T.FLOAT16: np.float16, T.INT32: np.int32,
    T.INT64: np.int64, T.INT8: np.int8, T.UINT8: np.uint8,
}  # fmt: skip
SYMBOLS = ["N", "M"]

dims = st.one_of(st.integers(1, 3), st.sampled_from(SYMBOLS), st.none())


@st.composite
def declared_pair(draw: st.DrawFn) -> tuple[list[Any], list[Any]]:
    """Declared shapes of A and B: B starts as A, then some dims change."""
    a = draw(st.lists(dims, min_size=0, max_size=3))
    b = list(a)
    for i in range(len(b)):
        if draw(st.integers(0, 3)) == 0:
            b[i] = draw(dims)
    if b and draw(st.integers(0, 5)) == 0:
        b = b[draw(st.integers(1, len(b))) :]  # fewer dims: numpy would broadcast
    return a, b


def static(shape: list[Any], rng: np.random.Generator, binding: dict[str, int]) -> list[int]:
    return [
        d if isinstance(d, int)
        else binding.setdefault(d, int(rng.integers(1, 4))) if isinstance(d, str)
        else int(rng.integers(1, 4))
        for d in shape
    ]  # fmt: skip


@st.composite
def models(draw: st.DrawFn) -> tuple[onnx.ModelProto, dict[str, Any]]:
    ea = draw(st.sampled_from(ELEM))
    eb = ea if draw(st.integers(0, 4)) else draw(st.sampled_from(ELEM))
    opset = draw(st.sampled_from([7, 13, 14, 18]))
    sa, sb = draw(declared_pair())
    kind = draw(
        st.sampled_from(["input", "initializer", "overridable", "unary_of_a", "unary_of_c"])
    )
    ir = 3 if kind == "initializer" and draw(st.booleans()) else 10
    inputs = [h.make_tensor_value_info("a", ea, sa)]
    inits: list[onnx.TensorProto] = []
    nodes: list[onnx.NodeProto] = []
    b = "b"
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if kind == "input":
        inputs.append(h.make_tensor_value_info("b", eb, sb))
    elif kind in ("initializer", "overridable"):
        value = np.ones(static(sb, rng, {}), NP[eb])
        inits.append(nh.from_array(value, "b"))
        if kind == "overridable" or ir == 3:
            inputs.append(h.make_tensor_value_info("b", eb, sb))
    else:
        op = draw(
            st.sampled_from(
                ["Identity", "Abs"]
                + (["Sigmoid", "Relu", "Neg"] if ea in (T.FLOAT, T.DOUBLE, T.FLOAT16) else [])
            )
        )
        source = "a" if kind == "unary_of_a" else "c"
        if source == "c":
            inputs.append(h.make_tensor_value_info("c", ea, sb))
        nodes.append(h.make_node(op, [source], ["b"], name="unary"))
    nodes.append(h.make_node("Mul", ["a", b], ["z"], name="mul"))
    outputs = [h.make_value_info("z", onnx.TypeProto())]
    graph = h.make_graph(nodes, "g", inputs, outputs, initializer=inits)
    lie = draw(st.sampled_from(["none", "value_info", "output"]))
    if lie != "none":  # a declaration that may be false
        claim = h.make_tensor_value_info(
            "b", draw(st.sampled_from([ea, eb])), draw(declared_pair())[0]
        )
        (graph.value_info if lie == "value_info" else graph.output).append(claim)
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = ir
    event(f"kind {kind}, lie {lie}")
    return m, {"rng": rng}


def feeds(model: onnx.ModelProto, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Inputs obeying the declared shapes; overridable initializers fed or not."""
    binding: dict[str, int] = {}
    inits = {t.name for t in model.graph.initializer}
    out = {}
    for vi in model.graph.input:
        if vi.name in inits and (model.ir_version < 4 or rng.integers(0, 2)):
            continue
        tt = vi.type.tensor_type
        shape = [
            d.dim_value if d.HasField("dim_value") else d.dim_param or None for d in tt.shape.dim
        ]
        dtype = NP[tt.elem_type]
        out[vi.name] = np.asarray(rng.integers(1, 6, static(shape, rng, binding)), dtype)
    return out


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(models())
def test_R1_R3_R4_checker_never_contradicted_by_onnxruntime(
    generated: tuple[onnx.ModelProto, dict[str, Any]],
) -> None:
    model, extra = generated
    verdict = checked(model)
    kind = verdict.report.verdict if verdict.report else "invalid"
    event(f"verdict {kind}")
    for _ in range(3):
        seen = observe(model, feeds(model, extra["rng"]))
        problems = disagreements(verdict, seen)
        assert not problems, (problems, onnx.printer.to_text(model))


def test_generator_reaches_every_verdict() -> None:
    """The generator is not vacuous: it yields conforming, violating, undecided and
    invalid models, and conforming ones that onnxruntime runs."""
    tally: collections.Counter[str] = collections.Counter()

    @settings(max_examples=300, deadline=None, database=None)
    @given(models())
    def collect(generated: tuple[onnx.ModelProto, dict[str, Any]]) -> None:
        model, extra = generated
        verdict = checked(model)
        kind = verdict.report.verdict if verdict.report else "invalid"
        seen = observe(model, feeds(model, extra["rng"]))
        tally[f"{kind}/{'refused' if seen.error else 'run'}"] += 1

    collect()
    assert tally["conforms/run"] >= 10, tally
    assert tally["violates/run"] >= 10 and tally["undecided/run"] >= 5, tally
    assert tally["invalid/run"] + tally["invalid/refused"] >= 3, tally


@pytest.mark.parametrize("fault", ["equal_shapes", "same_types"])
def test_negative_control_planted_checker_faults_are_caught(
    fault: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A checker that calls all shapes equal, or ignores element types, is
    contradicted by onnxruntime on the same generated models."""
    from sonnx_mul.models import rules

    if fault == "equal_shapes":
        monkeypatch.setattr(rules, "same_shape", lambda a, b: "equal")
    else:
        monkeypatch.setattr(rules, "_element_types", lambda *args: [])
    caught: list[str] = []

    @settings(max_examples=300, deadline=None, database=None)
    @given(models())
    def hunt(generated: tuple[onnx.ModelProto, dict[str, Any]]) -> None:
        model, extra = generated
        caught.extend(disagreements(checked(model), observe(model, feeds(model, extra["rng"]))))

    hunt()
    assert caught, "the planted fault went unnoticed"
