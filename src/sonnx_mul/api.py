"""``mul``: the certified Mul operator on numpy arrays."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import numpy as np

from .dtypes import DEFAULT_OPSET, MAX_KNOWN_OPSET, ElementType, allowed_types
from .fastpath import (
    IGNORE_ALL,
    PARALLEL_MIN_ELEMENTS,
    QUIET_STATE,
    checked_product,
    multiply_into,
    quiet_multiply,
)
from .validation import check_call, check_out


# @relation(C1, C1-RESULT, F-NOLOSS, scope=function)
def mul(
    a: np.ndarray,
    b: np.ndarray,
    *,
    out: np.ndarray | None = None,
    opset: int = DEFAULT_OPSET,
    overflow: str = "wrap",
) -> np.ndarray:
    """C = A * B element-wise under the SONNX Mul profile (R1–R4, C1, F).

    ``a`` and ``b`` are dense ndarrays of the same shape (every dim >= 1,
    rank 0 allowed) and the same element type allowed by ``opset``. Returns
    a new C-contiguous native-order array, or ``out`` filled (``out`` may be
    exactly ``a`` or ``b``). Raises a ProfileError subclass naming the
    violated requirement ids; then nothing has been written. ``a`` and ``b``
    are never modified unless one of them is ``out``.
    """
    # The plain call (native dtype allowed by the opset, same shape without
    # zero dims, wrap or float, out absent or clearly valid) is decided from
    # metadata in a few hundred nanoseconds; anything else goes through the
    # full checks, which also raise the precise errors. Both end in the
    # same multiply.
    if (
        type(a) is np.ndarray
        and type(b) is np.ndarray
        and type(opset) is int
        and (etype := _PLAIN_CALLS.get((id(a.dtype), opset))) is not None
        and b.dtype is a.dtype
        and a.shape == b.shape
        and a.size
        and type(overflow) is str
        and (overflow == "wrap" or (etype.is_float and overflow == "error"))
    ):
        if out is None:
            if a.size >= PARALLEL_MIN_ELEMENTS or QUIET_STATE is None:
                return quiet_multiply(a, b)
            # Small products inline, as quiet_multiply does them: this lane is
            # the per-call overhead of every small Mul of a network. out=...
            # makes a ufunc return a 0-d array, not a scalar, for 0-d operands.
            product: np.ndarray
            if not etype.is_float:
                product = np.multiply(a, b, out=..., order="C")  # integers raise no IEEE flags
                return product
            token = QUIET_STATE.set(IGNORE_ALL)
            try:
                product = np.multiply(a, b, out=..., order="C")
            finally:
                QUIET_STATE.reset(token)
            return product
        if (
            type(out) is np.ndarray
            and out.dtype is a.dtype
            and out.shape == a.shape
            and out.flags.writeable
            and out.flags.c_contiguous  # hence no element overlaps another
            and (out is a or not np.may_share_memory(out, a))
            and (out is b or not np.may_share_memory(out, b))
        ):
            return quiet_multiply(a, b, out)

    a, b, etype = check_call(a, b, opset, overflow)
    if out is None and overflow == "error" and not etype.is_float:
        return checked_product(a, b, etype)  # one pass, nothing but the result kept
    result = np.empty(a.shape, dtype=etype.dtype) if out is None else check_out(out, a, b, etype)
    multiply_into(a, b, result, etype, overflow)
    return result


_PLAIN_CALLS: Mapping[tuple[int, int], ElementType] = MappingProxyType(
    {
        (id(etype.dtype), opset): etype
        for opset in range(1, MAX_KNOWN_OPSET + 1)
        for etype in allowed_types(opset)
    }
)
"""Element types by (id of the native dtype object, opset). Keying by id is
safe: the table holds the dtypes, so no other object can have their ids, and
an equal dtype that is another object only misses this lane."""
