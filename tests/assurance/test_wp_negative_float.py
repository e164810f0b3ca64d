"""Negative controls of the Frama-C WP check of the float unit, of the
bfloat16 product's unit and of the float tie (F-FLOAT): as
``test_wp_negative.py`` (its ``planted`` copies native/ with one fault and
runs the check on the affected functions), in a file of its own so that the
two test workers share the WP runs.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_wp_negative import ROOT, assert_unmodified_copy_passes, planted

from sonnx_mul_assurance import pinned as core
from sonnx_mul_assurance.c import wp
from support import narrowed, wp_failed, wp_unit

pytestmark = [pytest.mark.provers, pytest.mark.external_provers, pytest.mark.needs_prover]

FLOAT_C = "native/src/sonnx_mul_float.c"
BF16_C = "native/src/sonnx_mul_bf16.c"
TIE_C = "proofs/wp/float_tie.c"
SELECTIONS = (
    ("f32_bits_to_bf16", ""),
    ("f16_canonical", ""),
    ("f32_bits_to_f16", "normal_range"),
    ("f32_bits_to_f16", "subnormal_range"),
    ("f32_bits_to_f16", "chosen"),
    ("f16_mag_to_f32_bits", "widen"),
    ("mul1_f16", "finish"),
    ("mul1_bf16", "operands"),
    ("mul1_bf16", "scaled"),
    ("mul1_bf16", "rounded"),
    ("mul1_bf16", "nan_rule"),
    ("sonnx_mul_bf16", "done"),
    ("sonnx_mul_f32", "done"),
    ("sonnx_mul_f32_to_bf16_bits", "rne"),
    ("f32_to_f16", "rne"),
)
"""What the faults below are run on, each a function and one of its named
properties ("": all its goals); the positive control runs every one.  Each
function is in the unit the manifest pins it in (``unit_of``)."""


def unit_of(function: str) -> str:
    """The unit of ``function``: the bfloat16 product's, or the float unit."""
    manifest = wp.PROOFS.load_manifest(ROOT)
    (source,) = (
        u["source"]
        for u in manifest["units"]
        if u["source"] in (FLOAT_C, BF16_C) and function in u["functions"]
    )
    return source


def run_fault(
    tmp_path: Path, old: str, new: str, function: str, prop: str
) -> tuple[wp.Run, list[str]]:
    """:func:`planted` on one of the ``SELECTIONS``."""
    assert (function, prop) in SELECTIONS, (function, prop)
    source = unit_of(function)
    return planted(tmp_path, source, old, new, [function], properties=(prop,) if prop else ())


def property_of(goal: str, function: str) -> str:
    """The property name of a named ensures or assert goal of ``function``."""
    kind, _, name = goal.removeprefix(f"typed_{function}_").partition("_")
    assert kind in ("ensures", "assert") and name, goal
    return name


@pytest.mark.parametrize(("function", "prop"), SELECTIONS)
def test_positive_control_unmodified_float_copy_passes(
    tmp_path: Path, function: str, prop: str
) -> None:
    assert_unmodified_copy_passes(tmp_path, unit_of(function), [function], (prop,) if prop else ())


def test_F_FLOAT_wrong_mask_in_the_bfloat16_narrowing_fails(tmp_path: Path) -> None:
    # the quiet-NaN bit read with the wrong mask (bit 5 instead of bit 6):
    # caught by the assertion that states which bit it is (WP then uses that
    # assertion as a hypothesis, so the `nan` ensures may still go through)
    run, errors = run_fault(tmp_path, "(hi / 64U) % 2U", "(hi / 32U) % 2U", "f32_bits_to_bf16", "")
    assert errors
    assert wp_failed(run, "typed_f32_bits_to_bf16_assert_bit6") or wp_failed(
        run, "typed_f32_bits_to_bf16_ensures_nan"
    ), run.goals


def test_F_FLOAT_wrong_canonical_nan_fails(tmp_path: Path) -> None:
    # the NaN rule's float16 constant off by one payload bit: the helper's
    # contract refuses it
    run, errors = run_fault(
        tmp_path, "        r = 0x7E00U;\n", "        r = 0x7E01U;\n", "f16_canonical", ""
    )
    assert errors
    assert wp_failed(run, "typed_f16_canonical_ensures_nan"), run.goals


@pytest.mark.parametrize(
    ("fault", "old", "new", "function", "goal"),
    [
        # ties rounded up instead of to even (normal results)
        (
            "wrong rounding",
            "((mag - 939524096U) + 4095U + lsb) / 8192U",
            "((mag - 939524096U) + 4096U) / 8192U",
            "f32_bits_to_f16",
            "typed_f32_bits_to_f16_assert_normal_range",
        ),
        # subnormal results truncated instead of rounded
        (
            "wrong subnormal rounding",
            "const uint32_t sub = (t / 2U) + (t % 2U);",
            "const uint32_t sub = t / 2U;",
            "f32_bits_to_f16",
            "typed_f32_bits_to_f16_assert_subnormal_range",
        ),
        # a subnormal result flushed to zero
        (
            "lost subnormal result",
            "        h = sub;\n",
            "        h = 0U;\n",
            "f32_bits_to_f16",
            "typed_f32_bits_to_f16_assert_chosen",
        ),
        # a subnormal operand widened as zero (denormals-are-zero)
        (
            "lost subnormal operand",
            "        bits = (m4 * 8192U) + ((112U - s4) * 8388608U);  /* normalised subnormal */",
            "        bits = 0U;",
            "f16_mag_to_f32_bits",
            "typed_f16_mag_to_f32_bits_ensures_widen",
        ),
        # the narrowed NaN written as it comes (its payload), not the canonical NaN
        (
            "wrong NaN rule",
            "const uint16_t r = f16_canonical(f32_bits_to_f16(pu, sign));",
            "const uint16_t r = f32_bits_to_f16(pu, sign);",
            "mul1_f16",
            "typed_mul1_f16_assert_finish",
        ),
    ],
)
def test_F_FLOAT_float16_value_faults_fail(
    tmp_path: Path, fault: str, old: str, new: str, function: str, goal: str
) -> None:
    # each fault changes bits that sonnx_f16_mul_bits fixes: the narrowing's
    # step that states them in sonnx_f16_narrow's terms, the widening's
    # contract or the one-element product's refuses it (only that named
    # property is run: mul1_f16 whole costs minutes of cvc5)
    run, errors = run_fault(tmp_path, old, new, function, property_of(goal, function))
    assert errors, fault
    assert wp_failed(run, goal), (fault, run.goals)


@pytest.mark.parametrize(
    ("fault", "old", "new", "goal"),
    [
        # ties rounded up instead of to even
        (
            "wrong rounding",
            "if (rest > (uint16_t)(32768U - (keep % 2U))) {",
            "if (rest >= 32768U) {",
            "typed_mul1_bf16_assert_rounded",
        ),
        # the larger magnitude normalised and the smaller read as normal
        # (a subnormal operand's significand taken as 128 + its fraction)
        (
            "subnormal operand read as normal",
            "    uint16_t lo = ha;\n    if (hb < ha) {",
            "    uint16_t lo = ha;\n    if (ha < hb) {",
            "typed_mul1_bf16_assert_operands",
        ),
        # the multiplier of a normal result 2^9 instead of 2^8: the kept
        # bits would be one more than the significand has
        (
            "multiplier one bit too wide",
            "const uint16_t w = shr7(32768U, s);",
            "const uint16_t w = (uint16_t)(shr7(32768U, s) * 2U);",
            "typed_mul1_bf16_assert_scaled",
        ),
        # every result below 2^-126 flushed to zero (what FTZ would do)
        (
            "lost subnormal",
            "        s = (uint16_t)(142U - t);\n",
            "        s = 9U;\n",
            "typed_mul1_bf16_assert_scaled",
        ),
        # a NaN product written with the operands' sign: not the canonical NaN
        (
            "wrong NaN rule",
            "        res = 32704U;           /* the canonical NaN */",
            "        res = (uint16_t)(32704U + sign);",
            "typed_mul1_bf16_ensures_nan_rule",
        ),
    ],
)
def test_F_FLOAT_bfloat16_value_faults_fail(
    tmp_path: Path, fault: str, old: str, new: str, goal: str
) -> None:
    # the one-element product's contract (sonnx_bf16_mul_bits, the function
    # bf16_mul_is_ieee proves IEEE's) refuses each fault: at the step that
    # states the faulty one in the terms of sonnx_bf16_mul_bits, or at the
    # NaN rule
    run, errors = run_fault(tmp_path, old, new, "mul1_bf16", property_of(goal, "mul1_bf16"))
    assert errors, fault
    assert wp_failed(run, goal), (fault, run.goals)


def test_F_FLOAT_a_bfloat16_loop_on_the_wrong_operand_fails(tmp_path: Path) -> None:
    # the loop's element-wise contract: a * a is not a * b
    run, errors = run_fault(
        tmp_path,
        "c[i] = mul1_bf16(a[i], b[i]);",
        "c[i] = mul1_bf16(a[i], a[i]);",
        "sonnx_mul_bf16",
        "done",
    )
    assert errors
    assert wp_failed(run, "typed_sonnx_mul_bf16_loop_invariant_done_preserved"), run.goals


F32_PRODUCT = "(float)SONNX_WIDE((double)a[i] * (double)b[i])"
F32_LOOP = f"c[i] = f32_of_pattern(f32_canonical(f32_pattern({F32_PRODUCT})));"


@pytest.mark.parametrize(
    ("fault", "loop"),
    [
        # the NaN rule skipped: the hardware's NaN bits are written
        ("wrong NaN rule", f"c[i] = f32_of_pattern(f32_pattern({F32_PRODUCT}));"),
        # + 0.0F turns a -0 product into +0: a wrong rounding of the sign
        (
            "wrong zero sign",
            f"c[i] = f32_of_pattern(f32_canonical(f32_pattern(({F32_PRODUCT}) + 0.0F)));",
        ),
        # subnormal products flushed to zero (what FTZ would do)
        (
            "lost subnormal",
            "c[i] = f32_of_pattern(f32_canonical(f32_pattern("
            f"(({F32_PRODUCT}) < 1.17549435e-38F && ({F32_PRODUCT}) > -1.17549435e-38F)"
            f" ? 0.0F : ({F32_PRODUCT}))));",
        ),
        # the binary64 product nudged up by one ulp before the narrowing:
        # ties and near-ties rounded the wrong way
        (
            "wrong rounding",
            "c[i] = f32_of_pattern(f32_canonical(f32_pattern("
            "(float)SONNX_WIDE(((double)a[i] * (double)b[i]) * 0x1.0000000000001p0))));",
        ),
        # one operand widened twice: the product of another pair
        (
            "wrong operand",
            "c[i] = f32_of_pattern(f32_canonical(f32_pattern("
            "(float)SONNX_WIDE((double)a[i] * (double)a[i]))));",
        ),
    ],
)
def test_F_FLOAT_float32_loop_fault_fails_its_element_values(
    tmp_path: Path, fault: str, loop: str
) -> None:
    # the element-wise contract (the IEEE product of WP's model, rounding to
    # nearest even, and the NaN rule on the bits) refuses each planted loop
    # (only the invariant's goals: the loop's others are frame goals, minutes of cvc5)
    run, errors = run_fault(tmp_path, F32_LOOP, loop, "sonnx_mul_f32", "done")
    assert errors, fault
    assert wp_failed(run, "typed_sonnx_mul_f32_loop_invariant_done_preserved"), (fault, run.goals)


def test_F_FLOAT_tie_to_another_product_fails(tmp_path: Path) -> None:
    # the tie lemma is not a tautology: C's product is not the specification's
    # product of x by itself
    tie = tmp_path / "float_tie.c"
    text = (ROOT / TIE_C).read_text()
    right = "sonnx_same32(sonnx_fmul32(x, y), sonnx_spec_mul32(x, y))"
    assert right in text
    tie.write_text(text.replace(right, "sonnx_same32(sonnx_fmul32(x, y), sonnx_spec_mul32(x, x))"))
    unit, pinned = wp_unit(ROOT, TIE_C)
    # the two lemmas only (the clients' goals are test_spec_clients')
    lemmas = ("tie32", "tie64")
    run = wp.prove(ROOT, unit, source=tie, pins=pinned["goals"], properties=lemmas)
    assert set(run.goals) == {"typed_lemma_tie32", "typed_lemma_tie64"}
    assert wp.compare(run, narrowed(pinned, lemmas))
    assert wp_failed(run, "typed_lemma_tie32"), run.goals
    assert run.goals["typed_lemma_tie64"].status == core.VALID


@pytest.mark.parametrize(
    ("old", "new", "function", "goal"),
    [
        # the bfloat16 narrowing's round to nearest weakened: `==` to `<=`
        (
            "ensures narrow: \\result == sonnx_bf16_narrow(u);",
            "ensures narrow: \\result <= sonnx_bf16_narrow(u);",
            "sonnx_mul_f32_to_bf16_bits",
            "typed_sonnx_mul_f32_to_bf16_bits_ensures_rne",
        ),
        # the float16 narrowing's, on the bits
        (
            "ensures narrow: \\result == sonnx_f16_narrow(u % 2147483648) + sign;",
            "ensures narrow: \\result <= sonnx_f16_narrow(u % 2147483648) + sign;",
            "f32_to_f16",
            "typed_f32_to_f16_ensures_rne",
        ),
    ],
    ids=["bfloat16", "float16"],
)
def test_F_FLOAT_a_weakened_narrowing_contract_fails_its_exported_caller(
    tmp_path: Path, old: str, new: str, function: str, goal: str
) -> None:
    # the exported narrowings' contracts (the header's, which the contract
    # clients of proofs/wp/spec_clients.c hold to the specification) are
    # proved from the bit-level narrowings' contracts: weakening one of those
    # fails the caller's `rne`
    run, errors = run_fault(tmp_path, old, new, function, "rne")
    assert errors
    assert wp_failed(run, goal), run.goals
