"""Hostile ONNX files, written byte by byte: the one source the tests and the bench share.

The tests of the wire pre-pass (the test_wire_*.py files of tests/checker), of the memory bound
(tests/checker/test_hostile_models.py, tests/checker/test_checker_false_conforms.py) and the
"Hostile files" table of ``make bench`` (benchmarks/checker_hostile.py) build their
files here, so the bench measures the very files the tests judge. A support module,
not a test module: importing it builds nothing (no corpus, no fixture), so the bench
imports no test module.

Contract: every builder is deterministic (the same bytes for the same arguments) and
writes what a hostile writer may, not only what protobuf's writer produces: lists
packed and unpacked, fields interleaved, singular fields repeated, varints longer than
upb reads. ``bench_classes`` names one file per class of the bound for the bench.
"""

from __future__ import annotations

import onnx
from onnx import TensorProto as T
from onnx import helper as h

from models import model, vi

LIMIT = 1 << 16
"""sanitize.PAYLOAD_LIMIT: lists over it are removed by the pre-pass, lists at it kept."""


# ------------------------------------------------------------ a byte-level writer
def varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def field(number: int, wire_type: int, payload: bytes) -> bytes:
    key = varint(number << 3 | wire_type)
    return key + (varint(len(payload)) + payload if wire_type == 2 else payload)


def text(number: int, value: str | bytes) -> bytes:
    return field(number, 2, value.encode() if isinstance(value, str) else value)


LONG_VARINT = b"\xff" * 10 + b"\x01"  # 11 bytes: upb reads at most 10


# ------------------------------------------------------------ graphs of wire bytes
def constant_with(attr_body: bytes, output: str) -> bytes:
    """A Constant node (wire bytes) whose one attribute is ``attr_body``."""
    return field(1, 2, text(4, "Constant") + text(2, output) + field(5, 2, attr_body))


def graph_file(nodes: bytes) -> bytes:
    """A model (IR 8, opset 14) whose graph holds ``nodes`` (wire bytes) and no input."""
    opset = field(8, 2, text(1, "") + field(2, 0, varint(14)))
    return field(1, 0, varint(8)) + opset + field(7, 2, nodes + text(2, "g"))


def value_ints_at(count: int) -> bytes:
    """value_ints of ``count`` 1-byte varints, packed: 1 byte in the file, 8 parsed."""
    return text(1, "value_ints") + field(20, 0, varint(7)) + field(8, 2, b"\x01" * count)


def identity_of_x(attr: bytes) -> bytes:
    """A node ``Big`` of the custom domain ``local`` (no schema: onnx.checker judges no
    attribute of it) reading ``x``, whose one attribute is ``attr`` (wire bytes)."""
    node = text(1, "x") + text(2, "y") + text(4, "Big") + text(7, "local")
    return field(1, 2, node + field(5, 2, attr))


def checked_graph_file(nodes: bytes) -> bytes:
    """A model (IR 8, opset 14, ``local`` 1) with a graph input ``x`` (float [2]),
    ``nodes`` (wire bytes, reading only ``x``) and a Mul of ``x`` and ``x``: one that
    conforms, so a check runs every stage (the pre-pass, parsing, onnx.checker,
    inference, the rules)."""
    mul = field(1, 2, text(1, "x") + text(1, "x") + text(2, "z") + text(4, "Mul"))
    x = vi("x", T.FLOAT, [2]).SerializeToString()
    out = vi("z", T.FLOAT, [2]).SerializeToString()
    graph = nodes + mul + text(2, "g") + field(11, 2, x) + field(12, 2, out)
    opsets = b"".join(
        field(8, 2, text(1, domain) + field(2, 0, varint(version)))
        for domain, version in (("", 14), ("local", 1))
    )
    return field(1, 0, varint(8)) + opsets + field(7, 2, graph)


def interleaved_ints(pairs: int, between: bytes) -> bytes:
    """An attribute ``pads`` (type INTS) whose ints (unpacked, 1-byte) are interleaved
    with ``between`` ``pairs`` times: every element its own field, a run of one."""
    return text(1, "pads") + field(20, 0, varint(7)) + (field(8, 0, b"\x01") + between) * pairs


def interleaved_list_file(size: int) -> bytes:
    """A checkable model of about ``size`` bytes, one Identity whose ``pads`` ints are
    interleaved with its name (5 bytes a pair): the pre-pass's slowest class per byte."""
    pair = len(field(8, 0, b"\x01") + text(1, "p"))
    return checked_graph_file(identity_of_x(interleaved_ints(size // pair, text(1, "p"))))


def merged_tensor_repeats(repeats: int, count: int = LIMIT) -> bytes:
    """A Constant whose ``value`` tensor field occurs ``repeats`` times, ``count`` int64
    each (protobuf merges the repeats into one list of ``repeats * count``)."""
    repeat = field(5, 2, field(2, 0, varint(7)) + field(7, 2, b"\x01" * count))
    return constant_with(text(1, "value") + field(20, 0, varint(4)) + repeat * repeats, "c")


def lists_at_the_limit(constants: int) -> bytes:
    """``constants`` Constants, each with value_ints of exactly LIMIT elements (kept)."""
    return b"".join(constant_with(value_ints_at(LIMIT), f"c{i}") for i in range(constants))


def long_varint_file() -> bytes:
    """A list over the limit followed by an 11-byte varint: the walker refuses it (upb
    reads at most 10 bytes), the file is parsed as it is and protobuf refuses it."""
    attr = text(1, "pads") + field(20, 0, varint(7)) + field(8, 2, b"\x01" * (LIMIT + 1))
    attr += b"\x40" + LONG_VARINT
    return checked_graph_file(identity_of_x(attr))


# ------------------------------------------------------------ deep nesting
def nested_if_bytes(depth: int) -> bytes:
    """A serialized model: ``depth`` If nodes nested in then-branches around a bad Mul.

    Built on the wire format directly: the protobuf runtime refuses to build
    (or copy) messages this deep.
    """
    # GraphProto: node=1, name=2, output=12; NodeProto: input=1, output=2, name=3,
    # op_type=4, attribute=5; AttributeProto: name=1, g=6, type=20 (GRAPH=5).
    out_t = field(12, 2, text(1, "t"))
    mul = text(1, "x") + text(1, "y") + text(2, "t") + text(3, "deep") + text(4, "Mul")
    graph = field(1, 2, mul) + text(2, "g") + out_t
    identity = text(1, "y") + text(2, "e") + text(4, "Identity")
    other = field(1, 2, identity) + text(2, "e") + field(12, 2, text(1, "e"))  # onnx.checker
    otherwise = text(1, "else_branch") + field(6, 2, other) + field(20, 0, varint(5))
    for i in range(depth):
        attr = text(1, "then_branch") + field(6, 2, graph) + field(20, 0, varint(5))
        node = text(1, "c") + text(2, "t") + text(3, f"if{i}") + text(4, "If")
        node += field(5, 2, otherwise)
        graph = field(1, 2, node + field(5, 2, attr)) + text(2, f"g{i}") + out_t
    inputs = model([], [vi("x", T.FLOAT, [2, 3]), vi("y", T.FLOAT, [3]), vi("c", T.BOOL, [])])
    graph += b"".join(field(11, 2, i.SerializeToString()) for i in inputs.graph.input)
    opset = field(8, 2, text(1, "") + field(2, 0, varint(14)))
    return field(1, 0, varint(10)) + opset + field(7, 2, graph)


def many_graphs_model(n_ifs: int) -> onnx.ModelProto:
    """c = Concat(a, b) in main (unknown size); in each If, d = Concat(x, w) (unknown size)
    and a nested If holding Mul(c, d): inferred graph by graph, both were ``unk__0``."""
    mul = h.make_node("Mul", ["c", "d"], ["e"], name="m")
    inner = h.make_graph([mul], "inner", [], [vi("e", T.FLOAT, None)])
    empty = h.make_graph([h.make_node("Identity", ["c"], ["f"])], "else", [], [vi("f")])
    branch = h.make_graph(
        [h.make_node("Concat", ["x", "w"], ["d"], axis=0),
         h.make_node("If", ["cond"], ["g"], then_branch=inner, else_branch=empty)],
        "then", [], [vi("g")],
    )  # fmt: skip
    nodes = [h.make_node("Concat", ["a", "b"], ["c"], axis=0)]
    nodes += [
        h.make_node("If", ["cond"], [f"o{i}"], then_branch=branch, else_branch=empty)
        for i in range(n_ifs)
    ]
    inputs = [
        vi("a", T.FLOAT, ["N"]), vi("b", T.FLOAT, ["M"]), vi("x", T.FLOAT, ["K"]),
        vi("w", T.FLOAT, ["L"]), vi("cond", T.BOOL, []),
    ]  # fmt: skip
    return model(nodes, inputs, ["o0"])


# ------------------------------------------------------------ long symbols, long lists
def long_symbol_model(length: int, nodes: int, muls: int) -> onnx.ModelProto:
    """x: [S, 3] and y: [S + "y", 3], S a symbol of ``length`` characters; a chain of
    ``nodes`` Relu nodes from x; ``muls`` Mul nodes of x and y (undecided: one message
    each, naming both symbols) and one of x and the chain's end (conforms)."""
    symbol = "N" * length
    chain, prev = [], "x"
    for i in range(nodes):
        chain.append(h.make_node("Relu", [prev], [f"r{i}"]))
        prev = f"r{i}"
    chain.append(h.make_node("Mul", ["x", prev], ["ok"], name="ok"))
    chain += [h.make_node("Mul", ["x", "y"], [f"z{i}"], name=f"m{i}") for i in range(muls)]
    inputs = [vi("x", T.FLOAT, [symbol, 3]), vi("y", T.FLOAT, [symbol + "y", 3])]
    return model(chain, inputs, ["ok"])


def attribute_list_model(kind: str, size: int) -> bytes:
    """A model (Mul of x and x: conforms) with one list attribute of about ``size`` bytes,
    written as protobuf writes it or as a hostile file may: ``value_ints`` of a Constant
    (9-byte varints, unpacked), ``value_floats`` (unpacked, 5 bytes a float), ``packed
    ints`` of a Constant (1-byte varints, 8 bytes each once parsed), ``ints of another
    node`` (unpacked 1-byte varints, a custom-domain node), ``value_strings`` (empty
    strings, 2 bytes each); or a list in a tensor payload (an initializer nothing
    reads): ``int64_data`` of 1-byte varints, ``string_data`` of empty strings. The node
    or tensor is appended as bytes (protobuf merges a repeated graph field), so the list
    is never held as Python objects here."""
    base = model([h.make_node("Mul", ["x", "x"], ["z"])], [vi("x", T.FLOAT, [2])])
    op, domain, name, attr_type = "Constant", "", "value_ints", onnx.AttributeProto.INTS
    if kind == "value_ints":
        body = (b"\x40" + varint(2**62)) * (size // 10)
    elif kind == "value_floats":
        name, attr_type = "value_floats", onnx.AttributeProto.FLOATS
        body = b"\x3d\x00\x00\x00\x3f" * (size // 5)
    elif kind == "packed ints":
        body = field(8, 2, b"\x01" * size)
    elif kind == "ints of another node":
        op, domain, name = "Big", "local", "sizes"
        body = b"\x40\x01" * (size // 2)
        base.opset_import.append(h.make_opsetid("local", 1))
    elif kind == "value_strings":
        name, attr_type = "value_strings", onnx.AttributeProto.STRINGS
        body = b"\x4a\x00" * (size // 2)
    elif kind in ("initializer int64_data", "initializer string_data"):  # tensor payloads
        if kind.endswith("int64_data"):
            n, elem, payload = size, T.INT64, field(7, 2, b"\x01" * size)  # packed 1-byte
        else:
            n, elem, payload = size // 2, T.STRING, b"\x32\x00" * (size // 2)
        tensor = varint(1 << 3) + varint(n) + varint(2 << 3) + varint(elem)
        tensor += field(8, 2, b"w") + payload
        return base.SerializeToString() + field(7, 2, field(5, 2, tensor))
    else:
        raise ValueError(kind)
    attr = field(1, 2, name.encode()) + b"\xa0\x01" + varint(attr_type) + body
    node = h.make_node(op, ["x"] if domain else [], ["c"], domain=domain).SerializeToString()
    return base.SerializeToString() + field(7, 2, field(1, 2, node + field(5, 2, attr)))


# ------------------------------------------------------------ the bench's classes
def bench_classes() -> dict[str, bytes]:
    """One file per class of the memory bound's combinations (the bench's rows): lists at
    the cap, many lists summing past it, fields interleaved with a removed list, a
    singular field repeated (merged), nesting at the decoding limit, the 11-byte varint;
    and the interleaved class at 1, 2, 4 and 8 MB (is the walk linear?)."""
    ints_and_floats = interleaved_ints(150_000, field(7, 5, bytes(4)))
    cases = {
        "lists at the cap: 5 value_ints of exactly 64K (within the budget)": graph_file(
            lists_at_the_limit(5)
        ),
        "lists summing past the cap: 200 value_ints of exactly 64K (refused)": graph_file(
            lists_at_the_limit(200)
        ),
        "repeated singular field: a tensor 130 times, 64K int64 each (merged)": graph_file(
            merged_tensor_repeats(130)
        ),
        "interleaved fields: ints with floats (150K each)": checked_graph_file(
            identity_of_x(ints_and_floats)
        ),
        "nesting: 30 nested If (the decoding limit)": nested_if_bytes(30),
        "the 11-byte varint after a removed list (refused by protobuf)": long_varint_file(),
    }
    for mb in (1, 2, 4, 8):
        cases[f"interleaved fields: ints with the name, {mb} MB"] = interleaved_list_file(mb << 20)
    return cases
