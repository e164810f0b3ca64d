"""The float16 conversions written once (native/bitspec.py) and their tie to
IEEE 754 (why3/f16_bits.mlw).

The ACSL of the kernel header and the Why3 functions are renderings of one
definition; these tests check the renderings, the interval bound that makes
the two the same function, and the integer functions against numpy's
conversions.  The negative controls of the lemmas (a fault planted in the
one definition fails its lemma) run with the provers, in
test_why3_negative.py.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from sonnx_mul_assurance.why3 import bits

REPO = Path(__file__).resolve().parents[2]
SPEC = bits.bitspec(REPO)
WIDEN, SHR13, NARROW = (next(f for f in SPEC.FUNCTIONS if f.name == n) for n in
                        ("sonnx_f16_widen", "sonnx_shr13", "sonnx_f16_narrow"))  # fmt: skip


def test_the_header_carries_the_acsl_rendering() -> None:
    header = (REPO / "native/include/sonnx_mul_kernel.h").read_text()
    for function in SPEC.FUNCTIONS:
        assert SPEC.render_acsl(function) in header, function.name


def test_the_why3_file_is_the_why3_rendering() -> None:
    assert (REPO / bits.PATH).read_text() == bits.generate(SPEC)
    text = (REPO / bits.PATH).read_text()
    for function in SPEC.FUNCTIONS:
        assert SPEC.render_why3(function) in text, function.name


def test_results_lie_in_the_patterns_ranges() -> None:
    assert SPEC.bounds(WIDEN) == (0, 2147475456)  # below 2^31: a magnitude
    assert SPEC.bounds(NARROW) == (0, 32767)
    assert SPEC.bounds(SHR13)[0] >= 0


def test_an_intermediate_beyond_2_63_is_refused() -> None:
    big = SPEC.Function("big", ("h",), ((0, 32767),), SPEC.op(SPEC.op("h", "*", 2**62), "+", 1))
    with pytest.raises(ValueError, match="beyond 2\\^63"):
        SPEC.render_why3(big)
    with pytest.raises(ValueError, match="beyond 2\\^63"):
        SPEC.render_acsl(big)


def test_a_call_outside_its_domain_is_refused() -> None:
    call = SPEC.Call("sonnx_shr13", (SPEC.Var("x"), SPEC.Lit(16)))
    with pytest.raises(ValueError, match="outside its domain"):
        SPEC.bounds(SPEC.Function("f", ("x",), ((0, 8),), call))


def test_division_truncates_toward_zero_as_in_acsl() -> None:
    f = SPEC.Function(
        "f", ("x",), ((-20, 20),), SPEC.op(SPEC.op("x", "/", 8), "+", SPEC.op("x", "%", 8))
    )
    assert [SPEC.evaluate(f, x) for x in (-17, -8, -1, 0, 9)] == [-2 - 1, -1, -1, 0, 2]


def test_widen_is_numpys_float16_to_float32_on_every_magnitude() -> None:
    h = np.arange(32768, dtype=np.uint16)
    want = h.view(np.float16).astype(np.float32).view(np.uint32)
    got = np.array([SPEC.evaluate(WIDEN, int(x)) for x in h], dtype=np.uint32)
    nan = h > 0x7C00
    assert np.array_equal(got[~nan], want[~nan])
    assert (got[nan] > 0x7F800000).all()


def _narrow_inputs() -> np.ndarray:
    """Every binary32 magnitude around each float16 rounding boundary, the
    exponents where the format changes, and a random sample."""
    edges = np.arange(0, 2**31, 2**13, dtype=np.int64)
    near = (edges[:, None] + np.array([-1, 0, 1, 2**12 - 1, 2**12, 2**12 + 1])).ravel()
    rng = np.random.default_rng(2026)
    return np.unique(np.clip(np.concatenate([near, rng.integers(0, 2**31, 20000)]), 0, 2**31 - 1))


def test_narrow_is_numpys_float32_to_float16_around_every_boundary() -> None:
    u = _narrow_inputs().astype(np.uint32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # overflow to infinity is the point
        want = u.view(np.float32).astype(np.float16).view(np.uint16)
    got = np.array([SPEC.evaluate(NARROW, int(x)) for x in u], dtype=np.uint16)
    nan = u > 0x7F800000
    assert np.array_equal(got[~nan], want[~nan])
    assert (got[nan] > 0x7C00).all()
