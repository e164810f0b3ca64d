"""The proved C kernel behind a thin numpy glue (src/sonnx_mul/_native.c)."""

import numpy as np

BUILD_FLAGS: str
"""The complete compile command of the kernel and its glue (pinned IEEE flags last)."""
COMPILER: str
"""The compiler that built the module, with its version (``gcc 12.2.0``)."""
FLT_EVAL_METHOD: int
"""C's FLT_EVAL_METHOD at build time; 0 (float expressions in their own type) is required."""
THREADS_MIN_ELEMENTS: int
"""From this many elements on, the GIL is released around the kernel's loop."""

def multiply(
    a: np.ndarray, b: np.ndarray, out: np.ndarray | None, checked: bool, /
) -> np.ndarray | int:
    """C = A * B into ``out``, or into a new C-ordered native array; returns it.

    With ``checked`` on an integer type, when a product does not fit, returns
    the first overflowing flat index in C order instead, having written
    nothing. TypeError/ValueError, nothing written, when a precondition of
    the kernel fails (not one of the 12 element types, different types or
    shapes, an empty array, an ``out`` of another type, read-only, or
    sharing memory with A or B without being exactly A or B).
    """

def kind(dtype: np.dtype, /) -> str | None:
    """The kernel's name of a dtype's element type (``"int8"``, ``"bfloat16"``...), or None."""
