"""The glue's own checks at their exact boundaries (issue 28: planted, these went unseen).

``_native.multiply`` refuses an ``out`` that shares a byte with an operand
without being it, whatever validation did before: an ``out`` whose first
element is the operand's last (and the mirror case, and with negative
strides) must be refused, and the adjacent ``out`` one element further on
accepted and right. In checked mode the first overflow is reported in C
order, with its operands, for every layout of ``out`` and of the operands:
Fortran order goes through another path of the glue than C order.
"""

from __future__ import annotations

import numpy as np
import pytest

from sonnx_mul import IntegerOverflowError, _native, mul

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
