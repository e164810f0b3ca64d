"""C1-RESULT, C1-OUT: the fresh result array and the out= argument."""

import numpy as np
import pytest

from sonnx_mul import ArgumentError, mul
from support import assert_same_bits

A = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
B = np.arange(6, 0, -1, dtype=np.float32).reshape(2, 3)
EXPECTED = np.array([[6, 10, 12], [12, 10, 6]], np.float32)


def test_C1_RESULT_is_a_new_c_contiguous_native_array():
    fortran = np.asfortranarray(A)
    swapped = A.astype(">f4")
    for a, b in ((A, B), (fortran, np.asfortranarray(B)), (swapped, B.astype(">f4"))):
        c = mul(a, b)
        assert c.flags.c_contiguous and c.flags.owndata and c.dtype.isnative
        assert not np.shares_memory(c, a) and not np.shares_memory(c, b)
        assert_same_bits(c, EXPECTED)


def test_C1_OUT_fills_and_returns_out():
    out = np.full((2, 3), np.nan, np.float32)
    assert mul(A, B, out=out) is out
    assert_same_bits(out, EXPECTED)


@pytest.mark.parametrize("which", ["a", "b"])
def test_C1_OUT_out_may_be_exactly_an_input(which):
    a, b = A.copy(), B.copy()
    target = a if which == "a" else b
    assert mul(a, b, out=target) is target
    assert_same_bits(target, EXPECTED)


def test_C1_OUT_out_may_be_a_strided_view_that_is_exactly_an_input():
    base = np.arange(1, 13, dtype=np.int64).reshape(3, 4)
    view = base[:, ::2]
    other = np.full(view.shape, 3, np.int64)
    mul(view, other, out=view)
    assert np.array_equal(base[:, ::2], np.arange(1, 13).reshape(3, 4)[:, ::2] * 3)
    assert np.array_equal(base[:, 1::2], np.arange(1, 13).reshape(3, 4)[:, 1::2])


def _bad_outs():
    base = np.zeros(12, np.float32)
    readonly = np.zeros((2, 3), np.float32)
    readonly.flags.writeable = False
    return [
        ("wrong shape", np.zeros((3, 2), np.float32)),
        ("wrong dtype", np.zeros((2, 3), np.float64)),
        ("byte swapped", np.zeros((2, 3), ">f4")),
        ("read-only", readonly),
        ("a list", [[0.0] * 3] * 2),
        ("a subclass", np.zeros((2, 3), np.float32).view(np.matrix)),
        ("0-d for 2-d", np.zeros((), np.float32)),
        ("view of a bigger buffer, wrong shape", base[:5]),
    ]


@pytest.mark.parametrize(("label", "out"), _bad_outs(), ids=[x[0] for x in _bad_outs()])
def test_C1_OUT_bad_out_is_refused_and_left_untouched(label, out):
    before = np.array(out, copy=True) if isinstance(out, np.ndarray) else None
    with pytest.raises(ArgumentError) as info:
        mul(A, B, out=out)
    assert info.value.requirements == ("C1-OUT",)
    if before is not None:
        assert_same_bits(np.asarray(out), before)


def test_C1_OUT_partial_overlap_is_refused_and_nothing_is_written():
    buffer = np.arange(1, 9, dtype=np.int32)
    a, b = buffer[0:6], np.full(6, 2, np.int32)
    out = buffer[2:8]  # overlaps a, shifted by two elements
    snapshot = buffer.copy()
    with pytest.raises(ArgumentError, match="partial overlap") as info:
        mul(a, b, out=out)
    assert info.value.requirements == ("C1-OUT",)
    assert np.array_equal(buffer, snapshot)


def test_C1_OUT_reversed_view_of_an_input_is_refused():
    a = np.arange(1, 5, dtype=np.int16)
    with pytest.raises(ArgumentError):
        mul(a, a.copy(), out=a[::-1])
