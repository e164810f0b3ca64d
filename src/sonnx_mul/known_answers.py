"""Runtime self-test: known-answer vectors for every element type, run through ``mul``
on the kernel in use (the native one: its float loops are the hardware multiply
as gcc compiled it, checked here at run time).

Some native libraries switch the floating-point unit to flush-to-zero /
denormals-are-zero when they are loaded (code built with -ffast-math does
this for the whole process). The vectors include subnormal products and
subnormal operands, so such a process fails the self-test instead of
silently computing a different Mul. The expected results are literals,
checked against an exact rational oracle by ``tests/operator/test_selftest.py``.

The vectors run on the kernel variant selected at import
(``sonnx_mul._native.isa()``: ``portable``, ``avx2`` or ``avx512``; the
float16 loop of the last two is the F16C hardware loop, WP-proved from the
admitted contract of its vector operation and verified exhaustively). When
that is not the portable build, the self-test also runs every pair of the
vectors' operands (both signs, both orders) of every type through the
selected variant and through the portable build of the proved sources, and
requires the same bits.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import kernel
from .api import mul
from .dtypes import by_onnx_name
from .errors import IntegerOverflowError
from .oracle.softfloat import is_nan_bits

NAN = -1
"""Expected value meaning "any NaN" (ONNX leaves the payload unspecified)."""


@dataclass(frozen=True)
class Vector:
    """One known answer: ``a * b == expected`` (bit patterns for float types).

    For integer types ``fits`` tells whether the exact product fits, i.e.
    whether overflow="error" must return it or raise.
    """

    type_name: str
    what: str
    a: int
    b: int
    expected: int
    fits: bool = True


VECTORS: tuple[Vector, ...] = (
    # float16
    Vector("float16", "ties to even, rounds up", 0x3C01, 0x3E00, 0x3E02),
    Vector("float16", "ties to even, rounds down", 0x3C03, 0x3E00, 0x3E04),
    Vector("float16", "subnormal product of normals", 0x400, 0x3800, 0x200),
    Vector("float16", "subnormal operand kept", 0x1, 0x4000, 0x2),
    Vector("float16", "underflow to +0", 0x1, 0x3800, 0x0),
    Vector("float16", "overflow to +inf", 0x7BFF, 0x4000, 0x7C00),
    Vector("float16", "overflow to -inf", 0xFBFF, 0x4000, 0xFC00),
    Vector("float16", "0 * inf is NaN", 0x0, 0x7C00, NAN),
    Vector("float16", "NaN propagates", 0x7E00, 0x3C00, NAN),
    Vector("float16", "-0 * +1 is -0", 0x8000, 0x3C00, 0x8000),
    Vector("float16", "-1 * -1 is +1", 0xBC00, 0xBC00, 0x3C00),
    # bfloat16
    Vector("bfloat16", "ties to even, rounds up", 0x3F81, 0x3FC0, 0x3FC2),
    Vector("bfloat16", "ties to even, rounds down", 0x3F83, 0x3FC0, 0x3FC4),
    Vector("bfloat16", "subnormal product of normals", 0x80, 0x3F00, 0x40),
    Vector("bfloat16", "subnormal operand kept", 0x1, 0x4000, 0x2),
    Vector("bfloat16", "underflow to +0", 0x1, 0x3F00, 0x0),
    Vector("bfloat16", "overflow to +inf", 0x7F7F, 0x4000, 0x7F80),
    Vector("bfloat16", "overflow to -inf", 0xFF7F, 0x4000, 0xFF80),
    Vector("bfloat16", "0 * inf is NaN", 0x0, 0x7F80, NAN),
    Vector("bfloat16", "NaN propagates", 0x7FC0, 0x3F80, NAN),
    Vector("bfloat16", "-0 * +1 is -0", 0x8000, 0x3F80, 0x8000),
    Vector("bfloat16", "-1 * -1 is +1", 0xBF80, 0xBF80, 0x3F80),
    # float
    Vector("float", "ties to even, rounds up", 0x3F800001, 0x3FC00000, 0x3FC00002),
    Vector("float", "ties to even, rounds down", 0x3F800003, 0x3FC00000, 0x3FC00004),
    Vector("float", "subnormal product of normals", 0x800000, 0x3F000000, 0x400000),
    Vector("float", "subnormal operand kept", 0x1, 0x40000000, 0x2),
    Vector("float", "underflow to +0", 0x1, 0x3F000000, 0x0),
    Vector("float", "overflow to +inf", 0x7F7FFFFF, 0x40000000, 0x7F800000),
    Vector("float", "overflow to -inf", 0xFF7FFFFF, 0x40000000, 0xFF800000),
    Vector("float", "0 * inf is NaN", 0x0, 0x7F800000, NAN),
    Vector("float", "NaN propagates", 0x7FC00000, 0x3F800000, NAN),
    Vector("float", "-0 * +1 is -0", 0x80000000, 0x3F800000, 0x80000000),
    Vector("float", "-1 * -1 is +1", 0xBF800000, 0xBF800000, 0x3F800000),
    # double
    Vector(
        "double",
        "ties to even, rounds up",
        0x3FF0000000000001,
        0x3FF8000000000000,
        0x3FF8000000000002,
    ),
    Vector(
        "double",
        "ties to even, rounds down",
        0x3FF0000000000003,
        0x3FF8000000000000,
        0x3FF8000000000004,
    ),
    Vector(
        "double",
        "subnormal product of normals",
        0x10000000000000,
        0x3FE0000000000000,
        0x8000000000000,
    ),
    Vector("double", "subnormal operand kept", 0x1, 0x4000000000000000, 0x2),
    Vector("double", "underflow to +0", 0x1, 0x3FE0000000000000, 0x0),
    Vector(
        "double", "overflow to +inf", 0x7FEFFFFFFFFFFFFF, 0x4000000000000000, 0x7FF0000000000000
    ),
    Vector(
        "double", "overflow to -inf", 0xFFEFFFFFFFFFFFFF, 0x4000000000000000, 0xFFF0000000000000
    ),
    Vector("double", "0 * inf is NaN", 0x0, 0x7FF0000000000000, NAN),
    Vector("double", "NaN propagates", 0x7FF8000000000000, 0x3FF0000000000000, NAN),
    Vector("double", "-0 * +1 is -0", 0x8000000000000000, 0x3FF0000000000000, 0x8000000000000000),
    Vector("double", "-1 * -1 is +1", 0xBFF0000000000000, 0xBFF0000000000000, 0x3FF0000000000000),
    # int8
    Vector("int8", "wrap of hi * 2", 127, 2, -2, fits=False),
    Vector("int8", "lo * -1", -128, -1, -128, fits=False),
    Vector("int8", "exact 3 * 5", 3, 5, 15, fits=True),
    # int16
    Vector("int16", "wrap of hi * 2", 32767, 2, -2, fits=False),
    Vector("int16", "lo * -1", -32768, -1, -32768, fits=False),
    Vector("int16", "exact 3 * 5", 3, 5, 15, fits=True),
    # int32
    Vector("int32", "wrap of hi * 2", 2147483647, 2, -2, fits=False),
    Vector("int32", "lo * -1", -2147483648, -1, -2147483648, fits=False),
    Vector("int32", "exact 3 * 5", 3, 5, 15, fits=True),
    # int64
    Vector("int64", "wrap of hi * 2", 9223372036854775807, 2, -2, fits=False),
    Vector("int64", "lo * -1", -9223372036854775808, -1, -9223372036854775808, fits=False),
    Vector("int64", "exact 3 * 5", 3, 5, 15, fits=True),
    # uint8
    Vector("uint8", "wrap of hi * 2", 255, 2, 254, fits=False),
    Vector("uint8", "hi * hi", 255, 255, 1, fits=False),
    Vector("uint8", "exact 3 * 5", 3, 5, 15, fits=True),
    # uint16
    Vector("uint16", "wrap of hi * 2", 65535, 2, 65534, fits=False),
    Vector("uint16", "hi * hi", 65535, 65535, 1, fits=False),
    Vector("uint16", "exact 3 * 5", 3, 5, 15, fits=True),
    # uint32
    Vector("uint32", "wrap of hi * 2", 4294967295, 2, 4294967294, fits=False),
    Vector("uint32", "hi * hi", 4294967295, 4294967295, 1, fits=False),
    Vector("uint32", "exact 3 * 5", 3, 5, 15, fits=True),
    # uint64
    Vector("uint64", "wrap of hi * 2", 18446744073709551615, 2, 18446744073709551614, fits=False),
    Vector("uint64", "hi * hi", 18446744073709551615, 18446744073709551615, 1, fits=False),
    Vector("uint64", "exact 3 * 5", 3, 5, 15, fits=True),
)


@dataclass(frozen=True)
class SelfTestReport:
    """The outcome: ``ok`` when every vector gave its known answer; ``kernel``
    names the multiply that ran (``native`` or, for diagnosis only, ``numpy``),
    ``isa`` the native kernel's variant (``"-"`` for numpy), ``isa_compared``
    the number of types whose variant was compared bit for bit with the
    portable build (0 when the portable build is the one in use)."""

    checked: int
    failures: tuple[str, ...] = field(default=())
    kernel: str = field(default=kernel.NAME)
    isa: str = field(default="-")
    isa_compared: int = 0

    @property
    def ok(self) -> bool:
        return self.checked > 0 and not self.failures


# @relation(F-FLOAT, F-WRAP, F-CHECKED, scope=function)
def selftest() -> SelfTestReport:
    """Run every vector through ``mul`` (the kernel in use) in this process; never raises."""
    failures = []
    for vector in VECTORS:
        problem = _check(vector)
        if problem:
            failures.append(f"{vector.type_name}: {vector.what}: {problem}")
    isa, compared = "-", 0
    if kernel.NAME == "native":
        isa = kernel.isa()
        if isa != kernel.reference_isa():
            for type_name in sorted({v.type_name for v in VECTORS}):
                compared += 1
                problem = _compare_isa(type_name, isa)
                if problem:
                    failures.append(f"{type_name}: {isa} vs {kernel.reference_isa()}: {problem}")
    return SelfTestReport(len(VECTORS), tuple(failures), kernel.NAME, isa, compared)


def _compare_isa(type_name: str, isa: str) -> str | None:
    """Every pair of the type's vector operands (with both signs for floats),
    through the variant ``isa`` and the portable build: the same bits?"""
    etype = by_onnx_name(type_name)
    assert etype is not None
    values = sorted({x for v in VECTORS if v.type_name == type_name for x in (v.a, v.b)})
    if etype.is_float:
        sign = 1 << (etype.bits - 1)
        values = sorted(set(values) | {x ^ sign for x in values})
        operands = np.array(values, etype.uint_view).view(etype.dtype)
    else:
        operands = np.array(values, etype.dtype)
    # every ordered pair, at a length that is not a multiple of any vector width
    a = np.repeat(operands, len(operands))[:-1]
    b = np.tile(operands, len(operands))[:-1]
    for checked in (False, True) if not etype.is_float else (False,):
        got = kernel.multiply_on(isa, a, b, None, checked)
        want = kernel.multiply_on(kernel.reference_isa(), a, b, None, checked)
        if isinstance(got, int) or isinstance(want, int):
            if got != want:
                return f"overflow='error' found index {got}, {kernel.reference_isa()} {want}"
            continue
        differ = int(np.count_nonzero(got.view(np.uint8) != want.view(np.uint8)))
        if differ:
            return f"{differ} bytes differ (checked={checked})"
    return None


def _check(vector: Vector) -> str | None:
    etype = by_onnx_name(vector.type_name)
    assert etype is not None
    if etype.is_float:
        a = np.array([vector.a], etype.uint_view).view(etype.dtype)
        b = np.array([vector.b], etype.uint_view).view(etype.dtype)
        got = int(mul(a, b).view(etype.uint_view)[0])
        is_nan = is_nan_bits(got, etype.eb, etype.sb)
        if vector.expected == NAN:
            return None if is_nan else f"got {got:#x}, expected a NaN"
        return None if got == vector.expected else f"got {got:#x}, expected {vector.expected:#x}"
    a, b = np.array([vector.a], etype.dtype), np.array([vector.b], etype.dtype)
    got = int(mul(a, b)[0])
    if got != vector.expected:
        return f"wrap gave {got}, expected {vector.expected}"
    try:
        checked = int(mul(a, b, overflow="error")[0])
    except IntegerOverflowError:
        return None if not vector.fits else "overflow='error' raised on a product that fits"
    if not vector.fits:
        return "overflow='error' did not raise"
    return None if checked == vector.expected else f"overflow='error' gave {checked}"
