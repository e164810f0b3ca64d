"""Wire-level pre-pass: long lists dropped before protobuf parses the file.

protobuf's parse of a repeated field costs more than the file: an int64
written as a 1-byte varint becomes 8 bytes, an empty string (2 bytes) a
32-byte object, an unpacked float (5 bytes) 4 bytes plus the arena's
doubling, and all of it is allocated before the checker can clear it
(sanitize.py). This module walks the file's bytes along the paths
sanitize.strip_payloads walks — ``ModelProto.graph`` and ``functions[].node``,
``GraphProto.node``, ``initializer`` and ``sparse_initializer``,
``NodeProto.attribute``, an attribute's tensors (``t``, ``tensors``,
``sparse_tensor``, ``sparse_tensors``: values and indices) and nested graphs
(``g`` when its type is GRAPH, ``graphs`` when GRAPHS) — and removes, fixing
every enclosing length prefix:

* in an attribute whose ``floats`` + ``ints`` + ``strings`` hold more than
  ``limit`` elements, those three fields, but one zero element of each that
  held data; the count removed goes into the attribute's ``doc_string``
  (:data:`MARK` + decimal count);
* in a tensor one of whose repeated payload fields holds more than ``limit``
  elements, every payload field (``raw_data`` too, as sanitize clears them),
  but one zero element of each that held data (an empty or one-byte
  ``raw_data``); the tensor's ``doc_string`` gets the mark and the count
  removed per field (``MARK4=70000,7=3``).

The zeros keep what onnx.checker judges of a payload: which fields hold data
(type against field, one value field only); the counts, whether the one the
type names holds enough for the shape (sanitize makes the same placeholders of
an original it clears, and validity's skeleton hands them to onnx.checker), so
a removed list never hides an invalid model. Protobuf merges the repeats of a
singular field: the zeros survive the merge; two marks of one merged tensor
would not (the last doc string wins), so such a file is refused
(:class:`UnverifiableError`).

Every attribute and tensor ``doc_string`` on those paths is dropped, so a mark
can only come from this pass (sanitize reads marks only when told the bytes
went through here; it overwrites those doc strings anyway). A condition that
merging could undo (``raw_data`` is last-wins, dims may be split over two
occurrences of a singular tensor field) is left to sanitize: a count of
repeated elements only grows when protobuf merges.

Bounded work and memory: one walk, each attribute and tensor read twice (count,
then splice), nothing stored per field; a run of fixed-size values is read in
chunks that start at one value. The list elements left for protobuf (each
under the limit) are counted over the whole file, merged repeats included:
past :func:`kept_budget` of the file's size the file is refused
(:class:`UnverifiableError`) rather than expanded.

Contract: for bytes ``data``, protobuf parses ``strip_lists(data, limit)``
exactly when it parses ``data``, and sanitize.strip_payloads gives the same
model from both (tests/checker/test_wire_exactness.py). The removed elements are
validated as upb validates them (varints of at most 10 bytes, packed
fixed-size values a multiple of their size, lengths in bounds). Anything the
walker does not accept raises :class:`WireError`; the caller then parses the
original bytes (the same verdict or the same read error).
Fields with a wire type their schema does not give are unknown fields to
protobuf: kept as they are. Stdlib only.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType as Frozen  # module state stays immutable (test_concurrency)

MARK = "sonnx-mul:lists-removed:"
"""Prefix of the doc_string this pass gives an attribute or tensor whose lists it removed
(followed by the number of elements removed from an attribute; 0 for a tensor)."""

_Piece = bytes | memoryview
_MAX_DEPTH = 200  # messages; protobuf refuses deeper files (its limit is 100) anyway

# Field numbers of onnx.proto (pinned against onnx's descriptors in
# tests/checker/test_wire_exactness.py).
MODEL_GRAPH, MODEL_FUNCTIONS = 7, 25
GRAPH_NODE, GRAPH_INITIALIZER, GRAPH_SPARSE_INITIALIZER = 1, 5, 15
FUNCTION_NODE = 7
NODE_ATTRIBUTE = 5
ATTR_FLOATS, ATTR_INTS, ATTR_STRINGS = 7, 8, 9
ATTR_G, ATTR_GRAPHS, ATTR_DOC, ATTR_TYPE = 6, 11, 13, 20
ATTR_T, ATTR_TENSORS, ATTR_SPARSE_TENSOR, ATTR_SPARSE_TENSORS = 5, 10, 22, 23
TYPE_GRAPH, TYPE_GRAPHS = 5, 10
TYPE_VALUES = range(15)  # AttributeType: proto2 closed enum, another value is an unknown field
TENSOR_LISTS: Mapping[str, tuple[int, str]] = Frozen({
    # field -> how its elements are written ("raw": removed with them, not counted)
    "float_data": (4, "fixed32"), "int32_data": (5, "varint"), "string_data": (6, "bytes"),
    "int64_data": (7, "varint"), "raw_data": (9, "raw"), "double_data": (10, "fixed64"),
    "uint64_data": (11, "varint"),
})  # fmt: skip
TENSOR_DOC = 12
SPARSE_VALUES, SPARSE_INDICES = 1, 2

KEPT_ELEMENT_COST = 40
"""Bytes of memory a list element protobuf parses may cost a check (its value, the
repeated field's doubling, the copies made for onnx.checker and shape inference:
35 measured for packed 1-byte int64 varints, the worst expansion)."""
KEPT_ALLOWANCE = 16 << 20
"""With the file's own size, what the kept list elements may cost in all (the memory
bound: 2x the file + 24 MB)."""

_CHUNK = 1 << 16
_FIRST_CHUNK = 1
_WIRE = Frozen({"varint": 0, "fixed32": 5, "fixed64": 1, "bytes": 2, "raw": 2})
# Runs of unpacked varints with a one-byte tag, matched in C (possessive: no backtracking).
_RUN = rb"(?:%s[\x80-\xff]{0,9}[\x00-\x7f]){1,%d}+"  # a tag byte, then a varint
_UNPACKED = Frozen({
    tag: re.compile(_RUN % (re.escape(bytes([tag])), _CHUNK))  # 0x28 is "(": escaped
    for tag in (ATTR_INTS << 3, 5 << 3, 7 << 3, 11 << 3)
})  # fmt: skip
_LOW = bytes(range(0x80))
_LONG_VARINT = re.compile(rb"[\x80-\xff]{10}")

_CHILDREN: Mapping[str, Mapping[int, str]] = Frozen({
    # the message fields walked, by message: field number -> its message
    "model": Frozen({MODEL_GRAPH: "graph", MODEL_FUNCTIONS: "function"}),
    "graph": Frozen({GRAPH_NODE: "node", GRAPH_INITIALIZER: "tensor",
                     GRAPH_SPARSE_INITIALIZER: "sparse"}),
    "function": Frozen({FUNCTION_NODE: "node"}),
    "node": Frozen({NODE_ATTRIBUTE: "attribute"}),
    "sparse": Frozen({SPARSE_VALUES: "tensor", SPARSE_INDICES: "tensor"}),
})  # fmt: skip
_PAYLOADS: Mapping[str, tuple[Mapping[int, str], int, Mapping[int, str]]] = Frozen({
    # kind -> (list fields and their forms, doc string field, nested messages)
    "attribute": (
        Frozen({ATTR_FLOATS: "fixed32", ATTR_INTS: "varint", ATTR_STRINGS: "bytes"}),
        ATTR_DOC,
        Frozen({ATTR_G: "graph", ATTR_GRAPHS: "graph", ATTR_T: "tensor", ATTR_TENSORS: "tensor",
                ATTR_SPARSE_TENSOR: "sparse", ATTR_SPARSE_TENSORS: "sparse"}),
    ),
    "tensor": (Frozen(dict(TENSOR_LISTS.values())), TENSOR_DOC, Frozen({})),
})  # fmt: skip


def _key(field: int, wire: str) -> bytes:
    return _encode_varint(field << 3 | _WIRE[wire])


_PLACEHOLDERS: Mapping[str, Callable[..., bytes]] = Frozen({
    # the one element a removed list leaves, by form: the zero value of its type
    "varint": lambda f: _key(f, "varint") + b"\x00",
    "fixed32": lambda f: _key(f, "fixed32") + bytes(4),
    "fixed64": lambda f: _key(f, "fixed64") + bytes(8),
    "bytes": lambda f: _key(f, "bytes") + b"\x00",
    # raw_data is last-wins: empty when the last one was, else one zero byte
    "raw": lambda f, filled: _key(f, "raw") + (b"\x01\x00" if filled else b"\x00"),
})  # fmt: skip


class WireError(ValueError):
    """The bytes are not a protobuf message this walker reads: parse them as they are."""


class UnverifiableError(ValueError):
    """The file cannot be reduced without hiding what its verdict depends on, and parsing
    it as it is would break the memory bound: the checker refuses it (named reason)."""


Marks = frozenset[tuple[int, ...]]
"""Paths, through singular message fields, to the tensors of a message that got a mark."""
_NO_MARKS: Marks = frozenset()
_SINGULAR: Mapping[str, frozenset[int]] = Frozen({
    # message fields protobuf merges when they occur twice, by message
    "sparse": frozenset({SPARSE_VALUES, SPARSE_INDICES}),
    "attribute": frozenset({ATTR_T, ATTR_SPARSE_TENSOR}),
})  # fmt: skip


def _merge(seen: set[tuple[int, ...]], field: int, marks: Marks) -> None:
    """Add a child's marks under ``field``; two marks of one merged tensor: refused, as
    protobuf keeps the last doc string only, so the first mark's counts would be lost."""
    for path in marks:
        at = (field, *path)
        if at in seen:
            raise UnverifiableError(
                "a tensor field that occurs more than once (protobuf merges the occurrences) "
                "holds lists over the limit in two of them"
            )
        seen.add(at)


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
    if end - start == 2:  # a run of one element with a one-byte value: interleaved fields
        return 2 - (data[start] >= 0x80) - (data[start + 1] >= 0x80)
    count = 0
    for a in range(start, end, 1 << 20):
        b = min(a + (1 << 20), end)
        count += (b - a) - len(bytes(data[a:b]).translate(None, _LOW))
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

    def assemble(self, view: memoryview, start: int, end: int) -> list[_Piece]:
        pieces: list[_Piece] = []
        pos = start
        for a, b, new in self.edits:
            if a > pos:
                pieces.append(view[pos:a])
            pieces.extend(new)
            pos = b
        if end > pos:
            pieces.append(view[pos:end])
        return pieces


class _Splice:
    """The new bytes of one message, built in one pass over its fields: kept bytes are
    copied when short and referenced when long, so neither the pieces nor the copies
    outgrow the message (a million fields removed between kept ones cost no list)."""

    _SHORT = 4096

    def __init__(self, view: memoryview, start: int) -> None:
        self.view, self.pending = view, start  # kept bytes from ``pending`` on
        self.pieces: list[_Piece] = []
        self.own = bytearray()

    def _keep_to(self, at: int) -> None:
        if at - self.pending >= self._SHORT:
            self._flush()
            self.pieces.append(self.view[self.pending : at])
        else:
            self.own += self.view[self.pending : at]
        self.pending = at

    def _flush(self) -> None:
        if self.own:
            self.pieces.append(bytes(self.own))
            self.own = bytearray()

    def drop(self, start: int, stop: int) -> None:
        self._keep_to(start)
        self.pending = stop

    def replace(self, start: int, stop: int, new: list[_Piece]) -> None:
        self._keep_to(start)
        self._flush()
        self.pieces += new
        self.pending = stop

    def finish(self, end: int) -> list[_Piece]:
        self._keep_to(end)
        self._flush()
        return self.pieces


class _Walker:
    def __init__(self, data: bytes | bytearray, limit: int, budget: int) -> None:
        self.data, self.limit, self.view = data, limit, memoryview(data)
        self.budget = budget
        self.kept = 0  # list elements left for protobuf to parse
        self.visited = 0  # fixed-size values the run reader looked at (its work)

    def message(
        self, kind: str, start: int, end: int, depth: int
    ) -> tuple[list[_Piece] | None, Marks]:
        """The new pieces of the message at data[start:end] (None if unchanged), and
        the marks of the tensors it reaches through singular fields."""
        if depth > _MAX_DEPTH:
            raise WireError("nested too deeply")
        if kind in _PAYLOADS:
            return self.payload(kind, start, end, depth)
        children = _CHILDREN[kind]
        singular = _SINGULAR.get(kind, frozenset())
        seen: set[tuple[int, ...]] = set()
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
                stop, new, marks = self.child(child, pos, end, depth)
                if tag >> 3 in singular:
                    _merge(seen, tag >> 3, marks)
                if new is not None:
                    edits.edits.append((tag_at, stop, self.framed(tag_at, pos, new)))
                pos = stop
                continue
            if pos < end and data[pos] < 0x80:  # a short field skipped inline (the hot path)
                pos += 1 + data[pos]
            else:
                length, pos = _varint(data, pos, end)
                pos += length
            if pos > end:
                raise WireError("field past the end of its message")
        return self.finish(edits, start, end), frozenset(seen)

    def child(
        self, kind: str, pos: int, end: int, depth: int
    ) -> tuple[int, list[_Piece] | None, Marks]:
        """Walk the length-delimited child whose length is at ``pos``: its end, its new
        pieces (None if unchanged) and its marks."""
        length, body = _varint(self.data, pos, end)
        stop = body + length
        if stop > end:
            raise WireError("field past the end of its message")
        new, marks = self.message(kind, body, stop, depth + 1)
        return stop, new, marks

    def framed(self, tag_at: int, length_at: int, new: list[_Piece]) -> list[_Piece]:
        """A changed child as a field again: its tag, its new length, its pieces."""
        size = sum(len(p) for p in new)
        return [self.view[tag_at:length_at], _encode_varint(size), *new]

    def finish(self, edits: _Rewrite, start: int, end: int) -> list[_Piece] | None:
        return edits.assemble(self.view, start, end) if edits.edits else None

    def payload(
        self, kind: str, start: int, end: int, depth: int
    ) -> tuple[list[_Piece] | None, Marks]:
        """An attribute or a tensor: its list fields counted (and dropped when over the
        limit), its doc string dropped, its nested graphs and tensors walked.

        Two passes over its fields, nothing stored per field: the first counts (and
        finds the attribute's type, which says whether its graphs are walked), the
        second splices (fields interleaved a million times cost no memory)."""
        lists, doc_field, children = _PAYLOADS[kind]
        lists_of = dict(lists)  # a dict's lookups are faster than the frozen mapping's
        data = self.data
        counts: dict[int, int] = {}
        attr_type, pos, changed = 0, start, False
        raw_last = -1  # the length of the last raw_data field; -1: none
        while pos < end:
            tag_at = pos
            tag = data[pos]
            if 8 <= tag < 0x80:  # _tag's one-byte case, inline: fields interleaved a
                pos += 1  # million times make this loop the walk's cost
            else:
                tag, pos = _tag(data, pos, end)
            field, wire = tag >> 3, tag & 7
            form = lists_of.get(field)
            if form is None and wire == 2 and pos < end and data[pos] < 0x80:
                # a short field that is no list (a name, a doc string): _skip's case inline
                changed |= field == doc_field
                pos += 1 + data[pos]
                if pos > end:
                    raise WireError("field past the end of its message")
            elif (
                form == "varint" and wire == 0 and pos == tag_at + 1 and pos < end
                and data[pos] < 0x80 and (pos + 1 == end or data[pos + 1] != tag)
            ):  # fmt: skip
                # one unpacked 1-byte varint, not followed by its tag: a run of one, which
                # elements() reads as (pos + 1, 1), inline
                pos += 1
                counts[field] = counts.get(field, 0) + 1
            elif form == "raw" and wire == 2:  # singular bytes: the last one is the value
                pos, raw_last = self.raw_end(pos, end)
            elif form is not None and (wire == 2 or wire == _WIRE[form]):
                pos, n = self.elements(form, wire, tag_at, pos, end)
                counts[field] = counts.get(field, 0) + n
            elif kind == "attribute" and (field, wire) == (ATTR_TYPE, 0):
                value, pos = _varint(data, pos, end)
                value &= 0xFFFFFFFF  # an int32 enum, as upb truncates it
                if value in TYPE_VALUES:
                    attr_type = value
            else:
                changed |= (field, wire) == (doc_field, 2)
                pos = _skip(data, pos, end, tag, depth)
        count = sum(counts.get(f, 0) for f in lists_of) if kind == "attribute" else 0
        big = (
            count > self.limit
            if kind == "attribute"
            else any(n > self.limit for f, n in counts.items() if lists_of[f] != "raw")
        )
        if not big:
            self.keep(sum(counts.get(f, 0) for f in lists_of if lists_of[f] != "raw"))
        changed |= big
        graphs = {TYPE_GRAPH: ATTR_G, TYPE_GRAPHS: ATTR_GRAPHS}.get(attr_type)
        seen: set[tuple[int, ...]] = set()
        splice = _Splice(self.view, start)
        pos = start
        while pos < end:
            tag_at = pos
            tag = data[pos]
            if 8 <= tag < 0x80:  # as in the first pass
                pos += 1
            else:
                tag, pos = _tag(data, pos, end)
            field, wire = tag >> 3, tag & 7
            form = lists_of.get(field)
            if (
                form is None and wire == 2 and field != doc_field and field not in children
                and pos < end and data[pos] < 0x80
            ):  # fmt: skip
                pos += 1 + data[pos]  # a short field kept as it is (checked in the first pass)
            elif (
                form == "varint" and wire == 0 and pos == tag_at + 1 and pos < end
                and data[pos] < 0x80 and (pos + 1 == end or data[pos + 1] != tag)
            ):  # fmt: skip
                pos += 1  # as in the first pass
                if big:
                    splice.drop(tag_at, pos)
            elif form == "raw" and wire == 2:
                pos = self.raw_end(pos, end)[0]
                if big:
                    splice.drop(tag_at, pos)
            elif form is not None and (wire == 2 or wire == _WIRE[form]):
                pos = self.elements(form, wire, tag_at, pos, end)[0]
                if big:
                    splice.drop(tag_at, pos)
            elif (field, wire) == (doc_field, 2):
                pos = _skip(data, pos, end, tag, depth)
                splice.drop(tag_at, pos)
            elif (
                wire == 2 and field in children and (children[field] != "graph" or field == graphs)
            ):
                # sanitize walks an attribute's graphs by its type, its tensors whatever
                # the type
                stop, new, marks = self.child(children[field], pos, end, depth)
                if field in _SINGULAR["attribute"]:
                    _merge(seen, field, marks)
                if new is not None:
                    changed = True
                    splice.replace(tag_at, stop, self.framed(tag_at, pos, new))
                pos = stop
            else:
                pos = _skip(data, pos, end, tag, depth)
        if not changed:
            return None, _NO_MARKS
        pieces = splice.finish(end)
        if big:
            # One element of each list present stays: which fields hold data is what
            # onnx.checker judges (type against field, one value field), and protobuf's
            # merge of repeated occurrences keeps it (sanitize then makes the same
            # placeholders of the original's lists).
            kept = [f for f in lists_of if counts.get(f, 0) > 0]
            pieces += [_PLACEHOLDERS[lists_of[f]](f) for f in kept]
            if raw_last >= 0:
                pieces.append(_PLACEHOLDERS["raw"](TENSOR_LISTS["raw_data"][0], raw_last > 0))
            if kind == "attribute":
                mark = f"{MARK}{count - len(kept)}".encode()
            else:  # per field: sanitize compares the counts with the tensor's shape
                removed = (f"{f}={counts[f] - 1}" for f in kept)
                mark = f"{MARK}{','.join(removed)}".encode()
            pieces.append(_encode_varint(doc_field << 3 | 2) + _encode_varint(len(mark)) + mark)
        marks = frozenset({()}) if big and kind == "tensor" else _NO_MARKS
        return pieces, marks

    def raw_end(self, pos: int, end: int) -> tuple[int, int]:
        """The end of a raw_data field whose tag was read, and its length."""
        length, body = _varint(self.data, pos, end)
        if body + length > end:
            raise WireError("field past the end of its message")
        return body + length, length

    def keep(self, elements: int) -> None:
        """Count list elements protobuf will parse: under the limit one by one, but their sum
        over the file (many lists at the limit, the repeats of a merged tensor) is what
        costs memory, so it is bounded too."""
        self.kept += elements
        if self.kept > self.budget:
            raise UnverifiableError(
                f"its lists under the limit of {self.limit} elements hold more than "
                f"{self.budget} elements in total (the bound for a file of this size: "
                f"(file + {KEPT_ALLOWANCE >> 20} MiB) / {KEPT_ELEMENT_COST} bytes)"
            )

    def elements(self, form: str, wire: int, tag_at: int, pos: int, end: int) -> tuple[int, int]:
        """The end of the list elements at tag_at (a run of unpacked ones when the tag is
        one byte, else one field) and how many protobuf would read there."""
        data = self.data
        tag = data[tag_at]
        single = pos == tag_at + 1
        if wire == 2:
            if form == "bytes":
                if single:
                    return self.bytes_run(tag, tag_at, end)
                return _skip(data, pos, end, 2, 0), 1
            length, body = _varint(data, pos, end)
            stop = body + length
            if stop > end:
                raise WireError("field past the end of its message")
            if form == "varint":  # packed: each varint ends with one byte < 0x80
                if length and (data[stop - 1] >= 0x80 or _LONG_VARINT.search(data, body, stop)):
                    raise WireError("malformed packed varint")
                return stop, _low_bytes(data, body, stop)
            size = 4 if form == "fixed32" else 8
            if length % size:
                raise WireError("packed fixed-size values not a multiple of their size")
            return stop, length // size
        if not single:  # a tag written in more than one byte: one element
            return _skip(data, pos, end, wire, 0), 1
        if form == "varint":
            run = _UNPACKED[tag].match(data, tag_at, end)
            if run is None:  # a varint longer than 10 bytes: upb refuses it too
                raise WireError("malformed varint")
            return run.end(), _low_bytes(data, tag_at, run.end()) // 2  # tag and last byte
        return self.fixed_run(tag, 5 if form == "fixed32" else 9, tag_at, end)

    def bytes_run(self, tag: int, start: int, end: int) -> tuple[int, int]:
        """The end of the run of strings (one tag byte, a length, the bytes) starting at
        start, and their number (a tight loop: a file may hold millions of empty strings)."""
        data, pos, n = self.data, start, 0
        while pos < end and data[pos] == tag:
            if pos + 1 < end and data[pos + 1] < 0x80:
                pos += 2 + data[pos + 1]
            else:
                length, body = _varint(data, pos + 1, end)
                pos = body + length
            n += 1
        if pos > end:
            raise WireError("field past the end of its message")
        return pos, n

    def fixed_run(self, tag: int, size: int, start: int, end: int) -> tuple[int, int]:
        """The end of the run of fixed-size values (one tag byte and size - 1 bytes)
        starting at start, and their number."""
        pos, marker, chunk = start, bytes([tag]), _FIRST_CHUNK
        while True:
            # a chunk that starts small and doubles: a run of one value (fields
            # interleaved) costs a few bytes read, not _CHUNK (the walk stays linear)
            k = min(chunk, (end - pos) // size)
            self.visited += k
            tags = bytes(self.view[pos : pos + size * k : size])
            n = k - len(tags.lstrip(marker))
            pos += size * n
            if n < k or k == 0:
                break
            chunk = min(2 * chunk, _CHUNK)
        if pos == start:  # a value cut short by the end of the message
            raise WireError("field past the end of its message")
        return pos, (pos - start) // size


def kept_budget(size: int) -> int:
    """How many list elements under the limit a file of ``size`` bytes may hold in total."""
    return (size + KEPT_ALLOWANCE) // KEPT_ELEMENT_COST


def strip_lists(
    data: bytes | bytearray, limit: int, budget: int | None = None
) -> bytes | bytearray:
    """``data`` with the lists longer than ``limit`` removed (module docstring);
    ``data`` itself when nothing was removed. WireError when the walker cannot read it;
    UnverifiableError when its lists under the limit hold more than ``budget`` elements
    (default: kept_budget of its size) or a merged tensor would lose a mark."""
    walker = _Walker(data, limit, kept_budget(len(data)) if budget is None else budget)
    try:
        pieces, _ = walker.message("model", 0, len(data), 0)
    except RecursionError:
        raise WireError("nested too deeply") from None
    return data if pieces is None else b"".join(pieces)
