"""F-FLOAT: the exported narrowings sonnx_mul_f32_to_f16_bits and
sonnx_mul_f32_to_bf16_bits on a sample of every edge class of binary32
inputs, bit for bit against a value-based oracle.

The oracle (:func:`narrow_oracle`) rounds the exact rational value of the
binary32 pattern to the target format (tests/support.py's encoder, the one the
product oracle rounds with), ties to even, with an unbounded
exponent and then overflow to infinity (IEEE 754 convertFormat); a NaN
becomes the format's NaN with its sign, the quiet bit set and the leading
payload bits kept (the header's stated conversion).  It shares no code with
the kernel's integer tricks.  ``make verify-exhaustive`` runs every one of
the 2^32 inputs (native/verify/exhaustive.c); this is the sample ``make
test`` runs: every exponent of both signs with ties, and the patterns one
below and above them, at every rounding position (the float16 subnormal
results round at every bit), binary32 subnormals, the overflow boundary,
NaN payloads of both kinds, and uniform random patterns.

The kernel is called through the extension's own exported symbols (every
variant this CPU runs).  Negative controls: copies of the float unit with a
narrowing that rounds ties to odd and one that sets the wrong quiet bit,
built with the kernel's pinned flags, must fail the same comparison.
"""

from __future__ import annotations

import ctypes
import functools
import random
import shutil
import struct
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

import sonnx_mul._native as native
from sonnx_mul.dtypes import FLOAT32
from sonnx_mul_assurance.c import flags, native_exhaustive
from support import decode, round_to_nearest_even

ROOT = Path(__file__).resolve().parents[2]
FORMATS = {"f16": (5, 11), "bf16": (8, 8)}
"""Exponent bits and significand bits (hidden bit included) of each target."""

Narrowing = Callable[[int], int]
"""A narrowing on bit patterns: a binary32 pattern to a 16-bit pattern."""


def narrow_oracle(u: int, eb: int, sb: int) -> int:
    """The pattern of the binary32 pattern ``u`` converted to the format
    (``eb``, ``sb``): round to nearest, ties to even, by value
    (support.round_to_nearest_even, the product oracle's encoder).

    Contract: ``0 <= u < 2^32``; the result is ``< 2^(eb + sb)``."""
    negative = bool(u >> 31)
    sign = int(negative) << (eb + sb - 1)
    all_ones = ((1 << eb) - 1) << (sb - 1)
    value = decode(u, FLOAT32)
    if value == "nan":  # the format's NaN: the sign, the quiet bit, the leading payload bits
        quiet = 1 << (sb - 2)
        return sign | all_ones | quiet | ((u & 0x7FFFFF) >> (24 - sb))
    if isinstance(value, str):  # an infinity: the format's, of the same sign
        return sign | all_ones
    return round_to_nearest_even(abs(value), negative, eb, sb)


def sample_inputs(seed: int = 20261207) -> list[int]:
    """The binary32 patterns of the sample: every exponent of both signs
    with, at every rounding position r (1..23), the patterns whose low r
    bits are the half (a tie), one below and one above, under an even and
    an odd kept part; all-zero and all-one fractions; the overflow
    boundaries of both formats; NaNs with every single payload bit, all
    payload bits, quiet and signalling; uniform random patterns."""
    rng = random.Random(seed)
    out: set[int] = set()
    for sign in (0, 1):
        for exponent in range(256):
            top = (sign << 31) | (exponent << 23)
            for fraction in (0, 1, 0x7FFFFF, 0x400000, 0x3FFFFF):
                out.add(top | fraction)
            for r in range(1, 24):
                half = 1 << (r - 1)
                for kept in (0, 1, rng.getrandbits(23 - r) if r < 23 else 0):
                    base = (kept << r) & 0x7FFFFF
                    for low in (half - 1, half, half + 1):
                        out.add(top | ((base | low) & 0x7FFFFF))
        # overflow boundaries: float16's 65520 (max + half an ulp), bfloat16's
        # largest finite binary32 region, each with its neighbours
        for pattern in (0x477FE000, 0x477FEFFF, 0x477FF000, 0x7F7F7FFF, 0x7F7F8000, 0x7F7FFFFF):
            for delta in (-2, -1, 0, 1, 2):
                out.add((sign << 31) | (pattern + delta))
        for quiet in (0, 1):
            for payload in [1 << k for k in range(22)] + [0x3FFFFF, 0x2AAAAA, 0x155555]:
                if quiet or payload:
                    out.add((sign << 31) | 0x7F800000 | (quiet << 22) | payload)
    out |= {rng.getrandbits(32) for _ in range(20000)}
    return sorted(out)


SAMPLE = sample_inputs()


@functools.cache
def expected(name: str) -> tuple[int, ...]:
    """The oracle's pattern of every input of the sample, narrowed to ``name``
    (computed once: every test of the file compares against it)."""
    eb, sb = FORMATS[name]
    return tuple(narrow_oracle(u, eb, sb) for u in SAMPLE)


def mismatches(narrowing: Narrowing, name: str) -> list[tuple[int, int, int]]:
    """(input, got, want) of every input of the sample the narrowing to
    ``name`` gets wrong, by bit pattern (a NaN's bits included)."""
    return [
        (u, got, want)
        for u, want in zip(SAMPLE, expected(name), strict=True)
        if (got := narrowing(u)) != want
    ]


def from_library(library: ctypes.CDLL, symbol: str) -> Narrowing:
    """The C narrowing ``symbol`` of ``library`` on bit patterns: the float
    argument is made from the pattern's bytes (never through a double, which
    would quiet a signalling NaN)."""
    function = getattr(library, symbol)
    function.argtypes = [ctypes.c_float]
    function.restype = ctypes.c_uint16

    def call(u: int) -> int:
        return int(function(ctypes.c_float.from_buffer_copy(struct.pack("<I", u))))

    return call


def variants() -> list[str]:
    """The symbol prefixes of the kernel builds in the extension this CPU runs."""
    others = flags.variants(ROOT)[1:]  # native/isa.toml's variants after the reference
    prefixes = ["sonnx_mul_"]
    if native_exhaustive.is_x86_64():
        have = native_exhaustive.cpu_flags()
        prefixes += [f"sonnx_mul_{v.name}_" for v in others if set(v.runs_on) <= have]
    return prefixes


EXTENSION = ctypes.CDLL(native.__file__)


def test_F_FLOAT_the_oracle_on_known_patterns() -> None:
    # the oracle's own positive and negative cases, by hand
    assert narrow_oracle(0x3F800000, 8, 8) == 0x3F80  # 1.0
    assert narrow_oracle(0x3F808000, 8, 8) == 0x3F80  # a tie, kept even
    assert narrow_oracle(0x3F818000, 8, 8) == 0x3F82  # a tie, up to even
    assert narrow_oracle(0x7F7FFFFF, 8, 8) == 0x7F80  # rounds past the largest: infinity
    assert narrow_oracle(0x00000001, 8, 8) == 0x0000  # the least binary32 subnormal
    assert narrow_oracle(0x7F800001, 8, 8) == 0x7FC0  # a signalling NaN, quieted
    assert narrow_oracle(0xFFA10000, 8, 8) == 0xFFE1  # sign and payload kept
    assert narrow_oracle(0x477FF000, 5, 11) == 0x7C00  # 65520: a tie to infinity
    assert narrow_oracle(0x477FEFFF, 5, 11) == 0x7BFF  # just below: 65504
    assert narrow_oracle(0x33000000, 5, 11) == 0x0000  # 2^-25: a tie to zero
    assert narrow_oracle(0x33000001, 5, 11) == 0x0001  # above it: the least subnormal
    assert narrow_oracle(0x387FF000, 5, 11) == 0x0400  # rounds up to the least normal
    assert narrow_oracle(0x387FC000, 5, 11) == 0x03FF  # exactly the largest subnormal
    assert narrow_oracle(0x7F800001, 5, 11) == 0x7E00
    assert narrow_oracle(0xFFFFE000, 5, 11) == 0xFFFF


def test_F_FLOAT_the_sample_holds_every_edge_class() -> None:
    exponents = {(u >> 23) & 0xFF for u in SAMPLE}
    assert exponents == set(range(256))
    ties = [u for u in SAMPLE if u & 0xFFFF == 0x8000 and (u >> 23) & 0xFF != 0xFF]
    assert {(u >> 16) & 1 for u in ties} == {0, 1}  # ties to both sides
    nans = [u for u in SAMPLE if (u >> 23) & 0xFF == 0xFF and u & 0x7FFFFF]
    assert {(u >> 22) & 1 for u in nans} == {0, 1} and {u >> 31 for u in nans} == {0, 1}
    assert any((u >> 23) & 0xFF == 0 and u & 0x7FFFFF for u in SAMPLE)  # binary32 subnormals
    assert {0x477FF000, 0x7F7FFFFF} <= set(SAMPLE)


@pytest.mark.parametrize("name", sorted(FORMATS))
@pytest.mark.parametrize("prefix", variants())
def test_F_FLOAT_exported_narrowing_matches_the_oracle(prefix: str, name: str) -> None:
    narrowing = from_library(EXTENSION, f"{prefix}f32_to_{name}_bits")
    bad = mismatches(narrowing, name)
    assert bad == [], [tuple(map(hex, b)) for b in bad[:5]]


PLANTED = {
    "ties-to-odd-bf16": (
        "h = (u + 32767U + lsb) / 65536U;",
        "h = (u + 32768U - lsb) / 65536U;",
    ),
    "quiet-bit-5-bf16": (
        "const uint32_t quiet = (hi + 64U) - (bit6 * 64U); /* sets the quiet bit */",
        "const uint32_t quiet = (hi + 32U) - (((hi / 32U) % 2U) * 32U);",
    ),
    "ties-to-odd-f16": (
        "const uint32_t normal = ((mag - 939524096U) + 4095U + lsb) / 8192U;",
        "const uint32_t normal = ((mag - 939524096U) + 4096U - lsb) / 8192U;",
    ),
    "quiet-bit-8-f16": (
        "const uint32_t nan = 32256U + ((mag / 8192U) % 512U);",
        "const uint32_t nan = 32000U + ((mag / 8192U) % 256U) + ((mag / 4194304U) % 2U) * 512U;",
    ),
}
"""Faults planted in a copy of native/src/sonnx_mul_float.c: (text, replacement)."""


def build_copy(tmp_path: Path, edit: tuple[str, str] | None) -> ctypes.CDLL:
    """A shared library of a copy of the float unit, with ``edit`` applied,
    compiled with the kernel's pinned flags (native/flags.mk)."""
    copy = tmp_path / "native"
    shutil.copytree(ROOT / "native", copy)
    source = copy / "src" / "sonnx_mul_float.c"
    if edit is not None:
        old, new = edit
        text = source.read_text()
        assert text.count(old) == 1, f"planted edit not applicable: {old!r}"
        source.write_text(text.replace(old, new))
    library = tmp_path / "float.so"
    argv = ["gcc", "-shared", "-fPIC", *flags.cflags(ROOT, "gcc"), f"-I{copy / 'include'}"]
    subprocess.run([*argv, str(source), "-o", str(library)], check=True)
    return ctypes.CDLL(str(library))


needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is needed")


@needs_gcc
def test_F_FLOAT_positive_control_the_unmodified_copy_passes(tmp_path: Path) -> None:
    library = build_copy(tmp_path, None)
    for name in FORMATS:
        narrowing = from_library(library, f"sonnx_mul_f32_to_{name}_bits")
        assert mismatches(narrowing, name) == []


@needs_gcc
@pytest.mark.parametrize("fault", sorted(PLANTED))
def test_F_FLOAT_planted_narrowing_faults_fail_the_sample(tmp_path: Path, fault: str) -> None:
    name = fault.rsplit("-", 1)[1]
    library = build_copy(tmp_path, PLANTED[fault])
    bad = mismatches(from_library(library, f"sonnx_mul_f32_to_{name}_bits"), name)
    assert bad, fault
    # each fault is caught in its own class: ties, or NaNs
    nan = [b for b in bad if (b[0] >> 23) & 0xFF == 0xFF and b[0] & 0x7FFFFF]
    if fault.startswith("quiet-bit"):
        assert len(nan) == len(bad)
    else:
        assert not nan
