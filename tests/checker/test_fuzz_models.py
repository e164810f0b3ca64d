"""Fuzzing the ONNX model checker and ``sonnx-mul check`` on mutated models.

Invariants, for ANY bytes: ``check_model`` returns a list of Violations whose
requirement ids are in the registry, or raises ``ModelReadError`` (nothing
else, no crash, no hang: every example is timed); ``sonnx-mul check`` exits
0, 1 or 2, and exit 2 comes with exactly one error line (JSON under ``--format json``) on
stderr and no traceback. The mutations are byte-level (bit flips, truncation,
splices, insertions into valid serialized models) and structural (random
attributes, dims, opsets, domains, op types and input counts; declared dims
include the names the checker makes up or writes and long symbols, issue 29).

The default ("ci") profile keeps this under a few seconds; ``make fuzz``
style runs use HYPOTHESIS_PROFILE=long.
"""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
import time
from pathlib import Path

import onnx
from hypothesis import HealthCheck, assume, event, example, given, settings
from hypothesis import strategies as st
from onnx import TensorProto as T
from onnx import helper as h

from models import model, mul_model, nested_if_in_loop, vi
from sonnx_mul.cli import main
from sonnx_mul.dtypes import MAX_KNOWN_OPSET
from sonnx_mul.models import ModelReadError, Violation, check_model
from sonnx_mul.requirements import REGISTRY
from spellings import internal_names, long_names

TIME_LIMIT = 10.0  # seconds per example: far above the ~ms a check takes


def _function_model() -> onnx.ModelProto:
    body = [h.make_node("Mul", ["a", "b"], ["c"])]
    f = h.make_function("local", "f", ["a", "b"], ["c"], body, [h.make_opsetid("", 14)])
    node = h.make_node("f", ["x", "y"], ["z"], domain="local")
    inputs = [vi("x", T.FLOAT, [2, 3]), vi("y", T.FLOAT, [2, 3])]
    return model([node], inputs, functions=[f], extra_opsets=[h.make_opsetid("local", 1)])


def _sparse_model() -> onnx.ModelProto:
    values = h.make_tensor("s", T.FLOAT, [1], [1.0])
    sp = h.make_sparse_tensor(values, h.make_tensor("i", T.INT64, [1], [0]), [2, 3])
    const = h.make_node("Constant", [], ["k"], value=h.make_tensor("k", T.FLOAT, [2, 3], [1.0] * 6))
    nodes = [const, h.make_node("Mul", ["x", "s"], ["t"]), h.make_node("Mul", ["t", "k"], ["z"])]
    return model(nodes, [vi("x", T.FLOAT, [2, 3])], sparse=[sp])


def _long_list_model() -> onnx.ModelProto:
    """A list over sanitize's limit: mutations then land in what wire.strip_lists removes."""
    const = h.make_node("Constant", [], ["k"], value_ints=[1] * 70_000)
    return model([const, h.make_node("Mul", ["x", "x"], ["z"])], [vi("x", T.FLOAT, [2, 3])])


SEEDS: list[bytes] = [
    m.SerializeToString()
    for m in (
        mul_model(),
        mul_model((2, 3), (3,)),
        mul_model(("N", 3), (2, 0), T.INT8, T.FLOAT16, opset=6, broadcast=1, axis=1),
        nested_if_in_loop(),
        _function_model(),
        _sparse_model(),
        _long_list_model(),
    )
]

seeds = st.sampled_from(SEEDS)

# Found by the long run: a node name that is not UTF-8 came back as bytes and
# broke `--format json` (fixed: names are decoded with backslashreplace).
NON_UTF8_NAME = SEEDS[1].replace(b"the_mul", b"\x80he_mul")


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    """A valid serialized model with one to three byte-level mutations."""
    data = bytearray(draw(seeds))
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["flip", "truncate", "splice", "insert", "overwrite"]))
        event(f"mutation: {kind}")
        pos = draw(st.integers(0, max(len(data) - 1, 0)))
        if kind == "flip" and data:
            data[pos] ^= 1 << draw(st.integers(0, 7))
        elif kind == "truncate":
            del data[pos:]
        elif kind == "splice":
            other = draw(seeds)
            data = data[:pos] + other[draw(st.integers(0, len(other))) :]
        elif kind == "insert":
            data[pos:pos] = draw(st.binary(min_size=1, max_size=16))
        elif kind == "overwrite":
            chunk = draw(st.binary(min_size=1, max_size=8))
            data[pos : pos + len(chunk)] = chunk
    return bytes(data)


def _assert_checked(source: bytes | onnx.ModelProto) -> list[Violation] | None:
    """check_model's contract on any input; None when it was ModelReadError."""
    start = time.monotonic()
    try:
        found = check_model(source)
    except ModelReadError as exc:
        event("ModelReadError")
        assert str(exc)
        found = None
    else:
        assert isinstance(found, list)
        for v in found:
            assert isinstance(v, Violation) and v.requirement in REGISTRY, v
            assert isinstance(v.message, str) and isinstance(v.node, str)
        event("violations" if found else "conforms")
    assert time.monotonic() - start < TIME_LIMIT
    return found


@example(NON_UTF8_NAME)
@given(mutated())
def test_mutated_bytes_give_violations_or_model_read_error(data: bytes) -> None:
    _assert_checked(data)


@given(st.binary(max_size=256))
def test_random_bytes_give_violations_or_model_read_error(data: bytes) -> None:
    _assert_checked(data)


def _run_cli(path: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["check", str(path), "--format", "json"])
    return code, out.getvalue(), err.getvalue()


@settings(suppress_health_check=[HealthCheck.too_slow])
@example(NON_UTF8_NAME)
@given(mutated())
def test_cli_check_exit_codes_and_one_line_errors(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzzed.onnx"
        path.write_bytes(data)
        start = time.monotonic()
        code, out, err = _run_cli(path)
        assert time.monotonic() - start < TIME_LIMIT
    event(f"exit {code}")
    assert code in (0, 1, 2)
    assert "Traceback" not in err
    if code == 2:
        lines = err.splitlines()
        assert len(lines) == 1, err  # --format json: the error is one JSON line
        assert json.loads(lines[0])["exit_code"] == 2, err
        assert out == ""
    else:
        assert err == "" and out.startswith("{")


# ------------------------------------------------------------ structured
INT64 = st.integers(-(2**63), 2**63 - 1)
names = st.sampled_from(["x", "y", "z", "w", "", "c"]) | st.text(max_size=4)
dims = st.one_of(
    st.integers(-3, 5),
    st.sampled_from([2**31, 2**62, 2**63 - 1]),
    INT64,
    st.text(max_size=3),
    internal_names(),  # issue 29: the checker's own spellings are the file's names
    long_names(),  # issue 29: kilobytes of symbol
    st.none(),
)
shapes = st.none() | st.lists(dims, max_size=4)
elem_types = st.sampled_from(
    [T.FLOAT, T.INT8, T.BOOL, T.STRING, T.BFLOAT16, T.FLOAT8E4M3FN, 0]
) | st.integers(-5, 40)
attr_values = st.one_of(
    INT64,
    st.floats(allow_nan=True),
    st.binary(max_size=8),
    st.lists(INT64, max_size=3),
    st.lists(st.floats(width=32), min_size=1, max_size=3),
)


@st.composite
def structured(draw: st.DrawFn) -> onnx.ModelProto:
    """A random small graph of random nodes with random attributes and types."""
    nodes = []
    for i in range(draw(st.integers(1, 4))):
        op = draw(
            st.sampled_from(["Mul", "Mul", "Mul", "Add", "Identity", "If", "Constant"])
            | st.text(max_size=5)
        )
        domain = draw(st.sampled_from(["", "", "ai.onnx", "custom"]) | st.text(max_size=4))
        ins = draw(st.lists(names, max_size=4))
        attrs = draw(
            st.dictionaries(
                st.sampled_from(["broadcast", "axis", "value", "junk", "then_branch"]),
                attr_values,
                max_size=3,
            )
        )
        try:
            node = h.make_node(op, ins, [draw(names)], name=f"n{i}", domain=domain, **attrs)
        except Exception:  # helper refused the attribute value: not a model
            assume(False)
        if draw(st.booleans()):  # sometimes a subgraph attribute
            sub = h.make_graph(
                [h.make_node("Mul", [draw(names), draw(names)], ["t"])], "s", [], [vi("t")]
            )
            node.attribute.append(h.make_attribute("body", sub))
        nodes.append(node)
    inputs = [
        vi(name, draw(elem_types), draw(shapes))
        for name in draw(st.lists(names, max_size=4, unique=True))
    ]
    m = model(nodes, inputs)
    del m.opset_import[:]
    for _ in range(draw(st.integers(0, 2))):
        domain = draw(st.sampled_from(["", "ai.onnx", "custom"]) | st.text(max_size=3))
        m.opset_import.append(h.make_opsetid(domain, draw(st.integers(-3, 25) | INT64)))
    m.ir_version = draw(st.integers(0, 12) | INT64)
    return m


@given(structured(), st.booleans())
def test_structured_mutations_give_violations_or_model_read_error(
    m: onnx.ModelProto, as_bytes: bool
) -> None:
    _assert_checked(m.SerializeToString() if as_bytes else m)


@given(shapes, shapes, elem_types, st.integers(-3, 25) | INT64)
def test_R1_R3_random_dims_types_and_opsets(
    sa: list[int | str | None] | None, sb: list[int | str | None] | None, et: int, opset: int
) -> None:
    m = mul_model(sa, sb, et)
    m.opset_import[0].version = opset
    found = _assert_checked(m)
    assert found is not None  # a well-formed protobuf: always judged
    reqs = {v.requirement for v in found}
    for shape in (sa, sb):
        if shape is not None and any(isinstance(d, int) and d < 1 for d in shape):
            assert "R1-DIMS" in reqs, (sa, sb, found)  # positive dims only
    if sa != sb:
        assert "R1" in reqs
    if not 1 <= opset <= MAX_KNOWN_OPSET:
        assert "R3-OPSET" in reqs
