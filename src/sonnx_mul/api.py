"""``mul``: the certified Mul operator on numpy arrays, computed by the proved native kernel."""

from __future__ import annotations

import numpy as np

from . import kernel
from .dtypes import ALL_TYPES, DEFAULT_OPSET, ElementType, allowed_types, element_type
from .errors import IntegerOverflowError
from .validation import check_call, check_out

_NDARRAY = np.ndarray
_MULTIPLY = kernel.multiply
_PLAIN_LANE = kernel.NAME == "native"
"""numpy_loops (diagnosis) does not re-check the kernel's preconditions: full checks only."""
_PLAIN = kernel.plain
_WRAP = "wrap"
_DEFAULT_OPSET = DEFAULT_OPSET
# The plain lane compares values of exact types (``type(x) is int and x == 14``), never
# object identity (issue 29): an equal int or str built at run time (``int("14")``,
# ``"".join(["w", "rap"])``) takes the same lane as a literal, and a bool, an int
# subclass or a numpy integer (which check_arguments refuses) never takes it.

if not all(etype in allowed_types(DEFAULT_OPSET) for etype in ALL_TYPES):
    raise AssertionError("the plain lane assumes the default opset allows every profile type")


# @relation(C1, C1-RESULT, F-NOLOSS, scope=function)
def mul(
    a: np.ndarray,
    b: np.ndarray,
    *,
    out: np.ndarray | None = None,
    opset: int = DEFAULT_OPSET,
    overflow: str = _WRAP,
) -> np.ndarray:
    """C = A * B element-wise under the SONNX Mul profile (R1–R4, C1, F).

    ``a`` and ``b`` are dense ndarrays of the same shape (every dim >= 1,
    rank 0 allowed) and the same element type allowed by ``opset``. Returns
    a new C-contiguous native-order array, or ``out`` filled (``out`` may be
    exactly ``a`` or ``b``). Raises a ProfileError subclass naming the
    violated requirement ids; then nothing has been written. ``a`` and ``b``
    are never modified unless one of them is ``out``. Every element is
    written by one call of the native kernel, which a KeyboardInterrupt
    cannot split: it lands before the call (nothing written) or after it
    (everything written).
    """
    # The plain lane: the per-call overhead of every small Mul of a network.
    # One native call (sonnx_mul._native.plain) checks what the kernel's glue
    # does not (exact ndarray types, the default opset and a mode, compared
    # by value as exact int and str, an out that is C-contiguous and so
    # cannot overlap itself) and runs the glue, which refuses, writing
    # nothing, whatever else the full checks would refuse (element types,
    # shapes, zero dims, out's dtype, shape, writeability and overlap with A
    # or B); it then returns None, and the full checks below raise the
    # precise ProfileError. tests/operator/test_plain_lane.py and
    # test_lane_agreement.py (a property over layouts, byte orders, views,
    # opsets and equal-but-not-identical arguments) show both lanes give one answer.
    if _PLAIN is not None:
        result = _PLAIN(a, b, out, opset, overflow, _DEFAULT_OPSET)
        if type(result) is _NDARRAY:
            return result
        if result is not None:  # the first overflow's flat index
            raise _overflow_error(a, b, int(result))
    return checked_mul(a, b, out, opset, overflow)


def checked_mul(a: object, b: object, out: object, opset: object, overflow: object) -> np.ndarray:
    """``mul`` through every check of validation.py, then one call of the kernel.

    The lane every call can take; ``mul``'s plain lane is a shortcut that
    returns only what this function returns (same bits) and otherwise
    defers to it.
    """
    a, b, etype = check_call(a, b, opset, overflow)
    target = None if out is None else check_out(out, a, b, etype)
    result = _MULTIPLY(a, b, target, overflow == "error" and not etype.is_float)
    if type(result) is int:
        raise _overflow_error(a, b, result, etype)
    return result  # type: ignore[return-value]


def _overflow_error(
    a: np.ndarray, b: np.ndarray, index: int, etype: ElementType | None = None
) -> IntegerOverflowError:
    etype = etype or element_type(a.dtype)
    assert etype is not None  # the kernel found an overflow: an integer type of the profile
    position = np.unravel_index(index, a.shape)
    return IntegerOverflowError(index, int(a[position]), int(b[position]), etype.onnx_name)
