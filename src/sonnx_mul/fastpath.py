"""The numpy fast path: writes C = A * B into a validated output array.

Shown equal to the reference kernel bit for bit by the agreement tests
(``tests/test_agreement.py``); every change here must keep them green.
"""

from __future__ import annotations

import numpy as np

from .dtypes import ElementType
from .errors import IntegerOverflowError


# @relation(F, F-FLOAT, F-WRAP, F-CHECKED, F-LAYOUT, scope=function)
def multiply_into(
    a: np.ndarray, b: np.ndarray, out: np.ndarray, etype: ElementType, overflow: str
) -> None:
    """Write ``a * b`` into ``out`` with the semantics of ``etype`` and ``overflow``.

    Contract: the arguments passed validation. With ``overflow="error"`` on
    an integer type, IntegerOverflowError is raised before ``out`` is
    touched. IEEE exceptions never raise or warn, whatever ``np.seterr`` says:
    inf, NaN and underflow are results, not errors.
    """
    if not etype.is_float and overflow == "error":
        index = first_overflow_index(a, b, etype)
        if index >= 0:
            position = np.unravel_index(index, a.shape)
            raise IntegerOverflowError(index, int(a[position]), int(b[position]), etype.onnx_name)
    with np.errstate(all="ignore"):
        np.multiply(a, b, out=out)


# @relation(F-CHECKED, scope=function)
def first_overflow_index(a: np.ndarray, b: np.ndarray, etype: ElementType) -> int:
    """The first flat (C order) index whose exact product leaves the type's range, or -1.

    Exact for every width: up to 32 bits the product is formed in a 64-bit
    type where it cannot overflow; for 64-bit types, where numpy has no
    wider type, |a| * |b| <= limit is decided as |b| <= limit // |a| on
    unsigned 64-bit magnitudes.
    """
    if etype.bits <= 32:
        wide = np.uint64 if not etype.signed else np.int64
        product = np.multiply(a, b, dtype=wide)
        overflow = (product < etype.lo) | (product > etype.hi)
    elif etype.signed:
        # np.abs(int64 min) wraps to itself, whose uint64 value is 2**63: exact.
        mag_a = np.abs(a).astype(np.uint64)
        mag_b = np.abs(b).astype(np.uint64)
        negative = np.signbit(a) != np.signbit(b)
        limit = np.where(negative, np.uint64(2**63), np.uint64(2**63 - 1))
        overflow = mag_b > limit // np.maximum(mag_a, np.uint64(1))
    else:
        ua = a.astype(np.uint64, copy=False)
        limit = np.uint64(2**64 - 1) // np.maximum(ua, np.uint64(1))
        overflow = b > limit
    if not overflow.any():
        return -1
    return int(np.argmax(np.ascontiguousarray(overflow)))
