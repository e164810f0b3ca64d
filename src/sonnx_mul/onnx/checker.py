"""Static check of every ``Mul`` node of an ONNX model against R1–R4.

The model is read without its external data (only metadata: types, dims,
attributes) and shape inference runs on that in-memory copy, so no file
named by the model is ever opened. Each ``Mul`` node of the main graph, of
every nested graph attribute (If, Loop, Scan, at any depth) and of every
model-local function is judged with the opset that applies to it.

Decisions (see the project docs):

* Conservative: a property that cannot be shown from the model's static
  information is reported, with ``definite=False`` and a message saying it
  cannot be shown. Symbolic (``dim_param``) and unknown dims, unknown rank
  and unknown element types are reported this way; only A and B being the
  very same tensor proves R1 without static shapes.
* Strict shape inference is tried first; if it fails (it does, e.g., for
  incompatible shapes or sparse inputs) non-strict inference is used, then
  the declared types only. The failure text is added to every "cannot be
  shown" message so the reader knows why shapes are missing.
* Function bodies are polymorphic: shapes and types there are unknown.

Hostile input (see SECURITY.md): tensor payloads and long strings are
cleared before shape inference (the checker judges dims and types only, so
a 50 MB weight is not copied again and again); model-local functions that
call themselves, directly or through others, make the model unreadable
(ONNX forbids recursive functions); nesting deeper than protobuf's decoding
limit is refused by the parser and reported as ModelReadError.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass

import onnx

from ..dtypes import MAX_KNOWN_OPSET, allowed_types, by_onnx_name, mul_version
from ..validation import broadcastable

ModelSource = onnx.ModelProto | str | os.PathLike[str] | bytes
Dim = int | str | None  # static size, symbolic name, unknown
Shape = tuple[Dim, ...] | None  # None: unknown rank
_DEFAULT_DOMAINS = ("", "ai.onnx")


class ModelReadError(ValueError):
    """The model could not be read (missing file, not an ONNX model, ...)."""


@dataclass(frozen=True)
class Violation:
    """One requirement a node violates or cannot be shown to satisfy.

    ``definite`` is True when the model certainly violates ``requirement``
    and False when the static information cannot show that it holds.
    """

    requirement: str
    node: str
    path: str
    message: str
    definite: bool = True

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass
class _Info:
    """What is statically known about one value name."""

    elem_type: int | None = None  # TensorProto.DataType, None when unknown
    shape: Shape = None
    sparse: bool = False
    kind: str = "tensor"  # or "sparse", "sequence", "map", "optional", "unknown"


_Scope = dict[str, _Info]


def load_model(source: ModelSource) -> onnx.ModelProto:
    """Read a model without loading external data; ModelReadError if unreadable."""
    if isinstance(source, onnx.ModelProto):
        model = source
    else:
        try:
            if isinstance(source, bytes):
                model = onnx.load_from_string(source)
            else:
                model = onnx.load(os.fspath(source), load_external_data=False)
        except Exception as exc:  # OSError, protobuf DecodeError, ...
            raise ModelReadError(f"cannot read ONNX model: {exc}") from exc
    if not model.HasField("graph"):
        raise ModelReadError("not an ONNX model: it has no graph")
    return model


PAYLOAD_LIMIT = 1 << 16
"""Tensor payloads, strings and doc strings longer than this (bytes or elements)
are cleared before shape inference; small integer tensors (shapes, axes) stay."""


def _big(n: int) -> bool:
    return n > PAYLOAD_LIMIT


def _strip_tensor(t: onnx.TensorProto) -> None:
    count = 1
    for d in t.dims:
        count *= max(int(d), 0)
    fields = ("float_data", "int32_data", "string_data", "int64_data", "double_data", "uint64_data")
    if (
        _big(count)
        or _big(len(t.raw_data))
        or any(_big(len(getattr(t, f))) for f in fields)
        or _big(sum(len(x) for x in t.string_data))
    ):
        for field in ("raw_data", *fields):
            t.ClearField(field)


def _strip_payloads(model: onnx.ModelProto) -> None:
    """Clear big payloads in place (iteratively, over every nested graph)."""
    model.ClearField("doc_string")
    graphs: list[onnx.GraphProto] = [model.graph]
    node_lists: list[Iterable[onnx.NodeProto]] = [f.node for f in model.functions]
    while graphs or node_lists:
        if graphs:
            g = graphs.pop()
            g.ClearField("doc_string")
            for t in g.initializer:
                _strip_tensor(t)
            for sp in g.sparse_initializer:
                _strip_tensor(sp.values)
                _strip_tensor(sp.indices)
            node_lists.append(g.node)
            continue
        for node in node_lists.pop():
            node.ClearField("doc_string")
            for attr in node.attribute:
                attr.ClearField("doc_string")
                if _big(len(attr.s)) or _big(sum(len(x) for x in attr.strings)):
                    attr.ClearField("s")
                    attr.ClearField("strings")
                tensors = [attr.t] if attr.HasField("t") else []
                for t in (*tensors, *attr.tensors):
                    _strip_tensor(t)
                sparse = [attr.sparse_tensor] if attr.HasField("sparse_tensor") else []
                for sp in (*sparse, *attr.sparse_tensors):
                    _strip_tensor(sp.values)
                    _strip_tensor(sp.indices)
                graphs.extend(_subgraphs(attr))


def _function_cycle(model: onnx.ModelProto) -> list[str] | None:
    """A cycle of model-local functions calling each other, or None (iterative DFS)."""
    calls: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for func in model.functions:
        found: set[tuple[str, str]] = set()
        graphs: list[Iterable[onnx.NodeProto]] = [func.node]
        while graphs:
            for node in graphs.pop():
                found.add((node.domain, node.op_type))
                for attr in node.attribute:
                    graphs.extend(g.node for g in _subgraphs(attr))
        calls[(func.domain, func.name)] = found
    state: dict[tuple[str, str], int] = {}  # 1 on the current path, 2 done
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
                return [f"{d}.{n}" if d else n for d, n in cycle]
            elif nxt not in state:
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(sorted(calls[nxt] & calls.keys(), key=repr)))
    return None


def _infer(model: onnx.ModelProto) -> tuple[onnx.ModelProto, str]:
    """Model with inferred value_info, and a note when strict inference failed."""
    try:
        return onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True), ""
    except Exception as exc:  # any inference failure: fall back, never crash
        note = f"strict shape inference failed: {str(exc).strip()}"
    try:
        return onnx.shape_inference.infer_shapes(model), note
    except Exception as exc:
        return model, f"{note}; non-strict inference failed too: {str(exc).strip()}"


def check_model(model_or_path: ModelSource) -> list[Violation]:
    """Every violation of R1–R4 by the Mul nodes of a model; [] when it conforms."""
    model = load_model(model_or_path)
    cycle = _function_cycle(model)
    if cycle is not None:
        raise ModelReadError(
            "invalid ONNX model: model-local functions call themselves recursively: "
            + " -> ".join(cycle)
        )
    if isinstance(model_or_path, onnx.ModelProto):  # the caller's: never modify it
        model = onnx.ModelProto()
        model.CopyFrom(model_or_path)
    _strip_payloads(model)
    inferred, note = _infer(model)
    opset = _default_opset(inferred.opset_import)
    found: list[Violation] = []
    found += _check_graph(inferred.graph, "main", {}, opset, note)
    for func in inferred.functions:
        func_opset = _default_opset(func.opset_import) or opset
        scope = {name: _Info(kind="unknown") for name in func.input}
        path = f"function:{func.domain}.{func.name}" if func.domain else f"function:{func.name}"
        note_fn = "inside a function body, input shapes and types are not known statically"
        found += _check_nodes(func.node, path, scope, func_opset, note_fn)
    return found


def _default_opset(imports: Iterable[onnx.OperatorSetIdProto]) -> int | None:
    for op in imports:
        if op.domain in _DEFAULT_DOMAINS:
            return int(op.version)
    return None


def _check_graph(
    graph: onnx.GraphProto, path: str, outer: _Scope, opset: int | None, note: str
) -> list[Violation]:
    scope = dict(outer)
    for init in graph.initializer:
        scope[init.name] = _Info(init.data_type, tuple(int(d) for d in init.dims))
    for sparse in graph.sparse_initializer:
        scope[sparse.values.name] = _Info(
            sparse.values.data_type, tuple(int(d) for d in sparse.dims), True, "sparse"
        )
    for vi in (*graph.input, *graph.value_info, *graph.output):
        info = _type_info(vi.type)
        known = scope.get(vi.name)
        if known is None or not (known.sparse or info.kind == "unknown"):
            scope[vi.name] = info  # never let an empty declaration hide what is known
    return _check_nodes(graph.node, path, scope, opset, note)


def _check_nodes(
    nodes: Iterable[onnx.NodeProto], path: str, scope: _Scope, opset: int | None, note: str
) -> list[Violation]:
    found: list[Violation] = []
    for index, node in enumerate(nodes):
        label = _text(node.name) or f"{node.op_type}#{index}"
        if node.op_type == "Mul" and node.domain in _DEFAULT_DOMAINS:
            found += check_node(node, label, path, scope, opset, note)
        for attr in node.attribute:
            if node.op_type == "Constant" and attr.name == "sparse_value":
                sp = attr.sparse_tensor
                info = _Info(sp.values.data_type, tuple(int(d) for d in sp.dims), True, "sparse")
                scope.update({out: info for out in node.output})
        for attr in node.attribute:
            for i, sub in enumerate(_subgraphs(attr)):
                suffix = f"[{i}]" if attr.type == onnx.AttributeProto.GRAPHS else ""
                sub_path = f"{path}/{label}.{attr.name}{suffix}"
                found += _check_graph(sub, sub_path, scope, opset, note)
    return found


def _text(value: str | bytes) -> str:
    """A name as text: protobuf hands back bytes for a string field that is not UTF-8."""
    return value if isinstance(value, str) else value.decode("utf-8", "backslashreplace")


def _subgraphs(attr: onnx.AttributeProto) -> Iterator[onnx.GraphProto]:
    if attr.type == onnx.AttributeProto.GRAPH:
        yield attr.g
    elif attr.type == onnx.AttributeProto.GRAPHS:
        yield from attr.graphs


def _type_info(tp: onnx.TypeProto) -> _Info:
    kind = tp.WhichOneof("value")
    if kind == "tensor_type":
        tt = tp.tensor_type
        shape = tuple(_dim(d) for d in tt.shape.dim) if tt.HasField("shape") else None
        return _Info(tt.elem_type or None, shape)
    if kind == "sparse_tensor_type":
        return _Info(tp.sparse_tensor_type.elem_type or None, None, True, "sparse")
    return _Info(kind=kind.replace("_type", "") if kind else "unknown")


def _dim(d: onnx.TensorShapeProto.Dimension) -> Dim:
    if d.HasField("dim_value"):
        return int(d.dim_value)
    if d.HasField("dim_param"):
        return str(d.dim_param)
    return None


def check_node(
    node: onnx.NodeProto, label: str, path: str, scope: _Scope, opset: int | None, note: str
) -> list[Violation]:
    """All violations of one Mul node, given what is known about its inputs."""

    def v(req: str, msg: str, definite: bool = True) -> Violation:
        return Violation(req, label, path, msg, definite)

    inputs = list(node.input)
    if len(inputs) != 2 or not all(inputs):
        return [v("R1", f"Mul has inputs {inputs}; it takes exactly two, A and B")]
    infos = [scope.get(name, _Info(kind="unknown")) for name in inputs]
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
def _sparse(inputs: list[str], infos: list[_Info]) -> list[tuple[str, str]]:
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
    inputs: list[str], infos: list[_Info], opset: int | None, note: str
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


# @relation(R1, R4, R1-DIMS, scope=function)
def _shapes(inputs: list[str], infos: list[_Info], note: str) -> list[tuple[str, str, bool]]:
    """R1/R4/R1-DIMS from static shapes; unknown or symbolic dims are reported."""
    sa, sb = infos[0].shape, infos[1].shape
    found: list[tuple[str, str, bool]] = []
    for shape in (sa, sb):
        if shape is not None and 0 in shape:
            found.append(("R1-DIMS", f"shape {_fmt(shape)} has a zero-size dimension", True))
            break
        if shape is not None and any(isinstance(d, int) and d < 0 for d in shape):
            found.append(("R1-DIMS", f"shape {_fmt(shape)} has a negative dimension", True))
            break
    why = f" ({note})" if note else ""
    if inputs[0] == inputs[1]:  # the same tensor: same shape by construction
        if sa is None or not all(isinstance(d, int) for d in sa):
            msg = f"dims of {_fmt(sa)} cannot be shown to be >= 1{why}"
            found.append(("R1-DIMS", msg, False))
        return found
    if _static(sa) and _static(sb):
        assert sa is not None and sb is not None
        if sa != sb:
            ints_a = tuple(int(d or 0) for d in sa)
            ints_b = tuple(int(d or 0) for d in sb)
            if broadcastable(ints_a, ints_b):
                msg = (
                    f"A has shape {_fmt(sa)} and B {_fmt(sb)}: different shapes that "
                    "would be broadcast, which the profile forbids"
                )
                found += [("R1", msg, True), ("R4", msg, True)]
            else:
                msg = f"A has shape {_fmt(sa)} and B {_fmt(sb)}: Mul requires the same shape"
                found.append(("R1", msg, True))
        return found
    msg = (
        f"A has shape {_fmt(sa)} and B {_fmt(sb)}: equal shapes cannot be shown "
        f"statically (symbolic or unknown dims, or unknown rank){why}"
    )
    found.append(("R1", msg, False))
    return found


def _static(shape: Shape) -> bool:
    return shape is not None and all(isinstance(d, int) for d in shape)


def _fmt(shape: Shape) -> str:
    if shape is None:
        return "<unknown rank>"
    dims = ["?" if d is None else str(d) for d in shape]
    return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"
