"""The exhaustive checker: its oracle is right, and it reports planted faults."""

from __future__ import annotations

import numpy as np
import pytest

from sonnx_mul.dtypes import BFLOAT16, FLOAT16, INT8
from sonnx_mul.oracle import softfloat
from sonnx_mul_assurance.python import exhaustive
from support import float_edge_bits, oracle_mul_bits

TYPES = [FLOAT16, BFLOAT16]
IDS = [t.onnx_name for t in TYPES]


@pytest.mark.parametrize("etype", TYPES, ids=IDS)
def test_F_FLOAT_vectorized_oracle_equals_fraction_oracle_and_softfloat(etype):
    rng = np.random.default_rng(7)
    edges = np.array(float_edge_bits(etype), np.uint16)
    xs = np.concatenate(
        [rng.integers(0, 1 << 16, 4000).astype(np.uint16), np.repeat(edges, edges.size)]
    )
    ys = np.concatenate(
        [rng.integers(0, 1 << 16, 4000).astype(np.uint16), np.tile(edges, edges.size)]
    )
    # products near the subnormal boundary and at the top of the range
    small = rng.integers(1, 1 << 10, 500).astype(np.uint16)
    xs = np.concatenate([xs, small, (small | 0x7800).astype(np.uint16)])
    ys = np.concatenate([ys, rng.integers(0x3000, 0x4400, 500).astype(np.uint16), small | 0x7000])
    bits, nan = exhaustive.oracle_bits(xs, ys, etype)
    for x, y, b, n in zip(xs.tolist(), ys.tolist(), bits.tolist(), nan.tolist(), strict=True):
        expected = oracle_mul_bits(x, y, etype)
        reference = softfloat.mul_bits(x, y, etype.eb, etype.sb)
        if expected is None:
            assert n and softfloat.is_nan_bits(reference, etype.eb, etype.sb), (x, y)
        else:
            assert not n and b == expected == reference, (x, y, b, expected)


@pytest.mark.parametrize("etype", TYPES, ids=IDS)
def test_F_FLOAT_exhaustive_slice_agrees(etype):
    rows = np.array([0x0000, 0x0001, 0x3C01, 0x8400, 0x7BFF, 0xFC00, 0x7E00], np.uint32)
    pairs, mismatches, examples = exhaustive.compare_rows(rows, etype)
    assert pairs == rows.size * 65536
    assert mismatches == 0, examples


def test_F_WRAP_F_CHECKED_exhaustive_int8_slice():
    result = exhaustive.check_int(INT8, rows=32)  # a = -128..-97, every b
    assert result.pairs == 32 * 256 and result.mismatches == 0, result.examples


def _truncating(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Round toward zero: the correctly rounded result, one ulp toward zero when it went up."""
    exact = a.astype(np.float64) * b.astype(np.float64)
    rounded = np.multiply(a, b)
    bits = rounded.view(np.uint16).copy()
    finite = np.isfinite(rounded) & (rounded != 0)
    away = finite & (np.abs(rounded.astype(np.float64)) > np.abs(exact))
    bits[away] -= 1
    return bits.view(a.dtype)


def _flushing(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    c = np.multiply(a, b)
    tiny = np.float64(2.0 ** (2 - (1 << (FLOAT16.eb - 1)))) if a.dtype == np.float16 else 2.0**-126
    return np.where(np.abs(c.astype(np.float64)) < tiny, np.zeros_like(c), c)


@pytest.mark.parametrize("faulty", [_truncating, _flushing], ids=["truncate", "flush"])
@pytest.mark.parametrize("etype", TYPES, ids=IDS)
def test_negative_control_exhaustive_reports_a_faulty_multiply(etype, faulty):
    rows = np.array([0x0001, 0x0203, 0x3C01, 0x3E01], np.uint32)
    with np.errstate(all="ignore"):
        _, mismatches, examples = exhaustive.compare_rows(rows, etype, multiply=faulty)
    assert mismatches > 0 and examples


def _sign_of_b_lost(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The sign of a negative B dropped (the oracle's sign symmetry must not hide it)."""
    c = np.multiply(a, np.abs(b))
    return c


def _nan_for_inf(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    c = np.multiply(a, b)
    return np.where(np.isinf(c) & (np.signbit(a)), np.full_like(c, np.nan), c)


@pytest.mark.parametrize("faulty", [_sign_of_b_lost, _nan_for_inf], ids=["sign", "nan"])
@pytest.mark.parametrize("etype", TYPES, ids=IDS)
def test_negative_control_a_fault_on_negative_operands_is_reported(etype, faulty):
    rows = np.array(
        [0x8001, 0x3C00, 0xBC00, 0xFC00], np.uint32
    )  # the oracle of |x| serves x and -x
    with np.errstate(all="ignore"):
        _, mismatches, examples = exhaustive.compare_rows(rows, etype, multiply=faulty)
    assert mismatches > 0 and examples


def test_F_FLOAT_the_results_name_the_native_kernel():
    result = exhaustive.check_float(FLOAT16, jobs=1, rows=3)
    assert result.pairs == 3 * 65536 and result.mismatches == 0
    assert (result.kernel or "").startswith("native (gcc ")
    assert "-ffp-contract=off" in (result.kernel or "")
