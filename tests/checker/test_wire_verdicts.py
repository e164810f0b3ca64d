"""The wire-level pre-pass (src/sonnx_mul/models/wire.py) never changes a verdict.

* On the checker's corpus (checker_corpus.py and the test models) with big lists
  planted anywhere, and on onnx's backend node models, check_report gives the same
  report with the pre-pass and without it (the walker made to fail: today's path).
* A mark the file itself spells counts nothing when the walker refused.
* What a removed list must not hide: a Constant onnx.checker refuses only for what
  lies in a list over the limit is still refused, and sanitize's storage sizes
  (what a cleared payload's placeholders keep) are onnx.checker's.

The pre-pass changes memory, never a verdict: the ``test_wire_*.py`` files hold its
tests (exactness, encodings, verdicts, bounds); the memory it saves is measured in
tests/checker/test_hostile_models.py.
"""

from __future__ import annotations

import warnings

import onnx
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from onnx import helper as h
from wire_support import onnx_checker_accepts, refusing_walker, report_or_error

import checker_corpus
from models import mul_model, nested_if_in_loop
from sonnx_mul.models import ModelReadError, check_report, sanitize, wire
from sonnx_mul.models import checker as checker_module


def corpus() -> dict[str, onnx.ModelProto]:
    found = dict(checker_corpus.build_corpus())
    found["mul_model"] = mul_model()
    found["nested_if_in_loop"] = nested_if_in_loop()
    found["broadcasting"] = mul_model((2, 3), (3,))
    return found


CORPUS = corpus()


def _nodes(g: onnx.GraphProto) -> list[onnx.NodeProto]:
    found = list(g.node)
    for n in g.node:
        for a in n.attribute:
            for sub in [a.g] if a.type == a.GRAPH else list(a.graphs):
                found += _nodes(sub)
    return found


@st.composite
def planted(draw: st.DrawFn) -> tuple[str, bytes, int]:
    """A corpus model, a limit (small: the corpus's own kernel_shape, pads, axes... then
    count as big), and sometimes a list planted in a Constant of the main graph, in a
    nested graph or in a function, or appended to an existing list attribute."""
    name = draw(st.sampled_from(sorted(CORPUS)))
    m = onnx.ModelProto()
    m.CopyFrom(CORPUS[name])
    limit = draw(st.sampled_from([0, 1, 2, 3, 4, 8, 1 << 16]))
    n = draw(st.sampled_from([1, 3, 5, 9, (1 << 16) + 1]))
    where = draw(st.sampled_from(["none", "constant", "existing"]))
    graphs = [m.graph] + [a.g for nd in _nodes(m.graph) for a in nd.attribute if a.type == a.GRAPH]
    if where == "constant":
        kind = draw(st.sampled_from(["value_ints", "value_floats", "value_strings"]))
        values = {"value_ints": [7] * n, "value_floats": [0.5] * n, "value_strings": [b"s"] * n}
        g = draw(st.sampled_from(graphs))
        g.node.insert(
            0, h.make_node("Constant", [], [f"planted{len(g.node)}"], **{kind: values[kind]})
        )
    elif where == "existing":
        lists = [
            a for nd in [*_nodes(m.graph), *(x for f in m.functions for x in f.node)]
            for a in nd.attribute if a.ints or a.floats
        ]  # fmt: skip
        if lists:
            a = draw(st.sampled_from(lists))
            if a.ints:
                a.ints.extend([a.ints[-1]] * n)
            else:
                a.floats.extend([a.floats[-1]] * n)
    event(f"planted {where}")
    return name, m.SerializeToString(), limit


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(planted())
def test_verdicts_identical_with_and_without_the_prepass(case: tuple[str, bytes, int]) -> None:
    name, data, limit = case
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sanitize, "PAYLOAD_LIMIT", limit)
        prepassed = report_or_error(data)
        removed = wire.strip_lists(data, limit) is not data
        mp.setattr(checker_module, "strip_lists", refusing_walker)  # today's path: parse as it is
        plain = report_or_error(data)
    event("lists removed" if removed else "nothing removed")
    event(f"verdict {getattr(plain, 'verdict', 'ModelReadError')}")
    assert prepassed == plain, name


def test_verdicts_identical_on_onnx_backend_node_models() -> None:
    """Every model of onnx's backend node tests (in memory; their attributes as exporters
    write them), at limits that make their own lists big: the same report, or the same
    read error, with the pre-pass and without it."""
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = collect_testcases(None)
    assert len(cases) > 1000
    removed = 0
    for limit in (1, 3):
        for case in cases:
            data = case.model.SerializeToString()
            with pytest.MonkeyPatch.context() as mp:
                mp.setattr(sanitize, "PAYLOAD_LIMIT", limit)
                prepassed = report_or_error(data)
                removed += wire.strip_lists(data, limit) is not data
                mp.setattr(checker_module, "strip_lists", refusing_walker)
                assert prepassed == report_or_error(data), (case.name, limit)
    assert removed > 200, removed  # the pre-pass did remove lists in many of them


def test_a_forged_mark_counts_nothing_when_the_walker_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """When the walker refuses a file, the original bytes are parsed and their doc strings
    are the file's own: a mark spelled there must not count elements (else a 3-element
    Constant would take the shape the file claims, 10^6 + 3, and R1 would be decided
    on it). Only the pre-pass's own output is read for marks."""
    const = h.make_node("Constant", [], ["c"], value_ints=[1, 2, 3])
    const.attribute[0].doc_string = f"{wire.MARK}1000000"
    mul = h.make_node("Mul", ["c", "x"], ["z"])
    x = h.make_tensor_value_info("x", onnx.TensorProto.INT64, [3])
    z = h.make_tensor_value_info("z", onnx.TensorProto.INT64, [3])
    graph = h.make_graph([const, mul], "g", [x], [z])
    data = h.make_model(graph, opset_imports=[h.make_opsetid("", 14)]).SerializeToString()
    assert report_or_error(data) == _report_refused(monkeypatch, data)
    report = _report_refused(monkeypatch, data)
    assert getattr(report, "violations", None) == () and getattr(report, "mul_nodes", 0) == 1


def _report_refused(monkeypatch: pytest.MonkeyPatch, data: bytes) -> object:
    with monkeypatch.context() as mp:
        mp.setattr(checker_module, "strip_lists", refusing_walker)
        return report_or_error(data)


N_BIG = (1 << 16) + 5  # over sanitize's limit: the pre-pass removes the list


def _constant_model(value: onnx.AttributeProto) -> onnx.ModelProto:
    const = onnx.NodeProto(op_type="Constant", output=["c"])
    const.attribute.append(value)
    mul = h.make_node("Mul", ["x", "x"], ["y"])
    graph = h.make_graph(
        [const, mul], "g",
        [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2])],
        [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2])],
    )  # fmt: skip
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 14)])


def _tensor_value(**fields: object) -> onnx.AttributeProto:
    return h.make_attribute("value", onnx.TensorProto(name="v", **fields))  # type: ignore[arg-type]


def _list_attribute(name: str, kind: int, **lists: list[object]) -> onnx.AttributeProto:
    attr = onnx.AttributeProto(name=name, type=kind)
    for field_name, values in lists.items():
        getattr(attr, field_name).extend(values)
    return attr


F, I64 = onnx.TensorProto.FLOAT, onnx.TensorProto.INT64


INTS, FLOATS = onnx.AttributeProto.INTS, onnx.AttributeProto.FLOATS


HIDDEN_BY_REMOVAL = {
    # each refused by onnx.checker only for what lies in a list over the limit
    "float tensor, its data in int64_data": _tensor_value(data_type=F, dims=[N_BIG],
                                                          int64_data=[1] * N_BIG),
    "float tensor, its data in float_data and int64_data": _tensor_value(
        data_type=F, dims=[N_BIG], float_data=[1.0] * N_BIG, int64_data=[1]),
    "float tensor, fewer values than its shape": _tensor_value(data_type=F, dims=[N_BIG + 1],
                                                               float_data=[1.0] * N_BIG),
    "float tensor, raw_data too short for its shape": _tensor_value(
        data_type=F, dims=[N_BIG], raw_data=bytes(4 * N_BIG - 1)),
    "string tensor in raw_data": _tensor_value(data_type=onnx.TensorProto.STRING, dims=[N_BIG],
                                               raw_data=bytes(N_BIG)),
    "value_ints of type INTS holding floats": _list_attribute("value_ints", INTS,
                                                              floats=[1.0] * N_BIG),
    "value_ints holding ints and floats": _list_attribute("value_ints", INTS, ints=[1] * N_BIG,
                                                          floats=[1.0]),
    "value_ints of type FLOATS": _list_attribute("value_ints", FLOATS, floats=[1.0] * N_BIG),
}  # fmt: skip


CONSISTENT = {
    # the negative controls: the same shapes, consistent; onnx.checker accepts them
    "float tensor, float_data": _tensor_value(data_type=F, dims=[N_BIG], float_data=[1.0] * N_BIG),
    "int64 tensor, int64_data": _tensor_value(data_type=I64, dims=[N_BIG], int64_data=[1] * N_BIG),
    "float tensor, raw_data": _tensor_value(data_type=F, dims=[N_BIG], raw_data=bytes(4 * N_BIG)),
    "value_ints of type INTS": _list_attribute("value_ints", INTS, ints=[1] * N_BIG),
    "value_floats of type FLOATS": _list_attribute("value_floats", FLOATS, floats=[1.0] * N_BIG),
}  # fmt: skip


@pytest.mark.parametrize("value", HIDDEN_BY_REMOVAL.values(), ids=list(HIDDEN_BY_REMOVAL))
def test_a_removed_list_never_hides_what_onnx_checker_refuses(
    monkeypatch: pytest.MonkeyPatch, value: onnx.AttributeProto
) -> None:
    """Before, these Constants conformed (exit 0): the removed list (or the raw_data
    sanitize cleared) was exactly what made them invalid. Now the fields that held data,
    and whether the one the type names held enough for the shape, outlive the removal
    (placeholders, the mark's counts), and
    onnx.checker judges them on the validity skeleton: invalid with the pre-pass and
    without it (a ModelProto given by the caller, and the walker made to refuse)."""
    m = _constant_model(value)
    assert not onnx_checker_accepts(m)
    data = m.SerializeToString()
    removed = wire.strip_lists(data, sanitize.PAYLOAD_LIMIT) is not data
    assert removed == (value.type != onnx.AttributeProto.TENSOR or not value.t.raw_data)
    for source in (data, m):
        with pytest.raises(ModelReadError, match=r"invalid ONNX model \(onnx.checker\)"):
            check_report(source)
    assert _report_refused(monkeypatch, data)[0] == "ModelReadError"  # type: ignore[index]


@pytest.mark.parametrize("value", CONSISTENT.values(), ids=list(CONSISTENT))
def test_negative_control_consistent_long_payloads_conform(value: onnx.AttributeProto) -> None:
    m = _constant_model(value)
    assert onnx_checker_accepts(m)
    report = check_report(m.SerializeToString())
    assert report.violations == () and report.mul_nodes == 1


def _fewest_values_onnx_accepts(data_type: int, field_name: str, elements: int) -> int | None:
    """onnx.checker's own answer: the fewest values (bytes for raw_data) of ``field_name``
    it accepts for ``elements`` elements of ``data_type``; None: none up to 64."""
    zero: object = b"" if field_name == "string_data" else 0
    for size in range(65):
        t = onnx.TensorProto(name="w", data_type=data_type, dims=[elements])
        if field_name == "raw_data":
            t.raw_data = bytes(size)
        else:
            getattr(t, field_name).extend([zero] * size)
        try:
            onnx.checker.check_tensor(t)
        except onnx.checker.ValidationError:
            continue
        return size
    return None


@pytest.mark.parametrize("data_type", sorted(sanitize._STORAGE))
def test_payload_sizes_are_onnx_checkers(data_type: int) -> None:
    """sanitize's table of storage sizes (what a cleared payload's placeholders keep) is
    onnx.checker's, for every data type, element count and field it accepts data in."""
    field_name, *_ = sanitize._STORAGE[data_type]
    for elements in range(1, 20):
        values, raw = sanitize.needed(data_type, elements)
        assert _fewest_values_onnx_accepts(data_type, field_name, elements) == values
        if raw <= 64:  # 0: raw_data refused whatever its size
            assert _fewest_values_onnx_accepts(data_type, "raw_data", elements) == (raw or None)
