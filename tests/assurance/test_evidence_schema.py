"""The typed schema of the evidence files: writers' output loads, anything else is refused."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest

from sonnx_mul.dtypes import INT8
from sonnx_mul_assurance import pipeline
from sonnx_mul_assurance.c import misra, wp
from sonnx_mul_assurance.evidence import schema
from sonnx_mul_assurance.python import exhaustive
from sonnx_mul_assurance.why3 import coq
from sonnx_mul_assurance.why3 import driver as why3

GOAL = {
    "file": "why3/a.mlw", "module": "M", "goal": "l#0", "prover": "z3", "time": 0.1,
    "status": "Valid", "sha256": "", "steps": 1200, "steplimit": 3400,
}  # fmt: skip
WHY3 = {
    "ok": True, "errors": [], "versions": {"why3": "1.5.1"}, "files": {}, "total_time": 1,
    "goals": [GOAL],
}  # fmt: skip


def test_why3_round_trip_and_ok() -> None:
    data = schema.from_json(schema.Why3Evidence, WHY3)
    assert data.goals[0].ok and data.total_time == 1.0
    assert schema.to_json(data) == {**WHY3, "total_time": 1.0, "inputs": {}}
    assert not schema.Why3Goal(**{**GOAL, "status": "Timeout"}).ok  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("change", "expect"),
    [
        ({"status": None}, "goals[0]: missing key status"),
        ({"answer": "Valid"}, "unknown key(s) answer"),
        ({"time": "0.1"}, "goals[0].time: expected float"),
        ({"time": True}, "goals[0].time: expected float"),
        ({"goal": 3}, "goals[0].goal: expected str"),
    ],
)
def test_a_goal_off_the_schema_is_refused(change: dict[str, Any], expect: str) -> None:
    goal = {k: v for k, v in GOAL.items() if change.get(k, 0) is not None}
    goal.update({k: v for k, v in change.items() if v is not None})
    with pytest.raises(schema.SchemaError, match=re.escape(expect)):
        schema.from_json(schema.Why3Evidence, {**WHY3, "goals": [goal]})


def test_a_key_repeated_in_an_object_is_refused(tmp_path: Path) -> None:
    # JSON parsers keep one of two equal keys silently: a goal recorded twice
    # in wp.json's goals would pass as one
    path = tmp_path / "why3.json"
    path.write_text(json.dumps(WHY3))
    assert schema.load(schema.Why3Evidence, path).ok  # the negative control
    path.write_text(json.dumps(WHY3)[:-1] + ', "ok": true}')
    with pytest.raises(schema.SchemaError, match=re.escape("why3.json: duplicated key(s) ok")):
        schema.load(schema.Why3Evidence, path)


def test_missing_key_wrong_container_and_status_words_are_refused() -> None:
    with pytest.raises(schema.SchemaError, match="missing key goals"):
        schema.from_json(schema.Why3Evidence, {k: v for k, v in WHY3.items() if k != "goals"})
    with pytest.raises(schema.SchemaError, match="expected an object"):
        schema.from_json(schema.Why3Evidence, [GOAL])
    with pytest.raises(schema.SchemaError, match="goals: expected a list"):
        schema.from_json(schema.Why3Evidence, {**WHY3, "goals": GOAL})
    function = {"function": "f", "conditions": 1, "status": "passed", "time": 1, "exit_code": 0}
    with pytest.raises(schema.SchemaError, match="'passed' is not one of 'pass'"):
        schema.from_json(schema.CrossHairFunction, function)
    with pytest.raises(schema.SchemaError, match="conditions: expected int"):
        schema.from_json(
            schema.CrossHairFunction, {**function, "status": "pass", "conditions": 1.5}
        )


def test_bool_is_not_an_int_and_none_only_where_declared() -> None:
    step = {"name": "why3", "exit_code": False, "seconds": 1.0}
    with pytest.raises(schema.SchemaError, match="exit_code: expected int, got bool"):
        schema.from_json(schema.PipelineStep, step)
    res = {"type": "int8", "requirements": [], "pairs": 1, "mismatches": 0, "examples": [],
           "time": 1.0, "pairs_per_second": None}  # fmt: skip
    assert schema.from_json(schema.ExhaustiveResult, res).pairs_per_second is None
    with pytest.raises(schema.SchemaError, match="mismatches"):
        schema.from_json(schema.ExhaustiveResult, {**res, "mismatches": None})
    with pytest.raises(schema.SchemaError, match="'saturate' is not one of"):
        schema.from_json(schema.ExhaustiveResult, {**res, "modes": ["saturate"]})


def test_a_mapping_field_refuses_a_list_and_non_string_keys() -> None:
    for versions in (["why3", "1.5.1"], {1: "1.5.1"}):
        with pytest.raises(schema.SchemaError) as info:
            schema.from_json(schema.Why3Evidence, {**WHY3, "versions": versions})
        assert str(info.value) == "Why3Evidence.versions: expected an object"


@pytest.mark.parametrize("etype", ["int8", "uint8"])
def test_a_partial_8_bit_run_leaves_a_gap(etype: str) -> None:
    # every pair of two 8-bit operands: 256 * 256, in both modes
    res = {"type": etype, "requirements": [], "mismatches": 0, "examples": [], "time": 1.0,
           "pairs_per_second": None, "modes": ["wrap", "error"]}  # fmt: skip
    partial = schema.from_json(schema.ExhaustiveResult, {**res, "pairs": 256 * 256 - 1})
    assert schema.exhaustive_gap(partial) == f"{etype}: 65535 of 65536 pairs"
    full = schema.from_json(schema.ExhaustiveResult, {**res, "pairs": 256 * 256})
    assert schema.exhaustive_gap(full) is None


@pytest.mark.parametrize("etype", ["int8", "uint8"])
@pytest.mark.parametrize(
    ("modes", "gap"),
    [
        (None, "mode wrap/error not run"),
        ([], "mode wrap/error not run"),
        (["wrap"], "mode error not run"),
        (["error", "error"], "mode wrap not run"),
    ],
    ids=["no-modes-recorded", "empty-modes", "wrap-only", "error-twice"],
)
def test_an_8_bit_run_of_every_pair_without_both_modes_leaves_a_gap(
    etype: str, modes: list[str] | None, gap: str
) -> None:
    # every pair was run, but the result does not say the checked (error) and
    # wrapping modes both were: a record that names no mode is not complete
    res = {"type": etype, "requirements": [], "pairs": 256 * 256, "mismatches": 0,
           "examples": [], "time": 1.0, "pairs_per_second": None, "modes": modes}  # fmt: skip
    result = schema.from_json(schema.ExhaustiveResult, res)
    assert schema.exhaustive_gap(result) == f"{etype}: {gap}"
    others = [
        schema.ExhaustiveResult(t, [], pairs, 0, [], 1.0, None, [*scope_modes] or None)
        for t, (pairs, scope_modes) in schema.EXHAUSTIVE_SCOPE.items()
        if t != etype
    ]
    evidence = schema.ExhaustiveEvidence("t", "2", True, [result, *others], True)
    assert evidence.gaps() == [f"{etype}: {gap}"]
    both = dataclasses.replace(result, modes=["error", "wrap"])  # the positive control
    assert schema.exhaustive_gap(both) is None
    assert schema.ExhaustiveEvidence("t", "2", True, [both, *others], True).gaps() == []


def test_a_float_run_of_every_pair_needs_no_mode() -> None:
    # the float types have no overflow mode: None is their complete record
    for etype in ("float16", "bfloat16"):
        result = schema.ExhaustiveResult(etype, [], 1 << 32, 0, [], 1.0, None, None)
        assert schema.exhaustive_gap(result) is None
        short = dataclasses.replace(result, pairs=(1 << 32) - 1)
        assert schema.exhaustive_gap(short) == f"{etype}: 4294967295 of 4294967296 pairs"


@pytest.mark.parametrize(
    ("inputs", "mismatches", "ok"),
    [(0, 0, False), (1, 0, True), (65536, 0, True), (65536, 1, False), (0, 1, False)],
    ids=["no-input", "one-input", "every-input", "a-mismatch", "no-input-and-a-mismatch"],
)
def test_a_native_check_passes_only_when_it_ran_an_input_and_all_agreed(
    inputs: int, mismatches: int, ok: bool
) -> None:
    # a check that compared nothing found no mismatch, and is evidence of nothing
    data = {"inputs": inputs, "mismatches": mismatches, "seconds": 0.1, "cpu_seconds": 0.1}
    assert schema.from_json(schema.NativeCheck, data).ok is ok


def test_a_pipeline_step_passes_only_with_exit_code_0() -> None:
    assert schema.PipelineStep("tables", 0, 1.0).ok
    for code in (1, 2, -9):  # a failure, a usage error, a signal
        assert not schema.PipelineStep("tables", code, 1.0).ok


def test_a_mutants_record_written_before_invalid_was_counted_has_none() -> None:
    data = {"mutants": 2, "killed": 1, "equivalent": 1, "survived": 0, "kill_rate": 1.0,
            "seconds": 3.0, "by_file": {}, "outcomes": []}  # fmt: skip
    assert schema.from_json(schema.MutantsRecord, data).invalid == 0
    assert schema.from_json(schema.MutantsRecord, {**data, "invalid": 3}).invalid == 3


def test_dump_makes_missing_directories_and_writes_into_existing_ones(tmp_path: Path) -> None:
    record = schema.PipelineRecord([schema.PipelineStep("tables", 0, 1.0)], 1.0)
    first = tmp_path / "proofs" / "out" / "suite" / "run.json"  # three directories missing
    schema.dump(record, first)
    second = first.with_name("again.json")  # its directory exists now
    schema.dump(record, second)
    assert schema.load(schema.PipelineRecord, first) == record
    assert schema.load(schema.PipelineRecord, second) == record


@pytest.mark.parametrize(
    "obj", [schema.PipelineStep, {"name": "tables"}, None], ids=["a-class", "a-dict", "none"]
)
def test_to_json_refuses_anything_but_a_schema_object(obj: object) -> None:
    with pytest.raises(TypeError, match="not a schema object"):
        schema.to_json(obj)


def test_load_refuses_text_that_is_not_json(tmp_path: Path) -> None:
    path = tmp_path / "why3.json"
    path.write_text("{not json")
    with pytest.raises(schema.SchemaError, match=re.escape("why3.json: not JSON")):
        schema.load(schema.Why3Evidence, path)


def test_junit_outcomes_and_malformed_files(tmp_path: Path) -> None:
    path = tmp_path / "pytest.xml"
    path.write_text(
        "<testsuites><testsuite>"
        '<testcase classname="t" name="a" time="0.1"/>'
        '<testcase classname="t" name="b"><failure message="m"/></testcase>'
        '<testcase classname="t" name="c"><error message="e"/></testcase>'
        '<testcase classname="t" name="d"><skipped message="s"/></testcase>'
        '<testcase classname="t" name="e"><skipped type="pytest.xfail" message="x"/></testcase>'
        "</testsuite></testsuites>"
    )
    cases = schema.read_junit([path])
    assert [(c.name, c.status, c.ok) for c in cases] == [
        ("a", "passed", True),
        ("b", "failed", False),
        ("c", "error", False),
        ("d", "skipped", None),
        ("e", "xfailed", None),
    ]
    for text, expect in (
        ("<report/>", "is not a JUnit test suite"),
        ('<testsuite><testcase classname="t"/></testsuite>', "without name"),
        ('<testsuite><testcase classname="t" name="a" time="x"/></testsuite>', "time"),
        ("<testsuite>", "not XML"),
    ):
        path.write_text(text)
        with pytest.raises(schema.SchemaError, match=expect):
            schema.read_junit([path])


def test_junit_an_empty_time_is_zero_and_a_message_keeps_its_first_300_characters(
    tmp_path: Path,
) -> None:
    path = tmp_path / "pytest.xml"
    message = "m" * 300 + "tail"
    path.write_text(
        '<testsuite><testcase classname="t" name="a" time="">'
        f'<failure message="{message}"/></testcase></testsuite>'
    )
    (case,) = schema.read_junit([path])
    assert case.time == 0.0 and case.message == "m" * 300


def test_junit_cases_are_immutable(tmp_path: Path) -> None:
    path = tmp_path / "pytest.xml"
    path.write_text('<testsuite><testcase classname="t" name="a" time="0.5"/></testsuite>')
    (case,) = schema.read_junit([path])
    assert case == schema.JUnitCase("t", "a", "passed", 0.5, "", str(path))
    with pytest.raises(dataclasses.FrozenInstanceError):
        case.status = "failed"  # type: ignore[misc]
    assert {case, schema.JUnitCase("t", "a", "passed", 0.5, "", str(path))} == {case}


# --- the writers write the schema --------------------------------------------


def test_why3_writer_output_loads(tmp_path: Path) -> None:
    (tmp_path / "why3").mkdir()
    (tmp_path / "why3/a.mlw").write_text("module M end\n")
    report = why3.Report({("why3/a.mlw", "M", "l#0"): why3.Result("z3", "Valid", 0.1)})
    out = tmp_path / "why3.json"
    why3.write_report(tmp_path, out, [{"path": "why3/a.mlw"}], report, {"why3": "1.5.1"}, 2.0)
    data = schema.load(schema.Why3Evidence, out)
    assert data.ok and [g.goal for g in data.goals] == ["l#0"] and data.goals[0].ok


def test_exhaustive_and_pipeline_writers_output_loads(tmp_path: Path) -> None:
    res = exhaustive.check_int(INT8, rows=1)
    evidence = schema.ExhaustiveEvidence("t", "2", False, [res], res.ok)
    schema.dump(evidence, tmp_path / "exhaustive.json")
    loaded = schema.load(schema.ExhaustiveEvidence, tmp_path / "exhaustive.json")
    assert loaded == evidence and loaded.results[0].requirements == ["F-WRAP", "F-CHECKED"]
    record = schema.PipelineRecord([pipeline.Outcome("tables", 0, 1.0)], 1.0)
    schema.dump(record, tmp_path / "pipeline.json")
    assert schema.load(schema.PipelineRecord, tmp_path / "pipeline.json") == record


def test_wp_writer_output_loads_and_a_goal_off_the_schema_is_refused(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    unit = wp.Unit("native/src/sonnx_mul_int.c", ["cvc4"], 10)
    goals = {"typed_exact_i8_ensures": wp.Goal("exact_i8", "CVC4 1.8", "Timeout", 1.5)}
    run = wp.Run(unit, 0, 2.0, 1, goals, {}, {}, "")
    record = schema.WpEvidence(
        {"frama-c": "27.1"}, [wp.evidence_unit(root, run, [])], 1, "fail", []
    )
    schema.dump(record, tmp_path / "wp.json")
    loaded = schema.load(schema.WpEvidence, tmp_path / "wp.json")
    assert loaded == record
    (goal,) = loaded.units[0].goals.values()
    assert (goal.function, goal.ok) == ("exact_i8", False)
    assert schema.WpGoal("f", "Qed", "Valid", 0.0, -1).ok
    data = json.loads((tmp_path / "wp.json").read_text())
    data["units"][0]["goals"]["typed_exact_i8_ensures"]["status"] = 0
    with pytest.raises(schema.SchemaError, match="status: expected str"):
        schema.from_json(schema.WpEvidence, data)


def test_misra_writer_output_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = Path(__file__).resolve().parents[2]
    (tmp_path / "proofs").mkdir()
    (tmp_path / misra.DEVIATIONS).write_text((root / misra.DEVIATIONS).read_text())
    (tmp_path / "native/src").mkdir(parents=True)
    source = tmp_path / "native/src/sonnx_mul_float.c"
    source.write_text("")
    found = [("native/src/sonnx_mul_float.c", "19.2")] * 3 + [
        ("native/src/sonnx_mul_int.c", "10.4")
    ]
    monkeypatch.setattr(misra, "run_cppcheck", lambda *a: (found, ""))
    monkeypatch.setattr(misra, "tool_version", lambda: "Cppcheck 2.10")
    assert misra.check(tmp_path, [source]) == 1
    data = schema.load(schema.MisraEvidence, tmp_path / misra.OUT)
    assert data.verdict == "fail" and [f.rule for f in data.findings] == ["19.2"] * 3 + ["10.4"]
    assert any("rule 10.4" in e for e in data.errors)
    recorded = json.loads((root / misra.DEVIATIONS).read_text())["deviations"]
    assert [d.rule for d in data.deviations] == [d["rule"] for d in recorded]
    assert data.deviations[:2] == [
        schema.from_json(schema.MisraDeviation, d, "deviations") for d in recorded[:2]
    ]


def test_coq_writer_output_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Coq check's record, written through the schema: each goal with its
    theory, module and proof file; a failed goal keeps its errors."""
    theory = coq.THEORIES[0].as_posix()
    goals = [
        coq.Goal("f64_round_RoundSig_round_sig_correct.v", "round_sig_correct", (), theory,
                 "RoundSig"),
        coq.Goal("f64_round_MulDefs_bitlenqtvc.v", "bitlen'vc", ("coqc refused",), theory,
                 "MulDefs"),
    ]  # fmt: skip
    monkeypatch.setattr(coq, "check", lambda root: goals)
    monkeypatch.setattr(coq, "tool_versions", lambda root: {"coqc": "8.16.1"})
    assert coq.main(["check", "--root", str(tmp_path)]) == 1
    data = schema.load(schema.CoqEvidence, tmp_path / coq.OUT)
    assert (data.proved, data.total, data.tool_versions) == (1, 2, {"coqc": "8.16.1"})
    assert [(g.file, g.module, g.goal, g.proof, g.ok) for g in data.goals] == [
        (theory, "RoundSig", "round_sig_correct", goals[0].name, True),
        (theory, "MulDefs", "bitlen'vc", goals[1].name, False),
    ]
    assert data.goals[1].errors == ["coqc refused"]
    assert theory in data.inputs  # bound to the tree's files (absent here: recorded so)


def test_coq_goal_module_is_the_longest_module_the_file_name_spells() -> None:
    theory = coq.THEORIES[0]
    modules = ["Mul", "MulBits", "Round"]
    assert coq.goal_module(theory, modules, "f64_round_MulBits_f64_mul_bits_nan.v") == "MulBits"
    assert coq.goal_module(theory, modules, "f64_round_Mul_x.v") == "Mul"
    # both spelt: module Mul_Bits's goal x, or module Mul's goal Bits_x: the longer module
    assert coq.goal_module(theory, [*modules, "Mul_Bits"], "f64_round_Mul_Bits_x.v") == "Mul_Bits"
    assert coq.goal_module(theory, modules, "f64_round_RoundSig_y.v") == ""
    assert coq.goal_module(theory, modules, "other_Mul_x.v") == ""


def test_every_registered_file_has_a_dataclass_schema() -> None:
    assert set(schema.EVIDENCE) == {
        "why3.json",
        "coq.json",
        "crosshair.json",
        "exhaustive.json",
        "wp.json",
        "misra.json",
        "mutants.json",
        "coverage.json",
        "pipeline.json",
        "suite/run.json",
    }
    for cls in schema.EVIDENCE.values():
        with pytest.raises(schema.SchemaError):
            schema.from_json(cls, json.loads("{}"))
