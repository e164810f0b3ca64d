"""The float16 conversions and the bfloat16 product written once
(native/bitspec.py) and their tie to IEEE 754 (why3/f16_bits.mlw).

The ACSL of the kernel header and the Why3 functions are renderings of one
definition; these tests check the renderings, the interval bound that makes
the two the same function, and the integer functions against numpy's
conversions and ml_dtypes' bfloat16.  The negative controls of the lemmas (a fault planted in the
one definition fails its lemma) run with the provers, in
tests/assurance/test_why3_negative_floats.py.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from sonnx_mul_assurance.why3 import bits

REPO = Path(__file__).resolve().parents[2]
SPEC = bits.bitspec(REPO)
WIDEN, SHR13, NARROW, BF16_MUL = (next(f for f in SPEC.FUNCTIONS if f.name == n) for n in
                                  ("sonnx_f16_widen", "sonnx_shr13", "sonnx_f16_narrow",
                                   "sonnx_bf16_mul_bits"))  # fmt: skip


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
    assert SPEC.bounds(BF16_MUL) == (0, 65408)  # a bfloat16 pattern


def test_an_intermediate_beyond_2_63_is_refused() -> None:
    big = SPEC.Function("big", ("h",), ((0, 32767),), SPEC.op(SPEC.op("h", "*", 2**62), "+", 1))
    with pytest.raises(ValueError, match="beyond 2\\^63"):
        SPEC.render_why3(big)
    with pytest.raises(ValueError, match="beyond 2\\^63"):
        SPEC.render_acsl(big)


COMPARISONS = ("<", "<=", ">", ">=", "==", "!=")


@pytest.mark.parametrize("symbol", COMPARISONS)
def test_a_comparison_narrows_to_exactly_the_values_that_satisfy_it(symbol: str) -> None:
    # every branch environment is the hull of the values for which its
    # condition holds: one value too few is unsound (a bound may miss the
    # largest intermediate), one too many only loses precision; both fail here
    for lo in range(-3, 4):
        for hi in range(lo, 4):
            for k in range(lo - 2, hi + 3):
                cond = SPEC.cmp("x", symbol, k)
                then_env, other_env = SPEC._refine(cond, {"x": (lo, hi)})
                for env, holds in ((then_env, True), (other_env, False)):
                    values = [x for x in range(lo, hi + 1) if SPEC._holds(cond, {"x": x}) is holds]
                    # no value: the branch is dead and keeps the whole domain;
                    # x != k keeps it too (sound, as it removes one value at most)
                    effective = symbol if holds else SPEC._NEGATED[symbol]
                    keeps = not values or effective == "!="
                    want = (lo, hi) if keeps else (min(values), max(values))
                    assert env == {"x": want}, (symbol, lo, hi, k, holds)


@pytest.mark.parametrize(
    ("symbol", "k", "branch"), [(">=", 4, "then"), ("<", 4, "other"), (">", 3, "then"),
                                ("<=", 3, "other")],
)  # fmt: skip
def test_an_intermediate_reaching_2_63_at_the_comparisons_boundary_is_refused(
    symbol: str, k: int, branch: str
) -> None:
    # (8 - x) * 2^61 is 2^63 at x = 4, the smallest x of the branch taken: a
    # bound that narrows the branch by one value more sees 3 * 2^61 and
    # accepts a function whose 64-bit rendering overflows
    x4 = SPEC.op(SPEC.op(8, "-", "x"), "*", 2**61)
    cond = SPEC.cmp("x", symbol, k)
    body = SPEC.select(cond, x4, 0) if branch == "then" else SPEC.select(cond, 0, x4)
    f = SPEC.Function("edge", ("x",), ((0, 8),), body)
    assert SPEC.evaluate(f, 4) == 2**63 == SPEC.LIMIT
    with pytest.raises(ValueError, match="reaches 9223372036854775808, beyond 2\\^63"):
        SPEC.bounds(f)
    # the positive control: one value further from the edge, the bound holds exactly
    shifted = SPEC.cmp("x", symbol, k + 1)
    body = SPEC.select(shifted, x4, 0) if branch == "then" else SPEC.select(shifted, 0, x4)
    assert SPEC.bounds(SPEC.Function("edge", ("x",), ((0, 8),), body)) == (0, 3 * 2**61)


def test_a_change_of_a_rendering_is_seen_by_generate_check(tmp_path: Path) -> None:
    # the committed C header and Why3 file are compared with what bitspec
    # renders: a copy of native/ whose bitspec changes one threshold of the
    # float16 narrowing is stale for generate.py --check, and its Why3 text
    # is no longer the committed file
    native = tmp_path / "native"
    shutil.copytree(REPO / "native", native)
    source = (native / "bitspec.py").read_text()
    assert source.count('cmp("u", ">=", 1199570944)') == 1
    (native / "bitspec.py").write_text(
        source.replace('cmp("u", ">=", 1199570944)', 'cmp("u", ">", 1199570944)')
    )
    check = [sys.executable, str(native / "generate.py"), "--check"]
    same = subprocess.run([sys.executable, str(REPO / "native/generate.py"), "--check"],
                          capture_output=True, text=True)  # fmt: skip
    assert same.returncode == 0, same.stderr  # the control: the checkout is current
    stale = subprocess.run(check, capture_output=True, text=True)
    assert stale.returncode == 1
    assert f"{native / 'include' / 'sonnx_mul_kernel.h'} is stale" in stale.stderr
    try:
        changed = bits.bitspec(tmp_path)
        assert bits.generate(changed) != (REPO / bits.PATH).read_text()
    finally:
        sys.modules[SPEC.__name__] = SPEC  # loading registered the copy under the same name


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


def _bf16_pairs() -> np.ndarray:
    """Operand patterns of every exponent's edges (zeros, the subnormal
    boundary, the largest finite, infinities, NaNs, both signs) paired with
    each other, and random pairs: all bits, and small magnitudes whose
    products are subnormal or underflow."""
    mags = [0, 1, 2, 0x3F, 0x40, 0x7F, 0x80, 0x81, 0xFF, 0x100, 0x1FFF, 0x2000, 0x3F80,
            0x3FC0, 0x3FFF, 0x4000, 0x5F80, 0x7F7F, 0x7F80, 0x7F81, 0x7FC0, 0x7FFF]  # fmt: skip
    edges = np.array(mags + [m | 0x8000 for m in mags], dtype=np.uint32)
    grid = np.stack(np.meshgrid(edges, edges), -1).reshape(-1, 2)
    rng = np.random.default_rng(2028)
    small = rng.integers(0, 0x2000, (4000, 2)) | (rng.integers(0, 2, (4000, 2)) << 15)
    return np.concatenate([grid, rng.integers(0, 2**16, (6000, 2)), small]).astype(np.uint32)


def test_bf16_product_is_the_exact_product_rounded_once() -> None:
    pairs = _bf16_pairs()
    bf16 = ml_dtypes.bfloat16
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NaNs, 0 x inf, overflow: the point
        x, y = (pairs[:, k].astype(np.uint16).view(bf16).astype(np.float64) for k in (0, 1))
        want = (x * y).astype(bf16).view(np.uint16)  # exact in binary64, one rounding
    want = np.where((want & 0x7FFF) > 0x7F80, 0x7FC0, want)  # the NaN rule
    got = np.array([SPEC.evaluate(BF16_MUL, int(a), int(b)) for a, b in pairs])
    assert np.array_equal(got, want.astype(np.int64))


def test_bf16_narrow_is_ml_dtypes_float32_to_bfloat16_with_the_quiet_nan() -> None:
    # the definition the header's contract and why3/f16_bits.mlw's
    # bf16_narrow_is_ieee share: ties (every exponent, both signs), their
    # neighbours, the largest finite values, NaN payloads, random patterns
    narrow = next(f for f in SPEC.FUNCTIONS if f.name == "sonnx_bf16_narrow")
    assert SPEC.bounds(narrow)[0] == 0
    tops = np.arange(0, 0x10000, 13, dtype=np.uint64) << 16  # every exponent, both signs
    rng = np.random.default_rng(2029)
    u = np.unique(
        np.concatenate(
            [tops | 0x8000, tops | 0x7FFF, tops | 0x8001, tops, rng.integers(0, 2**32, 5000)]
        )
    ).astype(np.uint32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = u.view(np.float32).astype(ml_dtypes.bfloat16).view(np.uint16).astype(np.int64)
    got = np.array([SPEC.evaluate(narrow, int(x)) for x in u], dtype=np.int64)
    nan = (u & 0x7FFFFFFF) > 0x7F800000
    assert np.array_equal(got[~nan], want[~nan])
    # a NaN: its sign and leading payload bits, the quiet bit (bit 6) set
    assert np.array_equal(got[nan], ((u[nan] >> 16) | 0x40).astype(np.int64))
