"""numpy_loops: numpy's multiply behind the native kernel's contract (diagnosis
only, SONNX_MUL_KERNEL=numpy) and the dissimilar overflow scan of the tests."""

from __future__ import annotations

import numpy as np
import pytest

from sonnx_mul import _native, numpy_loops
from sonnx_mul.dtypes import ALL_TYPES
from support import INT_TYPES, assert_same_bits


@pytest.mark.parametrize("etype", ALL_TYPES, ids=lambda t: t.onnx_name)
@pytest.mark.parametrize("checked", [False, True])
def test_F_numpy_loops_keep_the_kernel_contract(etype, checked):
    rng = np.random.default_rng(etype.bits)
    raw = rng.integers(0, 2**63, (37, 11), dtype=np.uint64)
    a = raw.astype(etype.uint_view if etype.is_float else etype.dtype)
    if etype.is_float:
        a = a.view(etype.dtype)
    b = a[::-1].copy()
    for x, y in ((a, b), (a.T, b.T), (a[::2, ::-3], b[::2, ::-3])):
        expected = _native.multiply(x, y, None, checked)
        got = numpy_loops.multiply(x, y, None, checked)
        if isinstance(expected, int):
            assert got == expected
            continue
        assert_same_bits(got, expected)
        out = np.zeros(x.shape, etype.dtype)
        assert numpy_loops.multiply(x, y, out, checked) is out
        assert_same_bits(out, expected)


def test_numpy_loops_refuse_a_type_outside_the_profile():
    with pytest.raises(TypeError):
        numpy_loops.multiply(np.ones(2, bool), np.ones(2, bool), None, False)


@pytest.mark.parametrize("etype", INT_TYPES, ids=lambda t: t.onnx_name)
def test_F_CHECKED_overflow_found_in_any_block(etype, monkeypatch):
    monkeypatch.setattr(numpy_loops, "OVERFLOW_CHUNK", 5)
    for position in (0, 4, 5, 6, 22):
        a = np.ones(23, etype.dtype)
        a[position] = etype.hi
        b = np.full(23, 2 if etype.hi > 2 else 1, etype.dtype)
        assert numpy_loops.first_overflow_index(a, b, etype) == position
        assert numpy_loops.first_overflow_index(a, np.ones(23, etype.dtype), etype) == -1


@pytest.mark.parametrize("etype", INT_TYPES, ids=lambda t: t.onnx_name)
def test_F_CHECKED_corner_bound_failing_without_overflow_still_computes(etype):
    # max(a) * max(b) overflows, but never at the same index: no overflow.
    a = np.ones(50, etype.dtype)
    b = np.ones(50, etype.dtype)
    a[3], b[40] = etype.hi, 2
    assert not numpy_loops._products_bounded(a, b, etype)
    assert numpy_loops.first_overflow_index(a, b, etype) == -1
    assert int(numpy_loops.multiply(a, b, None, True)[3]) == etype.hi  # type: ignore[index]
    b[3] = 2
    assert numpy_loops.first_overflow_index(a, b, etype) == 3


@pytest.mark.parametrize("etype", INT_TYPES, ids=lambda t: t.onnx_name)
def test_F_CHECKED_corner_bound_is_exact_at_the_range_limits(etype):
    lo_hi = np.array([etype.lo, etype.hi], etype.dtype)
    ones = np.ones(2, etype.dtype)
    assert numpy_loops._products_bounded(lo_hi, ones, etype)
    if etype.signed:
        assert not numpy_loops._products_bounded(lo_hi, -ones, etype)  # -lo overflows
    assert not numpy_loops._products_bounded(lo_hi, ones + ones, etype)


@pytest.mark.parametrize("etype", INT_TYPES, ids=lambda t: t.onnx_name)
def test_F_CHECKED_a_strided_layout_is_scanned_to_its_last_block(etype, monkeypatch):
    """Operands that are not C-contiguous go through numpy's buffered iterator block by
    block: a corner bound failing without overflow scans every block to the end, and an
    overflow in a later block is found at its C-order index."""
    monkeypatch.setattr(numpy_loops, "OVERFLOW_CHUNK", 5)
    a = np.ones((6, 4), etype.dtype).T  # (4, 6), F-ordered: the iterator path
    b = np.ones((6, 4), etype.dtype).T
    assert not a.flags.c_contiguous
    a[0, 1], b[3, 5] = etype.hi, 2  # the bound fails, no product overflows
    assert numpy_loops.first_overflow_index(a, b, etype) == -1
    b[2, 4] = 2
    a[2, 4] = etype.hi  # flat C index 16: the fourth block of five
    assert numpy_loops.first_overflow_index(a, b, etype) == 16
