"""native/include/sonnx_mul_kernel.h, the kernel's API and every public ACSL
contract, and native/include/sonnx_mul_rename.h, which renames that API for
the ISA variants.

The header is, in order: include/header_top.h.in; the integer types' logic
(:func:`logic`); one instance of include/header_int.h.in per integer type
(the prototypes and contracts); include/header_float.h.in, with the
preconditions below and the bit-level functions of native/bitspec.py.
"""

from __future__ import annotations

import re
from string import Template
from types import MappingProxyType

import bitspec  # native/bitspec.py, beside this script
from int_types import TYPES, IntType
from int_unit import wrap_term
from templating import header

# The preconditions of every element-wise entry point of the kernel, stated
# once: the integer contracts (header_int.h.in) and the float ones of
# header_float.h.in are written with them.
READ_REQUIRES = r"""requires valid_a: \valid_read(a + (0 .. n - 1));
    requires valid_b: \valid_read(b + (0 .. n - 1));"""
ELEMENTWISE_REQUIRES = (
    READ_REQUIRES
    + r"""
    requires valid_c: \valid(c + (0 .. n - 1));
    requires alias_a: c == a || \separated(c + (0 .. n - 1), a + (0 .. n - 1));
    requires alias_b: c == b || \separated(c + (0 .. n - 1), b + (0 .. n - 1));"""
)

FRESH_REQUIRES = (
    READ_REQUIRES
    + r"""
    requires valid_c: \valid(c + (0 .. n - 1));
    requires fresh_a: \separated(c + (0 .. n - 1), a + (0 .. n - 1));
    requires fresh_b: \separated(c + (0 .. n - 1), b + (0 .. n - 1));"""
)
"""A fresh result (sonnx_mul_checked_fresh_*) shares no memory with the
operands: the caller allocated it."""

LOGIC_OPEN = (
    "/*@ logic integer sonnx_emod(integer x, integer m) = (x % m < 0) ? (x % m) + m : x % m;\n"
)
"""The integer logic's ACSL block opens with the Euclidean remainder, which the
wrap predicates below are written with."""

# Each type's predicates: fits (in the type's range), the wrapped value, and
# wraps: w is x modulo 2^bits in the type's range, the unique value of the
# type congruent to x (two's complement when signed).
_TYPE_LOGIC = Template(
    "    predicate sonnx_fits_${s}(integer x) = ${lo} <= x <= ${hi};\n"
    "    logic integer sonnx_wrap_${s}(integer x) = ${wrap};\n"
    "    predicate sonnx_wraps_${s}(integer w, integer x) =\n"
    "        sonnx_fits_${s}(w) && (x - w) % ${modulus} == 0;\n"
)
# What WP can prove of the 64-bit loops (its model of conversions is abstract
# beyond in-range values): the ACSL conversion to uint64_t, which ACSL
# defines modulo 2^64, of the product of the operands' uint64_t images, read
# back as two's complement when signed.
_WRAP_BITS = MappingProxyType(
    {
        "i64": (
            "    logic integer sonnx_twos_i64(integer r) =\n"
            "        (r > 9223372036854775807) ? r - 18446744073709551616 : r;\n"
            "    logic integer sonnx_wrap_bits_i64(integer x, integer y) =\n"
            "        sonnx_twos_i64((uint64_t)((uint64_t)x * (uint64_t)y));\n"
        ),
        "u64": (
            "    logic integer sonnx_wrap_bits_u64(integer x, integer y) =\n        (uint64_t)(x * y);\n"
        ),
    }
)


def logic(t: IntType) -> str:
    """The ACSL logic of one integer type (its range, its wrap)."""
    half = t.modulus // 2
    wrap = (
        f"sonnx_emod(x + {half}, {t.modulus}) - {half}"
        if t.signed
        else f"sonnx_emod(x, {t.modulus})"
    )
    text = _TYPE_LOGIC.substitute(s=t.suffix, lo=t.lo, hi=t.hi, wrap=wrap, modulus=t.modulus)
    return text + (_WRAP_BITS[t.suffix] if t.bits == 64 else "")


def prototypes(t: IntType) -> str:
    """One integer type's four entry points with their contracts."""
    return header(
        "header_int.h.in",
        s=t.suffix,
        ctype=t.ctype,
        wrapped=wrap_term(t, "\\old(a[k])", "\\old(b[k])"),
        READ_REQUIRES=READ_REQUIRES,
        ELEMENTWISE_REQUIRES=ELEMENTWISE_REQUIRES,
        FRESH_REQUIRES=FRESH_REQUIRES,
    )


def _acsl(functions: tuple[bitspec.Function, ...]) -> str:
    return "\n\n    ".join(bitspec.render_acsl(f) for f in functions)


def render_header() -> str:
    """The whole generated header."""
    return (
        header("header_top.h.in")
        + LOGIC_OPEN
        + "".join(logic(t) for t in TYPES)
        + "*/\n"
        + "".join(prototypes(t) for t in TYPES)
        + header(
            "header_float.h.in",
            ELEMENTWISE_REQUIRES=ELEMENTWISE_REQUIRES,
            F16_CONVERSIONS=_acsl(bitspec.F16_CONVERSIONS),
            BF16_PRODUCT=_acsl(bitspec.BF16_PRODUCT),
            BF16_NARROWING=_acsl(bitspec.BF16_NARROWING),
        )
    )


def render_rename(kernel_header: str) -> str:
    """sonnx_mul_rename.h: every function the kernel header declares renamed
    into the prefix SONNX_MUL_VARIANT (the ISA variants, native/isa.toml)."""
    names = re.findall(r"^[a-z_0-9]+ (sonnx_mul_[a-z_0-9]+)\(", kernel_header, re.MULTILINE)
    renames = [
        f"#define {name} SONNX_MUL_CAT_(SONNX_MUL_VARIANT, {name[len('sonnx_mul') :]})"
        for name in names
    ]
    return header("sonnx_mul_rename.h.in", renames="\n".join(renames))
