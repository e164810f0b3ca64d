"""Shape inference, whole-model or one graph at a time.

``infer`` runs ONNX shape inference on the whole model: strict first, then
non-strict, then none; the failure text becomes part of every "cannot be
shown" message. Its cost grows with (nested graphs) x (values visible to
them) — each If/Loop/Scan body gets a copy of the outer scope's types — so
20,000 If nodes took minutes. Above FULL_INFERENCE_SUBGRAPHS nested graphs,
``infer_alone`` is used instead, once per graph: the graph's own nodes, its
nested-graph nodes replaced by opaque nodes (outputs unknown), and the outer
names it reads declared as inputs with the types already known. Linear in
the model's size; less precise (outputs of If/Loop/Scan and the inputs of
their bodies are unknown), so never less conservative. Each run makes up
its own ``unk__N`` symbols: symbols.Renamer makes each a ``Made`` of its run
and graph. Every ``dim_param`` given to a run is a short name of the
checker's ``symbols.Encoding`` (the file's own spellings never reach it).
"""

from __future__ import annotations

from collections.abc import Callable

import onnx

from .sanitize import subgraphs

FULL_INFERENCE_SUBGRAPHS = 64
OPAQUE_DOMAIN = "sonnx-mul.opaque"
SPLIT_NOTE = (
    f"the model has more than {FULL_INFERENCE_SUBGRAPHS} nested graphs: each graph was "
    "inferred on its own, so outputs of If/Loop/Scan nodes and inputs of their bodies are unknown"
)


def infer(model: onnx.ModelProto) -> tuple[onnx.ModelProto, str]:
    """Model with inferred value_info, and a note when strict inference failed."""
    try:
        return onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True), ""
    except Exception as exc:  # any inference failure: fall back, never crash
        note = f"strict shape inference failed: {str(exc).strip()}"
    try:
        return onnx.shape_inference.infer_shapes(model), note
    except Exception as exc:
        return model, f"{note}; non-strict inference failed too: {str(exc).strip()}"


def many_subgraphs(graph: onnx.GraphProto) -> bool:
    """More than FULL_INFERENCE_SUBGRAPHS nested graphs (stops counting there)."""
    count = 0
    stack = [graph]
    while stack:
        for node in stack.pop().node:
            for attr in node.attribute:
                for sub in subgraphs(attr):
                    count += 1
                    if count > FULL_INFERENCE_SUBGRAPHS:
                        return True
                    stack.append(sub)
    return False


def infer_alone(
    graph: onnx.GraphProto,
    template: onnx.ModelProto,
    outer: Callable[[str], onnx.TypeProto | None],
) -> tuple[onnx.GraphProto, str]:
    """``graph`` inferred on its own (module doc); same node order as ``graph``.

    ``graph``'s types and ``outer``'s are already encoded (symbols.Encoding)."""
    alone = onnx.ModelProto()
    alone.ir_version = template.ir_version
    alone.opset_import.extend(template.opset_import)
    alone.opset_import.add(domain=OPAQUE_DOMAIN, version=1)
    alone.functions.extend(template.functions)
    g = alone.graph
    g.name = graph.name
    g.input.extend(graph.input)
    g.initializer.extend(graph.initializer)
    g.sparse_initializer.extend(graph.sparse_initializer)
    g.output.extend(graph.output)
    defined = {vi.name for vi in graph.input} | {t.name for t in graph.initializer}
    defined |= {sp.values.name for sp in graph.sparse_initializer}
    free: dict[str, None] = {}
    for node in graph.node:
        if any(attr.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
               for attr in node.attribute):  # fmt: skip
            copy = g.node.add(op_type=node.op_type, domain=OPAQUE_DOMAIN, name=node.name)
            copy.input.extend(node.input)
            copy.output.extend(node.output)
        else:
            g.node.add().CopyFrom(node)
        free.update((name, None) for name in node.input if name and name not in defined)
        defined.update(node.output)
    for name in free:
        if name not in defined:
            vi = g.input.add(name=name)
            tp = outer(name)
            if tp is not None:
                vi.type.CopyFrom(tp)
    own = len(graph.input)
    try:
        result = onnx.shape_inference.infer_shapes(alone).graph
        note = SPLIT_NOTE
    except Exception as exc:
        result, note = g, f"{SPLIT_NOTE}; inference failed: {str(exc).strip()}"
    del result.input[own:]  # the outer names: their facts are the outer scope's, not inputs
    return result, note
