"""The Coq check's evidence (coq.json) in the report: its goals under their
requirements, and the gate's refusals of a record that does not prove this tree.

Each test starts from the green fixture of ``test_trace_report`` (its theory's
module ``M`` marked for R1 and R1-X, the goal ``m`` of that module with its
committed Coq proof, a coq.json that records it proved, bound to the tree's
inputs), plants one fault by hand and asserts the gate's complete list
of problems; the green fixture is the negative control of each.  The last
tests take the real tree: a coq.json of a complete run of this checkout is
taken, and one of the committed proofs edited after it is refused.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from test_trace_report import (
    COQ_PROOF,
    COQ_VERSIONS,
    bind,
    coq_evidence,
    coq_goal,
    make_tree,
    report_of,
)

from sonnx_mul_assurance.evidence import binding, schema
from sonnx_mul_assurance.report import protocol, write_report
from sonnx_mul_assurance.why3 import coq, whyml

ROOT = Path(__file__).resolve().parents[2]
EVIDENCE = f"proofs/out/{protocol.BY_KEY['coq'].file}"
PROOF = f"{coq.PROOF_DIR.as_posix()}/{COQ_PROOF}"
FAILED = ["R1: 1 proof check failed; child R1-X does not pass", "R1-X: 1 proof check failed"]
"""The gate's problems when the fixture's one Coq goal fails (both ids carry it)."""


def problems(root: Path) -> list[str]:
    return list(report_of(root)["gate"]["problems"])


def write(root: Path, data: schema.CoqEvidence, bound: bool = True) -> None:
    """``data`` as the tree's coq.json, its inputs the tree's when ``bound``."""
    schema.dump(data, root / EVIDENCE)
    if bound:
        bind(root)


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    root = make_tree(tmp_path)
    assert problems(root) == []  # the negative control: green before the fault
    return root


# ---------------------------------------------------------------- green
def test_coq_goals_join_the_rows_of_their_theorys_markers(tree: Path) -> None:
    report = report_of(tree)
    for rid in ("R1", "R1-X"):
        items = [
            e for e in report["requirements"][rid]["evidence"]["proof"] if e["source"] == "coq"
        ]
        assert items == [
            {
                "source": "coq", "location": "why3/a.mlw:4", "status": "proved (coqc)",
                "ok": True, "name": "M.m", "prover": "8.16.1; 4.1.0", "proof": PROOF,
                "evidence": EVIDENCE, "about": "whyml-model",
            }
        ], rid  # fmt: skip
    entry = report["evidence_files"]["coq"]
    assert (entry["status"], entry["required"], entry["schema"]) == (
        "present", True, "CoqEvidence"
    )  # fmt: skip
    assert "coq" in report["required_evidence"]
    # the versions the record names go to the tool table, beside Why3's
    assert report["tools"]["recorded_by_coq"] == {"versions": COQ_VERSIONS}
    assert report["tools"]["recorded_by_why3"] == {"versions": {"why3": "1.5.1"}}
    # the proof file is hashed with the claim
    assert PROOF in report["artifacts"] and EVIDENCE in report["artifacts"]


def test_the_html_links_the_goal_and_its_proof_file(tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_report(report_of(tree), out, tree)
    html = (out / "traceability.html").read_text()
    assert f'href="sources/{PROOF}.html"' in html
    assert 'href="sources/why3/a.mlw.html#L4"' in html
    md = (out / "traceability.md").read_text()
    assert f"M.m · prover 8.16.1; 4.1.0 · proved (coqc) · proof `{PROOF}`" in md


# ---------------------------------------------------------------- the refusals
def test_gate_fails_when_coq_json_is_missing(tree: Path) -> None:
    (tree / EVIDENCE).unlink()
    assert problems(tree) == [f"evidence file {EVIDENCE} is missing"]
    assert "Coq check did not run" in report_of(tree)["evidence_files"]["coq"]["meaning"]


def test_gate_fails_on_a_goal_not_proved(tree: Path) -> None:
    write(tree, coq_evidence(coq_goal(COQ_PROOF, "coqc refused the proof: Error")))
    assert problems(tree) == FAILED
    (item,) = [
        e for e in report_of(tree)["requirements"]["R1"]["evidence"]["proof"]
        if e["source"] == "coq"
    ]  # fmt: skip
    assert (item["ok"], item["status"]) == (False, "not proved")
    assert item["errors"] == ["coqc refused the proof: Error"]


def test_a_goal_not_proved_fails_even_when_its_flag_says_proved(tree: Path) -> None:
    goal = dataclasses.replace(coq_goal(COQ_PROOF, "an error"), proved=True)
    write(tree, dataclasses.replace(coq_evidence(goal), proved=1))
    assert problems(tree) == [*FAILED, f"{EVIDENCE}: says 1/1 goals proved, records 0/1"]


def test_gate_fails_on_a_record_of_the_theory_before_an_edit(tree: Path) -> None:
    with (tree / "why3/a.mlw").open("a", encoding="utf-8") as f:
        f.write("(* edited after the Coq check *)\n")
    found = problems(tree)
    assert (
        f"evidence file {EVIDENCE} is stale: why3/a.mlw changed since its run"
        " (run its producer again)"
    ) in found
    assert report_of(tree)["evidence_files"]["coq"]["status"] == "refused"


def test_gate_fails_on_a_changed_input_hash(tree: Path) -> None:
    data = schema.load(schema.CoqEvidence, tree / EVIDENCE)
    data.inputs[PROOF] = "0" * 64  # the proof as it was before an edit
    write(tree, data, bound=False)
    assert problems(tree) == [
        f"evidence file {EVIDENCE} is stale: {PROOF} changed since its run (run its producer again)"
    ]


def test_gate_fails_on_a_record_without_input_hashes(tree: Path) -> None:
    write(tree, coq_evidence(coq_goal()), bound=False)
    assert problems(tree) == [
        f"evidence file {EVIDENCE} records no input hashes: it is bound to no tree"
    ]


def test_gate_fails_on_a_partial_run(tree: Path) -> None:
    # a second committed proof, of goal l: the record proves m only
    shutil.copyfile(tree / PROOF, tree / coq.PROOF_DIR / "a_M_l.v")
    bind(tree)
    assert problems(tree) == [
        f"{EVIDENCE} against {coq.PROOF_DIR.as_posix()}: a partial run:"
        " 1 of 2 committed proofs absent (a_M_l.v)"
    ]
    # the whole run is taken
    write(tree, coq_evidence(coq_goal(), coq_goal("a_M_l.v")))
    assert problems(tree) == []


def test_gate_fails_on_a_goal_recorded_twice_or_without_committed_proof(tree: Path) -> None:
    write(tree, coq_evidence(coq_goal(), coq_goal()))
    assert problems(tree) == [
        f"{EVIDENCE} against {coq.PROOF_DIR.as_posix()}: goals recorded more than once: {COQ_PROOF}"
    ]
    write(tree, coq_evidence(coq_goal(), coq_goal("a_M_l.v")))
    assert problems(tree) == [
        f"{EVIDENCE} against {coq.PROOF_DIR.as_posix()}: goals not in the committed proofs: a_M_l.v"
    ]


def test_the_library_is_not_a_goal(tree: Path) -> None:
    (tree / coq.LIBRARY).write_text("(* lemmas *)\n")
    bind(tree)
    assert problems(tree) == []


def test_gate_fails_on_zero_goals(tree: Path) -> None:
    write(tree, coq_evidence())
    assert problems(tree) == [
        f"unmapped failed coq evidence:  at {EVIDENCE} (no goals recorded)",
        f"{EVIDENCE} against {coq.PROOF_DIR.as_posix()}: a partial run:"
        f" 1 of 1 committed proofs absent ({COQ_PROOF})",
    ]


def test_gate_fails_on_zero_goals_with_no_committed_proof(tree: Path) -> None:
    (tree / PROOF).unlink()
    write(tree, coq_evidence())
    assert problems(tree) == [
        f"unmapped failed coq evidence:  at {EVIDENCE} (no goals recorded)",
    ]


def test_gate_fails_on_counts_that_are_not_the_records(tree: Path) -> None:
    data = schema.load(schema.CoqEvidence, tree / EVIDENCE)
    write(tree, dataclasses.replace(data, proved=2, total=2), bound=False)
    assert problems(tree) == [f"{EVIDENCE}: says 2/2 goals proved, records 1/1"]


def test_an_unmapped_failed_goal_fails_the_gate(tree: Path) -> None:
    goal = dataclasses.replace(coq_goal(COQ_PROOF, "refused"), module="Gone")
    write(tree, coq_evidence(goal))
    assert problems(tree) == [
        "unmapped failed coq evidence: Gone.m at why3/a.mlw (not proved)",
    ]


@pytest.mark.parametrize(
    ("edit", "expect"),
    [
        (lambda d: {**d, "goals": {}}, "goals: expected a list"),
        (lambda d: {k: v for k, v in d.items() if k != "inputs"}, "missing key inputs"),
        (lambda d: _goal(d, proved="yes"), "proved: expected bool"),
        (lambda d: _goal(d, file=None), "missing key file"),
        (lambda d: _goal(d, status="Valid"), "unknown key(s) status"),
    ],
    ids=["goals-object", "no-inputs", "proved-text", "goal-no-file", "goal-extra-key"],
)
def test_gate_fails_when_coq_json_is_off_its_schema(tree: Path, edit: Any, expect: str) -> None:
    data = json.loads((tree / EVIDENCE).read_text())
    (tree / EVIDENCE).write_text(json.dumps(edit(data)))
    (found,) = problems(tree)
    assert found.startswith(f"cannot read {EVIDENCE}: ") and expect in found, found
    assert report_of(tree)["evidence_files"]["coq"]["status"] == "unreadable"


def _goal(data: dict[str, Any], **change: Any) -> dict[str, Any]:
    goal = data["goals"][0]
    for key, value in change.items():
        if value is None:
            goal.pop(key)
        else:
            goal[key] = value
    return data


# ---------------------------------------------------------------- the real tree
def coq_run(root: Path = ROOT) -> schema.CoqEvidence:
    """The coq.json of a complete, passing Coq check of ``root`` (no coqc runs):
    every committed proof's goal proved, the inputs hashed by the check's own list."""
    theory = coq.THEORIES[0]
    modules = whyml.module_names((root / theory).read_text())
    goals = [
        schema.CoqGoal(theory.as_posix(), coq.goal_module(theory, modules, name), name, name,
                       True, [])
        for name in sorted(coq.expected_proofs(root))
    ]  # fmt: skip
    return schema.CoqEvidence(
        dict(COQ_VERSIONS), binding.digest(root, coq.inputs(root)), goals, len(goals),
        len(goals), 1.0,
    )  # fmt: skip


def refused(data: schema.CoqEvidence, root: Path, out: Path) -> list[str]:
    path = out / protocol.BY_KEY["coq"].file
    schema.dump(data, path)
    return protocol.BY_KEY["coq"].read(path, protocol.Context(root, out, [], frozenset())).refused


def test_the_committed_proofs_are_the_goals_of_a_complete_run() -> None:
    expected = coq.expected_proofs(ROOT)
    assert coq.LIBRARY.name not in expected
    assert expected == {
        p.name for p in (ROOT / coq.PROOF_DIR).glob("*.v") if p != ROOT / coq.LIBRARY
    }
    assert len(expected) >= 6 and all(name.startswith("f64_round_") for name in expected)


def test_a_complete_run_of_this_tree_is_taken_and_an_edited_proof_refused(
    tmp_path: Path,
) -> None:
    tree = tmp_path / "tree"
    for rel in coq.inputs(ROOT):
        if not rel.is_absolute():
            (tree / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ROOT / rel, tree / rel)
    data = coq_run(tree)
    assert refused(data, tree, tmp_path / "out") == []
    edited = coq.PROOF_DIR / "f64_round_RoundSig_round_sig_correct.v"
    with (tree / edited).open("a", encoding="utf-8") as f:
        f.write("(* edited after the check *)\n")
    assert refused(data, tree, tmp_path / "out") == [
        f"evidence file {tmp_path / 'out' / 'coq.json'} is stale: {edited.as_posix()} changed"
        " since its run (run its producer again)"
    ]
