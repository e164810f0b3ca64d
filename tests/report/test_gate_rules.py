"""Every rule of the report's gate, each with the one fault it exists for (issue 19).

Each test starts from the green fixture of ``test_trace_report`` (every id
passes, the gate passes), plants exactly one fault, and asserts the gate's
complete list of problems: the fault is caught, by the rule meant for it,
and nothing else moves. The green fixture itself is the negative control.

Rules (``report.py``): an id passes iff it has passing ``spec``, ``code``,
``test`` and ``proof`` evidence of its own, none of its evidence failed, and
every child passes; the gate also fails on a marker-lint problem, on failed
evidence mapped to no id, on a missing, unreadable or empty required evidence
file, and on recorded producer errors.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_trace_report import AT, FIXTURE_REGISTRY, junit, make_tree, report_of

from sonnx_mul.requirements import Requirement
from sonnx_mul_assurance.report.evidence import PASS_STATUSES, status_ok


def problems(root: Path, registry: dict[str, Requirement] | None = None) -> list[str]:
    report = report_of(root, registry)
    assert report["gate"]["passed"] is (not report["gate"]["problems"])
    assert report["verdict"] == ("pass" if report["gate"]["passed"] else report["verdict"])
    return list(report["gate"]["problems"])


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, (path, old)
    path.write_text(text.replace(old, new), encoding="utf-8")


def evidence(root: Path, name: str) -> Path:
    return root / "proofs" / "out" / name


def set_json(root: Path, name: str, data: Any) -> None:
    evidence(root, name).write_text(json.dumps(data), encoding="utf-8")


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    root = make_tree(tmp_path)
    assert problems(root) == []  # the negative control: green before the fault
    return root


# ---------------------------------------------------------------- each kind of evidence is needed
def only_in_whyml(root: Path, ids: str) -> None:
    """The WhyML range markers name ``ids`` only (they are spec evidence and map the goal)."""
    for scope in ("range_start", "range_end"):
        edit(
            root / "why3/a.mlw",
            f"relation(R1, R1-X, scope={scope})",
            f"relation({ids}, scope={scope})",
        )


def test_rule_spec_needed_top_level_id(tree: Path) -> None:
    only_in_whyml(tree, "R1-X")  # R1 keeps its CrossHair proof
    assert problems(tree) == []
    edit(tree / "docs/spec/sonnx_mul_profile.md", "`[R1]`", "")
    assert problems(tree) == ["R1: no spec evidence"]


def test_rule_spec_needed_derived_id(tree: Path) -> None:
    only_in_whyml(tree, "R1")  # R1-X keeps its CrossHair proof
    assert problems(tree) == []
    edit(tree / "src/sonnx_mul/requirements.py", '"R1-X", "t", "s", "R1"', '"R1-Y", "t", "s", "R1"')
    assert problems(tree) == ["R1: child R1-X does not pass", "R1-X: no spec evidence"]


def test_rule_code_needed(tree: Path) -> None:
    # The code marker goes; CrossHair keeps its ids by naming them itself.
    set_json(
        tree, "crosshair.json",
        [{"function": "sonnx_mul.a.f", "requirements": ["R1", "R1-X"], "status": "passed"}],
    )  # fmt: skip
    assert problems(tree) == []
    edit(
        tree / "src/sonnx_mul/a.py",
        "relation(R1, R1-X, scope=function)",
        "relation(R1-X, scope=function)",
    )
    assert problems(tree) == ["R1: no code evidence"]


def test_rule_test_needed(tree: Path) -> None:
    edit(evidence(tree, "pytest.xml"), 'name="test_R1_same"', 'name="test_unrelated"')
    assert problems(tree) == ["R1: no test evidence"]


def test_rule_proof_needed(tree: Path) -> None:
    edit(
        tree / "why3/a.mlw",
        "relation(R1, R1-X, scope=range_start)",
        "relation(R1-X, scope=range_start)",
    )
    edit(
        tree / "why3/a.mlw",
        "relation(R1, R1-X, scope=range_end)",
        "relation(R1-X, scope=range_end)",
    )
    set_json(
        tree, "crosshair.json",
        [{"function": "sonnx_mul.a.f", "requirements": ["R1-X"], "status": "passed"}],
    )  # fmt: skip
    assert problems(tree) == ["R1: no proof evidence"]


# ---------------------------------------------------------------- no failed evidence
def test_rule_a_failed_test_fails_its_id_even_beside_a_passing_one(tree: Path) -> None:
    edit(
        evidence(tree, "pytest.xml"),
        "</testsuite>",
        '<testcase classname="tests.test_a" name="test_R1_X_derived[int32]" time="0">'
        '<failure message="boom">t</failure></testcase></testsuite>',
    )
    assert problems(tree) == ["R1: child R1-X does not pass", "R1-X: 1 test failed"]


def test_rule_a_failed_proof_fails_its_id_even_beside_a_passing_one(tree: Path) -> None:
    data = json.loads(evidence(tree, "why3.json").read_text())
    data["goals"].append({**data["goals"][0], "goal": "l2", "status": "Timeout"})
    set_json(tree, "why3.json", data)
    assert problems(tree) == [
        "R1: 1 proof check failed; child R1-X does not pass",
        "R1-X: 1 proof check failed",
    ]


def test_rule_a_crosshair_counterexample_fails_the_ids(tree: Path) -> None:
    set_json(
        tree, "crosshair.json",
        [{"function": "sonnx_mul.a.f", "file": "src/sonnx_mul/a.py", "status": "counterexample"}],
    )  # fmt: skip
    assert problems(tree) == [
        "R1: 1 proof check failed; child R1-X does not pass",
        "R1-X: 1 proof check failed",
    ]


@pytest.mark.parametrize("status", ["unknown", "maybe", "", "PASSED?", "failed"])
def test_rule_only_pass_words_pass(tree: Path, status: str) -> None:
    set_json(
        tree, "crosshair.json",
        [{"function": "sonnx_mul.a.f", "file": "src/sonnx_mul/a.py", "status": status}],
    )  # fmt: skip
    assert status_ok(status or "missing status") is False
    assert problems(tree)[-1] == "R1-X: 1 proof check failed"


def test_rule_pass_words_are_a_closed_list() -> None:
    assert {w for w in PASS_STATUSES if status_ok(w.upper()) is not True} == set()
    assert status_ok("skipped") is None and status_ok("xfailed") is None
    assert status_ok("error") is False and status_ok("failed") is False


# ---------------------------------------------------------------- no flow between ids
def test_rule_a_child_failing_fails_the_parent(tree: Path) -> None:
    edit(evidence(tree, "pytest.xml"), 'name="test_by_marker"', 'name="test_by_marker_gone"')
    edit(tree / "tests/test_a.py", "def test_R1_X_derived", "def test_R1_X_gone")
    edit(evidence(tree, "pytest.xml"), 'name="test_R1_X_derived[int8]"', 'name="test_x[int8]"')
    assert problems(tree) == ["R1: child R1-X does not pass", "R1-X: no test evidence"]


def test_rule_a_childs_evidence_is_not_the_parents(tree: Path) -> None:
    """R1's only test removed: R1-X's passing tests do not stand in for it."""
    edit(evidence(tree, "pytest.xml"), 'name="test_R1_same"', 'name="test_R1_X_derived[again]"')
    assert problems(tree) == ["R1: no test evidence"]


def test_rule_a_parents_evidence_is_not_the_childs(tree: Path) -> None:
    registry = dict(FIXTURE_REGISTRY)
    registry["R1-Z"] = Requirement("R1-Z", "Derived", "Another derived statement.", "R1", "s")
    edit(
        tree / "src/sonnx_mul/requirements.py", 'Requirement(\n    "R1-X"',
        'Requirement(\n    "R1-Z", "t", "s", "R1", "x")\nRequirement(\n    "R1-X"',
    )  # fmt: skip
    assert problems(tree, registry) == [
        "R1: child R1-Z does not pass",
        "R1-Z: no code evidence; no test evidence; no proof evidence",
    ]


# ---------------------------------------------------------------- the gate beyond verdicts
def test_rule_marker_lint(tree: Path) -> None:
    (tree / "src/sonnx_mul/b.py").write_text(f"# {AT}relation(R9, scope=file)\n")
    found = problems(tree)
    assert len(found) == 1 and found[0].startswith("marker lint: src/sonnx_mul/b.py:1")


@pytest.mark.parametrize("name", ["why3.json", "crosshair.json", "pytest.xml"])
def test_rule_required_evidence_file_missing(tree: Path, name: str) -> None:
    evidence(tree, name).unlink()
    found = problems(tree)
    assert f"evidence file proofs/out/{name} is missing" in found
    assert found[-1] == f"evidence file proofs/out/{name} is missing"


def test_rule_optional_evidence_missing_passes_unless_required(tree: Path) -> None:
    assert not evidence(tree, "exhaustive.json").exists()
    from sonnx_mul_assurance.report import build_report

    report = build_report(
        tree, registry=FIXTURE_REGISTRY, probe_tools=False, require=["exhaustive"]
    )
    assert report["gate"]["problems"] == [
        "evidence file proofs/out/exhaustive.json is missing (--require exhaustive)"
    ]


@pytest.mark.parametrize("name", ["why3.json", "crosshair.json", "pytest.xml"])
def test_rule_unreadable_evidence_file(tree: Path, name: str) -> None:
    evidence(tree, name).write_text("{not json <not xml", encoding="utf-8")
    found = problems(tree)
    assert found[-1].startswith(f"cannot read proofs/out/{name}: ")
    assert all(p.startswith(("R1", "cannot read")) for p in found)


@pytest.mark.parametrize(
    ("name", "what"),
    [("why3.json", "no goals recorded"), ("crosshair.json", "no conditions recorded")],
)
def test_rule_an_empty_evidence_file_is_a_failure(tree: Path, name: str, what: str) -> None:
    set_json(tree, name, {"goals": []} if name == "why3.json" else [])
    found = problems(tree)
    assert any(p.startswith("unmapped failed") and what in p for p in found), found


@pytest.mark.parametrize("name", ["why3.json", "crosshair.json"])
def test_rule_recorded_producer_errors(tree: Path, name: str) -> None:
    data = json.loads(evidence(tree, name).read_text())
    records = data["goals"] if isinstance(data, dict) else data
    set_json(
        tree,
        name,
        {"goals" if name == "why3.json" else "records": records, "errors": ["prover crashed"]},
    )
    source = name.split(".")[0]
    assert problems(tree) == [
        f"unmapped failed {source} evidence: prover crashed at proofs/out/{name} (error)"
    ]
    set_json(tree, name, {"goals" if name == "why3.json" else "records": records, "ok": False})
    assert problems(tree) == [
        f"unmapped failed {source} evidence:  at proofs/out/{name} (ok: false)"
    ]


@pytest.mark.parametrize("source", ["why3", "crosshair", "exhaustive", "pytest"])
def test_rule_unmapped_failed_evidence(tree: Path, source: str) -> None:
    if source == "why3":
        data = json.loads(evidence(tree, "why3.json").read_text())
        data["goals"].append({"file": "why3/none.mlw", "goal": "g", "status": "Unknown"})
        set_json(tree, "why3.json", data)
    elif source == "crosshair":
        set_json(
            tree, "crosshair.json",
            [{"function": "sonnx_mul.a.f", "file": "src/sonnx_mul/a.py", "status": "passed"},
             {"function": "nowhere.g", "status": "error"}],
        )  # fmt: skip
    elif source == "exhaustive":
        set_json(tree, "exhaustive.json", [{"name": "odd", "status": "3 mismatches"}])
    else:
        edit(
            evidence(tree, "pytest.xml"), "</testsuite>",
            '<testcase classname="tests.test_a" name="test_unrelated" time="0">'
            '<error message="boom">t</error></testcase></testsuite>',
        )  # fmt: skip
    found = problems(tree)
    assert len(found) == 1 and found[0].startswith(f"unmapped failed {source} evidence"), found


def test_rule_unmapped_passing_or_skipped_evidence_is_not_a_problem(tree: Path) -> None:
    edit(
        evidence(tree, "pytest.xml"), "</testsuite>",
        '<testcase classname="tests.test_a" name="test_unrelated" time="0"/>'
        '<testcase classname="tests.test_a" name="test_other" time="0">'
        '<skipped message="s"/></testcase></testsuite>',
    )  # fmt: skip
    assert problems(tree) == []


def test_rule_an_id_with_no_evidence_at_all(tree: Path) -> None:
    registry = dict(FIXTURE_REGISTRY)
    registry["R2"] = Requirement("R2", "No sparse", "no sparse [R2]", None, "s")
    assert problems(tree, registry) == [
        "R2: no spec evidence; no code evidence; no test evidence; no proof evidence"
    ]


def test_junit_helper_is_the_green_fixture() -> None:
    """The helper the fixture uses writes what pytest writes for the three outcomes."""
    xml = junit(("c", "t1", "passed"), ("c", "t2", "failed"), ("c", "t3", "skipped"))
    assert xml.count("<testcase") == 3 and "<failure" in xml and "<skipped" in xml
