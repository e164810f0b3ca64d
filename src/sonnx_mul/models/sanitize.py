"""Structural hygiene before shape inference: payloads, recursion, opset imports.

* Tensor payloads, long strings and doc strings are cleared (the checker
  judges dims and types only, so a 50 MB weight is not copied again and
  again through shape inference).
* Model-local functions that call themselves, directly or through others,
  make the model invalid (ONNX forbids recursive functions).
* Opset imports must name each domain once: onnxruntime takes the LAST
  default-domain import while a first-wins reader would judge another opset,
  so a duplicate (``""`` and ``"ai.onnx"`` are the same domain) is refused.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import onnx

from .reading import ModelReadError

DEFAULT_DOMAINS = ("", "ai.onnx")

PAYLOAD_LIMIT = 1 << 16
"""Tensor payloads, strings and doc strings longer than this (bytes or elements)
are cleared before shape inference; small integer tensors (shapes, axes) stay."""


def subgraphs(attr: onnx.AttributeProto) -> Iterator[onnx.GraphProto]:
    if attr.type == onnx.AttributeProto.GRAPH:
        yield attr.g
    elif attr.type == onnx.AttributeProto.GRAPHS:
        yield from attr.graphs


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


def strip_payloads(model: onnx.ModelProto) -> None:
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
                graphs.extend(subgraphs(attr))


def function_cycle(model: onnx.ModelProto) -> list[str] | None:
    """A cycle of model-local functions calling each other, or None (iterative DFS)."""
    calls: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for func in model.functions:
        found: set[tuple[str, str]] = set()
        graphs: list[Iterable[onnx.NodeProto]] = [func.node]
        while graphs:
            for node in graphs.pop():
                found.add((node.domain, node.op_type))
                for attr in node.attribute:
                    graphs.extend(g.node for g in subgraphs(attr))
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
