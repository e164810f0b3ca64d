"""Static check of every ``Mul`` node of an ONNX model against R1–R4.

Pipeline (each step in its own module):

1. ``reading``: the file must be a regular file under a byte cap; it is
   parsed without its external data, so no file named by the model is opened.
2. ``sanitize``: big payloads cleared, recursive functions and duplicate
   opset imports refused.
3. ``declared``: user bindings of free dims applied to the main graph's
   inputs; initializers made facts (overridable ones as the runtime treats
   them); every other declaration removed before shape inference and
   compared after it — a contradiction is an invalid model (ModelReadError).
4. Shape inference (strict, else non-strict, else none; the failure text is
   added to every "cannot be shown" message).
5. One linear walk over the graph and every nested graph (a chain of scopes,
   nothing copied per subgraph); each call of a model-local function is
   specialised with the call site's types (``functions``) and its Mul nodes
   are reported under ``<call site>-><function>/<function node>``. Functions
   that no reachable node calls are never run and are not checked.
6. Each Mul is judged with the opset that applies to it; shapes are compared
   symbolically (``shapes``: the same ``dim_param`` is the same size).

Verdicts are conservative: a property the model does not show is reported
with ``definite=False``. "Conforms" means: for every binding of the free dims
to sizes >= 1 consistent with the main graph's declared inputs, no Mul node
broadcasts, meets a sparse tensor, or has types outside the profile.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace

import onnx

from ..dtypes import MAX_KNOWN_OPSET, allowed_types, by_onnx_name, mul_version
from .declared import (
    Declared,
    GraphKey,
    ShapeBindingError,
    bind,
    contradiction,
    initializer_facts,
    name_free_dims,
    strip_declarations,
)
from .functions import FunctionId, body_index, specialise
from .inference import infer, infer_alone, many_subgraphs
from .reading import MAX_MODEL_BYTES, ModelReadError, read_limited
from .sanitize import DEFAULT_DOMAINS, function_cycle, opsets, strip_payloads, subgraphs
from .shapes import Shape, broadcasts, fmt, same_shape, shape_of

__all__ = [
    "ModelReadError",
    "Report",
    "ShapeBindingError",
    "Violation",
    "check_model",
    "check_report",
    "load_model",
]

ModelSource = onnx.ModelProto | str | os.PathLike[str] | bytes
MAX_SPECIALISATIONS = 2000  # distinct (function, call-site types) pairs inlined per model
MAX_CALL_DEPTH = 64  # nested function calls followed


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


@dataclass(frozen=True)
class Report:
    """The findings of one check and how many Mul nodes were judged."""

    violations: tuple[Violation, ...]
    mul_nodes: int

    @property
    def definite(self) -> tuple[Violation, ...]:
        return tuple(v for v in self.violations if v.definite)

    @property
    def undecided(self) -> tuple[Violation, ...]:
        return tuple(v for v in self.violations if not v.definite)

    def nodes(self, definite: bool) -> list[tuple[str, str]]:
        """(path, node) of the nodes with a definite finding, or with undecided ones only."""
        bad = dict.fromkeys((v.path, v.node) for v in self.definite)
        if definite:
            return list(bad)
        return list(
            dict.fromkeys((v.path, v.node) for v in self.undecided if (v.path, v.node) not in bad)
        )

    @property
    def verdict(self) -> str:
        """One of: conforms; violates (a definite finding); undecided (undecided findings only)."""
        if self.definite:
            return "violates"
        return "undecided" if self.violations else "conforms"


@dataclass
class _Info:
    """What is statically known about one value name."""

    elem_type: int | None = None  # TensorProto.DataType, None when unknown
    shape: Shape = None
    sparse: bool = False
    kind: str = "tensor"  # or "sparse", "sequence", "map", "optional", "unknown"
    type: onnx.TypeProto | None = field(default=None, compare=False)


_UNKNOWN = _Info(kind="unknown")
_GRAPH_ATTRS = (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)


class _Scope:
    """Values of one graph, then of the graphs around it (no copying)."""

    __slots__ = ("local", "parent")

    def __init__(self, local: dict[str, _Info], parent: _Scope | None) -> None:
        self.local, self.parent = local, parent

    def get(self, name: str) -> _Info:
        scope: _Scope | None = self
        while scope is not None:
            found = scope.local.get(name)
            if found is not None:
                return found
            scope = scope.parent
        return _UNKNOWN

    def type_of(self, name: str) -> onnx.TypeProto | None:
        """The tensor type known for ``name``, as a TypeProto (None when unknown)."""
        info = self.get(name)
        if info.type is not None:
            return info.type
        if info.kind != "tensor" or info.sparse or info.elem_type is None:
            return None
        tp = onnx.TypeProto()
        tp.tensor_type.elem_type = info.elem_type
        if info.shape is not None:
            shape = tp.tensor_type.shape
            shape.SetInParent()
            for d in info.shape:
                dim = shape.dim.add()
                if isinstance(d, int):
                    dim.dim_value = d
                elif isinstance(d, str):
                    dim.dim_param = d
        return tp


def _no_type(name: str) -> onnx.TypeProto | None:
    del name
    return None


def load_model(source: ModelSource) -> onnx.ModelProto:
    """Read a model without loading external data; ModelReadError if unreadable.

    A path must name a regular file of at most MAX_MODEL_BYTES (reading.py).
    """
    if isinstance(source, onnx.ModelProto):
        model = source
    else:
        data = (
            source
            if isinstance(source, bytes)
            else read_limited(source, MAX_MODEL_BYTES, "ONNX model")
        )
        try:
            model = onnx.load_from_string(data)
        except Exception as exc:  # protobuf DecodeError, ...
            raise ModelReadError(f"cannot read ONNX model: {exc}") from exc
    if not model.HasField("graph"):
        raise ModelReadError("not an ONNX model: it has no graph")
    return model


def check_model(
    model_or_path: ModelSource,
    *,
    dims: Mapping[str, int] | None = None,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
) -> list[Violation]:
    """Every violation of R1–R4 by the Mul nodes of a model; [] when it conforms.

    ``dims`` binds free dims by name (``{"batch": 1}``), ``input_shapes`` fixes
    a main-graph input's shape (``{"x": (1, 3, 224, 224)}``); a binding that
    does not fit raises ShapeBindingError. An unreadable or invalid model
    raises ModelReadError.
    """
    return list(check_report(model_or_path, dims=dims, input_shapes=input_shapes).violations)


def check_report(
    model_or_path: ModelSource,
    *,
    dims: Mapping[str, int] | None = None,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
) -> Report:
    """Like check_model, with the number of Mul nodes judged (a Report)."""
    try:
        return _check(model_or_path, dict(dims or {}), dict(input_shapes or {}))
    except RecursionError:
        raise ModelReadError("cannot check ONNX model: it is nested too deeply") from None
    except MemoryError:
        raise ModelReadError("cannot check ONNX model: out of memory") from None


def _check(
    source: ModelSource, dims: dict[str, int], input_shapes: dict[str, Sequence[int]]
) -> Report:
    model = load_model(source)
    cycle = function_cycle(model)
    if cycle is not None:
        raise ModelReadError(
            "invalid ONNX model: model-local functions call themselves recursively: "
            + " -> ".join(cycle)
        )
    model_opsets = opsets(model.opset_import, "the model")
    for func in model.functions:
        opsets(func.opset_import, f"function {_text(func.name)!r}")
        if func.domain in DEFAULT_DOMAINS and onnx.defs.has(func.name):
            raise ModelReadError(  # which one a runtime calls is not specified
                f"invalid ONNX model: model-local function {_text(func.name)!r} shadows the "
                "standard operator of that name"
            )
    if source is model:  # the caller's: never modify it
        model = onnx.ModelProto()
        model.CopyFrom(source)
    strip_payloads(model)
    bind(model.graph, dims, input_shapes)
    initializer_facts(model)
    name_free_dims(model.graph)
    declared = strip_declarations(model)
    walker = _Walker(
        {(f.domain, f.name): f for f in model.functions}, model_opsets, model.ir_version
    )
    walker.walk_model(model, "main", model_opsets.get(""), declared)
    if walker.contradictions:
        shown = "; ".join(walker.contradictions[:3])
        more = len(walker.contradictions) - 3
        raise ModelReadError(
            f"invalid ONNX model: declared types contradict the model: {shown}"
            + (f" (and {more} more)" if more > 0 else "")
        )
    return Report(tuple(walker.found), walker.muls)


def _text(value: str | bytes) -> str:
    """A name as text: protobuf hands back bytes for a string field that is not UTF-8."""
    return value if isinstance(value, str) else value.decode("utf-8", "backslashreplace")


def _fname(func: onnx.FunctionProto) -> str:
    return f"{_text(func.domain)}.{_text(func.name)}" if func.domain else _text(func.name)


class _Walker:
    """Walks graphs, collecting findings; specialises function calls on the way."""

    def __init__(
        self,
        functions: dict[FunctionId, onnx.FunctionProto],
        model_opsets: dict[str, int],
        ir_version: int,
    ) -> None:
        self.functions, self.model_opsets, self.ir_version = functions, model_opsets, ir_version
        self.found: list[Violation] = []
        self.muls = 0
        self.contradictions: list[str] = []
        self.memo: dict[tuple[object, ...], tuple[list[Violation], int]] = {}
        self.specialised = 0

    def walk_model(
        self,
        model: onnx.ModelProto,
        path: str,
        opset: int | None,
        declared: Declared,
        body: onnx.FunctionProto | None = None,
        depth: int = 0,
    ) -> None:
        """Infer (whole model, or graph by graph when it has many nested graphs), then walk."""
        if many_subgraphs(model.graph):
            self.walk(model.graph, path, opset, "", declared, body, depth, template=model)
        else:
            inferred, note = infer(model)
            self.walk(inferred.graph, path, opset, note, declared, body, depth)

    def walk(
        self,
        root: onnx.GraphProto,
        path: str,
        opset: int | None,
        note: str,
        declared: Declared,
        body: onnx.FunctionProto | None = None,
        depth: int = 0,
        template: onnx.ModelProto | None = None,
    ) -> None:
        """Every graph under ``root``; ``body``: root is an inlined call of that function.

        With ``template``, the graphs are not inferred yet: each is inferred alone.
        """
        stack: list[tuple[onnx.GraphProto, GraphKey, str, _Scope | None]] = [(root, (), path, None)]
        while stack:
            graph, key, gpath, parent = stack.pop()
            need = 2 if not key else self._needs(graph)
            if need == 0 and (template is not None or not declared.get(key)):
                # Nothing judged here. Graph by graph, the claims of such a graph are not
                # compared either: no verdict can depend on them (they were stripped, and
                # outputs of nested graphs are unknown to the graph around them).
                continue
            if template is None or need < 2:  # need 1: no claim about a node output is checked
                scope = _Scope(self._local(graph), parent)
            else:
                outer = parent.type_of if parent is not None else _no_type
                facts, note = infer_alone(graph, template, outer)
                scope = _Scope(self._local(facts), parent)
            for name, tp in declared.get(key, ()):
                info = scope.get(name)
                why = contradiction(tp, info.elem_type, info.shape)
                if why is not None:
                    self.contradictions.append(f"{gpath}: {_text(name)!r} {why}")
            for i, node in enumerate(graph.node):
                label = self._label(node, i, body if not key else None)
                if node.op_type == "Mul" and node.domain in DEFAULT_DOMAINS:
                    self.muls += 1
                    self.found += check_node(node, label, gpath, scope, opset, note)
                elif (node.domain, node.op_type) in self.functions:  # any domain, "" too
                    self._call(node, label, gpath, scope, depth)
                for j, attr in enumerate(node.attribute):
                    for k, sub in enumerate(subgraphs(attr)):
                        suffix = f"[{k}]" if attr.type == onnx.AttributeProto.GRAPHS else ""
                        sub_path = f"{gpath}/{label}.{_text(attr.name)}{suffix}"
                        stack.append((sub, (*key, i, j, k), sub_path, scope))

    def _needs(self, graph: onnx.GraphProto) -> int:
        """0: nothing to judge; 1: Mul/call inputs all come from outside the graph's
        nodes (no inference needed); 2: shape inference of the graph is needed."""
        need = 0
        produced: set[str] = set()
        for node in graph.node:
            if node.attribute and any(a.type in _GRAPH_ATTRS for a in node.attribute):
                return 2
            judged = (node.domain in DEFAULT_DOMAINS and node.op_type == "Mul") or (
                node.domain,
                node.op_type,
            ) in self.functions
            if judged:
                if any(name in produced for name in node.input):
                    return 2
                need = 1
            produced.update(node.output)
        return need

    @staticmethod
    def _label(node: onnx.NodeProto, index: int, body: onnx.FunctionProto | None) -> str:
        if body is not None:
            at = body_index(node)
            if at is not None and at < len(body.node):
                original = body.node[at]
                return _text(original.name) or f"{_text(original.op_type)}#{at}"
        return _text(node.name) or f"{_text(node.op_type)}#{index}"

    def _local(self, graph: onnx.GraphProto) -> dict[str, _Info]:
        """Facts about the names a graph defines (inferred types: declarations are gone)."""
        local: dict[str, _Info] = {}
        for init in graph.initializer:
            local[init.name] = _Info(init.data_type or None, tuple(int(d) for d in init.dims))
        for sp in graph.sparse_initializer:
            dims = tuple(int(d) for d in sp.dims)
            local[sp.values.name] = _Info(sp.values.data_type or None, dims, True, "sparse")
        for vi in graph.input:
            info = _type_info(vi.type)
            known = local.get(vi.name)
            if known is None or not (known.sparse or info.kind == "unknown"):
                local[vi.name] = info
        defined: set[str] = set()
        for node in graph.node:
            for out in node.output:
                if not out:
                    continue
                if out in defined or out in local:
                    raise ModelReadError(
                        f"invalid ONNX model: {_text(out)!r} is defined more than once "
                        "(a graph must be in single static assignment form)"
                    )
                defined.add(out)
            if node.op_type == "Constant" and node.domain in DEFAULT_DOMAINS:
                for attr in node.attribute:
                    if attr.name == "sparse_value":
                        sp = attr.sparse_tensor
                        dims = tuple(int(d) for d in sp.dims)
                        info = _Info(sp.values.data_type or None, dims, True, "sparse")
                        local.update({out: info for out in node.output if out})
        for vi in (*graph.value_info, *graph.output):
            if vi.name in defined and vi.name not in local:
                local[vi.name] = _type_info(vi.type)
        for name in defined:
            local.setdefault(name, _UNKNOWN)  # never fall through to an outer name
        return local

    def _call(self, node: onnx.NodeProto, label: str, path: str, scope: _Scope, depth: int) -> None:
        func = self.functions[(node.domain, node.op_type)]
        types = [scope.type_of(name) if name else None for name in node.input]
        func_opset = opsets(func.opset_import, f"function {_fname(func)!r}").get("")
        call_path = f"{path}/{label}->{_fname(func)}"
        key = (
            node.domain,
            node.op_type,
            tuple(t.SerializeToString(deterministic=True) if t else b"" for t in types),
            tuple(a.SerializeToString(deterministic=True) for a in node.attribute),
            tuple(bool(n) for n in node.input),
        )
        cached = self.memo.get(key)
        if cached is None:
            cached = self._specialise(node, types, func, func_opset, depth)
            self.memo[key] = cached
        found, muls = cached
        self.found += [
            replace(v, path=call_path + v.path) if v.node else replace(v, path=path, node=label)
            for v in found
        ]
        self.muls += muls

    def _specialise(
        self,
        node: onnx.NodeProto,
        types: list[onnx.TypeProto | None],
        func: onnx.FunctionProto,
        func_opset: int | None,
        depth: int,
    ) -> tuple[list[Violation], int]:
        """Findings (paths relative to the call) and Mul count of one call."""
        saved, saved_muls = self.found, self.muls
        self.found, self.muls = [], 0
        try:
            if depth >= MAX_CALL_DEPTH or self.specialised >= MAX_SPECIALISATIONS:
                msg = (
                    "the Mul nodes of this call (and of the functions it calls) were not "
                    "checked: too many or too deeply nested function calls"
                )
                return [Violation("R1", "", "", msg, False)], 0
            self.specialised += 1
            try:
                tiny = specialise(
                    node, types, func, self.functions, self.model_opsets, self.ir_version
                )
            except Exception as exc:  # the inliner refused: judge the body without types
                body = onnx.GraphProto()
                body.node.extend(func.node)
                note = (
                    f"the call could not be inlined ({str(exc).strip()}); inside the "
                    "function body, input shapes and types are not known statically"
                )
                self.walk(body, "", func_opset, note, {}, func, depth + 1)
            else:
                declared = strip_declarations(tiny)
                self.walk_model(tiny, "", func_opset, declared, func, depth + 1)
            return self.found, self.muls
        finally:
            self.found, self.muls = saved, saved_muls


def _type_info(tp: onnx.TypeProto) -> _Info:
    kind = tp.WhichOneof("value")
    if kind == "tensor_type":
        tt = tp.tensor_type
        return _Info(tt.elem_type or None, shape_of(tt), type=tp)
    if kind == "sparse_tensor_type":
        return _Info(tp.sparse_tensor_type.elem_type or None, None, True, "sparse")
    return _Info(kind=kind.replace("_type", "") if kind else "unknown")


def check_node(
    node: onnx.NodeProto, label: str, path: str, scope: _Scope, opset: int | None, note: str
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
    if inputs[0] == inputs[1]:  # the same tensor: the same shape by construction
        return found
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
