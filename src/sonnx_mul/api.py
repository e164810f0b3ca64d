"""``mul``: the certified Mul operator on numpy arrays."""

from __future__ import annotations

import contextvars
from collections.abc import Mapping
from types import MappingProxyType

import numpy as np

from . import arena
from .dtypes import ALL_TYPES, DEFAULT_OPSET, MAX_KNOWN_OPSET, allowed_types
from .fastpath import (
    IGNORE_ALL,
    PARALLEL_MIN_ELEMENTS,
    QUIET_STATE,
    checked_product,
    multiply_into,
    quiet_multiply,
)
from .validation import check_call, check_out


def _lane(floats: bool) -> Mapping[int, frozenset[int]]:
    """Opsets allowing each type, by id of its native dtype object.

    Keying by id is safe: the table holds no dtype, but ``dtypes`` keeps every
    profile dtype alive for the life of the process, so no other object can
    take their ids; an equal dtype that is another object only misses the lane.
    """
    lane: dict[int, set[int]] = {}
    for opset in range(1, MAX_KNOWN_OPSET + 1):
        for etype in allowed_types(opset):
            if etype.is_float == floats:
                lane.setdefault(id(etype.dtype), set()).add(opset)
    return MappingProxyType({key: frozenset(opsets) for key, opsets in lane.items()})


_FLOAT_LANE = _lane(floats=True)
_INT_LANE = _lane(floats=False)
_NDARRAY = np.ndarray
_MULTIPLY = np.multiply
_WRAP, _ERROR = "wrap", "error"
"""Identity tests against these interned strings are the fast mode check; an
equal string that is another object (built at run time) takes the full checks."""
_DEFAULT_OPSET = DEFAULT_OPSET
"""``opset is _DEFAULT_OPSET`` is true for the int 14 only (CPython caches small ints)."""
if QUIET_STATE is not None:
    _QUIET_CONTEXT = contextvars.copy_context()
    _QUIET_CONTEXT.run(QUIET_STATE.set, IGNORE_ALL)
    """A context where numpy ignores IEEE exceptions: ``run`` in it costs less
    than setting and resetting the state around each small product. One
    thread at a time can enter it; the others take quiet_multiply (the same
    product, the state set and reset). numpy reads no other context variable
    while it multiplies plain arrays."""
    _INLINE_MAX = PARALLEL_MIN_ELEMENTS
    """Below this size the plain lane multiplies inline; from it on, in threads."""
else:  # pragma: no cover - other numpy layouts: every product through quiet_multiply
    _INLINE_MAX = 0


def _plain_out(out: object, a: np.ndarray, b: np.ndarray) -> bool:
    """out is clearly valid: C1-OUT holds without the full check_out."""
    return (
        type(out) is _NDARRAY
        and out.dtype is a.dtype
        and out.shape == a.shape
        and out.flags.writeable
        and out.flags.c_contiguous  # hence no element overlaps another
        and (out is a or not np.may_share_memory(out, a))
        and (out is b or not np.may_share_memory(out, b))
    )


if not all(etype in allowed_types(DEFAULT_OPSET) for etype in ALL_TYPES):
    raise AssertionError("the fast lane assumes the default opset allows every profile type")


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
    are never modified unless one of them is ``out``.
    """
    # The plain call (plain ndarrays, same native dtype object, same shape
    # without zero dims, a type the opset allows, wrap or float, out absent
    # or clearly valid) is decided from metadata in a few hundred
    # nanoseconds: this lane is the per-call overhead of every small Mul of
    # a network. Anything else goes through the full checks, which also
    # raise the precise errors. Both end in the same multiply.
    if (
        type(a) is _NDARRAY
        and type(b) is _NDARRAY
        and (dtype := a.dtype) is b.dtype
        and a.shape == b.shape
        and (size := a.size)
        and (opset is _DEFAULT_OPSET or type(opset) is int)  # not True, not 14.0
    ):
        if (floats := _FLOAT_LANE.get(id(dtype))) is not None:
            if (opset is _DEFAULT_OPSET or opset in floats) and (
                overflow is _WRAP or overflow is _ERROR
            ):
                if out is None:
                    if size < _INLINE_MAX:
                        # out=... makes a ufunc return a 0-d array, not a scalar.
                        try:
                            return _QUIET_CONTEXT.run(_MULTIPLY, a, b, out=..., order="C")
                        except RuntimeError:  # the context is entered by another thread
                            pass
                    return quiet_multiply(a, b)
                if _plain_out(out, a, b):
                    return quiet_multiply(a, b, out)
        elif (
            (ints := _INT_LANE.get(id(dtype))) is not None
            and (opset is _DEFAULT_OPSET or opset in ints)
            and overflow is _WRAP
        ):
            if out is None:
                if size < _INLINE_MAX:  # integers raise no IEEE flags
                    return _MULTIPLY(a, b, out=..., order="C")  # type: ignore[no-any-return]
                return quiet_multiply(a, b)
            if _plain_out(out, a, b):
                return quiet_multiply(a, b, out)

    a, b, etype = check_call(a, b, opset, overflow)
    if out is None and overflow == "error" and not etype.is_float:
        return checked_product(a, b, etype)  # one pass, nothing but the result kept
    result = arena.fresh(a.shape, etype.dtype)[0] if out is None else check_out(out, a, b, etype)
    multiply_into(a, b, result, etype, overflow)
    return result
