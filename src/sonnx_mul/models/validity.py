"""onnx.checker's verdict on the model's structure, without external data.

``onnx.checker.check_model(full_check=False)`` is run on a *skeleton*: a copy
of the model after ``sanitize.strip_payloads`` (small), in which

* tensors whose payload the checker cleared (marked ``STRIPPED``) and
  tensors stored as external data get zero elements: onnx.checker would
  otherwise compare the cleared payload with the dims, or open the external
  file (never done here: no file named by a model is opened);
* value declarations without a type (a graph input or output with an empty type, or
  a tensor type without shape) get a placeholder type: onnx.checker
  requires them, onnxruntime does not, and the checker ignores every such
  declaration anyway (declared.py).

Anything else onnx.checker rejects — duplicate functions, undefined inputs,
bad attributes, unknown IR or opset versions, ... — makes the model invalid
(``ModelReadError``, exit 2).
"""

from __future__ import annotations

from collections.abc import Iterator

import onnx
import onnx.checker

from .reading import ModelReadError
from .sanitize import subgraphs


def _graphs(model: onnx.ModelProto) -> Iterator[onnx.GraphProto]:
    stack = [model.graph]
    for func in model.functions:
        for node in func.node:
            for attr in node.attribute:
                stack.extend(subgraphs(attr))
    while stack:
        g = stack.pop()
        yield g
        for node in g.node:
            for attr in node.attribute:
                stack.extend(subgraphs(attr))


def _tensors(model: onnx.ModelProto) -> Iterator[onnx.TensorProto]:
    nodes = [n for f in model.functions for n in f.node]
    for g in _graphs(model):
        yield from g.initializer
        for sp in g.sparse_initializer:
            yield from (sp.values, sp.indices)
        nodes.extend(g.node)
    for node in nodes:
        for attr in node.attribute:
            if attr.HasField("t"):
                yield attr.t
            yield from attr.tensors
            sparse = [attr.sparse_tensor] if attr.HasField("sparse_tensor") else []
            for sp in (*sparse, *attr.sparse_tensors):
                yield from (sp.values, sp.indices)


def _placeholder(vi: onnx.ValueInfoProto) -> None:
    kind = vi.type.WhichOneof("value")
    if kind is None:
        vi.type.tensor_type.elem_type = onnx.TensorProto.FLOAT
        kind = "tensor_type"
    if kind == "tensor_type":
        vi.type.tensor_type.shape.SetInParent()


def skeleton(model: onnx.ModelProto) -> onnx.ModelProto:
    """The copy onnx.checker is run on (module doc); ``model`` is already stripped."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    for t in _tensors(copy):
        external = t.data_location == onnx.TensorProto.EXTERNAL
        if external or t.doc_string == "sonnx-mul:stripped":
            t.ClearField("external_data")
            t.ClearField("data_location")
            for field in ("raw_data", "float_data", "int32_data", "string_data", "int64_data",
                          "double_data", "uint64_data"):  # fmt: skip
                t.ClearField(field)
            del t.dims[:]
            t.dims.append(0)
    for g in _graphs(copy):
        for vi in (*g.input, *g.output, *g.value_info):
            _placeholder(vi)
    return copy


def check_structure(model: onnx.ModelProto) -> None:
    """ModelReadError with onnx.checker's message when it rejects the model's structure.

    A default-domain opset outside 1..(onnx's newest) is left to the checker's
    own R3-OPSET rule (a definite violation): onnx.checker cannot judge it.
    """
    default = [int(o.version) for o in model.opset_import if o.domain in ("", "ai.onnx")]
    if any(not 1 <= v <= onnx.defs.onnx_opset_version() for v in default):
        return
    try:
        onnx.checker.check_model(skeleton(model), full_check=False)
    except Exception as exc:  # ValidationError, or the C++ checker's other errors
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ModelReadError(f"invalid ONNX model (onnx.checker): {message}") from None
