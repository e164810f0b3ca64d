"""What is statically known about value names: one scope per graph, chained."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import onnx

from .shapes import Shape

if TYPE_CHECKING:
    from .symbols import Encoding


@dataclass
class Info:
    """What is statically known about one value name."""

    elem_type: int | None = None  # TensorProto.DataType, None when unknown
    shape: Shape = None
    sparse: bool = False
    kind: str = "tensor"  # or "sparse", "sequence", "map", "optional", "unknown"
    cls: int | None = None  # provenance class: the same class is the same shape (facts.py)
    value: bool = False  # the value is owned (small, not overridable): may define shapes


UNKNOWN = Info(kind="unknown")


class Scope:
    """Values of one graph, then of the graphs around it (no copying)."""

    __slots__ = ("local", "parent")

    def __init__(self, local: dict[str, Info], parent: Scope | None) -> None:
        self.local, self.parent = local, parent

    def get(self, name: str) -> Info:
        scope: Scope | None = self
        while scope is not None:
            found = scope.local.get(name)
            if found is not None:
                return found
            scope = scope.parent
        return UNKNOWN

    def type_of(self, name: str, encoding: Encoding) -> onnx.TypeProto | None:
        """The owned facts about ``name`` as a TypeProto (None when not a known tensor),
        its symbols written as ``encoding``'s short names (symbols.py)."""
        info = self.get(name)
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
                elif d is not None:
                    dim.dim_param = encoding.param(d)
        return tp
