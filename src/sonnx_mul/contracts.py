"""PEP 316 contracts on the pure-Python kernel and validators, checked by CrossHair.

Why3's Python frontend rejects docstrings, so the contracts CrossHair reads
cannot sit in :mod:`sonnx_mul.kernel`; they sit here, on thin wrappers that
call the very functions the package runs (``kernel.*``,
``validation.check_shapes``, ``validation.broadcastable``,
``validation.check_arguments``, ``dtypes.allowed_types``/``mul_version``).
CrossHair explores the called code symbolically. Run them with
``python -m sonnx_mul.proof.crosshair check``.

Conventions for CrossHair 0.0.112: lists and tuples are compared element by
element (its symbolic ``==`` on sequences gave false counterexamples), sizes
are bounded in ``pre:`` so that a budget of seconds explores them, and every
reported counterexample is re-run as plain Python by the driver.

@relation(F, F-WRAP, F-CHECKED, R1, R4, R3-OPSET, C1-OUT, scope=file)
"""

from __future__ import annotations

from . import kernel, softfloat
from .dtypes import MAX_KNOWN_OPSET, allowed_types, mul_version  # noqa: F401 (used in contracts)
from .errors import ProfileError
from .validation import broadcastable, check_arguments, check_shapes

INT_WIDTHS: tuple[int, ...] = (8, 16, 32, 64)


def int_range(bits: int, signed: bool) -> tuple[int, int]:
    """[lo, hi] of the integer type of ``bits`` bits, as in ``dtypes.ElementType``."""
    if signed:
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return 0, (1 << bits) - 1


# ---------------------------------------------------------------- the kernel


def mul_exact_c(a: list[int], b: list[int]) -> list[int]:
    """The exact element-wise product (F).

    @relation(F, scope=function)

    pre: len(a) == len(b) <= 4
    post: len(__return__) == len(a)
    post: all(__return__[i] == a[i] * b[i] for i in range(len(a)))
    """
    return kernel.mul_exact(a, b)


def wrap_c(x: int, bits: int, signed: bool) -> int:
    """Reduction modulo 2**bits into the type's range (F-WRAP).

    @relation(F-WRAP, scope=function)

    pre: bits in (8, 16, 32, 64)
    post: int_range(bits, signed)[0] <= __return__ <= int_range(bits, signed)[1]
    post: (__return__ - x) % (1 << bits) == 0
    post: (__return__ == x) == (int_range(bits, signed)[0] <= x <= int_range(bits, signed)[1])
    """
    return kernel.wrap(x, bits, signed)


def mul_wrap_c(a: list[int], b: list[int], bits: int, signed: bool) -> list[int]:
    """The wrapped element-wise product: in range and congruent to the exact one (F-WRAP).

    @relation(F-WRAP, scope=function)

    pre: len(a) == len(b) <= 4
    pre: bits in (8, 16, 32, 64)
    post: len(__return__) == len(a)
    post: all(int_range(bits, signed)[0] <= c <= int_range(bits, signed)[1] for c in __return__)
    post: all((__return__[i] - a[i] * b[i]) % (1 << bits) == 0 for i in range(len(a)))
    """
    return kernel.mul_wrap(a, b, bits, signed)


def first_overflow_c(a: list[int], b: list[int], lo: int, hi: int) -> int:
    """The first index whose exact product leaves [lo, hi], or -1 (F-CHECKED).

    @relation(F-CHECKED, scope=function)

    pre: len(a) == len(b) <= 4
    pre: lo <= hi
    post: -1 <= __return__ < len(a)
    post: (__return__ == -1) == all(lo <= a[i] * b[i] <= hi for i in range(len(a)))
    post: __return__ == -1 or not (lo <= a[__return__] * b[__return__] <= hi)
    post: all(lo <= a[i] * b[i] <= hi for i in range(max(__return__, 0)))
    """
    return kernel.first_overflow(a, b, lo, hi)


def overflow_index_c(a: list[int], b: list[int], bits: int, signed: bool) -> int:
    """The overflow predicate of a type: -1 exactly when wrapping changes nothing.

    Links F-CHECKED and F-WRAP: ``overflow="error"`` accepts a pair exactly
    when the wrapped product equals the exact one.

    @relation(F-CHECKED, F-WRAP, scope=function)

    pre: len(a) == len(b) <= 3
    pre: bits in (8, 16)
    post: (__return__ == -1) == same_values(mul_wrap_ref(a, b, bits, signed), mul_exact_c(a, b))
    """
    lo, hi = int_range(bits, signed)
    return kernel.first_overflow(a, b, lo, hi)


def mul_wrap_ref(a: list[int], b: list[int], bits: int, signed: bool) -> list[int]:
    return kernel.mul_wrap(a, b, bits, signed)


def same_values(x: list[int], y: list[int]) -> bool:
    """Element-wise list equality (CrossHair's symbolic list == is unreliable)."""
    return len(x) == len(y) and all(i == j for i, j in zip(x, y, strict=True))


# ------------------------------------------------------------ the validators


class _Shaped:
    """Stands for an array in ``validation.check_shapes``, which reads only ``.shape``."""

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape = shape


def same_shape(sa: list[int], sb: list[int]) -> bool:
    """Element-wise shape equality (CrossHair's symbolic tuple == is unreliable)."""
    return len(sa) == len(sb) and all(x == y for x, y in zip(sa, sb, strict=True))


def numpy_broadcastable(sa: list[int], sb: list[int]) -> bool:
    """numpy's rule, restated independently of ``validation.broadcastable``."""
    n = min(len(sa), len(sb))
    return all(
        sa[len(sa) - 1 - k] == sb[len(sb) - 1 - k]
        or 1 in (sa[len(sa) - 1 - k], sb[len(sb) - 1 - k])
        for k in range(n)
    )


def shape_violations_c(sa: list[int], sb: list[int]) -> list[str]:
    """Requirement ids ``validation.check_shapes`` raises for these shapes ([] if accepted).

    @relation(R1, R4, scope=function)

    pre: len(sa) <= 3 and len(sb) <= 3
    pre: all(d >= 0 for d in sa) and all(d >= 0 for d in sb)
    post: (len(__return__) == 0) == (same_shape(sa, sb) and all(d >= 1 for d in sa))
    post: same_shape(sa, sb) or "R1" in __return__
    post: ("R4" in __return__) == (not same_shape(sa, sb) and numpy_broadcastable(sa, sb))
    """
    try:
        check_shapes(_Shaped(tuple(sa)), _Shaped(tuple(sb)))  # type: ignore[arg-type]
    except ProfileError as error:
        return list(error.requirements)
    return []


def broadcastable_c(sa: list[int], sb: list[int]) -> bool:
    """``validation.broadcastable`` is numpy's broadcasting rule (what R4 forbids).

    @relation(R4, scope=function)

    pre: len(sa) <= 4 and len(sb) <= 4
    pre: all(d >= 1 for d in sa) and all(d >= 1 for d in sb)
    post: __return__ == numpy_broadcastable(sa, sb)
    post: not same_shape(sa, sb) or __return__
    """
    return broadcastable(tuple(sa), tuple(sb))


def opset_types_c(opset: int) -> list[str]:
    """ONNX names of the element types Mul allows at ``opset`` (R3-OPSET).

    @relation(R3-OPSET, scope=function)

    pre: 1 <= opset <= 28
    post: mul_version(opset) in (1, 6, 7, 13, 14) and mul_version(opset) <= opset
    post: ("float16" in __return__) and ("double" in __return__)
    post: ("int32" in __return__) == (opset >= 6)
    post: ("uint64" in __return__) == (opset >= 6)
    post: ("bfloat16" in __return__) == (opset >= 13)
    post: ("int8" in __return__) == (opset >= 14)
    post: ("uint16" in __return__) == (opset >= 14)
    post: len(__return__) == (3 if opset < 6 else 7 if opset < 13 else 8 if opset < 14 else 12)
    """
    return [t.onnx_name for t in allowed_types(opset)]


def arguments_ok_c(opset: int, overflow: str) -> bool:
    """``validation.check_arguments`` accepts exactly the known opsets and modes.

    @relation(R3-OPSET, scope=function)

    pre: len(overflow) <= 6
    post: __return__ == (1 <= opset <= 28 and overflow in ("wrap", "error"))
    """
    try:
        check_arguments(opset, overflow)
    except ProfileError:
        return False
    return MAX_KNOWN_OPSET == 28


# ------------------------------------------------------------- out= overlap


def out_allowed(
    out_start: int, out_end: int, in_start: int, in_end: int, same_layout: bool
) -> bool:
    """The out= rule on byte intervals [start, end): disjoint, or exactly the input.

    This is the integer model of ``validation.check_out``: numpy's
    ``may_share_memory`` is the intersection test of the two arrays' byte
    bounds ([start, end), see ``numpy.lib.array_utils.byte_bounds``) and
    ``same_view`` is "same start, same shape, strides and dtype" (hence same
    end), here ``same_layout``. ``tests/test_kernel_contracts.py`` checks
    that this predicate and ``check_out`` agree on real numpy views.
    """
    overlap = out_start < in_end and in_start < out_end
    identical = out_start == in_start and out_end == in_end and same_layout
    return not overlap or identical


def out_allowed_c(
    out_start: int, out_end: int, in_start: int, in_end: int, same_layout: bool
) -> bool:
    """Properties of the out= rule (C1-OUT): partial overlap is always refused.

    @relation(C1-OUT, scope=function)

    pre: out_start < out_end and in_start < in_end
    post: (out_end <= in_start or in_end <= out_start) <= __return__
    post: not (out_start == in_start and out_end == in_end and same_layout) or __return__
    post: __return__ == out_allowed(in_start, in_end, out_start, out_end, same_layout)
    post: not (out_start < in_start < out_end) or not __return__
    post: not (in_start < out_start < in_end) or not __return__
    post: not (out_start == in_start and out_end != in_end) or not __return__
    """
    return out_allowed(out_start, out_end, in_start, in_end, same_layout)


# --------------------------------------------------------------- float bits


def mul_bits16_c(x: int, y: int) -> int:
    """softfloat.mul_bits on float16: commutative, sign = xor of signs unless NaN.

    @relation(F, scope=function)

    pre: 0 <= x < 65536 and 0 <= y < 65536
    post: __return__ == softfloat.mul_bits(y, x, 5, 11)
    post: 0 <= __return__ < 65536
    post: softfloat.is_nan_bits(__return__, 5, 11) or (__return__ >> 15) == ((x ^ y) >> 15)
    """
    return softfloat.mul_bits(x, y, 5, 11)
