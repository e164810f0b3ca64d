"""Negative controls of the Frama-C WP check of the native kernel (F-WRAP, F-CHECKED, F-FLOAT).

The integer unit and the two hand-written loops here; the float unit and
the float tie in ``test_wp_negative_float.py`` (two files, so that the two
test workers share them: ``--dist loadfile``).

Each test copies ``native/`` with one planted fault, runs the project's WP
driver on the affected function only (``-wp-fct``) and asserts that the check
fails, on the goal the fault must break.  The positive control runs the same
selections unmodified and must pass against the pinned manifest.

Every run here is the check itself: each goal once, by the prover it is
pinned to, within its pinned step limit (a deterministic count, whatever
the machine's load).  A planted fault makes its goal false: the prover
refuses it within those steps (never a timeout: ``wp_refused``).  The positive
control runs every selection of the faults (``SELECTIONS``) in the same way,
so a failure below is the fault's, not the limit's nor the prover's.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from sonnx_mul_assurance import pinned as core
from sonnx_mul_assurance.c import wp, wp_statements
from support import narrowed, wp_failed, wp_refused, wp_unit

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "native"))
import int64_binary64  # native/int64_binary64.py: the limit the faults replace

pytestmark = [pytest.mark.provers, pytest.mark.external_provers, pytest.mark.needs_prover]

ROOT = Path(__file__).resolve().parents[2]
INT_C = "native/src/sonnx_mul_int.c"
FLOAT_C = "native/src/sonnx_mul_float.c"
STREAM8_C = "native/hw/sonnx_mul_stream8.c"
F16C_C = "native/hw/sonnx_mul_f16c.c"
SELECTIONS = (
    (INT_C, "wrap1_i32", ""),
    (INT_C, "sonnx_mul_wrap_u8", "mem_access"),
    (INT_C, "overflows_i8", ""),
    (INT_C, "sonnx_mul_first_overflow_u8", ""),
    (INT_C, "block_overflows_i8", "clear"),
    (INT_C, "block_overflows_i16", "window"),
    (INT_C, "block_overflows_i32", "window"),
    (INT_C, "block_overflows_u32", ""),
    (INT_C, "excess_u64", "excess"),
    (INT_C, "excess_i64", "cross"),
    (INT_C, "excess_i64", "excess"),
    (INT_C, "far_f64", "far"),
    (INT_C, "far_f64", "near"),
    (INT_C, "block_fused_u16", ""),
    (INT_C, "block_fused_u8", "exact"),
    (INT_C, "block_fused_i8", "wrap_elem"),
    (INT_C, "sonnx_mul_checked_fresh_u8", "first"),
    (STREAM8_C, "loop", "streamed"),
    (STREAM8_C, "loop", "done"),
    (F16C_C, "loop", ""),
    (F16C_C, "loop", "nan_rule"),
)
"""(source, function, property) of each run below: a function's goals of that
property ("": all its goals).  The positive control runs every one, on the
unmodified copy: what a fault's run refuses, that run proves."""

if shutil.which("frama-c") is None:
    pytest.skip("frama-c not installed (sh proofs/install-provers.sh)", allow_module_level=True)


def planted(
    tmp_path: Path,
    source: str,
    old: str,
    new: str,
    functions: list[str],
    edit: str = "",
    properties: tuple[str, ...] = (),
) -> tuple[wp.Run, list[str]]:
    """WP on a copy of native/ where ``old`` (exactly once, in ``edit`` or the
    source) is replaced by ``new``, on ``functions`` (and only the goals of
    ``properties``, when given): the run and the driver's errors against the
    manifest's goals of that selection."""
    copy = tmp_path / "native"
    shutil.copytree(ROOT / "native", copy)
    target = copy / Path(edit or source).relative_to("native")
    text = target.read_text()
    assert text.count(old) >= 1, f"planted edit not applicable: {old!r}"
    target.write_text(text.replace(old, new, 1) if old != new else text)
    unit, pinned = wp_unit(ROOT, source)
    run = wp.prove(
        ROOT,
        unit,
        functions=functions,
        source=copy / Path(source).relative_to("native"),
        include=copy / "include",
        pins=pinned["goals"],
        properties=properties,
    )
    return run, wp.compare(run, narrowed(pinned, properties), functions)


def assert_unmodified_copy_passes(
    tmp_path: Path, source: str, functions: list[str], properties: tuple[str, ...] = ()
) -> None:
    """The positive control: the functions (and properties) the faults touch,
    unmodified, pass as pinned (every goal proved, each by its prover within
    its limit)."""
    run, errors = planted(tmp_path, source, "", "", functions, properties=properties)
    assert errors == [], errors
    assert {g.function for g in run.goals.values()} == set(functions)
    assert run.goals and all(g.status == core.VALID for g in run.goals.values())


def fault(
    tmp_path: Path, source: str, old: str, new: str, function: str, prop: str = ""
) -> tuple[wp.Run, list[str]]:
    """:func:`planted` on one of the ``SELECTIONS``."""
    assert (source, function, prop) in SELECTIONS, (source, function, prop)
    return planted(tmp_path, source, old, new, [function], properties=(prop,) if prop else ())


@pytest.mark.parametrize(("source", "function", "prop"), SELECTIONS)
def test_positive_control_unmodified_copy_passes(
    tmp_path: Path, source: str, function: str, prop: str
) -> None:
    assert_unmodified_copy_passes(tmp_path, source, [function], (prop,) if prop else ())


def test_F_WRAP_signed_product_in_the_signed_type_fails(tmp_path: Path) -> None:
    # int32 wrap computing x*y in int (signed overflow) instead of int64_t
    # (the first occurrence of the anchor is the wrap's one-element helper)
    run, errors = fault(
        tmp_path,
        INT_C,
        "const int64_t p = (int64_t)x * (int64_t)y;",
        "const int64_t p = (int64_t)(x * y);",
        "wrap1_i32",
    )
    assert errors
    assert wp_failed(run, "typed_wrap1_i32_assert_rte_signed_overflow"), run.goals


def test_F_WRAP_off_by_one_loop_bound_fails(tmp_path: Path) -> None:
    text = (ROOT / INT_C).read_text()
    start = text.index("void sonnx_mul_wrap_u8(")
    body = text[start:]
    old = body[: body.index("for (i = 0U; i < n; i++)") + len("for (i = 0U; i < n; i++)")]
    run, errors = fault(
        tmp_path,
        INT_C,
        old,
        old.replace("i < n; i++", "i <= n; i++"),
        "sonnx_mul_wrap_u8",
        # the array accesses only: the loop's invariants, variant and assigns
        # break too, but each waits out the limit (20 s of CPU for nothing)
        "mem_access",
    )
    assert errors
    assert set(run.goals) == {
        "typed_sonnx_mul_wrap_u8_assert_rte_mem_access",
        "typed_sonnx_mul_wrap_u8_assert_rte_mem_access_2",
        "typed_sonnx_mul_wrap_u8_assert_rte_mem_access_3",
    }
    broken = [g for g, v in run.goals.items() if wp_refused(v)]
    assert "typed_sonnx_mul_wrap_u8_assert_rte_mem_access" in broken, broken


def test_F_CHECKED_missed_overflow_case_fails(tmp_path: Path) -> None:
    # int8 check forgetting products below -128
    run, errors = fault(
        tmp_path,
        INT_C,
        "return ((p < ((-127) - 1)) || (p > 127)) ? 1 : 0;",
        "return (p > 127) ? 1 : 0;",
        "overflows_i8",
    )
    assert errors
    assert wp_failed(run, "typed_overflows_i8_ensures_decides"), run.goals


def test_F_CHECKED_dropped_assigns_fails(tmp_path: Path) -> None:
    # the scan's helper without `assigns \nothing`: the caller's loop
    # invariant no longer follows (the helper may have written anything)
    run, errors = fault(
        tmp_path,
        INT_C,
        "/*@ assigns \\nothing;\n    ensures flag: \\result == 0 || \\result == 1;\n"
        "    ensures decides: \\result == 0 <==> sonnx_fits_u8(x * y);",
        "/*@ ensures flag: \\result == 0 || \\result == 1;\n"
        "    ensures decides: \\result == 0 <==> sonnx_fits_u8(x * y);",
        "sonnx_mul_first_overflow_u8",
    )
    assert errors
    broken = [g for g, v in run.goals.items() if wp_refused(v)]
    assert any(g.startswith("typed_sonnx_mul_first_overflow_u8_") for g in broken), run.goals


def test_F_CHECKED_block_pass_with_a_wrong_bound_fails(tmp_path: Path) -> None:
    # the int8 block pass letting a product of 128 through: its `clear`
    # ensures (every product of a block it passes fits) is refused
    run, errors = fault(
        tmp_path,
        INT_C,
        "return ((lo < ((-127) - 1)) || (hi > 127)) ? 1 : 0;",
        "return ((lo < ((-127) - 1)) || (hi > 128)) ? 1 : 0;",
        "block_overflows_i8",
        "clear",
    )
    assert errors
    assert wp_failed(run, "typed_block_overflows_i8_ensures_clear"), run.goals


def test_F_CHECKED_int32_pass_with_the_bias_off_by_one_fails(tmp_path: Path) -> None:
    # the int32 block pass biasing the products by 2^31 - 1: the window
    # [0, 2^32) then holds the products -2^31 + 1 .. 2^31, so INT32_MIN
    # counts as an overflow and 2^31 does not
    run, errors = fault(
        tmp_path,
        INT_C,
        "const int64_t sum = p + 2147483648LL;",
        "const int64_t sum = p + 2147483647LL;",
        "block_overflows_i32",
        "window",
    )
    assert errors
    assert wp_failed(run, "typed_block_overflows_i32_assert_window"), run.goals


def test_F_CHECKED_int16_scan_blind_to_the_low_half_fails(tmp_path: Path) -> None:
    # the 16-bit-lane int16 scan testing the high half alone: a product in
    # [2^15, 2^16) (high half 0) or in [-2^16, -2^15 - 1] (high half all
    # ones, the low half's sign bit clear) would pass as fitting
    run, errors = fault(
        tmp_path,
        INT_C,
        "(uint16_t)(((uint32_t)hi + ((uint32_t)lo / 32768U)) % 65536U);",
        "(uint16_t)(((uint32_t)hi + ((uint32_t)hi / 32768U)) % 65536U);",
        "block_overflows_i16",
        "window",
    )
    assert errors
    assert wp_failed(run, "typed_block_overflows_i16_assert_window"), run.goals


def test_F_CHECKED_uint32_scan_or_of_halved_products_fails(tmp_path: Path) -> None:
    # the uint32 block pass ORing the products halved: a product in
    # [2^32, 2^33) leaves the OR's high half 0 and passes as fitting
    run, errors = fault(
        tmp_path,
        INT_C,
        "        acc |= p;\n",
        "        acc |= p / 2U;\n",
        "block_overflows_u32",
        "",
    )
    assert errors
    assert wp_failed(run, "typed_block_overflows_u32_loop_invariant_2_preserved"), run.goals


def test_F_CHECKED_uint64_test_without_the_both_halves_case_fails(tmp_path: Path) -> None:
    # the division-free uint64 test forgetting that two factors of 2^32 or
    # more always overflow (only the carry of the small-factor products left)
    run, errors = fault(
        tmp_path,
        INT_C,
        "    return both | high32_u64(t);\n",
        "    return high32_u64(t);\n",
        "excess_u64",
        "excess",
    )
    assert errors
    assert wp_failed(run, "typed_excess_u64_ensures_excess"), run.goals


def test_F_CHECKED_64_bit_test_without_a_cross_product_fails(tmp_path: Path) -> None:
    # the symmetric 64-bit test (here int64's, the first in the file) keeping
    # only xl*yh: wrong whenever the high half of the first factor is the
    # non-zero one, so the step that states the split product is refused
    run, errors = fault(
        tmp_path,
        INT_C,
        "const uint64_t cross = (xh * yl) + (xl * yh);",
        "const uint64_t cross = xl * yh;",
        "excess_i64",
        "cross",
    )
    assert errors
    assert wp_failed(run, "typed_excess_i64_assert_cross"), run.goals


def test_F_CHECKED_int64_test_with_a_symmetric_bound_fails(tmp_path: Path) -> None:
    # the int64 test bounding |x*y| by 2^63 - 1 whatever the signs: it
    # reports a product of -2^63 (-2^62 * 2) as an overflow, so `excess` (an
    # equivalence) is refused
    run, errors = fault(
        tmp_path,
        INT_C,
        "const uint64_t lim = 9223372036854775807ULL + neg;",
        "const uint64_t lim = 9223372036854775807ULL;",
        "excess_i64",
        "excess",
    )
    assert errors
    assert wp_failed(run, "typed_excess_i64_ensures_excess"), run.goals


@pytest.mark.parametrize(
    ("limit", "broken"),
    [
        # 2^65: an overflow by one multiple of 2^64 would pass as fitting
        ("36893488147419103232.0", "far"),
        # 1: the rounding gap of a product that fits (operands above 2^53)
        # would be taken for an overflow
        ("1.0", "near"),
    ],
)
def test_F_CHECKED_int64_binary64_test_with_a_wrong_limit_fails(
    tmp_path: Path, limit: str, broken: str
) -> None:
    run, errors = fault(
        tmp_path,
        INT_C,
        f"return (size >= {int64_binary64.GAP_LIMIT}.0) ? 1U : 0U;",
        f"return (size >= {limit}) ? 1U : 0U;",
        "far_f64",
        broken,
    )
    assert errors
    assert wp_failed(run, f"typed_far_f64_ensures_{broken}"), run.goals


def test_F_CHECKED_int64_binary64_block_with_a_weaker_contract_fails() -> None:
    # the avx512 build calls block_overflows_f64_i64 where WP proved a call to
    # block_overflows_i64: a weaker contract of the stand-in is refused
    include = ROOT / "native" / "include"
    contracts = wp_statements.printed_functions(ROOT / INT_C, include)[1]
    assert contracts["block_overflows_f64_i64"] == contracts["block_overflows_i64"]
    clear = contracts["block_overflows_f64_i64"]
    weakened = clear.replace("<= k < \\old(to) ==>", "<= k < \\old(to) - 1 ==>")
    assert weakened != clear
    errors = wp_statements.stand_in_errors({**contracts, "block_overflows_f64_i64": weakened})
    assert any("block_overflows_f64_i64" in e for e in errors), errors


def fused_planted(suffix: str, old: str, new: str) -> tuple[str, str]:
    """The generated text of block_fused_<suffix> (the fused checked pass of
    a fresh result) and that text with ``old`` (exactly once in it) replaced
    by ``new``: a fault planted in the fused pass alone (the block scan of
    the same type has the same lines)."""
    text = (ROOT / INT_C).read_text()
    start = text.index(f"static inline int block_fused_{suffix}(")
    body = text[start : text.index("\n}\n", start) + 3]
    assert body.count(old) == 1, old
    return body, body.replace(old, new)


def test_F_CHECKED_fused_pass_with_a_wrong_flag_fails(tmp_path: Path) -> None:
    # the fused pass keeping the least high half instead of the greatest: a
    # block with an overflowing product can end with acc == 0, and the
    # invariant "acc == 0: every product so far fits" is refused
    old, new = fused_planted("u16", "acc = (hi > acc) ? hi : acc;", "acc = (hi > acc) ? acc : hi;")
    run, errors = fault(tmp_path, INT_C, old, new, "block_fused_u16")
    assert errors
    assert wp_failed(run, "typed_block_fused_u16_loop_invariant_2_preserved"), run.goals


def test_F_CHECKED_fused_pass_with_a_wrong_store_fails(tmp_path: Path) -> None:
    # the fused pass storing the product modulo 255: a product that fits is
    # not what is stored, and the invariant `exact` is refused
    old, new = fused_planted("u8", "c[j] = (uint8_t)(p % 256U);", "c[j] = (uint8_t)(p % 255U);")
    run, errors = fault(tmp_path, INT_C, old, new, "block_fused_u8", "exact")
    assert errors
    assert wp_failed(run, "typed_block_fused_u8_loop_invariant_exact_preserved"), run.goals


def test_F_CHECKED_fused_pass_with_a_wrong_signed_wrap_fails(tmp_path: Path) -> None:
    # int8's store with its wrap one off (the residue less 127, not 128): the
    # stored value is not the two's complement wrap of the product (nor in
    # range for every residue), `wrap_elem` refused (`exact`, proved from it,
    # stands while it is assumed)
    old, new = fused_planted(
        "i8",
        "const int16_t w = (int16_t)((int16_t)q - 128);",
        "const int16_t w = (int16_t)((int16_t)q - 127);",
    )
    run, errors = fault(tmp_path, INT_C, old, new, "block_fused_i8", "wrap_elem")
    assert errors
    assert wp_failed(run, "typed_block_fused_i8_assert_wrap_elem"), run.goals


def test_F_CHECKED_fused_entry_with_the_index_off_by_one_fails(tmp_path: Path) -> None:
    # the checked call into a fresh result returning the index after the
    # first overflowing one: `first` is refused
    text = (ROOT / INT_C).read_text()
    start = text.index("size_t sonnx_mul_checked_fresh_u8(")
    old = text[start : text.index("\n}\n", start) + 3]
    new = old.replace("    return i;\n}", "    return (i < n) ? i + 1U : i;\n}")
    assert new != old
    run, errors = fault(tmp_path, INT_C, old, new, "sonnx_mul_checked_fresh_u8", "first")
    assert errors
    assert wp_failed(run, "typed_sonnx_mul_checked_fresh_u8_ensures_first"), run.goals


def test_F_CHECKED_fused_int64_block_with_a_weaker_contract_fails() -> None:
    # the avx512 build calls block_fused_f64_i64 where WP proved a call to
    # block_fused_i64: a weaker contract of the stand-in is refused
    include = ROOT / "native" / "include"
    contracts = wp_statements.printed_functions(ROOT / INT_C, include)[1]
    assert contracts["block_fused_f64_i64"] == contracts["block_fused_i64"]
    clear = contracts["block_fused_f64_i64"]
    weakened = clear.replace("<= k < \\old(to) ==>", "<= k < \\old(to) - 1 ==>")
    assert weakened != clear
    errors = wp_statements.stand_in_errors({**contracts, "block_fused_f64_i64": weakened})
    assert any("block_fused_f64_i64" in e for e in errors), errors


def test_F_WRAP_streaming_loop_copying_a_short_block_fails(tmp_path: Path) -> None:
    # the streaming int8/uint8 loop copying one vector less of each block
    # (what the exhaustive harness's planted fault 1 does at run time)
    run, errors = fault(
        tmp_path,
        STREAM8_C,
        "stream_block(c + i, buf, (fault == 1) ? (BLOCK - WIDTH) : BLOCK);",
        "stream_block(c + i, buf, BLOCK - WIDTH);",
        "loop",
        "streamed",
    )
    assert errors
    assert wp_failed(run, "typed_loop_assert_streamed"), run.goals


def test_F_WRAP_streaming_loop_without_its_head_fails(tmp_path: Path) -> None:
    # the elements before c's first aligned byte left unwritten
    run, errors = fault(
        tmp_path,
        STREAM8_C,
        "    sonnx_mul_wrap_u8(a, b, c, head);\n",
        "",
        "loop",
        "done",
    )
    assert errors
    assert wp_failed(run, "typed_loop_loop_invariant_done_established"), run.goals


def test_F_FLOAT_float16_hardware_loop_reading_past_the_tail_fails(tmp_path: Path) -> None:
    # the F16C loop's zero-padded tail filled from a and b without the bound:
    # it reads up to WIDTH - 1 elements past the operands
    run, errors = fault(
        tmp_path,
        F16C_C,
        "            if (j < rest) {\n",
        "            if (j < WIDTH) {\n",
        "loop",
    )
    assert errors
    failed = sorted(g for g in run.goals if wp_failed(run, g))
    reads = ["typed_loop_assert_rte_mem_access", "typed_loop_assert_rte_mem_access_2"]
    assert failed == reads, failed


def test_F_FLOAT_float16_hardware_loop_copying_a_short_tail_fails(tmp_path: Path) -> None:
    # the last element of the tail left unwritten (the exhaustive harness's
    # planted fault 3 at run time): its NaN rule is not established
    run, errors = fault(
        tmp_path,
        F16C_C,
        "const size_t count = (fault == 3) ? (rest - 1U) : rest;",
        "const size_t count = rest - 1U;",
        "loop",
        "nan_rule",
    )
    assert errors
    assert wp_failed(run, "typed_loop_ensures_nan_rule"), run.goals


def test_F_FLOAT_hardware_loop_with_a_weaker_contract_than_the_proved_loop_fails(
    tmp_path: Path,
) -> None:
    # WP would prove the F16C loop against a weaker contract too, and a re-pin
    # would accept it: the stand-in check compares it with sonnx_mul_f16's
    include = ROOT / "native" / "include"
    contracts: dict[str, str] = {}
    for source in (INT_C, FLOAT_C, STREAM8_C, F16C_C):
        contracts.update(wp_statements.printed_functions(ROOT / source, include)[1])
    assert wp_statements.stand_in_errors(contracts) == []  # the positive control

    copy = tmp_path / "native"
    shutil.copytree(ROOT / "native", copy)
    hw = copy / "hw" / "sonnx_mul_f16c.c"
    product = (
        "    ensures product: \\forall integer k; 0 <= k < n ==>"
        " c[k] == sonnx_f16_mul_bits(\\old(a[k]), \\old(b[k]));\n"
    )
    entry = product + "*/\n#if !defined(__AVX512F__)"
    text = hw.read_text()
    assert text.count(entry) == 1
    hw.write_text(text.replace(entry, "*/\n#if !defined(__AVX512F__)"))
    weakened = {**contracts, **wp_statements.printed_functions(hw, copy / "include")[1]}
    errors = wp_statements.stand_in_errors(weakened)
    assert len(errors) == 1 and "sonnx_mul_f16c_f16" in errors[0], errors
