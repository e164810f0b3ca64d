"""The wire-level pre-pass (src/sonnx_mul/models/wire.py) on the encodings protobuf
reads: what protobuf refuses in a walked message the walker refuses (malformed lists
and fields); lengths and tags of two bytes or more, lists past a mebibyte, and
nesting up to the walker's depth limit are read and counted exactly.

The pre-pass changes memory, never a verdict: the ``test_wire_*.py`` files hold its
tests (exactness, encodings, verdicts, bounds); the memory it saves is measured in
tests/checker/test_hostile_models.py.
"""

from __future__ import annotations

import inspect
import sys

import pytest
from wire_support import compare, parsed

from hostile_files import (
    LONG_VARINT,
    field,
    text,
    varint,
)
from sonnx_mul.models import ModelReadError, check_report, sanitize, wire


def in_node(attr: bytes, op: str = "Identity") -> bytes:
    """A model whose graph holds one node with one attribute, each the last field of the
    enclosing message: the attribute's last byte is the file's last byte."""
    return field(7, 2, field(1, 2, text(4, op) + field(5, 2, attr)))


PADS = text(1, "pads")


MALFORMED = {
    # upb refuses these lists; dropping them (over the limit) would make the file readable
    "packed varints, the last one unfinished": in_node(PADS + field(8, 2, b"\x01\x02\x03\x80")),
    "packed varints, one of 11 bytes": in_node(PADS + field(8, 2, b"\x01" + LONG_VARINT)),
    # the walker's own reads: any exception but WireError would escape check_report
    "unpacked varints, one of 11 bytes": in_node(
        PADS + field(8, 0, b"\x01") + field(8, 0, LONG_VARINT)
    ),
    "an unknown group closed by another field's end-group": in_node(
        PADS + varint(95 << 3 | 3) + varint(94 << 3 | 4)
    ),
    "an element whose tag takes two bytes, its varint 11": in_node(
        PADS + field(8, 0, b"\x01") + b"\xc0\x00" + LONG_VARINT
    ),
    "a string whose length is a varint of 11 bytes": in_node(
        text(1, "value_strings") + text(9, b"") + varint(9 << 3 | 2) + b"\x80" * 10 + b"\x00"
    ),
    "a skipped field's tag, then the end of the file": in_node(PADS) + varint(2 << 3 | 2),
    "a string's tag, then the end of the file": in_node(PADS + varint(9 << 3 | 2)),
    "a string longer than what is left of its message": in_node(
        text(1, "strings") + text(9, b"") + varint(9 << 3 | 2) + varint(5) + b"ab"
    ),
    "a float cut short by the end of its message": in_node(
        text(1, "floats") + varint(7 << 3 | 5) + b"\x00\x00"
    ),
    "packed floats of 3 bytes": in_node(text(1, "floats") + field(7, 2, b"\x00\x00\x80")),
    "packed varints longer than what is left of their message": in_node(
        PADS + varint(8 << 3 | 2) + varint(100) + b"\x01\x02"
    ),
    "raw_data longer than what is left of its tensor": in_node(
        text(1, "value") + field(5, 2, field(2, 0, varint(1)) + varint(9 << 3 | 2) + varint(100)),
        "Constant",
    ),
}  # fmt: skip


@pytest.mark.parametrize("data", MALFORMED.values(), ids=list(MALFORMED))
def test_malformed_lists_and_fields_are_refused(data: bytes) -> None:
    """What protobuf refuses in a walked message, the walker refuses with WireError (the
    only error the checker catches), at a limit that makes the list big: the checker then
    parses the original bytes and reports a read error, never a verdict or a crash."""
    assert parsed(data) is None
    with pytest.raises(wire.WireError):
        wire.strip_lists(data, 1)
    with pytest.MonkeyPatch.context() as mp, pytest.raises(ModelReadError, match="cannot read"):
        mp.setattr(sanitize, "PAYLOAD_LIMIT", 1)
        check_report(data)
    with pytest.raises(ModelReadError):
        check_report(data)


def test_strings_with_multibyte_lengths_are_counted() -> None:
    """Strings of 200 bytes (a two-byte length: the run's slow path) are counted one each
    and removed together but one placeholder (an empty string); sanitize then keeps the
    Constant's shape from the mark and the placeholder."""
    attr = text(1, "value_strings") + b"".join(text(9, b"x" * 200) for _ in range(3))
    data = in_node(attr, "Constant")
    assert compare(data, 2) == "rewritten"
    out = parsed(wire.strip_lists(data, 2))
    assert out is not None
    [stripped_attr] = out.graph.node[0].attribute
    assert (stripped_attr.doc_string, list(stripped_attr.strings)) == (wire.MARK + "2", [b""])


def test_strings_whose_tag_takes_two_bytes_are_counted_one_each() -> None:
    """A string written with a two-byte tag (protobuf reads any varint tag) ends a run of
    one-byte tags: it is counted alone, and the strings around it too."""
    attr = text(1, "value_strings") + text(9, b"a") + b"\xca\x00" + varint(1) + b"b"
    data = in_node(attr + text(9, b"c"), "Constant")
    original = parsed(data)
    assert original is not None
    assert list(original.graph.node[0].attribute[0].strings) == [b"a", b"b", b"c"]
    assert compare(data, 1) == "rewritten"
    out = parsed(wire.strip_lists(data, 1))
    assert out is not None
    [stripped_attr] = out.graph.node[0].attribute
    assert (stripped_attr.doc_string, list(stripped_attr.strings)) == (wire.MARK + "2", [b""])


@pytest.mark.parametrize("extra", [0, 1, (1 << 20) + 3])
def test_packed_varints_past_a_mebibyte_are_counted_exactly(extra: int) -> None:
    """A packed list of 1-byte varints longer than 1 MiB is counted in slices of 1 MiB:
    every byte in exactly one slice, so the mark holds the exact count removed (sanitize
    gives a Constant the shape [count] from it); slices that overlapped or left gaps
    would give another shape."""
    count = (1 << 20) + extra
    attr = text(1, "value_ints") + field(20, 0, varint(7)) + field(8, 2, b"\x01" * count)
    out = parsed(wire.strip_lists(in_node(attr, "Constant"), sanitize.PAYLOAD_LIMIT))
    assert out is not None
    [stripped_attr] = out.graph.node[0].attribute
    assert (stripped_attr.doc_string, list(stripped_attr.ints)) == (f"{wire.MARK}{count - 1}", [0])


@pytest.mark.parametrize("n", [127, 128, 300])
def test_skipped_fields_with_multibyte_lengths_are_stepped_over(n: int) -> None:
    """Fields the walker skips (names, doc strings) of 128 bytes or more have a length of
    two bytes, the first >= 0x80 (the inline one-byte path must not take it): the walk
    stays aligned and reaches the big list behind them."""
    ints = b"".join(field(8, 0, varint(7)) for _ in range(3))
    node = text(3, "n" * n) + text(6, "d" * n) + text(4, "Constant")
    node += field(5, 2, text(1, "value_ints") + ints)
    data = field(2, 2, b"p" * n) + field(7, 2, text(2, "g" * n) + field(1, 2, node))
    assert compare(data, 1) == "rewritten"
    out = parsed(wire.strip_lists(data, 1))
    assert out is not None
    assert (len(out.producer_name), len(out.graph.name), len(out.graph.node[0].name)) == (n, n, n)
    [attr] = out.graph.node[0].attribute
    assert (attr.doc_string, list(attr.ints)) == (wire.MARK + "2", [0])


def unknown_groups(n: int) -> bytes:
    """An unknown field of the model: ``n`` groups nested in one another."""
    body = b""
    for _ in range(n):
        body = varint(95 << 3 | 3) + body + varint(95 << 3 | 4)
    return body


def nested_graphs(levels: int, innermost: bytes) -> bytes:
    """A model whose graph nests ``levels`` If bodies (model 0, graph 1, node 2, attribute
    3, graph 4...): its innermost node is at depth 3 * levels + 2, ``innermost`` in it."""
    node = text(4, "Identity") + innermost
    for _ in range(levels):
        attr = text(1, "then_branch") + field(20, 0, varint(5)) + field(6, 2, field(1, 2, node))
        node = text(4, "If") + field(5, 2, attr)
    return field(7, 2, field(1, 2, node))


def test_nesting_up_to_the_walkers_depth_limit_is_read() -> None:
    """The documented bound (_MAX_DEPTH) is exact, for groups and for walked messages:
    nested to it, the walker reads the file (protobuf's own limit is lower: it refuses
    both, this pins the walker's); one deeper, WireError (not Python's recursion limit)."""
    at_limit = unknown_groups(wire._MAX_DEPTH + 1)  # depths 0 .. _MAX_DEPTH
    assert wire.strip_lists(at_limit, 0) is at_limit
    with pytest.raises(wire.WireError, match="nested too deeply"):
        wire.strip_lists(unknown_groups(wire._MAX_DEPTH + 2), 0)
    levels, rest = divmod(wire._MAX_DEPTH - 2, 3)
    assert rest == 0  # a node at exactly _MAX_DEPTH: the attribute inside it is one deeper
    at_limit = nested_graphs(levels, b"")
    assert wire.strip_lists(at_limit, 0) is at_limit
    with pytest.raises(wire.WireError, match="nested too deeply"):
        wire.strip_lists(nested_graphs(levels, field(5, 2, PADS)), 0)


def test_a_caller_deep_in_its_stack_gets_wire_error_not_recursion_error() -> None:
    """The walker's own bound is below Python's recursion limit only for a caller near the
    top of its stack; deeper in it, the limit strikes first and is still a WireError."""
    data = nested_graphs(40, b"")  # 122 messages deep: under _MAX_DEPTH
    assert wire.strip_lists(data, 0) is data
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack()) + 100)
    try:
        with pytest.raises(wire.WireError, match="nested too deeply"):
            wire.strip_lists(data, 0)
    finally:
        sys.setrecursionlimit(limit)
