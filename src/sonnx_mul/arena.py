"""Recycled result buffers for large products (an arena, as onnxruntime keeps one).

From 32 MiB on, glibc gives every block a fresh mapping (its largest mmap
threshold) and returns it to the kernel when freed, so a new result pays a
page fault and a zero fill for every page before numpy writes it: about 45 %
of a 1.6e7 float32 multiply (BENCHMARKS.md). The arena keeps such buffers
once their result is dropped and hands them out again, warm.

Contract of ``fresh``: the array returned is C-contiguous, writeable,
aligned, of the shape and dtype asked, and shares memory with no object
alive when it is returned (its contents are unspecified: the caller writes
every element before anyone else sees it). A buffer is handed out again only
when nothing but the arena refers to it: every array over it (the result,
its views, a memoryview of it) holds a reference to it, and the reference
count is read under a lock, in a build with the GIL (in a free-threaded
build the arena is off). At most ``capacity()`` bytes are kept, buffers in
use included; ``release()`` drops the free ones, ``set_capacity(0)`` turns
the arena off (results then own their memory, as numpy's do).
"""

from __future__ import annotations

import math
import sys
import threading

import numpy as np

MIN_BYTES = 1 << 25
"""Smaller results come from glibc's heap, whose freed pages are reused warm."""

DEFAULT_CAPACITY = 1 << 28
"""256 MiB: the most the arena keeps, in use or free."""

_lock = threading.Lock()
_buffers: list[np.ndarray] = []  # uint8 storage, least recently handed out first
_capacity = DEFAULT_CAPACITY


def _references(buffers: list[np.ndarray], index: int) -> int:
    """The reference count of ``buffers[index]``, always read by this one
    expression, so that the count of an unused buffer is a constant."""
    return sys.getrefcount(buffers[index])


def _unused_count() -> int | None:
    """What ``_references`` reads for a buffer nobody but its list refers to;
    None when reference counts cannot be trusted (a free-threaded build)."""
    if not getattr(sys, "_is_gil_enabled", lambda: True)():
        return None
    return _references([np.empty(1, np.uint8)], 0)


_UNUSED = _unused_count()


def _unused(index: int) -> bool:
    return _references(_buffers, index) == _UNUSED


# @relation(C1-RESULT, scope=function)
def fresh(shape: tuple[int, ...], dtype: np.dtype) -> tuple[np.ndarray, bool]:
    """An uninitialised C-ordered array for a result, and whether it was recycled."""
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes < MIN_BYTES or _UNUSED is None or _capacity == 0:
        return np.empty(shape, dtype), False
    with _lock:
        for index in range(len(_buffers)):
            if _buffers[index].nbytes == nbytes and _unused(index):
                _buffers.append(_buffers.pop(index))
                return _buffers[-1].view(dtype).reshape(shape), True
        if not _make_room(nbytes):
            return np.empty(shape, dtype), False
        buffer = np.empty(nbytes, np.uint8)
        _buffers.append(buffer)
        return buffer.view(dtype).reshape(shape), False


def _make_room(nbytes: int) -> bool:
    """Drop free buffers, least recently used first, until ``nbytes`` more fit."""
    held = sum(b.nbytes for b in _buffers)
    index = 0
    while held + nbytes > _capacity and index < len(_buffers):
        if _unused(index):
            held -= _buffers.pop(index).nbytes
        else:
            index += 1
    return held + nbytes <= _capacity


def held_bytes() -> int:
    """Bytes the arena keeps now, buffers in use included."""
    with _lock:
        return sum(b.nbytes for b in _buffers)


def capacity() -> int:
    return _capacity


def set_capacity(nbytes: int) -> None:
    """The most the arena may keep from now on (0: off); free buffers over it are dropped."""
    global _capacity
    if nbytes < 0:
        raise ValueError("the arena capacity is a number of bytes >= 0")
    with _lock:
        _capacity = nbytes
        _make_room(0)


def release() -> None:
    """Drop every free buffer (the memory goes back to the system)."""
    with _lock:
        for index in reversed(range(len(_buffers))):
            if _unused(index):
                del _buffers[index]
