"""The wire-level pre-pass (src/sonnx_mul/models/wire.py) within its bounds of work
and memory: the values it looks at stay linear in the file, the lists it leaves for
protobuf within kept_budget (a file past it is refused, naming the reason), merged
repeats of a tensor are counted together, and its peak memory stays within twice
the file; on random combinations of payloads, verdicts and bounds hold together.

The pre-pass changes memory, never a verdict: the ``test_wire_*.py`` files hold its
tests (exactness, encodings, verdicts, bounds); the memory it saves is measured in
tests/checker/test_hostile_models.py.
"""

from __future__ import annotations

import onnx
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from wire_support import onnx_checker_accepts, parsed, refusing_walker, report_or_error

from hostile_files import (
    constant_with,
    field,
    graph_file,
    text,
    value_ints_at,
    varint,
)
from sonnx_mul.models import ModelReadError, check_report, sanitize, wire
from sonnx_mul.models import checker as checker_module


def test_interleaved_fixed_values_cost_linear_work() -> None:
    """Floats interleaved with ints: each float is a run of one. The run reader used to
    read _CHUNK values ahead for each (a 1 MB file ran for minutes); now the values it
    looks at are at most twice the file's bytes."""
    pair = field(8, 0, b"\x01") + field(7, 5, bytes(4))
    attr = text(1, "pads") + pair * 20_000
    data = graph_file(field(1, 2, text(4, "Identity") + field(5, 2, attr)))
    walker = wire._Walker(data, 1 << 16, wire.kept_budget(len(data)))
    walker.message("model", 0, len(data), 0)
    assert 20_000 <= walker.visited <= 2 * len(data)


@pytest.mark.parametrize("constants", [200, 7])
def test_many_lists_at_the_limit_are_refused_past_the_bound(constants: int) -> None:
    """Each list exactly at the limit (not removed), many of them: protobuf would expand
    their sum (200 of them: 465 MB for a 12.5 MB file). Their total is bounded by
    kept_budget: the file is refused, naming the reason, never parsed."""
    limit = sanitize.PAYLOAD_LIMIT
    nodes = b"".join(constant_with(value_ints_at(limit), f"c{i}") for i in range(constants))
    data = graph_file(nodes)
    assert constants * limit > wire.kept_budget(len(data))
    with pytest.raises(wire.UnverifiableError, match="hold more than"):
        wire.strip_lists(data, limit)
    with pytest.raises(ModelReadError, match="memory bound"):
        check_report(data)


def test_negative_control_lists_at_the_limit_within_the_budget_are_checked() -> None:
    limit = sanitize.PAYLOAD_LIMIT
    constants = 3
    nodes = b"".join(constant_with(value_ints_at(limit), f"c{i}") for i in range(constants))
    mul = field(1, 2, text(1, "c0") + text(1, "c1") + text(2, "z") + text(4, "Mul"))
    data = graph_file(nodes + mul)
    assert constants * limit <= wire.kept_budget(len(data))
    assert wire.strip_lists(data, limit) is data
    assert check_report(data).mul_nodes == 1


def test_a_merged_tensor_counts_every_repeat() -> None:
    """A tensor field repeated (protobuf merges the repeats into one list): each repeat
    under the limit, their sum past the budget is refused; two repeats over the limit
    (two marks, protobuf would keep the last only) are refused too."""
    limit = sanitize.PAYLOAD_LIMIT
    repeat = field(5, 2, field(2, 0, varint(7)) + field(7, 2, b"\x01" * limit))
    attr = text(1, "value") + field(20, 0, varint(4))
    many = graph_file(constant_with(attr + repeat * 20, "c"))
    with pytest.raises(wire.UnverifiableError, match="hold more than"):
        wire.strip_lists(many, limit)
    over = field(5, 2, field(2, 0, varint(7)) + field(7, 2, b"\x01" * (limit + 1)))
    twice = graph_file(constant_with(attr + over * 2, "c"))
    with pytest.raises(wire.UnverifiableError, match="merges"):
        wire.strip_lists(twice, limit)
    once = graph_file(constant_with(attr + over + repeat, "c"))
    assert wire.strip_lists(once, limit) is not once  # one mark: read, counted, exact


def test_a_repeat_rewritten_for_its_doc_string_alone_carries_no_mark() -> None:
    """A tensor field repeated: one occurrence over the limit (marked), the other under
    it but with a doc string (rewritten: the doc string is dropped). Only the first
    carries a mark, so protobuf's merge keeps it (the second sets no doc string): the
    file is read, not refused as two marks of one merged tensor."""
    limit = sanitize.PAYLOAD_LIMIT
    attr = text(1, "value") + field(20, 0, varint(4))
    over = field(5, 2, field(2, 0, varint(7)) + field(7, 2, b"\x01" * (limit + 1)))
    documented = field(5, 2, field(2, 0, varint(7)) + field(7, 2, b"\x01") + text(12, "d"))
    data = graph_file(constant_with(attr + over + documented, "c"))
    out = parsed(wire.strip_lists(data, limit))
    assert out is not None
    [value] = out.graph.node[0].attribute
    assert value.t.doc_string == f"{wire.MARK}7={limit}"
    assert list(value.t.int64_data) == [0, 1]  # the placeholder, then the repeat's element


@pytest.mark.parametrize("between", [text(1, "p"), text(13, "")], ids=["name", "doc string"])
def test_fields_interleaved_with_a_removed_list_cost_no_memory_per_field(between: bytes) -> None:
    """An attribute's ints interleaved with another of its fields, each element its own
    span: the walker kept a span per field (805 MB for a file protobuf parses in 39 MB).
    Now its peak (tracemalloc) stays within twice the file plus a constant."""
    import tracemalloc

    attr = text(1, "pads") + (field(8, 0, b"\x01") + between) * 5000
    data = graph_file(field(1, 2, text(4, "Identity") + field(5, 2, attr)))
    tracemalloc.start()
    try:
        out = wire.strip_lists(data, 1000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert out is not data
    assert peak <= 2 * len(data) + (64 << 10), (peak, len(data))


SMALL_LIMIT = 8  # sanitize's limit in these tests: lists at and around it stay small


TYPED_FIELDS = {4: "fixed32", 5: "varint", 6: "bytes", 7: "varint", 10: "fixed64", 11: "varint"}


@st.composite
def payload_tensor(draw: st.DrawFn) -> bytes:
    """A tensor of a numeric or string type, dims around its data, its data in one or two
    fields (the type's or another), each list at, under or over the limit, packed or
    interleaved with the other fields."""
    data_type = draw(st.sampled_from([1, 6, 7, 8, 10, 11, 12, 13]))
    count = draw(st.sampled_from([0, 1, SMALL_LIMIT - 1, SMALL_LIMIT, SMALL_LIMIT + 1, 20]))
    dims = draw(st.sampled_from([[count], [count + 1], [max(count - 1, 0)], [], [2, count]]))
    parts = [field(1, 0, varint(d)) for d in dims] + [field(2, 0, varint(data_type))]
    own = {1: 4, 6: 5, 7: 7, 8: 6, 10: 5, 11: 10, 12: 11, 13: 11}[data_type]
    layout = draw(st.sampled_from(["its field"] * 4 + ["another field", "two fields", "raw"]))
    numbers = {
        "its field": [own],
        "another field": [draw(st.sampled_from(sorted(set(TYPED_FIELDS) - {own})))],
        "two fields": [own, draw(st.sampled_from(sorted(set(TYPED_FIELDS) - {own})))],
        "raw": [],
    }[layout]
    for i, number in enumerate(numbers):
        n = count if i == 0 else draw(st.integers(1, 3))
        form = TYPED_FIELDS[number]
        one = {"fixed32": bytes(4), "fixed64": bytes(8), "varint": b"\x01", "bytes": b""}[form]
        if form != "bytes" and draw(st.booleans()):
            parts.append(field(number, 2, one * n))  # packed
        else:
            wire_type = {"fixed32": 5, "fixed64": 1, "varint": 0, "bytes": 2}[form]
            parts += [field(number, wire_type, one) for _ in range(n)]
    if layout == "raw":
        parts.append(text(9, bytes(draw(st.integers(0, 4 * SMALL_LIMIT)))))
    return b"".join(draw(st.permutations(parts)))


@st.composite
def payload_models(draw: st.DrawFn) -> bytes:
    """A Constant (value: a tensor, its field repeated up to three times, which protobuf
    merges; or a list attribute of a type that may not match its data), optionally
    inside an If branch, and a Mul reading it."""
    if draw(st.booleans()):
        attr = text(1, "value") + field(20, 0, varint(4))
        attr += b"".join(
            field(5, 2, draw(payload_tensor())) for _ in range(draw(st.integers(1, 3)))
        )
    else:
        name = draw(st.sampled_from(["value_ints", "value_floats"]))
        attr = text(1, name) + field(20, 0, varint(draw(st.sampled_from([6, 7]))))
        for number in draw(st.lists(st.sampled_from([7, 8]), min_size=1, max_size=2)):
            n = draw(st.sampled_from([1, SMALL_LIMIT, SMALL_LIMIT + 1]))
            parts = [field(8, 0, b"\x01") if number == 8 else field(7, 5, bytes(4))] * n
            attr += b"".join(parts)
    const = constant_with(attr, "c")
    mul = field(1, 2, text(1, "c") + text(1, "c") + text(2, "z") + text(4, "Mul"))
    nodes = const + mul
    if draw(st.booleans()):  # nested: the Constant in both branches of an If
        branch = nodes + field(12, 2, text(1, "z")) + text(2, "b")
        attrs = b"".join(
            field(5, 2, text(1, name) + field(20, 0, varint(5)) + field(6, 2, branch))
            for name in ("then_branch", "else_branch")
        )
        nodes = field(1, 2, text(1, "x") + text(2, "y") + text(4, "If") + attrs)
        bool_scalar = field(1, 2, field(1, 0, varint(onnx.TensorProto.BOOL)) + field(2, 2, b""))
        nodes += field(11, 2, text(1, "x") + field(2, 2, bool_scalar))  # the condition
    return graph_file(nodes)


def _onnx_verdict(data: bytes) -> str:
    """protobuf and onnx.checker on the file itself, no pre-pass: read error, invalid,
    or valid."""
    m = parsed(data)
    if m is None:
        return "read error"
    return "valid" if onnx_checker_accepts(m) else "invalid"


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(payload_models())
def test_combinations_keep_onnx_checkers_verdict_within_the_bounds(data: bytes) -> None:
    """The checker's verdict with the pre-pass is the verdict without it, and says
    "invalid" exactly when onnx.checker (on the whole parsed file) does; the walk's work
    (values its run reader looked at) and the list elements it leaves for protobuf stay
    within their bounds, and its peak memory (tracemalloc) within 2x the file + 64 KiB."""
    import tracemalloc

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sanitize, "PAYLOAD_LIMIT", SMALL_LIMIT)
        walker = wire._Walker(data, SMALL_LIMIT, wire.kept_budget(len(data)))
        tracemalloc.start()
        try:
            walker.message("model", 0, len(data), 0)
            _, peak = tracemalloc.get_traced_memory()
        except wire.UnverifiableError:
            event("unverifiable")
            return
        finally:
            tracemalloc.stop()
        assert walker.visited <= 2 * len(data) and walker.kept <= walker.budget
        assert peak <= 2 * len(data) + (64 << 10)
        prepassed = report_or_error(data)
        mp.setattr(checker_module, "strip_lists", refusing_walker)
        plain = report_or_error(data)
    assert prepassed == plain
    expected = _onnx_verdict(data)
    event(f"onnx: {expected}")
    invalid = isinstance(plain, tuple) and "onnx.checker" in str(plain[1])
    assert invalid == (expected == "invalid"), (expected, plain)
