"""C1-RESULT, C1-OUT: the fresh result array and the out= argument."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sonnx_mul import ArgumentError, mul, validation
from sonnx_mul.validation import overlaps_itself
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


def _strided(shape, strides, dtype=np.float32):
    """A writeable array over a fresh zeroed buffer with arbitrary (byte) strides."""
    itemsize = np.dtype(dtype).itemsize
    lo = sum(min(0, (n - 1) * s) for n, s in zip(shape, strides, strict=True))
    hi = sum(max(0, (n - 1) * s) for n, s in zip(shape, strides, strict=True)) + itemsize
    buffer = np.zeros(hi - lo, np.uint8)
    return np.ndarray(shape, dtype, buffer=buffer, offset=-lo, strides=strides)


def _brute_force_overlap(x):
    offsets = sorted(
        sum(i * s for i, s in zip(index, x.strides, strict=True))
        for index in itertools.product(*map(range, x.shape))
    )
    return any(q - p < x.itemsize for p, q in itertools.pairwise(offsets))


SELF_OVERLAPPING = {
    "zero stride": ((4,), (0,)),
    "stride below the item size": ((4,), (2,)),
    "two dims, same stride": ((2, 2), (4, 4)),
    "rows overlap": ((3, 4), (8, 4)),
    "zero stride, 2-d": ((2, 3), (0, 4)),
    "interleaved, found by the search": ((3, 2), (8, 16)),
}


@pytest.mark.parametrize(("shape", "strides"), SELF_OVERLAPPING.values(), ids=SELF_OVERLAPPING)
def test_C1_OUT_self_overlapping_out_is_refused(shape, strides):
    out = _strided(shape, strides)
    assert _brute_force_overlap(out)
    a = np.arange(1, out.size + 1, dtype=np.float32).reshape(shape)
    before = out.copy()
    with pytest.raises(ArgumentError, match="share memory with each other") as info:
        mul(a, a, out=out)
    assert info.value.requirements == ("C1-OUT",)
    assert_same_bits(out, before)


def test_C1_OUT_out_is_a_with_zero_strides_is_refused():
    """The report's case: out is a, a broadcast view; [1,2,3,4]**2 gave [16,16,16,16]."""
    a = np.lib.stride_tricks.as_strided(np.array([1, 2, 3, 4], np.float32), (4,), (0,))
    with pytest.raises(ArgumentError, match="share memory with each other"):
        mul(a, a, out=a)
    assert_same_bits(mul(a, a), np.ones(4, np.float32))  # as an input it is fine


NON_OVERLAPPING = {
    "negative stride": lambda: np.zeros(8, np.float32)[::-1],
    "transpose": lambda: np.zeros((3, 4), np.float32).T,
    "step slice": lambda: np.zeros((4, 6), np.float32)[::2, ::3],
    "negative steps, 3-d": lambda: np.zeros((3, 4, 5), np.float32)[::-1, 1:, ::-2],
    "fortran": lambda: np.zeros((3, 5), np.float32, order="F"),
    "interleaved, found only by the search": lambda: _strided((2, 3), (12, 8)),
    "broadcastable dim of size 1 with zero stride": lambda: _strided((1, 4), (0, 4)),
}


@pytest.mark.parametrize("make", NON_OVERLAPPING.values(), ids=NON_OVERLAPPING)
def test_C1_OUT_valid_strided_views_are_accepted(make):
    out = make()
    if _brute_force_overlap(out):
        pytest.fail(f"test data: {out.shape} {out.strides} overlaps")
    rng = np.random.default_rng(1)
    a = rng.standard_normal(out.shape).astype(np.float32)
    b = rng.standard_normal(out.shape).astype(np.float32)
    assert mul(a, b, out=out) is out
    assert_same_bits(out, a * b)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(1, 4), min_size=1, max_size=4).flatmap(
        lambda shape: st.tuples(
            st.just(tuple(shape)),
            st.lists(st.integers(-20, 20), min_size=len(shape), max_size=len(shape)),
            st.sampled_from([1, 2, 4, 8]),
        )
    )
)
def test_C1_OUT_self_overlap_rule_is_exact(case):
    """overlaps_itself agrees with enumerating every pair of element byte ranges."""
    shape, strides, itemsize = case
    x = _strided(shape, tuple(strides), np.dtype(f"u{itemsize}"))
    assert overlaps_itself(x) is _brute_force_overlap(x)


def test_C1_OUT_undecided_overlap_is_refused(monkeypatch):
    """Past the search's work bound the answer is None, and None refuses (never accepts)."""
    monkeypatch.setattr(validation, "OVERLAP_WORK", 0)
    out = _strided((2, 3), (12, 8))  # valid, but needs the search
    assert overlaps_itself(out) is None
    with pytest.raises(ArgumentError, match="cannot be shown free of") as info:
        mul(np.ones((2, 3), np.float32), np.ones((2, 3), np.float32), out=out)
    assert info.value.requirements == ("C1-OUT",)


@pytest.mark.parametrize(
    ("shape", "strides", "nodes", "answer"),
    [((2, 3), (12, 8), 3, False), ((3, 4, 5), (36, 20, 12), 7, True)],
)
def test_C1_OUT_overlap_search_budget_is_inclusive(monkeypatch, shape, strides, nodes, answer):
    """A search needing exactly OVERLAP_WORK nodes decides; one node fewer gives up.

    ``nodes`` was counted for these layouts (the smallest budget that decides);
    it pins the boundary ``work > OVERLAP_WORK`` (``>=`` would give up here).
    """
    out = _strided(shape, strides)
    monkeypatch.setattr(validation, "OVERLAP_WORK", nodes)
    assert overlaps_itself(out) is answer
    assert overlaps_itself(out) is _brute_force_overlap(out)
    monkeypatch.setattr(validation, "OVERLAP_WORK", nodes - 1)
    assert overlaps_itself(out) is None
