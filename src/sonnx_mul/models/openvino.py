"""Check the ``Multiply`` layers of an OpenVINO IR ``.xml`` against R1–R4.

XML safety: the document is parsed by ``xml.parsers.expat`` with handlers
that refuse any DOCTYPE, entity declaration or external entity reference
before they take effect, so neither entity expansion ("billion laughs") nor
external resources are possible; an IR never needs a DTD. Elements nested
deeper than MAX_XML_DEPTH are refused while parsing, and the walk over
nested bodies is iterative. The file must be a regular file under
``reading.MAX_IR_BYTES``. Referenced ``.bin`` weights are never read.

Facts, not the layer's own ports: each Multiply input is followed along
its ``<edge>`` to the producing layer. A Parameter's or Const's
``data shape`` is a fact; any other producer's output port dims are only
what the IR writer claims (OpenVINO infers them again when it reads the IR,
and an edited file can claim anything: issue 21, class 5), so they are
unknown here, as are the Multiply's own port dims. A Multiply port whose
dims or precision contradict its producer, or a Parameter/Const whose port
contradicts its ``shape``, makes the IR invalid (ModelReadError, exit 2).
Two inputs that reach the same producer port through shape-preserving
unary layers (Sigmoid, Relu, Convert, ...) have the same shape even when
it is dynamic (``-1``): ``x * sigmoid(x)`` conforms; when that chain starts at
a Parameter or Const, its shape is the fact, and a claim along the way that
contradicts it makes the IR invalid.

Rules (Multiply-1): ``auto_broadcast="none"`` conforms when the two inputs
have identical dims; ``"numpy"`` (the default) conforms only when they are
identical, else R4 and R1; ``"pdpd"`` or any other mode violates R4. Port
precisions must be the same type of the Mul-14 table (R3, R3-SAME).
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import NoReturn
from xml.parsers import expat

from ..dtypes import allowed_types, by_onnx_name
from .checker import ModelReadError, Report, Violation
from .reading import MAX_IR_BYTES, read_limited
from .shapes import Dim, Shape, same_shape

IR_OPSET = 14  # Multiply-1 types are judged with the newest Mul table (Mul-14)
MAX_XML_DEPTH = 256  # an IR nests <net><layers><layer><body>... a few levels per body

_PRECISIONS: Mapping[str, str] = MappingProxyType({
    "FP16": "float16", "F16": "float16", "BF16": "bfloat16",
    "FP32": "float", "F32": "float", "FP64": "double", "F64": "double",
    "I8": "int8", "I16": "int16", "I32": "int32", "I64": "int64",
    "U8": "uint8", "U16": "uint16", "U32": "uint32", "U64": "uint64",
})  # fmt: skip

# One data input, output shape = input shape: the same source means the same shape.
_SHAPE_PRESERVING = frozenset({
    "Abs", "Ceiling", "Clamp", "Convert", "Cos", "Elu", "Erf", "Exp", "Floor", "Gelu",
    "HSigmoid", "HSwish", "Log", "LogicalNot", "Mish", "Negative", "Relu", "Round",
    "Sigmoid", "Sign", "Sin", "SoftPlus", "Sqrt", "Tanh",
})  # fmt: skip


def _refuse(what: str) -> NoReturn:
    raise ModelReadError(f"refused: the IR contains {what} (DTD and entities are not allowed)")


def parse_ir(data: bytes) -> ET.Element:
    """Parse IR XML safely (no DOCTYPE, no entities, bounded depth); ModelReadError otherwise."""
    builder = ET.TreeBuilder()
    parser = expat.ParserCreate()
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.StartDoctypeDeclHandler = lambda *_: _refuse("a DOCTYPE")
    parser.EntityDeclHandler = lambda *_: _refuse("an entity declaration")
    parser.UnparsedEntityDeclHandler = lambda *_: _refuse("an unparsed entity")
    parser.ExternalEntityRefHandler = lambda *_: _refuse("an external entity")
    depth = [0]

    def start(tag: str, attrs: dict[str, str]) -> None:
        depth[0] += 1
        if depth[0] > MAX_XML_DEPTH:
            raise ModelReadError(f"refused: the IR nests elements deeper than {MAX_XML_DEPTH}")
        builder.start(tag, attrs)

    def end(tag: str) -> None:
        depth[0] -= 1
        builder.end(tag)

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = builder.data
    try:
        parser.Parse(data, True)
        root = builder.close()
    except expat.ExpatError as exc:
        raise ModelReadError(f"cannot parse IR XML: {exc}") from exc
    if root.tag != "net":
        raise ModelReadError(f"not an OpenVINO IR: root element is <{root.tag}>, not <net>")
    return root


def check_ir(path_or_bytes: str | os.PathLike[str] | bytes) -> list[Violation]:
    """Every violation of R1–R4 by the Multiply layers of an IR; [] when it conforms."""
    return list(check_ir_report(path_or_bytes).violations)


def check_ir_report(path_or_bytes: str | os.PathLike[str] | bytes) -> Report:
    """Like check_ir, with the number of Multiply layers checked."""
    if isinstance(path_or_bytes, bytes):
        data = path_or_bytes
    else:
        data = bytes(read_limited(path_or_bytes, MAX_IR_BYTES, "IR"))
    try:
        root = parse_ir(data)
        return _walk(root, root.get("name") or "net")
    except (RecursionError, MemoryError) as exc:
        raise ModelReadError(f"cannot check IR: {type(exc).__name__}") from None


def _walk(root: ET.Element, name: str) -> Report:
    """Every <layers>/<edges> container (the net, then nested bodies), iteratively."""
    found: list[Violation] = []
    count = 0
    stack: list[tuple[ET.Element, str]] = [(root, name)]
    while stack:
        container, path = stack.pop()
        layers_elem = container.find("layers")
        if layers_elem is None:
            continue
        layers = {layer.get("id", ""): layer for layer in layers_elem.findall("layer")}
        edges = _edges(container)
        for layer in layers.values():
            label = layer.get("name") or f"{layer.get('type')}#{layer.get('id')}"
            if layer.get("type") == "Multiply":
                count += 1
                found += check_layer(layer, label, path, layers, edges)
            for body in layer:  # <body>, <then_body>, <else_body>: every one is checked
                if body.find("layers") is not None:
                    stack.append((body, f"{path}/{label}.{body.tag}"))
    return Report(tuple(found), count)


_Port = tuple[str, str]  # (layer id, port id)


def _edges(container: ET.Element) -> dict[_Port, _Port]:
    edges: dict[_Port, _Port] = {}
    holder = container.find("edges")
    for edge in holder.findall("edge") if holder is not None else ():
        to = (edge.get("to-layer", ""), edge.get("to-port", ""))
        if to in edges:
            raise ModelReadError(f"invalid IR: two edges lead to layer {to[0]} port {to[1]}")
        edges[to] = (edge.get("from-layer", ""), edge.get("from-port", ""))
    return edges


def _dim(text: str) -> Dim:
    text = text.strip()
    try:
        value = int(text)
    except ValueError:
        return None  # "?", a range "1..10", or garbage: not static
    return value if value >= 0 else None


def _port_dims(port: ET.Element) -> Shape:
    return tuple(_dim(d.text or "") for d in port.findall("dim"))


def _data_shape(layer: ET.Element) -> Shape:
    data = layer.find("data")
    text = data.get("shape") if data is not None else None
    if text is None:
        return None
    text = text.strip().strip("[]")
    return tuple(_dim(t) for t in text.split(",")) if text else ()


def _contradicts(a: Shape, b: Shape) -> bool:
    if a is None or b is None:
        return False
    return len(a) != len(b) or any(
        isinstance(x, int) and isinstance(y, int) and x != y for x, y in zip(a, b, strict=True)
    )


def _output_port(layer: ET.Element, port_id: str) -> ET.Element | None:
    for port in layer.findall("output/port"):
        if port.get("id") == port_id:
            return port
    return None


def _source(
    port: _Port, layers: Mapping[str, ET.Element], edges: Mapping[_Port, _Port]
) -> tuple[_Port, Shape, str | None]:
    """(root producer port, fact shape, precision) of a consumer input port."""
    src = edges.get(port)
    if src is None or src[0] not in layers:
        return port, None, None  # no edge: nothing but the consumer's own claim
    seen: set[str] = set()
    first: tuple[Shape, str | None] | None = None
    while True:
        layer = layers[src[0]]
        out = _output_port(layer, src[1])
        if out is None:
            raise ModelReadError(f"invalid IR: layer {src[0]} has no output port {src[1]}")
        dims = _port_dims(out)
        kind = layer.get("type")
        if kind in ("Parameter", "Const"):
            fact = _data_shape(layer)
            if _contradicts(fact, dims):
                raise ModelReadError(
                    f"invalid IR: {kind} layer {src[0]} has shape {_show(fact)} but its "
                    f"output port says {_show(dims)}"
                )
            dims = fact if fact is not None else dims
        if first is None:
            first = (dims, out.get("precision"))
        inputs = layer.findall("input/port")
        if kind in _SHAPE_PRESERVING and len(inputs) == 1 and src[0] not in seen:
            seen.add(src[0])
            upstream = edges.get((src[0], inputs[0].get("id", "")))
            if upstream is not None and upstream[0] in layers:
                src = upstream  # same shape as its input: follow to the root
                continue
        if kind in ("Parameter", "Const") and first[0] is not dims:
            if _contradicts(first[0], dims):  # shape-preserving layers in between
                raise ModelReadError(
                    f"invalid IR: layer {port[0]} input {port[1]} is fed {_show(first[0])} "
                    f"through shape-preserving layers from {kind} {src[0]} of shape {_show(dims)}"
                )
            return src, dims, first[1]
        if kind in ("Parameter", "Const"):
            return src, first[0], first[1]
        return src, None, first[1]  # another layer's port dims: a claim, never a fact


def _show(shape: Shape) -> str:
    return "<unknown>" if shape is None else str(["?" if d is None else d for d in shape])


# @relation(R1, R3, R3-SAME, R4, R1-DIMS, scope=function)
def check_layer(
    layer: ET.Element,
    label: str,
    path: str,
    layers: Mapping[str, ET.Element] | None = None,
    edges: Mapping[_Port, _Port] | None = None,
) -> list[Violation]:
    """Violations of one Multiply layer (auto_broadcast, input shapes, precisions)."""

    def v(req: str, msg: str, definite: bool = True) -> Violation:
        return Violation(req, label, path, msg, definite)

    ports = layer.findall("input/port")
    if len(ports) != 2:
        return [v("R1", f"Multiply has {len(ports)} input ports; it needs exactly two")]
    data = layer.find("data")
    mode = (data.get("auto_broadcast") if data is not None else None) or "numpy"
    found: list[Violation] = []
    if mode not in ("none", "numpy"):
        found.append(v("R4", f"auto_broadcast={mode!r} broadcasts; only 'none' is allowed"))
    shapes: list[Shape] = []
    roots: list[_Port] = []
    precisions: list[str | None] = []
    for port in ports:
        own = _port_dims(port)
        me = (layer.get("id", ""), port.get("id", ""))
        root, fact, precision = _source(me, layers or {}, edges or {})
        if _contradicts(fact, own):
            raise ModelReadError(
                f"invalid IR: Multiply {label!r} port {me[1]} says {_show(own)} but its "
                f"producer gives {_show(fact)}"
            )
        if precision is not None and port.get("precision") not in (None, precision):
            raise ModelReadError(
                f"invalid IR: Multiply {label!r} port {me[1]} has precision "
                f"{port.get('precision')} but its producer gives {precision}"
            )
        shapes.append(fact)  # the port's own dims are a claim: unknown without a fact
        roots.append(root)
        precisions.append(port.get("precision") or precision)
    da, db = shapes
    same = (
        "equal" if roots[0] == roots[1] and roots[0][0] != layer.get("id") else same_shape(da, db)
    )
    for dims in (da, db):
        if dims is not None and 0 in dims:
            found.append(v("R1-DIMS", f"dims {_show(dims)} have a zero-size dimension"))
            break
    if same == "unknown":
        found.append(v("R1", "dynamic dims: equal shapes cannot be shown statically", False))
    elif same == "differ":
        found.append(v("R1", f"input dims {_show(da)} and {_show(db)} differ"))
        if mode == "numpy":
            msg = f"auto_broadcast='numpy' would broadcast {_show(da)} and {_show(db)}"
            found.append(v("R4", msg))
    found += _precisions(precisions, v)
    return found


def _precisions(names: list[str | None], make: Callable[..., Violation]) -> list[Violation]:
    if None in names:
        return [make("R3", "a port has no precision: element type cannot be shown", False)]
    types = [_PRECISIONS.get(str(n).upper()) for n in names]
    for name, t in zip(names, types, strict=True):
        if t is None or by_onnx_name(t) not in allowed_types(IR_OPSET):
            return [make("R3", f"precision {name} is not a numeric type of the profile")]
    if types[0] != types[1]:
        msg = f"input precisions {names[0]} and {names[1]} differ"
        return [make("R3", msg), make("R3-SAME", msg)]
    return []
