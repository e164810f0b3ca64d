"""Static shapes with symbolic dims, and the R1/R4 decision on two of them.

A dim is an ``int`` (static size), a ``str`` (a ``dim_param`` the file
declares), a ``Made`` (a symbol the checker or one of its inference runs
made up: a type of its own, so no string a file spells can equal it; see
symbols.py) or ``None`` (unknown). Two dims are *known equal* when they are
the same int or the same symbol. Symbol equality relies on these ONNX rules:

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
  so symbols.Renamer makes it a ``Made`` of its run and graph (issues 21, 29).

Unknown dims (``None``) are never known equal, not even to each other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import onnx


@dataclass(frozen=True)
class Made:
    """A symbol the checker made up: equal only to the same ``Made`` (never to a str).

    ``origin`` names what made it (``free``: an unknown main-graph input dim; else
    the inference run and graph, or the function call); ``name`` is its name there.
    """

    origin: str
    name: str

    def __str__(self) -> str:
        return "?" if self.origin == "free" else f"<{self.name}@{self.origin}>"


Dim = int | str | Made | None
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
    if isinstance(a, str | Made) and a == b:  # a str never equals a Made (their types differ)
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


SHOWN_SYMBOL = 64
"""A symbol longer than this is shown abbreviated in messages (issue 29: a message per
Mul node holding a megabyte symbol would multiply the file's memory by the nodes)."""


def _shown(d: Dim) -> str:
    text = "?" if d is None else str(d)
    if len(text) > SHOWN_SYMBOL:
        return f"{text[: SHOWN_SYMBOL // 2]}...({len(text)} characters)"
    return text


def fmt(shape: Shape) -> str:
    if shape is None:
        return "<unknown rank>"
    dims = [_shown(d) for d in shape]
    return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"
