"""The wire-level pre-pass (src/sonnx_mul/models/wire.py) is exact.

* Its field numbers are onnx.proto's (pinned against onnx's own descriptors).
* Exactness: on random models written byte by byte (lists packed and unpacked,
  in attributes of the main graph, nested graphs, functions and graphs the
  checker does not walk, doc strings spelling the mark, unknown fields, groups,
  closed-enum values protobuf keeps as unknown), optionally mutated, protobuf
  parses the pre-pass's output exactly when it parses the input, and
  sanitize.strip_payloads gives the same model, byte for byte, from both.

The pre-pass changes memory, never a verdict: the ``test_wire_*.py`` files hold its
tests (exactness, encodings, verdicts, bounds); the memory it saves is measured in
tests/checker/test_hostile_models.py.
"""

from __future__ import annotations

import onnx
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from wire_support import compare, parsed

from hostile_files import (
    field,
    text,
    varint,
)
from sonnx_mul.models import sanitize, wire


def test_field_numbers_are_onnx_proto() -> None:
    def number(message: type, field: str) -> int:
        return int(message.DESCRIPTOR.fields_by_name[field].number)  # type: ignore[attr-defined]

    assert number(onnx.ModelProto, "graph") == wire.MODEL_GRAPH
    assert number(onnx.ModelProto, "functions") == wire.MODEL_FUNCTIONS
    assert number(onnx.GraphProto, "node") == wire.GRAPH_NODE
    assert number(onnx.FunctionProto, "node") == wire.FUNCTION_NODE
    assert number(onnx.NodeProto, "attribute") == wire.NODE_ATTRIBUTE
    a = onnx.AttributeProto
    fields = ("floats", "ints", "strings", "g", "graphs", "doc_string", "type")
    assert [number(a, f) for f in fields] == [
        wire.ATTR_FLOATS, wire.ATTR_INTS, wire.ATTR_STRINGS,
        wire.ATTR_G, wire.ATTR_GRAPHS, wire.ATTR_DOC, wire.ATTR_TYPE,
    ]  # fmt: skip
    tensors = ("t", "tensors", "sparse_tensor", "sparse_tensors")
    assert [number(a, f) for f in tensors] == [
        wire.ATTR_T, wire.ATTR_TENSORS, wire.ATTR_SPARSE_TENSOR, wire.ATTR_SPARSE_TENSORS,
    ]  # fmt: skip
    assert number(onnx.GraphProto, "initializer") == wire.GRAPH_INITIALIZER
    assert number(onnx.GraphProto, "sparse_initializer") == wire.GRAPH_SPARSE_INITIALIZER
    assert number(onnx.SparseTensorProto, "values") == wire.SPARSE_VALUES
    assert number(onnx.SparseTensorProto, "indices") == wire.SPARSE_INDICES
    assert number(onnx.TensorProto, "doc_string") == wire.TENSOR_DOC
    for name, (num, form) in wire.TENSOR_LISTS.items():
        descriptor = onnx.TensorProto.DESCRIPTOR.fields_by_name[name]
        assert descriptor.number == num, name
        kinds = {
            "fixed32": ("FLOAT",),
            "fixed64": ("DOUBLE",),
            "bytes": ("BYTES",),
            "raw": ("BYTES",),
        }
        expected = kinds.get(form, ("INT32", "INT64", "UINT64"))
        assert descriptor.type in [getattr(descriptor, f"TYPE_{k}") for k in expected], name
    # every payload field sanitize clears is one the pre-pass removes with the lists
    assert set(wire.TENSOR_LISTS) == {"raw_data", *sanitize.TENSOR_PAYLOADS}
    # ... and they are every repeated scalar field onnx's TensorProto has but its dims
    repeated_scalars = {
        f.name
        for f in onnx.TensorProto.DESCRIPTOR.fields
        if f.is_repeated and f.type != f.TYPE_MESSAGE
    }
    assert repeated_scalars - {"dims"} == set(sanitize.TENSOR_PAYLOADS)
    assert (a.GRAPH, a.GRAPHS) == (wire.TYPE_GRAPH, wire.TYPE_GRAPHS)
    assert sorted(a.AttributeType.values()) == list(wire.TYPE_VALUES)
    # A closed enum (proto2): a value outside it is an unknown field, the last valid one stays
    # (the walker decides which graphs sanitize walks the same way).
    closed = a()
    closed.ParseFromString(field(20, 0, varint(5)) + field(20, 0, varint(99)))
    assert closed.type == a.GRAPH
    closed.ParseFromString(field(20, 0, varint(10 + (1 << 32))))  # truncated to int32
    assert closed.type == a.GRAPHS


INT64 = st.integers(-(2**63), 2**63 - 1)


@st.composite
def list_fields(draw: st.DrawFn) -> bytes:
    """floats/ints/strings of an attribute, each packed or not, interleaved at random."""
    parts: list[bytes] = []
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["ints", "packed ints", "floats", "packed floats", "strings"]))
        n = draw(st.integers(0, 6))
        if kind == "ints":
            parts += [field(8, 0, varint(draw(INT64))) for _ in range(n)]
        elif kind == "packed ints":
            parts.append(field(8, 2, b"".join(varint(draw(INT64)) for _ in range(n))))
        elif kind == "floats":
            parts += [field(7, 5, draw(st.binary(min_size=4, max_size=4))) for _ in range(n)]
        elif kind == "packed floats":
            parts.append(field(7, 2, draw(st.binary(min_size=4 * n, max_size=4 * n))))
        else:
            parts += [text(9, draw(st.binary(max_size=3))) for _ in range(n)]
    return b"".join(parts)


@st.composite
def tensor(draw: st.DrawFn) -> bytes:
    """A TensorProto: dims, a type, payload fields in any encoding, a doc string."""
    parts = [field(1, 0, varint(draw(st.integers(0, 9)))) for _ in range(draw(st.integers(0, 2)))]
    parts.append(field(2, 0, varint(draw(st.integers(0, 16)))))
    for _ in range(draw(st.integers(0, 3))):
        number = draw(st.sampled_from([4, 5, 6, 7, 9, 10, 11]))
        n = draw(st.integers(0, 6))
        packed = draw(st.booleans())
        if number in (5, 7, 11):
            values = [varint(draw(INT64)) for _ in range(n)]
            parts += (
                [field(number, 2, b"".join(values))]
                if packed
                else [field(number, 0, v) for v in values]
            )
        elif number in (4, 10):
            size = 4 if number == 4 else 8
            values = [draw(st.binary(min_size=size, max_size=size)) for _ in range(n)]
            parts += (
                [field(number, 2, b"".join(values))]
                if packed
                else [field(number, 5 if size == 4 else 1, v) for v in values]
            )
        else:
            parts += [text(number, draw(st.binary(max_size=3))) for _ in range(n)]
    if draw(st.booleans()):
        parts.append(text(12, draw(st.sampled_from(["d", wire.MARK + "0", "sonnx-mul:stripped"]))))
    if draw(st.booleans()):
        parts.append(draw(UNKNOWN))
    return b"".join(draw(st.permutations(parts)))


@st.composite
def sparse(draw: st.DrawFn) -> bytes:
    parts = [
        field(draw(st.sampled_from([1, 2])), 2, draw(tensor()))
        for _ in range(draw(st.integers(0, 3)))
    ]
    return b"".join(parts) + field(3, 0, varint(4))


NAMES = st.sampled_from(["value_ints", "value_floats", "value_strings", "pads", "value", "junk"])


OPS = st.sampled_from(["Constant", "Constant", "Identity", "If", "Loop", "f"])


DOMAINS = st.sampled_from(["", "", "ai.onnx", "local"])


UNKNOWN = st.sampled_from([
    field(99, 0, varint(7)), field(98, 2, b"xyz"), field(97, 5, b"abcd"),
    field(96, 1, b"12345678"), varint(95 << 3 | 3) + field(1, 0, b"\x01") + varint(95 << 3 | 4),
    field(8, 5, b"abcd"), field(7, 0, varint(3)), field(9, 0, varint(1)),  # wrong wire types
    field(20, 0, varint(99)), field(20, 0, varint(5 + (1 << 32))),  # unknown / truncated enum
])  # fmt: skip


@st.composite
def attribute(draw: st.DrawFn, depth: int) -> bytes:
    parts = [text(1, draw(NAMES)), draw(list_fields())]
    if draw(st.booleans()):
        parts.append(field(20, 0, varint(draw(st.sampled_from([5, 10, 7, 6, 4, 0])))))
    if draw(st.booleans()):  # the file's own doc string, sometimes spelling the mark
        parts.append(text(13, draw(st.sampled_from(["d", wire.MARK + "999999", wire.MARK]))))
    if draw(st.booleans()):
        parts.append(draw(UNKNOWN))
    if depth < 2 and draw(st.booleans()):
        parts.append(field(draw(st.sampled_from([6, 11])), 2, draw(graph(depth + 1))))
    for _ in range(draw(st.integers(0, 2))):  # t and sparse_tensor twice: protobuf merges
        number = draw(st.sampled_from([5, 10, 22, 23]))
        parts.append(field(number, 2, draw(tensor() if number in (5, 10) else sparse())))
    parts = draw(st.permutations(parts))
    return b"".join(parts)


@st.composite
def node(draw: st.DrawFn, depth: int) -> bytes:
    parts = [text(4, draw(OPS)), text(7, draw(DOMAINS)), text(1, "x"), text(2, "y")]
    parts += [field(5, 2, draw(attribute(depth))) for _ in range(draw(st.integers(0, 3)))]
    if draw(st.booleans()):
        parts.append(text(6, wire.MARK + "5"))  # a node's doc string: sanitize clears it
    return b"".join(draw(st.permutations(parts)))


@st.composite
def graph(draw: st.DrawFn, depth: int = 0) -> bytes:
    parts = [field(1, 2, draw(node(depth))) for _ in range(draw(st.integers(0, 3)))]
    parts += [field(5, 2, draw(tensor())) for _ in range(draw(st.integers(0, 2)))]
    parts += [field(15, 2, draw(sparse())) for _ in range(draw(st.integers(0, 1)))]
    return b"".join(draw(st.permutations(parts))) + text(2, "g")


@st.composite
def wire_models(draw: st.DrawFn) -> bytes:
    parts = [field(1, 0, varint(10)), field(8, 2, text(1, "") + field(2, 0, varint(18)))]
    parts.append(field(7, 2, draw(graph())))
    if draw(st.booleans()):  # a second graph field: protobuf merges the two
        parts.append(field(7, 2, draw(graph())))
    for _ in range(draw(st.integers(0, 2))):
        body = b"".join(field(7, 2, draw(node(0))) for _ in range(draw(st.integers(0, 2))))
        parts.append(field(25, 2, text(1, "f") + text(10, "local") + body))
    return b"".join(draw(st.permutations(parts)))


@st.composite
def mutated(draw: st.DrawFn) -> tuple[bytes, bool]:
    """A model of wire_models, one time in four with byte-level mutations (and True)."""
    data = bytearray(draw(wire_models()))
    mutate = draw(st.integers(0, 3)) == 0
    for _ in range(draw(st.integers(1, 3)) if mutate else 0):
        pos = draw(st.integers(0, max(len(data) - 1, 0)))
        kind = draw(st.sampled_from(["flip", "truncate", "insert"]))
        event(f"mutation {kind}")
        if kind == "flip" and data:
            data[pos] ^= 1 << draw(st.integers(0, 7))
        elif kind == "truncate":
            del data[pos:]
        else:
            data[pos:pos] = draw(st.binary(min_size=1, max_size=4))
    return bytes(data), mutate


LIMITS = st.sampled_from([0, 1, 2, 3, 5, 8, 1 << 16])


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(mutated(), LIMITS)
def test_prepass_gives_the_model_sanitize_gives(generated: tuple[bytes, bool], limit: int) -> None:
    data, was_mutated = generated
    outcome = compare(data, limit)
    event(outcome)
    if not was_mutated:  # every well-formed file is read by the walker
        assert outcome in ("unchanged", "rewritten", "unverifiable"), data


def test_exactness_generator_reaches_every_outcome() -> None:
    """Deterministic: rewritten and unchanged files, mutants the walker refuses."""
    seen: set[str] = set()

    @settings(max_examples=200, deadline=None, database=None, derandomize=True)
    @given(mutated(), LIMITS)
    def collect(generated: tuple[bytes, bool], limit: int) -> None:
        seen.add(compare(generated[0], limit))

    collect()
    assert {"refused", "unchanged", "rewritten", "unverifiable"} <= seen, seen


def test_a_file_protobuf_refuses_stays_refused() -> None:
    """The walker skips what it does not walk (here a graph input cut short inside): the
    rewritten bytes keep it, so protobuf refuses them as it refuses the file."""
    bad_input = field(11, 2, b"\x0a\x05ab")
    attr = text(1, "pads") + b"".join(field(8, 0, varint(1)) for _ in range(3))
    node = text(4, "Identity") + field(5, 2, attr)
    data = field(7, 2, field(1, 2, node) + bad_input)
    assert parsed(data) is None
    assert compare(data, 1) == "protobuf refuses both"
