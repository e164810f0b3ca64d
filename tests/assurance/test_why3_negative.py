"""Negative controls of the Why3 proofs: planted faults must make the proof
driver fail, naming the goals it could not prove.

These tests run Why3 and the provers; when they are missing the tests fail
(they are never skipped).  Each faulty copy is checked on the affected file
only, with the real manifest: every goal by its pinned prover within its
pinned step limit, as ``make prove`` checks it.

A planted fault that makes known goals false is checked on those goals only
(``refuted``): each must stay unproved, refused by its prover within its
steps, never for want of time (the verdict does not depend on the load).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from sonnx_mul_assurance.why3 import bits, statements
from sonnx_mul_assurance.why3.driver import PROOFS, run_check, update_manifest
from sonnx_mul_assurance.why3.runner import file_statements

# runs Why3 and the provers
pytestmark = [pytest.mark.provers, pytest.mark.external_provers, pytest.mark.needs_prover]

REPO = Path(__file__).resolve().parents[2]
FAST_PORTFOLIO = ("cvc5",)  # the provers run_check requires besides the pinned ones


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    shutil.copytree(REPO / "why3", tmp_path / "why3")
    (tmp_path / "proofs").mkdir()
    shutil.copytree(REPO / "proofs" / "drivers", tmp_path / "proofs" / "drivers")
    for name in ("manifest.json", "why3.conf.in"):
        shutil.copy(REPO / "proofs" / name, tmp_path / "proofs" / name)
    (tmp_path / "src/sonnx_mul/oracle").mkdir(parents=True)
    shutil.copy(
        REPO / "src/sonnx_mul/oracle/integers.py", tmp_path / "src/sonnx_mul/oracle/integers.py"
    )
    (tmp_path / "native").mkdir()
    shutil.copy(REPO / "native/bitspec.py", tmp_path / "native/bitspec.py")
    return tmp_path


def plant(root: Path, file: str, old: str, new: str, after: str = "") -> None:
    """Replace the first ``old`` that follows ``after`` in why3/``file``."""
    path = root / "why3" / file
    text = path.read_text()
    start = text.index(after)
    assert old in text[start:], f"fault anchor not found in {file}: {old!r}"
    path.write_text(text[:start] + text[start:].replace(old, new, 1))


def check(root: Path, file: str, modules: list[str] | None = None) -> tuple[int, dict[str, Any]]:
    rc = run_check(root, [f"why3/{file}"], portfolio=FAST_PORTFOLIO, modules=modules)
    report: dict[str, Any] = json.loads((root / "proofs/out/why3.json").read_text())
    return rc, report


def unproved(report: dict[str, Any]) -> set[tuple[str, str]]:
    return {(g["module"], g["goal"]) for g in report["goals"] if g["status"] != "Valid"}


def refuted(
    root: Path, file: str, module: str, goals: set[str], aborts: bool = False
) -> dict[str, Any]:
    """Check only ``goals`` of ``module`` (false after the planted fault): the
    check fails, every one of them is unproved; returns the report.  A
    timeout never counts, nor a prover's abort unless ``aborts`` says that
    this prover aborts on this goal whenever it is false (see its use)."""
    selected = frozenset((module, g) for g in goals)
    rc = run_check(root, [file if "/" in file else f"why3/{file}"], portfolio=(), goals=selected)
    report: dict[str, Any] = json.loads((root / "proofs/out/why3.json").read_text())
    assert rc != 0
    assert unproved(report) == set(selected), report["errors"]
    statuses = {g["status"] for g in report["goals"]}
    allowed = {"High failure"} if aborts else set()
    assert not {s for s in statuses - allowed if "Timeout" in s or "failure" in s}, statuses
    return report


def test_real_files_pass(copy: Path) -> None:
    rc, report = check(copy, "refine.mlw")
    assert rc == 0, report["errors"]
    assert report["goals"] and not unproved(report)


def test_selected_goals_of_the_real_files_prove(copy: Path) -> None:
    # The positive side of ``refuted``: unplanted, the same goals with the
    # same provers and limits are proved, so their failure is the fault's.
    selected = frozenset({("Float16Mul", "ka_tie_even_down#0"), ("Float16Mul", "f_float#0")})
    rc = run_check(copy, ["why3/floats.mlw"], portfolio=(), goals=selected)
    report = json.loads((copy / "proofs/out/why3.json").read_text())
    assert rc == 0, report["errors"]
    assert {(g["module"], g["goal"]) for g in report["goals"]} == selected
    assert not unproved(report)
    rc = run_check(
        copy, ["why3/floats.mlw"], portfolio=(), goals=selected | {("Float16Mul", "x#0")}
    )
    report = json.loads((copy / "proofs/out/why3.json").read_text())
    assert rc != 0
    assert "selected goal not in the manifest: why3/floats.mlw Float16Mul x#0" in report["errors"]


def test_wrong_element_fails(copy: Path) -> None:
    plant(copy, "refine.mlw", "c[i] <- a.value[i] * b.value[i]", "c[i] <- a.value[i] * b.value[0]")
    report = refuted(copy, "refine.mlw", "Refine", {"mul_loop'vc#0"})
    assert any("goal not proved" in e and "mul_loop'vc" in e for e in report["errors"])


def test_r1_check_removed_fails(copy: Path) -> None:
    plant(
        copy,
        "refine.mlw",
        "if not (eq_shape a.shape b.shape) then raise ShapeError;",
        "if false then raise ShapeError;",  # the check is gone
    )
    refuted(copy, "refine.mlw", "Refine", {"validate'vc#0"})


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


def test_wrap_saturates_fails(copy: Path) -> None:
    plant(
        copy,
        "wrap.mlw",
        "  let function mul_wrap (x y : B.t) : B.t = B.mul x y\n\n"
        "  let constant tag : dtype = UInt8\n",
        "  let function mul_wrap (x y : B.t) : B.t =\n"
        "    if B.to_uint x * B.to_uint y > 255 then B.ones else B.mul x y\n\n"
        "  let constant tag : dtype = UInt8\n",
        after="module WrapUInt8",
    )
    refuted(copy, "wrap.mlw", "WrapUInt8", {"f_wrap#0"})


def test_zero_goal_file_fails(copy: Path) -> None:
    (copy / "why3" / "empty.mlw").write_text("module Empty\n  type t\nend\n")
    manifest = json.loads((copy / "proofs/manifest.json").read_text())
    manifest["files"].append(
        {"path": "why3/empty.mlw", "loadpath": ["why3"], "split_vc": [], "goals": []}
    )
    (copy / "proofs/manifest.json").write_text(json.dumps(manifest))
    rc, report = check(copy, "empty.mlw")
    assert rc != 0
    assert any("zero goals" in e for e in report["errors"])


def test_new_goal_missing_from_manifest_fails(copy: Path) -> None:
    plant(
        copy,
        "utils.mlw",
        "  lemma same_refl:",
        "  lemma planted_extra: forall s. same s s = s\n  lemma same_refl:",
    )
    rc, report = check(copy, "utils.mlw")
    assert rc != 0
    assert any("new goal" in e and "planted_extra" in e for e in report["errors"])


def test_disappeared_goal_fails(copy: Path) -> None:
    plant(copy, "utils.mlw", "  lemma same_refl: forall s. same s s = s\n", "")
    rc, report = check(copy, "utils.mlw")
    assert rc != 0
    assert any("no longer exists" in e and "same_refl" in e for e in report["errors"])


def test_missing_prover_fails(copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(copy))  # neither why3 nor any prover
    rc, report = check(copy, "utils.mlw")
    assert rc != 0
    assert any("prover missing" in e for e in report["errors"])


# api.mlw (R2, R2-DENSE, C1-OUT, F-NOLOSS): each control checks one module.

_OUT_LOOP = (
    "    for i = 0 to length out - 1 do\n"
    "      invariant { forall j. 0 <= j < i -> out.elts[j] = a.value[j] * b.value[j] }\n"
    "      out[i] <- a.value[i] * b.value[i]\n"
)


def test_api_out_written_before_out_check_fails(copy: Path) -> None:
    # F-NOLOSS: the out= shape check moved after the loop, so OutError is
    # raised with out already written.
    check_out = "    if length out <> size a.shape then raise OutError"
    plant(
        copy,
        "api.mlw",
        f"{check_out};\n{_OUT_LOOP}    done\n",
        f"{_OUT_LOOP}    done;\n{check_out}\n",
        after="let mul_into",
    )
    refuted(copy, "api.mlw", "Api", {"mul_into'vc#0"})


def test_api_checked_written_before_overflow_scan_fails(copy: Path) -> None:
    # F-NOLOSS: the overflow scan after the loop, so IntegerOverflow is
    # raised with out already written.
    scan = (
        "    let k = first_overflow a b (length out) in\n"
        "    if k >= 0 then raise IntegerOverflow k;\n"
    )
    loop = f"{_OUT_LOOP}    done;\n"
    plant(copy, "api.mlw", scan + loop, loop + scan, after="let mul_checked_into")
    refuted(copy, "api.mlw", "ApiChecked", {"mul_checked_into'vc#0"})


def test_api_sparse_accepted_fails(copy: Path) -> None:
    # R2: check_dense lets a sparse tensor through (the check is gone; an
    # exception the body never raises may not be listed in Why3).
    plant(
        copy,
        "api.mlw",
        "| Sparse -> raise SparseError",
        "| Sparse -> if false then raise SparseError",
    )
    refuted(copy, "api.mlw", "ApiChecks", {"check_dense'vc#0"})


# Statements, not names: a theorem weakened with its goal names unchanged
# still proves, and must fail the check (the manifest pins what each goal
# states and the hypotheses it is proved from, proofs/drivers included).


def changed(report: dict[str, Any], kind: str) -> set[tuple[str, str]]:
    """(file, module goal) of every ``kind`` error ("statement changed", ...)."""
    return {
        (e.split(": ", 1)[1].split(" ", 1)[0], e.split(": ", 1)[1].split(" ", 1)[1])
        for e in report["errors"]
        if e.startswith(kind + ":") or e.startswith(kind + " (")
    }


def assert_only_pinning_fails(report: dict[str, Any]) -> None:
    # every goal still proves: only the pinned statements catch the fault
    assert report["goals"] and not unproved(report), unproved(report)
    assert not any("goal not proved" in e or "no longer exists" in e for e in report["errors"])


def test_ensures_replaced_by_true_fails(copy: Path) -> None:
    plant(
        copy, "utils.mlw", "ensures { s1 = s2 -> result = s1 /\\ result = s2 }", "ensures { true }"
    )
    rc, report = check(copy, "utils.mlw")
    assert rc != 0
    assert_only_pinning_fails(report)
    assert ("why3/utils.mlw", "Same same'vc#0") in changed(report, "statement changed")
    # same_refl is proved from same's (now empty) specification
    assert ("why3/utils.mlw", "Same same_refl#0") in changed(report, "hypotheses changed")


def test_requires_strengthened_to_false_fails(copy: Path) -> None:
    plant(copy, "tensor.mlw", "requires { valid s }", "requires { false }", after="lemma size_pos")
    rc, report = check(copy, "tensor.mlw")
    assert rc != 0
    assert_only_pinning_fails(report)
    assert ("why3/tensor.mlw", "Shape size_pos'vc#0") in changed(report, "statement changed")


def test_ensures_deleted_fails(copy: Path) -> None:
    # mul_impl states the element-type conditions it checked: gone
    plant(
        copy,
        "refine.mlw",
        "    ensures  { numeric ta /\\ ta = tb /\\ allowed ta opset }\n",
        "",
        after="let mul_impl",
    )
    rc, report = check(copy, "refine.mlw", ["Refine"])
    assert rc != 0
    assert_only_pinning_fails(report)
    assert ("why3/refine.mlw", "Refine mul_impl'vc#0") in changed(report, "statement changed")


def test_invariant_weakened_fails(copy: Path) -> None:
    plant(
        copy,
        "refine.mlw",
        "invariant { 0 <= i <= n }",
        "invariant { 0 <= i <= n + 1 }",
        after="let first_overflow",
    )
    rc, report = check(copy, "refine.mlw", ["RefineChecked"])
    assert rc != 0
    assert_only_pinning_fails(report)
    assert ("why3/refine.mlw", "RefineChecked first_overflow'vc#0") in changed(
        report, "statement changed"
    )


def test_kernel_invariant_weakened_fails(copy: Path) -> None:
    # kernel.py is proved with split_vc: the invariant becomes a hypothesis
    # of the split goals, which the task hash pins.
    kernel = copy / "src/sonnx_mul/oracle/integers.py"
    text = kernel.read_text()
    start = text.index("def first_overflow(")
    old = "#@ invariant 0 <= i <= len(a)"
    assert old in text[start:]
    kernel.write_text(
        text[:start] + text[start:].replace(old, "#@ invariant 0 <= i <= len(a) + 1", 1)
    )
    # The statement comparison of the check, without the 65 proofs (they
    # still go through: the weaker invariant is still inductive).
    files = PROOFS.load_manifest(copy)["files"]
    entry = next(e for e in files if e["path"].endswith("oracle/integers.py"))
    pinned = {(g["module"], g["goal"]): g for g in entry["goals"]}
    now = file_statements(copy, entry, list(pinned))
    errors = statements.compare(entry["path"], pinned, now)
    assert errors
    assert all(e.startswith(("statement changed:", "hypotheses changed (")) for e in errors)


@pytest.mark.parametrize("name", ["narrowfloat.gen", "cvc5.drv"])
def test_driver_changed_fails(copy: Path, name: str) -> None:
    driver = copy / "proofs/drivers" / name
    driver.write_text(driver.read_text() + "\n(* planted *)\n")
    rc, report = check(copy, "utils.mlw")
    assert rc != 0
    assert f"driver/configuration file changed: proofs/drivers/{name}" in report["errors"]


def test_configuration_changed_fails(copy: Path) -> None:
    conf = copy / "proofs/why3.conf.in"
    conf.write_text(conf.read_text().replace("--tlimit-per=%t000", "--tlimit-per=%t0000", 1))
    rc, report = check(copy, "utils.mlw")
    assert rc != 0
    assert "driver/configuration file changed: proofs/why3.conf.in" in report["errors"]


def test_unpinned_statement_fails(copy: Path) -> None:
    manifest = json.loads((copy / "proofs/manifest.json").read_text())
    for entry in manifest["files"]:
        for goal in entry["goals"]:
            goal.pop("statement", None)
    (copy / "proofs/manifest.json").write_text(json.dumps(manifest))
    rc, report = check(copy, "utils.mlw")
    assert rc != 0
    assert any("statement not pinned" in e for e in report["errors"])


def test_update_manifest_prints_the_statement_diff(
    copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plant(
        copy, "utils.mlw", "ensures { s1 = s2 -> result = s1 /\\ result = s2 }", "ensures { true }"
    )
    assert update_manifest(copy, files=["why3/utils.mlw"], statements_only=True) == 0
    out = capsys.readouterr().out
    assert "~ statement changed why3/utils.mlw Same same'vc#0:" in out
    assert "-goal sameqtvc : forall s1:list int, s2:list int." in out
    assert "+goal sameqtvc : forall s1:list int. let resultqtunusedqtunused = s1 in true" in out
    assert "~ hypotheses changed why3/utils.mlw Same same_refl#0" in out
    # once re-pinned (the reviewed change accepted), the check passes again
    rc, report = check(copy, "utils.mlw")
    assert rc == 0, report["errors"]


def test_kernel_wrong_prod_fails(copy: Path) -> None:
    # The kernel's postconditions are stated on the mathematical product
    # x * y: a wrong `prod` is rejected by the provers alone, even with its
    # statements re-pinned (as an update-manifest run would).
    kernel = copy / "src/sonnx_mul/oracle/integers.py"
    text = kernel.read_text()
    assert text.count("    return x * y\n") == 1
    kernel.write_text(text.replace("    return x * y\n", "    return x * y + 1\n"))
    path = "src/sonnx_mul/oracle/integers.py"
    assert update_manifest(copy, files=[path], statements_only=True) == 0
    rc = run_check(copy, [path], portfolio=())
    report = json.loads((copy / "proofs/out/why3.json").read_text())
    assert rc != 0
    # main'vc#28: mul_exact's postcondition result[i] == a[i] * b[i]
    assert ("Integers", "main'vc#28") in unproved(report)
    assert all(
        e.startswith("goal not proved: src/sonnx_mul/oracle/integers.py") for e in report["errors"]
    )


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


# The arithmetic facts of the production overflow scan (why3/overflow.mlw).

OVERFLOW_CODE = (
    "corners = (lo_a * lo_b, lo_a * hi_b, hi_a * lo_b, hi_a * hi_b)",
    "return etype.lo <= min(corners) and max(corners) <= etype.hi",
    "mag_a = np.abs(a).astype(np.uint64)",
    "negative = np.signbit(a) != np.signbit(b)",
    "limit = np.where(negative, np.uint64(2**63), np.uint64(2**63 - 1))",
    "overflow = mag_b > limit // np.maximum(mag_a, np.uint64(1))",
    "overflow = b > np.uint64(2**64 - 1) // np.maximum(ua, np.uint64(1))",
)


def test_overflow_facts_quote_the_code_they_justify() -> None:
    # The lemmas are stated on these expressions: a change on either side
    # (the code or the quoted statement) must be looked at again.
    code = (REPO / "src/sonnx_mul/numpy_loops.py").read_text()
    proof = (REPO / "why3/overflow.mlw").read_text()
    for line in OVERFLOW_CODE:
        assert line in code, line
        assert line in proof, line


def test_overflow_symmetric_int64_limit_fails(copy: Path) -> None:
    # 2**63 - 1 as the limit of negative products too: -2**63 would be
    # reported as an overflow; the magnitude lemmas no longer hold.
    plant(
        copy,
        "overflow.mlw",
        "then 0x8000000000000000 else 0x7FFFFFFFFFFFFFFF",
        "then 0x7FFFFFFFFFFFFFFF else 0x7FFFFFFFFFFFFFFF",
    )
    assert update_manifest(copy, files=["why3/overflow.mlw"], statements_only=True) == 0
    refuted(copy, "overflow.mlw", "DivisionTest", {"fits_iff_magnitude#0"})


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
    old = '("lsb", op(op(Call("sonnx_shr7", (Var("q"), Var("s"))), "/", 2), "%", 2))'
    plant_bitspec(copy, old, '("lsb", Lit(1))')
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
