"""The fast path's own mechanisms: plain-call lane, IEEE quietness, threaded chunks."""

import numpy as np
import pytest

from sonnx_mul import api, fastpath, mul
from sonnx_mul.dtypes import ALL_TYPES
from sonnx_mul.oracle.reference import mul_reference
from support import assert_same_bits


def test_numpy_errstate_hook_is_available_with_the_pinned_numpy():
    # Without it the fast path falls back to np.errstate: correct, but slower.
    assert fastpath.QUIET_STATE is not None


@pytest.mark.parametrize("mode", ["raise", "warn", "call"])
def test_F_FLOAT_ieee_exceptions_never_escape_whatever_seterr_says(mode, recwarn):
    x = np.array([1e308, 0.0, 1e-308, -1e308], np.float64)
    y = np.array([1e308, np.inf, 1e-308, 1e308], np.float64)
    calls = []
    with np.errstate(all=mode, call=calls.append if mode == "call" else None):
        for out in (None, np.empty(4)):
            c = mul(x, y, out=out)
            assert c[0] == np.inf and np.isnan(c[1]) and c[2] == 0.0 and c[3] == -np.inf
    assert not calls and not recwarn.list


def test_F_FLOAT_errstate_fallback_gives_the_same_bits(monkeypatch):
    rng = np.random.default_rng(5)
    x = rng.integers(0, 2**16, 5000, dtype=np.uint16).view(np.float16)
    expected = mul(x, x[::-1].copy())
    monkeypatch.setattr(fastpath, "QUIET_STATE", None)
    monkeypatch.setattr(api, "QUIET_STATE", None)
    assert_same_bits(mul(x, x[::-1].copy()), expected)


@pytest.mark.parametrize("etype", ALL_TYPES, ids=lambda t: t.onnx_name)
def test_F_threaded_chunks_give_the_same_bits(etype, monkeypatch):
    monkeypatch.setattr(fastpath, "PARALLEL_MIN_ELEMENTS", 64)
    monkeypatch.setattr(fastpath, "_THREADS", 3)
    rng = np.random.default_rng(11)
    raw = rng.integers(0, 2**63, (37, 11), dtype=np.uint64)
    a = raw.astype(etype.uint_view if etype.is_float else etype.dtype)
    if etype.is_float:
        a = a.view(etype.dtype)
    b = a[::-1].copy()
    assert_same_bits(mul(a, b), mul_reference(a, b))
    out = a.copy()
    mul(out, b, out=out)
    assert_same_bits(out, mul_reference(a, b))


def test_F_threaded_chunks_reraise_a_worker_error(monkeypatch):
    monkeypatch.setattr(fastpath, "PARALLEL_MIN_ELEMENTS", 8)
    original = np.multiply

    def failing(*args, **kwargs):
        raise MemoryError("planted")

    monkeypatch.setattr(np, "multiply", failing)
    with pytest.raises(MemoryError, match="planted"):
        fastpath._threaded_multiply(np.ones(16), np.ones(16), np.empty(16))
    monkeypatch.setattr(np, "multiply", original)


def test_C1_RESULT_plain_lane_and_full_path_agree_on_layouts():
    a = np.arange(1, 13, dtype=np.int16).reshape(3, 4)
    for x in (a, np.asfortranarray(a), a[:, ::-1], a.T.copy().T):
        c = mul(x, x)
        assert c.flags.c_contiguous
        assert np.array_equal(c, x.astype(np.int64) ** 2)


def test_plain_lane_refuses_what_the_full_path_refuses():
    a = np.ones(3, np.float32)
    for kwargs in ({"opset": True}, {"overflow": np.array(["wrap"])}, {"overflow": "WRAP"}):
        with pytest.raises(ValueError):
            mul(a, a, **kwargs)


@pytest.mark.parametrize(
    "etype", [t for t in ALL_TYPES if not t.is_float], ids=lambda t: t.onnx_name
)
def test_F_CHECKED_overflow_found_in_any_block(etype, monkeypatch):
    monkeypatch.setattr(fastpath, "OVERFLOW_CHUNK", 5)
    for position in (0, 4, 5, 6, 22):
        a = np.ones(23, etype.dtype)
        a[position] = etype.hi
        b = np.full(23, 2 if etype.hi > 2 else 1, etype.dtype)
        assert fastpath.first_overflow_index(a, b, etype) == position
        assert fastpath.first_overflow_index(a, np.ones(23, etype.dtype), etype) == -1


@pytest.mark.parametrize(
    "etype", [t for t in ALL_TYPES if not t.is_float], ids=lambda t: t.onnx_name
)
def test_F_CHECKED_corner_bound_failing_without_overflow_still_computes(etype):
    # max(a) * max(b) overflows, but never at the same index: no overflow.
    a = np.ones(50, etype.dtype)
    b = np.ones(50, etype.dtype)
    a[3], b[40] = etype.hi, 2
    assert not fastpath._products_bounded(a, b, etype)
    assert fastpath.first_overflow_index(a, b, etype) == -1
    assert int(mul(a, b, overflow="error")[3]) == etype.hi
    b[3] = 2
    assert fastpath.first_overflow_index(a, b, etype) == 3


@pytest.mark.parametrize(
    "etype", [t for t in ALL_TYPES if not t.is_float], ids=lambda t: t.onnx_name
)
def test_F_CHECKED_corner_bound_is_exact_at_the_range_limits(etype):
    lo_hi = np.array([etype.lo, etype.hi], etype.dtype)
    ones = np.ones(2, etype.dtype)
    assert fastpath._products_bounded(lo_hi, ones, etype)
    if etype.signed:
        assert not fastpath._products_bounded(lo_hi, -ones, etype)  # -lo overflows
    assert not fastpath._products_bounded(lo_hi, ones + ones, etype)


def test_F_WRAP_integer_lane_needs_no_quiet_state():
    x = np.array([2**62, -(2**63), 7], np.int64)
    with np.errstate(all="raise"):
        c = mul(x, np.array([4, -1, 3], np.int64))
    assert c.tolist() == [0, -(2**63), 21]
