"""The glue's own checks at their exact boundaries (issue 28: planted, these went unseen).

``_native.multiply`` refuses an ``out`` that shares a byte with an operand
without being it, whatever validation did before: an ``out`` whose first
element is the operand's last (and the mirror case, and with negative
strides) must be refused, and the adjacent ``out`` one element further on
accepted and right. In checked mode the first overflow is reported in C
order, with its operands, for every layout of ``out`` and of the operands:
Fortran order goes through another path of the glue than C order.

Then what the glue's mutants (``make mutants``, issue 28) left unseen, each test
failing under its mutant: an overlap through a dimension of one element (which
adds nothing to the extent and must take nothing from it), one-element blocks
of the iterator (they report a stride of 0, taken as contiguous), a last block
of one element, each argument checked as an array itself (a list read as an
array crashed, unnoticed), and the exception of ``checked``'s truth test
propagated (it became a SystemError).
"""

from __future__ import annotations

import numpy as np
import pytest

from sonnx_mul import IntegerOverflowError, _native, mul
from support import swapped, unaligned

N = 10
CASE_NAMES = [
    "first-on-last",
    "last-on-first",
    "adjacent-above",
    "adjacent-below",
    "reversed-overlap",
    "reversed-adjacent",
    "reversed-adjacent-below",
    "reversed-lowest-on-last",
]


def _buffer() -> np.ndarray:
    return np.arange(1, 3 * N + 1, dtype=np.int32)


@pytest.mark.parametrize(
    ("operand", "out", "shared"),
    [
        (slice(0, N), slice(N - 1, 2 * N - 1), True),  # out's first is a's last
        (slice(N - 1, 2 * N - 1), slice(0, N), True),  # out's last is a's first
        (slice(0, N), slice(N, 2 * N), False),  # adjacent: no byte shared
        (slice(N, 2 * N), slice(0, N), False),
        (slice(N - 1, None, -1), slice(N - 1, 2 * N - 1), True),  # reversed operand
        (slice(N - 1, None, -1), slice(N, 2 * N), False),
        (slice(2 * N - 1, N - 1, -1), slice(0, N), False),  # reversed, adjacent below
        (slice(2 * N - 2, N - 2, -1), slice(0, N), True),  # reversed, its lowest on out's last
    ],
    ids=CASE_NAMES,
)
def test_C1_OUT_the_glue_refuses_exactly_the_outs_that_share_a_byte(
    operand: slice, out: slice, shared: bool
) -> None:
    buffer = _buffer()
    a = buffer[operand]
    assert a.size == N
    b = np.full(N, 3, np.int32)
    c = buffer[out]
    assert np.shares_memory(a, c) == shared
    before = buffer.copy()
    if shared:
        with pytest.raises(ValueError):
            _native.multiply(a, b, c, False)
        np.testing.assert_array_equal(buffer, before)
    else:
        expected = a * 3
        _native.multiply(a, b, c, False)
        np.testing.assert_array_equal(c, expected)


def _overflows_first_in_c_order() -> tuple[np.ndarray, np.ndarray, int]:
    """int8 operands whose first overflow in C order, (0, 2), is not Fortran order's, (1, 0)."""
    a = np.ones((3, 4), np.int8)
    b = np.ones((3, 4), np.int8)
    a[0, 2], b[0, 2] = 100, 100  # C index 2, Fortran index 6
    a[1, 0], b[1, 0] = -128, -1  # C index 4, Fortran index 1
    return a, b, 2


@pytest.mark.parametrize("out_order", ["none", "C", "F"])
@pytest.mark.parametrize("operand_order", ["C", "F"])
def test_F_CHECKED_the_first_overflow_in_c_order_for_every_layout(
    operand_order: str, out_order: str
) -> None:
    a, b, index = _overflows_first_in_c_order()
    a, b = np.asarray(a, order=operand_order), np.asarray(b, order=operand_order)
    out = None if out_order == "none" else np.full((3, 4), 7, np.int8, order=out_order)
    with pytest.raises(IntegerOverflowError) as caught:
        mul(a, b, out=out, overflow="error")
    assert caught.value.index == index
    assert (caught.value.a_value, caught.value.b_value) == (100, 100)
    if out is not None:
        assert (out == 7).all()  # nothing written
    assert _native.multiply(a, b, out, True) == index


@pytest.mark.parametrize("shape", [(1, N), (N, 1), (1, 1, N)], ids=["row", "column", "1x1xN"])
def test_C1_OUT_the_glue_refuses_an_overlap_through_a_dimension_of_one(
    shape: tuple[int, ...],
) -> None:
    """A dimension of one element adds nothing to an array's extent, and must take
    nothing from it: out's first element on A's last is still an overlap."""
    buffer = _buffer()
    a, b = buffer[:N].reshape(shape), np.full(shape, 3, np.int32)
    before = buffer.copy()
    with pytest.raises(ValueError, match="share no memory"):
        _native.multiply(a, b, buffer[N - 1 : 2 * N - 1].reshape(shape), False)
    np.testing.assert_array_equal(buffer, before)
    c = buffer[N : 2 * N].reshape(shape)  # adjacent: accepted
    _native.multiply(a, b, c, False)
    np.testing.assert_array_equal(c, buffer[:N].reshape(shape) * 3)


@pytest.mark.parametrize("shape", [(1,), (), (1, 1, 1)], ids=["1", "0-d", "1x1x1"])
@pytest.mark.parametrize("dtype", [np.int32, np.float64])
def test_F_LAYOUT_one_element_blocks_in_every_layout(shape: tuple[int, ...], dtype: type) -> None:
    """A byte-swapped or misaligned operand or out of one element goes through the
    iterator's blocks, whose one-element blocks report a stride of 0: the glue takes
    them as contiguous (any stride), in both modes, with and without out."""
    x, y = np.full(shape, 6, dtype), np.full(shape, 7, dtype)
    want = np.full(shape, 42, dtype)
    for a, b in ((swapped(x), y), (x, swapped(y)), (unaligned(x), y), (x, unaligned(y))):
        for checked in (False, True):
            np.testing.assert_array_equal(_native.multiply(a, b, None, checked), want)
            out = np.zeros(shape, dtype)
            assert _native.multiply(a, b, out, checked) is out
            np.testing.assert_array_equal(out, want)
    out = unaligned(np.zeros(shape, dtype))  # only out goes through the blocks
    assert _native.multiply(x, y, out, False) is out
    np.testing.assert_array_equal(out, want)


def test_F_LAYOUT_a_last_block_of_one_element() -> None:
    """One element more than numpy's buffer (8192): the last block has one element."""
    n = 8192 + 1
    big = np.arange(2 * n, dtype=np.int64) % 1000
    a, b = big[::2], swapped(big[1::2])
    want = a * big[1::2]
    for checked in (False, True):
        np.testing.assert_array_equal(_native.multiply(a, b, None, checked), want)
    np.testing.assert_array_equal(mul(a, b, overflow="error"), want)


@pytest.mark.parametrize("position", ["a", "b", "out"])
def test_C1_OUT_the_glue_names_the_argument_that_is_not_an_array(position: str) -> None:
    """Each argument is checked itself (an unchecked list would be read as an array)."""
    x = np.arange(1, N + 1, dtype=np.int32)
    args: dict[str, object] = {"a": x, "b": x.copy(), "out": None}
    args[position] = [1] * N
    with pytest.raises(TypeError, match=f"^sonnx_mul._native: {position} must be a numpy.ndarray$"):
        _native.multiply(args["a"], args["b"], args["out"], False)


def test_F_CHECKED_a_mode_whose_truth_fails_raises_that_error_and_writes_nothing() -> None:
    """``checked`` is read with Python's truth test: its exception is the call's."""
    x = np.arange(1, N + 1, dtype=np.int32)
    out = np.zeros(N, np.int32)
    with pytest.raises(ValueError, match="truth value of an array"):
        _native.multiply(x, x, out, np.array([True, False]))
    assert not out.any()
