"""Two namespaces of symbolic dims: the ones a file declares, the ones the checker makes.

A symbolic dim is either a ``str`` — a ``dim_param`` spelled in the file,
one size wherever it appears in the main graph's inputs (IR.md) — or a
``Made`` — a size the checker or one of its shape-inference runs made up
(a free input dim, ONNX's ``unk__N`` of one run and graph, a function
call's own symbols). ``Made`` is its own type: a ``str`` never equals it,
so no spelling in a file can name one (issue 29: a declared ``unk__0@1[]``
used to be "equal" to the renamed ``unk__0`` of a run).

At the boundary with ONNX's shape inference, which only knows strings,
``Encoding`` replaces every ``dim_param`` given to a run by a short name of
its own (``s0``, ``s1``...; ONNX makes up ``unk__N`` only) and maps the
run's result back: a short name gives back what it stood for, any other
string is a ``Made`` of that run. The file's strings never reach inference,
so their length costs nothing per node (memory bounded by the file).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import onnx

from . import shapes
from .shapes import Dim, Made, Shape

__all__ = ["Encoding", "Made", "Renamer", "type_protos"]

_TYPE_ATTRS = (onnx.AttributeProto.TYPE_PROTO, onnx.AttributeProto.TYPE_PROTOS)
_GRAPH_ATTRS = (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)


class Encoding:
    """The short names given to the symbols of one model's inference runs (module doc)."""

    __slots__ = ("_back", "_names")

    def __init__(self) -> None:
        self._names: dict[str | Made, str] = {}
        self._back: dict[str, str | Made] = {}

    def param(self, symbol: str | Made) -> str:
        """The short name standing for ``symbol`` (the same one every time)."""
        name = self._names.get(symbol)
        if name is None:
            name = f"s{len(self._names)}"
            self._names[symbol] = name
            self._back[name] = symbol
        return name

    def back(self, name: str) -> str | Made | None:
        """What a short name stands for; None: not one of this encoding's names."""
        return self._back.get(name)

    def encode(self, tp: onnx.TypeProto) -> None:
        """Every ``dim_param`` in ``tp`` (nested types too) replaced by its short name; an
        empty one cleared: it names nothing (an unknown dim, as onnxruntime reads it), and
        two of them must not become one symbol."""
        for dim in _dims(tp):
            if dim.HasField("dim_param"):
                if dim.dim_param:
                    dim.dim_param = self.param(str(dim.dim_param))
                else:
                    dim.ClearField("dim_param")

    def encode_model(self, model: onnx.ModelProto, free: bool, main_inputs: bool) -> None:
        """Encode every type of ``model`` in place: graph inputs, outputs and value_info
        of every graph, function value_info, TYPE_PROTO attributes; the main graph's
        inputs only with ``main_inputs`` (a call site's are encoded when written). With ``free``, an
        unknown dim of a main-graph input gets a fresh ``Made`` symbol (an unknown dim
        is any size, so is a symbol appearing nowhere else; named, inference propagates
        it: ``Sigmoid(x)`` keeps x's dims)."""
        for tp in type_protos(model, main_inputs):
            self.encode(tp)
        fresh = 0  # after encoding: a short name is never encoded twice
        if free:
            for vi in model.graph.input:
                for dim in _dims(vi.type):
                    if not dim.HasField("dim_value") and not dim.dim_param:
                        dim.dim_param = self.param(Made("free", str(fresh)))
                        fresh += 1


def _dims(tp: onnx.TypeProto) -> Iterator[onnx.TensorShapeProto.Dimension]:
    """The dims of a type and of the types nested in it (sequence, optional, map)."""
    stack = [tp]
    while stack:
        t = stack.pop()
        which = t.WhichOneof("value")
        if which in ("tensor_type", "sparse_tensor_type"):
            inner = getattr(t, which)
            if inner.HasField("shape"):
                yield from inner.shape.dim
        elif which == "sequence_type":
            stack.append(t.sequence_type.elem_type)
        elif which == "optional_type":
            stack.append(t.optional_type.elem_type)
        elif which == "map_type":
            stack.append(t.map_type.value_type)


def type_protos(model: onnx.ModelProto, main_inputs: bool = True) -> Iterator[onnx.TypeProto]:
    """Every TypeProto of a model, in every graph and function (iteratively); those of
    the main graph's inputs only with ``main_inputs``."""
    main = model.graph
    graphs = [main]
    bodies: list[list[onnx.NodeProto]] = []
    for func in model.functions:
        yield from (vi.type for vi in func.value_info)
        bodies.append(list(func.node))
    while graphs or bodies:
        if graphs:
            g = graphs.pop()
            inputs = g.input if main_inputs or g is not main else ()
            yield from (vi.type for vi in (*inputs, *g.output, *g.value_info))
            bodies.append(list(g.node))
            continue
        for node in bodies.pop():
            for attr in node.attribute:
                if attr.type in _TYPE_ATTRS:
                    if attr.HasField("tp"):
                        yield attr.tp
                    yield from attr.type_protos
                elif attr.type in _GRAPH_ATTRS:
                    graphs.extend([attr.g] if attr.type == onnx.AttributeProto.GRAPH else [])
                    graphs.extend(attr.graphs)


@dataclass(frozen=True)
class Renamer:
    """Dims of one inference run's result, back in the checker's namespaces.

    A short name of ``encoding`` gives back its symbol; any other string was
    made up by this run (ONNX's ``unk__N``, fresh in every run: issue 21,
    class 2) and becomes ``Made(tag, name)``, ``tag`` naming the run and graph.
    """

    encoding: Encoding
    tag: str

    def dim(self, d: Dim) -> Dim:
        if not isinstance(d, str):
            return d
        known = self.encoding.back(d)
        return known if known is not None else Made(self.tag, d)

    def shape(self, tp: onnx.TypeProto | None) -> Shape:
        if tp is None or tp.WhichOneof("value") != "tensor_type":
            return None
        tt = tp.tensor_type
        if not tt.HasField("shape"):
            return None
        return tuple(
            self.dim(shapes.dim_of(d)) for d in tt.shape.dim
        )  # via the module: tests plant faults there
