"""The checked mode's tests of the integer unit (native/src/sonnx_mul_int.c):
whether one product fits (``overflows_<s>``, 64 bits by ``excess_<s>``) and
the branch-free block scans (``block_overflows_<s>``) the first-overflow
scan runs before it looks element by element.

Each function's C and ACSL is a template of native/templates/; this module
says which template each type takes and why.
"""

from __future__ import annotations

from string import Template

import int64_binary64  # native/int64_binary64.py, beside this script
from int_types import IntType
from templating import CHECKED_MARKER, unit

BLOCK_BYTES = 16384
"""Bytes of each operand per block of the checked scan: one branch-free pass
per block (vectorised), an element-by-element pass only in the block where
it flags (at most this many bytes' worth of elements before the first
overflow is reported)."""

SHIFT_STEPS = (1, 2, 4, 8, 16, 32)
"""The shifts of uint64_t the 64-bit tests need as divisions, each proved
from the one before it."""


def shift_helpers() -> str:
    """x >> 32 on uint64_t as WP can prove it: x / 2^32, composed of shifts by
    1, 2, 4, 8 and 16 bits, each proved from the one before it (WP's model
    of >> knows x >> 1 == x / 2 only).  gcc folds the composed shifts back
    into one instruction."""
    helpers = []
    for bits in SHIFT_STEPS:
        half = bits // 2
        body = "x >> 1U" if bits == 1 else f"shr{half}_u64(shr{half}_u64(x))"
        name = "high32_u64" if bits == 32 else f"shr{bits}_u64"
        helpers.append(
            unit("shift_helper.c.in", bits=bits, divisor=1 << bits, name=name, body=body)
        )
    return "\n" + "\n".join(helpers)


def shift_lemmas() -> str:
    """x >> k == x / 2^k for k = 1, 2, 4, 8, 16, 32 on uint64_t, as ghost
    lemma functions WP proves (from its model of >>: lsr_1, lsr_add) and the
    32-bit block scans call where they need the instance: those scans OR the
    products themselves and shift once per block, so that no shift per
    element carries the fact as high32_u64 does."""
    lemmas = []
    for bits in SHIFT_STEPS:
        half = bits // 2
        body = "" if bits == 1 else f" lsr{half}_div(x); lsr{half}_div(x >> {half}U); "
        lemmas.append(unit("shift_lemma.c.in", bits=bits, divisor=1 << bits, body=body))
    return "\n" + "\n".join(lemmas)


# overflows_<s>'s body: up to 32 bits, the exact product in the wider type
# against the type's limits; 64 bits has no wider type in C99: the excess of
# the product (division-free, excess_<s>) is zero exactly when it fits.
_BY_WIDER_PRODUCT = Template(
    "    const ${wide} p = (${wide})x * (${wide})y;\n    return (${out_of_range}) ? 1 : 0;\n"
)
_BY_EXCESS = Template("    return (excess_${s}(x, y) != 0U) ? 1 : 0;\n")


def overflow_fn(t: IntType) -> str:
    """A small function deciding whether x*y leaves the type's range; its
    contract is the exact statement on mathematical integers."""
    if t.bits == 64:
        body = _BY_EXCESS.substitute(s=t.suffix)
    else:
        body = _BY_WIDER_PRODUCT.substitute(wide=t.product_ctype, out_of_range=t.out_of_range)
    return unit("overflows.c.in", s=t.suffix, ctype=t.ctype, body=body)


# excess_<s> of a signed type works on magnitudes: |x| and |y| in uint64_t
# through in-range steps only (-(x + 1) is in range for every x < 0), and the
# bound the magnitude of the product must keep: 2^63 - 1, or 2^63 when the
# signs differ.
_SIGNED_MAGNITUDES = r"""    const uint64_t ux = (x < 0) ? ((uint64_t)(-(x + 1LL)) + 1ULL) : (uint64_t)x;
    const uint64_t uy = (y < 0) ? ((uint64_t)(-(y + 1LL)) + 1ULL) : (uint64_t)y;
    const uint64_t neg = ((x < 0) != (y < 0)) ? 1ULL : 0ULL;
    /*@ assert magnitudes: ux == \abs(x) && uy == \abs(y); */
"""
_SIGNED_EXCESS = """    const uint64_t over = both | high32_u64(t);
    const uint64_t pm = (t * 4294967296ULL) + (low % 4294967296ULL);
    /*@ assert exact: over == 0 ==> pm == ux * uy; */
    const uint64_t lim = 9223372036854775807ULL + neg;
    return over | ((pm > lim) ? 1ULL : 0ULL);
"""
_UNSIGNED_EXCESS = "    return both | high32_u64(t);\n"


def excess_fn(t: IntType) -> str:
    """The 64-bit overflow test without division: a value that is zero
    exactly when x*y fits, from the three products of 32-bit halves that
    can be non-zero (xh*yl, xl*yh, xl*yl; every step exact while the high
    halves are not both non-zero; when they are, the product is at least
    2^64 and `both`, their minimum, alone makes the result non-zero).
    Symmetric in x and y, so no select picks the smaller factor: with
    AVX-512DQ each product is one vpmullq (docs/native-kernel.md).
    Branch-free: shifts, masks, products, a minimum and ORs only, so the
    block scan that ORs it over its elements vectorises."""
    if t.signed:
        magnitudes, u, v, result = _SIGNED_MAGNITUDES, "ux", "uy", _SIGNED_EXCESS
    else:
        magnitudes, u, v, result = "", "x", "y", _UNSIGNED_EXCESS
    return unit(
        "excess.c.in", s=t.suffix, ctype=t.ctype, magnitudes=magnitudes, u=u, v=v, result=result
    )


# The block scans' bodies (the block_body_<s>.c.in of native/templates/), by width:
#
# * 8 bits: the exact product in a type holding it, 16 bits (gcc then
#   multiplies in 16-bit lanes); signed, the least and the greatest product
#   (min/max) against the type's bounds; unsigned, the greatest.
# * 16 bits: in 16-bit lanes, the high half of the product (gcc: vpmulhw /
#   vpmulhuw) and, signed, the sign bit of its low half (vpmullw): the product
#   fits exactly when the high half is the sign extension of the low one,
#   i.e. when `off` is 0; their maximum, not their OR (vpmaxuw: the same one
#   operation, and no narrowing of an OR for WP) -- six vector operations per
#   32 elements where the min/max of 32-bit products took sixteen, the scan's
#   cost.  int16's proof reads the bits of negative values: the ghost
#   functions of ghosts_i16.c.in come first.
# * 32 bits: the OR of the 64-bit products, its high half tested once after
#   the loop, one shift per element less (WP's simplifier knows (x | y) >> 32
#   is 0 only when both are).  int32: the same of the products plus 2^31
#   (p + 2^31 is in [0, 2^32) exactly when p fits; a negative sum converts,
#   modulo 2^64 (C99 6.3.1.3p2), to at least 2^63, so its high half is
#   non-zero too: one add and no compare or blend, AVX2 having no 64-bit
#   min/max).
# * 64 bits: the OR of excess_<s> (block_body_64.c.in, both types).
#
# Every body accumulates with no exit inside the loop, so gcc vectorises it
# (it does not vectorise a loop with an early exit).
def block_body(t: IntType, test: str) -> str:
    """A block scan's body (the table above); the fused checked pass of a
    fresh result adds a store to it (int_unit)."""
    name = "block_body_64.c.in" if t.bits == 64 else f"block_body_{t.suffix}.c.in"
    if t.bits == 8:  # the products against the type's limits
        limits = {"min": t.min_constant} if t.signed else {}
        return unit(name, s=t.suffix, max=t.max_constant, **limits)
    return unit(name, s=t.suffix, test=test)


def block_fn(t: IntType, binary64: bool = False) -> str:
    """A branch-free pass over a[from .. to-1], b[from .. to-1]: 0 when every
    product there fits (a non-zero result only sends the block to the
    element-by-element scan).  The range from .. to is the caller's, so no
    index is shifted between the two contracts.  ``binary64``: int64's block
    function by the binary64 test (native/int64_binary64.py), under the same
    contract."""
    name = f"block_overflows_{'f64_' if binary64 else ''}{t.suffix}"
    # int64's two: inline since they were first compiled in every build, each
    # unused in one; the guards now compile each only where it runs
    # (int64_binary64), and dropping `inline` would change the pinned statements
    storage = "static inline int" if t.is_i64 else "static int"
    body = block_body(t, "excess_f64" if binary64 else "excess")
    return unit("block_scan.c.in", s=t.suffix, ctype=t.ctype, storage=storage, name=name, body=body)


def block_scans(t: IntType) -> str:
    """The block scans of a type: by the halves test, int64's compiled only
    where it runs (int64_binary64.HALVES_GUARD) and followed by its binary64
    one; int16's after the ghost functions its proof calls."""
    if t.is_i64:
        halves = int64_binary64.HALVES_GUARD + block_fn(t) + "#endif\n"
        return halves + "\n" + int64_binary64.render(CHECKED_MARKER, block_fn(t, binary64=True))
    if t.bits == 16 and t.signed:
        return unit("ghosts_i16.c.in") + block_fn(t)
    return block_fn(t)


def scan_choice(t: IntType) -> str:
    """int64's block scan by build: the avx512 build (AVX-512DQ: vcvtqq2pd,
    vpmullq) calls the binary64 test's block function, whose contract is the
    halves one's word for word (wp_statements.STANDS_IN checks it), so the
    caller's proof, which uses only that contract, holds for both.
    Frama-C's preprocessor defines no __AVX512DQ__: WP proves the caller as
    it calls block_overflows_i64.  A macro outside the function, so that the
    function's text has one call (the marker scan counts its braces)."""
    return unit("scan_choice_i64.c.in") if t.is_i64 else ""


def block_scan_name(t: IntType) -> str:
    """The name the first-overflow scan calls for a block (see scan_choice)."""
    return "SONNX_MUL_BLOCK_SCAN_I64" if t.is_i64 else f"block_overflows_{t.suffix}"


def block_elements(t: IntType) -> int:
    """Elements of each operand per block (:data:`BLOCK_BYTES`)."""
    return BLOCK_BYTES // (t.bits // 8)
