"""Wire-level pre-pass: long attribute lists dropped before protobuf parses the file.

protobuf's parse of a repeated scalar field costs more than the file: an
int64 written as a 1-byte varint becomes 8 bytes, an unpacked float (5 bytes)
4 bytes plus the arena's doubling, and all of it is allocated before the
checker can clear it (sanitize.py). This module walks the file's bytes along
the paths sanitize.strip_payloads walks — ``ModelProto.graph`` and
``functions[].node``, ``GraphProto.node``, ``NodeProto.attribute``, and the
nested graphs of an attribute (``g`` when its type is GRAPH, ``graphs`` when
GRAPHS) — and, in an attribute whose ``floats`` + ``ints`` + ``strings``
hold more than ``limit`` elements, removes those three fields and records the
count in the attribute's ``doc_string`` (:data:`MARK` + decimal count), fixing
every enclosing length prefix. Every attribute ``doc_string`` on those paths
is dropped, so a mark can only come from this pass (sanitize reads it only
when told the bytes went through here; it clears attribute doc strings anyway).

Contract: for bytes ``data`` that protobuf parses, ``strip_lists(data, limit)``
returns bytes that protobuf parses, and sanitize.strip_payloads gives the same
model from both (tests/checker/test_wire.py). Only bytes protobuf would check
the same way are dropped: the removed list elements are validated as upb
validates them (varints of at most 10 bytes, packed floats a multiple of 4
bytes, lengths in bounds). Anything the walker does not accept raises
:class:`WireError`; the caller then parses the original bytes (today's path,
same verdict or the same read error). Fields with a wire type their schema
does not give are unknown fields to protobuf: kept as they are. Stdlib only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

MARK = "sonnx-mul:lists-removed:"
"""Prefix of the doc_string this pass gives an attribute whose lists it removed."""

_Piece = bytes | memoryview
_MAX_DEPTH = 200  # messages; protobuf refuses deeper files (its limit is 100) anyway

# Field numbers of onnx.proto (pinned against onnx's descriptors in tests/checker/test_wire.py).
MODEL_GRAPH, MODEL_FUNCTIONS = 7, 25
GRAPH_NODE = 1
FUNCTION_NODE = 7
NODE_ATTRIBUTE = 5
ATTR_FLOATS, ATTR_INTS, ATTR_STRINGS = 7, 8, 9
ATTR_G, ATTR_GRAPHS, ATTR_DOC, ATTR_TYPE = 6, 11, 13, 20
TYPE_GRAPH, TYPE_GRAPHS = 5, 10
TYPE_VALUES = range(15)  # AttributeType: proto2 closed enum, another value is an unknown field

_HIGH = bytes(range(0x80, 0x100))
_CHUNK = 1 << 16
# Runs of unpacked elements, matched in C (possessive: no backtracking state kept).
_UNPACKED_INTS = re.compile(rb"(?:\x40[\x80-\xff]{0,9}[\x00-\x7f]){1,%d}+" % _CHUNK)
_LONG_VARINT = re.compile(rb"[\x80-\xff]{10}")


_CHILDREN = {  # the message fields walked, by message: field number -> its message
    "model": {MODEL_GRAPH: "graph", MODEL_FUNCTIONS: "function"},
    "graph": {GRAPH_NODE: "node"},
    "function": {FUNCTION_NODE: "node"},
    "node": {NODE_ATTRIBUTE: "attribute"},
}


class WireError(ValueError):
    """The bytes are not a protobuf message this walker reads: parse them as they are."""


def _varint(data: bytes | bytearray, pos: int, end: int) -> tuple[int, int]:
    """A varint at ``pos`` (at most 10 bytes, as upb reads it): (value, next position)."""
    if pos < end and data[pos] < 0x80:  # most tags and lengths: one byte
        return data[pos], pos + 1
    value = shift = 0
    for i in range(pos, min(pos + 10, end)):
        byte = data[i]
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value & 0xFFFFFFFFFFFFFFFF, i + 1
        shift += 7
    raise WireError("malformed varint")


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _low_bytes(data: bytes | bytearray, start: int, end: int) -> int:
    """Bytes below 0x80 in data[start:end]: one per varint of a well-formed run."""
    count = 0
    for a in range(start, end, 1 << 20):
        b = min(a + (1 << 20), end)
        count += (b - a) - len(bytes(data[a:b]).translate(None, bytes(range(0x80))))
    return count


def _skip(data: bytes | bytearray, pos: int, end: int, tag: int, depth: int) -> int:
    """The position after a field whose tag was read (upb's checks on unknown fields)."""
    wire = tag & 7
    if wire == 0:
        return _varint(data, pos, end)[1]
    if wire in (1, 5):
        nxt = pos + (8 if wire == 1 else 4)
    elif wire == 2:
        length, pos = _varint(data, pos, end)
        nxt = pos + length
    elif wire == 3:  # a group: fields up to the matching end-group tag
        if depth > _MAX_DEPTH:
            raise WireError("nested too deeply")
        while True:
            inner, pos = _tag(data, pos, end)
            if inner & 7 == 4:
                if inner >> 3 != tag >> 3:
                    raise WireError("unmatched end-group")
                return pos
            pos = _skip(data, pos, end, inner, depth + 1)
    else:
        raise WireError(f"wire type {wire}")
    if nxt > end:
        raise WireError("field past the end of its message")
    return nxt


def _tag(data: bytes | bytearray, pos: int, end: int) -> tuple[int, int]:
    if pos >= end:
        raise WireError("truncated message")
    tag = data[pos]
    if 8 <= tag < 0x80:  # fields 1 to 15: one byte, never field 0
        return tag, pos + 1
    tag, pos = _varint(data, pos, end)
    if tag >> 3 == 0 or tag > 0xFFFFFFFF:
        raise WireError("invalid tag")
    return tag, pos


class _Rewrite:
    """Edits of one message: spans of the original replaced by pieces (sorted, disjoint)."""

    def __init__(self) -> None:
        self.edits: list[tuple[int, int, Sequence[_Piece]]] = []

    def assemble(self, view: memoryview, start: int, end: int) -> tuple[list[_Piece], int]:
        pieces: list[_Piece] = []
        pos = start
        for a, b, new in self.edits:
            if a > pos:
                pieces.append(view[pos:a])
            pieces.extend(new)
            pos = b
        if end > pos:
            pieces.append(view[pos:end])
        return pieces, sum(len(p) for p in pieces)


class _Walker:
    def __init__(self, data: bytes | bytearray, limit: int) -> None:
        self.data, self.limit, self.view = data, limit, memoryview(data)

    def message(self, kind: str, start: int, end: int, depth: int) -> list[_Piece] | None:
        """The new pieces of the message at data[start:end], or None if unchanged."""
        if depth > _MAX_DEPTH:
            raise WireError("nested too deeply")
        if kind == "attribute":
            return self.attribute(start, end, depth)
        children = _CHILDREN[kind]
        edits = _Rewrite()
        data, pos = self.data, start
        while pos < end:
            tag_at = pos
            tag, pos = _tag(data, pos, end)
            if tag & 7 != 2:
                pos = _skip(data, pos, end, tag, depth)
                continue
            child = children.get(tag >> 3)
            if child is not None:
                pos = self.child(edits, child, tag_at, pos, end, depth)
                continue
            if pos < end and data[pos] < 0x80:  # a short field skipped inline (the hot path)
                pos += 1 + data[pos]
            else:
                length, pos = _varint(data, pos, end)
                pos += length
            if pos > end:
                raise WireError("field past the end of its message")
        return self.finish(edits, start, end)

    def child(self, edits: _Rewrite, kind: str, tag_at: int, pos: int, end: int, depth: int) -> int:
        """Walk the length-delimited child at ``pos``; record its new bytes if changed."""
        length, body = _varint(self.data, pos, end)
        stop = body + length
        if stop > end:
            raise WireError("field past the end of its message")
        new = self.message(kind, body, stop, depth + 1)
        if new is not None:
            size = sum(len(p) for p in new)
            edits.edits.append((tag_at, stop, [self.view[tag_at:pos], _encode_varint(size), *new]))
        return stop

    def finish(self, edits: _Rewrite, start: int, end: int) -> list[_Piece] | None:
        return edits.assemble(self.view, start, end)[0] if edits.edits else None

    def attribute(self, start: int, end: int, depth: int) -> list[_Piece] | None:
        data = self.data
        lists: list[tuple[int, int]] = []  # spans of floats/ints/strings fields
        dropped: list[tuple[int, int]] = []  # doc strings
        graphs: dict[int, list[tuple[int, int]]] = {ATTR_G: [], ATTR_GRAPHS: []}
        count, kind, pos = 0, 0, start
        while pos < end:
            tag_at = pos
            tag, pos = _tag(data, pos, end)
            field, wire = tag >> 3, tag & 7
            if (field, wire) == (ATTR_INTS, 0):
                run = _UNPACKED_INTS.match(data, tag_at, end)
                if run is None:  # a varint longer than 10 bytes: upb refuses it too
                    raise WireError("malformed varint")
                pos = run.end()
                count += _low_bytes(data, tag_at, pos) // 2  # the tag and the last byte
            elif (field, wire) == (ATTR_FLOATS, 5):
                pos = self.floats_run(tag_at, end)
                count += (pos - tag_at) // 5
            elif (field, wire) == (ATTR_STRINGS, 2):
                pos, n = self.strings_run(tag_at, end)
                count += n
            elif wire == 2 and field in (ATTR_INTS, ATTR_FLOATS, ATTR_DOC):
                length, body = _varint(data, pos, end)
                pos = body + length
                if pos > end:
                    raise WireError("field past the end of its message")
                if field == ATTR_INTS:  # packed varints: each ends with one byte < 0x80
                    if length and (data[pos - 1] >= 0x80 or _LONG_VARINT.search(data, body, pos)):
                        raise WireError("malformed packed varint")
                    count += _low_bytes(data, body, pos)
                elif field == ATTR_FLOATS:
                    if length % 4:
                        raise WireError("packed floats not a multiple of 4 bytes")
                    count += length // 4
                if field == ATTR_DOC:
                    dropped.append((tag_at, pos))
                    continue
            elif (field, wire) == (ATTR_TYPE, 0):
                value, pos = _varint(data, pos, end)
                value &= 0xFFFFFFFF  # an int32 enum, as upb truncates it
                if value in TYPE_VALUES:
                    kind = value
                continue
            elif field in graphs and wire == 2:
                length, body = _varint(data, pos, end)
                graphs[field].append((tag_at, pos))
                pos = body + length
                if pos > end:
                    raise WireError("field past the end of its message")
                continue
            else:
                pos = _skip(data, pos, end, tag, depth)
                continue
            if lists and lists[-1][1] == tag_at:
                lists[-1] = (lists[-1][0], pos)
            else:
                lists.append((tag_at, pos))
        edits = _Rewrite()
        removed = dropped + (lists if count > self.limit else [])
        edits.edits = [(a, b, ()) for a, b in removed]
        walked = {TYPE_GRAPH: ATTR_G, TYPE_GRAPHS: ATTR_GRAPHS}.get(kind)
        if walked is not None:
            for tag_at, pos in graphs[walked]:
                self.child(edits, "graph", tag_at, pos, end, depth)
        edits.edits.sort(key=lambda e: e[0])
        if count > self.limit:
            mark = f"{MARK}{count}".encode()
            edits.edits.append((end, end, [bytes([ATTR_DOC << 3 | 2, len(mark)]), mark]))
        return self.finish(edits, start, end)

    def strings_run(self, start: int, end: int) -> tuple[int, int]:
        """The end of the run of strings (tag 0x4a, a length, the bytes) starting at start,
        and their number (a tight loop: a file may hold millions of empty strings)."""
        data, pos, n = self.data, start, 0
        while pos < end and data[pos] == 0x4A:
            if pos + 1 < end and data[pos + 1] < 0x80:
                pos += 2 + data[pos + 1]
            else:
                length, body = _varint(data, pos + 1, end)
                pos = body + length
            n += 1
        if pos > end:
            raise WireError("field past the end of its message")
        return pos, n

    def floats_run(self, start: int, end: int) -> int:
        """The end of the run of unpacked floats (tag 0x3d and 4 bytes) starting at start."""
        pos = start
        while True:
            k = min(_CHUNK, (end - pos) // 5)
            tags = bytes(self.view[pos : pos + 5 * k : 5])
            n = k - len(tags.lstrip(b"\x3d"))
            pos += 5 * n
            if n < k or k == 0:
                break
        if pos == start:  # a float cut short by the end of the message
            raise WireError("field past the end of its message")
        return pos


def strip_lists(data: bytes | bytearray, limit: int) -> bytes | bytearray:
    """``data`` with the attribute lists longer than ``limit`` removed (module docstring);
    ``data`` itself when nothing was removed. WireError when the walker cannot read it."""
    try:
        pieces = _Walker(data, limit).message("model", 0, len(data), 0)
    except RecursionError:
        raise WireError("nested too deeply") from None
    return data if pieces is None else b"".join(pieces)
