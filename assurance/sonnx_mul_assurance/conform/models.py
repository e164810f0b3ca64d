"""The ONNX models a conformance run feeds to a runtime (built with onnx.helper).

- ``single``: one Mul node, inputs ``A`` and ``B`` of shape ``[n]`` (one
  symbolic dim, so one session serves every chunk).
- ``graph``: the same Mul inside a small graph of layout operators (Reshape
  to a row, Mul, Transpose, Reshape back), the shape of real models' Mul
  nodes, where a runtime's graph optimisations may fuse, reorder or pick
  another kernel. The other operators move bits without changing them, so
  the expected output is still ``mul(A, B)`` element for element.
- ``tails``: the ``single`` model, fed short tensors (``run.TAIL_LENGTHS``).
- ``shaped``: a Mul whose inputs have fixed, possibly different shapes, for
  the refusal checks (R1, R4, R1-DIMS).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
from onnx import TensorProto, helper

from sonnx_mul.dtypes import ElementType

IR_VERSION = 10
"""onnxruntime 1.31 refuses the IR version onnx.helper writes by default."""

VARIANTS: tuple[str, ...] = ("single", "graph", "tails")
"""``tails`` is the ``single`` model fed short tensors (lengths 1 to 65, see
``run.TAIL_LENGTHS``), so that every pair also meets a kernel's scalar tail
loop, not only its vector body."""


def tensor_type(etype: ElementType) -> int:
    """The ONNX ``TensorProto`` element type of ``etype``."""
    return int(helper.np_dtype_to_tensor_dtype(etype.dtype))


def _model(graph: onnx.GraphProto, opset: int) -> onnx.ModelProto:
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", opset)],
        producer_name="sonnx-mul conform",
    )
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model)
    return model


def single(etype: ElementType, opset: int) -> onnx.ModelProto:
    """``C = Mul(A, B)`` with ``A``, ``B``, ``C`` of shape ``[n]``."""
    t = tensor_type(etype)
    node = helper.make_node("Mul", ["A", "B"], ["C"], name="the_mul")
    graph = helper.make_graph(
        [node],
        f"mul_{etype.onnx_name}",
        [helper.make_tensor_value_info(x, t, ["n"]) for x in ("A", "B")],
        [helper.make_tensor_value_info("C", t, ["n"])],
    )
    return _model(graph, opset)


def graph(etype: ElementType, opset: int) -> onnx.ModelProto:
    """``C = Reshape(Transpose(Mul(Reshape(A, [1, -1]), Reshape(B, [1, -1]))), [-1])``."""
    t = tensor_type(etype)
    row = helper.make_tensor("row", TensorProto.INT64, [2], [1, -1])
    flat = helper.make_tensor("flat", TensorProto.INT64, [1], [-1])
    nodes = [
        helper.make_node("Reshape", ["A", "row"], ["A_row"], name="a_row"),
        helper.make_node("Reshape", ["B", "row"], ["B_row"], name="b_row"),
        helper.make_node("Mul", ["A_row", "B_row"], ["C_row"], name="the_mul"),
        helper.make_node("Transpose", ["C_row"], ["C_col"], perm=[1, 0], name="to_col"),
        helper.make_node("Reshape", ["C_col", "flat"], ["C"], name="c_flat"),
    ]
    g = helper.make_graph(
        nodes,
        f"mul_in_graph_{etype.onnx_name}",
        [helper.make_tensor_value_info(x, t, ["n"]) for x in ("A", "B")],
        [helper.make_tensor_value_info("C", t, ["n"])],
        initializer=[row, flat],
    )
    return _model(g, opset)


def shaped(
    etype: ElementType, opset: int, shape_a: Sequence[int], shape_b: Sequence[int]
) -> onnx.ModelProto:
    """One Mul with fixed input shapes; the output shape is left to the runtime.

    Not passed through ``onnx.checker`` strict shape inference: a shape the
    profile forbids is exactly what is being offered to the runtime.
    """
    t = tensor_type(etype)
    node = helper.make_node("Mul", ["A", "B"], ["C"], name="the_mul")
    g = helper.make_graph(
        [node],
        f"mul_shapes_{etype.onnx_name}",
        [
            helper.make_tensor_value_info("A", t, list(shape_a)),
            helper.make_tensor_value_info("B", t, list(shape_b)),
        ],
        [helper.make_tensor_value_info("C", t, None)],
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = IR_VERSION
    return model


def build(variant: str, etype: ElementType, opset: int) -> onnx.ModelProto:
    """The model of ``variant`` (one of ``VARIANTS``)."""
    if variant in ("single", "tails"):
        return single(etype, opset)
    if variant == "graph":
        return graph(etype, opset)
    raise ValueError(f"unknown model variant {variant!r}")


def ones(etype: ElementType, shape: Sequence[int]) -> np.ndarray:
    """An array of ones (any value would do) of ``etype`` and ``shape``."""
    return np.ones(tuple(shape), dtype=etype.dtype)
