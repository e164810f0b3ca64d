"""The facts the checker owns about one graph's values (its Scope's local table).

Sources, and nothing else (trusted.py lists the operators and says why):

* the main graph's declared input types: the checker's preconditions (a
  runtime checks fed tensors against them; free dims got unique symbols);
* initializers (dims and, when small and not overridable, value) and
  Constant nodes: static facts. An initializer that is also a main-graph
  input with IR >= 4 can be overridden by the caller: its value is no fact;
* outputs of allow-listed operators (``trusted.rule``) whose inputs all
  have trusted shapes and whose shape-defining inputs are owned values:
  their ONNX-inferred shape, each symbol a run made up a ``Made`` of that run
  and graph (``symbols.Renamer``: never equal to a symbol the file spells);
* provenance classes: outputs of shape-preserving operators share the class
  of their input, so ``x * f(x)`` is decided with no shape at all.

Everything else — any other operator, a node whose attributes were cleared
for memory, a subgraph's formal inputs, sequences — has an unknown shape
(its element type is still ONNX's, which onnxruntime re-checks at load).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable

import onnx

from .reading import ModelReadError
from .sanitize import DEFAULT_DOMAINS, STRIPPED, stripped
from .scope import Info, Scope
from .shapes import Shape
from .symbols import Renamer
from .trusted import BROADCAST, PRESERVING, rule

CallFacts = Callable[[onnx.NodeProto, int, "Scope"], "list[Info] | None"]
"""Outputs of a model-local function call (the walker specialises it), None: not a call."""

VALUE_LIMIT = 64
"""An owned value (shape, axes, pads, split) has at most this many elements."""


def _elem(tp: onnx.TypeProto | None) -> int | None:
    if tp is not None and tp.WhichOneof("value") == "tensor_type":
        return tp.tensor_type.elem_type or None
    return None


def _kind(tp: onnx.TypeProto | None) -> str:
    which = tp.WhichOneof("value") if tp is not None else None
    if which is None:
        return "unknown"
    return "tensor" if which == "tensor_type" else which.replace("_type", "")


def _count(dims: Iterable[int]) -> int:
    n = 1
    for d in dims:
        n *= max(int(d), 0)
    return n


class Facts:
    """Builds the local tables of the graphs of one check (one provenance counter)."""

    def __init__(self, overridable: frozenset[str]) -> None:
        self.overridable = overridable  # main-graph initializers a caller may override
        self._classes = itertools.count()

    def fresh(self) -> int:
        return next(self._classes)

    def local(
        self,
        graph: onnx.GraphProto,
        main: bool,
        parent: Scope | None,
        names: Renamer,
        call: CallFacts | None = None,
    ) -> dict[str, Info]:
        """Facts about the names ``graph`` defines (``graph``: after shape inference).

        ``call`` gives the outputs of a model-local function call: the facts the
        checker derived inside the specialised call."""
        local: dict[str, Info] = {}
        inferred = {vi.name: vi.type for vi in (*graph.value_info, *graph.output)}
        for init in graph.initializer:
            dims = tuple(int(d) for d in init.dims)
            owned = not (main and init.name in self.overridable)
            external = init.data_location == onnx.TensorProto.EXTERNAL  # never loaded
            value = owned and not external and not stripped(init) and _count(dims) <= VALUE_LIMIT
            local[init.name] = Info(init.data_type or None, dims, cls=self.fresh(), value=value)
        for sp in graph.sparse_initializer:
            dims = tuple(int(d) for d in sp.dims)
            local[sp.values.name] = Info(
                sp.values.data_type or None, dims, True, "sparse", cls=self.fresh()
            )
        for vi in graph.input:
            known = local.get(vi.name)
            tp = vi.type if vi.HasField("type") else None
            if main:  # preconditions (overridable initializers: as declaration_facts left them)
                info = Info(_elem(tp), names.shape(tp), kind=_kind(tp), cls=self.fresh())
            else:  # a subgraph's formal input: its type is ONNX's, its shape unknown
                info = Info(_elem(tp), None, kind=_kind(tp), cls=self.fresh())
            if known is None or not (known.sparse or info.kind == "unknown"):
                if known is not None and not (main and vi.name in self.overridable):
                    info.value = known.value  # IR < 4: the initializer is a constant
                local[vi.name] = info
        scope = Scope(local, parent)
        defined: set[str] = set()
        for index, node in enumerate(graph.node):
            for out in node.output:
                if not out:
                    continue
                if out in defined or out in local:
                    raise ModelReadError(
                        f"invalid ONNX model: {out!r} is defined more than once "
                        "(a graph must be in single static assignment form)"
                    )
                defined.add(out)
            outs = call(node, index, scope) if call is not None else None
            if outs is None:
                self._node(node, scope, local, inferred, names)
            else:
                local.update((o, info) for o, info in zip(node.output, outs, strict=True) if o)
        return local

    def _node(
        self,
        node: onnx.NodeProto,
        scope: Scope,
        local: dict[str, Info],
        inferred: dict[str, onnx.TypeProto],
        names: Renamer,
    ) -> None:
        ins = [scope.get(name) if name else None for name in node.input]
        default = node.domain in DEFAULT_DOMAINS and STRIPPED not in node.doc_string
        if default and node.op_type == "Constant":
            for attr in node.attribute:
                if attr.name == "sparse_value":
                    sp = attr.sparse_tensor
                    dims = tuple(int(d) for d in sp.dims)
                    info = Info(sp.values.data_type or None, dims, True, "sparse", cls=self.fresh())
                    local.update({out: info for out in node.output if out})
                    return
        found = rule(node) if default else None
        present = [info for info in ins if info is not None]  # omitted optional inputs: None
        trusted = found is not None and all(
            info.kind == "tensor" and not info.sparse and info.shape is not None for info in present
        )
        if trusted and found is not None:
            owned = [ins[i] for i in found.value_inputs if i < len(ins)]
            trusted = all(info is None or info.value for info in owned)
        classes = self._classes_of(node, ins) if default else {}
        for j, out in enumerate(node.output):
            if not out:
                continue
            tp = inferred.get(out)
            shape = names.shape(tp) if trusted else None
            value = (
                trusted
                and node.op_type == "Constant"
                and shape is not None
                and all(isinstance(d, int) for d in shape)
                and _count(d for d in shape if isinstance(d, int)) <= VALUE_LIMIT
            )
            cls = classes.get(j)
            local[out] = Info(
                _elem(tp),
                shape,
                kind=_kind(tp),
                cls=self.fresh() if cls is None else cls,
                value=value,
            )

    @staticmethod
    def _classes_of(node: onnx.NodeProto, ins: list[Info | None]) -> dict[int, int]:
        """Output index -> provenance class of the output that keeps an input's shape."""
        first = ins[0] if ins else None
        if first is None or first.cls is None:
            return {}
        if node.op_type in PRESERVING:
            keep = {0: first.cls}
            if node.op_type == "Dropout":
                keep[1] = first.cls  # the mask has the data's shape
            return keep
        if node.op_type not in BROADCAST:
            return {}
        operands = [info for info in ins if info is not None]
        if len(operands) != len(ins):
            return {}
        anchors = [info for info in operands if not _ones(info.shape)]
        if not anchors:
            return {}
        cls = anchors[0].cls
        if cls is None or any(info.cls != cls for info in anchors):
            return {}
        ranks = [len(info.shape) for info in anchors if info.shape is not None]
        rank = ranks[0] if ranks else 0
        for info in operands:
            if info.cls != cls and info.shape is not None and len(info.shape) > rank:
                return {}  # an all-ones operand of higher rank adds dims
        return {0: cls}


def _ones(shape: Shape) -> bool:
    """A shape that broadcasting can never grow beyond its partner's (all dims 1)."""
    return shape is not None and all(d == 1 for d in shape)
