"""The native C kernel's evidence in the report: Frama-C WP (wp.json) and MISRA (misra.json).

Each test starts from the green fixture of ``test_trace_report`` (its C file
``native/src/k.c`` marked for R1-X, a wp.json with both goals of ``k``
proved, a misra.json whose one finding is the recorded deviation), plants one
fault and asserts the gate's complete list of problems. The green fixture is
the negative control of each.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from test_trace_report import (
    AT,
    C_SOURCE,
    DEVIATION,
    FIXTURE_REGISTRY,
    bind,
    make_tree,
    misra_evidence,
    report_of,
    wp_evidence,
    wp_goal,
)

from sonnx_mul_assurance.evidence import schema
from sonnx_mul_assurance.report import build_report
from sonnx_mul_assurance.report.markers import scan_file
from sonnx_mul_assurance.report.protocol import BY_KEY, SOURCES, claim_paths


def problems(root: Path) -> list[str]:
    return list(report_of(root)["gate"]["problems"])


def evidence(root: Path, name: str) -> Path:
    return root / "proofs" / "out" / name


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    root = make_tree(tmp_path)
    assert problems(root) == []  # the negative control: green before the fault
    return root


# ---------------------------------------------------------------- green: what joins the rows
def test_wp_goals_join_the_row_by_c_function_and_the_function_is_code(tree: Path) -> None:
    derived = report_of(tree)["requirements"]["R1-X"]
    wp = [e for e in derived["evidence"]["proof"] if e["source"] == "wp"]
    assert wp == [
        {
            "source": "wp", "location": f"{C_SOURCE}:6", "status": "2/2 goals Valid", "ok": True,
            "name": "k()", "goals": 2, "rte_goals": 0, "prover": "CVC4 1.8 2", "time": 0.1,
            "evidence": "proofs/out/wp.json", "about": "native-proved",
        }
    ]  # fmt: skip
    code = {(e["location"], e.get("name")) for e in derived["evidence"]["code"]}
    assert (f"{C_SOURCE}:6-9", "k") in code  # the C function itself
    assert (f"{C_SOURCE}:1-9", None) in code  # the file-scope marker
    assert derived["proof_subjects"]["native-proved"] == 1
    # R1's own rows hold no C: the markers name R1-X only
    r1 = report_of(tree)["requirements"]["R1"]["evidence"]["proof"]
    assert {e["source"] for e in r1} == {"why3", "coq", "crosshair"}


def test_misra_joins_the_rows_of_its_files_file_markers(tree: Path) -> None:
    derived = report_of(tree)["requirements"]["R1-X"]
    misra = [e for e in derived["evidence"]["proof"] if e["source"] == "misra"]
    assert [(e["location"], e["status"], e["ok"], e["about"]) for e in misra] == [
        (C_SOURCE, "as deviated: rule 8.7 x1", True, "native-misra")
    ]


def test_wp_and_misra_are_required_evidence(tree: Path) -> None:
    report = report_of(tree)
    assert {"wp", "misra"} <= set(report["required_evidence"])
    for key in ("wp", "misra"):
        entry = report["evidence_files"][key]
        assert (entry["status"], entry["required"]) == ("present", True)
        assert entry["schema"] == BY_KEY[key].schema.__name__  # type: ignore[union-attr]


# ---------------------------------------------------------------- wp.json
PARTIAL = "proofs/out/wp.json against proofs/wp-manifest.json: a partial run"
"""The refusal of a wp.json that does not hold every goal of the fixture's manifest."""


def test_gate_fails_when_wp_json_is_missing(tree: Path) -> None:
    evidence(tree, "wp.json").unlink()
    assert problems(tree) == ["evidence file proofs/out/wp.json is missing"]
    assert "Frama-C WP" in report_of(tree)["evidence_files"]["wp"]["meaning"]


@pytest.mark.parametrize(
    ("edit", "expect"),
    [
        (lambda d: "{not json", "not JSON"),
        (lambda d: {**d, "units": {}}, "units: expected a list"),
        (lambda d: {**d, "verdict": "ok"}, "'ok' is not one of"),
        (lambda d: {k: v for k, v in d.items() if k != "errors"}, "missing key errors"),
        (lambda d: _goal(d, status=None), "missing key status"),
        (lambda d: _goal(d, seconds="fast"), "seconds: expected float"),
        (lambda d: _goal(d, answer="Valid"), "unknown key(s) answer"),
    ],
    ids=["not-json", "units-object", "verdict-word", "no-errors", "goal-no-status",
         "goal-time-text", "goal-extra-key"],
)  # fmt: skip
def test_gate_fails_when_wp_json_is_off_its_schema(tree: Path, edit: Any, expect: str) -> None:
    data = json.loads(evidence(tree, "wp.json").read_text())
    changed = edit(data)
    evidence(tree, "wp.json").write_text(
        changed if isinstance(changed, str) else json.dumps(changed)
    )
    found = problems(tree)
    assert len(found) == 1 and found[0].startswith("cannot read proofs/out/wp.json: "), found
    assert expect in found[0]
    assert report_of(tree)["evidence_files"]["wp"]["status"] == "unreadable"


def _goal(data: dict[str, Any], **change: Any) -> dict[str, Any]:
    goal = data["units"][0]["goals"]["typed_k_ensures"]
    for key, value in change.items():
        if value is None:
            goal.pop(key)
        else:
            goal[key] = value
    return data


def test_gate_fails_when_one_wp_goal_is_unproved(tree: Path) -> None:
    data = wp_evidence(typed_k_assigns=wp_goal(), typed_k_ensures=wp_goal(status="Timeout"))
    data.errors = data.units[0].errors = [f"{C_SOURCE}: goal typed_k_ensures not proved"]
    schema.dump(data, evidence(tree, "wp.json"))
    bind(tree)
    assert problems(tree) == [
        "R1: child R1-X does not pass",
        "R1-X: 1 proof check failed",
        f"unmapped failed wp evidence: {C_SOURCE}: goal typed_k_ensures not proved "
        "at proofs/out/wp.json (error)",
    ]
    proof = report_of(tree)["requirements"]["R1-X"]["evidence"]["proof"]
    wp = next(e for e in proof if e["source"] == "wp")
    assert (wp["status"], wp["ok"], wp["unproved"]) == (
        "1/2 goals Valid", False, ["typed_k_ensures (Timeout)"],
    )  # fmt: skip


def test_an_unproved_goal_fails_even_when_the_file_says_pass(tree: Path) -> None:
    # the goal's own status decides, not the producer's verdict
    data = wp_evidence(typed_k_assigns=wp_goal(), typed_k_ensures=wp_goal(status="Unknown"))
    data.verdict = "pass"
    schema.dump(data, evidence(tree, "wp.json"))
    bind(tree)
    assert problems(tree) == ["R1: child R1-X does not pass", "R1-X: 1 proof check failed"]


def test_a_wp_verdict_of_fail_without_a_failed_goal_fails(tree: Path) -> None:
    data = wp_evidence(typed_k_assigns=wp_goal())
    data.verdict = "fail"
    schema.dump(data, evidence(tree, "wp.json"))
    bind(tree)
    assert problems(tree) == [
        "unmapped failed wp evidence:  at proofs/out/wp.json (verdict: fail)",
        f"{PARTIAL}: 1 of 2 manifest goals absent (native/src/k.c:typed_k_ensures)",
    ]


def test_a_wp_json_with_no_goal_fails(tree: Path) -> None:
    schema.dump(wp_evidence(), evidence(tree, "wp.json"))
    bind(tree)
    assert problems(tree) == [
        "unmapped failed wp evidence:  at proofs/out/wp.json (no goals recorded)",
        f"{PARTIAL}: 2 of 2 manifest goals absent"
        " (native/src/k.c:typed_k_assigns, native/src/k.c:typed_k_ensures)",
    ]


def test_an_unproved_goal_of_an_unmarked_function_fails_the_gate(tree: Path) -> None:
    data = wp_evidence(typed_k_assigns=wp_goal(), typed_gone_ensures=wp_goal("gone", "Timeout"))
    source = tree / C_SOURCE
    source.write_text(source.read_text().replace(f"{AT}relation(R1-X, scope=file)", "R1-X"))
    schema.dump(data, evidence(tree, "wp.json"))
    bind(tree)
    assert problems(tree) == [
        "unmapped failed wp evidence:  at proofs/out/wp.json (verdict: fail)",
        "unmapped failed wp evidence: gone() at native/src/k.c (0/1 goals Valid)",
        f"{PARTIAL}: 1 of 2 manifest goals absent (native/src/k.c:typed_k_ensures)",
        "proofs/out/wp.json against proofs/wp-manifest.json: goals not in the manifest:"
        " native/src/k.c:typed_gone_ensures",
    ]


# ---------------------------------------------------------------- misra.json
def test_gate_fails_when_misra_json_is_missing(tree: Path) -> None:
    evidence(tree, "misra.json").unlink()
    assert problems(tree) == ["evidence file proofs/out/misra.json is missing"]


@pytest.mark.parametrize(
    ("edit", "expect"),
    [
        (lambda d: {**d, "findings": [{"file": C_SOURCE}]}, "missing key rule"),
        (lambda d: {**d, "deviations": [{**d["deviations"][0], "count": "1"}]},
         "count: expected int"),
        (lambda d: {**d, "verdict": True}, "is not one of"),
        (lambda d: [d], "expected an object"),
    ],
    ids=["finding-no-rule", "count-text", "verdict-bool", "bare-list"],
)  # fmt: skip
def test_gate_fails_when_misra_json_is_off_its_schema(tree: Path, edit: Any, expect: str) -> None:
    data = json.loads(evidence(tree, "misra.json").read_text())
    evidence(tree, "misra.json").write_text(json.dumps(edit(data)))
    found = problems(tree)
    assert len(found) == 1 and found[0].startswith("cannot read proofs/out/misra.json: "), found
    assert expect in found[0]


def test_gate_fails_on_a_misra_finding_that_is_not_a_deviation(tree: Path) -> None:
    # written as the producer would have it claim: verdict pass, no errors;
    # the reader compares findings and deviations again
    schema.dump(misra_evidence("8.7", "10.4"), evidence(tree, "misra.json"))
    bind(tree)
    assert problems(tree) == ["R1: child R1-X does not pass", "R1-X: 1 proof check failed"]
    proof = report_of(tree)["requirements"]["R1-X"]["evidence"]["proof"]
    misra = next(e for e in proof if e["source"] == "misra")
    assert misra["status"] == (f"{C_SOURCE}: MISRA rule 10.4: 1 finding(s), no recorded deviation")


def test_gate_fails_when_a_deviation_count_differs(tree: Path) -> None:
    schema.dump(misra_evidence("8.7", "8.7"), evidence(tree, "misra.json"))
    bind(tree)
    assert problems(tree) == ["R1: child R1-X does not pass", "R1-X: 1 proof check failed"]


def test_gate_fails_when_misra_json_records_deviations_nobody_reviewed(tree: Path) -> None:
    data = misra_evidence("8.7", "10.4")
    data.deviations.append(dataclasses.replace(DEVIATION, rule="10.4"))
    schema.dump(data, evidence(tree, "misra.json"))
    bind(tree)
    assert problems(tree) == [
        "unmapped failed misra evidence: the deviations recorded differ from "
        "proofs/misra-deviations.json at proofs/out/misra.json (error)"
    ]


def test_gate_fails_on_a_recorded_misra_error(tree: Path) -> None:
    data = misra_evidence("8.7")
    data.verdict, data.errors = "fail", ["cppcheck crashed"]
    schema.dump(data, evidence(tree, "misra.json"))
    bind(tree)
    assert problems(tree) == [
        "unmapped failed misra evidence: cppcheck crashed at proofs/out/misra.json (error)"
    ]


# ---------------------------------------------------------------- hashes from the protocol
def test_the_hashed_claim_files_come_from_the_protocol(tree: Path) -> None:
    for rel in ("proofs/wp-manifest.json", "proofs/wp-why3.conf.in", "proofs/unrelated.json"):
        (tree / rel).write_text("{}\n")
    artifacts = report_of(tree)["artifacts"]
    for rel in (
        "proofs/wp-manifest.json",
        "proofs/wp-why3.conf.in",
        "proofs/misra-deviations.json",
    ):
        assert rel in artifacts, rel
    assert "proofs/unrelated.json" not in artifacts  # the negative control: declared by no source


def test_a_changed_wp_manifest_changes_the_reports_hash_list(tree: Path) -> None:
    manifest = tree / "proofs/wp-manifest.json"
    manifest.write_text('{"version": 1, "units": []}\n')
    before = report_of(tree)["artifacts"]
    manifest.write_text('{"version": 1, "units": [] }\n')
    after = report_of(tree)["artifacts"]
    assert after["proofs/wp-manifest.json"] != before["proofs/wp-manifest.json"]
    assert {k for k in after if after[k] != before[k]} == {"proofs/wp-manifest.json"}


def test_every_declared_claim_path_exists_in_the_repository() -> None:
    repo = Path(__file__).resolve().parents[2]
    paths = claim_paths()
    for rel in ("proofs/wp-manifest.json", "proofs/wp-why3.conf.in", "proofs/misra-deviations.json",
                "proofs/manifest.json", "proofs/why3.conf.in", "proofs/drivers"):  # fmt: skip
        assert rel in paths, rel
    assert [p for p in paths if not (repo / p).exists()] == []
    without_wp = claim_paths(tuple(s for s in SOURCES if s.key != "wp"))
    assert "proofs/wp-manifest.json" not in without_wp  # declared by wp alone


def test_the_report_lists_exactly_the_protocols_sources(tree: Path) -> None:
    report = report_of(tree)
    assert list(report["evidence_files"]) == [s.key for s in SOURCES]
    assert report["rules"]["pass_rules"] == {s.key: s.pass_rule for s in SOURCES}
    other = build_report(tree, registry=FIXTURE_REGISTRY, probe_tools=False)
    assert other["required_evidence"] == sorted(s.key for s in SOURCES if s.required)


# ---------------------------------------------------------------- C markers
@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (f"/* {AT}relation(R1-X, scope=function) */\nstatic int x = 1;\n",
         "scope=function marker is attached to no function"),
        (f"/* {AT}relation(R1-X, scope=class) */\nint f(void)\n{{\n    return 0;\n}}\n",
         "scope=class is for Python; use a range here"),
        (f"int f(void) /* {AT}relation(R1-X, scope=function) */\n{{\n    return 0;\n}}\n",
         "scope=function marker is attached to no function"),
    ],
    ids=["above-a-variable", "class-scope", "not-comment-only"],
)  # fmt: skip
def test_c_marker_lint(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "native/src/x.c"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    markers, found = scan_file(path, tmp_path, {"R1-X"})
    assert markers == [] and [p.message for p in found] == [problem]


def test_a_c_function_marker_skips_comments_and_acsl_to_its_definition(tmp_path: Path) -> None:
    path = tmp_path / "native/src/x.c"
    path.parent.mkdir(parents=True)
    path.write_text(
        f"/* {AT}relation(R1-X, scope=function) */\n/* why */\n\n/*@ requires x > 0;\n"
        "    ensures \\result == x; */\nstatic int\nf(int x)\n{\n    if (x) { return x; }\n"
        "    return 0;\n}\nint g;\n"
    )
    markers, found = scan_file(path, tmp_path, {"R1-X"})
    assert found == []
    assert [(m.name, m.start, m.end) for m in markers] == [("f", 6, 11)]


# ---------------------------------------------------------------- native-exhaustive.json
def native_record(**checks: dict[str, Any]) -> dict[str, Any]:
    """A native-exhaustive.json as the driver writes it (the harness's control passed)."""
    return {
        "flags": ["-O2"],
        "checks": checks,
        "selftest": {"narrow-f16-rtz": {"caught": 12, "seconds": 0.1}},
        "skipped": {},
        "cpu": "test CPU",
        "seconds": 1.0,
        "verdict": "pass",
        "errors": [],
    }


def native_check(mismatches: int = 0) -> dict[str, Any]:
    return {"inputs": 65536, "mismatches": mismatches, "seconds": 0.1, "cpu_seconds": 0.1}


def test_native_exhaustive_is_optional_until_a_release_requires_it(tree: Path) -> None:
    assert not evidence(tree, "native-exhaustive.json").exists()
    assert problems(tree) == []
    report = build_report(
        tree, registry=FIXTURE_REGISTRY, probe_tools=False, require=("native-exhaustive",)
    )
    assert report["gate"]["problems"] == [
        "evidence file proofs/out/native-exhaustive.json is missing (--require native-exhaustive)"
    ]


def test_native_checks_map_to_their_requirement() -> None:
    from sonnx_mul_assurance.report.native_evidence import native_check_id

    assert native_check_id("wrap8-stream8-layouts") == "F-WRAP"
    assert native_check_id("mul-f16-f16c") == "F-FLOAT"
    assert native_check_id("narrow-bf16") == "F-FLOAT"


def test_gate_fails_on_a_native_check_with_mismatches(tree: Path) -> None:
    record = native_record(**{"mul-f16": native_check(), "narrow-f16": native_check(3)})
    evidence(tree, "native-exhaustive.json").write_text(json.dumps(record))
    found = problems(tree)
    assert len(found) == 1 and "native-exhaustive" in found[0] and "3 mismatches" in found[0]


def test_gate_fails_on_a_native_check_that_ran_no_input(tree: Path) -> None:
    # no mismatch among no inputs is not agreement
    record = native_record(**{"mul-f16": native_check(), "narrow-f16": native_check()})
    record["checks"]["narrow-f16"]["inputs"] = 0
    evidence(tree, "native-exhaustive.json").write_text(json.dumps(record))
    found = problems(tree)
    assert len(found) == 1 and "native-exhaustive" in found[0] and "narrow-f16" in found[0], found


def test_gate_fails_when_the_harness_missed_a_planted_fault(tree: Path) -> None:
    record = native_record(**{"mul-f16": native_check()})
    record["selftest"] = {"narrow-f16-rtz": {"caught": 0, "seconds": 0.1}}
    evidence(tree, "native-exhaustive.json").write_text(json.dumps(record))
    found = problems(tree)
    assert len(found) == 1 and "a planted fault not caught" in found[0], found


def test_gate_fails_when_native_exhaustive_is_off_its_schema(tree: Path) -> None:
    record = native_record(**{"mul-f16": {**native_check(), "mismatches": "none"}})
    evidence(tree, "native-exhaustive.json").write_text(json.dumps(record))
    found = problems(tree)
    assert len(found) == 1 and found[0].startswith(
        "cannot read proofs/out/native-exhaustive.json: "
    ), found


# ---------------------------------------------------------------- targets.json
def target_run(f32_hash: str = "aa", mismatches: int = 0, exit: int = 0) -> dict[str, Any]:
    """One target's make c-kernel, as sonnx_mul_assurance.c.targets records it."""

    def row(name: str, value: str) -> dict[str, Any]:
        bad = mismatches if name == "f32" else 0
        return {
            "type": name,
            "pairs": 10,
            "mismatches": bad,
            "hash": value,
            "first_mismatch": None,
            "seconds": 0.1,
        }

    return {
        "cc": "cc",
        "flags": ["-O2"],
        "exit": exit,
        "known_answers": exit == 0,
        "types": {"f32": row("f32", f32_hash), "int8": row("int8", "bb")},
        "seconds": 1.0,
        "log": "",
    }


def targets_record(**runs: dict[str, Any]) -> dict[str, Any]:
    return {
        "reference": "ref",
        "runs": {"sample": {"ref": target_run(), **runs}},
        "verdict": "pass",
        "errors": [],
    }


def test_targets_map_each_target_to_float_and_integer_requirements(tmp_path: Path) -> None:
    from sonnx_mul_assurance.report.native_evidence import targets_items

    path = tmp_path / "targets.json"
    path.write_text(json.dumps(targets_record(arm=target_run())))
    mapped, unmapped = targets_items(path, tmp_path, {"F-FLOAT", "F-WRAP", "F-CHECKED"})
    assert unmapped == [] and all(item.ok for item in mapped)
    assert sorted((item.name.split(" ")[0], item.ids) for item in mapped) == [
        ("arm", ("F-CHECKED",)),
        ("arm", ("F-FLOAT",)),
        ("arm", ("F-WRAP",)),
        ("ref", ("F-CHECKED",)),
        ("ref", ("F-FLOAT",)),
        ("ref", ("F-WRAP",)),
    ]


@pytest.mark.parametrize(
    "arm",
    [target_run(f32_hash="other"), target_run(mismatches=2), target_run(exit=2)],
    ids=["another hash", "mismatches", "build failed"],
)
def test_a_target_that_differs_fails_its_item(tmp_path: Path, arm: dict[str, Any]) -> None:
    from sonnx_mul_assurance.report.native_evidence import targets_items

    path = tmp_path / "targets.json"
    path.write_text(json.dumps(targets_record(arm=arm)))
    mapped, _ = targets_items(path, tmp_path, {"F-FLOAT", "F-WRAP", "F-CHECKED"})
    failed = sorted((item.name.split(" ")[0], item.ids) for item in mapped if not item.ok)
    expected = [("arm", ("F-FLOAT",))]
    if arm["exit"]:
        expected = [("arm", ("F-CHECKED",)), ("arm", ("F-FLOAT",)), ("arm", ("F-WRAP",))]
    assert failed == expected


def test_gate_fails_on_a_failed_targets_run(tree: Path) -> None:
    record = targets_record(arm=target_run(f32_hash="other"))
    record["verdict"], record["errors"] = "fail", ["[sample] arm f32: hash other is not ref's aa"]
    evidence(tree, "targets.json").write_text(json.dumps(record))
    found = problems(tree)
    assert len(found) == 2, found
    assert "hash other is not ref's aa" in found[0] and "arm (cc), sample" in found[1]
    assert "differs or failed" in found[1]
