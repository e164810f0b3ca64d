"""Issue 29, item 6: each rule of conform's comparison pinned by a test that fails without it.

compare.compare's contract: floats agree when their bit patterns are equal
or both are NaN (payload and sign unspecified, F-FLOAT); integers when
equal; a wrong dtype or shape is a mismatch of every pair. Issue 29 planted
"a NaN against a number agrees" and "an output of the wrong shape is
compared anyway" and the suite stayed green; these tests fail on each.
"""

from __future__ import annotations

import numpy as np
import pytest

from sonnx_mul.dtypes import ALL_TYPES, by_onnx_name
from sonnx_mul_assurance.conform.compare import compare

FLOATS = [t for t in ALL_TYPES if t.is_float]


def etype(name: str):  # type: ignore[no-untyped-def]
    found = by_onnx_name(name)
    assert found is not None
    return found


@pytest.mark.parametrize("t", FLOATS, ids=lambda t: t.onnx_name)
def test_F_FLOAT_a_nan_against_a_number_is_a_mismatch_both_ways(t) -> None:  # type: ignore[no-untyped-def]
    expected = np.array([1.0, np.nan, 2.0], t.dtype)
    got = np.array([np.nan, 1.0, 2.0], t.dtype)
    assert compare(t, got, expected).mismatches.tolist() == [0, 1]


@pytest.mark.parametrize("t", FLOATS, ids=lambda t: t.onnx_name)
def test_F_FLOAT_two_nans_agree_whatever_their_payload_and_sign(t) -> None:  # type: ignore[no-untyped-def]
    u = t.uint_view
    quiet = np.array([np.nan], t.dtype).view(u)[0]
    other = np.array([quiet | 1, quiet | (1 << (t.bits - 1))], u).view(t.dtype)
    expected = np.array([np.nan, np.nan], t.dtype)
    assert compare(t, other, expected).mismatches.size == 0


@pytest.mark.parametrize("t", FLOATS, ids=lambda t: t.onnx_name)
def test_F_FLOAT_signed_zeros_and_one_ulp_are_mismatches(t) -> None:  # type: ignore[no-untyped-def]
    u = t.uint_view
    expected = np.array([0.0, 1.0], t.dtype)
    got = np.array([-0.0, 1.0], t.dtype)
    got_bits = got.view(u).copy()
    got_bits[1] += 1
    assert compare(t, got_bits.view(t.dtype), expected).mismatches.tolist() == [0, 1]


def test_F_an_output_of_the_wrong_shape_is_a_mismatch_of_every_pair() -> None:
    t = etype("float")
    expected = np.arange(6, dtype=np.float32).reshape(2, 3)
    found = compare(t, expected.reshape(3, 2), expected)
    assert found.problem is not None and "shape" in found.problem
    assert found.mismatches.tolist() == list(range(6))


def test_F_an_output_of_the_wrong_dtype_is_a_mismatch_of_every_pair() -> None:
    t = etype("bfloat16")
    expected = np.ones(4, t.dtype)
    found = compare(t, np.ones(4, np.float16), expected)
    assert found.problem is not None and "dtype" in found.problem
    assert found.mismatches.size == 4


def test_F_integers_agree_only_when_equal() -> None:
    t = etype("int8")
    expected = np.array([-128, 0, 127], np.int8)
    assert compare(t, expected.copy(), expected).mismatches.size == 0
    assert compare(t, np.array([127, 0, 127], np.int8), expected).mismatches.tolist() == [0]


def test_the_wrap_used_by_the_integer_diagnosis() -> None:
    from sonnx_mul_assurance.conform.compare import _wrap

    assert [_wrap(x, 8, True) for x in (200, 127, 128, -129)] == [-56, 127, -128, 127]
    assert _wrap(300, 8, False) == 44
