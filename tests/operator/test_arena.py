"""Recycled result buffers (sonnx_mul.arena): a result shares memory with
nothing alive, whatever still refers to an earlier result, from any thread."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from sonnx_mul import IntegerOverflowError, arena, mul
from support import assert_same_bits

N = arena.MIN_BYTES // 4  # the smallest float32 / int32 result the arena keeps


@pytest.fixture(autouse=True)
def clean_arena() -> Iterator[None]:
    arena.release()
    yield
    arena.set_capacity(arena.DEFAULT_CAPACITY)
    arena.release()


def operands(seed: int, dtype: type = np.float32, n: int = N) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-1000, 1000, n, dtype=dtype), rng.integers(-1000, 1000, n, dtype=dtype)
    return rng.standard_normal(n).astype(dtype), rng.standard_normal(n).astype(dtype)


def address(x: np.ndarray) -> int:
    return int(x.__array_interface__["data"][0])


def test_C1_RESULT_a_dropped_result_is_recycled_and_exact() -> None:
    a, b = operands(1)
    first = mul(a, b)
    where = address(first)
    assert arena.held_bytes() == arena.MIN_BYTES
    del first
    c, d = operands(2)
    second = mul(c, d)  # the same buffer, every element written again
    assert address(second) == where
    assert second.flags.c_contiguous and second.flags.writeable and second.flags.aligned
    assert_same_bits(second, np.multiply(c, d))
    assert arena.held_bytes() == arena.MIN_BYTES


# Everything that keeps an earlier result's memory reachable.
HOLDERS: dict[str, Callable[[np.ndarray], object]] = {
    "the result": lambda r: r,
    "a strided view": lambda r: r[::3],
    "a reshaped view": lambda r: r.reshape(2, -1),
    "a dtype view": lambda r: r.view(np.int32),
    "its base": lambda r: r.base,
    "a memoryview": memoryview,
    "np.frombuffer": lambda r: np.frombuffer(r, dtype=np.uint8),
    "a ctypes array": np.ctypeslib.as_ctypes,
    "a list": lambda r: [r],
}


def memory_of(holder: object) -> np.ndarray:
    if isinstance(holder, list):
        return memory_of(holder[0])
    return np.asarray(holder)


def assert_never_recycled_while_held(holder_of: Callable[[np.ndarray], object]) -> None:
    a, b = operands(3)
    result = mul(a, b)
    holder = holder_of(result)
    kept = memory_of(holder).copy()
    del result
    # float32 and int32 results of the same size, by the fast lane, the
    # full checks (another opset) and the checked integer product
    x, y = operands(4, np.int32)
    later = [mul(a, b), mul(a, b, opset=13), mul(x, y, overflow="error"), mul(x, y)]
    for fresh in later:
        assert not np.shares_memory(fresh, memory_of(holder))
    assert_same_bits(memory_of(holder), kept)


@pytest.mark.parametrize("holder", HOLDERS.values(), ids=HOLDERS.keys())
def test_C1_RESULT_a_result_still_referenced_is_never_recycled(
    holder: Callable[[np.ndarray], object],
) -> None:
    assert_never_recycled_while_held(holder)


def test_negative_control_an_arena_ignoring_references_is_caught(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(arena, "_unused", lambda index: True)
    with pytest.raises(AssertionError):
        assert_never_recycled_while_held(HOLDERS["a strided view"])


def test_C1_RESULT_threads_never_get_a_buffer_in_use() -> None:
    problems: list[BaseException] = []

    def worker(seed: int) -> None:
        try:
            a, b = operands(seed, n=N // 2 * 2)
            expected = np.multiply(a, b)
            held = mul(a, b)
            for _ in range(12):
                result = mul(a, b)
                assert not np.shares_memory(result, held)
                assert_same_bits(result, expected)
                assert_same_bits(held, expected)  # no other thread wrote into it
                held = result
        except BaseException as err:  # re-raised in the test's thread
            problems.append(err)

    threads = [threading.Thread(target=worker, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not problems, problems[:2]
    assert arena.held_bytes() <= arena.capacity()


def test_capacity_bounds_what_is_kept() -> None:
    arena.set_capacity(2 * arena.MIN_BYTES)
    a, b = operands(5)
    results = [mul(a, b) for _ in range(3)]
    assert [r.flags.owndata for r in results] == [False, False, True]  # the third is numpy's
    assert arena.held_bytes() == 2 * arena.MIN_BYTES
    del results
    arena.release()
    assert arena.held_bytes() == 0
    arena.set_capacity(0)  # off: every result owns its memory
    assert mul(a, b).flags.owndata
    assert arena.held_bytes() == 0
    with pytest.raises(ValueError, match="capacity"):
        arena.set_capacity(-1)


def test_small_results_are_numpys() -> None:
    a, b = operands(6, n=N - 1)
    assert mul(a, b).flags.owndata
    assert arena.held_bytes() == 0


def test_F_NOLOSS_an_overflow_error_leaves_the_buffer_free() -> None:
    x = np.full(N, 2**20, np.int32)
    with pytest.raises(IntegerOverflowError):
        mul(x, x, overflow="error")
    assert arena.held_bytes() == arena.MIN_BYTES  # kept, nothing refers to it
    y = np.ones(N, np.int32)
    assert_same_bits(mul(x, y, overflow="error"), x)
    assert arena.held_bytes() == arena.MIN_BYTES


def test_fresh_says_whether_the_buffer_was_recycled() -> None:
    f32 = np.dtype(np.float32)
    small, recycled = arena.fresh((N - 1,), f32)
    assert not recycled and small.flags.owndata
    first, recycled = arena.fresh((N,), f32)
    assert not recycled and not first.flags.owndata
    del first
    again, recycled = arena.fresh((2, N // 2), np.dtype(np.int32))  # any shape, same bytes
    assert recycled and again.shape == (2, N // 2) and again.dtype == np.int32
    arena.set_capacity(arena.MIN_BYTES)  # full with `again`
    over, recycled = arena.fresh((N,), f32)
    assert not recycled and over.flags.owndata


def test_small_results_of_every_path_are_numpys() -> None:
    a, b = operands(7, n=N - 1)
    x, y = operands(8, np.int32, n=N - 1)
    for result in (mul(a, b, opset=13), mul(x, y, overflow="error"), mul(x, y, opset=13)):
        assert result.flags.owndata
    assert arena.held_bytes() == 0


def test_free_buffers_make_room_least_recently_used_first() -> None:
    arena.set_capacity(2 * arena.MIN_BYTES)
    a, b = operands(9)
    first, second = mul(a, b), mul(a, b)
    del first, second  # two free buffers fill the capacity
    c, d = operands(10, n=2 * N)
    big = mul(c, d)  # needs both dropped
    assert not big.flags.owndata
    assert arena.held_bytes() == 2 * arena.MIN_BYTES


def test_capacity_zero_recycles_nothing_even_a_buffer_freed_later() -> None:
    a, b = operands(11)
    held = mul(a, b)
    arena.set_capacity(0)
    del held  # its buffer is still listed, and now free
    assert mul(a, b).flags.owndata


def test_the_documented_capacity() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    assert arena.DEFAULT_CAPACITY == 256 * 2**20
    assert "256 MiB" in readme and "32 MiB" in readme
    assert arena.MIN_BYTES == 32 * 2**20
