"""Traceability report and gate: green on a complete fixture tree, red on each planted gap."""

from __future__ import annotations

import dataclasses
import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Literal

import pytest

from sonnx_mul.requirements import REGISTRY, Requirement
from sonnx_mul_assurance.c import misra, wp
from sonnx_mul_assurance.evidence import binding, schema
from sonnx_mul_assurance.python import crosshair
from sonnx_mul_assurance.report import build_report, report_main, write_report
from sonnx_mul_assurance.report.evidence import ids_in_test_name
from sonnx_mul_assurance.why3 import coq, driver

AT = "@"  # markers are spelt by concatenation so that this file holds none
REPO = Path(__file__).resolve().parents[2]

FIXTURE_REGISTRY = {
    "R1": Requirement("R1", "Same shape", "A and B have the same shape [R1]", None, "s"),
    "R1-X": Requirement("R1-X", "Derived", "A derived statement.", "R1", "s"),
}


def junit(*cases: tuple[str, str, str]) -> str:
    """JUnit XML of (classname, name, outcome) with outcome passed/failed/skipped."""
    body = []
    for classname, name, outcome in cases:
        inner = {
            "passed": "",
            "failed": '<failure message="assert 1 == 2">trace</failure>',
            "skipped": '<skipped type="pytest.skip" message="skip"/>',
        }[outcome]
        body.append(
            f'<testcase classname="{classname}" name="{name}" time="0.01">{inner}</testcase>'
        )
    return f'<testsuites><testsuite name="pytest">{"".join(body)}</testsuite></testsuites>'


def goal(file: str, module: str, name: str, status: str = "Valid") -> schema.Why3Goal:
    return schema.Why3Goal(file, module, name, "cvc5", 0.02, status, "", 10, 1020)


def why3_json(*goals: schema.Why3Goal) -> str:
    """A why3.json as sonnx_mul_assurance.why3.driver writes it."""
    data = schema.Why3Evidence(True, [], {"why3": "1.5.1"}, {}, 1.0, list(goals))
    return json.dumps(schema.to_json(data))


def function(name: str, status: str = "pass") -> schema.CrossHairFunction:
    return schema.CrossHairFunction(name, 1, status, 1.0, 0)  # type: ignore[arg-type]


def crosshair_json(*functions: schema.CrossHairFunction) -> str:
    """A crosshair.json as sonnx_mul_assurance.python.crosshair writes it."""
    data = schema.CrossHairEvidence(
        "crosshair", "0.0.112", "3.11", "PEP316", 8.0, {}, list(functions), 1, 1.0,
        all(f.ok for f in functions),
    )  # fmt: skip
    return json.dumps(schema.to_json(data))


def exhaustive_json(*results: schema.ExhaustiveResult, complete: bool = True) -> str:
    """An exhaustive.json as sonnx_mul_assurance.python.exhaustive writes it."""
    data = schema.ExhaustiveEvidence(
        "sonnx_mul_assurance.python.exhaustive",
        "2.0",
        complete,
        list(results),
        all(r.ok for r in results),
    )
    return json.dumps(schema.to_json(data))


COQ_PROOF = "a_M_m.v"
"""The fixture's committed Coq proof: goal ``m`` of module ``M`` of why3/a.mlw."""


def coq_goal(proof: str = COQ_PROOF, *errors: str) -> schema.CoqGoal:
    goal = proof.removeprefix("a_M_").removesuffix(".v")
    return schema.CoqGoal("why3/a.mlw", "M", goal, proof, not errors, list(errors))


COQ_VERSIONS = {"why3": "1.5.1", "coqc": "8.16.1", "flocq": "4.1.0", "realizations": "x"}
"""The tool versions the fixture's coq.json records."""


def coq_evidence(*goals: schema.CoqGoal) -> schema.CoqEvidence:
    """A coq.json as sonnx_mul_assurance.why3.coq writes it (counts from the goals)."""
    proved = sum(g.proved for g in goals)
    return schema.CoqEvidence(dict(COQ_VERSIONS), {}, list(goals), proved, len(goals), 1.0)


C_SOURCE = "native/src/k.c"


def wp_goal(function: str = "k", status: str = "Valid") -> schema.WpGoal:
    return schema.WpGoal(function, "CVC4 1.8", status, 0.05, 12000)


def wp_evidence(**goals: schema.WpGoal) -> schema.WpEvidence:
    """A wp.json as sonnx_mul_assurance.c.wp writes it (``verdict`` from the goals)."""
    unit = schema.WpUnit(C_SOURCE, "", "", 1.0, dict(goals), [])
    verdict: Literal["pass", "fail"] = "pass" if all(g.ok for g in goals.values()) else "fail"
    return schema.WpEvidence({"frama-c": "27.1"}, [unit], len(goals), verdict, [])


DEVIATION = schema.MisraDeviation("8.7", "advisory", C_SOURCE, 1, "public API")


def misra_evidence(*rules: str) -> schema.MisraEvidence:
    """A misra.json as sonnx_mul_assurance.c.misra writes it, with a finding per rule
    in ``rules`` and the fixture's one recorded deviation (rule 8.7, once)."""
    findings = [schema.MisraFinding(C_SOURCE, r) for r in rules]
    return schema.MisraEvidence("Cppcheck 2.10", [C_SOURCE], findings, [DEVIATION], "pass", [])


def coverage_evidence(*gaps: schema.CoverageGap) -> schema.CoverageEvidence:
    """A coverage.json as sonnx_mul_assurance.structural writes it: the fixture's
    C file, every item covered but ``gaps``."""
    full = schema.CoverageCount(4, 4)
    function = schema.CoverageFunction("k", 6, full, full, full)
    c_file = schema.CoverageFile(C_SOURCE, "c", full, full, full, [function])
    return schema.CoverageEvidence(
        {}, "clang", "tests", ["portable"], "", [], [c_file], list(gaps), {}, 1.0, {}, []
    )


def result(
    etype: str, requirements: list[str], mismatches: int = 0, pairs: int = 65536
) -> schema.ExhaustiveResult:
    modes: list[Literal["wrap", "error"]] | None = None if "float" in etype else ["wrap", "error"]
    return schema.ExhaustiveResult(etype, requirements, pairs, mismatches, [], 1.0, None, modes)


def every_pair(requirements: list[str]) -> list[schema.ExhaustiveResult]:
    """Results that cover every pair of every type of the exhaustive run."""
    return [
        result(etype, requirements, pairs=pairs)
        for etype, (pairs, _) in schema.EXHAUSTIVE_SCOPE.items()
    ]


BOUND: dict[str, tuple[type, Any]] = {
    "why3.json": (schema.Why3Evidence, driver.inputs),
    "coq.json": (schema.CoqEvidence, coq.inputs),
    "wp.json": (schema.WpEvidence, wp.inputs),
    "misra.json": (schema.MisraEvidence, misra.inputs),
    "crosshair.json": (schema.CrossHairEvidence, lambda root: crosshair.inputs()),
}
"""The evidence files that record their inputs, and the producer's list of them."""


def bind(root: Path) -> None:
    """Record in each evidence file of ``root`` that records inputs the
    SHA-256 of those its producer lists on the tree, as the producer does."""
    for name, (cls, listed) in BOUND.items():
        path = root / "proofs" / "out" / name
        if path.is_file():
            data = schema.load(cls, path)
            data.inputs = binding.digest(root, listed(root))
            schema.dump(data, path)


WHY3_MANIFEST = {
    "files": [
        {"path": "why3/a.mlw", "loadpath": ["why3"], "goals": [{"module": "M", "goal": "l"}]}
    ],
    "pinned": {},
}
WP_MANIFEST = {
    "units": [
        {
            "source": "native/src/k.c",
            "provers": ["cvc4"],
            "timeout": 10,
            "functions": {},
            "goals": {
                g: {"function": "k", "prover": "CVC4 1.8"}
                for g in ("typed_k_assigns", "typed_k_ensures")
            },
        }
    ]
}
"""The fixture's manifests: its one Why3 goal, its one WP unit and two goals."""


def make_tree(root: Path, *, goal_status: str = "Valid", test_outcome: str = "passed") -> Path:
    def write(rel: str, text: str) -> None:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    write("docs/spec/sonnx_mul_profile.md", "# Mul\n- A and B have the same shape `[R1]`\n")
    write(
        "src/sonnx_mul/requirements.py",
        'Requirement(\n    "R1", "t", "s", None, "x")\n'
        'Requirement(\n    "R1-X", "t", "s", "R1", "x")\n',
    )
    write(
        "src/sonnx_mul/a.py",
        f"# {AT}relation(R1, R1-X, scope=function)\ndef f(x: int) -> int:\n    return x\n",
    )
    write(
        "tests/test_a.py",
        "def test_R1_same():\n    pass\n\n\ndef test_R1_X_derived():\n    pass\n\n\n"
        f"# {AT}relation(R1-X, scope=function)\ndef test_by_marker():\n    pass\n",
    )
    write(
        "why3/a.mlw",
        f"module M\n  (* {AT}relation(R1, R1-X, scope=range_start) *)\n  lemma l: true\n"
        f"  lemma m: true\n  (* {AT}relation(R1, R1-X, scope=range_end) *)\nend\n",
    )
    write(f"{coq.PROOF_DIR.as_posix()}/{COQ_PROOF}", "(* Why3 goal *)\nTheorem m : True.\n")
    write(
        C_SOURCE,
        f"/* {AT}relation(R1-X, scope=file) */\n#include <stddef.h>\n\n"
        f"/* {AT}relation(R1-X, scope=function) */\n/*@ assigns \\nothing; */\n"
        "int k(int x)\n{\n    return x;\n}\n",
    )
    write(
        "proofs/misra-deviations.json",
        json.dumps({"deviations": [dataclasses.asdict(DEVIATION)]}),
    )
    write("proofs/manifest.json", json.dumps(WHY3_MANIFEST))
    write("proofs/wp-manifest.json", json.dumps(WP_MANIFEST))
    ev = root / "proofs" / "out"
    ev.mkdir(parents=True)
    schema.dump(wp_evidence(typed_k_assigns=wp_goal(), typed_k_ensures=wp_goal()), ev / "wp.json")
    schema.dump(misra_evidence("8.7"), ev / "misra.json")
    schema.dump(coverage_evidence(), ev / "coverage.json")
    (ev / "why3.json").write_text(why3_json(goal("why3/a.mlw", "M", "l", goal_status)))
    schema.dump(coq_evidence(coq_goal()), ev / "coq.json")
    (ev / "crosshair.json").write_text(crosshair_json(function("sonnx_mul.a.f")))
    (ev / "pytest.xml").write_text(
        junit(
            ("tests.test_a", "test_R1_same", test_outcome),
            ("tests.test_a", "test_R1_X_derived[int8]", "passed"),
            ("tests.test_a", "test_by_marker", "passed"),
            ("tests.test_a", "test_R1_X_derived[int16]", "skipped"),
        )
    )
    bind(root)
    return root


def report_of(root: Path, registry: dict[str, Requirement] | None = None) -> dict[str, Any]:
    return build_report(root, registry=registry or FIXTURE_REGISTRY, probe_tools=False)


def test_green_fixture_passes_the_gate(tmp_path: Path) -> None:
    report = report_of(make_tree(tmp_path))
    assert report["gate"] == {"passed": True, "problems": []}
    r1 = report["requirements"]["R1"]
    assert r1["verdict"] == "pass"
    assert r1["evidence"]["spec"][0]["location"] == "docs/spec/sonnx_mul_profile.md:2"
    assert r1["evidence"]["code"][0]["location"] == "src/sonnx_mul/a.py:2-3"
    assert [e["name"] for e in r1["evidence"]["test"]] == ["tests.test_a::test_R1_same"]
    proof_sources = sorted(e["source"] for e in r1["evidence"]["proof"])
    assert proof_sources == ["coq", "crosshair", "why3"]
    derived = report["requirements"]["R1-X"]
    assert derived["evidence"]["spec"][0]["location"] == "src/sonnx_mul/requirements.py:3"
    assert {e["name"] for e in derived["evidence"]["test"]} == {
        "tests.test_a::test_R1_X_derived[int8]",
        "tests.test_a::test_by_marker",
    }
    assert derived["skipped_tests"] == 1
    assert "why3/a.mlw" in report["artifacts"]
    assert "proofs/out/pytest.xml" in report["artifacts"]


def test_requirement_without_evidence_turns_the_gate_red(tmp_path: Path) -> None:
    registry = dict(FIXTURE_REGISTRY)
    registry["R2"] = Requirement("R2", "No sparse", "no sparse [R2]", None, "s")
    report = report_of(make_tree(tmp_path), registry)
    verdict = report["requirements"]["R2"]["verdict"]
    for kind in ("spec", "code", "test", "proof"):
        assert f"no {kind} evidence" in verdict
    assert not report["gate"]["passed"]


def test_failing_test_turns_the_gate_red_and_rolls_up(tmp_path: Path) -> None:
    report = report_of(make_tree(tmp_path, test_outcome="failed"))
    assert report["requirements"]["R1"]["verdict"] == "no test evidence; 1 test failed"
    assert report["requirements"]["R1-X"]["verdict"] == "pass"
    assert any(p.startswith("R1: ") for p in report["gate"]["problems"])


def test_unproved_goal_turns_parent_and_child_red(tmp_path: Path) -> None:
    report = report_of(make_tree(tmp_path, goal_status="Timeout"))
    assert report["requirements"]["R1-X"]["verdict"] == "1 proof check failed"
    assert report["requirements"]["R1"]["verdict"] == (
        "1 proof check failed; child R1-X does not pass"
    )
    assert not report["gate"]["passed"]


def test_unmapped_failed_goal_turns_the_gate_red(tmp_path: Path) -> None:
    root = make_tree(tmp_path)
    (root / "proofs/out/why3.json").write_text(
        why3_json(goal("why3/other.mlw", "M", "g", "Unknown"))
    )
    report = report_of(root)
    assert any("unmapped failed why3" in p for p in report["gate"]["problems"])


@pytest.mark.parametrize(
    ("file", "edit", "expect"),
    [
        # a status under another key: the old reader guessed "answer"
        ("why3.json", lambda d: d["goals"][0].update(answer=d["goals"][0].pop("status")),
         "unknown key(s) answer"),
        ("why3.json", lambda d: d["goals"][0].update(time="fast"), "time: expected float"),
        # "passed" was one of the words the old reader took for a pass
        ("crosshair.json", lambda d: d["functions"][0].update(status="passed"),
         "'passed' is not one of"),
        ("crosshair.json", lambda d: d.pop("functions"), "missing key functions"),
        ("exhaustive.json", lambda d: d["results"][0].pop("requirements"),
         "missing key requirements"),
    ],
)  # fmt: skip
def test_evidence_file_off_its_schema_turns_the_gate_red(
    tmp_path: Path, file: str, edit: Any, expect: str
) -> None:
    root = make_tree(tmp_path)
    path = root / "proofs/out" / file
    if file == "exhaustive.json":
        path.write_text(exhaustive_json(result("int8", ["R1"])))
    assert report_of(root)["gate"]["passed"]
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))
    report = report_of(root)
    assert not report["gate"]["passed"]
    problems = [p for p in report["gate"]["problems"] if f"cannot read proofs/out/{file}" in p]
    assert problems and expect in problems[0], report["gate"]["problems"]
    key = file.removesuffix(".json")
    assert report["evidence_files"][key]["status"] == "unreadable"


def test_junit_file_that_is_not_junit_turns_the_gate_red(tmp_path: Path) -> None:
    root = make_tree(tmp_path)
    (root / "proofs/out/pytest.xml").write_text("<results><case/></results>")
    report = report_of(root)
    assert any(
        "cannot read proofs/out/pytest.xml" in p and "not a JUnit" in p
        for p in report["gate"]["problems"]
    ), report["gate"]["problems"]


@pytest.mark.parametrize(
    "marker",
    [f"# {AT}relation(R7, scope=file)", f"# {AT}relations(R1, scope=file)"],
    ids=["unknown-id", "misspelled"],
)
def test_bad_marker_turns_the_gate_red(tmp_path: Path, marker: str) -> None:
    root = make_tree(tmp_path)
    (root / "src/sonnx_mul/b.py").write_text(marker + "\n")
    report = report_of(root)
    assert [
        p for p in report["gate"]["problems"] if p.startswith("marker lint: src/sonnx_mul/b.py:1")
    ]


def test_missing_evidence_file_turns_the_gate_red(tmp_path: Path) -> None:
    root = make_tree(tmp_path)
    (root / "proofs/out/crosshair.json").unlink()
    report = report_of(root)
    assert "evidence file proofs/out/crosshair.json is missing" in report["gate"]["problems"]


def test_report_command_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The real registry on a fixture tree lacks almost everything: red, exit 1.
    root = make_tree(tmp_path / "repo")
    out = tmp_path / "out"
    assert report_main(["--root", str(root), "--out", str(out), "--no-probe"]) == 1
    assert "traceability gate: FAILED" in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == [
        "sources",
        "traceability.html",
        "traceability.json",
        "traceability.md",
    ]


def test_test_name_rule() -> None:
    ids = REGISTRY.keys()
    assert ids_in_test_name("test_R1_R4_broadcastable_shapes_are_refused", ids) == ("R1", "R4")
    assert ids_in_test_name("test_F_FLOAT_ties_round_to_even", ids) == ("F-FLOAT",)
    assert ids_in_test_name("test_C1_result_shape_equals_input_shape", ids) == ("C1",)
    assert ids_in_test_name("test_C1_RESULT_is_new[float16]", ids) == ("C1-RESULT",)
    assert ids_in_test_name("test_F_WRAP_and_F_CHECKED_on_edge_values", ids) == (
        "F-WRAP",
        "F-CHECKED",
    )
    assert ids_in_test_name("test_R3_OPSET_bad_opset", ids) == ("R3-OPSET",)
    assert ids_in_test_name("test_registry_has_the_sonnx_ids_first", ids) == ()
    assert ids_in_test_name("test_R10_x", ids) == ()


class _Rows(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.rows: list[str] = []
        self.external: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "tr" and a.get("class") == "req":
            self.rows.append(str(a.get("id")))
        if tag in ("script", "link", "img") or (a.get("src") or "").startswith("http"):
            self.external.append(tag)


def test_html_and_json_of_the_real_tree(tmp_path: Path) -> None:
    report = build_report(REPO, tmp_path / "no-evidence", probe_tools=False)
    json_path, md_path, html_path = write_report(report, tmp_path / "out")
    parser = _Rows()
    parser.feed(html_path.read_text(encoding="utf-8"))
    parser.close()
    assert parser.rows == [f"req-{rid}" for rid in REGISTRY]
    assert parser.external == []
    assert md_path.read_text(encoding="utf-8").count("\n### ") == len(REGISTRY)

    data = json.loads(json_path.read_text(encoding="utf-8"))
    assert {"requirements", "tools", "artifacts", "git", "date", "semantics"} <= data.keys()
    assert list(data["requirements"]) == list(REGISTRY)
    for rid, entry in data["requirements"].items():
        req = REGISTRY[rid]
        assert (entry["title"], entry["statement"], entry["parent"]) == (
            req.title,
            req.statement,
            req.parent,
        )
        assert isinstance(entry["verdict"], str) and entry["verdict"]
        assert set(entry["evidence"]) == {"spec", "code", "test", "proof"}
        for items in entry["evidence"].values():
            for item in items:
                assert isinstance(item["location"], str) and isinstance(item["status"], str)
                assert item["ok"] in (True, False, None)
        assert entry["evidence"]["spec"], f"{rid} has no spec evidence in the repository"
    assert all(len(h) == 64 for h in data["artifacts"].values())
    assert "python" in data["tools"] and "numpy" in data["tools"]
    assert set(data["git"]) >= {"commit", "dirty"}
    assert data["semantics"]["overflow_modes"] == ["wrap", "error"]
    # Without evidence files the gate is red.
    assert data["gate"]["passed"] is False


def test_failed_test_without_id_turns_the_gate_red(tmp_path: Path) -> None:
    root = make_tree(tmp_path)
    xml = (root / "proofs/out/pytest.xml").read_text()
    extra = junit(("tests.test_a", "test_unrelated", "failed"))
    (root / "proofs/out/pytest.xml").write_text(
        xml.replace(
            "</testsuite>",
            extra.split('name="pytest">')[1].split("</testsuite>")[0] + "</testsuite>",
        )
    )
    report = report_of(root)
    assert any("unmapped failed pytest" in p for p in report["gate"]["problems"])
