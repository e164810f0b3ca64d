"""F-WRAP, F-CHECKED: integer products, exhaustively for 8-bit types."""

import numpy as np
import pytest

from sonnx_mul import IntegerOverflowError, mul
from support import INT_TYPES, int_edge_values

IDS = [t.onnx_name for t in INT_TYPES]
BYTE_TYPES = [t for t in INT_TYPES if t.bits == 8]


def wrapped(x: int, bits: int, signed: bool) -> int:
    """Two's complement / modular reduction, written independently of the kernel."""
    r = x & ((1 << bits) - 1)
    return r - (1 << bits) if signed and r >> (bits - 1) else r


def all_pairs(etype):
    values = np.arange(etype.lo, etype.hi + 1, dtype=np.int64)
    a = np.repeat(values, values.size)
    b = np.tile(values, values.size)
    return a, b


@pytest.mark.parametrize("etype", BYTE_TYPES, ids=lambda t: t.onnx_name)
def test_F_WRAP_exhaustive_8_bit_pairs(etype):
    a, b = all_pairs(etype)
    assert a.size == 65536
    c = mul(a.astype(etype.dtype), b.astype(etype.dtype))
    expected = [wrapped(int(x) * int(y), 8, etype.signed) for x, y in zip(a, b, strict=True)]
    assert c.astype(np.int64).tolist() == expected


@pytest.mark.parametrize("etype", BYTE_TYPES, ids=lambda t: t.onnx_name)
def test_F_CHECKED_exhaustive_8_bit_pairs(etype):
    a, b = all_pairs(etype)
    fits = 0
    for x, y in zip(a.tolist(), b.tolist(), strict=True):
        xa, ya = np.array([x], etype.dtype), np.array([y], etype.dtype)
        if etype.lo <= x * y <= etype.hi:
            assert int(mul(xa, ya, overflow="error")[0]) == x * y
            fits += 1
        else:
            with pytest.raises(IntegerOverflowError) as info:
                mul(xa, ya, overflow="error")
            assert (info.value.index, info.value.a_value, info.value.b_value) == (0, x, y)
    assert 0 < fits < 65536


@pytest.mark.parametrize("etype", INT_TYPES, ids=IDS)
def test_F_WRAP_and_F_CHECKED_on_edge_values(etype):
    edges = int_edge_values(etype)
    xs = [x for x in edges for _ in edges]
    ys = [y for _ in edges for y in edges]
    a, b = np.array(xs, etype.dtype), np.array(ys, etype.dtype)
    c = mul(a, b)
    assert [int(v) for v in c] == [
        wrapped(x * y, etype.bits, etype.signed) for x, y in zip(xs, ys, strict=False)
    ]
    for x, y in zip(xs, ys, strict=True):
        pair = (np.array([x], etype.dtype), np.array([y], etype.dtype))
        if etype.lo <= x * y <= etype.hi:
            assert int(mul(*pair, overflow="error")[0]) == x * y
        else:
            with pytest.raises(IntegerOverflowError):
                mul(*pair, overflow="error")


@pytest.mark.parametrize("etype", INT_TYPES, ids=IDS)
def test_F_WRAP_random_values_against_python_integers(etype):
    rng = np.random.default_rng(7)
    a = rng.integers(etype.lo, etype.hi, 5000, dtype=etype.dtype, endpoint=True)
    b = rng.integers(etype.lo, etype.hi, 5000, dtype=etype.dtype, endpoint=True)
    expected = [
        wrapped(int(x) * int(y), etype.bits, etype.signed) for x, y in zip(a, b, strict=False)
    ]
    assert [int(v) for v in mul(a, b)] == expected


@pytest.mark.parametrize("etype", INT_TYPES, ids=IDS)
def test_F_CHECKED_names_the_first_offending_flat_index_in_c_order(etype):
    a = np.ones((3, 4), etype.dtype, order="F")
    b = np.ones((3, 4), etype.dtype, order="F")
    a[1, 2] = a[2, 0] = etype.hi  # flat C indices 6 and 8; in Fortran order 8 comes first
    b[1, 2] = b[2, 0] = 2
    with pytest.raises(IntegerOverflowError) as info:
        mul(a, b, overflow="error")
    assert info.value.index == 6
    assert info.value.requirements == ("F-CHECKED",)
    assert isinstance(info.value, ArithmeticError)
    assert str(etype.hi) in str(info.value)


@pytest.mark.parametrize("etype", [t for t in INT_TYPES if t.bits == 64], ids=lambda t: t.onnx_name)
def test_F_CHECKED_64_bit_boundaries_are_exact(etype):
    # products just inside and just outside the range, where float estimates would fail
    cases = []
    for x in (3, 7, 2**31 - 1, 2**32 + 1, 6700417, 2**62 + 1):
        q = etype.hi // x
        cases += [(x, q, True), (x, q + 1, False)]
        if etype.signed:
            qn = etype.lo // x if etype.lo % x == 0 else -(-etype.lo // x)
            cases += [(x, qn, True), (x, qn - 1, False), (-x, -qn, True)]
    if etype.signed:
        cases += [
            (-1, etype.lo, False),
            (etype.lo, 1, True),
            (-1, etype.hi, True),
            (2**32, 2**31, False),
        ]
        cases += [(-(2**32), 2**31, True), (etype.lo, -1, False)]
    for x, y, fits in cases:
        assert (etype.lo <= x * y <= etype.hi) == fits, (x, y)
        pair = (np.array([x], etype.dtype), np.array([y], etype.dtype))
        if fits:
            assert int(mul(*pair, overflow="error")[0]) == x * y
        else:
            with pytest.raises(IntegerOverflowError):
                mul(*pair, overflow="error")
