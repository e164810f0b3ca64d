"""F-FLOAT: IEEE 754 multiplication, checked against an exact rational oracle."""

import numpy as np
import pytest

from sonnx_mul import mul
from support import FLOAT_TYPES, float_edge_bits, from_bits, oracle_mul_bits

IDS = [t.onnx_name for t in FLOAT_TYPES]


def _check_against_oracle(xs: list[int], ys: list[int], etype) -> None:
    c = mul(from_bits(xs, etype), from_bits(ys, etype))
    got = c.view(etype.uint_view).tolist()
    for x, y, g in zip(xs, ys, got, strict=True):
        expected = oracle_mul_bits(x, y, etype)
        if expected is None:
            assert np.isnan(float(c.dtype.type(0)) + float(from_bits([g], etype)[0])), (x, y)
        else:
            assert g == expected, f"{etype.onnx_name}: {x:#x} * {y:#x} = {g:#x}, want {expected:#x}"


@pytest.mark.parametrize("etype", FLOAT_TYPES, ids=IDS)
def test_F_FLOAT_all_pairs_of_edge_values_are_correctly_rounded(etype):
    edges = float_edge_bits(etype)
    xs = [x for x in edges for _ in edges]
    ys = [y for _ in edges for y in edges]
    _check_against_oracle(xs, ys, etype)


@pytest.mark.parametrize("etype", FLOAT_TYPES, ids=IDS)
def test_F_FLOAT_random_bit_patterns_are_correctly_rounded(etype):
    rng = np.random.default_rng(20261122)
    n = 3000
    xs = [int(v) for v in rng.integers(0, 1 << etype.bits, n, dtype=np.uint64)]
    # half of the pairs near 1.0 in magnitude, where products stay finite and rounding matters
    near_one = rng.standard_normal(n).astype(np.float64)
    ys = [int(v) for v in near_one.astype(etype.dtype).view(etype.uint_view)]
    _check_against_oracle(xs, ys, etype)
    _check_against_oracle(ys, list(reversed(ys)), etype)


@pytest.mark.parametrize("etype", FLOAT_TYPES, ids=IDS)
def test_F_FLOAT_ties_round_to_even(etype):
    p = etype.sb - 1
    bias = (1 << (etype.eb - 1)) - 1
    one, one_ulp, three_ulp = bias << p, (bias << p) | 1, (bias << p) | 3
    one_half = (bias << p) | (1 << (p - 1))
    c = mul(from_bits([one_ulp, three_ulp], etype), from_bits([one_half, one_half], etype))
    got = c.view(etype.uint_view).tolist()
    # (1 + u) * 1.5 = 1.5 + u + u/2: a tie between 1.5 + u (odd) and 1.5 + 2u (even)
    assert got[0] == one_half + 2
    # (1 + 3u) * 1.5 = 1.5 + 4u + u/2: a tie between 1.5 + 4u (even) and 1.5 + 5u (odd)
    assert got[1] == one_half + 4
    assert one < one_half


@pytest.mark.parametrize("etype", FLOAT_TYPES, ids=IDS)
def test_F_FLOAT_subnormals_are_kept_not_flushed(etype):
    p = etype.sb - 1
    bias = (1 << (etype.eb - 1)) - 1
    smallest_normal, half = 1 << p, (bias - 1) << p
    c = mul(from_bits([smallest_normal, 1], etype), from_bits([half, 1 << p | 0], etype))
    got = c.view(etype.uint_view).tolist()
    assert got[0] == 1 << (p - 1)  # min normal / 2 is the subnormal 0.5 * 2**emin
    assert got[1] == 0  # smallest subnormal * smallest normal underflows to +0


@pytest.mark.parametrize("etype", FLOAT_TYPES, ids=IDS)
def test_F_FLOAT_infinities_nan_and_signed_zeros(etype):
    t = etype.dtype.type
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 0.0, -0.0, 2.0], etype.dtype)
    y = np.array([np.inf, 5.0, -3.0, 0.0, 1.0, -7.0, -7.0, np.nan], etype.dtype)
    c = mul(x, y).astype(np.float64)
    assert np.isnan(c[0]) and np.isnan(c[3]) and np.isnan(c[4]) and np.isnan(c[7])
    assert c[1] == 0 and np.signbit(c[1])
    assert c[2] == -np.inf
    assert c[5] == 0 and np.signbit(c[5])
    assert c[6] == 0 and not np.signbit(c[6])
    big = np.array(
        [etype.dtype.type(t(2.0) ** (((1 << (etype.eb - 1)) - 1) // 2 + 1))], etype.dtype
    )
    assert mul(big, big)[0] == np.inf  # overflow to infinity, no exception


def test_F_FLOAT_no_warning_or_exception_under_np_seterr_raise():
    x = np.array([1e308, 0.0, np.inf], np.float64)
    with np.errstate(all="raise"):
        c = mul(x, np.array([1e308, np.inf, 0.0]))
    assert c[0] == np.inf and np.isnan(c[1]) and np.isnan(c[2])
