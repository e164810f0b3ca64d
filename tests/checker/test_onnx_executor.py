"""The certified executor: official ONNX backend cases and onnxruntime agreement."""
# @relation(F, scope=file)

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any
from unittest import mock

import ml_dtypes
import numpy as np
import onnx
import onnx.backend.test
import onnx.backend.test.case.node as node_cases
import onnx.backend.test.case.node.mul  # registers Mul's official cases
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx.backend.test.case.test_case import TestCase
from onnx.reference import ReferenceEvaluator

import sonnx_mul.models.executor as executor
from models import model, mul_model, nested_if_in_loop, vi
from sonnx_mul import ProfileError
from sonnx_mul.dtypes import ALL_TYPES, ElementType
from sonnx_mul.models import Backend, Mul

# ---------------------------------------------------------------- official node tests
PASSING = ("", "_example", "_int8", "_int16", "_uint8", "_uint16", "_uint32", "_uint64")
REFUSED = "test_mul_bcast"  # broadcasts (3, 4, 5) by (5,): must be refused under R4
BIT_EXACT_CHECKS: list[str] = []


def bits(x: np.ndarray) -> np.ndarray:
    """Bit patterns of x (unsigned view of the same width)."""
    return np.ascontiguousarray(x).view(f"u{x.dtype.itemsize}")


class BitExactBackendTest(onnx.backend.test.BackendTest):  # type: ignore[misc]
    """The official harness compares with a tolerance; also demand identical bits."""

    @classmethod
    def assert_similar_outputs(
        cls,
        ref_outputs: Sequence[Any],
        outputs: Sequence[Any],
        rtol: float,
        atol: float,
        model_dir: str | None = None,
    ) -> None:
        super().assert_similar_outputs(ref_outputs, outputs, rtol, atol, model_dir)
        assert len(outputs) == len(ref_outputs)
        for ref, out in zip(ref_outputs, outputs, strict=True):
            assert out.dtype == ref.dtype and out.shape == ref.shape
            np.testing.assert_array_equal(bits(out), bits(ref))
            BIT_EXACT_CHECKS.append(str(ref.dtype))


def _mul_node_cases(kind: str | None = None) -> list[TestCase]:
    """ONNX's official node cases of Mul (every test_mul* case is defined in
    ``onnx.backend.test.case.node.mul``).  The loader's own ``kind="node"``
    imports and generates all ~1,700 node cases: 5 s in every test process."""
    if kind not in (None, "node"):
        return []
    return [t for t in node_cases._NodeTestCases if re.match(r"^test_mul(_|$)", t.name)]


with mock.patch("onnx.backend.test.runner.load_model_tests", _mul_node_cases):
    backend_test = BitExactBackendTest(Backend, __name__)
backend_test.include(r"^test_mul(" + "|".join(PASSING) + r")_cpu$")
# test_mul_bcast is deliberately NOT included: the profile refuses it (R4); it is
# run as an expected refusal by test_R4_official_test_mul_bcast_refused below.
OFFICIAL_TEST_CASES = backend_test.test_cases
for _case in OFFICIAL_TEST_CASES.values():  # drop the thousands of skipped non-Mul cases
    for _name, _func in list(vars(_case).items()):
        if _name.startswith("test_") and getattr(_func, "__unittest_skip__", False):
            delattr(_case, _name)
del _case  # else pytest collects the last case class a second time under this name
globals().update(OFFICIAL_TEST_CASES)


def _official_cases() -> dict[str, Any]:
    return {t.name: t for t in _mul_node_cases()}


def test_official_mul_case_names_in_this_onnx() -> None:
    expected = {f"test_mul{s}" for s in PASSING} | {REFUSED}
    assert set(_official_cases()) == expected
    collected = {
        name
        for case in OFFICIAL_TEST_CASES.values()
        for name in dir(case)
        if name.startswith("test_")
    }
    assert collected == {f"test_mul{s}_cpu" for s in PASSING}


@pytest.mark.parametrize("suffix", PASSING)
def test_F_official_cases_bit_exact(suffix: str) -> None:
    case = _official_cases()[f"test_mul{suffix}"]
    rep = Backend.prepare(case.model)
    for inputs, ref_outputs in case.data_sets:
        (out,) = rep.run(inputs)
        (ref,) = ref_outputs
        assert out.dtype == ref.dtype
        np.testing.assert_array_equal(bits(out), bits(ref))


def test_R4_official_test_mul_bcast_refused() -> None:
    case = _official_cases()[REFUSED]
    with pytest.raises(ProfileError) as info:
        Backend.prepare(case.model).run(case.data_sets[0][0])
    assert "R4" in info.value.requirements
    # Without the static check, the certified Mul refuses it at run time too.
    evaluator = ReferenceEvaluator(case.model, new_ops=[Mul])
    feeds = dict(zip(evaluator.input_names, case.data_sets[0][0], strict=True))
    with pytest.raises(ProfileError) as info:
        evaluator.run(None, feeds)
    assert set(info.value.requirements) == {"R1", "R4"}


# ---------------------------------------------------------------- the reference op
def test_R4_legacy_broadcast_attribute_refused_at_run_time() -> None:
    m = mul_model((2, 3), (3,), opset=6, broadcast=1)
    feeds = {"x": np.ones((2, 3), np.float32), "y": np.ones(3, np.float32)}
    with pytest.raises(ProfileError) as info:
        ReferenceEvaluator(m, new_ops=[Mul]).run(None, feeds)
    assert info.value.requirements == ("R4",)
    with pytest.raises(ProfileError, match="R4"):
        Backend.prepare(m)


def test_R3_OPSET_node_opset_is_used() -> None:
    m = mul_model((2,), (2,), T.INT8, opset=13)
    feeds = {"x": np.ones(2, np.int8), "y": np.ones(2, np.int8)}
    with pytest.raises(ProfileError) as info:
        ReferenceEvaluator(m, new_ops=[Mul]).run(None, feeds)
    assert "R3-OPSET" in info.value.requirements
    with pytest.raises(ProfileError, match="R3-OPSET"):
        Backend.prepare(m)


def test_R1_symbolic_dims_checked_at_run_time() -> None:
    rep = Backend.prepare(mul_model(("N", 3), ("M", 3)))
    assert {v.requirement for v in rep.violations} == {"R1"}  # undecided statically
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    (z,) = rep.run({"x": x, "y": x})
    np.testing.assert_array_equal(z, x * x)
    with pytest.raises(ProfileError) as info:
        rep.run({"x": x, "y": x[:1]})
    assert set(info.value.requirements) == {"R1", "R4"}


def test_F_certified_mul_runs_in_subgraphs_and_functions(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real_mul = executor.mul

    def spy(a: np.ndarray, b: np.ndarray, **kw: Any) -> np.ndarray:
        calls.append(kw["opset"])
        return real_mul(a, b, **kw)

    monkeypatch.setattr(executor, "mul", spy)
    x = np.full((2, 3), 3.0, np.float32)
    feeds = {"x": x, "x2": x, "y": x[0], "n": np.array(2), "cond": np.array(True)}
    (z,) = Backend.prepare(nested_if_in_loop(bad=False)).run(feeds)
    # (the reference Loop concatenates scan outputs on axis 0: compare the values)
    np.testing.assert_array_equal(z.reshape(-1), np.full(12, 9.0, np.float32))
    assert calls == [14, 14]
    fn = h.make_function(
        "local",
        "Sq",
        ["a"],
        ["c"],
        [h.make_node("Mul", ["a", "a"], ["c"])],
        [h.make_opsetid("", 13)],
    )
    m = model(
        [h.make_node("Sq", ["x"], ["z"], domain="local")], [vi("x", T.FLOAT, [2, 3])],
        functions=[fn], extra_opsets=[h.make_opsetid("local", 1)], opset=13,
    )  # fmt: skip
    (z,) = Backend.prepare(m).run([x])
    np.testing.assert_array_equal(z, x * x)
    # the function's own opset (onnx.checker requires the model's to be the same, issue 21)
    assert calls[-1] == 13


def _untyped(name: str) -> onnx.ValueInfoProto:
    return onnx.ValueInfoProto(name=name)


def test_R3_SAME_a_run_time_refusal_inside_an_if_or_a_function_is_the_profile_error() -> None:
    """The reference evaluator wraps a TypeError raised inside a subgraph or a function
    in a TypeError of its own; the ProfileError (an ElementTypeError is a TypeError) is
    unwrapped and raised, as at the top level."""
    a, b = np.ones(2, np.float32), np.ones(2, np.float64)
    then_g = h.make_graph(
        [h.make_node("Mul", ["a", "b"], ["t"], name="inner")], "then", [], [_untyped("t")]
    )
    else_g = h.make_graph([h.make_node("Identity", ["a"], ["e"])], "else", [], [_untyped("e")])
    branch = h.make_graph(
        [h.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
        "g",
        [h.make_tensor_value_info("c", T.BOOL, []), _untyped("a"), _untyped("b")],
        [_untyped("y")],
    )
    in_if = h.make_model(branch, opset_imports=[h.make_opsetid("", 14)])
    fn = h.make_function(
        "loc", "F", ["x", "z"], ["o"], [h.make_node("Mul", ["x", "z"], ["o"])],
        [h.make_opsetid("", 14)],
    )  # fmt: skip
    calls = h.make_graph(
        [h.make_node("F", ["a", "b"], ["y"], domain="loc")],
        "g",
        [_untyped("a"), _untyped("b")],
        [_untyped("y")],
    )
    in_function = h.make_model(
        calls, opset_imports=[h.make_opsetid("", 14), h.make_opsetid("loc", 1)], functions=[fn]
    )
    for m, feeds in ((in_if, [np.array(True), a, b]), (in_function, [a, b])):
        with pytest.raises(ProfileError) as info:
            Backend.prepare(m).run(feeds)
        assert info.value.requirements == ("R3", "R3-SAME")
        assert isinstance(info.value.__cause__, TypeError)  # the evaluator's wrapper


def test_F_backend_run_model_prepares_and_runs() -> None:
    """The ONNX backend API's one-call form (onnx.backend.base.Backend.run_model)."""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    (z,) = Backend.run_model(mul_model(), [x, x])
    np.testing.assert_array_equal(z, x * x)
    with pytest.raises(ProfileError):
        Backend.run_model(mul_model((2, 3), (3,)), [x, x[0]])


def test_backend_supports_cpu_only() -> None:
    assert Backend.supports_device("CPU") and not Backend.supports_device("CUDA")


# ---------------------------------------------------------------- onnxruntime agreement
def _edge_values(t: ElementType) -> np.ndarray:
    if t.is_float:
        info = ml_dtypes.finfo(t.dtype)
        vals = [0.0, -0.0, 1.0, -1.0, 0.5, 3.0, np.inf, -np.inf, np.nan]
        vals += [
            float(info.max),
            -float(info.max),
            float(info.tiny),
            float(info.smallest_subnormal),
        ]
        vals += [-float(info.smallest_subnormal), float(info.eps), 1 + float(info.eps)]
        return np.array(vals, dtype=np.float64).astype(t.dtype)
    vals = [t.lo, t.hi, 0, 1, 2, 3, t.hi // 2, t.hi - 1] + ([-1, t.lo + 1, -2] if t.signed else [])
    return np.array(vals, dtype=object).astype(t.dtype)


def _random_values(t: ElementType, n: int, rng: np.random.Generator) -> np.ndarray:
    raw = rng.integers(0, 256, size=n * t.bits // 8, dtype=np.uint8)
    return raw.view(t.dtype)  # every bit pattern: subnormals, NaNs, extremes


def _ort_session(t: ElementType, size: int) -> ort.InferenceSession:
    m = mul_model((size,), (size,), onnx.helper.np_dtype_to_tensor_dtype(t.dtype))
    return ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])


ORT_LACKS = {"bfloat16"}  # measured with onnxruntime 1.31 (CPU provider)


@pytest.mark.parametrize("t", ALL_TYPES, ids=lambda t: t.onnx_name)
def test_F_agrees_with_onnxruntime_bit_for_bit(t: ElementType) -> None:
    edges = _edge_values(t)
    rng = np.random.default_rng(1234)
    a = np.concatenate([np.repeat(edges, len(edges)), _random_values(t, 4096, rng)])
    b = np.concatenate([np.tile(edges, len(edges)), _random_values(t, 4096, rng)])
    if t.onnx_name in ORT_LACKS:
        with pytest.raises(Exception, match="NOT_IMPLEMENTED"):
            _ort_session(t, a.size)
        pytest.skip(f"onnxruntime has no {t.onnx_name} Mul kernel (asserted above)")
    (expected,) = _ort_session(t, a.size).run(None, {"x": a, "y": b})
    m = mul_model((a.size,), (a.size,), onnx.helper.np_dtype_to_tensor_dtype(t.dtype))
    (got,) = Backend.prepare(m).run([a, b])
    assert got.dtype == expected.dtype == t.dtype
    same = bits(got) == bits(expected)
    if t.is_float:
        same |= np.isnan(got.astype(np.float64)) & np.isnan(expected.astype(np.float64))
    bad = np.flatnonzero(~same)
    assert bad.size == 0, f"{t.onnx_name}: {a[bad[:5]]} * {b[bad[:5]]} -> {got[bad[:5]]}"
