"""Helpers shared by the tests: bit-exact comparison, edge values, an exact oracle, the launcher."""

from __future__ import annotations

import inspect
import types
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from sonnx_mul.dtypes import ALL_TYPES, ElementType
from sonnx_mul_assurance import pinned as core
from sonnx_mul_assurance.c import wp, wp_plan
from sonnx_mul_assurance.python import contracts
from sonnx_mul_assurance.python.crosshair import conditions

FLOAT_TYPES = tuple(t for t in ALL_TYPES if t.is_float)
INT_TYPES = tuple(t for t in ALL_TYPES if not t.is_float)


def bits_of(x: np.ndarray) -> np.ndarray:
    """The raw bit patterns of a float array (or the values of an int array)."""
    if x.dtype.kind in "iu":
        return x
    return np.ascontiguousarray(x).view(f"u{x.dtype.itemsize}")


def is_nan(x: np.ndarray) -> np.ndarray:
    if x.dtype.kind in "iu":
        return np.zeros(x.shape, bool)
    with np.errstate(invalid="ignore"):  # NaN payloads may warn when widened
        return np.isnan(x.astype(np.float64))


def assert_same_bits(actual: np.ndarray, expected: np.ndarray) -> None:
    """Same shape, dtype, NaN positions, and bit patterns everywhere else."""
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    nan_a, nan_e = is_nan(actual), is_nan(expected)
    assert np.array_equal(nan_a, nan_e), "NaN positions differ"
    ba, be = bits_of(actual)[~nan_a], bits_of(expected)[~nan_e]
    mismatch = np.flatnonzero(ba != be)
    assert mismatch.size == 0, f"{mismatch.size} elements differ, first at {mismatch[:5]}"


def from_bits(patterns: list[int], etype: ElementType) -> np.ndarray:
    return np.array(patterns, dtype=etype.uint_view).view(etype.dtype)


def swapped(x: np.ndarray) -> np.ndarray:
    """The same values in the other byte order."""
    return x.astype(x.dtype.newbyteorder())


def unaligned(x: np.ndarray) -> np.ndarray:
    """The same values at an odd address (misaligned for every type wider than a byte)."""
    raw = np.zeros(x.nbytes + 1, np.uint8)
    y = np.frombuffer(raw.data, dtype=x.dtype, count=x.size, offset=1).reshape(x.shape)
    y[...] = x
    return y


def float_edge_bits(etype: ElementType) -> list[int]:
    """Bit patterns of edge values: zeros, subnormals, ones, ties, extremes, inf, NaN."""
    p = etype.sb - 1
    exp_ones = (1 << etype.eb) - 1
    bias = (1 << (etype.eb - 1)) - 1
    sign = 1 << (etype.bits - 1)

    def normal(e: int, frac: int) -> int:
        return ((e + bias) << p) | frac

    positives = [
        0,  # +0
        1,  # smallest subnormal
        (1 << p) - 1,  # largest subnormal
        1 << p,  # smallest normal
        normal(0, 0),  # 1
        normal(0, 1),  # 1 + ulp: times 1.5 is a tie that rounds up to even
        normal(0, 3),  # 1 + 3 ulp: times 1.5 is a tie that rounds down to even
        normal(0, 1 << (p - 1)),  # 1.5
        normal(-1, 0),  # 0.5
        normal(1, 0),  # 2
        normal(bias, (1 << p) - 1),  # max finite
        normal(bias // 2, 0),  # a power of two whose square overflows near the top
        normal(-(bias // 2), 0),  # one whose square underflows into subnormals
        exp_ones << p,  # +inf
        (exp_ones << p) | (1 << (p - 1)),  # quiet NaN
    ]
    return positives + [x | sign for x in positives]


def int_edge_values(etype: ElementType) -> list[int]:
    half = 1 << (etype.bits // 2)
    values = {0, 1, 2, 3, half - 1, half, half + 1, etype.hi, etype.hi - 1, etype.lo}
    if etype.signed:
        values |= {-1, -2, -half, etype.lo + 1}
    return sorted(v for v in values if etype.lo <= v <= etype.hi)


# An oracle for IEEE multiplication built from exact rationals, written
# independently of sonnx_mul.oracle.softfloat (which works on integer significands).
def decode(x: int, etype: ElementType) -> Fraction | str:
    """The exact value of a bit pattern, or "inf", "-inf", "nan"."""
    p, bias = etype.sb - 1, (1 << (etype.eb - 1)) - 1
    negative = bool(x >> (etype.bits - 1))
    biased, frac = (x >> p) & ((1 << etype.eb) - 1), x & ((1 << p) - 1)
    if biased == (1 << etype.eb) - 1:
        return "nan" if frac else ("-inf" if negative else "inf")
    if biased == 0:
        value = Fraction(frac, 1 << p) * Fraction(2) ** (1 - bias)
    else:
        value = (1 + Fraction(frac, 1 << p)) * Fraction(2) ** (biased - bias)
    return -value if negative else value


def round_to_format(value: Fraction, negative_zero: bool, etype: ElementType) -> int:
    """Bit pattern of ``value`` rounded to nearest, ties to even."""
    negative = value < 0 or (value == 0 and negative_zero)
    return round_to_nearest_even(abs(value), negative, etype.eb, etype.sb)


def round_to_nearest_even(magnitude: Fraction, negative: bool, eb: int, sb: int) -> int:
    """The bit pattern, in the binary format of ``eb`` exponent bits and ``sb``
    significand bits (hidden bit included), of ``magnitude`` with the sign
    ``negative``: rounded to nearest, ties to even, with an unbounded exponent,
    then overflow to infinity (IEEE 754's rounding of an exact value).

    Contract: ``magnitude >= 0``; the result is ``< 2^(eb + sb)``. The one
    encoder of the exact-arithmetic oracles: the product's (:func:`oracle_mul_bits`)
    and the narrowings' (tests/operator/test_narrowings.py)."""
    sign = (1 << (eb + sb - 1)) if negative else 0
    if magnitude == 0:
        return sign
    p, bias = sb - 1, (1 << (eb - 1)) - 1
    exponent = max(_binade(magnitude), 1 - bias)  # clamped to the subnormal range
    ulp = Fraction(2) ** (exponent - p)
    scaled = magnitude / ulp
    whole = scaled.numerator // scaled.denominator
    remainder = scaled - whole
    if remainder > Fraction(1, 2) or (remainder == Fraction(1, 2) and whole % 2 == 1):
        whole += 1
    if whole == 1 << sb:  # the rounding carried into the next binade
        whole, exponent = whole >> 1, exponent + 1
    if exponent > bias:
        return sign | (((1 << eb) - 1) << p)  # overflow: infinity
    if whole < 1 << p:  # a subnormal of the format (the exponent is the least)
        return sign | whole
    return sign | ((exponent + bias) << p) | (whole - (1 << p))


def _binade(x: Fraction) -> int:
    """The e with 2**e <= x < 2**(e+1), for x > 0."""
    e = x.numerator.bit_length() - x.denominator.bit_length()
    while Fraction(2) ** e > x:
        e -= 1
    while Fraction(2) ** (e + 1) <= x:
        e += 1
    return e


def oracle_mul_bits(x: int, y: int, etype: ElementType) -> int | None:
    """Correctly rounded product bits, or None for a NaN result."""
    vx, vy = decode(x, etype), decode(y, etype)
    negative = bool((x ^ y) >> (etype.bits - 1))
    if "nan" in (vx, vy):
        return None
    if isinstance(vx, str) or isinstance(vy, str):
        if vx == 0 or vy == 0:
            return None  # inf * 0
        inf = ((1 << etype.eb) - 1) << (etype.sb - 1)
        return (1 << (etype.bits - 1)) | inf if negative else inf
    return round_to_format(vx * vy, negative, etype)


def holds(fn, *args):
    """Evaluate every pre:/post: docstring condition of a contracts.py function."""
    pre, post = conditions(fn)
    env = dict(vars(contracts))
    env.update(inspect.signature(fn).bind(*args).arguments)
    if not all(eval(p, env) for p in pre):
        return
    env["__return__"] = fn(*args)
    for p in post:
        assert eval(p, env), (fn.__name__, p, args)


def wp_unit(root: Path, source: str | Path) -> tuple[wp.Unit, dict[str, Any]]:
    """The WP manifest's unit for ``source`` and its pinned entry."""
    manifest = wp.PROOFS.load_manifest(root)
    index = [u["source"] for u in manifest["units"]].index(str(source))
    return wp.units(manifest)[index], manifest["units"][index]


def narrowed(pinned: dict[str, Any], properties: tuple[str, ...]) -> dict[str, Any]:
    """The pinned unit entry with only the goals ``properties`` select (all when empty)."""
    if not properties:
        return pinned
    goals = {g: v for g, v in pinned["goals"].items() if wp_plan.selects(g, properties)}
    return {**pinned, "goals": goals}


def wp_refused(goal: wp.Goal) -> bool:
    """Not proved, and not for want of time (the step limit, or the prover's own answer)."""
    return goal.status != core.VALID and "timeout" not in goal.prover.lower()


def wp_failed(run: wp.Run, goal: str) -> bool:
    """The goal is in the run and refused (:func:`wp_refused`) by the prover
    the manifest pins it to, among the verdicts: not merely by a prover that
    only passes it on (``pinned.UNHELD_STEPS``)."""
    if goal not in run.goals or not wp_refused(run.goals[goal]):
        return False
    _, unit = wp_unit(Path(__file__).resolve().parents[1], run.unit.source)
    pinned = unit["goals"].get(goal, {}).get("prover", "")
    return pinned in ("", wp_plan.QED) or pinned in run.goals[goal].prover


LAUNCHER = Path(__file__).resolve().parents[1] / "scripts" / "sonnx-mul"
"""The ``sonnx-mul`` command's launcher (a script: no ``.py``, never imported)."""


def launcher() -> types.ModuleType:
    """The launcher compiled from its source as a module (its ``__main__`` block not run):
    ``launcher().main(argv, sonnx_mul_verify)`` is the console script's dispatch."""
    module = types.ModuleType("sonnx_mul_launcher")
    module.__file__ = str(LAUNCHER)
    code = compile(LAUNCHER.read_bytes(), str(LAUNCHER), "exec", dont_inherit=True)
    exec(code, module.__dict__)
    return module
