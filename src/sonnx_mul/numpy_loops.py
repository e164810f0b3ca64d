"""numpy's multiply loops behind the native kernel's contract: for diagnosis only.

Selected only by ``SONNX_MUL_KERNEL=numpy`` in the environment at import
(``sonnx_mul.kernel``), never by default and never as a fallback: the code
that runs in production is the proved C kernel (``sonnx_mul._native``).
This module lets an engineer tell a fault of the native build from a fault
of the caller, and it is the second, dissimilar implementation of the
back-to-back tests (``tests/operator/test_native.py``).

``multiply(a, b, out, checked)`` has the contract of
``sonnx_mul._native.multiply``: the arguments passed validation; returns
``out`` filled, or a new C-ordered native array; with ``checked`` on an
integer type, returns the first overflowing flat index in C order instead,
having written nothing.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from .dtypes import ElementType, element_type
from .oracle.softfloat import quiet_nan


def multiply(
    a: np.ndarray, b: np.ndarray, out: np.ndarray | None, checked: bool
) -> np.ndarray | int:
    """C = A * B with numpy's loops, whatever ``np.seterr`` says; NaN products canonical."""
    etype = element_type(a.dtype)
    if etype is None:
        raise TypeError(f"sonnx_mul.numpy_loops: no loop for {a.dtype}")
    if checked and not etype.is_float:
        index = first_overflow_index(a, b, etype)
        if index >= 0:
            return index
    result: np.ndarray = np.empty(a.shape, etype.dtype) if out is None else out
    with np.errstate(all="ignore"):
        np.multiply(a, b, out=result)
    if etype.is_float:
        _canonical_nans(result, etype)
    return result


def _canonical_nans(result: np.ndarray, etype: ElementType) -> None:
    """Every NaN of ``result`` becomes the canonical NaN (the kernel's NaN rule)."""
    nan = np.isnan(result)
    if nan.any():
        result[nan] = np.array(quiet_nan(etype.eb, etype.sb), etype.uint_view).view(etype.dtype)


OVERFLOW_CHUNK = 1 << 15
"""Elements per block of the overflow test: a block and its temporaries stay in cache."""


def c_order_blocks(
    a: np.ndarray, b: np.ndarray, etype: ElementType
) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """(flat C index of the first element, block of A, block of B), in C order.

    Blocks are 1-d, native, at most OVERFLOW_CHUNK elements. C-contiguous
    native operands are sliced; any other layout or byte order goes through
    a buffered numpy iterator, which gathers one block at a time: never a
    copy of a whole operand.
    """
    if a.flags.c_contiguous and b.flags.c_contiguous and a.dtype.isnative and b.dtype.isnative:
        flat_a, flat_b = a.reshape(-1), b.reshape(-1)
        for start in range(0, flat_a.size, OVERFLOW_CHUNK):
            yield (
                start,
                flat_a[start : start + OVERFLOW_CHUNK],
                flat_b[start : start + OVERFLOW_CHUNK],
            )
        return
    blocks = np.nditer(
        [a, b],
        flags=["external_loop", "buffered"],
        op_flags=[["readonly"], ["readonly"]],
        op_dtypes=[etype.dtype, etype.dtype],
        casting="equiv",
        order="C",
        buffersize=OVERFLOW_CHUNK,
    )
    start = 0
    for block_a, block_b in blocks:
        yield start, block_a, block_b
        start += block_a.size


def first_overflow_index(a: np.ndarray, b: np.ndarray, etype: ElementType) -> int:
    """The first flat (C order) index whose exact product leaves the type's range, or -1.

    Exact for every width, vectorized. First the corner bound of the whole
    tensors (four reductions, no copy, any layout); when it fails, block by
    block (``c_order_blocks``): a block whose corner bound holds is clean
    (four reductions on data already in cache), the others get the exact
    element-wise test. Temporaries have OVERFLOW_CHUNK elements, not the
    tensor's size, for every layout. The arithmetic facts it relies on are
    proved in ``why3/overflow.mlw`` on these expressions.
    """
    if _products_bounded(a, b, etype):
        return -1
    for start, block_a, block_b in c_order_blocks(a, b, etype):
        if _products_bounded(block_a, block_b, etype):
            continue
        overflow = _overflow_mask(block_a, block_b, etype)
        if overflow is not None:
            return start + int(np.argmax(overflow))
    return -1


def _products_bounded(a: np.ndarray, b: np.ndarray, etype: ElementType) -> bool:
    """True when no element-wise product can leave the type's range.

    Every a[i] * b[i] lies between the smallest and the largest product of
    the corners of [min a, max a] x [min b, max b] (the product is bilinear),
    computed exactly in Python ints. Four fast reductions then settle the
    common case; when the bound fails the exact element-wise test decides.
    """
    lo_a, hi_a = int(_MIN(a, axis=None)), int(_MAX(a, axis=None))
    lo_b, hi_b = int(_MIN(b, axis=None)), int(_MAX(b, axis=None))
    corners = (lo_a * lo_b, lo_a * hi_b, hi_a * lo_b, hi_a * hi_b)
    return etype.lo <= min(corners) and max(corners) <= etype.hi


_MIN, _MAX = np.minimum.reduce, np.maximum.reduce


def _overflow_mask(a: np.ndarray, b: np.ndarray, etype: ElementType) -> np.ndarray | None:
    """Where a * b overflows (None when nowhere), for 1-d blocks.

    Up to 32 bits the product is formed in a 64-bit type where it cannot
    overflow, and min/max decide quickly that a block is clean. For 64-bit
    types, where numpy has no wider type, |a| * |b| <= limit is decided as
    |b| <= limit // |a| on unsigned 64-bit magnitudes.
    """
    if etype.bits <= 32:
        product = np.multiply(a, b, dtype=np.int64 if etype.signed else np.uint64)
        if product.min() >= etype.lo and product.max() <= etype.hi:
            return None
        outside: np.ndarray = (product < etype.lo) | (product > etype.hi)
        return outside
    if etype.signed:
        # np.abs(int64 min) wraps to itself, whose uint64 value is 2**63: exact.
        mag_a = np.abs(a).astype(np.uint64)
        mag_b = np.abs(b).astype(np.uint64)
        negative = np.signbit(a) != np.signbit(b)
        limit = np.where(negative, np.uint64(2**63), np.uint64(2**63 - 1))
        overflow = mag_b > limit // np.maximum(mag_a, np.uint64(1))
    else:
        ua = a.astype(np.uint64, copy=False)
        overflow = b > np.uint64(2**64 - 1) // np.maximum(ua, np.uint64(1))
    return overflow if bool(overflow.any()) else None
