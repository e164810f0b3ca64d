"""Static check of every ``Mul`` node of an ONNX model against R1–R4.

Pipeline (each step in its own module):

1. ``reading``: the file must be a regular file under a byte cap; it is
   parsed without its external data, so no file named by the model is opened.
   ``wire``: before parsing, lists over sanitize's limit are dropped from the
   bytes (their counts kept), so protobuf never expands them (issue 29).
2. ``sanitize``: big payloads cleared (tensors, attribute lists, strings, in
   graphs, subgraphs and functions), recursive or duplicate functions and
   duplicate opset imports refused; ``validity``: whatever onnx.checker
   rejects is refused (run on a skeleton, no external data).
3. ``declared``: user bindings of free dims applied to the main graph's
   inputs; initializers made facts (overridable ones as the runtime treats
   them); every other declaration removed before shape inference and
   compared after it — a contradiction is an invalid model (ModelReadError).
4. Shape inference (strict, else non-strict, else none; the failure text is
   added to every "cannot be shown" message) — whole model, or graph by graph
   above 64 nested graphs (``inference``).
5. ``facts``: per graph, what the checker owns about each value: provenance
   classes, static facts, and ONNX's shape only for the allow-listed
   operators of ``trusted`` (cross-checked against onnxruntime), with every
   symbol an inference run made up renamed to be unique. Everything else is
   an unknown shape.
6. One linear walk over the graph and every nested graph (a chain of scopes,
   nothing copied per subgraph); each call of a model-local function is
   specialised with the call site's facts (``functions``), its outputs are the
   facts derived inside, and its Mul nodes are reported under
   ``<call site>-><function>/<function node>``. Functions that no reachable
   node calls are never run and are not checked.
7. Each Mul is judged (``rules``) with the opset that applies to it, from
   what the graph's scope knows (``scope``); shapes are compared
   symbolically (``shapes``), or equal by provenance. Findings are
   ``Violation`` objects gathered in a ``Report`` (``findings``).

Verdicts are conservative: a property the model does not show is reported
with ``definite=False``. "Conforms" means: for every binding of the free dims
to sizes >= 1 consistent with the main graph's declared inputs, no Mul node
broadcasts, meets a sparse tensor, or has types outside the profile.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

import onnx

from . import sanitize
from .declared import (
    Declared,
    GraphKey,
    ShapeBindingError,
    bind,
    contradiction,
    initializer_facts,
    strip_declarations,
)
from .facts import Facts
from .findings import Report, Violation
from .functions import FunctionId, body_index, specialise
from .inference import infer, infer_alone, many_subgraphs
from .reading import MAX_MODEL_BYTES, ModelReadError, read_limited
from .rules import check_node
from .sanitize import (
    DEFAULT_DOMAINS,
    STRIPPED,
    function_cycle,
    function_key,
    functions_by_key,
    opsets,
    strip_payloads,
    subgraphs,
)
from .scope import Info, Scope
from .shapes import Made, Shape
from .symbols import Encoding, Renamer
from .validity import check_structure
from .wire import UnverifiableError, WireError, strip_lists

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
_GRAPH_ATTRS = (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)


def load_model(source: ModelSource) -> onnx.ModelProto:
    """Read a model without loading external data; ModelReadError if unreadable.

    A path must name a regular file of at most MAX_MODEL_BYTES (reading.py).
    """
    if isinstance(source, onnx.ModelProto):
        return _has_graph(source)
    return _parse(_read(source))


def _read(source: str | os.PathLike[str] | bytes) -> bytes | bytearray:
    """The model's bytes: given as they are, or read from a regular file under the cap."""
    if isinstance(source, bytes):
        return source
    return read_limited(source, MAX_MODEL_BYTES, "ONNX model")


def _parse(data: bytes | bytearray) -> onnx.ModelProto:
    try:
        model = onnx.ModelProto()
        model.ParseFromString(data)
    except Exception as exc:  # protobuf DecodeError, ...
        raise ModelReadError(f"cannot read ONNX model: {exc}") from exc
    return _has_graph(model)


def _has_graph(model: onnx.ModelProto) -> onnx.ModelProto:
    if not model.HasField("graph"):
        raise ModelReadError("not an ONNX model: it has no graph")
    return model


def _load_for_check(source: ModelSource) -> tuple[onnx.ModelProto, bool]:
    """The model to check, and whether it was parsed from wire.strip_lists' output.

    Long attribute lists are dropped from the bytes before protobuf parses them
    (memory bounded by the file, issue 29); bytes the walker cannot read are
    parsed as they are (the same verdict, or the same ModelReadError)."""
    if isinstance(source, onnx.ModelProto):
        return load_model(source), False
    data = _read(source)
    try:
        # the limit read now: a negative control raises it at run time
        data = strip_lists(data, sanitize.PAYLOAD_LIMIT)
    except WireError:
        return _parse(data), False
    except UnverifiableError as exc:
        raise ModelReadError(f"cannot check ONNX model within its memory bound: {exc}") from None
    return _parse(data), True


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
    model, prepassed = _load_for_check(source)
    functions_by_key(model)  # a function defined twice: invalid
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
    strip_payloads(model, prepassed=prepassed)
    bind(model.graph, dims, input_shapes)  # the user's names: before the encoding
    initializer_facts(model)
    # Before anything copies the model (the validity skeleton, onnx.checker, inference):
    # the file's symbols, however long, are replaced by short names (memory bounded by the
    # file, issue 29); unknown input dims get Made symbols.
    encoding = Encoding()
    encoding.encode_model(model, free=True, main_inputs=True)
    check_structure(model)
    declared = strip_declarations(model)
    inputs = {vi.name for vi in model.graph.input}
    overridable = frozenset(
        t.name for t in model.graph.initializer if model.ir_version >= 4 and t.name in inputs
    )
    walker = _Walker(functions_by_key(model), model_opsets, model.ir_version, Facts(overridable))
    walker.walk_model(model, "main", model_opsets.get(""), declared, encoding)
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
    name = f"{_text(func.domain)}.{_text(func.name)}" if func.domain else _text(func.name)
    return f"{name}:{_text(func.overload)}" if func.overload else name


class _Walker:
    """Walks graphs, collecting findings; specialises function calls on the way."""

    def __init__(
        self,
        functions: dict[FunctionId, onnx.FunctionProto],
        model_opsets: dict[str, int],
        ir_version: int,
        facts: Facts,
    ) -> None:
        self.functions, self.model_opsets, self.ir_version = functions, model_opsets, ir_version
        self.facts = facts
        self.runs = 0  # shape-inference runs: each makes up its own symbols
        self.found: list[Violation] = []
        self.muls = 0
        self.contradictions: list[str] = []
        self.memo: dict[tuple[object, ...], tuple[list[Violation], int, list[Info]]] = {}
        self.calls = 0  # uses of call facts (each gets its own symbols)
        self.specialised = 0

    def walk_model(
        self,
        model: onnx.ModelProto,
        path: str,
        opset: int | None,
        declared: Declared,
        encoding: Encoding,
        body: onnx.FunctionProto | None = None,
        depth: int = 0,
    ) -> Scope | None:
        """Infer (whole model, or graph by graph when it has many nested graphs), then walk;
        the main graph's scope. Every symbol of ``model`` is already one of ``encoding``'s.
        """
        if many_subgraphs(model.graph):
            return self.walk(
                model.graph, path, opset, "", declared, encoding, body, depth, template=model
            )
        inferred, note = infer(model)
        self.runs += 1
        return self.walk(inferred.graph, path, opset, note, declared, encoding, body, depth)

    def walk(
        self,
        root: onnx.GraphProto,
        path: str,
        opset: int | None,
        note: str,
        declared: Declared,
        encoding: Encoding,
        body: onnx.FunctionProto | None = None,
        depth: int = 0,
        template: onnx.ModelProto | None = None,
    ) -> Scope | None:
        """Every graph under ``root``; ``body``: root is an inlined call of that function.

        With ``template``, the graphs are not inferred yet: each is inferred alone.
        ``encoding``: the short names the inference runs of ``root`` were given.
        """
        run = self.runs
        main_scope: Scope | None = None
        stack: list[tuple[onnx.GraphProto, GraphKey, str, Scope | None]] = [(root, (), path, None)]
        while stack:
            graph, key, gpath, parent = stack.pop()
            need = 2 if not key else self._needs(graph)
            if need == 0 and (template is not None or not declared.get(key)):
                # Nothing judged here. Graph by graph, the claims of such a graph are not
                # compared either: no verdict can depend on them (they were stripped, and
                # outputs of nested graphs are unknown to the graph around them).
                continue
            names = Renamer(encoding, f"{run}{list(key)}")
            where = body if not key else None

            def call(node: onnx.NodeProto, i: int, scope: Scope) -> list[Info] | None:
                if function_key(node) not in self.functions:
                    return None
                label = self._label(node, i, where)  # noqa: B023 (called before the loop moves)
                return self._call(node, label, gpath, scope, depth)  # noqa: B023

            if template is None or need < 2:  # need 1: no claim about a node output is checked
                local = self.facts.local(graph, not key, parent, names, call)
            else:
                outer = _outer(parent, encoding)
                facts, note = infer_alone(graph, template, outer)
                self.runs += 1
                names = Renamer(encoding, f"{self.runs}{list(key)}")
                local = self.facts.local(facts, not key, parent, names, call)
            scope = Scope(local, parent)
            if not key:
                main_scope = scope
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
                # a call of a model-local function (any domain, "" too) was followed while
                # the facts of this graph were built (its outputs are facts of the call)
                for j, attr in enumerate(node.attribute):
                    for k, sub in enumerate(subgraphs(attr)):
                        suffix = f"[{k}]" if attr.type == onnx.AttributeProto.GRAPHS else ""
                        sub_path = f"{gpath}/{label}.{_text(attr.name)}{suffix}"
                        stack.append((sub, (*key, i, j, k), sub_path, scope))
        return main_scope

    def _needs(self, graph: onnx.GraphProto) -> int:
        """0: nothing to judge; 1: Mul/call inputs all come from outside the graph's
        nodes (no inference needed); 2: shape inference of the graph is needed."""
        need = 0
        produced: set[str] = set()
        for node in graph.node:
            if node.attribute and any(a.type in _GRAPH_ATTRS for a in node.attribute):
                return 2
            judged = (node.domain in DEFAULT_DOMAINS and node.op_type == "Mul") or (
                function_key(node) in self.functions
            )
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

    def _call(
        self, node: onnx.NodeProto, label: str, path: str, scope: Scope, depth: int
    ) -> list[Info]:
        """Follow one call (findings added); the facts about its outputs."""
        func = self.functions[function_key(node)]
        unknown = [Info(kind="unknown", cls=self.facts.fresh()) for _ in node.output]
        if STRIPPED in node.doc_string:  # an attribute payload was cleared: not followed
            msg = (
                "the Mul nodes of this call were not checked: an attribute of the call was "
                "too large to keep"
            )
            self.found.append(Violation("R1", label, path, msg, False))
            return unknown
        encoding = Encoding()  # the call's own run: its types name the caller's symbols
        types = [scope.type_of(name, encoding) if name else None for name in node.input]
        func_opset = opsets(func.opset_import, f"function {_fname(func)!r}").get("")
        call_path = f"{path}/{label}->{_fname(func)}"
        key = (
            function_key(node),
            tuple(_fact_key(scope.get(name)) if name else None for name in node.input),
            tuple(a.SerializeToString(deterministic=True) for a in node.attribute),
            tuple(bool(n) for n in node.input),
        )
        cached = self.memo.get(key)
        if cached is None:
            cached = self._specialise(node, types, func, func_opset, depth, encoding)
            self.memo[key] = cached
        found, muls, outputs = cached
        self.found += [
            replace(v, path=call_path + v.path) if v.node else replace(v, path=path, node=label)
            for v in found
        ]
        self.muls += muls
        # Each use gets its own provenance classes and symbols: two calls are two values.
        self.calls += 1
        given = {
            d for name in node.input if name for d in (scope.get(name).shape or ()) if d is not None
        }
        tag = f"call{self.calls}"
        return [
            replace(info, cls=self.facts.fresh(), shape=_retagged(info.shape, given, tag))
            for info in outputs
        ] or unknown

    def _specialise(
        self,
        node: onnx.NodeProto,
        types: list[onnx.TypeProto | None],
        func: onnx.FunctionProto,
        func_opset: int | None,
        depth: int,
        encoding: Encoding,
    ) -> tuple[list[Violation], int, list[Info]]:
        """Findings (paths relative to the call), Mul count and output facts of one call."""
        saved, saved_muls = self.found, self.muls
        self.found, self.muls = [], 0
        unknown = [Info(kind="unknown") for _ in node.output]
        try:
            if depth >= MAX_CALL_DEPTH or self.specialised >= MAX_SPECIALISATIONS:
                msg = (
                    "the Mul nodes of this call (and of the functions it calls) were not "
                    "checked: too many or too deeply nested function calls"
                )
                return [Violation("R1", "", "", msg, False)], 0, unknown
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
                self.walk(body, "", func_opset, note, {}, Encoding(), func, depth + 1)
                return self.found, self.muls, unknown
            declared = strip_declarations(tiny)
            encoding.encode_model(tiny, free=False, main_inputs=False)  # inputs: by type_of
            root = self.walk_model(tiny, "", func_opset, declared, encoding, func, depth + 1)
            outputs = [root.get(name) if root and name else Info(kind="unknown")
                       for name in node.output]  # fmt: skip
            return self.found, self.muls, outputs
        finally:
            self.found, self.muls = saved, saved_muls


def _retagged(shape: Shape, given: set[int | str | Made], tag: str) -> Shape:
    """A call's output shape for one use: a symbol not given by the call site is this
    use's own (two calls are two values: their made-up sizes may differ)."""
    if shape is None:
        return None
    return tuple(
        d
        if d is None or isinstance(d, int) or d in given
        else Made(f"{tag}/{d.origin}" if isinstance(d, Made) else tag, str(getattr(d, "name", d)))
        for d in shape
    )


def _fact_key(info: Info) -> tuple[int, Shape] | None:
    """What Scope.type_of gives a call from ``info``, as a key (symbols by identity)."""
    if info.kind != "tensor" or info.sparse or info.elem_type is None:
        return None
    return (info.elem_type, info.shape)


def _outer(parent: Scope | None, encoding: Encoding) -> Callable[[str], onnx.TypeProto | None]:
    """The outer scope's facts about a name as an encoded TypeProto (None: unknown)."""

    def outer(name: str) -> onnx.TypeProto | None:
        return parent.type_of(name, encoding) if parent is not None else None

    return outer
