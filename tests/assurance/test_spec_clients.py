"""The tie of the C contracts to the specification (proofs/wp/spec_clients.c).

The client unit asserts, after each call of the public kernel, what the
specification says of the call; WP proves it from the callee's contract.
Negative controls: a copy of the header with contracts weakened (a conjunct
dropped, an ``ensures`` weakened, a NaN rule loosened, a modulus changed)
must leave the matching client asserts unproved, with the pinned prover and
step limits, so that no ``update-manifest`` could pin them (it refuses a
unit with a goal unproved).  The exported narrowings' clients assert the
bitspec definition that why3/f16_bits.mlw proves IEEE 754's, under their
own names: their round-to-nearest ``ensures`` with ``==`` weakened to
``<=`` fails its client whatever the manifest pins.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sonnx_mul_assurance import pinned as core
from sonnx_mul_assurance.c import spec_clients, wp
from support import narrowed, wp_failed, wp_unit

pytestmark = [pytest.mark.provers, pytest.mark.external_provers, pytest.mark.needs_prover]

ROOT = Path(__file__).resolve().parents[2]
HEADER = "sonnx_mul_kernel.h"

# (header text, weakened text, the client goal it must break)
PLANTED: tuple[tuple[str, str, str], ...] = (
    (  # the checked int8 result no longer said to be the product
        "ensures checked_exact: \\forall integer k; 0 <= k < n ==> "
        "c[k] == \\old(a[k]) * \\old(b[k]);\n"
        "    behavior overflow:\n"
        "      assumes \\exists integer k; 0 <= k < n && !sonnx_fits_i8(",
        "behavior overflow:\n      assumes \\exists integer k; 0 <= k < n && !sonnx_fits_i8(",
        "typed_spec_checked_i8_assert_spec_exact",
    ),
    (  # uint16 wrap: only "in range", the congruence dropped
        "sonnx_wraps_u16(c[k], \\old(a[k]) * \\old(b[k]))",
        "sonnx_fits_u16(c[k])",
        "typed_spec_wrap_u16_assert_spec_wrap",
    ),
    (  # int32 wrap modulo 2^31 instead of 2^32
        "sonnx_fits_i32(w) && (x - w) % 4294967296 == 0",
        "sonnx_fits_i32(w) && (x - w) % 2147483648 == 0",
        "typed_spec_wrap_i32_assert_spec_wrap",
    ),
    (  # uint32 checked: "nothing written on overflow" dropped
        "ensures checked_unwritten: \\forall integer k; 0 <= k < n ==> c[k] == \\old(c[k]);\n"
        "    complete behaviors;\n"
        "    disjoint behaviors;\n"
        "*/\n"
        "size_t sonnx_mul_checked_u32(",
        "complete behaviors;\n    disjoint behaviors;\n*/\nsize_t sonnx_mul_checked_u32(",
        "typed_spec_checked_u32_assert_spec_error_unwritten",
    ),
    (  # uint8 checked into a fresh result: n no longer said to mean the products
        "    ensures exact: \\result == n ==>\n"
        "        \\forall integer k; 0 <= k < n ==> c[k] == \\old(a[k]) * \\old(b[k]);\n"
        "*/\nsize_t sonnx_mul_checked_fresh_u8(",
        "*/\nsize_t sonnx_mul_checked_fresh_u8(",
        "typed_spec_checked_fresh_u8_assert_spec_exact",
    ),
    (  # uint8 first overflow: the result no longer said to be an overflow
        "ensures first: \\result < n ==> !sonnx_fits_u8(a[\\result] * b[\\result]);",
        "",
        "typed_spec_first_overflow_u8_assert_spec_first",
    ),
    (  # float16: any NaN allowed, not only the canonical one
        "h % 32768 <= 31744 || h == 32256",
        "h % 32768 <= 31744 || h % 32768 > 31744",
        "typed_spec_nan_rule_f16_assert_spec_nan_rule",
    ),
    (  # ... and the value's NaN no longer made canonical (the product
        # ensures would give the rule back)
        "      (r % 32768 > 31744) ? 32256 : r;",
        "      r;",
        "typed_spec_nan_rule_f16_assert_spec_nan_rule",
    ),
    (  # int64 wrap: a product above 2^63 - 1 read back modulo 2^63
        "(r > 9223372036854775807) ? r - 18446744073709551616 : r",
        "(r > 9223372036854775807) ? r - 9223372036854775808 : r",
        "typed_spec_wrap_i64_assert_spec_wrap",
    ),
)
FUNCTIONS = sorted({goal.removeprefix("typed_").split("_assert_")[0] for *_, goal in PLANTED})
# the float32/float64 clients, in the tie unit (with the tie lemmas and the driver)
PLANTED_FLOAT: tuple[tuple[str, str, str], ...] = (
    (  # a float32 NaN product's bits no longer stated (WP's model has one
        # NaN: only dropping the case is a weakening it can see)
        "? sonnx_bits32(r) == 2143289344",
        "? \\true",
        "typed_spec_f32_assert_spec_product",
    ),
    (  # the float64 product's value no longer stated
        ": sonnx_same64(r, sonnx_fmul64(x, y));",
        ": \\true;",
        "typed_spec_f64_assert_spec_product",
    ),
)
# the exported narrowings' clients: (functions, properties, planted weakenings)
PLANTED_NARROWING: tuple[
    tuple[list[str], tuple[str, ...], tuple[tuple[str, str, str], ...]], ...
] = (
    (
        ["spec_narrow_bf16"],
        (),
        (
            (  # bfloat16's round to nearest: `==` weakened to `<=`
                "ensures rne: !\\is_NaN(x) ==> \\result == sonnx_bf16_narrow(sonnx_bits32(x));",
                "ensures rne: !\\is_NaN(x) ==> \\result <= sonnx_bf16_narrow(sonnx_bits32(x));",
                "typed_spec_narrow_bf16_assert_spec_rne",
            ),
            (  # a bfloat16 NaN's quiet bit no longer stated
                "\\result % 32768 > 32640 && (\\result / 64) % 2 == 1;",
                "\\result % 32768 > 32640;",
                "typed_spec_narrow_bf16_assert_spec_nan",
            ),
        ),
    ),
    (
        # float16's client, its NaN goal only (its value goal costs a minute
        # of Z3; make prove's WP check proves it)
        ["spec_narrow_f16"],
        ("spec_nan",),
        (
            (  # a float16 NaN's quiet bit no longer stated
                "\\result % 32768 > 31744 && (\\result / 512) % 2 == 1;\n*/\n#else",
                "\\result % 32768 > 31744;\n*/\n#else",
                "typed_spec_narrow_f16_assert_spec_nan",
            ),
        ),
    ),
)
FLOAT_FUNCTIONS: list[str] = []  # the whole unit: its lemmas are hypotheses of the clients
FLOAT_ASSERTS = ("spec_product",)
"""The float clients' goals the weakenings break, and the only ones their runs
prove (the calls' preconditions and the ``beyond`` asserts are make prove's)."""

if shutil.which("frama-c") is None:
    pytest.skip("frama-c not installed (sh proofs/install-provers.sh)", allow_module_level=True)


def _run(
    tmp_path: Path,
    planted: tuple[tuple[str, str, str], ...],
    unit: Path = spec_clients.PATH,
    functions: list[str] = FUNCTIONS,
    client_text: str | None = None,
    properties: tuple[str, ...] = (),
) -> tuple[wp.Run, list[str]]:
    """WP on ``functions`` of the client ``unit`` (and only on the goals of
    ``properties``, when given), against the header with every ``planted``
    weakening, and optionally another client text."""
    include = tmp_path / "include"
    shutil.copytree(ROOT / "native/include", include)
    header = include / HEADER
    text = header.read_text()
    for old, new, _ in planted:
        assert text.count(old) == 1, f"planted edit not applicable: {old!r}"
        text = text.replace(old, new)
    header.write_text(text)
    source = ROOT / unit
    if client_text is not None:
        source = tmp_path / unit.name
        source.write_text(client_text)
    manifest_unit, pinned = wp_unit(ROOT, unit)
    run = wp.prove(
        ROOT,
        manifest_unit,
        functions=functions,
        source=source,
        include=include,
        pins=pinned["goals"],
        properties=properties,
    )
    return run, wp.compare(run, narrowed(pinned, properties), functions)


def test_the_client_units_are_generated_from_the_registry() -> None:
    assert (ROOT / spec_clients.PATH).read_text() == spec_clients.generate()
    assert (ROOT / spec_clients.FLOAT_TIE).read_text() == spec_clients.generate_float_tie()


def test_positive_control_the_real_header_proves_every_client_assert(tmp_path: Path) -> None:
    run, errors = _run(tmp_path, ())
    assert errors == [], errors
    asserts = [g for g in run.goals if "_assert_spec_" in g]
    assert len(asserts) >= len(PLANTED) and all(run.goals[g].status == core.VALID for g in asserts)


def test_weakened_contracts_leave_their_client_asserts_unproved(tmp_path: Path) -> None:
    run, errors = _run(tmp_path, PLANTED)
    refused = {goal for *_, goal in PLANTED if wp_failed(run, goal)}
    assert refused == {goal for *_, goal in PLANTED}, (sorted(refused), errors)
    # the rest of those clients still goes through: each fault breaks its own statement
    others = [g for g in run.goals if "_assert_spec_" in g and g not in refused]
    assert others and all(run.goals[g].status == core.VALID for g in others)


def test_without_the_conversion_axiom_the_64_bit_wrap_is_not_the_specification(
    tmp_path: Path,
) -> None:
    # the one assumption the 64-bit tie makes is load-bearing, and named
    text = (ROOT / spec_clients.PATH).read_text()
    start = text.index("/*@ axiomatic SonnxAcslConversion")
    end = text.index("*/", start) + 2
    run, _ = _run(
        tmp_path,
        (),
        functions=["spec_wrap_i64"],
        client_text=text[:start] + text[end:],
        properties=("spec_wrap",),
    )
    assert wp_failed(run, "typed_spec_wrap_i64_assert_spec_wrap"), run.goals


def test_positive_control_the_float_clients_are_proved(tmp_path: Path) -> None:
    run, errors = _run(tmp_path, (), spec_clients.FLOAT_TIE, FLOAT_FUNCTIONS, None, FLOAT_ASSERTS)
    assert errors == [], errors
    assert set(run.goals) == {goal for *_, goal in PLANTED_FLOAT}


def test_weakened_float_contracts_leave_their_client_asserts_unproved(tmp_path: Path) -> None:
    run, errors = _run(
        tmp_path, PLANTED_FLOAT, spec_clients.FLOAT_TIE, FLOAT_FUNCTIONS, None, FLOAT_ASSERTS
    )
    refused = {goal for *_, goal in PLANTED_FLOAT if wp_failed(run, goal)}
    assert refused == {goal for *_, goal in PLANTED_FLOAT}, (sorted(refused), errors)


@pytest.mark.parametrize(
    ("functions", "properties", "planted"), PLANTED_NARROWING, ids=["bfloat16", "float16"]
)
def test_positive_control_the_narrowing_clients_are_proved(
    tmp_path: Path,
    functions: list[str],
    properties: tuple[str, ...],
    planted: tuple[tuple[str, str, str], ...],
) -> None:
    run, errors = _run(tmp_path, (), functions=functions, properties=properties)
    assert errors == [], errors
    assert {goal for *_, goal in planted} <= set(run.goals)


@pytest.mark.parametrize(
    ("functions", "properties", "planted"), PLANTED_NARROWING, ids=["bfloat16", "float16"]
)
def test_weakened_narrowing_contracts_leave_their_client_asserts_unproved(
    tmp_path: Path,
    functions: list[str],
    properties: tuple[str, ...],
    planted: tuple[tuple[str, str, str], ...],
) -> None:
    run, errors = _run(tmp_path, planted, functions=functions, properties=properties)
    refused = {goal for *_, goal in planted if wp_failed(run, goal)}
    assert refused == {goal for *_, goal in planted}, (sorted(refused), errors)
