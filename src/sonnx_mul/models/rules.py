"""The R1–R4 rules for one Mul node, given what is known about its inputs."""

from __future__ import annotations

import onnx

from ..dtypes import MAX_KNOWN_OPSET, allowed_types, by_onnx_name, mul_version
from .findings import Violation
from .scope import Info, Scope
from .shapes import broadcasts, fmt, same_shape


def check_node(
    node: onnx.NodeProto, label: str, path: str, scope: Scope, opset: int | None, note: str
) -> list[Violation]:
    """All violations of one Mul node, given what is known about its inputs."""

    def v(req: str, msg: str, definite: bool = True) -> Violation:
        return Violation(req, label, path, msg, definite)

    inputs = list(node.input)
    if len(inputs) != 2 or not all(inputs):
        return [v("R1", f"Mul has inputs {inputs}; it takes exactly two, A and B")]
    infos = [scope.get(name) for name in inputs]
    found = [v(r, m) for r, m in _legacy_broadcast(node)]
    found += [v(r, m) for r, m in _sparse(inputs, infos)]
    found += [v(r, m, d) for r, m, d in _element_types(inputs, infos, opset, note)]
    found += [v(r, m, d) for r, m, d in _shapes(inputs, infos, note)]
    return found


# @relation(R4, scope=function)
def _legacy_broadcast(node: onnx.NodeProto) -> list[tuple[str, str]]:
    """R4: the Mul-1/6 ``broadcast=1`` attribute (``axis`` matters only with it)."""
    for attr in node.attribute:
        if attr.name == "broadcast" and attr.i != 0:
            axis = [a.i for a in node.attribute if a.name == "axis"]
            where = f" with axis={axis[0]}" if axis else ""
            return [("R4", f"legacy attribute broadcast={attr.i}{where} enables broadcasting")]
    return []


# @relation(R2, scope=function)
def _sparse(inputs: list[str], infos: list[Info]) -> list[tuple[str, str]]:
    """R2: a sparse initializer, sparse Constant or sparse-typed input feeds Mul."""
    return [
        ("R2", f"input {'AB'[i]} ({name!r}) is a sparse tensor; only dense tensors are allowed")
        for i, (name, info) in enumerate(zip(inputs, infos, strict=True))
        if info.sparse
    ]


def _type_name(elem_type: int) -> str:
    try:
        return str(onnx.TensorProto.DataType.Name(elem_type)).lower()
    except ValueError:  # a type code this onnx does not know
        return f"<element type code {elem_type}>"


# @relation(R3, R3-SAME, R3-OPSET, scope=function)
def _element_types(
    inputs: list[str], infos: list[Info], opset: int | None, note: str
) -> list[tuple[str, str, bool]]:
    """R3: numeric, same, and allowed by the node's opset (Mul table in dtypes)."""
    if opset is None:
        return [("R3-OPSET", "the model imports no default-domain (ai.onnx) opset", True)]
    if not 1 <= opset <= MAX_KNOWN_OPSET:
        return [
            ("R3-OPSET", f"opset {opset} is outside the checked range 1..{MAX_KNOWN_OPSET}", True)
        ]
    found: list[tuple[str, str, bool]] = []
    for i, info in enumerate(infos):
        if info.kind not in ("tensor", "sparse", "unknown"):
            found.append(("R3", f"input {'AB'[i]} is a {info.kind}, not a numeric tensor", True))
        elif info.elem_type is None:
            why = f" ({note})" if note else ""
            msg = f"element type of input {'AB'[i]} ({inputs[i]!r}) cannot be shown{why}"
            found.append(("R3", msg, False))
    if found:
        return found
    ta, tb = (_type_name(info.elem_type or 0) for info in infos)
    for name in (ta, tb):
        if by_onnx_name(name) is None:
            return [("R3", f"element type {name} is not a numerical type of the profile", True)]
    if ta != tb:
        msg = f"A is {ta} and B is {tb}; Mul needs the same type, no promotion"
        return [("R3", msg, True), ("R3-SAME", msg, True)]
    etype = by_onnx_name(ta)
    if etype not in allowed_types(opset):
        msg = f"{ta} is not allowed by Mul-{mul_version(opset)} (opset {opset})"
        return [("R3", msg, True), ("R3-OPSET", msg, True)]
    return []


def provenance(a: Info, b: Info) -> bool:
    """Same provenance class (facts.py): the same shape, whatever that shape is."""
    return a.cls is not None and a.cls == b.cls


# @relation(R1, R4, R1-DIMS, scope=function)
def _shapes(inputs: list[str], infos: list[Info], note: str) -> list[tuple[str, str, bool]]:
    """R1/R4/R1-DIMS from shapes compared symbolically (shapes.py)."""
    sa, sb = infos[0].shape, infos[1].shape
    found: list[tuple[str, str, bool]] = []
    for shape in (sa, sb):
        if shape is not None and 0 in shape:
            found.append(("R1-DIMS", f"shape {fmt(shape)} has a zero-size dimension", True))
            break
        if shape is not None and any(isinstance(d, int) and d < 0 for d in shape):
            found.append(("R1-DIMS", f"shape {fmt(shape)} has a negative dimension", True))
            break
    if inputs[0] == inputs[1] or provenance(infos[0], infos[1]):
        return found  # the same tensor, or derived from one through shape-preserving ops
    same = same_shape(sa, sb)
    if same == "equal":
        return found
    shapes = f"A has shape {fmt(sa)} and B {fmt(sb)}"
    if same == "unknown":
        why = f" ({note})" if note else ""
        msg = (
            f"{shapes}: equal shapes cannot be shown statically "
            f"(different symbolic or unknown dims, or unknown rank){why}"
        )
        return [*found, ("R1", msg, False)]
    bcast = broadcasts(sa, sb)
    if bcast == "yes":
        msg = f"{shapes}: different shapes that would be broadcast, which the profile forbids"
        return [*found, ("R1", msg, True), ("R4", msg, True)]
    msg = f"{shapes}: Mul requires the same shape"
    if bcast == "maybe":
        found.append(
            ("R4", f"{shapes}: they would be broadcast for some sizes of their free dims", False)
        )
    return [*found, ("R1", msg, True)]
