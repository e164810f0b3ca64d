"""Generate native/src/sonnx_mul_int.c and native/include/sonnx_mul_kernel.h:
the wrap and checked loops of the 8 integer types and their ACSL contracts,
one instance of a fixed template per type.

The generated file is committed (Frama-C, cppcheck and gcc read it, not this
script); ``tests/assurance/test_native_tie.py`` checks that it is what
this script writes, so the eight instances cannot drift apart.

    python native/generate.py            # rewrite the file
    python native/generate.py --check    # exit 1 if the file is stale
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import bitspec  # native/bitspec.py, beside this script
import int64_binary64  # native/int64_binary64.py, beside this script

from sonnx_mul import dtypes
from sonnx_mul.dtypes import ElementType

OUT = Path(__file__).resolve().parent / "src" / "sonnx_mul_int.c"


@dataclass(frozen=True)
class IntType:
    """One integer element type of the registry, with the names the C uses."""

    etype: ElementType

    @property
    def bits(self) -> int:
        return self.etype.bits

    @property
    def signed(self) -> bool:
        return self.etype.signed

    @property
    def suffix(self) -> str:
        return self.etype.kernel_suffix

    @property
    def ctype(self) -> str:
        return self.etype.kernel_ctype

    @property
    def utype(self) -> str:
        return f"uint{self.bits}_t"

    @property
    def lo(self) -> int:
        return self.etype.lo

    @property
    def hi(self) -> int:
        return self.etype.hi

    @property
    def modulus(self) -> int:
        return 1 << self.bits


# The one table of element types (src/sonnx_mul/dtypes.py, which also
# generates the Why3 instances and the glue's kinds): its integer types, in
# the kernel's order.
TYPES = tuple(IntType(t) for t in dtypes.kernel_order() if not t.is_float)


def _ulit(value: int, bits: int) -> str:
    """An unsigned literal of the C type of width ``bits`` (MISRA 7.2: suffix U)."""
    return f"{value}U" if bits <= 32 else f"{value}ULL"


def _mul_unsigned(t: IntType) -> str:
    """The product bits: operands converted to the unsigned type of their
    width (modulo 2^bits, C99 6.3.1.3p2), multiplied in an unsigned type at
    least as wide as int (no promotion to signed int, so no signed overflow),
    reduced modulo 2^bits by the conversion back to the unsigned type."""
    if t.bits == 64:
        return "(uint64_t)a[i] * (uint64_t)b[i]"
    if t.bits == 32:
        return "(uint32_t)a[i] * (uint32_t)b[i]"
    return f"({t.utype})((uint32_t)({t.utype})a[i] * (uint32_t)({t.utype})b[i])"


def _neg(magnitude: int, suffix: str) -> str:
    """-magnitude as a C constant expression of a signed type (MISRA 12.1:
    parenthesised; -2^31 spelled as -(2^31 - 1) - 1 so that no literal
    exceeds its type)."""
    return f"((-{magnitude - 1}{suffix}) - 1{suffix})"


def _wrap_body(t: IntType) -> str:
    """The loop body of the wrap mode.

    Up to 32 bits: the exact product in a wider type (32 bits for 8/16 bits,
    64 for 32: no overflow); unsigned, reduced with C's `%`; signed, by the
    branch-free one-element helper of `_wrap_helper` (so gcc vectorises).  Every step is
    exact integer arithmetic, so WP proves the result equal to the product
    modulo 2^bits (Frama-C 25's model of conversions is not modular beyond
    the identity on in-range values).  64 bits: no wider type in C99; the
    operands are converted to uint64_t (modulo 2^64, C99 6.3.1.3p2) and
    multiplied there (modulo 2^64, 6.2.5p9); a signed result goes back by a
    path whose every step is in range (r itself up to INT64_MAX, else
    -(2^64 - 1 - r) - 1), never an implementation-defined conversion.
    """
    if t.bits <= 32:
        wide = ("" if t.signed else "u") + ("int32_t" if t.bits <= 16 else "int64_t")
        suf = ("" if t.signed else "U") + ("" if t.bits <= 16 else "LL")
        if t.signed:
            return f"        c[i] = wrap1_{t.suffix}(a[i], b[i]);\n"
        fix = f"        const {wide} w = q;\n"
        return (
            f"        const {wide} p = ({wide})a[i] * ({wide})b[i];\n"
            f"        const {wide} q = p % {t.modulus}{suf};\n"
            + fix
            + f"        /*@ assert wrap_elem: sonnx_wraps_{t.suffix}(w, a[i] * b[i]); */\n"
            + f"        c[i] = ({t.ctype})w;\n"
        )
    if not t.signed:
        return "        c[i] = a[i] * b[i];\n"
    return (
        "        const uint64_t r = (uint64_t)a[i] * (uint64_t)b[i];\n"
        "        const int64_t w = twos_i64(r);\n"
        "        /*@ assert wrap_bits: r == (uint64_t)((uint64_t)a[i] * (uint64_t)b[i]); */\n"
        "        /*@ assert wrap_elem: w == sonnx_wrap_bits_i64(a[i], b[i]); */\n"
        "        c[i] = w;\n"
    )


def _is_i64(t: IntType) -> bool:
    """int64: the one type with a binary64 checked test beside the halves one."""
    return t.bits == 64 and t.signed


def _twos_helper() -> str:
    """r read as int64 (two's complement), by a path whose every step is in
    range: r itself up to INT64_MAX (6.3.1.3p1), else -(2^64 - 1 - r) - 1,
    never an implementation-defined conversion (C99 6.3.1.3p3).  In this
    form gcc turns the branches into one select: the binary64 block scan
    with AVX-512 took 2.3 ms at 10^6 elements when the in-range branch was
    written (r / 2) * 2 + r % 2, 0.97 ms now.  Shared by the int64
    wrap loop and the binary64 checked test (static, inlined: callers see
    its contract)."""
    return (
        f"{WRAP_MARKER}"
        "/*@ assigns \\nothing;\n"
        "    ensures twos: \\result == sonnx_twos_i64(r);\n"
        "*/\n"
        "static inline int64_t twos_i64(uint64_t r)\n"
        "{\n"
        "    int64_t w;\n"
        "    if (r > 9223372036854775807ULL) {\n"
        "        const uint64_t nr = 18446744073709551615ULL - r;\n"
        "        /*@ assert nr_range: nr <= 9223372036854775807; */\n"
        "        const int64_t snr = (int64_t)nr;\n"
        "        /*@ assert nr_same: snr == nr; */\n"
        "        w = -snr - 1LL;\n"
        "        /*@ assert twos_neg: w == r - 18446744073709551616; */\n"
        "    } else {\n"
        "        w = (int64_t)r;\n"
        "        /*@ assert twos_pos: w == r; */\n"
        "    }\n"
        "    return w;\n"
        "}\n\n"
    )


def _exact_product(t: IntType) -> str:
    """a[i]*b[i] in a type where it cannot overflow once it fits the element
    type, converted to the element type (in range: value-preserving)."""
    if t.bits == 64:
        return "a[i] * b[i]"
    wide = ("" if t.signed else "u") + ("int32_t" if t.bits <= 16 else "int64_t")
    return f"({t.ctype})(({wide})a[i] * ({wide})b[i])"


def _overflow_fn(t: IntType) -> str:
    """A small function deciding whether x*y leaves the type's range; its
    contract is the exact statement on mathematical integers."""
    s = t.suffix
    head = (
        f"/*@ assigns \\nothing;\n"
        f"    ensures flag: \\result == 0 || \\result == 1;\n"
        f"    ensures decides: \\result == 0 <==> sonnx_fits_{s}(x * y);\n"
        f"*/\n"
        f"static int overflows_{s}({t.ctype} x, {t.ctype} y)\n{{\n"
    )
    if t.bits <= 16:
        wide = "int32_t" if t.signed else "uint32_t"
        lo = _neg(-t.lo, "") if t.signed else None
        cond = f"(p < {lo}) || (p > {t.hi})" if t.signed else f"p > {_ulit(t.hi, 32)}"
        body = f"    const {wide} p = ({wide})x * ({wide})y;\n    return ({cond}) ? 1 : 0;\n"
    elif t.bits == 32:
        wide = "int64_t" if t.signed else "uint64_t"
        cond = (
            f"(p < (-{t.hi}LL - 1LL)) || (p > {t.hi}LL)" if t.signed else f"p > {_ulit(t.hi, 64)}"
        )
        body = f"    const {wide} p = ({wide})x * ({wide})y;\n    return ({cond}) ? 1 : 0;\n"
    else:
        # No wider type in C99: the excess of the product (division-free,
        # _excess_fn) is zero exactly when it fits.
        body = f"    return (excess_{s}(x, y) != 0U) ? 1 : 0;\n"
    return head + body + "}\n"


BLOCK_BYTES = 16384
"""Bytes of each operand per block of the checked scan: one branch-free pass
per block (vectorised), an element-by-element pass only in the block where
it flags (at most this many bytes' worth of elements before the first
overflow is reported)."""


def _shift_helpers() -> str:
    """x >> 32 on uint64_t as WP can prove it: x / 2^32, composed of shifts by
    1, 2, 4, 8 and 16 bits, each proved from the one before it (WP's model
    of >> knows x >> 1 == x / 2 only).  gcc folds the composed shifts back
    into one instruction."""
    lines = []
    steps = ((1, None), (2, 1), (4, 2), (8, 4), (16, 8), (32, 16))
    for bits, half in steps:
        name = "high32_u64" if bits == 32 else f"shr{bits}_u64"
        body = "x >> 1U" if half is None else f"shr{half}_u64(shr{half}_u64(x))"
        lines.append(
            f"{CHECKED_MARKER}"
            f"/*@ assigns \\nothing;\n"
            f"    ensures shr{bits}: \\result == x / {1 << bits};\n"
            f"*/\n"
            f"static inline uint64_t {name}(uint64_t x)\n"
            f"{{\n"
            f"    return {body};\n"
            f"}}\n"
        )
    return "\n" + "\n".join(lines)


def _shift_lemmas() -> str:
    """x >> k == x / 2^k for k = 1, 2, 4, 8, 16, 32 on uint64_t, as ghost
    lemma functions WP proves (from its model of >>: lsr_1, lsr_add) and the
    32-bit block scans call where they need the instance: those scans OR the
    products themselves and shift once per block, so that no shift per
    element carries the fact as high32_u64 does."""
    lines = []
    for bits in (1, 2, 4, 8, 16, 32):
        half = bits // 2
        body = "" if bits == 1 else f" lsr{half}_div(x); lsr{half}_div(x >> {half}U); "
        lines.append(
            f"{CHECKED_MARKER}"
            "/*@ ghost\n"
            "  /@ assigns \\nothing;\n"
            f"     ensures div: (x >> {bits}) == x / {1 << bits};\n"
            "  @/\n"
            f"  void lsr{bits}_div(uint64_t x) {{{body}}}\n"
            "*/\n"
        )
    return "\n" + "\n".join(lines)


def _excess_fn(t: IntType) -> str:
    """The 64-bit overflow test without division: a value that is zero
    exactly when x*y fits, from the three products of 32-bit halves that
    can be non-zero (xh*yl, xl*yh, xl*yl; every step exact while the high
    halves are not both non-zero; when they are, the product is at least
    2^64 and `both`, their minimum, alone makes the result non-zero).
    Symmetric in x and y, so no select picks the smaller factor: with
    AVX-512DQ each product is one vpmullq (docs/native-kernel.md).
    Branch-free: shifts, masks, products, a minimum and ORs only, so the
    block scan that ORs it over its elements vectorises."""
    s = t.suffix
    head = (
        f"{CHECKED_MARKER}"
        f"/*@ assigns \\nothing;\n"
        f"    ensures excess: \\result == 0 <==> sonnx_fits_{s}(x * y);\n"
        f"*/\n"
        f"static inline uint64_t excess_{s}({t.ctype} x, {t.ctype} y)\n{{\n"
    )
    if t.signed:
        # |x| and |y| in uint64_t through in-range steps only (-(x + 1) is
        # in range for every x < 0), and the bound the magnitude of the
        # product must keep: 2^63 - 1, or 2^63 when the signs differ.
        operands = (
            "    const uint64_t ux = (x < 0) ? ((uint64_t)(-(x + 1LL)) + 1ULL) : (uint64_t)x;\n"
            "    const uint64_t uy = (y < 0) ? ((uint64_t)(-(y + 1LL)) + 1ULL) : (uint64_t)y;\n"
            "    const uint64_t neg = ((x < 0) != (y < 0)) ? 1ULL : 0ULL;\n"
            "    /*@ assert magnitudes: ux == \\abs(x) && uy == \\abs(y); */\n"
        )
        u, v = "ux", "uy"
    else:
        operands = ""
        u, v = "x", "y"
    core = (
        f"    const uint64_t xh = high32_u64({u});\n"
        f"    const uint64_t yh = high32_u64({v});\n"
        f"    const uint64_t xl = {u} % 4294967296ULL;\n"
        f"    const uint64_t yl = {v} % 4294967296ULL;\n"
        f"    /*@ assert halves: {u} == xh * 4294967296 + xl && {v} == yh * 4294967296 + yl &&\n"
        f"            xh < 4294967296 && yh < 4294967296; */\n"
        f"    /* both: non-zero exactly when both high halves are */\n"
        f"    const uint64_t both = (xh < yh) ? xh : yh;\n"
        f"    /*@ assert both_big: both != 0 ==> {u} * {v} >= 18446744073709551616; */\n"
        f"    /* at most one cross product is non-zero unless both are: then exact, and\n"
        f"       at most (2^32 - 1)^2, so that cross + lowh below cannot wrap */\n"
        f"    const uint64_t cross = (xh * yl) + (xl * yh);\n"
        f"    const uint64_t low = xl * yl;\n"
        f"    const uint64_t lowh = high32_u64(low);\n"
        f"    /*@ assert cross: both == 0 ==> cross == xh * yl + xl * yh &&\n"
        f"            cross <= 18446744065119617025 && {u} * {v} == cross * 4294967296 + low &&\n"
        f"            low == lowh * 4294967296 + low % 4294967296; */\n"
        f"    const uint64_t t = cross + lowh;\n"
        f"    /*@ assert product: both == 0 ==> {u} * {v} == t * 4294967296 + low % 4294967296; */\n"
    )
    if not t.signed:
        tail = "    return both | high32_u64(t);\n"
    else:
        tail = (
            "    const uint64_t over = both | high32_u64(t);\n"
            "    const uint64_t pm = (t * 4294967296ULL) + (low % 4294967296ULL);\n"
            "    /*@ assert exact: over == 0 ==> pm == ux * uy; */\n"
            "    const uint64_t lim = 9223372036854775807ULL + neg;\n"
            "    return over | ((pm > lim) ? 1ULL : 0ULL);\n"
        )
    return head + operands + core + tail + "}\n"


def _block_fn(t: IntType, binary64: bool = False) -> str:
    """A branch-free pass over a[from .. to-1], b[from .. to-1]: 0 when every
    product there fits (a non-zero result only sends the block to the
    element-by-element scan).  8 bits, signed: the least and the greatest
    product (min/max) against the type's bounds; unsigned: the greatest.
    16 bits: the greatest of the products' high halves (signed: plus the
    sign bit of the low half).  uint32: the OR of the 64-bit products, its
    high half tested after the loop; int32: the same of the products plus
    2^31; 64 bits: the OR of excess_<s>.  No exit inside the loop, so
    gcc vectorises it (it does not vectorise a loop with an early exit).
    The range from .. to is the caller's, so no index is shifted between
    the two contracts.  ``binary64``: int64's block function by the binary64
    test (native/int64_binary64.py), under the same contract."""
    s = t.suffix
    name = f"block_overflows_{'f64_' if binary64 else ''}{s}"
    # int64's two: inline since they were first compiled in every build, each
    # unused in one; the guards now compile each only where it runs
    # (int64_binary64), and dropping `inline` would change the pinned statements
    storage = "static inline int" if _is_i64(t) else "static int"
    head = (
        f"{CHECKED_MARKER}"
        f"/*@ requires range: from <= to;\n"
        f"    requires valid_a: \\valid_read(a + (from .. to - 1));\n"
        f"    requires valid_b: \\valid_read(b + (from .. to - 1));\n"
        f"    assigns \\nothing;\n"
        f"    ensures clear: \\result == 0 ==>\n"
        f"        \\forall integer k; from <= k < to ==> sonnx_fits_{s}(a[k] * b[k]);\n"
        f"*/\n"
        f"{storage} {name}(const {t.ctype} *a, const {t.ctype} *b,"
        f" size_t from, size_t to)\n{{\n"
    )
    if t.bits >= 32:
        if t.bits == 32 and not t.signed:
            element = (
                "        const uint64_t p = (uint64_t)a[j] * (uint64_t)b[j];\n"
                "        /*@ ghost lsr32_div(p); */\n"
                "        acc |= p;\n"
            )
        elif t.bits == 32:
            # p + 2^31 is in [0, 2^32) exactly when p fits; a negative sum
            # converts (modulo 2^64, C99 6.3.1.3p2) to at least 2^63, so its
            # high half is non-zero too: the uint32 pass on biased products,
            # one add and no compare or blend (AVX2 has no 64-bit min/max)
            element = (
                "        const int64_t p = (int64_t)a[j] * (int64_t)b[j];\n"
                "        /*@ assert p_exact: p == a[j] * b[j]; */\n"
                "        const int64_t sum = p + 2147483648LL;\n"
                "        const uint64_t biased = (uint64_t)sum; /* named: MISRA 10.8 casts no composite */\n"
                "        /*@ assert window: biased < 4294967296 <==> sonnx_fits_i32(p); */\n"
                "        /*@ ghost lsr32_div(biased); */\n"
                "        acc |= biased;\n"
            )
        else:
            test = "excess_f64" if binary64 else "excess"
            element = f"        acc |= {test}_{s}(a[j], b[j]);\n"
        decl = "    uint64_t acc = 0U;\n"
    elif t.bits == 16:
        # in 16-bit lanes, the high half of the product (gcc: vpmulhw /
        # vpmulhuw) and, signed, the sign bit of its low half (vpmullw): the
        # product fits exactly when the high half is the sign extension of
        # the low one, i.e. when `off` is 0; their maximum, not their OR
        # (vpmaxuw: the same one operation, and no narrowing of an OR for WP)
        # -- six vector operations per 32 elements where the min/max of
        # 32-bit products took sixteen, the scan's cost
        if t.signed:
            element = (
                "        const int32_t p = (int32_t)a[j] * (int32_t)b[j];\n"
                "        /*@ assert p_exact: p == a[j] * b[j]; */\n"
                "        const uint32_t bits = (uint32_t)p;\n"
                "        /*@ ghost u32_of_i32(p); */\n"
                "        const uint16_t ua = (uint16_t)a[j];\n"
                "        /*@ ghost u16_of_i16(a[j]); */\n"
                "        const uint16_t ub = (uint16_t)b[j];\n"
                "        /*@ ghost u16_of_i16(b[j]); */\n"
                "        /*@ assert bits_def: bits == ((p < 0) ? p + 4294967296 : p); */\n"
                "        /*@ assert ua_def: ua == ((a[j] < 0) ? a[j] + 65536 : a[j]); */\n"
                "        /*@ assert ub_def: ub == ((b[j] < 0) ? b[j] + 65536 : b[j]); */\n"
                "        /*@ assert low_pp: a[j] >= 0 && b[j] >= 0 ==> ua * ub == p; */\n"
                "        /*@ assert low_np: a[j] < 0 && b[j] >= 0 ==> ua * ub == p + 65536 * b[j]; */\n"
                "        /*@ assert low_pn: a[j] >= 0 && b[j] < 0 ==> ua * ub == p + 65536 * a[j]; */\n"
                "        /*@ assert low_nn: a[j] < 0 && b[j] < 0 ==>\n"
                "              ua * ub == p + 65536 * (a[j] + b[j]) + 4294967296; */\n"
                "        /* the product of the bit patterns less the product's own bits, over 2^16 */\n"
                "        /*@ ghost int64_t carry = (((a[j] < 0) ? (int64_t)b[j] : 0) +\n"
                "              ((b[j] < 0) ? (int64_t)a[j] : 0) + ((a[j] < 0 && b[j] < 0) ? 65536 : 0)) -\n"
                "              ((p < 0) ? 65536 : 0); */\n"
                "        /*@ assert low_k: ua * ub == bits + 65536 * carry; */\n"
                "        const uint16_t hi = (uint16_t)(bits / 65536U);\n"
                "        const uint16_t lo = (uint16_t)(((uint32_t)ua * (uint32_t)ub) % 65536U);\n"
                "        /*@ assert low_shift: lo == (bits + 65536 * carry) % 65536; */\n"
                "        /*@ ghost mod_shift_65536(bits, carry); */\n"
                "        /*@ assert low: lo == bits % 65536; */\n"
                "        const uint16_t off = (uint16_t)(((uint32_t)hi + ((uint32_t)lo / 32768U)) % 65536U);\n"
                "        /*@ assert window: off == 0 <==> sonnx_fits_i16(p); */\n"
                "        acc = (off > acc) ? off : acc;\n"
            )
        else:
            element = (
                "        const uint32_t p = (uint32_t)a[j] * (uint32_t)b[j];\n"
                "        /*@ assert p_exact: p == a[j] * b[j]; */\n"
                "        const uint16_t hi = (uint16_t)(p / 65536U);\n"
                "        acc = (hi > acc) ? hi : acc;\n"
            )
        decl = "    uint16_t acc = 0U;\n"
    else:
        # the exact product in a type holding it: 16 bits for 8-bit operands
        # (gcc then multiplies in 16-bit lanes)
        sign = "" if t.signed else "u"
        wide = f"{sign}int16_t"
        product = f"({wide})(({sign}int32_t)a[j] * ({sign}int32_t)b[j])"
        element = (
            f"        const {wide} p = {product};\n"
            f"        /*@ assert p_exact: p == a[j] * b[j]; */\n"
            + ("        lo = (p < lo) ? p : lo;\n" if t.signed else "")
            + "        hi = (p > hi) ? p : hi;\n"
        )
        forall = "\\forall integer k; from <= k < j ==>"
        if t.signed:
            lo_lit, hi_lit = _neg(-t.lo, ""), str(t.hi)
            decl = f"    {wide} lo = 0;\n    {wide} hi = 0;\n"
            invariants = [f"{forall} lo <= a[k] * b[k]", f"{forall} a[k] * b[k] <= hi"]
            assigns = "j, lo, hi"
            result = f"    return ((lo < {lo_lit}) || (hi > {hi_lit})) ? 1 : 0;\n"
        else:
            decl = f"    {wide} hi = 0U;\n"
            invariants = [f"{forall} a[k] * b[k] <= hi"]
            assigns = "j, hi"
            result = f"    return (hi > {_ulit(t.hi, 32)}) ? 1 : 0;\n"
    if t.bits >= 16:
        # the accumulated value is 0 exactly when every product so far fits;
        # 32 bits: its high half, as the OR of the (biased) products
        # themselves is tested once after the loop, one shift per element
        # less (WP's simplifier knows (x | y) >> 32 is 0 only when both are)
        flagged = "(acc >> 32U)" if t.bits == 32 else "acc"
        clear = "(acc >> 32) == 0" if t.bits == 32 else "acc == 0"
        invariants = [
            f"{clear} ==>\n            \\forall integer k; from <= k < j ==> "
            f"sonnx_fits_{s}(a[k] * b[k])"
        ]
        assigns = "j, acc"
        result = f"    return ({flagged} != 0U) ? 1 : 0;\n"
    annotations = "".join(f"        loop invariant {inv};\n" for inv in invariants)
    return (
        head
        + decl
        + "    size_t j;\n"
        + "    /*@ loop invariant from <= j <= to;\n"
        + annotations
        + f"        loop assigns {assigns};\n"
        + "        loop variant to - j;\n"
        + "    */\n"
        + "    for (j = from; j < to; j++) {\n"
        + element
        + "    }\n"
        + result
        + "}\n"
    )


def _block_choice(t: IntType) -> str:
    """int64's block scan by build: the avx512 build (AVX-512DQ: vcvtqq2pd,
    vpmullq) calls the binary64 test's block function, whose contract is the
    halves one's word for word (wp_statements.STANDS_IN checks it), so the caller's
    proof, which uses only that contract, holds for both.  Frama-C's
    preprocessor defines no __AVX512DQ__: WP proves the caller as it calls
    block_overflows_i64.  A macro outside the function, so that the
    function's text has one call (the marker scan counts its braces)."""
    if not _is_i64(t):
        return ""
    return (
        "#if defined(__AVX512DQ__)\n"
        "#define SONNX_MUL_BLOCK_SCAN_I64 block_overflows_f64_i64\n"
        "#else\n"
        "#define SONNX_MUL_BLOCK_SCAN_I64 block_overflows_i64\n"
        "#endif\n\n"
    )


def _conversion_ghosts16() -> str:
    """int16's block scan reads the bits of negative values: C99 defines the
    conversions modulo 2^32 and 2^16, WP's model only in range."""
    return (
        "/* (uint32_t)x for an int32 x and (uint16_t)x for an int16 x: C99 defines\n"
        "   both modulo 2^32 and 2^16 (6.3.1.3p2), and WP's model (Cint) states the\n"
        "   conversion only in range.  The admitted clauses are that sentence of\n"
        "   the standard, stated at the calls that need them, as u64_of_i64's. */\n"
        f"{CHECKED_MARKER}/*@ ghost\n"
        "  /@ assigns \\nothing;\n"
        "     admit ensures modular: (uint32_t)x == ((x % 4294967296) + 4294967296) % 4294967296;\n"
        "  @/\n"
        "  void u32_of_i32(int32_t x) { }\n"
        "*/\n"
        f"{CHECKED_MARKER}/*@ ghost\n"
        "  /@ assigns \\nothing;\n"
        "     admit ensures modular: (uint16_t)x == ((x % 65536) + 65536) % 65536;\n"
        "  @/\n"
        "  void u16_of_i16(int16_t x) { }\n"
        "*/\n"
        "\n"
        "/* Adding a multiple of 2^16 keeps the low half: a lemma proved by WP (its\n"
        "   ensures is a goal), called where its instance is needed. */\n"
        f"{CHECKED_MARKER}/*@ ghost\n"
        "  /@ requires x_range: 0 <= x && 0 <= x + 65536 * k;\n"
        "     assigns \\nothing;\n"
        "     ensures low: (x + 65536 * k) % 65536 == x % 65536;\n"
        "  @/\n"
        "  void mod_shift_65536(int64_t x, int64_t k) { }\n"
        "*/\n"
    )


def _halves_block(t: IntType) -> str:
    """The block scan by the halves test; int64's compiled only where it runs
    (int64_binary64.HALVES_GUARD), int16's after the ghost functions its
    proof calls."""
    if t.bits == 16 and t.signed:
        return _conversion_ghosts16() + _block_fn(t)
    if not _is_i64(t):
        return _block_fn(t)
    return int64_binary64.HALVES_GUARD + _block_fn(t) + "#endif\n"


def _block_scan(t: IntType) -> str:
    """The name the first-overflow scan calls for a block (see _block_choice)."""
    return "SONNX_MUL_BLOCK_SCAN_I64" if _is_i64(t) else f"block_overflows_{t.suffix}"


def _wrap_helper(t: IntType) -> str:
    """The one-element wrap of a signed type up to 32 bits (static, inlined:
    the loop's invariant then only sees its contract).

    Branch-free: s = p + h*(h - 1), h = 2^(bits-1), is in [0, 2^(2 bits - 1)
    - h] (the product lies in [-h*(h-1), h^2]), so it fits the wide type and
    its conversion to the unsigned wide type is the identity; s = p + h
    (mod 2^bits), so (s mod 2^bits) - h is the wrapped product.  Selects and
    masks only: gcc vectorises the loop.
    """
    if not t.signed or t.bits > 32:
        return ""
    wide = "int32_t" if t.bits <= 16 else "int64_t"
    suf = "" if t.bits <= 16 else "LL"
    half = t.modulus // 2
    off = half * (half - 1)
    uwide = "u" + wide
    usuf = "U" + suf
    s = t.suffix
    return (
        f"{WRAP_MARKER}"
        f"/*@ assigns \\nothing;\n"
        f"    ensures wrap1: sonnx_wraps_{s}(\\result, x * y);\n"
        f"*/\n"
        f"static inline {t.ctype} wrap1_{s}({t.ctype} x, {t.ctype} y)\n"
        f"{{\n"
        f"    const {wide} p = ({wide})x * ({wide})y;\n"
        f"    /*@ assert p_range: {-off} <= p <= {half * half}; */\n"
        f"    const {wide} s = p + {off}{suf};\n"
        f"    const {uwide} q = ({uwide})s % {t.modulus}{usuf};\n"
        f"    /*@ assert q_mod: q == (p + {off}) % {t.modulus}; */\n"
        f"    const {wide} w = ({wide})q - {half}{suf};\n"
        f"    /*@ assert wrap_elem: sonnx_wraps_{s}(w, x * y); */\n"
        f"    return ({t.ctype})w;\n"
        f"}}\n\n"
    )


def _functions(t: IntType) -> str:
    s = t.suffix
    wt_pre = _wrap_term(t, "\\at(a[k], Pre)", "\\at(b[k], Pre)")
    helper = _wrap_helper(t) + (_twos_helper() if _is_i64(t) else "")
    excess = _excess_fn(t) + "\n" if t.bits == 64 else ""
    binary64 = (
        "\n" + int64_binary64.render(CHECKED_MARKER, _block_fn(t, binary64=True))
        if _is_i64(t)
        else ""
    )
    block = BLOCK_BYTES // (t.bits // 8)
    return f"""
/* ---- {t.ctype} ---------------------------------------------------------- */

{helper}{WRAP_MARKER}void sonnx_mul_wrap_{s}(const {t.ctype} *a, const {t.ctype} *b, {t.ctype} *c, size_t n)
{{
    size_t i;
    /*@ loop invariant 0 <= i <= n;
        loop invariant \\forall integer k; 0 <= k < i ==>
            {wt_pre};
        loop invariant \\forall integer k; i <= k < n ==>
            a[k] == \\at(a[k], Pre) && b[k] == \\at(b[k], Pre);
        loop assigns i, c[0 .. n - 1];
        loop variant n - i;
    */
    for (i = 0U; i < n; i++) {{
{_wrap_body(t)}    }}
}}

{excess}{CHECKED_MARKER}{_overflow_fn(t)}
{_halves_block(t)}{binary64}
{_block_choice(t)}/* Blocks of {block} elements, each through the branch-free pass; from the
   first block it flags (if any), element by element up to the first
   overflowing product. */
{CHECKED_MARKER}size_t sonnx_mul_first_overflow_{s}(const {t.ctype} *a, const {t.ctype} *b, size_t n)
{{
    size_t start = 0U;
    size_t i;
    /*@ loop invariant 0 <= start <= n;
        loop invariant \\forall integer k; 0 <= k < start ==> sonnx_fits_{s}(a[k] * b[k]);
        loop assigns start;
        loop variant n - start;
    */
    while (start < n) {{
        const size_t rest = n - start;
        const size_t len = (rest < {block}U) ? rest : {block}U;
        if ({_block_scan(t)}(a, b, start, start + len) != 0) {{
            break;
        }}
        start += len;
    }}
    /*@ loop invariant start <= i <= n;
        loop invariant \\forall integer k; 0 <= k < i ==> sonnx_fits_{s}(a[k] * b[k]);
        loop assigns i;
        loop variant n - i;
    */
    for (i = start; i < n; i++) {{
        if (overflows_{s}(a[i], b[i]) != 0) {{
            break;
        }}
    }}
    return i;
}}

/* Every product fits: c[i] = a[i]*b[i] exactly, in a type wide enough (the
   64-bit products cannot overflow: the precondition). */
{CHECKED_MARKER}/*@ requires \\valid_read(a + (0 .. n - 1)) && \\valid_read(b + (0 .. n - 1));
    requires \\valid(c + (0 .. n - 1));
    requires c == a || \\separated(c + (0 .. n - 1), a + (0 .. n - 1));
    requires c == b || \\separated(c + (0 .. n - 1), b + (0 .. n - 1));
    requires \\forall integer k; 0 <= k < n ==> sonnx_fits_{s}(a[k] * b[k]);
    assigns c[0 .. n - 1];
    ensures \\forall integer k; 0 <= k < n ==> c[k] == \\old(a[k]) * \\old(b[k]);
*/
static void exact_{s}(const {t.ctype} *a, const {t.ctype} *b, {t.ctype} *c, size_t n)
{{
    size_t i;
    /*@ loop invariant 0 <= i <= n;
        loop invariant \\forall integer k; 0 <= k < i ==>
            c[k] == \\at(a[k], Pre) * \\at(b[k], Pre);
        loop invariant \\forall integer k; i <= k < n ==>
            a[k] == \\at(a[k], Pre) && b[k] == \\at(b[k], Pre);
        loop assigns i, c[0 .. n - 1];
        loop variant n - i;
    */
    for (i = 0U; i < n; i++) {{
        c[i] = {_exact_product(t)};
    }}
}}

{CHECKED_MARKER}size_t sonnx_mul_checked_{s}(const {t.ctype} *a, const {t.ctype} *b, {t.ctype} *c, size_t n)
{{
    const size_t first = sonnx_mul_first_overflow_{s}(a, b, n);
    if (first == n) {{
        exact_{s}(a, b, c, n);
    }}
    return first;
}}
"""


# Requirement markers (report/markers.py): each function for the requirement
# it implements; the whole file for F-RTE (WP's -wp-rte goals, MISRA).  Spelt
# by concatenation: the marker scan reads this file too, and the markers
# belong to the generated file only.
_AT = "@"
WRAP_MARKER = f"/* {_AT}relation(F-WRAP, scope=function) */\n"
CHECKED_MARKER = f"/* {_AT}relation(F-CHECKED, scope=function) */\n"

HEADER = f"""/* GENERATED by native/generate.py from one template per type: do not edit.
 *
 * The wrap and checked loops of the eight integer types (contracts in
 * sonnx_mul_kernel.h).  Wrap computes in the unsigned type of the same
 * width (conversions to unsigned types and unsigned arithmetic are modulo
 * 2^bits in C99, 6.3.1.3p2 and 6.2.5p9), so the bits are the two's-complement
 * wrap; a signed result is converted back by a path whose every step is in
 * range (no implementation-defined conversion, 6.3.1.3p3).
 */
/* {_AT}relation(F-RTE, scope=file) */
#include "sonnx_mul_kernel.h"
#include "sonnx_mul_config.h"
"""


def render() -> str:
    """The whole generated C file."""
    return HEADER + _shift_helpers() + _shift_lemmas() + "".join(_functions(t) for t in TYPES)


HEADER_OUT = Path(__file__).resolve().parent / "include" / "sonnx_mul_kernel.h"


def _logic(t: IntType) -> str:
    s = t.suffix
    wrap = (
        f"sonnx_emod(x + {t.modulus // 2}, {t.modulus}) - {t.modulus // 2}"
        if t.signed
        else f"sonnx_emod(x, {t.modulus})"
    )
    # w is x modulo 2^bits in the type's range: the unique value of the
    # type congruent to x (two's complement when signed).
    text = (
        f"    predicate sonnx_fits_{s}(integer x) = {t.lo} <= x <= {t.hi};\n"
        f"    logic integer sonnx_wrap_{s}(integer x) = {wrap};\n"
        f"    predicate sonnx_wraps_{s}(integer w, integer x) =\n"
        f"        sonnx_fits_{s}(w) && (x - w) % {t.modulus} == 0;\n"
    )
    if t.bits == 64:
        # What WP can prove of the 64-bit loops (its model of conversions is
        # abstract beyond in-range values): the ACSL conversion to uint64_t,
        # which ACSL defines modulo 2^64, of the product of the operands'
        # uint64_t images, read back as two's complement when signed.
        if t.signed:
            text += (
                "    logic integer sonnx_twos_i64(integer r) =\n"
                "        (r > 9223372036854775807) ? r - 18446744073709551616 : r;\n"
                "    logic integer sonnx_wrap_bits_i64(integer x, integer y) =\n"
                "        sonnx_twos_i64((uint64_t)((uint64_t)x * (uint64_t)y));\n"
            )
        else:
            text += (
                "    logic integer sonnx_wrap_bits_u64(integer x, integer y) =\n"
                "        (uint64_t)(x * y);\n"
            )
    return text


# The preconditions of every element-wise entry point of the kernel, stated
# once: the integer contracts below and the float ones of header_float.h.in
# (its @ELEMENTWISE_REQUIRES@) are written with them.
READ_REQUIRES = """requires valid_a: \\valid_read(a + (0 .. n - 1));
    requires valid_b: \\valid_read(b + (0 .. n - 1));"""
ELEMENTWISE_REQUIRES = (
    READ_REQUIRES
    + """
    requires valid_c: \\valid(c + (0 .. n - 1));
    requires alias_a: c == a || \\separated(c + (0 .. n - 1), a + (0 .. n - 1));
    requires alias_b: c == b || \\separated(c + (0 .. n - 1), b + (0 .. n - 1));"""
)


def _wrap_term(t: IntType, x: str, y: str) -> str:
    """The ACSL term the wrap loop is proved to compute for operands x, y."""
    if t.bits == 64:
        return f"c[k] == sonnx_wrap_bits_{t.suffix}({x}, {y})"
    return f"sonnx_wraps_{t.suffix}(c[k], {x} * {y})"


def _prototypes(t: IntType) -> str:
    s, ct = t.suffix, t.ctype
    wt_old = _wrap_term(t, "\\old(a[k])", "\\old(b[k])")
    return f"""
/* {ct} */
/*@ {ELEMENTWISE_REQUIRES}
    assigns c[0 .. n - 1];
    ensures wrap: \\forall integer k; 0 <= k < n ==>
        {wt_old};
*/
void sonnx_mul_wrap_{s}(const {ct} *a, const {ct} *b, {ct} *c, size_t n);

/*@ {READ_REQUIRES}
    assigns \\nothing;
    ensures range: 0 <= \\result <= n;
    ensures prefix_fits: \\forall integer k; 0 <= k < \\result ==> sonnx_fits_{s}(a[k] * b[k]);
    ensures first: \\result < n ==> !sonnx_fits_{s}(a[\\result] * b[\\result]);
*/
size_t sonnx_mul_first_overflow_{s}(const {ct} *a, const {ct} *b, size_t n);

/*@ {ELEMENTWISE_REQUIRES}
    behavior all_fit:
      assumes \\forall integer k; 0 <= k < n ==> sonnx_fits_{s}(a[k] * b[k]);
      assigns c[0 .. n - 1];
      ensures checked_n: \\result == n;
      ensures checked_exact: \\forall integer k; 0 <= k < n ==> c[k] == \\old(a[k]) * \\old(b[k]);
    behavior overflow:
      assumes \\exists integer k; 0 <= k < n && !sonnx_fits_{s}(a[k] * b[k]);
      assigns \\nothing;
      ensures checked_first: 0 <= \\result < n && !sonnx_fits_{s}(a[\\result] * b[\\result]);
      ensures checked_prefix: \\forall integer k; 0 <= k < \\result ==> sonnx_fits_{s}(a[k] * b[k]);
      ensures checked_unwritten: \\forall integer k; 0 <= k < n ==> c[k] == \\old(c[k]);
    complete behaviors;
    disjoint behaviors;
*/
size_t sonnx_mul_checked_{s}(const {ct} *a, const {ct} *b, {ct} *c, size_t n);
"""


def render_header() -> str:
    """The whole generated header."""
    logic = "".join(_logic(t) for t in TYPES)
    protos = "".join(_prototypes(t) for t in TYPES)
    return (
        HEADER_TOP
        + "/*@ logic integer sonnx_emod(integer x, integer m) = (x % m < 0) ? (x % m) + m : x % m;\n"
        + logic
        + "*/\n"
        + protos
        + HEADER_FLOAT.replace("@ELEMENTWISE_REQUIRES@", ELEMENTWISE_REQUIRES)
        .replace("@F16_CONVERSIONS@", _acsl(bitspec.F16_CONVERSIONS))
        .replace("@BF16_PRODUCT@", _acsl(bitspec.BF16_PRODUCT))
        .replace("@BF16_NARROWING@", _acsl(bitspec.BF16_NARROWING))
    )


def _acsl(functions: tuple[bitspec.Function, ...]) -> str:
    return "\n\n    ".join(bitspec.render_acsl(f) for f in functions)


RENAME_OUT = Path(__file__).resolve().parent / "include" / "sonnx_mul_rename.h"


def render_rename(header: str) -> str:
    """sonnx_mul_rename.h: every function the kernel header declares renamed
    into the prefix SONNX_MUL_VARIANT (the ISA variants, native/isa.toml)."""
    names = re.findall(r"^[a-z_0-9]+ (sonnx_mul_[a-z_0-9]+)\(", header, re.MULTILINE)
    lines = [
        "/* sonnx_mul_rename.h -- GENERATED by native/generate.py: do not edit.",
        " *",
        " * The ISA variants (native/isa.toml) compile the",
        " * SAME proved sources (the .c files of native/src) again with extra flags and",
        " *     -DSONNX_MUL_VARIANT=sonnx_mul_avx2 -include sonnx_mul_rename.h",
        " * so that every external function sonnx_mul_X is defined as",
        " * sonnx_mul_avx2_X: the objects link side by side with the portable",
        " * ones, and the glue (src/sonnx_mul/_native_variants.c) picks one at run time.",
        " * Not part of the proved sources: the preprocessor only renames. */",
        "#ifndef SONNX_MUL_VARIANT",
        '#error "define SONNX_MUL_VARIANT (e.g. sonnx_mul_avx2) before sonnx_mul_rename.h"',
        "#endif",
        "#define SONNX_MUL_CAT2_(p, x) p##x",
        "#define SONNX_MUL_CAT_(p, x) SONNX_MUL_CAT2_(p, x)",
    ]
    for name in names:
        lines.append(
            f"#define {name} SONNX_MUL_CAT_(SONNX_MUL_VARIANT, {name[len('sonnx_mul') :]})"
        )
    return "\n".join(lines) + "\n"


HEADER_TOP = (Path(__file__).resolve().parent / "include" / "header_top.h.in").read_text()
HEADER_FLOAT = (Path(__file__).resolve().parent / "include" / "header_float.h.in").read_text()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--check", action="store_true", help="fail if the file is stale")
    parser.add_argument("--list", action="store_true", help="print the files written, nothing else")
    args = parser.parse_args(argv)
    if args.list:
        root = Path(__file__).resolve().parent.parent
        print("\n".join(str(p.relative_to(root)) for p in (OUT, HEADER_OUT, RENAME_OUT)))
        return 0
    stale = 0
    header = render_header()
    outputs = ((OUT, render()), (HEADER_OUT, header), (RENAME_OUT, render_rename(header)))
    for path, text in outputs:
        if args.check:
            if not path.exists() or path.read_text() != text:
                print(f"{path} is stale: run python native/generate.py", file=sys.stderr)
                stale = 1
        else:
            path.write_text(text)
    return stale


if __name__ == "__main__":
    sys.exit(main())
