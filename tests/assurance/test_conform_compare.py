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


# ------------------------------------------------------------------ diagnosis
# What a report says a runtime does instead: each branch of compare.diagnose,
# on operands built from bit patterns, pinned to its wording. The mutation run
# of issue 29 left every change to the diagnosis (a mask, a sign shift, a
# branch condition, the number of examples) unnoticed; each case below is the
# one that separates a branch from the next one down.


def _f(name: str, x: float | int, *, raw: bool = False) -> np.generic:
    """One element of type ``name``: the value ``x``, or the bit pattern ``x`` if ``raw``."""
    t = etype(name)
    if raw:
        return np.array([x], t.uint_view).view(t.dtype)[0]  # type: ignore[no-any-return]
    return np.array([x], t.dtype)[0]  # type: ignore[no-any-return]


def _product(name: str, a: np.generic, b: np.generic) -> np.generic:
    with np.errstate(all="ignore"):
        return np.array([a], etype(name).dtype)[0] * b  # type: ignore[no-any-return]


def _float_cases() -> list[tuple[str, str, np.generic, np.generic, np.generic, str]]:
    """(id, type, a, b, got, diagnosis); expected is the IEEE product of a and b."""
    f32, f64 = "float", "double"
    one = _f(f32, 1.0)
    third = _f(f32, 0x3F8CCCCD, raw=True)  # 1.1f
    sub = _f(f32, 1, raw=True)  # the smallest float32 subnormal
    tiny = _f(f32, 1e-20)
    big = float(np.finfo(np.float32).max)
    p11 = _product(f32, third, third)
    p11_bits = int(np.array([p11]).view(np.uint32)[0])
    return [
        ("double-as-float32-saturating", f64, _f(f64, 1e300), _f(f64, 1e10), _f(f64, big),
         "computed in float32, conversions saturating (inf and overflows become "
         "±3.4028235e38, NaN from 0 x inf lost)"),
        # a float32 computation underflows to 0 on normal doubles: no subnormal involved
        ("double-as-float32-underflow", f64, _f(f64, 1e-30), _f(f64, 1e-30), _f(f64, 0.0),
         "computed in float32, conversions saturating (inf and overflows become "
         "±3.4028235e38, NaN from 0 x inf lost)"),
        ("double-subnormal-operand-flushed", f64, _f(f64, 1, raw=True), _f(f64, 2.0),
         _f(f64, 0.0), "subnormal flushed to zero (as a float32 computation also does)"),
        ("daz-zero-times-inf", f32, sub, _f(f32, np.inf), _f(f32, np.nan),
         "subnormal operand taken as zero (denormals-are-zero): 0 x inf"),
        ("nan-for-a-number", f32, _f(f32, 2.0), one, _f(f32, np.nan),
         "NaN where a number is expected"),
        ("number-for-nan", f32, _f(f32, 0.0), _f(f32, np.inf), _f(f32, 0.0),
         "a number where NaN is expected"),
        ("daz", f32, sub, _f(f32, 2.0), _f(f32, 0.0),
         "subnormal operand taken as zero (denormals-are-zero)"),
        # negative: the exponent mask must leave the sign bit out
        ("ftz-negative", f32, -tiny, tiny, _f(f32, -0.0),
         "subnormal result flushed to zero (flush-to-zero)"),
        ("double-as-float32", f64, _f(f64, 1e30), _f(f64, 1e30), _f(f64, np.inf),
         "computed in float32 (operands and product rounded to float32)"),
        ("wrong-sign", f32, _f(f32, 2.0), one, _f(f32, -2.0), "wrong sign"),
        # negative expected: the sign bits of both sides are read
        ("wrong-sign-negative", f32, _f(f32, -2.0), one, _f(f32, 2.0), "wrong sign"),
        ("ulp-away-negative", f32, -third, third, _f(f32, p11_bits + 1 | 1 << 31, raw=True),
         "one ulp away from zero"),
        ("wrong-sign-of-zero", f32, _f(f32, 0.0), one, _f(f32, -0.0), "wrong sign of zero"),
        ("overflow-to-largest", f32, _f(f32, 3e38), _f(f32, 10.0), _f(f32, big),
         "overflow gave the largest finite value (rounding toward zero?)"),
        ("ulp-toward-zero", f32, third, third, _f(f32, p11_bits - 1, raw=True),
         "one ulp toward zero (truncation / round toward zero)"),
        ("ulp-away", f32, third, third, _f(f32, p11_bits + 1, raw=True),
         "one ulp away from zero"),
        ("bfloat16-precision", f32, _f(f32, 0x3F800001, raw=True), one,
         _f(f32, 0x3F810000, raw=True),
         "result with bfloat16 precision (a lower inference precision)"),
        ("float16-precision", f32, _f(f32, 0x3F800001, raw=True), one,
         _f(f32, 0x3F802000, raw=True),
         "result with float16 precision (a lower inference precision)"),
        ("double-representable-in-float32", f64, _f(f64, 1 + 2.0**-52), _f(f64, 1.0),
         _f(f64, 1 + 2.0**-20), "result representable in float32 (computed in float32?)"),
        ("float32-3-ulp", f32, one, one, _f(f32, 0x3F800003, raw=True), "differs by 3 ulp"),
        ("float32-4-ulp", f32, one, one, _f(f32, 0x3F800004, raw=True), "differs by 4 ulp"),
        ("float32-5-ulp", f32, one, one, _f(f32, 0x3F800005, raw=True),
         "differs by more than 4 ulp"),
        ("double-out-of-float32-range", f64, _f(f64, 1e200), _f(f64, 1e-190),
         _f(f64, np.inf), "overflow or underflow of the float32 range (computed in float32?)"),
        ("float32-inf", f32, _f(f32, 2.0), one, _f(f32, np.inf), "differs"),
        ("float16-wrong-sign", "float16", _f("float16", 3.0), _f("float16", 1.0),
         _f("float16", -3.0), "wrong sign"),
        ("bfloat16-ulp-away", "bfloat16", _f("bfloat16", 3.0), _f("bfloat16", 1.0),
         _f("bfloat16", 0x4041, raw=True), "one ulp away from zero"),
    ]  # fmt: skip


FLOAT_CASES = _float_cases()


@pytest.mark.parametrize(
    ("name", "a", "b", "got", "diagnosis"),
    [c[1:] for c in FLOAT_CASES],
    ids=[c[0] for c in FLOAT_CASES],
)
def test_each_float_diagnosis_names_what_the_runtime_did(  # type: ignore[no-untyped-def]
    name, a, b, got, diagnosis
) -> None:
    from sonnx_mul_assurance.conform.compare import diagnose

    t = etype(name)
    expected = _product(name, a, b)
    # the case is a mismatch under compare's own rule, else it would never be diagnosed
    assert compare(t, np.array([got], t.dtype), np.array([expected], t.dtype)).mismatches.size
    assert diagnose(t, a, b, expected, got) == diagnosis


INT_CASES = [
    ("saturated", "int8", 100, 2, 127,
     "saturated to the type's range instead of wrapping modulo 2^n"),
    # 255 * 255 = 65025 is -511 in 16-bit two's complement, then clamped to 0
    ("16-bit-tail-loop", "uint8", 255, 255, 0,
     "wrapped to 16 bits then saturated (products of 2^15 or more give 0): a scalar tail loop"),
    # (2^33 + 3) * 5 with the operands truncated to 32 bits: 3 * 5
    ("32-bit-int64", "int64", 2**33 + 3, 5, 15,
     "computed in 32-bit integers (operands and product truncated to 32 bits)"),
    ("32-bit-uint64", "uint64", 2**40 + 7, 2**32 + 6, 42,
     "computed in 32-bit integers (operands and product truncated to 32 bits)"),
    ("other", "int32", 70000, 70000, 7, "differs from the product wrapped modulo 2^n"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "a", "b", "got", "diagnosis"),
    [c[1:] for c in INT_CASES],
    ids=[c[0] for c in INT_CASES],
)
def test_each_integer_diagnosis_names_what_the_runtime_did(  # type: ignore[no-untyped-def]
    name, a, b, got, diagnosis
) -> None:
    from sonnx_mul_assurance.conform.compare import _wrap, diagnose

    t = etype(name)
    expected = _wrap(a * b, t.bits, t.signed)
    assert expected != got
    values = np.array([a, b, expected, got], t.dtype)
    assert diagnose(t, *values) == diagnosis


def test_a_report_shows_five_examples_of_a_variant() -> None:
    """compare.EXAMPLES: five mismatching pairs shown per type and variant, however
    many there are (here a runtime off by 1 to 7 ulp, so many distinct diagnoses)."""
    from sonnx_mul_assurance.conform import CallableRuntime, run_conformance

    def off_by_some_ulp(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        import sonnx_mul

        c = np.ascontiguousarray(sonnx_mul.mul(a, b))
        u = c.view(np.uint32)
        return (u + (np.arange(u.size, dtype=np.uint32) % 7 + 1)).view(np.float32)

    result = run_conformance(
        CallableRuntime(off_by_some_ulp), types=[etype("float")], budget=1 << 12,
        random=1 << 10, variants=("single",), refusals=False,
    )  # fmt: skip
    variant = result["types"][0]["variants"][0]
    assert variant["mismatches"] > 5 and len(variant["diagnoses"]) > 5
    assert len(variant["examples"]) == 5
