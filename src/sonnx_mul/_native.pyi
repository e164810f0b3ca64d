"""The proved C kernel behind a thin numpy glue (src/sonnx_mul/_native.c)."""

import numpy as np

BUILD_FLAGS: str
"""The complete compile command of the kernel and its glue (pinned IEEE flags last)."""
COMPILER: str
"""The compiler that built the module, with its version (``gcc 12.2.0``)."""
FLT_EVAL_METHOD: int
"""C's FLT_EVAL_METHOD at build time; 0 (float expressions in their own type) is required."""
GIL_RELEASE_MIN_ELEMENTS: int
"""From this many elements on, the GIL is released around the kernel's loop."""
STREAM8_MIN_ELEMENTS: int
"""From this many elements in one kernel call, int8/uint8 wrap runs the streaming
hardware loop (native/hw/sonnx_mul_stream8.c) in the avx2/avx512 variants; 0 when
this build has none."""

def multiply(
    a: np.ndarray, b: np.ndarray, out: np.ndarray | None, checked: bool, isa: str = ..., /
) -> np.ndarray | int:
    """C = A * B into ``out``, or into a new C-ordered native array; returns it.

    With ``checked`` on an integer type, when a product does not fit, returns
    the first overflowing flat index in C order instead, having written
    nothing. TypeError/ValueError, nothing written, when a precondition of
    the kernel fails (not one of the 12 element types, different types or
    shapes, an empty array, an ``out`` of another type, read-only, or
    sharing memory with A or B without being exactly A or B).

    ``isa`` (``"portable"``, ``"avx2"``, ``"avx512"``) runs that variant of the
    kernel instead of the one selected at import (ValueError when this CPU
    cannot run it).
    """

def plain(
    a: object, b: object, out: object, opset: object, overflow: object, default_opset: int, /
) -> np.ndarray | int | None:
    """``mul``'s plain lane in one call: when ``a``, ``b`` (and ``out`` unless None)
    are exactly ``numpy.ndarray``, ``out`` C-contiguous, ``opset`` exactly an int
    equal to ``default_opset`` and ``overflow`` exactly the str ``"wrap"`` or
    ``"error"`` (by value), ``multiply(a, b, out, overflow == "error")`` on the
    variant in use, and what it returns; None, nothing written, when one of these
    does not hold or ``multiply`` refuses the arrays (TypeError/ValueError)."""

def isa() -> str:
    """The variant ``multiply`` runs: ``portable`` (SSE2), ``avx2`` or ``avx512``
    (the proved sources built for those ISAs, float16 by the F16C hardware loop);
    chosen at import: ``SONNX_MUL_ISA`` or the widest the CPU supports."""

def isas() -> tuple[str, ...]:
    """The variants this build has and this CPU can run, portable first."""

def kind(dtype: np.dtype, /) -> str | None:
    """The kernel's name of a dtype's element type (``"int8"``, ``"bfloat16"``...), or None."""
