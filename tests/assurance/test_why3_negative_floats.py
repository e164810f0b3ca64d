"""Negative controls of the Why3 proofs of the float formats: a float instance in
another rounding mode, float16 mapped to a wider SMT format, a widening product in
too narrow a format, a narrowing toward zero, and faults planted in native/bitspec.py
(the one definition of the float16 and bfloat16 conversions) must leave the goals
they falsify unproved (``refuted``).

These tests run Why3 and the provers; when they are missing the tests fail
(they are never skipped). The negative controls of the Why3 proofs are the
``test_why3_negative_*.py`` files; what they share is in
tests/assurance/why3_faults.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from why3_faults import REPO, copy_proof_tree, plant, refuted

from sonnx_mul_assurance.why3 import bits
from sonnx_mul_assurance.why3.driver import update_manifest

# runs Why3 and the provers
pytestmark = [pytest.mark.provers, pytest.mark.external_provers, pytest.mark.needs_prover]


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """A copy of the proof tree to plant a fault in (why3_faults.copy_proof_tree)."""
    return copy_proof_tree(tmp_path)


def test_float_rtz_fails(copy: Path) -> None:
    plant(
        copy,
        "floats.mlw",
        "(x y : F.t) : F.t = F.mul F.RNE x y",
        "(x y : F.t) : F.t = F.mul F.RTZ x y",
        after="module Float32Mul",
    )
    # The rounding lemma is stated before f_float: a lemma is a hypothesis
    # of every later goal, so after f_float it would follow from f_float
    # itself, proved or not. Before it, it must fail on its own.
    refuted(copy, "floats.mlw", "Float32Mul", {"f_float#0", "rounding#0"})


# Float format and rounding pinned independently of the definition: the
# known-answer lemmas of floats.mlw hold only for RNE in the exact format.


def module_block(text: str, module: str) -> tuple[int, int]:
    start = text.index(f"module {module}")
    return start, text.index("\nend", start)


@pytest.mark.parametrize(
    ("mode", "falsified"),
    [
        ("RNA", {"ka_tie_even_down#0", "ka_tie_even_neg#0", "ka_subnormal_halved#0"}),
        ("RTZ", {"ka_tie_even_up#0", "ka_above_half#0", "ka_max_doubled#0"}),
        ("RTP", {"ka_tie_even_down#0", "ka_below_half#0", "ka_subnormal_halved#0"}),
        ("RTN", {"ka_tie_even_up#0", "ka_tie_even_neg#0", "ka_max_doubled#0"}),
    ],
)
def test_float_instance_in_another_rounding_mode_fails(
    copy: Path, mode: str, falsified: set[str]
) -> None:
    # A consistent switch: every RNE of the float16 instance (definition,
    # rounding lemma, f_float) becomes another mode, statements re-pinned.
    path = copy / "why3/floats.mlw"
    text = path.read_text()
    start, end = module_block(text, "Float16Mul")
    path.write_text(text[:start] + text[start:end].replace("F.RNE", f"F.{mode}") + text[end:])
    assert update_manifest(copy, files=["why3/floats.mlw"], statements_only=True) == 0
    report = refuted(copy, "floats.mlw", "Float16Mul", falsified)
    assert all(e.startswith("goal not proved:") for e in report["errors"]), report["errors"]


def test_float16_driver_with_a_wider_format_fails(copy: Path) -> None:
    # The driver maps float16 to SMT-LIB binary32, drivers re-pinned: the
    # known answers (ties, subnormal, overflow) no longer hold.
    gen = copy / "proofs/drivers/narrowfloat.gen"
    text = gen.read_text()
    start = text.index("theory narrowfloat.Float16")
    end = text.index("end", start)
    wide = (
        text[start:end]
        .replace("(_ FloatingPoint 5 11)", "(_ FloatingPoint 8 24)")
        .replace("(_ to_fp 5 11)", "(_ to_fp 8 24)")
        .replace("#b%e5b #b%m10b", "#b%e8b #b%m23b")
        .replace("#x0000", "#x00000000")
    )
    gen.write_text(text[:start] + wide + text[end:])
    assert update_manifest(copy, files=["why3/floats.mlw"], statements_only=True) == 0
    falsified = {"ka_tie_even_down#0", "ka_max_doubled#0", "ka_below_half#0"}
    report = refuted(copy, "floats.mlw", "Float16Mul", falsified)
    assert all(e.startswith("goal not proved:") for e in report["errors"]), report["errors"]


def test_widen_float16_product_in_bfloat16_fails(copy: Path) -> None:
    # False: a float16 product needs up to 22 significand bits, bfloat16 has
    # 8.  With the statement re-pinned, the provers alone must reject it.
    plant(
        copy,
        "widen.mlw",
        "repr 16777216 (-149) 104 (m1 * m2) (e1 + e2)",
        "repr 256 (-133) 120 (m1 * m2) (e1 + e2)",
        after="module Float16InFloat32",
    )
    assert update_manifest(copy, files=["why3/widen.mlw"], statements_only=True) == 0
    refuted(copy, "widen.mlw", "Float16InFloat32", {"float16_product_in_float32#0"})


def test_widen_gappa_wrong_wide_format_fails(copy: Path) -> None:
    # False twice (statements re-pinned; Gappa, the manifest's prover, must
    # reject both): a float16 product needs 22 significand bits, bfloat16
    # has 8; and a bfloat16 product below 2^-134 can fall off binary32's
    # subnormal grid.
    plant(
        copy,
        "widen.mlw",
        "F32.round F32.RNE (a *. b) = a *. b",
        "BF16.round BF16.RNE (a *. b) = a *. b",
        after="lemma float16_product_exact_float32",
    )
    plant(copy, "widen.mlw", "0x1p-134 <=.", "0x1p-150 <=.", after="module ExactProducts")
    assert update_manifest(copy, files=["why3/widen.mlw"], statements_only=True) == 0
    refuted(
        copy,
        "widen.mlw",
        "ExactProducts",
        {"float16_product_exact_float32#0", "bfloat16_product_exact_float32#0"},
    )


def test_widen_mul_narrow_wrong_conversion_fails(copy: Path) -> None:
    # The end-to-end statements depend on the conversions being IEEE's:
    # float16 narrowing toward zero instead of to nearest, and a bfloat16
    # narrowing that may lose the sign (of a zero), must each fail.
    plant(
        copy,
        "widen.mlw",
        "F16.round F16.RNE (F32.t'real z)",
        "F16.round F16.RTZ (F32.t'real z)",
        after="module WidenMulNarrow16",
    )
    plant(
        copy,
        "widen.mlw",
        "(F32.is_negative z <-> BF16.is_negative n)",
        "true",
        after="module WidenMulNarrowBF16",
    )
    plant(
        copy,
        "widen.mlw",
        "(F32.is_positive z <-> BF16.is_positive n)",
        "true",
        after="module WidenMulNarrowBF16",
    )
    assert update_manifest(copy, files=["why3/widen.mlw"], statements_only=True) == 0
    refuted(copy, "widen.mlw", "WidenMulNarrow16", {"finite_case'vc#5"})
    refuted(copy, "widen.mlw", "WidenMulNarrowBF16", {"widen_mul_narrow_parts'vc#9"})


def test_mul_through_float64_wrong_narrowing_fails(copy: Path) -> None:
    # The tie WP uses for the float32 loop (C's (float)((double)x * (double)y)
    # is the binary32 product) holds only for IEEE's narrowing to nearest:
    # narrowing toward zero must refute its proof (the clone's goal).
    plant(
        copy,
        "convert32.mlw",
        "Cnv.to_float32 RNE (F64.mul RNE",
        "Cnv.to_float32 RTZ (F64.mul RNE",
        after="theory Mul32ThroughFloat64",
    )
    assert update_manifest(copy, files=["why3/widen.mlw"], statements_only=True) == 0
    refuted(copy, "widen.mlw", "Mul32ThroughFloat64Proof", {"mul_through_float64#2"})


def plant_bitspec(root: Path, old: str, new: str) -> None:
    """A fault planted in the copy's native/bitspec.py (the one definition of
    the float16 conversions), and why3/f16_bits.mlw rendered from it."""
    path = root / "native/bitspec.py"
    text = path.read_text()
    assert text.count(old) == 1, f"fault anchor not found in bitspec: {old!r}"
    path.write_text(text.replace(old, new))
    (root / bits.PATH).write_text(bits.generate(bits.bitspec(root)))


def evaluate(root: Path, name: str, *args: int) -> int:
    """The bitspec function ``name`` of the tree at ``root``, evaluated on ``args``."""
    spec = bits.bitspec(root)
    return int(spec.evaluate(next(f for f in spec.FUNCTIONS if f.name == name), *args))


# Conversions is split (split_vc): goal #2 of each lemma is its IEEE equality,
# #0 and #1 the result's range.  cvc5 1.0.3 refuses each of these within its
# pinned steps ("unknown"); other plants tried (subnormal results truncated or
# all flushed, a subnormal operand's exponent off by one) make it abort in
# CaDiCaL while building a counterexample ("High failure"), which refuted()
# does not count
@pytest.mark.parametrize(
    ("old", "new", "goal"),
    [
        ('op(op(op("u", "-", 939524096), "+", 4095), "+", op(op("u", "/", 8192), "%", 2))',
         'op(op("u", "-", 939524096), "+", 4096)', "narrow_is_ieee#2"),
        ('cmp("u", ">=", 1199570944)', 'cmp("u", ">=", 1199562752)', "narrow_is_ieee#2"),
        ('op(op("h", "*", 8192), "+", 939524096)', 'op(op("h", "*", 8192), "+", 947912704)',
         "widen_is_ieee#2"),
    ],
    ids=["ties rounded up", "overflow one step early", "normal exponent rebiased wrong"],
)  # fmt: skip
def test_float16_conversion_fault_fails_its_ieee_lemma(
    copy: Path, old: str, new: str, goal: str
) -> None:
    plant_bitspec(copy, old, new)
    refuted(copy, str(bits.PATH), "Conversions", {goal})


def test_float16_tiny_results_lost_fails_its_ieee_lemma(copy: Path) -> None:
    # Results in [2^-25, 2^-24) flushed to zero instead of rounded up to the
    # least subnormal.  On the split lemma's value goal cvc5 1.0.3 aborts in
    # CaDiCaL while building the counterexample ("High failure", as for the
    # bfloat16 product below; whole, the lemma was refused "unknown"): the
    # abort counts, and evaluation refutes the planted definition
    old = 'select(cmp("u", ">=", 855638016), sub, 0)'
    plant_bitspec(copy, old, 'select(cmp("u", ">=", 864026624), sub, 0)')
    # 1.5 * 2^-25 rounds to 2^-24, the float16 pattern 0x0001
    assert evaluate(REPO, "sonnx_f16_narrow", 0x33400000) == 1
    assert evaluate(copy, "sonnx_f16_narrow", 0x33400000) == 0
    refuted(copy, str(bits.PATH), "Conversions", {"narrow_is_ieee#2"}, aborts=True)


def test_bfloat16_product_fault_fails_its_ieee_lemma(copy: Path) -> None:
    # Ties rounded up (goal #3: the value of a product that is not a NaN).
    # cvc5 1.0.3 proves the true lemma (about 160 s whole, 65 s for #3) but
    # aborts on every false variant tried -- ties up, results below 2^-126
    # lost, overflow one step early, a NaN other than 0x7FC0 -- in CaDiCaL
    # ("can only get value in satisfied state", after 50-100 s), and Z3 does
    # not prove even the true lemma: the abort is what a fault gives here,
    # so it counts, and the planted definition is also refuted by evaluation
    old = 'cmp("rest", ">", op(32768, "-", op("keep", "%", 2)))'
    plant_bitspec(copy, old, 'cmp("rest", ">=", 32768)')
    # 1.0234375 * 1.5 = 1.53515625, halfway between 0x3FC4 (even) and 0x3FC5
    assert evaluate(copy, "sonnx_bf16_mul_bits", 0x3F83, 0x3FC0) == 0x3FC5
    refuted(copy, str(bits.PATH), "Conversions", {"bf16_mul_is_ieee#3"}, aborts=True)


@pytest.mark.parametrize(
    ("old", "new", "goal", "witness"),
    [
        ('op(op(op("u", "+", 32767), "+", op(hi, "%", 2)), "/", 65536)',
         'op(op(op("u", "+", 32768), "-", op(hi, "%", 2)), "/", 65536)',
         "bf16_narrow_is_ieee#5", (0x3F808000, 0x3F80, 0x3F81)),
        ('select(cmp(op(hi, "%", 128), ">=", 64), hi, op(hi, "+", 64))',
         'select(cmp(op(hi, "%", 64), ">=", 32), hi, op(hi, "+", 32))',
         "bf16_narrow_is_ieee#3", (0x7F810000, 0x7FC1, 0x7FA1)),
    ],
    ids=["ties rounded to odd", "the wrong quiet bit"],
)  # fmt: skip
def test_bfloat16_narrowing_fault_fails_its_ieee_lemma(
    copy: Path, old: str, new: str, goal: str, witness: tuple[int, int, int]
) -> None:
    # the definition the exported narrowing's contract and its client share
    # (sonnx_bf16_narrow): goal #5 is the value of a number, #3 a NaN's quiet
    # bit.  cvc5 1.0.3 aborts in CaDiCaL on the false goals ("High failure",
    # as for the bfloat16 product above): the abort counts, and evaluation
    # refutes the planted definition on a witness
    plant_bitspec(copy, old, new)
    u, right, wrong = witness
    assert evaluate(REPO, "sonnx_bf16_narrow", u) == right
    assert evaluate(copy, "sonnx_bf16_narrow", u) == wrong
    refuted(copy, str(bits.PATH), "Conversions", {goal}, aborts=True)
