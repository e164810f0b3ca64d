"""Structural hygiene before shape inference: payloads, recursion, opset imports.

* Tensor payloads, long attribute lists (``value_ints``, ``value_floats``,
  ``ints``, ``floats``, ``strings``), long strings and doc strings are
  cleared, in graphs, nested graphs and functions (the checker judges dims
  and types only, so a 50 MB weight is not copied again and again through
  shape inference). A node whose meaning changed is marked ``STRIPPED``.
* A model-local function defined twice (same domain, name and overload)
  makes the model invalid, as for onnx.checker and onnxruntime.
* Model-local functions that call themselves, directly or through others,
  make the model invalid (ONNX forbids recursive functions).
* Opset imports must name each domain once: onnxruntime takes the LAST
  default-domain import while a first-wins reader would judge another opset,
  so a duplicate (``""`` and ``"ai.onnx"`` are the same domain) is refused.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from types import MappingProxyType

import onnx

from .reading import ModelReadError
from .wire import MARK, TENSOR_LISTS

DEFAULT_DOMAINS = ("", "ai.onnx")

PAYLOAD_LIMIT = 1 << 16
"""Tensor payloads, strings and doc strings longer than this (bytes or elements)
are cleared before shape inference; small integer tensors (shapes, axes) stay."""


def subgraphs(attr: onnx.AttributeProto) -> Iterator[onnx.GraphProto]:
    if attr.type == onnx.AttributeProto.GRAPH:
        yield attr.g
    elif attr.type == onnx.AttributeProto.GRAPHS:
        yield from attr.graphs


STRIPPED = "sonnx-mul:stripped"
"""Marks a tensor whose payload, or a node whose attribute payload, was cleared:
such a node's outputs have unknown shapes, such a tensor's value is no fact."""

_CONSTANT_LISTS: Mapping[str, tuple[int, str, int, str]] = MappingProxyType(
    {  # attribute -> its tensor's type and field, the attribute's type and field
        "value_ints": (onnx.TensorProto.INT64, "int64_data", onnx.AttributeProto.INTS, "ints"),
        "value_floats": (
            onnx.TensorProto.FLOAT,
            "float_data",
            onnx.AttributeProto.FLOATS,
            "floats",
        ),
        "value_strings": (
            onnx.TensorProto.STRING,
            "string_data",
            onnx.AttributeProto.STRINGS,
            "strings",
        ),
    }
)


def _big(n: int) -> bool:
    return n > PAYLOAD_LIMIT


TENSOR_PAYLOADS = tuple(name for name, (_, form) in TENSOR_LISTS.items() if form != "raw")
"""The repeated payload fields of a tensor (with ``raw_data``, what a big payload loses):
wire.TENSOR_LISTS' elements, the one table of them."""


def _removed(doc: str | bytes) -> int:
    """How many list elements wire.strip_lists removed from an attribute (its mark in the
    doc string); -1: none."""
    return int(doc[len(MARK) :]) if isinstance(doc, str) and doc.startswith(MARK) else -1


def _removed_per_field(doc: str | bytes) -> dict[int, int] | None:
    """The elements wire.strip_lists removed from a tensor, by field number (its mark
    ``MARK<field>=<count>,...``); None: no mark."""
    if not (isinstance(doc, str) and doc.startswith(MARK)):
        return None
    entries = (e.split("=") for e in doc[len(MARK) :].split(",") if e)
    return {int(f): int(n) for f, n in entries}


def stripped(t: onnx.TensorProto) -> bool:
    return t.doc_string == STRIPPED


WITNESS_ELEMENTS = 32
"""The element count validity's skeleton gives a cleared tensor with elements: every
storage's size for it is a whole number of values, two or more (module _STORAGE)."""

_STORAGE: Mapping[int, tuple[str, int, int, int]] = MappingProxyType({
    # data type -> (the field onnx.checker wants its values in, values of that field per
    # element as num/den, bits per element in raw_data; 0: raw_data refused)
    # onnx.checker's sizes (pinned for every type in tests/checker/test_wire_verdicts.py)
    **dict.fromkeys([onnx.TensorProto.FLOAT], ("float_data", 1, 1, 32)),
    **dict.fromkeys([onnx.TensorProto.COMPLEX64], ("float_data", 2, 1, 64)),
    **dict.fromkeys([onnx.TensorProto.DOUBLE], ("double_data", 1, 1, 64)),
    **dict.fromkeys([onnx.TensorProto.COMPLEX128], ("double_data", 2, 1, 128)),
    **dict.fromkeys([onnx.TensorProto.INT64], ("int64_data", 1, 1, 64)),
    **dict.fromkeys([onnx.TensorProto.UINT32], ("uint64_data", 1, 1, 32)),
    **dict.fromkeys([onnx.TensorProto.UINT64], ("uint64_data", 1, 1, 64)),
    **dict.fromkeys([onnx.TensorProto.STRING], ("string_data", 1, 1, 0)),
    **dict.fromkeys([onnx.TensorProto.INT32], ("int32_data", 1, 1, 32)),
    **dict.fromkeys(
        [onnx.TensorProto.UINT16, onnx.TensorProto.INT16, onnx.TensorProto.FLOAT16,
         onnx.TensorProto.BFLOAT16], ("int32_data", 1, 1, 16),
    ),
    **dict.fromkeys(
        [onnx.TensorProto.UINT8, onnx.TensorProto.INT8, onnx.TensorProto.BOOL,
         onnx.TensorProto.FLOAT8E4M3FN, onnx.TensorProto.FLOAT8E4M3FNUZ,
         onnx.TensorProto.FLOAT8E5M2, onnx.TensorProto.FLOAT8E5M2FNUZ,
         onnx.TensorProto.FLOAT8E8M0], ("int32_data", 1, 1, 8),
    ),
    **dict.fromkeys(
        [onnx.TensorProto.UINT4, onnx.TensorProto.INT4, onnx.TensorProto.FLOAT4E2M1],
        ("int32_data", 1, 8, 4),
    ),
    **dict.fromkeys([onnx.TensorProto.UINT2, onnx.TensorProto.INT2], ("int32_data", 1, 16, 2)),
    **dict.fromkeys(
        [onnx.TensorProto.FLOAT6E2M3, onnx.TensorProto.FLOAT6E3M2], ("int32_data", 1, 1, 6)
    ),
})  # fmt: skip


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def needed(data_type: int, elements: int) -> tuple[int, int]:
    """The fewest values of its field and bytes of raw_data (0: refused there) onnx.checker
    accepts for ``elements`` elements of a ``data_type`` of _STORAGE."""
    _, num, den, bits = _STORAGE[data_type]
    return _ceil_div(elements * num, den), _ceil_div(elements * bits, 8)


def _witness_size(sufficient: bool, per_element: tuple[int, int]) -> int:
    """The size a placeholder gets: what WITNESS_ELEMENTS elements need, or one less when
    the original payload was too small for its shape (onnx.checker refuses both alike)."""
    needed = _ceil_div(WITNESS_ELEMENTS * per_element[0], per_element[1])
    return needed if sufficient else needed - 1


def _leave_placeholders(t: onnx.TensorProto, counts: Mapping[str, int]) -> None:
    """A cleared tensor's payload replaced by zeros that keep what onnx.checker judges:
    which fields hold data, and whether the one its type names holds enough for its
    shape (``counts``: the elements each field held). validity's skeleton judges them as
    WITNESS_ELEMENTS elements. Zeros, not the first values, so the model is the same
    whether wire.strip_lists removed the lists (it leaves one zero each) or not."""
    elements = 1
    for d in t.dims:
        elements *= int(d)
    present = sum(1 for n in counts.values() if n) + (len(t.raw_data) > 0)
    # two fields holding data: onnx.checker refuses whatever their sizes, one zero each
    storage = _STORAGE.get(t.data_type) if present == 1 else None
    for name in TENSOR_PAYLOADS:
        values = getattr(t, name)
        size = 1 if counts.get(name, 0) else 0
        if size and storage is not None and storage[0] == name:
            enough = counts[name] >= needed(t.data_type, elements)[0]
            size = _witness_size(enough, storage[1:3])
        zero = type(values[0])() if len(values) else b"" if name == "string_data" else 0
        del values[:]
        values.extend([zero] * size)
    if t.raw_data:
        size = 1
        if storage is not None and storage[3]:
            enough = len(t.raw_data) >= needed(t.data_type, elements)[1]
            size = _witness_size(enough, (storage[3], 8))
        t.raw_data = bytes(size)


def _leave_attribute_placeholders(attr: onnx.AttributeProto) -> None:
    """Each non-empty list of a cleared attribute cut to one zero: which of them hold data
    is what onnx.checker judges of an attribute (its type against the field, one value
    field only); the same whether wire.strip_lists removed the lists or not."""
    for name in ("ints", "floats", "strings"):
        values = getattr(attr, name)
        if len(values):
            zero = type(values[0])()
            del values[:]
            values.append(zero)


def _consistent_list(attr: onnx.AttributeProto) -> bool:
    """A Constant's ``value_ints``/``value_floats``/``value_strings`` as onnx.checker
    accepts it: the attribute type of its name, and its list the only value field."""
    _, _, attr_type, attr_field = _CONSTANT_LISTS[attr.name]
    present = {f.name for f, _ in attr.ListFields()}
    return attr.type == attr_type and present <= {"name", "type", attr_field}


def _strip_tensor(t: onnx.TensorProto, prepassed: bool) -> bool:
    """Clear a big payload (dims and type stay); True when it was cleared.

    ``prepassed``: a tensor wire.strip_lists marked (it drops every tensor doc string
    on these paths, so the mark is its own) had a list over the limit: big."""
    removed = _removed_per_field(t.doc_string) if prepassed else None
    marked = removed is not None
    counts = {
        name: len(getattr(t, name)) + (removed or {}).get(number, 0)
        for name, (number, form) in TENSOR_LISTS.items()
        if form != "raw"
    }
    count = 1
    for d in t.dims:
        count *= max(int(d), 0)
    if (
        marked
        or _big(count)
        or _big(len(t.raw_data))
        or any(_big(len(getattr(t, f))) for f in TENSOR_PAYLOADS)
        or _big(sum(len(x) for x in t.string_data))
    ):
        _leave_placeholders(t, counts)
        t.doc_string = STRIPPED
        return True
    t.ClearField("doc_string")
    return False


def _strip_attribute(node: onnx.NodeProto, attr: onnx.AttributeProto, prepassed: bool) -> bool:
    """Clear the attribute's big payloads; True when the node's meaning changed.

    ``prepassed``: the model was parsed from wire.strip_lists' output, which drops every
    attribute doc string on these paths, so a mark there is its own (never the file's):
    the lists it removed count as if they were still here."""
    removed = max(_removed(attr.doc_string), 0) if prepassed else 0
    attr.ClearField("doc_string")
    changed = False
    lists = removed + len(attr.ints) + len(attr.floats) + len(attr.strings)
    if _big(lists) or _big(sum(len(x) for x in attr.strings)):
        constant = node.op_type == "Constant" and node.domain in DEFAULT_DOMAINS
        if constant and attr.name in _CONSTANT_LISTS and _consistent_list(attr):
            # keep its shape: a tensor whose payload is a placeholder (as _strip_tensor's)
            tensor_type, tensor_field, _, _ = _CONSTANT_LISTS[attr.name]
            t = onnx.TensorProto(data_type=tensor_type, dims=[lists])
            _leave_placeholders(t, {tensor_field: lists})
            t.doc_string = STRIPPED
            attr.Clear()
            attr.name, attr.type = "value", onnx.AttributeProto.TENSOR
            attr.t.CopyFrom(t)
            return False
        # an inconsistent list stays as a placeholder: onnx.checker refuses it as it
        # refuses the original (validity.py)
        _leave_attribute_placeholders(attr)
        changed = True
    if _big(len(attr.s)):
        attr.s = b""
        changed = True
    tensors = [attr.t] if attr.HasField("t") else []
    for t in (*tensors, *attr.tensors):
        changed |= _strip_tensor(t, prepassed)
    sparse = [attr.sparse_tensor] if attr.HasField("sparse_tensor") else []
    for sp in (*sparse, *attr.sparse_tensors):
        changed |= _strip_tensor(sp.values, prepassed) | _strip_tensor(sp.indices, prepassed)
    return changed and node.op_type != "Constant"


def strip_payloads(model: onnx.ModelProto, *, prepassed: bool = False) -> None:
    """Clear big payloads in place (iteratively, over functions and every nested graph):
    tensors, value_ints/value_floats/strings, doc strings. Nodes whose meaning
    changed are marked STRIPPED; a Constant keeps its shape. ``prepassed``: the model
    was parsed from wire.strip_lists' output (its marks are honoured, see there); the
    result is then the same as for the original bytes."""
    model.ClearField("doc_string")
    graphs: list[onnx.GraphProto] = [model.graph]
    node_lists: list[Iterable[onnx.NodeProto]] = []
    for func in model.functions:
        func.ClearField("doc_string")
        node_lists.append(func.node)
    while graphs or node_lists:
        if graphs:
            g = graphs.pop()
            g.ClearField("doc_string")
            for t in g.initializer:
                _strip_tensor(t, prepassed)
            for sp in g.sparse_initializer:
                _strip_tensor(sp.values, prepassed)
                _strip_tensor(sp.indices, prepassed)
            node_lists.append(g.node)
            continue
        for node in node_lists.pop():
            node.ClearField("doc_string")
            changed = False
            for attr in node.attribute:
                changed |= _strip_attribute(node, attr, prepassed)
                graphs.extend(subgraphs(attr))
            if changed:
                node.doc_string = STRIPPED


FunctionKey = tuple[str, str, str]
"""(domain, name, overload): a model-local function's identity (IR 10 overloads)."""


def function_key(item: onnx.FunctionProto | onnx.NodeProto) -> FunctionKey:
    if isinstance(item, onnx.FunctionProto):
        return (item.domain, item.name, item.overload)
    return (item.domain, item.op_type, item.overload)


def functions_by_key(model: onnx.ModelProto) -> dict[FunctionKey, onnx.FunctionProto]:
    """The model-local functions; ModelReadError when one is defined twice."""
    found: dict[FunctionKey, onnx.FunctionProto] = {}
    for func in model.functions:
        key = function_key(func)
        if key in found:
            shown = ":".join(part for part in key if part)
            raise ModelReadError(
                f"invalid ONNX model: model-local function {shown!r} is defined more than once"
            )
        found[key] = func
    return found


def function_cycle(model: onnx.ModelProto) -> list[str] | None:
    """A cycle of model-local functions calling each other, or None (iterative DFS)."""
    calls: dict[FunctionKey, set[FunctionKey]] = {}
    for func in model.functions:
        found: set[FunctionKey] = set()
        graphs: list[Iterable[onnx.NodeProto]] = [func.node]
        while graphs:
            for node in graphs.pop():
                found.add(function_key(node))
                for attr in node.attribute:
                    graphs.extend(g.node for g in subgraphs(attr))
        calls[function_key(func)] = found
    state: dict[FunctionKey, int] = {}  # 1 on the current path, 2 done
    # key=repr below: names that are not UTF-8 come back as bytes, not comparable with str
    for start in calls:
        if start in state:
            continue
        path = [start]
        stack = [iter(sorted(calls[start] & calls.keys(), key=repr))]
        state[start] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                cycle = [*path[path.index(nxt) :], nxt]
                return [(f"{d}.{n}" if d else n) + (f":{o}" if o else "") for d, n, o in cycle]
            elif nxt not in state:
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(sorted(calls[nxt] & calls.keys(), key=repr)))
    return None


def opsets(imports: Iterable[onnx.OperatorSetIdProto], where: str) -> dict[str, int]:
    """Domain -> version (default domain under ""); ModelReadError on a duplicate."""
    found: dict[str, int] = {}
    for op in imports:
        domain = "" if op.domain in DEFAULT_DOMAINS else op.domain
        if domain in found:
            shown = domain or "ai.onnx (default)"
            raise ModelReadError(
                f"invalid ONNX model: {where} imports the domain {shown!r} more than once "
                "(runtimes disagree on which version applies)"
            )
        found[domain] = int(op.version)
    return found
