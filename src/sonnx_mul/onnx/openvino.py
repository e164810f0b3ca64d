"""Check the ``Multiply`` layers of an OpenVINO IR ``.xml`` against R1–R4.

XML safety: the document is parsed by ``xml.parsers.expat`` with handlers
that refuse any DOCTYPE, entity declaration or external entity reference
before they take effect, so neither entity expansion ("billion laughs") nor
external resources are possible; an IR never needs a DTD. No extra
dependency (defusedxml) is needed. Referenced ``.bin`` weights are never read.

Rules (Multiply-1): ``auto_broadcast="none"`` conforms when the two input
ports have identical dims; ``"numpy"`` (the default) conforms only when
they are identical, else R4 and R1; ``"pdpd"`` or any other mode violates R4.
Port precisions must be the same type of the Mul-14 table (R3, R3-SAME).
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import NoReturn
from xml.parsers import expat

from ..dtypes import allowed_types, by_onnx_name
from ..validation import broadcastable
from .checker import ModelReadError, Violation

IR_OPSET = 14  # Multiply-1 types are judged with the newest Mul table (Mul-14)

_PRECISIONS: Mapping[str, str] = MappingProxyType({
    "FP16": "float16", "F16": "float16", "BF16": "bfloat16",
    "FP32": "float", "F32": "float", "FP64": "double", "F64": "double",
    "I8": "int8", "I16": "int16", "I32": "int32", "I64": "int64",
    "U8": "uint8", "U16": "uint16", "U32": "uint32", "U64": "uint64",
})  # fmt: skip


def _refuse(what: str) -> NoReturn:
    raise ModelReadError(f"refused: the IR contains {what} (DTD and entities are not allowed)")


def parse_ir(data: bytes) -> ET.Element:
    """Parse IR XML safely (no DOCTYPE, no entities); ModelReadError otherwise."""
    builder = ET.TreeBuilder()
    parser = expat.ParserCreate()
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.StartDoctypeDeclHandler = lambda *_: _refuse("a DOCTYPE")
    parser.EntityDeclHandler = lambda *_: _refuse("an entity declaration")
    parser.UnparsedEntityDeclHandler = lambda *_: _refuse("an unparsed entity")
    parser.ExternalEntityRefHandler = lambda *_: _refuse("an external entity")
    parser.StartElementHandler = builder.start
    parser.EndElementHandler = builder.end
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
    if isinstance(path_or_bytes, bytes):
        data = path_or_bytes
    else:
        try:
            with open(os.fspath(path_or_bytes), "rb") as f:
                data = f.read()
        except OSError as exc:
            raise ModelReadError(f"cannot read IR: {exc}") from exc
    root = parse_ir(data)
    return _walk(root, root.get("name") or "net")


def _walk(elem: ET.Element, path: str) -> list[Violation]:
    found: list[Violation] = []
    for child in elem:
        if child.tag == "layer":
            label = child.get("name") or f"{child.get('type')}#{child.get('id')}"
            if child.get("type") == "Multiply":
                found += check_layer(child, label, path)
            found += _walk(child, f"{path}/{label}")  # bodies of Loop / TensorIterator
        else:
            found += _walk(child, path)
    return found


def _port_dims(port: ET.Element) -> tuple[int, ...] | None:
    try:
        return tuple(int((d.text or "").strip()) for d in port.findall("dim"))
    except ValueError:
        return None  # "?" or another non-static dim


# @relation(R1, R3, R3-SAME, R4, R1-DIMS, scope=function)
def check_layer(layer: ET.Element, label: str, path: str) -> list[Violation]:
    """Violations of one Multiply layer (auto_broadcast, port dims, precisions)."""

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
    da, db = (_port_dims(p) for p in ports)
    if da is None or db is None or any(d < 0 for d in (*da, *db)):
        found.append(v("R1", "dynamic dims: equal shapes cannot be shown statically", False))
    elif da != db:
        found.append(v("R1", f"input dims {list(da)} and {list(db)} differ"))
        if mode != "none" and (mode == "numpy" or broadcastable(da, db)):
            found.append(
                v("R4", f"auto_broadcast={mode!r} would broadcast {list(da)} and {list(db)}")
            )
    elif 0 in da:
        found.append(v("R1-DIMS", f"dims {list(da)} have a zero-size dimension"))
    found += _precisions(ports, v)
    return found


def _precisions(ports: list[ET.Element], make: Callable[..., Violation]) -> list[Violation]:
    names = [p.get("precision") for p in ports]
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
