"""Every rule of the report's gate, each with the one fault it exists for (issue 19).

Each test starts from the green fixture of ``test_trace_report`` (every id
passes, the gate passes), plants exactly one fault, and asserts the gate's
complete list of problems: the fault is caught, by the rule meant for it,
and nothing else moves. The green fixture itself is the negative control.

Rules (``report.py``): an id passes iff it has passing ``spec``, ``code``,
``test`` and ``proof`` evidence of its own, none of its evidence failed, and
every child passes; the gate also fails on a marker-lint problem, on failed
evidence mapped to no id, on a missing, unreadable (off its schema) or empty
required evidence file, on a partial run of required evidence, and on
failures a producer recorded outside its records.

The evidence files the tests plant follow the typed schema
(:mod:`sonnx_mul_assurance.evidence.schema`): they are built with its
dataclasses and written with ``schema.dump``, as the producers write them.
"""

from __future__ import annotations

import dataclasses
import json
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_trace_report import (
    AT,
    FIXTURE_REGISTRY,
    bind,
    function,
    goal,
    junit,
    make_tree,
    report_of,
)

from sonnx_mul.requirements import Requirement
from sonnx_mul_assurance.evidence import schema
from sonnx_mul_assurance.report import build_report
from sonnx_mul_assurance.report.protocol import BY_KEY, PASS_RULES


def problems(root: Path, registry: dict[str, Requirement] | None = None) -> list[str]:
    report = report_of(root, registry)
    assert report["gate"]["passed"] is (not report["gate"]["problems"])
    assert report["verdict"] == ("pass" if report["gate"]["passed"] else report["verdict"])
    return list(report["gate"]["problems"])


def edit(path: Path, old: str, new: str) -> None:
    """Replace ``old`` by ``new`` in ``path``; an edit of the tree (not of its
    evidence) is followed by the producers' runs, which record it as their input."""
    text = path.read_text(encoding="utf-8")
    assert old in text, (path, old)
    path.write_text(text.replace(old, new), encoding="utf-8")
    root = next(p for p in path.parents if (p / "proofs" / "out").is_dir())
    if not path.is_relative_to(root / "proofs" / "out"):
        bind(root)


def pin_why3_goal(root: Path, file: str, module: str, name: str) -> None:
    """Add a goal to the fixture's Why3 manifest, as ``update-manifest`` would."""
    path = root / "proofs" / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    entry = next((e for e in manifest["files"] if e["path"] == file), None)
    if entry is None:
        entry = {"path": file, "loadpath": ["why3"], "goals": []}
        manifest["files"].append(entry)
    entry["goals"].append({"module": module, "goal": name})
    path.write_text(json.dumps(manifest), encoding="utf-8")
    bind(root)


def evidence(root: Path, name: str) -> Path:
    return root / "proofs" / "out" / name


def put(root: Path, name: str, data: object) -> None:
    """Write a schema object as its producer does (with the inputs it records)."""
    schema.dump(data, evidence(root, name))
    bind(root)


def why3_of(root: Path) -> schema.Why3Evidence:
    return schema.load(schema.Why3Evidence, evidence(root, "why3.json"))


def crosshair(
    *functions: schema.CrossHairFunction, passed: bool | None = None
) -> schema.CrossHairEvidence:
    """A crosshair.json; ``passed`` defaults to what the producer writes (all pass)."""
    return schema.CrossHairEvidence(
        "crosshair", "0.0.112", "3.11", "PEP316", 8.0, {}, list(functions),
        sum(f.conditions for f in functions), 1.0,
        all(f.ok for f in functions) if passed is None else passed,
    )  # fmt: skip


def exhaustive(
    *results: schema.ExhaustiveResult, complete: bool = True
) -> schema.ExhaustiveEvidence:
    return schema.ExhaustiveEvidence(
        "sonnx_mul_assurance.python.exhaustive", "2.0", complete, list(results),
        all(r.ok for r in results),
    )  # fmt: skip


def run(etype: str, requirements: list[str], mismatches: int = 0) -> schema.ExhaustiveResult:
    return schema.ExhaustiveResult(etype, requirements, 65536, mismatches, [], 1.0, None)


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
    # Schema era: a CrossHair function names no ids of its own (the old reader
    # took a record's "requirements"); its ids come from the code marker, so
    # R1 loses its CrossHair proof with the marker and keeps its Why3 goal.
    edit(
        tree / "src/sonnx_mul/a.py",
        "relation(R1, R1-X, scope=function)",
        "relation(R1-X, scope=function)",
    )
    assert problems(tree) == ["R1: no code evidence"]


def test_rule_proof_needed(tree: Path) -> None:
    # R1 keeps its code marker on f; the Why3 goal and the CrossHair check move
    # to R1-X only (CrossHair now checks g, marked for R1-X alone).
    only_in_whyml(tree, "R1-X")
    with (tree / "src/sonnx_mul/a.py").open("a", encoding="utf-8") as f:
        f.write(f"\n\n# {AT}relation(R1-X, scope=function)\ndef g(x: int) -> int:\n    return x\n")
    put(tree, "crosshair.json", crosshair(function("sonnx_mul.a.g")))
    assert problems(tree) == ["R1: no proof evidence"]


def test_rule_proof_maps_through_the_file_the_crosshair_run_names(tree: Path) -> None:
    # The run checked g of src/sonnx_mul/a.py; another file's g, marked for R1,
    # lends it nothing: R1 keeps no proof once the run names its file.
    only_in_whyml(tree, "R1-X")
    with (tree / "src/sonnx_mul/a.py").open("a", encoding="utf-8") as f:
        f.write(f"\n\n# {AT}relation(R1-X, scope=function)\ndef g(x: int) -> int:\n    return x\n")
    (tree / "src/sonnx_mul/b.py").write_text(
        f"# {AT}relation(R1, scope=function)\ndef g(x: int) -> int:\n    return x\n"
    )
    data = crosshair(function("sonnx_mul.a.g"))
    assert problems_with(tree, data) == []  # the negative control: matched by name alone
    data.source = "src/sonnx_mul/a.py"
    assert problems_with(tree, data) == ["R1: no proof evidence"]


def problems_with(tree: Path, data: schema.CrossHairEvidence) -> list[str]:
    put(tree, "crosshair.json", data)
    return problems(tree)


def test_rule_test_needed(tree: Path) -> None:
    edit(evidence(tree, "pytest.xml"), 'name="test_R1_same"', 'name="test_unrelated"')
    assert problems(tree) == ["R1: no test evidence"]


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
    data = why3_of(tree)
    data.goals.append(dataclasses.replace(data.goals[0], goal="l#1", status="Timeout"))
    pin_why3_goal(tree, "why3/a.mlw", "M", "l#1")
    put(tree, "why3.json", data)
    assert problems(tree) == [
        "R1: 1 proof check failed; child R1-X does not pass",
        "R1-X: 1 proof check failed",
    ]


def test_rule_a_crosshair_counterexample_fails_the_ids(tree: Path) -> None:
    put(tree, "crosshair.json", crosshair(function("sonnx_mul.a.f", "counterexample")))
    assert problems(tree) == [
        "R1: 1 proof check failed; child R1-X does not pass",
        "R1-X: 1 proof check failed",
    ]


def test_rule_a_failed_exhaustive_run_fails_its_ids(tree: Path) -> None:
    put(tree, "exhaustive.json", exhaustive(run("int8", ["R1-X"], mismatches=2)))
    assert problems(tree) == ["R1: child R1-X does not pass", "R1-X: 1 proof check failed"]
    proofs = report_of(tree)["requirements"]["R1-X"]["evidence"]["proof"]
    assert [(p["status"], p["ok"]) for p in proofs if p["source"] == "exhaustive"] == [
        ("2 mismatches", False)
    ]


# The schema replaced the old closed list of pass words (PASS_STATUSES and
# status_ok, case-insensitive): each record says itself whether it passed
# (``ok``), from a field with one pass value. Only that value passes; every
# other declared value is a failure; a word outside a declared Literal is a
# file off its schema, which the gate reports as unreadable.
CROSSHAIR_STATUSES = typing.get_args(typing.get_type_hints(schema.CrossHairFunction)["status"])
JUNIT_STATUSES = typing.get_args(schema.JUnitStatus)


@pytest.mark.parametrize("status", [s for s in CROSSHAIR_STATUSES if s != "pass"])
def test_rule_only_the_pass_status_passes_crosshair(tree: Path, status: str) -> None:
    put(tree, "crosshair.json", crosshair(function("sonnx_mul.a.f", status)))
    assert problems(tree) == [
        "R1: 1 proof check failed; child R1-X does not pass",
        "R1-X: 1 proof check failed",
    ]


@pytest.mark.parametrize("status", ["valid", "VALID", "Proved", "passed", "Timeout", "Unknown", ""])
def test_rule_only_valid_passes_why3(tree: Path, status: str) -> None:
    # Why3's answer is free text in the schema: anything but "Valid" (exactly) fails.
    data = why3_of(tree)
    data.goals[0].status = status
    put(tree, "why3.json", data)
    assert problems(tree) == [
        "R1: 1 proof check failed; child R1-X does not pass",
        "R1-X: 1 proof check failed",
    ]


@pytest.mark.parametrize("status", ["passed", "PASS", "ok", "unknown", "maybe", "", "PASSED?"])
def test_rule_a_status_word_off_the_schema_is_a_gate_problem(tree: Path, status: str) -> None:
    # Schema era: the old reader failed such a record; now the whole file is off
    # its schema (status outside the Literal) and the gate says it cannot read it.
    data = schema.to_json(crosshair(function("sonnx_mul.a.f")))
    data["functions"][0]["status"] = status
    evidence(tree, "crosshair.json").write_text(json.dumps(data))
    found = problems(tree)
    assert found[-1].startswith("cannot read proofs/out/crosshair.json: "), found
    assert "is not one of" in found[-1]
    assert all(p.startswith("cannot read") for p in found), found  # Why3 still proves R1, R1-X


def test_rule_each_record_has_one_pass_value() -> None:
    assert set(PASS_RULES) == set(BY_KEY)  # a stated rule for every source
    assert [s for s in CROSSHAIR_STATUSES if function("f", s).ok] == ["pass"]
    junit_ok = {s: schema.JUnitCase("c", "t", s, 0.0, "", "r").ok for s in JUNIT_STATUSES}
    assert junit_ok == {
        "passed": True, "failed": False, "error": False, "skipped": None, "xfailed": None,
    }  # fmt: skip
    assert goal("f", "M", "g", "Valid").ok is True
    assert [s for s in ("valid", "Proved", "Timeout", "") if goal("f", "M", "g", s).ok] == []
    assert run("int8", []).ok is True and run("int8", [], mismatches=1).ok is False
    outcomes = typing.get_args(schema.MutantStatus)
    passing = [s for s in outcomes if schema.MutantOutcome("k", "f", 1, "<", "<=", "", s, 0.0).ok]
    assert passing == ["killed", "timeout", "equivalent"]


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
    report = build_report(
        tree, registry=FIXTURE_REGISTRY, probe_tools=False, require=["exhaustive"]
    )
    assert report["gate"]["problems"] == [
        "evidence file proofs/out/exhaustive.json is missing (--require exhaustive)"
    ]


def test_rule_a_partial_run_of_required_evidence(tree: Path) -> None:
    put(tree, "exhaustive.json", exhaustive(run("int8", ["R1-X"]), complete=False))
    assert problems(tree) == []  # partial, not required: listed, marked, not a problem
    report = build_report(
        tree, registry=FIXTURE_REGISTRY, probe_tools=False, require=["exhaustive"]
    )
    assert report["gate"]["problems"] == [
        "evidence file proofs/out/exhaustive.json is a partial run (complete: false) "
        "(--require exhaustive)"
    ]


def every_pair(requirements: list[str]) -> list[schema.ExhaustiveResult]:
    return [
        schema.ExhaustiveResult(etype, requirements, pairs, 0, [], 1.0, None, [*modes] or None)
        for etype, (pairs, modes) in schema.EXHAUSTIVE_SCOPE.items()
    ]


def test_rule_required_exhaustive_evidence_covering_every_pair_passes(tree: Path) -> None:
    # the positive control of the three below
    put(tree, "exhaustive.json", exhaustive(*every_pair(["R1-X"])))
    report = build_report(
        tree, registry=FIXTURE_REGISTRY, probe_tools=False, require=["exhaustive"]
    )
    assert report["gate"]["problems"] == []


@pytest.mark.parametrize(
    ("keep", "gap"),
    [
        (lambda r: [], "int8: not run; uint8: not run; float16: not run; bfloat16: not run"),
        (lambda r: [x for x in r if x.type != "uint8"], "uint8: not run"),
        (
            lambda r: [dataclasses.replace(x, pairs=x.pairs // 2) if x.type == "bfloat16" else x
                       for x in r],
            "bfloat16: 2147483648 of 4294967296 pairs",
        ),
        (
            lambda r: [dataclasses.replace(x, modes=["wrap"]) if x.type == "int8" else x
                       for x in r],
            "int8: mode error not run",
        ),
        (
            lambda r: [dataclasses.replace(x, modes=None) if x.type == "uint8" else x
                       for x in r],
            "uint8: mode wrap/error not run",
        ),
    ],
    ids=["no-results", "a-type-missing", "half-the-pairs", "a-mode-missing", "no-mode-recorded"],
)  # fmt: skip
def test_rule_required_exhaustive_evidence_that_says_complete_but_is_not(
    tree: Path,
    keep: Callable[[list[schema.ExhaustiveResult]], list[schema.ExhaustiveResult]],
    gap: str,
) -> None:
    # `complete: true` and `passed: true` as written, yet the results do not
    # hold every pair: the gate reads the results, not the flag
    data = exhaustive(*keep(every_pair(["R1-X"])))
    data.complete = data.passed = True
    put(tree, "exhaustive.json", data)
    assert problems(tree) == []  # not required: listed as partial, not a problem
    report = build_report(
        tree, registry=FIXTURE_REGISTRY, probe_tools=False, require=["exhaustive"]
    )
    assert report["gate"]["problems"] == [
        f"evidence file proofs/out/exhaustive.json is a partial run ({gap}) (--require exhaustive)"
    ]
    assert report["evidence_files"]["exhaustive"]["status"] == "partial"


@pytest.mark.parametrize("name", ["why3.json", "crosshair.json", "exhaustive.json", "pytest.xml"])
def test_rule_unreadable_evidence_file(tree: Path, name: str) -> None:
    evidence(tree, name).write_text("{not json <not xml", encoding="utf-8")
    found = problems(tree)
    assert found[-1].startswith(f"cannot read proofs/out/{name}: ")
    assert all(p.startswith(("R1", "cannot read")) for p in found)


@pytest.mark.parametrize(
    ("name", "data"),
    [
        # The old reader took any JSON list of records; the schema reads one layout.
        ("why3.json", [dataclasses.asdict(goal("why3/a.mlw", "M", "l"))]),
        ("why3.json", {"goals": []}),
        ("crosshair.json", []),
        ("exhaustive.json", {"results": []}),
    ],
    ids=["why3-bare-list", "why3-goals-only", "crosshair-list", "exhaustive-results-only"],
)
def test_rule_a_file_off_its_schema_is_a_gate_problem(tree: Path, name: str, data: Any) -> None:
    evidence(tree, name).write_text(json.dumps(data), encoding="utf-8")
    found = problems(tree)
    assert found[-1].startswith(f"cannot read proofs/out/{name}: "), found
    assert all(p.startswith(("R1", "cannot read")) for p in found), found


@pytest.mark.parametrize(
    ("name", "what"),
    [("why3.json", "no goals recorded"), ("crosshair.json", "no conditions recorded")],
)
def test_rule_an_empty_evidence_file_is_a_failure(tree: Path, name: str, what: str) -> None:
    # Schema-valid files with no record: a producer that checked nothing.
    if name == "why3.json":
        put(tree, name, dataclasses.replace(why3_of(tree), goals=[]))
    else:
        put(tree, name, crosshair())
    source = name.split(".")[0]
    partial = {
        "why3.json": [
            "proofs/out/why3.json against proofs/manifest.json: a partial run:"
            " 1 of 1 manifest goals absent (why3/a.mlw/M/l)"
        ]
    }
    assert problems(tree) == [
        f"unmapped failed {source} evidence:  at proofs/out/{name} ({what})",
        *partial.get(name, []),
    ]


def test_rule_recorded_producer_errors_why3(tree: Path) -> None:
    data = why3_of(tree)
    put(tree, "why3.json", dataclasses.replace(data, ok=False, errors=["prover crashed"]))
    assert problems(tree) == [
        "unmapped failed why3 evidence: prover crashed at proofs/out/why3.json (error)"
    ]
    put(tree, "why3.json", dataclasses.replace(data, ok=False, errors=[]))
    assert problems(tree) == ["unmapped failed why3 evidence:  at proofs/out/why3.json (ok: false)"]


def test_rule_recorded_producer_failure_crosshair(tree: Path) -> None:
    # Schema era: crosshair.json has no "errors" list (such a key is off its
    # schema); the producer's own verdict is ``passed``, and passed: false
    # beside functions that all pass is a failure the gate reports.
    put(tree, "crosshair.json", crosshair(function("sonnx_mul.a.f"), passed=False))
    assert problems(tree) == [
        "unmapped failed crosshair evidence:  at proofs/out/crosshair.json (passed: false)"
    ]


@pytest.mark.parametrize("source", ["why3", "crosshair", "exhaustive", "pytest"])
def test_rule_unmapped_failed_evidence(tree: Path, source: str) -> None:
    if source == "why3":
        data = why3_of(tree)
        data.goals.append(goal("why3/none.mlw", "M", "g", "Unknown"))
        pin_why3_goal(tree, "why3/none.mlw", "M", "g")
        put(tree, "why3.json", data)
    elif source == "crosshair":
        functions = (function("sonnx_mul.a.f"), function("nowhere.g", "error"))
        put(tree, "crosshair.json", crosshair(*functions))
    elif source == "exhaustive":
        put(tree, "exhaustive.json", exhaustive(run("odd", [], mismatches=3)))
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
    data = why3_of(tree)
    data.goals.append(goal("why3/none.mlw", "M", "g"))
    pin_why3_goal(tree, "why3/none.mlw", "M", "g")
    put(tree, "why3.json", data)
    put(tree, "crosshair.json", crosshair(function("sonnx_mul.a.f"), function("nowhere.g")))
    put(tree, "exhaustive.json", exhaustive(run("odd", [])))
    report = report_of(tree)
    assert report["gate"]["problems"] == []
    assert sorted(i["source"] for i in report["unmapped"]) == ["crosshair", "exhaustive", "why3"]


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
