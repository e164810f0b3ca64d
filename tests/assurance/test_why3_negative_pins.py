"""Negative controls of the Why3 check's pins: a goal added, removed or left
unpinned, a prover missing, a driver or the configuration changed, and a statement
weakened with its goal names unchanged (an ``ensures`` replaced or deleted, a
``requires`` strengthened, a loop invariant weakened) must make the proof driver
fail although every goal still proves; the real files pass, and a reviewed change
once re-pinned passes again.

These tests run Why3 and the provers; when they are missing the tests fail
(they are never skipped). The negative controls of the Why3 proofs are the
``test_why3_negative_*.py`` files; what they share is in
tests/assurance/why3_faults.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from why3_faults import check, copy_proof_tree, plant, unproved

from sonnx_mul_assurance.why3 import statements
from sonnx_mul_assurance.why3.driver import PROOFS, run_check, update_manifest
from sonnx_mul_assurance.why3.runner import file_statements

# runs Why3 and the provers
pytestmark = [pytest.mark.provers, pytest.mark.external_provers, pytest.mark.needs_prover]


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """A copy of the proof tree to plant a fault in (why3_faults.copy_proof_tree)."""
    return copy_proof_tree(tmp_path)


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


def test_a_file_the_manifest_does_not_list_fails_the_check(copy: Path) -> None:
    # the mutation runner proves a mutated theory by naming its file: a file the
    # manifest does not list must fail, not pass with no goal tried
    unlisted = "why3/f64_round.mlw"
    assert unlisted not in {e["path"] for e in PROOFS.load_manifest(copy)["files"]}
    assert run_check(copy, [unlisted], portfolio=()) == 1
    report = json.loads((copy / "proofs/out/why3.json").read_text())
    assert any(unlisted in e and "not in" in e for e in report["errors"]), report["errors"]
