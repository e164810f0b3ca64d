"""Bit-for-bit comparison of a runtime's output with ``sonnx_mul.mul``, and a
diagnosis of each mismatch (what the runtime seems to do instead).

Contract: two floats agree when their bit patterns are equal or both are NaN
(the NaN payload and sign are unspecified, F-FLOAT); two integers when they
are equal. A wrong output dtype or shape is a mismatch of every pair.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from sonnx_mul.dtypes import ElementType

EXAMPLES = 5
"""Mismatching pairs shown per type and model variant."""
DIAGNOSED = 1 << 16
"""Mismatches diagnosed one by one per chunk at most, spread over the chunk (the
counts say of how many): every mismatch of an 8-bit exhaustive run."""
DIAGNOSED_TOTAL = 1 << 18
"""Per model variant; past it, 256 spread mismatches per chunk."""


@dataclass
class Outcome:
    """The comparison of one chunk: mismatching indices, or a whole-chunk problem."""

    mismatches: np.ndarray  # int64 indices into the chunk
    problem: str | None = None  # wrong dtype or shape: every pair counts as a mismatch


def _nan(x: np.ndarray, etype: ElementType) -> np.ndarray:
    if not etype.is_float:
        return np.zeros(x.shape, bool)
    with np.errstate(invalid="ignore"):
        found: np.ndarray = np.isnan(x.astype(np.float32) if x.dtype.itemsize == 2 else x)
    return found


def compare(etype: ElementType, got: np.ndarray, expected: np.ndarray) -> Outcome:
    """Indices where ``got`` differs from ``expected`` (module docstring)."""
    if got.dtype != expected.dtype or got.shape != expected.shape:
        kind = "dtype" if got.dtype != expected.dtype else "shape"
        return Outcome(
            np.arange(expected.size, dtype=np.int64),
            f"wrong output {kind}: {got.dtype} {list(got.shape)} where {etype.onnx_name} "
            f"{'[n]' if kind == 'dtype' else list(expected.shape)} is expected",
        )
    u = etype.uint_view
    differ = np.flatnonzero(
        np.ascontiguousarray(got).view(u) != np.ascontiguousarray(expected).view(u)
    )
    if etype.is_float and differ.size:  # NaN-ness on the few differing bits only: cheap
        both_nan = _nan(got[differ], etype) & _nan(expected[differ], etype)
        differ = differ[~both_nan]
    return Outcome(differ.astype(np.int64))


def bits(x: Any, etype: ElementType) -> int:
    """The bit pattern of one element (integers: their two's complement pattern)."""
    return int(np.asarray(x, dtype=etype.dtype).reshape(1).view(etype.uint_view)[0])


def hexbits(x: Any, etype: ElementType) -> str:
    return f"0x{bits(x, etype):0{etype.bits // 4}x}"


def value(x: Any, etype: ElementType) -> str:
    """A readable value: ``repr`` of the Python float or int."""
    return repr(float(x)) if etype.is_float else str(int(x))


# ------------------------------------------------------------------ diagnosis
def diagnose(etype: ElementType, a: Any, b: Any, expected: Any, got: Any) -> str:
    """What the runtime's result ``got`` looks like, compared with ``expected``."""
    return (
        _diagnose_float(etype, a, b, expected, got)
        if etype.is_float
        else (_diagnose_int(etype, a, b, got))
    )


def _wrap(x: int, bits: int, signed: bool) -> int:
    x %= 1 << bits
    return x - (1 << bits) if signed and x >= 1 << (bits - 1) else x


def _diagnose_int(etype: ElementType, a: Any, b: Any, got: Any) -> str:
    exact = int(a) * int(b)
    if int(got) == min(max(exact, etype.lo), etype.hi):
        return "saturated to the type's range instead of wrapping modulo 2^n"
    if etype.bits < 16 and int(got) == min(max(_wrap(exact, 16, True), etype.lo), etype.hi):
        return (
            "wrapped to 16 bits then saturated (products of 2^15 or more give 0): "
            "a scalar tail loop"
        )
    if etype.bits > 32:
        narrow = _wrap(_wrap(int(a), 32, True) * _wrap(int(b), 32, True), 32, True)
        if int(got) == _wrap(narrow, etype.bits, etype.signed):
            return "computed in 32-bit integers (operands and product truncated to 32 bits)"
    return "differs from the product wrapped modulo 2^n"


def _fields(x: int, etype: ElementType) -> tuple[int, int, int]:
    m = etype.sb - 1
    return x >> (etype.bits - 1), (x >> m) & ((1 << etype.eb) - 1), x & ((1 << m) - 1)


def _is_subnormal(x: int, etype: ElementType) -> bool:
    _, e, f = _fields(x, etype)
    return e == 0 and f != 0


def _is_zero(x: int, etype: ElementType) -> bool:
    _, e, f = _fields(x, etype)
    return e == 0 and f == 0


def _narrow_precision(x: int, etype: ElementType, sb: int) -> bool:
    """True when the significand of ``x`` has at most ``sb`` bits (a narrower format's)."""
    m = etype.sb - 1
    drop = m - (sb - 1)
    return drop > 0 and x & ((1 << drop) - 1) == 0


def _float32_saturating(a: Any, b: Any) -> np.float64:
    """A double product as OpenVINO's CPU plugin computes it (measured): operands
    converted to float32 with infinities and overflows clamped to the largest
    finite float32, multiplied in float32, the result clamped the same way."""
    big = float(np.finfo(np.float32).max)
    with np.errstate(all="ignore"):
        x, y = (np.float32(np.clip(float(v), -big, big)) for v in (a, b))
        return np.float64(np.clip(np.float64(x * y), -big, big))


def _diagnose_float(etype: ElementType, a: Any, b: Any, expected: Any, got: Any) -> str:
    xa, xb, xe, xg = (bits(v, etype) for v in (a, b, expected, got))
    fe, fg = float(expected), float(got)
    sub_operand = _is_subnormal(xa, etype) or _is_subnormal(xb, etype)
    if etype.sb > 24 and bits(_float32_saturating(a, b), etype) == xg:
        if _is_zero(xg, etype) and (sub_operand or _is_subnormal(xe, etype)):
            return "subnormal flushed to zero (as a float32 computation also does)"
        return (
            "computed in float32, conversions saturating (inf and overflows become "
            "±3.4028235e38, NaN from 0 x inf lost)"
        )
    if np.isnan(fg) and not np.isnan(fe) and sub_operand and np.isinf(float(a) * float(b)):
        return "subnormal operand taken as zero (denormals-are-zero): 0 x inf"
    if np.isnan(fe) != np.isnan(fg):
        return (
            "NaN where a number is expected" if np.isnan(fg) else "a number where NaN is expected"
        )
    if sub_operand and _is_zero(xg, etype):
        return "subnormal operand taken as zero (denormals-are-zero)"
    if _is_subnormal(xe, etype) and _is_zero(xg, etype):
        return "subnormal result flushed to zero (flush-to-zero)"
    if etype.sb > 24:  # a double computed as float32: operands and product rounded to float32
        with np.errstate(all="ignore"):
            f32 = np.float64(np.float32(float(a)) * np.float32(float(b)))
        if bits(f32, etype) == xg:
            return "computed in float32 (operands and product rounded to float32)"
    sign_e, sign_g = xe >> (etype.bits - 1), xg >> (etype.bits - 1)
    if sign_e != sign_g:
        return "wrong sign" + (" of zero" if _is_zero(xe, etype) else "")
    mag_e, mag_g = xe & ~(1 << (etype.bits - 1)), xg & ~(1 << (etype.bits - 1))
    if np.isinf(fe) and np.isfinite(fg):
        return "overflow gave the largest finite value (rounding toward zero?)"
    if np.isfinite(fe) and np.isfinite(fg):
        exact = Fraction(float(a)) * Fraction(float(b))
        if mag_g == mag_e - 1 and Fraction(fg) != exact:
            return "one ulp toward zero (truncation / round toward zero)"
        if mag_g == mag_e + 1:
            return "one ulp away from zero"
        if etype.sb > 8 and _narrow_precision(xg, etype, 8) and not _narrow_precision(xe, etype, 8):
            return "result with bfloat16 precision (a lower inference precision)"
        if (
            etype.sb > 11
            and _narrow_precision(xg, etype, 11)
            and not _narrow_precision(xe, etype, 11)
        ):
            return "result with float16 precision (a lower inference precision)"
        if etype.sb > 24 and float(np.float32(fg)) == fg:
            return "result representable in float32 (computed in float32?)"
        n = abs(mag_g - mag_e)
        return f"differs by {n} ulp" if n <= 4 else "differs by more than 4 ulp"
    if etype.sb > 24 and (np.isinf(fg) or fg == 0) and abs(fe) > 0:
        return "overflow or underflow of the float32 range (computed in float32?)"
    return "differs"
