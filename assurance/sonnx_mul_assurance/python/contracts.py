"""PEP 316 contracts on the pure-Python kernel and validators, checked by CrossHair.

Why3's Python frontend rejects docstrings, so the contracts CrossHair reads
cannot sit in :mod:`sonnx_mul.oracle.integers`; they sit here, on thin wrappers that
call the very functions the package runs (``kernel.*``,
``validation.check_shapes``, ``validation.broadcastable``,
``validation.check_arguments``, ``dtypes.allowed_types``/``mul_version``).
CrossHair explores the called code symbolically. Run them with
``python -m sonnx_mul_assurance.python.crosshair check``.

Conventions for CrossHair 0.0.112: lists and tuples are compared element by
element (its symbolic ``==`` on sequences gave false counterexamples), sizes
are bounded in ``pre:`` so that a budget of seconds explores them, and every
reported counterexample is re-run as plain Python by the driver.

@relation(F, F-WRAP, F-CHECKED, R1, R4, R3-OPSET, C1-OUT, scope=file)
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from sonnx_mul.dtypes import ALL_TYPES, INT16, MAX_KNOWN_OPSET, allowed_types, mul_version  # noqa: F401
from sonnx_mul.errors import ProfileError
from sonnx_mul.oracle import integers as kernel
from sonnx_mul.oracle import softfloat
from sonnx_mul.validation import (
    broadcastable,
    check_arguments,
    check_dense,
    check_element_types,
    check_out,
    check_shapes,
)

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


# ------------------------------------- the real validators on real numpy metadata
#
# CrossHair does not look inside numpy, so these wrappers take small integers
# that describe arrays, build the real numpy objects, call the REAL function
# (validation.check_element_types, check_dense, check_out), and state the
# expected verdict with an independent specification in plain Python.

_PROFILE_DTYPES: tuple[np.dtype, ...] = tuple(t.dtype for t in ALL_TYPES)
_OTHER_DTYPES: tuple[np.dtype, ...] = tuple(
    np.dtype(x) for x in (np.bool_, np.complex64, np.object_, "U2", ml_dtypes.float8_e4m3fn)
)
DTYPE_CANDIDATES: tuple[np.dtype, ...] = _PROFILE_DTYPES + _OTHER_DTYPES
N_PROFILE = len(_PROFILE_DTYPES)
N_CANDIDATES = len(DTYPE_CANDIDATES)


def _swapped(d: np.dtype) -> np.dtype:
    """The non-native byte order of ``d`` when it has one (numbers wider than a byte)."""
    return d.newbyteorder() if d.kind in "iufc" and d.itemsize > 1 else d


def element_types_verdict(ia: int, ib: int, opset: int) -> str:
    """The specification of check_element_types on candidate indices (SPEC R3)."""
    if ia >= N_PROFILE or ib >= N_PROFILE:
        return "R3"
    if ia != ib:
        return "R3,R3-SAME"
    return "" if ALL_TYPES[ia] in allowed_types(opset) else "R3,R3-OPSET"


def check_element_types_c(ia: int, ib: int, opset: int, swap_a: bool, swap_b: bool) -> str:
    """``validation.check_element_types`` on real arrays of any candidate dtype and byte order.

    @relation(R3, R3-SAME, R3-OPSET, scope=function)

    pre: 0 <= ia < N_CANDIDATES and 0 <= ib < N_CANDIDATES
    pre: 1 <= opset <= MAX_KNOWN_OPSET
    post: __return__ == element_types_verdict(ia, ib, opset)
    """
    da, db = DTYPE_CANDIDATES[ia], DTYPE_CANDIDATES[ib]
    a = np.empty(1, _swapped(da) if swap_a else da)
    b = np.empty(1, _swapped(db) if swap_b else db)
    try:
        etype = check_element_types(a, b, opset)
    except ProfileError as error:
        return ",".join(error.requirements)
    return "" if etype is ALL_TYPES[ia] else "wrong type"


class _NdSub(np.ndarray):
    """An ndarray subclass: not a plain numpy.ndarray (R2-DENSE)."""


class _CsrLike:
    """Has ``tocsr`` as scipy.sparse matrices do."""

    def tocsr(self) -> None:
        return None


class _SparseModule:
    """Its class lives in a scipy.sparse module."""


_SparseModule.__module__ = "scipy.sparse._csr"


class _SparseLayout:
    """A torch-like tensor with a sparse layout."""

    layout = "torch.sparse_coo"


def _input_of_kind(kind: int) -> object:
    objects: tuple[object, ...] = (
        np.zeros(2),  # 0: dense
        [1.0, 2.0],  # 1: list
        3,  # 2: Python scalar
        np.zeros(2).view(_NdSub),  # 3: ndarray subclass
        _CsrLike(),  # 4: sparse (tocsr)
        _SparseModule(),  # 5: sparse (module)
        _SparseLayout(),  # 6: sparse (layout)
        None,  # 7
        np.float32(1.0),  # 8: numpy scalar
    )
    return objects[kind]


DENSE_KINDS = 9


def check_dense_c(kind: int, second: bool) -> str:
    """``validation.check_dense`` returns exactly the plain ndarray; R2 for sparse, else R2-DENSE.

    @relation(R2, R2-DENSE, scope=function)

    pre: 0 <= kind < DENSE_KINDS
    post: __return__ == ("ok" if kind == 0 else "R2" if kind in (4, 5, 6) else "R2-DENSE")
    """
    x = _input_of_kind(kind)
    name = "B" if second else "A"
    try:
        returned = check_dense(x, name)
    except ProfileError as error:
        message = str(error).split("] ", 1)[-1]
        named = message.startswith(f"{name} ")
        return ",".join(error.requirements) if named else "operand not named"
    return "ok" if returned is x else "not the same object"


def _byte_bounds(start: int, step: int, count: int, itemsize: int) -> tuple[int, int]:
    last = start + step * (count - 1)
    return min(start, last) * itemsize, (max(start, last) + 1) * itemsize


def out_verdict(
    n: int, a0: int, sa: int, b0: int, shared: bool,
    kind: int, o0: int, so: int, on: int,
) -> bool:  # fmt: skip
    """The specification of C1-OUT for the arrays :func:`check_out_c` builds.

    ``out`` is accepted when it is a plain writeable ndarray of C's shape and
    native dtype, and, towards A and B each, it is that very array, or it
    shares no byte with it, or it is a view of exactly its elements in the
    same order (numpy's may_share_memory tests byte bounds).
    """
    if kind in (2, 4) or (kind != 1 and on != n) or kind == 3:
        return False
    if kind == 5:
        return True  # a fresh array shares nothing
    a = (a0, sa, n)
    o = a if kind == 1 else (o0, so, on)
    inputs = [(a, True)] + ([((b0, 1, n), False)] if shared else [])
    for x, is_a in inputs:
        if kind == 1 and is_a:
            continue  # out is A
        lo_o, hi_o = _byte_bounds(*o, 2)
        lo_x, hi_x = _byte_bounds(*x, 2)
        if lo_o < hi_x and lo_x < hi_o and o != x:
            return False
    return True


def check_out_c(
    n: int, a0: int, sa: int, b0: int, shared: bool,
    kind: int, o0: int, so: int, on: int,
) -> str:  # fmt: skip
    """``validation.check_out`` on real views of one int16 buffer (C1-OUT).

    A is ``n`` elements from ``a0`` by ``sa`` (negative: reversed);
    B is contiguous from ``b0`` in the same buffer or a separate array;
    out is a view (kind 0), A itself (1), a list (2), a read-only view (3), an
    int32 array (4) or a fresh array (5).

    @relation(C1-OUT, scope=function)

    pre: 1 <= n <= 3 and 1 <= on <= 3 and 0 <= kind <= 5
    pre: sa in (-2, -1, 1, 2) and so in (-2, -1, 1, 2)
    pre: 0 <= a0 < 16 and 0 <= a0 + sa * (n - 1) < 16
    pre: 0 <= o0 < 16 and 0 <= o0 + so * (on - 1) < 16
    pre: 0 <= b0 and b0 + n <= 16
    post: __return__ == ("ok" if out_verdict(n, a0, sa, b0, shared, kind, o0, so, on) else "C1-OUT")
    """
    buf = np.zeros(16, np.int16)

    def view(start: int, step: int, count: int) -> np.ndarray:
        stop = start + step * count
        return buf[start : (stop if stop >= 0 else None) : step]

    a = view(a0, sa, n)
    b = view(b0, 1, n) if shared else np.zeros(n, np.int16)
    out: object
    if kind == 1:
        out = a
    elif kind == 2:
        out = [0] * on
    elif kind == 4:
        out = np.zeros(on, np.int32)
    elif kind == 5:
        out = np.zeros(on, np.int16)
    else:
        out = view(o0, so, on)
        if kind == 3:
            out.flags.writeable = False
    try:
        returned = check_out(out, a, b, INT16)
    except ProfileError as error:
        return ",".join(error.requirements)
    return "ok" if returned is out else "not out"


# ----------------------------------------- float bits against nearest-even


def _finite(bits: int, eb: int, sb: int) -> tuple[int, int, int] | None:
    """``(sign, M, E)`` with value (-1)**sign * M * 2**E, or None for inf and NaN."""
    p = sb - 1
    e = (bits >> p) & ((1 << eb) - 1)
    f = bits & ((1 << p) - 1)
    bias = (1 << (eb - 1)) - 1
    if e == (1 << eb) - 1:
        return None
    if e == 0:
        return bits >> (eb + p), f, 1 - bias - p
    return bits >> (eb + p), f | (1 << p), e - bias - p


def is_rne_product(x: int, y: int, r: int, eb: int, sb: int) -> bool:
    """``r`` is IEEE 754 ``x * y`` rounded to nearest, ties to even (NaN: any NaN).

    Independent of softfloat: positive bit patterns are consecutive floats, so
    ``r`` is correct when no neighbour (``|r| - 1``, ``|r| + 1``, the next
    binade past the largest finite standing for infinity) is nearer to the
    exact product, and on a tie ``r``'s last significand bit is 0.
    """
    p = sb - 1
    sign_bit = 1 << (eb + p)
    inf = ((1 << eb) - 1) << p
    fx, fy = _finite(x, eb, sb), _finite(y, eb, sb)
    x_nan = fx is None and x & ~sign_bit != inf
    y_nan = fy is None and y & ~sign_bit != inf
    r_nan = (r & ~sign_bit) > inf
    sign = (x ^ y) & sign_bit
    if x_nan or y_nan:
        return r_nan
    if fx is None or fy is None:  # an infinity
        other = fy if fx is None else fx
        if other is not None and other[1] == 0:
            return r_nan  # inf * 0
        return r == sign | inf
    if r_nan or (r & sign_bit) != sign:
        return False
    m = fx[1] * fy[1]
    if m == 0:
        return r == sign
    q = fx[2] + fy[2]
    magnitude = r & ~sign_bit
    emax_next = (1 << (eb - 1)) - 1 + 1  # 2**emax_next is the binade past the largest finite
    low_q = min(q, 1 - ((1 << (eb - 1)) - 1) - p)

    def scaled(bits: int) -> int:
        if bits >= inf:
            return 1 << (emax_next - low_q)
        found = _finite(bits, eb, sb)
        assert found is not None
        return found[1] << (found[2] - low_q)

    exact = m << (q - low_q)
    d = abs(exact - scaled(magnitude))
    if magnitude >= inf:  # rounded to infinity: at least half-way past the largest finite
        return 2 * exact >= scaled(inf - 1) + scaled(inf)
    below = abs(exact - scaled(magnitude - 1)) if magnitude > 0 else None
    above = abs(exact - scaled(magnitude + 1))
    if (below is not None and d > below) or d > above:
        return False
    tie = d in (above, below)
    return not tie or magnitude & 1 == 0


def start_pairs(eb: int, sb: int) -> tuple[tuple[int, int], ...]:
    """Operand bit patterns the float contracts count from.

    CrossHair tries small integers first, and its solver handles few paths
    through the multiply in its budget; counting from these pairs makes its
    first tries the products where rounding bugs show: an exact tie whose
    even neighbour is below (ties-away fails), a product just over a half
    ulp (truncation fails), subnormal results (flushing fails), an overflow,
    and the smallest subnormal squared (underflow to zero).
    """
    p = sb - 1
    bias = (1 << (eb - 1)) - 1
    one = bias << p
    a, b = 1 << ((p - 1) // 2), 1 << (p - 1 - (p - 1) // 2)  # a * b = 2**(p-1): a tie
    c = next(c for c in range(2, 1 << p) if (c * c) % (1 << p) > 1 << (p - 1))
    largest = (((1 << eb) - 1) << p) - 1
    return (
        (one + a, one + b),
        (one + c, one + c),
        (1 << p, (bias - 1) << p),
        (1 << p, (bias - 3) << p | 5),
        (largest, (bias + 1) << p),
        (1, 1),
    )


def pattern(eb: int, sb: int, k: int, which: int, u: int) -> int:
    """Operand ``which`` of start pair ``k``, ``u`` patterns on (mod 2**bits: every pattern)."""
    return (start_pairs(eb, sb)[k][which] + u) % (1 << (eb + sb))


FORMATS16: tuple[tuple[int, int], ...] = ((5, 11), (8, 8))
"""float16 and bfloat16 as (eb, sb)."""


def rne16(f: int, k: int, u: int, v: int, r: int) -> bool:
    """``r`` is the nearest-even product of the operands :func:`mul_bits_rne_c` passes."""
    eb, sb = FORMATS16[f]
    return is_rne_product(pattern(eb, sb, k, 0, u), pattern(eb, sb, k, 1, v), r, eb, sb)


def mul_bits_rne_c(f: int, k: int, u: int, v: int) -> int:
    """softfloat.mul_bits on float16 (f=0) and bfloat16 (f=1) is the nearest-even product.

    Strong enough to catch rounding bugs (ties, truncation) and flushed
    subnormals: the specification is :func:`is_rne_product`.

    @relation(F-FLOAT, scope=function)

    pre: 0 <= f < 2 and 0 <= k < 6 and 0 <= u < 65536 and 0 <= v < 65536
    post: rne16(f, k, u, v, __return__)
    """
    eb, sb = FORMATS16[f]
    return softfloat.mul_bits(pattern(eb, sb, k, 0, u), pattern(eb, sb, k, 1, v), eb, sb)
