"""Static shapes with symbolic dims, and the R1/R4 decision on two of them.

A dim is an ``int`` (static size), a ``str`` (a symbolic ``dim_param``) or
``None`` (unknown). Two dims are *known equal* when they are the same int or
the same symbol. Symbol equality relies on these ONNX rules:

* onnx/docs/IR.md, "Tensor shapes": "Currently, dimension variables are not
  scoped. A dimension variable "N" represents the same value across the
  entire graph in a model. For example, if the graph has two inputs X and Y
  each with shape ["N"], then at runtime the values passed in for X and Y
  MUST be tensors of rank 1 with the same dimension. Nested sub-graphs
  currently share the same scope for dimension variables as the
  main-graph." onnxruntime does NOT enforce this: the claim "conforms" holds
  for inputs that obey the declared shapes, and ``sonnx_mul.mul``
  re-checks R1 on the actual arrays at run time.
* The same section: a dim with neither ``dim_value`` nor ``dim_param``
  "represents an unknown dimension unrelated to other unknown dimensions";
  the checker names each such input dim with a fresh symbol (declared.py).
* Symbols in node outputs come only from allow-listed operators (trusted.py)
  whose inference propagates a symbol where the operator's definition makes
  the sizes equal; a fresh ``unk__N`` is fresh only within one inference run,
  so facts.Renamer suffixes it with its run and graph (issue 21).

Unknown dims (``None``) are never known equal, not even to each other.
"""

from __future__ import annotations

from typing import Literal

import onnx

Dim = int | str | None
Shape = tuple[Dim, ...] | None  # None: unknown rank
Same = Literal["equal", "differ", "unknown"]
Broadcast = Literal["yes", "no", "maybe"]


def dim_of(d: onnx.TensorShapeProto.Dimension) -> Dim:
    if d.HasField("dim_value"):
        return int(d.dim_value)
    if d.HasField("dim_param") and d.dim_param:
        return str(d.dim_param)
    return None


def shape_of(tt: onnx.TypeProto.Tensor) -> Shape:
    return tuple(dim_of(d) for d in tt.shape.dim) if tt.HasField("shape") else None


def _dim_equal(a: Dim, b: Dim) -> bool | None:
    """True known equal, False known different, None undecided."""
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    if isinstance(a, str) and a == b:
        return True
    return None


def same_shape(sa: Shape, sb: Shape) -> Same:
    """Whether A and B certainly have the same shape, certainly not, or unknown."""
    if sa is None or sb is None:
        return "unknown"
    if len(sa) != len(sb):
        return "differ"  # ranks are facts: different ranks never match
    verdicts = [_dim_equal(a, b) for a, b in zip(sa, sb, strict=True)]
    if False in verdicts:
        return "differ"
    return "equal" if all(verdicts) else "unknown"


def broadcasts(sa: Shape, sb: Shape) -> Broadcast:
    """Whether numpy-style broadcasting of A and B certainly succeeds, fails, or may."""
    if sa is None or sb is None:
        return "maybe"
    result: Broadcast = "yes"
    for a, b in zip(reversed(sa), reversed(sb), strict=False):
        if _dim_equal(a, b) or a == 1 or b == 1:
            continue
        if isinstance(a, int) and isinstance(b, int):
            return "no"
        result = "maybe"
    return result


def fmt(shape: Shape) -> str:
    if shape is None:
        return "<unknown rank>"
    dims = ["?" if d is None or str(d).startswith("__sonnx_free_") else str(d) for d in shape]
    return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"
