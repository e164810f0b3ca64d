"""native/src/sonnx_mul_int.c: the wrap and checked loops of the integer
types, one instance of native/templates/int_type.c.in per type of
:data:`int_types.TYPES`, after the file's head and the shift helpers the
64-bit tests share.

This module fills the wrap mode's parts; the checked mode's tests come from
:mod:`int_scans`.
"""

from __future__ import annotations

from string import Template

import int64_binary64
import int_scans
from int_types import TYPES, IntType
from templating import CHECKED_MARKER, unit

# The wrap loop's body (c[i] from a[i], b[i]), by type:
#
# * signed, up to 32 bits: the branch-free one-element helper of wrap1.c.in
#   (so gcc vectorises);
# * unsigned, up to 32 bits: the exact product in a wider type (32 bits for
#   8/16 bits, 64 for 32: no overflow), reduced with C's `%`;
# * 64 bits: no wider type in C99; the operands are converted to uint64_t
#   (modulo 2^64, C99 6.3.1.3p2) and multiplied there (modulo 2^64, 6.2.5p9);
#   a signed result goes back by twos_i64 (twos_i64.c.in), whose every step
#   is in range, never an implementation-defined conversion.
#
# Every step up to 32 bits is exact integer arithmetic, so WP proves the
# result equal to the product modulo 2^bits (Frama-C 25's model of
# conversions is not modular beyond the identity on in-range values).
_BY_HELPER = Template("        c[i] = wrap1_${s}(a[i], b[i]);\n")
_BY_MODULO = Template(
    "        const ${wide} p = (${wide})a[i] * (${wide})b[i];\n"
    "        const ${wide} q = p % ${modulus}${lit};\n"
    "        const ${wide} w = q;\n"
    "        /*@ assert wrap_elem: sonnx_wraps_${s}(w, a[i] * b[i]); */\n"
    "        c[i] = (${ctype})w;\n"
)
_BY_UINT64 = "        c[i] = a[i] * b[i];\n"
_BY_TWOS = r"""        const uint64_t r = (uint64_t)a[i] * (uint64_t)b[i];
        const int64_t w = twos_i64(r);
        /*@ assert wrap_bits: r == (uint64_t)((uint64_t)a[i] * (uint64_t)b[i]); */
        /*@ assert wrap_elem: w == sonnx_wrap_bits_i64(a[i], b[i]); */
        c[i] = w;
"""


def wrap_body(t: IntType) -> str:
    """The loop body of the wrap mode (see the table above)."""
    if t.bits == 64:
        return _BY_TWOS if t.signed else _BY_UINT64
    if t.signed:
        return _BY_HELPER.substitute(s=t.suffix)
    return _BY_MODULO.substitute(
        wide=t.product_ctype, modulus=t.modulus, lit=t.product_literal, s=t.suffix, ctype=t.ctype
    )


def wrap_helper(t: IntType) -> str:
    """The one-element wrap of a signed type up to 32 bits (static, inlined:
    the loop's invariant then only sees its contract); none for the others.

    Branch-free: s = p + h*(h - 1), h = 2^(bits-1), is in [0, 2^(2 bits - 1)
    - h] (the product lies in [-h*(h-1), h^2]), so it fits the wide type and
    its conversion to the unsigned wide type is the identity; s = p + h
    (mod 2^bits), so (s mod 2^bits) - h is the wrapped product.  Selects and
    masks only: gcc vectorises the loop.
    """
    if not t.signed or t.bits == 64:
        return ""
    half = t.modulus // 2
    offset = half * (half - 1)
    return unit(
        "wrap1.c.in",
        s=t.suffix,
        ctype=t.ctype,
        wide=t.product_ctype,
        uwide="u" + t.product_ctype,
        lit=t.product_literal,
        ulit="U" + t.product_literal,
        p_min=-offset,
        p_max=half * half,
        offset=offset,
        half=half,
        modulus=t.modulus,
    )


def twos_helper(t: IntType) -> str:
    """int64's r read as int64 (two's complement), by a path whose every step
    is in range: r itself up to INT64_MAX (6.3.1.3p1), else -(2^64 - 1 - r) -
    1, never an implementation-defined conversion (C99 6.3.1.3p3).  In this
    form gcc turns the branches into one select: the binary64 block scan
    with AVX-512 took 2.3 ms at 10^6 elements when the in-range branch was
    written (r / 2) * 2 + r % 2, 0.97 ms now.  Shared by the int64 wrap loop
    and the binary64 checked test (static, inlined: callers see its
    contract)."""
    return unit("twos_i64.c.in") if t.is_i64 else ""


def wrap_term(t: IntType, x: str, y: str) -> str:
    """The ACSL term the wrap loop is proved to compute for operands x, y
    (the header's contract states it too)."""
    if t.bits == 64:
        return f"c[k] == sonnx_wrap_bits_{t.suffix}({x}, {y})"
    return f"sonnx_wraps_{t.suffix}(c[k], {x} * {y})"


def exact_product(t: IntType) -> str:
    """a[i]*b[i] in a type where it cannot overflow once it fits the element
    type, converted to the element type (in range: value-preserving)."""
    if t.bits == 64:
        return "a[i] * b[i]"
    return f"({t.ctype})(({t.product_ctype})a[i] * ({t.product_ctype})b[i])"


# The fused checked pass of a fresh result (fused_block.c.in, fused_entry.c.in):
# the block scan's own pass (int_scans: its loop, its accumulator, its
# invariants, word for word) with one store more per element, so that each
# product is computed once and the loop stays branch-free (gcc vectorises it,
# and folds the store's product into the scan's).  The store is the wrapped
# product, in range whatever the operands (never an implementation-defined
# conversion), and the exact product whenever that fits (the assertion or
# contract `exact`), which is all the invariant added to the pass needs:
#
# * int8: wrap1's steps in 16-bit lanes, on the scan's own 16-bit product
#   (p + 128*127 is in [0, 2^15), its residue modulo 2^8 less 2^7 is the
#   two's complement wrap): wrap1_i8 itself, in 32-bit lanes, took the pass
#   to 1.7x wrap against 1.2-1.5x;
# * int16: the scan's own low half `lo` (the product's bits modulo 2^16,
#   vpmullw) read as two's complement; the congruence with the product is
#   stated as a multiple of 2^16 (`w_congruent`: `(p - lo) % 65536 == 0`
#   alone was not proved by any prover of the manifest); wrap1_i16 here, in
#   32-bit lanes, took the checked call to 1.20-1.30x wrap against 1.00-1.05x;
# * int32: wrap1_i32, the wrap loop's helper (sonnx_wraps_i32);
# * unsigned up to 32 bits: the scan's exact product modulo 2^bits;
# * uint64: C's modular product; int64: wrapped_i64 (its contract `exact`).
_FUSED_STORES = {
    "i8": """        /*@ assert p_range: -16256 <= p <= 16384; */
        const int16_t s = (int16_t)(p + 16256);
        const uint16_t q = (uint16_t)((uint16_t)s % 256U);
        /*@ assert q_mod: q == (p + 16256) % 256; */
        const int16_t w = (int16_t)((int16_t)q - 128);
        /*@ assert wrap_elem: sonnx_wraps_i8(w, a[j] * b[j]); */
        /*@ assert exact: sonnx_fits_i8(a[j] * b[j]) ==> w == a[j] * b[j]; */
        c[j] = (int8_t)w;
""",
    "i16": """        const uint16_t wbits = (uint16_t)(((uint32_t)lo + 32768U) % 65536U);
        /*@ assert wbits_def: wbits == ((lo < 32768) ? lo + 32768 : lo - 32768); */
        const int32_t w = (int32_t)wbits - 32768;
        /*@ assert w_def: w == ((lo < 32768) ? lo : lo - 65536); */
        /*@ assert lo_split: bits == 65536 * (bits / 65536) + lo; */
        /*@ assert w_congruent: p - w ==
              65536 * ((bits / 65536) - ((p < 0) ? 65536 : 0) + ((lo < 32768) ? 0 : 1)); */
        /*@ assert wrap_elem: sonnx_wraps_i16(w, a[j] * b[j]); */
        /*@ assert exact: sonnx_fits_i16(a[j] * b[j]) ==> w == a[j] * b[j]; */
        c[j] = (int16_t)w;
""",
    "i64": "        c[j] = wrapped_i64(a[j], b[j]);\n",
    "u64": "        c[j] = a[j] * b[j];\n",
}
_FUSED_BY_WRAP1 = Template(
    "        const ${ctype} w = wrap1_${s}(a[j], b[j]);\n"
    "        /*@ assert exact: sonnx_fits_${s}(a[j] * b[j]) ==> w == a[j] * b[j]; */\n"
    "        c[j] = w;\n"
)
_FUSED_BY_MODULO = Template("        c[j] = (${ctype})(p % ${modulus}${lit});\n")
_FUSED_INVARIANT = Template(
    "        loop invariant exact: \\forall integer k; from <= k < j ==>\n"
    "            sonnx_fits_${s}(a[k] * b[k]) ==> c[k] == a[k] * b[k];\n"
)


def _fused_store(t: IntType) -> str:
    if t.suffix in _FUSED_STORES:
        return _FUSED_STORES[t.suffix]
    if t.signed:
        return _FUSED_BY_WRAP1.substitute(ctype=t.ctype, s=t.suffix)
    lit = "ULL" if t.bits == 32 else "U"
    return _FUSED_BY_MODULO.substitute(ctype=t.ctype, modulus=t.modulus, lit=lit)


def _replace_once(text: str, old: str, new: str) -> str:
    if text.count(old) != 1:
        raise ValueError(f"the block pass has not exactly one {old!r}")
    return text.replace(old, new)


def _fused_body(t: IntType, test: str) -> str:
    """The block scan's body with the store, its invariant and its assigns."""
    body = int_scans.block_body(t, test)
    body = _replace_once(
        body,
        "        loop assigns j, ",
        _FUSED_INVARIANT.substitute(s=t.suffix) + "        loop assigns j, c[from .. to - 1], ",
    )
    return _replace_once(body, "    }\n    return ", _fused_store(t) + "    }\n    return ")


def _fused_block(t: IntType, binary64: bool = False) -> str:
    name = f"block_fused_{'f64_' if binary64 else ''}{t.suffix}"
    body = _fused_body(t, "excess_f64" if binary64 else "excess")
    return unit("fused_block.c.in", s=t.suffix, ctype=t.ctype, name=name, body=body)


def fused(t: IntType) -> str:
    """A type's fused checked pass and the entry that calls it.  int64's two
    passes (by the halves test and by the binary64 one) are each compiled
    where their test is, and chosen by build as its block scans are
    (int_scans.scan_choice; the same contract, word for word)."""
    if t.is_i64:
        blocks = (
            "\n"
            + int64_binary64.wrapped_helper(CHECKED_MARKER)
            + "\n"
            + int64_binary64.HALVES_GUARD
            + _fused_block(t)
            + "#endif\n\n"
            + int64_binary64.F64_GUARD
            + _fused_block(t, binary64=True)
            + "#endif\n\n"
            + unit("fused_choice_i64.c.in")
        )
        name = "SONNX_MUL_FUSED_BLOCK_I64"
    else:
        blocks = "\n" + _fused_block(t)
        name = f"block_fused_{t.suffix}"
    return blocks + unit(
        "fused_entry.c.in",
        s=t.suffix,
        ctype=t.ctype,
        block=int_scans.block_elements(t),
        fused_block=name,
        exact_product=exact_product(t),
    )


def render_type(t: IntType) -> str:
    """One type's section of the unit (native/templates/int_type.c.in)."""
    return unit(
        "int_type.c.in",
        s=t.suffix,
        ctype=t.ctype,
        wrap_helpers=wrap_helper(t) + twos_helper(t),
        wrapped=wrap_term(t, "\\at(a[k], Pre)", "\\at(b[k], Pre)"),
        wrap_body=wrap_body(t),
        excess=int_scans.excess_fn(t) + "\n" if t.bits == 64 else "",
        overflows=int_scans.overflow_fn(t),
        block_scans=int_scans.block_scans(t),
        block_choice=int_scans.scan_choice(t),
        block=int_scans.block_elements(t),
        block_scan=int_scans.block_scan_name(t),
        exact_product=exact_product(t),
        fused=fused(t),
    )


def render() -> str:
    """The whole generated C file."""
    return (
        unit("int_unit_head.c.in")
        + int_scans.shift_helpers()
        + int_scans.shift_lemmas()
        + "".join(render_type(t) for t in TYPES)
    )
