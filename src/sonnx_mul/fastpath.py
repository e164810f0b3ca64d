"""The numpy fast path: writes C = A * B into a validated output array.

Shown equal to the reference kernel bit for bit by the agreement tests
(``tests/operator/test_agreement.py``); every change here must keep them green.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Iterator
from contextvars import ContextVar

import numpy as np

from . import arena
from .dtypes import ElementType
from .errors import IntegerOverflowError

# IEEE exceptions (overflow, invalid, underflow) are results here, never
# warnings or errors, whatever np.seterr says. np.errstate costs about a
# microsecond per call, several times a 16-element multiply, so the "ignore
# all" state is set through the context variable np.errstate itself uses
# (numpy >= 2.0); tests/operator/test_fastpath.py checks both ways agree.
QUIET_STATE: ContextVar[object] | None
IGNORE_ALL: object = None
try:
    from numpy._core import _ufunc_config

    QUIET_STATE = _ufunc_config._extobj_contextvar  # type: ignore[attr-defined]
    with np.errstate(all="ignore"):
        IGNORE_ALL = QUIET_STATE.get()
except (ImportError, AttributeError):  # pragma: no cover - other numpy layouts
    QUIET_STATE = None


PARALLEL_MIN_ELEMENTS = 1 << 21
"""From this size on, C-contiguous products are split over threads (measured in BENCHMARKS.md)."""

_THREADS = min(os.cpu_count() or 1, 8)


def quiet_multiply(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``np.multiply(a, b)`` into ``out`` or a new C-ordered array, IEEE exceptions ignored.

    Large C-contiguous operands are cut into one contiguous chunk per core,
    multiplied by threads (numpy releases the GIL), so that the page faults
    of a fresh output and the memory traffic are shared. Element-wise
    multiplication has no cross-element dependency: the bits are the same.
    """
    if out is None and a.nbytes >= arena.MIN_BYTES:
        out, recycled = arena.fresh(a.shape, a.dtype.newbyteorder("="))
        if recycled:  # no page fault to share: one thread, no wait on another
            return _quiet_multiply(a, b, out)
    if a.size >= PARALLEL_MIN_ELEMENTS and _THREADS > 1:
        if out is None:
            out = np.empty(a.shape, dtype=a.dtype.newbyteorder("="))
        if _all_c_contiguous(a, b, out):
            _threaded_multiply(a.reshape(-1), b.reshape(-1), out.reshape(-1))
            return out
    return _quiet_multiply(a, b, out)


def _quiet_multiply(a: np.ndarray, b: np.ndarray, out: np.ndarray | None) -> np.ndarray:
    result: np.ndarray
    if QUIET_STATE is None:
        with np.errstate(all="ignore"):
            result = np.multiply(a, b, out=... if out is None else out, order="C")
        return result
    token = QUIET_STATE.set(IGNORE_ALL)
    try:
        result = np.multiply(a, b, out=... if out is None else out, order="C")
    finally:
        QUIET_STATE.reset(token)
    return result


def _all_c_contiguous(*arrays: np.ndarray) -> bool:
    return all(x.flags.c_contiguous for x in arrays)


def _threaded_multiply(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """One contiguous chunk per core, the first in this thread; leaves once every worker ended.

    Workers write only after every one of them has started (``go``), and
    this function leaves only after joining all of them, even when an
    asynchronous exception (KeyboardInterrupt) hits the calling thread: then
    no worker writes if it came while they were being started, else they all
    finish and the exception propagates after. So nothing writes into
    ``out`` once this function has left, and ``out`` is either untouched or
    completely written (README, SECURITY.md).
    """
    bounds = [a.size * k // _THREADS for k in range(_THREADS + 1)]
    errors: list[BaseException] = []
    go = threading.Event()
    cancelled = True  # until every worker has started

    def work(lo: int, hi: int) -> None:
        go.wait()
        if cancelled:
            return
        try:
            with np.errstate(all="ignore"):  # error state is per thread
                np.multiply(a[lo:hi], b[lo:hi], out=out[lo:hi])
        except BaseException as err:  # re-raised in the calling thread
            errors.append(err)

    chunks = list(itertools.pairwise(bounds))
    threads = [threading.Thread(target=work, args=chunk) for chunk in chunks[1:]]
    started: list[threading.Thread] = []
    try:
        for thread in threads:
            started.append(thread)  # before start(): an interrupted start() is still joined
            thread.start()
        cancelled = False
        go.set()
        lo, hi = chunks[0]
        with np.errstate(all="ignore"):
            np.multiply(a[lo:hi], b[lo:hi], out=out[lo:hi])
    finally:
        _release_and_join(go, started)
    if errors:
        raise errors[0]


def _release_and_join(go: threading.Event, threads: list[threading.Thread]) -> None:
    """Set ``go`` and join every started thread, through any exception; then re-raise it."""
    pending: BaseException | None = None
    while True:
        try:
            go.set()  # idempotent: retried if interrupted between its flag and its notify
            break
        except BaseException as exc:  # re-raised below
            pending = pending or exc
    for thread in threads:
        while True:
            try:
                thread.join()
                break
            except RuntimeError:  # never started (start() failed or was interrupted):
                break  # it saw `cancelled` and writes nothing
            except BaseException as exc:  # re-raised below
                pending = pending or exc
    if pending is not None:
        raise pending


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
            raise _overflow_error(a, b, etype, index)
    quiet_multiply(a, b, out)


# @relation(F-CHECKED, F-LAYOUT, scope=function)
def checked_product(a: np.ndarray, b: np.ndarray, etype: ElementType) -> np.ndarray:
    """A new C-ordered ``a * b`` of an integer type with ``overflow="error"``.

    When the corner bound of the whole tensors holds (four reductions, any
    layout, no copy) nothing can overflow and the product is the plain one.
    Otherwise block by block in C order: the exact test of the block, then
    its product into the fresh result while the block is in cache; on
    overflow the partly written result is dropped (the caller never sees
    it). Memory: the result plus O(OVERFLOW_CHUNK), for every layout.
    """
    result, _ = arena.fresh(a.shape, etype.dtype)
    if _products_bounded(a, b, etype):
        return quiet_multiply(a, b, result)
    flat = result.reshape(-1)
    for start, block_a, block_b in c_order_blocks(a, b, etype):
        if not _products_bounded(block_a, block_b, etype):
            overflow = _overflow_mask(block_a, block_b, etype)
            if overflow is not None:
                raise _overflow_error(a, b, etype, start + int(np.argmax(overflow)))
        np.multiply(block_a, block_b, out=flat[start : start + block_a.size])
    return result


def _overflow_error(
    a: np.ndarray, b: np.ndarray, etype: ElementType, index: int
) -> IntegerOverflowError:
    position = np.unravel_index(index, a.shape)
    return IntegerOverflowError(index, int(a[position]), int(b[position]), etype.onnx_name)


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


# @relation(F-CHECKED, scope=function)
def first_overflow_index(a: np.ndarray, b: np.ndarray, etype: ElementType) -> int:
    """The first flat (C order) index whose exact product leaves the type's range, or -1.

    Exact for every width, vectorized. First the corner bound of the whole
    tensors (four reductions, no copy, any layout); when it fails, block by
    block (``c_order_blocks``): a block whose corner bound holds is clean
    (four reductions on data already in cache), the others get the exact
    element-wise test. Temporaries have OVERFLOW_CHUNK elements, not the
    tensor's size, for every layout.
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
