"""onnx.checker's verdict on the model's structure, without external data.

``onnx.checker.check_model(full_check=False)`` is run on a *skeleton*: a copy
of the model after ``sanitize.strip_payloads`` (small), in which

* a dense tensor whose payload the checker cleared (marked ``STRIPPED``)
  keeps zeros in each field that held data (sanitize's placeholders: as many
  as ``WITNESS_ELEMENTS`` elements need, one less if the original was too
  small for its shape) and gets that many elements (none if its dims
  multiply to zero; negative or overflowing dims stay): onnx.checker judges
  which fields hold data against the type, and their size, as on the
  original, never the cleared values;
* the values and indices of a cleared sparse tensor, and tensors stored as
  external data, get zero elements: onnx.checker would otherwise compare the
  cleared payload with the dims, or open the external file (never done here:
  no file named by a model is opened);
* the default domain spelled ``"ai.onnx"`` (IR.md: the same domain as ``""``;
  onnxruntime accepts both, onnx.checker only ``""``) is spelled ``""``;
* value declarations without a type (a graph input or output with an empty type, or
  a tensor type without shape) get a placeholder type: onnx.checker
  requires them, onnxruntime does not, and the checker ignores every such
  declaration anyway (declared.py).

Anything else onnx.checker rejects — duplicate functions, undefined inputs,
bad attributes, unknown IR or opset versions, ... — makes the model invalid
(``ModelReadError``, exit 2).
"""

from __future__ import annotations

from collections.abc import Iterable

import onnx
import onnx.checker

from .reading import ModelReadError
from .sanitize import STRIPPED, WITNESS_ELEMENTS, subgraphs

_TENSOR_ATTRS = (onnx.AttributeProto.TENSOR, onnx.AttributeProto.TENSORS)
_SPARSE_ATTRS = (onnx.AttributeProto.SPARSE_TENSOR, onnx.AttributeProto.SPARSE_TENSORS)
_GRAPH_ATTRS = (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)


_INT64_MAX = (1 << 63) - 1
_PAYLOADS = ("raw_data", "float_data", "int32_data", "string_data", "int64_data",
             "double_data", "uint64_data")  # fmt: skip


def _empty(t: onnx.TensorProto) -> None:
    """Zero elements instead of a cleared or external payload (module doc)."""
    if t.data_location == onnx.TensorProto.EXTERNAL or t.doc_string == "sonnx-mul:stripped":
        t.ClearField("external_data")
        t.ClearField("data_location")
        for field in _PAYLOADS:
            t.ClearField(field)
        del t.dims[:]
        t.dims.append(0)


def _one_element(t: onnx.TensorProto) -> None:
    """A cleared payload's placeholders judged as WITNESS_ELEMENTS elements (module doc;
    dims onnx.checker refuses stay as they are); else _empty."""
    if t.data_location == onnx.TensorProto.EXTERNAL or t.doc_string != STRIPPED:
        _empty(t)
        return
    count = 1
    for d in t.dims:
        count *= int(d)
    if any(d < 0 for d in t.dims) or count > _INT64_MAX:
        return
    del t.dims[:]
    t.dims.append(WITNESS_ELEMENTS if count else 0)


def _placeholder(vi: onnx.ValueInfoProto) -> None:
    kind = vi.type.WhichOneof("value")
    if kind is None:
        vi.type.tensor_type.elem_type = onnx.TensorProto.FLOAT
        kind = "tensor_type"
    if kind == "tensor_type" and not vi.type.tensor_type.HasField("shape"):
        vi.type.tensor_type.shape.SetInParent()


def skeleton(model: onnx.ModelProto) -> onnx.ModelProto:
    """The copy onnx.checker is run on (module doc); ``model`` is already stripped.

    One pass over every graph and function body (iterative)."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    for imports in (copy.opset_import, *(f.opset_import for f in copy.functions)):
        for op in imports:
            if op.domain == "ai.onnx":
                op.domain = ""
    graphs = [copy.graph]
    bodies: list[Iterable[onnx.NodeProto]] = [f.node for f in copy.functions]
    while graphs or bodies:
        if graphs:
            g = graphs.pop()
            for t in g.initializer:
                _one_element(t)
            for sp in g.sparse_initializer:
                _empty(sp.values)
                _empty(sp.indices)
            for vi in (*g.input, *g.output, *g.value_info):
                _placeholder(vi)
            bodies.append(g.node)
            continue
        for node in bodies.pop():
            if node.domain == "ai.onnx":
                node.domain = ""
            for attr in node.attribute:
                kind = attr.type
                if kind in _TENSOR_ATTRS:
                    for t in (attr.t, *attr.tensors):
                        _one_element(t)
                elif kind in _SPARSE_ATTRS:
                    for sp in (attr.sparse_tensor, *attr.sparse_tensors):
                        _empty(sp.values)
                        _empty(sp.indices)
                elif kind in _GRAPH_ATTRS:
                    graphs.extend(subgraphs(attr))
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
