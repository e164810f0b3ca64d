"""Declarations versus facts: what the checker may trust in a model's types.

Facts are initializers (their dims and type), Constant nodes, and what the
allow-listed operators' shape inference derives from them and from the main
graph's inputs (facts.py, trusted.py). The main
graph's input types are the checker's *preconditions* (a runtime checks fed
tensors against them; free dims can be bound by the user). Everything else a
model declares — ``value_info``, graph outputs, the inputs of subgraphs — is
a claim: it is removed before shape inference (so it cannot override a fact)
and compared afterwards (``contradiction``); a contradiction makes the model
invalid, never "conforms".

Initializers that are also graph inputs: with IR version >= 4 the runtime
lets the caller override them (onnxruntime does), so the value may have the
initializer's dims OR any dims the input declares: a dim is kept only where
both agree. Before IR 4 they are constants. A declared input type that
contradicts its initializer is refused (onnxruntime refuses it too).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import numpy as np
import onnx

from .reading import ModelReadError
from .sanitize import subgraphs
from .shapes import Shape, fmt, shape_of

MAX_DIM = 2**63 - 1
"""The largest size a binding may give (ONNX dims are int64)."""

GraphKey = tuple[int, ...]
Declared = dict[GraphKey, list[tuple[str, onnx.TypeProto]]]


class ShapeBindingError(ValueError):
    """A ``dims`` / ``input_shapes`` binding does not fit the model's inputs."""


def graphs_with_keys(graph: onnx.GraphProto) -> Iterator[tuple[GraphKey, onnx.GraphProto]]:
    """Every graph with its structural key (node, attribute, graph indices), iteratively."""
    stack: list[tuple[GraphKey, onnx.GraphProto]] = [((), graph)]
    while stack:
        key, g = stack.pop()
        yield key, g
        for i, node in enumerate(g.node):
            for j, attr in enumerate(node.attribute):
                for k, sub in enumerate(subgraphs(attr)):
                    stack.append(((*key, i, j, k), sub))


def strip_declarations(model: onnx.ModelProto) -> Declared:
    """Remove value_info, output types and subgraph input types; return them by graph."""
    declared: Declared = {}
    for key, g in graphs_with_keys(model.graph):
        entries = [(vi.name, _copy(vi.type)) for vi in g.value_info]
        entries += [(vi.name, _copy(vi.type)) for vi in g.output if vi.HasField("type")]
        g.ClearField("value_info")
        for vi in g.output:
            vi.ClearField("type")
        if key:  # a subgraph: its inputs are claims too (the main graph's are preconditions)
            entries += [(vi.name, _copy(vi.type)) for vi in g.input if vi.HasField("type")]
            for vi in g.input:
                vi.ClearField("type")
        if entries:
            declared[key] = entries
    return declared


def _copy(tp: onnx.TypeProto) -> onnx.TypeProto:
    out = onnx.TypeProto()
    out.CopyFrom(tp)
    return out


def bind(
    graph: onnx.GraphProto, dims: Mapping[str, int], input_shapes: Mapping[str, Sequence[int]]
) -> None:
    """Fix free dims of the main graph's inputs (``--dim`` / ``--input-shape``), in place."""
    inputs = {vi.name: vi for vi in graph.input}
    symbols = dict(dims)
    for name, given in input_shapes.items():
        if isinstance(given, str | bytes) or not isinstance(given, Sequence | np.ndarray):
            raise ShapeBindingError(f"input shape {name!r}: a sequence of sizes, not {given!r}")
    for name, value in (*dims.items(), *((n, d) for n, s in input_shapes.items() for d in s)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise ShapeBindingError(f"dim {name!r}: a size is an integer, not {value!r}")
        if value < 0:
            raise ShapeBindingError(f"dim {name!r}: a size cannot be negative ({value})")
        if value > MAX_DIM:
            raise ShapeBindingError(
                f"dim {name!r}: a size is at most 2**63-1 (ONNX dims are int64), not {value}"
            )
    for name, given in input_shapes.items():
        vi = inputs.get(name)
        if vi is None or vi.type.WhichOneof("value") != "tensor_type":
            raise ShapeBindingError(f"--input-shape {name}: the model has no tensor input {name!r}")
        declared = shape_of(vi.type.tensor_type)
        if declared is not None:
            if len(declared) != len(given):
                raise ShapeBindingError(
                    f"--input-shape {name}: rank {len(given)}, the input declares {fmt(declared)}"
                )
            for d, g in zip(declared, given, strict=True):
                if isinstance(d, int) and d != g:
                    raise ShapeBindingError(
                        f"--input-shape {name}: {tuple(given)} contradicts {fmt(declared)}"
                    )
                if isinstance(d, str) and symbols.setdefault(d, g) != g:
                    raise ShapeBindingError(
                        f"dim {d!r} bound to both {symbols[d]} and {g} (--input-shape {name})"
                    )
    # Name by name, never a set of every symbol: a symbol may be megabytes long (a copy of
    # each would double the model's memory; issue 29).
    unused = sorted(
        name
        for name in dims
        if not any(d.dim_param == name for vi in graph.input for d in vi.type.tensor_type.shape.dim)
    )
    if unused:
        raise ShapeBindingError(f"--dim {unused[0]}: no input of the model has this dim")
    for vi in graph.input:
        if vi.type.WhichOneof("value") != "tensor_type":
            continue
        tt = vi.type.tensor_type
        if vi.name in input_shapes:
            tt.shape.ClearField("dim")
            for g in input_shapes[vi.name]:
                tt.shape.dim.add().dim_value = g
            continue
        for d in tt.shape.dim:
            if d.HasField("dim_param") and d.dim_param in symbols:
                d.dim_value = symbols[d.dim_param]


def initializer_facts(model: onnx.ModelProto) -> None:
    """Make the main graph's input types agree with their initializers (module doc)."""
    graph = model.graph
    inits = {t.name: t for t in graph.initializer}
    overridable = model.ir_version >= 4
    for vi in graph.input:
        init = inits.get(vi.name)
        if init is None:
            continue
        fact = tuple(int(d) for d in init.dims)
        kind = vi.type.WhichOneof("value")
        tt = vi.type.tensor_type
        declared = shape_of(tt) if kind == "tensor_type" else None
        if kind not in (None, "tensor_type") or (tt.elem_type and tt.elem_type != init.data_type):
            raise ModelReadError(
                f"invalid ONNX model: initializer {vi.name!r} has element type "
                f"{_type_name(init.data_type)}, its graph input declares another type"
            )
        if declared is not None and (
            len(declared) != len(fact)
            or any(isinstance(d, int) and d != f for d, f in zip(declared, fact, strict=True))
        ):
            raise ModelReadError(
                f"invalid ONNX model: initializer {vi.name!r} has shape {fmt(fact)}, "
                f"its graph input declares {fmt(declared)}"
            )
        tt.elem_type = init.data_type
        if overridable and declared is None:
            tt.ClearField("shape")  # a caller may feed any shape
            continue
        tt.shape.ClearField("dim")
        for i, f in enumerate(fact):
            d = tt.shape.dim.add()
            if not overridable or (declared is not None and declared[i] == f):
                d.dim_value = f  # else: unknown, the fed size may differ


def _type_name(elem_type: int) -> str:
    try:
        return str(onnx.TensorProto.DataType.Name(elem_type)).lower()
    except ValueError:
        return f"<element type code {elem_type}>"


def contradiction(declared: onnx.TypeProto, elem_type: int | None, shape: Shape) -> str | None:
    """Why a declared type contradicts the facts (element type, rank, static dims), or None."""
    if declared.WhichOneof("value") != "tensor_type":
        return None
    tt = declared.tensor_type
    if tt.elem_type and elem_type and tt.elem_type != elem_type:
        return f"declared {_type_name(tt.elem_type)}, the model gives {_type_name(elem_type)}"
    claim = shape_of(tt)
    if claim is None or shape is None:
        return None
    if len(claim) != len(shape) or any(
        isinstance(c, int) and isinstance(s, int) and c != s
        for c, s in zip(claim, shape, strict=True)
    ):
        return f"declared shape {fmt(claim)}, the model gives {fmt(shape)}"
    return None
